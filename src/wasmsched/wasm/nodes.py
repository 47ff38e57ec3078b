"""A wasm plugin's vectorized Filter and Score forms: one call per node, looped in C.

``WasmPlugin.filter_columns`` and ``score_columns`` (framework/node_search runs them over
node rows) answer, node by node and in order, exactly what ``filter`` and ``score`` would:
the guest export is called once per node, as upstream's host does
(kube-scheduler-wasm-extension scheduler/plugin/plugin.go: Filter, Score), but the loop
over the nodes runs in the compiled extension (``Caller.each``), which sets the node name,
calls the export and collects the raw results without returning to Python, except after a
call that left results to read (a status reason, events, ...) or whose status ends the
loop.

The stop rules are the per-node loops' (kube-scheduler's pkg/scheduler/schedule_one.go:
findNodesThatPassFilters, pkg/scheduler/framework/runtime/framework.go: RunScorePlugins):
Filter stops at the first node whose status is neither a success nor a rejection (that
error ends the cycle, no later node is filtered); Score stops at the first failure. A trap
fails the node it happened on, exactly as in the per-node form (the instance is
discarded). Without the extension (``WASMSCHED_WASM_NATIVE=0``) the forms answer None and
the framework calls the per-node forms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.columns import IntArray, NodeRows
from wasmsched.framework.node_info import NodeInfo
from wasmsched.framework.status import Code, Status
from wasmsched.wasm._fastpath import GuestTrap
from wasmsched.wasm.abi import signed32
from wasmsched.wasm.guest import CallLock, Guest, InstantiateError
from wasmsched.wasm.native import native_enabled, native_module
from wasmsched.wasm.pool import GuestPool

if TYPE_CHECKING:
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.wasm.plugin import WasmPlugin

__all__ = ["FILTER_GOES_ON", "filter_columns", "install_compiled_calls", "score_columns"]

# Status codes after which the Filter loop goes on: Success, Unschedulable,
# UnschedulableAndUnresolvable, Pending (framework.Status.IsRejected), as a bit mask.
_FILTER_ON = (1 << Code.SUCCESS) | (1 << Code.UNSCHEDULABLE)
_FILTER_ON |= (1 << Code.UNSCHEDULABLE_AND_UNRESOLVABLE) | (1 << Code.PENDING)
FILTER_GOES_ON = _FILTER_ON
_SCORE_ON = 1 << Code.SUCCESS

_native = native_module()
if _native is not None:
    # the slots the compiled Filter/Score read directly (native/hot.h)
    _native.configure_hot(GuestPool, Guest, CallLock, NodeInfo)


def _ends_filter(status: Status | None) -> bool:
    return status is not None and status.code != Code.SUCCESS and not status.is_rejected()


def _guest(plugin: WasmPlugin, uid: str) -> Guest | Status:
    pool = plugin._pool
    guest = pool.scheduled
    if guest is None or pool.scheduled_uid != uid:
        try:
            guest = pool.scheduling(uid)
        except InstantiateError as exc:
            return Status(Code.ERROR, str(exc))
    return guest


def _results(plugin: WasmPlugin, guest: Guest) -> str | None:
    """The reason of a call that left results (``ctx.dirty``); its events recorded and
    the context reset, as the per-node forms do."""
    ctx = guest.ctx
    reason = ctx.reason
    if ctx.recorded:
        plugin._env.record_events(ctx.recorded)
    ctx.reset_results()
    return reason


def _run(
    plugin: WasmPlugin, export: str, pod: Any, names: list[str], raw: list[int], ok: int
) -> tuple[Status | None, str | None, int]:
    """Calls ``export`` for the nodes from ``len(raw)`` on, on one instance, until a node
    whose call left results or whose status code is not in ``ok``. Returns (the trap or
    instantiation status of the node after ``raw``'s last one, or None; the reason of the
    last call; its raw result). Score results are appended as scores (the high word)."""
    score = export == "score"

    def each(guest: Guest) -> int:
        loop = guest.score_each if score else guest.filter_each
        assert loop is not None
        loop(guest.ctx, names, raw, len(raw), ok, score)
        last: int = (guest.score if score else guest.filter).last  # type: ignore[attr-defined]
        return last

    r = plugin._scheduling_call(pod, "", each, export, False)
    if isinstance(r, Status):
        return r, None, 0
    if isinstance(r, int):
        return None, None, r
    return None, r.reason, r.value


def _native_ready(plugin: WasmPlugin, uid: str, export: str) -> bool:
    """Whether the pod's instance has the compiled loop for ``export``."""
    got = _guest(plugin, uid)
    if isinstance(got, Status):
        return False
    return (got.filter_each if export == "filter" else got.score_each) is not None


