"""WasmPlugin: a scheduling-framework plugin backed by a guest (upstream's
scheduler/plugin/plugin.go and guest.go).

The plugin serves exactly the extension points its guest exports (``abi.analyse_exports``)
and calls only exports that exist. Per call it fills the instance's context (upstream's host.go: stack),
calls the export through the fast path and decodes the packed result (upstream's guest.go: filterFn, scoreFn, ...).

Failures never escape as exceptions: a trap, a deadline (``callTimeoutMilliseconds``), an
out-of-memory guest or a host-function error fails the call with an Error status
``wasm: <export> error: [<guest output>\\n]<trap>``; the instance is discarded (its guest
cycle state is lost; the next call gets a fresh instance). A failed lazy instantiation
fails that call with ``wasm: instantiate error: ...``. Traps in ``unreserve``/``postbind``
are logged (``failed unreserve``/``failed postbind``), in ``enqueue`` logged and the
default events used. NormalizeScore results are matched to nodes by name and validated.

Instances and pods (see ``pool``): binding-phase calls run on the instance that scheduled
the pod; the instance is released after Unreserve, after PostBind, after the guest's last
binding-phase export when it has no ``unreserve``, and by ``forget_pod(uid)``, which the
framework should call whenever a pod's scheduling/binding ends (success or failure).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wasmsched.framework.interfaces import (
    NodeScore,
    NominatingInfo,
    PostFilterResult,
    PreFilterResult,
)
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import ClusterEventWithHint
from wasmsched.wasm._fastpath import GuestTrap
from wasmsched.wasm.abi import EXPORT_RESULTS, default_events, signed32, split_high_low
from wasmsched.wasm.cache import load_module
from wasmsched.wasm.config import WasmError, WasmPluginConfig
from wasmsched.wasm.fetch import fetch_guest
from wasmsched.wasm.guest import CompiledGuest, Guest, InstantiateError, decorate
from wasmsched.wasm.host import LogRecord, PluginEnv
from wasmsched.wasm.nodes import filter_columns, install_compiled_calls, score_columns
from wasmsched.wasm.pool import GuestPool

if TYPE_CHECKING:
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, NodeToStatus
    from wasmsched.framework.node_info import NodeInfo, PodInfo

__all__ = ["WasmPlugin", "apply_normalized_scores"]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MODE_NOOP = 0  # framework.ModeNoop: the nomination is ignored
_BINDING_ORDER = ("postbind", "bind", "prebind", "permit", "reserve")


@dataclass(slots=True)
class _Result:
    value: int
    reason: str | None = None
    node_names: list[str] | None = None
    nominated: str = ""
    events: list[Any] | None = None
    normalized: bytes | None = None


# PreFilter's export, as ``_scheduling_call`` calls it on an instance.
_PREFILTER = operator.methodcaller("prefilter")


def _status(code: int, reason: str | None) -> Status | None:
    if code == 0 and not reason:
        return None
    return Status(code, reason or "")


class WasmPlugin:
    """A framework plugin whose behaviour comes from a wasm guest."""

    def __init__(self, name: str, config: WasmPluginConfig, handle: Handle | None) -> None:
        self.name = name
        self.config = config
        self.handle = handle
        self.logs: list[LogRecord] = []
        url = config.guest_url
        try:
            wasm = fetch_guest(url, base_dir=config.base_dir)
        except WasmError as exc:
            raise WasmError(
                f"wasm: error reading guestURL {url}: {exc.problem}", url, exc.problem
            ) from None
        try:
            module = load_module(wasm, config.cache_dir)
        except WasmError as exc:
            raise WasmError(exc.problem, url) from None
        compiled, problems = CompiledGuest.check(
            module,
            memory_limit=config.memory_limit_mib << 20,
            timeout_ms=config.call_timeout_ms,
        )
        if problems:
            raise WasmError(problems[0], url)
        exports = compiled.analysis.exports
        self.exports: frozenset[str] = exports
        self.extension_points: frozenset[str] = compiled.analysis.extension_points
        self._has = {e: e in exports for e in EXPORT_RESULTS}
        # The per-node hot paths test plain attributes instead of the dict.
        self._has_prefilter = self._has["prefilter"]
        self._has_filter = self._has["filter"]
        self._has_score = self._has["score"]
        self._env = PluginEnv(
            name, handle, config.guest_config, config.log_severity, config.args, self.logs
        )
        # Without reserve/unreserve/permit, the first binding-phase call is asynchronous.
        park = bool(exports & {"prebind", "bind", "postbind"}) and not (
            exports & {"reserve", "unreserve", "permit"}
        )
        env = self._env
        self._pool = GuestPool(lambda: compiled.instantiate(env), park_previous=park)
        try:
            self._pool.prime()
        except InstantiateError as exc:
            raise WasmError(f"failed to create a guest pool: {exc}", url) from None
        # Without unreserve nothing follows the last binding-phase export: release there.
        self._terminal: str | None = None
        if "unreserve" not in exports:
            self._terminal = next((e for e in _BINDING_ORDER if e in exports), None)
        install_compiled_calls(self)  # filter and score in C (wasm/nodes.py)

    def __repr__(self) -> str:
        return f"WasmPlugin({self.name!r}, {self.config.guest_url!r})"

    @property
    def pool(self) -> GuestPool:
        return self._pool

    # --- plumbing --------------------------------------------------------------------------

    def _invoke(
        self,
        export: str,
        binding: bool,
        pod: Any,
        node_name: str = "",
        target: Any = None,
        filtered: Any = None,
        statuses: Any = None,
        scores: Any = None,
    ) -> _Result | Status:
        uid = pod.uid
        acquire = self._pool.for_binding if binding else self._pool.scheduling
        while True:
            try:
                guest = acquire(uid)
            except InstantiateError as exc:
                return Status(Code.ERROR, str(exc))
            with guest.lock:
                if guest.dead:
                    continue
                ctx = guest.ctx
                ctx.pod = pod
                ctx.node_name = node_name
                ctx.target_pod = target
                ctx.filtered = filtered
                ctx.statuses = statuses
                ctx.scores = scores
                try:
                    value = guest.calls[export]()
                except GuestTrap as trap:
                    return self._trapped(guest, export, trap)
                finally:
                    ctx.clear_inputs()
                if not ctx.dirty:
                    return _Result(value)
                result = _Result(
                    value, ctx.reason, ctx.node_names, ctx.nominated, ctx.events, ctx.normalized
                )
                if ctx.recorded:
                    self._env.record_events(ctx.recorded)
                ctx.reset_results()
                return result

    def _scheduling_call(
        self, pod: Any, node_name: str, call: Callable[[Guest], int], export: str, first: bool
    ) -> int | _Result | Status:
        """A guest call of the scheduling cycle (PreFilter, and the compiled per-node loops
        of wasm/nodes.py): the pod's scheduling instance, its call lock, the pod and node
        name set for ``call(guest)`` and cleared after it, a trap turned into ``export``'s
        error (the instance discarded). A call that left no results gives its raw value;
        one that did gives a _Result (its reason and PreFilter's node names; its events
        recorded, the context reset). ``first``: the cycle's first call (PreFilter), which
        also releases an instance the pod still holds for binding.

        ``pool.scheduling`` is skipped only when it would change nothing: same pod, no stale
        binding instance to release. The lock's acquire and release are inlined
        (wasm/guest.py: CallLock).

        Filter and Score, called once per node, keep their own inlined copy of this
        sequence (``filter``, ``score``), as does their compiled form (native/hot.h: Hot):
        through this method, an A/B run in one process (noop-wat, best of 25 x 10,000
        calls, alternating) measured Filter 0.51 against 0.35 us inlined and Score 0.60
        against 0.41 (ctypes path: 1.03 against 0.85, 1.15 against 0.96). Once per cycle
        (PreFilter) or per chunk of nodes (the compiled loops) the extra call is noise."""
        pool = self._pool
        uid = pod.uid
        while True:
            guest = pool.scheduled
            if guest is None or pool.scheduled_uid != uid or (first and uid in pool.binding):
                try:
                    guest = pool.scheduling(uid)
                except InstantiateError as exc:
                    return Status(Code.ERROR, str(exc))
            lock = guest.lock
            free = lock.free
            try:
                free.pop()  # CallLock.acquire, inlined
            except IndexError:
                lock.wait()
            try:
                if guest.dead:
                    continue
                ctx = guest.ctx
                ctx.pod = pod
                ctx.node_name = node_name
                try:
                    value = call(guest)
                except GuestTrap as trap:
                    return self._trapped(guest, export, trap)
                finally:
                    ctx.pod = None
                    ctx.node_name = ""
                if not ctx.dirty:
                    return value
                result = _Result(value, ctx.reason, ctx.node_names)
                if ctx.recorded:
                    self._env.record_events(ctx.recorded)
                ctx.reset_results()
            finally:
                free.append(True)  # CallLock.release, inlined
                if lock.waiters:
                    lock.wake()
            return result

    def _trapped(self, guest: Guest, export: str, trap: GuestTrap) -> Status:
        ctx = guest.ctx
        message = decorate(export, ctx.take_output(), trap)
        ctx.reset_results()
        ctx.clear_inputs()
        self._pool.discard(guest)
        return Status(Code.ERROR, message)

    def _host_error(self, what: str, message: str) -> None:
        self._env.emit(LogRecord(2, what, (("err", message),), structured=True))

    def _after_binding_call(self, export: str, uid: str) -> None:
        if export == self._terminal:
            self._pool.release(uid)

    # --- EnqueueExtensions ----------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self._has["enqueue"]:
            return default_events()
        while True:
            try:
                guest = self._pool.any()
            except InstantiateError as exc:
                self._host_error("failed enqueue", str(exc))
                return default_events()
            with guest.lock:
                if guest.dead:
                    continue
                try:
                    guest.calls["enqueue"]()
                except GuestTrap as trap:
                    status = self._trapped(guest, "enqueue", trap)
                    self._host_error("failed enqueue", status.message)
                    return default_events()
                events = guest.ctx.events
                if guest.ctx.recorded:
                    self._env.record_events(guest.ctx.recorded)
                guest.ctx.reset_results()
            if not events:
                return default_events()
            return [ClusterEventWithHint(e) for e in events]

    # --- PreFilter and its extensions -------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Any, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not self._has_prefilter:
            return None, None
        r = self._scheduling_call(pod, "", _PREFILTER, "prefilter", True)
        if isinstance(r, int):
            return (None, None) if r == 0 else (None, Status(r))
        if isinstance(r, Status):
            return None, r
        names = r.node_names
        return (PreFilterResult(names) if names else None), _status(r.value, r.reason)

    def pre_filter_extensions(self) -> WasmPlugin | None:
        return self if self._has["addpod"] or self._has["removepod"] else None

    def add_pod(
        self, state: CycleState, pod: Any, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._extension("addpod", pod, pod_info_to_add, node_info)

    def remove_pod(
        self, state: CycleState, pod: Any, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._extension("removepod", pod, pod_info_to_remove, node_info)

    def _extension(
        self, export: str, pod: Any, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        if not self._has[export]:
            return None  # the missing half of addpod/removepod is a no-op
        r = self._invoke(export, False, pod, node_info.name, target=pod_info.pod)
        return r if isinstance(r, Status) else _status(r.value, r.reason)

    # --- Filter, PostFilter -------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        # ``_scheduling_call`` inlined: once per node, the extra call would cost 40 % (see
        # there); the compiled form (wasm/nodes.py: install_compiled_calls) runs first.
        if not self._has_filter:
            return None
        pool = self._pool
        uid = pod.uid
        while True:
            guest = pool.scheduled
            if guest is None or pool.scheduled_uid != uid:
                try:
                    guest = pool.scheduling(uid)
                except InstantiateError as exc:
                    return Status(Code.ERROR, str(exc))
            lock = guest.lock
            free = lock.free
            try:
                free.pop()  # CallLock.acquire, inlined
            except IndexError:
                lock.wait()
            try:
                if guest.dead:
                    continue
                ctx = guest.ctx
                ctx.pod = pod
                ctx.node_name = node_info.name
                try:
                    code = guest.filter()
                except GuestTrap as trap:
                    return self._trapped(guest, "filter", trap)
                finally:
                    ctx.pod = None
                    ctx.node_name = ""
                if not ctx.dirty:
                    return None if code == 0 else Status(code)
                reason = ctx.reason
                if ctx.recorded:
                    self._env.record_events(ctx.recorded)
                ctx.reset_results()
            finally:
                free.append(True)  # CallLock.release, inlined
                if lock.waiters:
                    lock.wake()
            return _status(code, reason)

    # The vectorized forms: the same calls, looped over the nodes in C (wasm/nodes.py).
    filter_columns = filter_columns
    score_columns = score_columns
    # Filter calls have effects (guest state, logs): the node search shows the guest
    # exactly the nodes the node-by-node search would (framework/node_search).
    filter_has_effects = True

    def post_filter(
        self, state: CycleState, pod: Any, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        if not self._has["postfilter"]:
            return None, None
        r = self._invoke("postfilter", False, pod, statuses=filtered_node_status)
        if isinstance(r, Status):
            return None, r
        mode, code = split_high_low(r.value)
        if r.nominated and mode != _MODE_NOOP and not self._in_snapshot(r.nominated):
            # kube-scheduler's schedule_one.go: handleSchedulingFailure nominates only nodes of
            # the cache; a name it does not know would leave the pod nominated to nothing
            message = (
                f"wasm: postfilter error: nominated node {r.nominated!r} is not in the snapshot"
            )
            return None, Status(Code.ERROR, message)
        result = PostFilterResult(NominatingInfo(r.nominated, mode))
        return result, _status(code, r.reason)

    def _in_snapshot(self, name: str) -> bool:
        try:
            return self._env.snapshot().get(name) is not None
        except RuntimeError:  # no handle: nothing to check against
            return True

    # --- PreScore, Score, NormalizeScore ------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Any, nodes: Sequence[NodeInfo]) -> Status | None:
        if not self._has["prescore"]:
            return None
        r = self._invoke("prescore", False, pod, filtered=nodes)
        return r if isinstance(r, Status) else _status(r.value, r.reason)

    def score(self, state: CycleState, pod: Any, node_info: NodeInfo) -> tuple[int, Status | None]:
        # ``_scheduling_call`` inlined, as in ``filter``.
        if not self._has_score:
            return 0, None
        pool = self._pool
        uid = pod.uid
        while True:
            guest = pool.scheduled
            if guest is None or pool.scheduled_uid != uid:
                try:
                    guest = pool.scheduling(uid)
                except InstantiateError as exc:
                    return 0, Status(Code.ERROR, str(exc))
            lock = guest.lock
            free = lock.free
            try:
                free.pop()  # CallLock.acquire, inlined
            except IndexError:
                lock.wait()
            try:
                if guest.dead:
                    continue
                ctx = guest.ctx
                ctx.pod = pod
                ctx.node_name = node_info.name
                try:
                    value = guest.score()
                except GuestTrap as trap:
                    return 0, self._trapped(guest, "score", trap)
                finally:
                    ctx.pod = None
                    ctx.node_name = ""
                # The score is the signed high word (an arithmetic shift of the int64), the
                # status code the signed low word.
                if not ctx.dirty:
                    if not value & 0xFFFFFFFF:
                        return value >> 32, None
                    return value >> 32, Status(signed32(value))
                reason = ctx.reason
                if ctx.recorded:
                    self._env.record_events(ctx.recorded)
                ctx.reset_results()
            finally:
                free.append(True)  # CallLock.release, inlined
                if lock.waiters:
                    lock.wake()
            return value >> 32, _status(signed32(value), reason)

    def score_extensions(self) -> WasmPlugin | None:
        return self if self._has["normalizescore"] else None

    def normalize_score(
        self, state: CycleState, pod: Any, scores: list[NodeScore]
    ) -> Status | None:
        if not self._has["normalizescore"]:
            return None
        r = self._invoke("normalizescore", False, pod, scores=scores)
        if isinstance(r, Status):
            return r
        status = _status(r.value, r.reason)
        if status is not None and status.code != Code.SUCCESS:
            return status
        if r.normalized is not None:
            problem = apply_normalized_scores(r.normalized, scores)
            if problem is not None:
                return Status(Code.ERROR, f"wasm: normalizescore error: {problem}")
        return status

    # --- Reserve, Permit, binding ---------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        if not self._has["reserve"]:
            self._pool.claim(pod.uid)  # the cycle ended with a node: keep its instance
            return None
        r = self._invoke("reserve", True, pod, node_name)
        self._after_binding_call("reserve", pod.uid)
        return r if isinstance(r, Status) else _status(r.value, r.reason)

    def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        uid = pod.uid
        if self._has["unreserve"]:
            r = self._invoke("unreserve", True, pod, node_name)
            if isinstance(r, Status):
                self._host_error("failed unreserve", r.message)
        self._pool.release(uid)

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status | None, float]:
        if not self._has["permit"]:
            return None, 0.0
        r = self._invoke("permit", True, pod, node_name)
        self._after_binding_call("permit", pod.uid)
        if isinstance(r, Status):
            return r, 0.0
        code = signed32(r.value >> 32)  # permit packs the status HIGH, timeout ms LOW
        timeout_ms = r.value & 0xFFFFFFFF
        return _status(code, r.reason), timeout_ms / 1000.0

    def pre_bind(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        return self._bind_phase("prebind", pod, node_name)

    def bind(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        return self._bind_phase("bind", pod, node_name)

    def _bind_phase(self, export: str, pod: Any, node_name: str) -> Status | None:
        if not self._has[export]:
            return None
        r = self._invoke(export, True, pod, node_name)
        self._after_binding_call(export, pod.uid)
        return r if isinstance(r, Status) else _status(r.value, r.reason)

    def post_bind(self, state: CycleState, pod: Any, node_name: str) -> None:
        if self._has["postbind"]:
            r = self._invoke("postbind", True, pod, node_name)
            if isinstance(r, Status):
                self._host_error("failed postbind", r.message)
        self._pool.release(pod.uid)

    # --- lifecycle ------------------------------------------------------------------------------

    def forget_pod(self, uid: str) -> None:
        """The pod's cycle is over (bound, failed or deleted): free the instance it held;
        the pod's next attempt starts with a fresh cycle budget (``budget.CYCLE_BYTES``)."""
        pool = self._pool
        for guest in (pool.scheduled, pool.binding.get(uid)):
            if guest is not None and guest.ctx.cycle_uid == uid:
                guest.ctx.cycle_uid = None
        pool.forget(uid)

    release = forget_pod

    def close(self) -> None:
        self._pool.close()
        self._env.close()


def apply_normalized_scores(raw: bytes, scores: list[NodeScore]) -> str | None:
    """Applies the guest's ``{node: score}`` JSON by node name; a problem text on failure
    (nothing applied). ``null`` means no change."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return f"invalid normalized score list: {exc}"
    except RecursionError:
        return "invalid normalized score list: nested too deeply"
    if data is None:
        return None
    if not isinstance(data, dict):
        return f"normalized score list must be a JSON object, got {type(data).__name__}"
    known = {s.name for s in scores}
    for name, value in data.items():
        if name not in known:
            return f"normalized score for unknown node {name!r}"
        if isinstance(value, bool) or not isinstance(value, int):
            return f"normalized score of node {name!r} is not an integer: {value!r}"
        if not _INT64_MIN <= value <= _INT64_MAX:
            return f"normalized score of node {name!r} is out of range: {value}"
    for s in scores:
        if s.name not in data:
            return f"normalized score list has no score for node {s.name!r}"
    for s in scores:
        s.score = data[s.name]
    return None