def filter_columns(
    plugin: WasmPlugin, state: CycleState, pod: Any, rows: NodeRows
) -> tuple[IntArray, list[Status]] | None:
    """Every row's Filter status, as ``WasmPlugin.filter`` would give it node by node, up
    to the first error (the rows after it are not filtered); None without the compiled loop
    (the per-node form answers)."""
    n = len(rows)
    if not plugin._has_filter or not n:
        return np.zeros(n, np.int64), []
    if not _native_ready(plugin, pod.uid, "filter"):
        return None
    names = rows.names()
    raw: list[int] = []  # each filtered node's status code, in order
    # The last node of each run of the compiled loop: its status as the per-node form gives
    # it (a reason, a trap); every other node's is its code alone.
    last: list[tuple[int, Status | None]] = []
    while len(raw) < n:
        failed, reason, _ = _run(plugin, "filter", pod, names, raw, _FILTER_ON)
        status: Status | None = failed
        if failed is not None:
            last.append((len(raw), failed))
            raw.append(0)  # the failed node's place
        else:
            code = raw[-1]
            status = Status(code, reason or "") if code or reason else None
            last.append((len(raw) - 1, status))
        if _ends_filter(status):
            break  # the search ends at this node: no later node is filtered
    codes = np.zeros(n, np.int64)
    plain = np.array(raw, np.int64)
    plain[[pos for pos, _ in last]] = 0
    statuses: list[Status] = []
    if plain.any():
        filtered = codes[: len(plain)]
        for code in np.unique(plain[plain != 0]).tolist():
            statuses.append(Status(code))
            filtered[plain == code] = len(statuses)
    for pos, status in last:
        if status is not None and status.code != Code.SUCCESS:
            statuses.append(status)
            codes[pos] = len(statuses)
    return codes, statuses


def score_columns(
    plugin: WasmPlugin, state: CycleState, pod: Any, rows: NodeRows
) -> IntArray | Status | None:
    """Every row's score, as ``WasmPlugin.score`` would give it node by node, or the status
    of the first node whose score failed (no node after it is scored); None without the
    compiled loop (the per-node form answers)."""
    if not plugin._has_score or not len(rows):
        return np.zeros(len(rows), np.int64)
    if not _native_ready(plugin, pod.uid, "score"):
        return None
    names = rows.names()
    scores: list[int] = []  # the compiled loop appends each score (the high word)
    while len(scores) < len(names):
        failed, reason, last = _run(plugin, "score", pod, names, scores, _SCORE_ON)
        if failed is not None:
            return failed
        code = signed32(last)
        if code or reason:
            status = Status(code, reason or "")
            if status.code != Code.SUCCESS:
                return status
    return np.array(scores, dtype=np.int64)


def install_compiled_calls(plugin: WasmPlugin) -> None:
    """Replaces the plugin's ``filter`` and ``score`` by their compiled forms
    (native/hot.h: Hot) when new instances use the compiled path. They run the per-node
    call in C when the pod's instance is ready and free, and the Python methods (bound to
    the class, ``WasmPlugin.filter``/``score``) otherwise; a trap and a call that left
    results are finished by the same Python code as there."""
    mod = native_module()
    if mod is None or not native_enabled():
        return
    cls = type(plugin)

    def filter_done(guest: Guest, value: int) -> Status | None:
        return _status(value, _results(plugin, guest))

    def score_done(guest: Guest, value: int) -> tuple[int, Status | None]:
        return value >> 32, _status(signed32(value), _results(plugin, guest))

    def filter_trap(guest: Guest, trap: GuestTrap) -> Status:
        return plugin._trapped(guest, "filter", trap)

    def score_trap(guest: Guest, trap: GuestTrap) -> tuple[int, Status]:
        return 0, plugin._trapped(guest, "score", trap)

    pool = plugin._pool
    hot = mod.Hot
    filter_call = hot(plugin, pool, cls.filter, filter_done, filter_trap, Status, GuestTrap, False)
    score_call = hot(plugin, pool, cls.score, score_done, score_trap, Status, GuestTrap, True)
    plugin.filter = filter_call  # type: ignore[method-assign]
    plugin.score = score_call  # type: ignore[method-assign]


def _status(code: int, reason: str | None) -> Status | None:
    """The per-node forms' status of a call that left results (wasm/plugin.py: _status)."""
    if code == 0 and not reason:
        return None
    return Status(code, reason or "")
