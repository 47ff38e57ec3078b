"""LiveScheduler: the Scheduler with kube-scheduler's asynchronous binding and metrics.

The shared Scheduler runs the binding cycle inline, which suits the simulator. Against an
API server the binding is an HTTP call, and kube-scheduler runs it in a goroutine while the
next pod is scheduled. Here, when the profile binds with DefaultBinder (and no binder
extender is interested), PreBind runs inline, the POST goes to a worker thread, and the
cycle is finished when the answer comes back through the runner's inbox
(``finish_binding``), on the scheduling thread, with the cycle's own CycleState:

* bound: PostBind, the ``Scheduled`` event, done. The pod stays assumed in the cache
  until the watch shows it bound.
* 409 (already bound) or 404 (deleted): Unreserve, forget the assumed pod, move on; the
  watch tells the truth.
* any other error: the binding-failure path (Unreserve, forget, back-off requeue,
  FailedScheduling event and PodScheduled=False/SchedulerError).

Other bind plugins (a wasm guest's ``bind``) run inline as in the simulator.

It also follows kube-scheduler's event handlers where the live cluster differs from the
simulator: pods being deleted or terminal leave the queue; nominations written by another
replica are honoured; a failed pod is requeued with its latest informer version, and not
at all when it is gone or already bound. Metrics: attempts by result and plugin durations,
the latter on a 10% sample of cycles by swapping timed stand-ins into the Framework's
plugin tuples (nothing changes in unsampled cycles).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import Event, ObjectReference, Registry
from wasmsched.framework.status import Code, Status, code_name
from wasmsched.live import ops
from wasmsched.plugins.default_binder import DefaultBinder
from wasmsched.queue import events as ev
from wasmsched.scheduler import (
    ERROR,
    SCHEDULED,
    UNSCHEDULABLE,
    ClusterWriter,
    PodOutcome,
    Scheduler,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.config import SchedulerConfig
    from wasmsched.framework.diagnosis import Diagnosis
    from wasmsched.framework.interfaces import NominatingInfo
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.waiting_pods import WaitingPod
    from wasmsched.live.writer import BindResult
    from wasmsched.queue.types import QueuedPodInfo

log = logging.getLogger("wasmsched.live.scheduler")

# kube-scheduler's pluginMetricsSamplePercent.
PLUGIN_METRICS_SAMPLE_PERCENT = 10

RecordFn = Callable[[str, str, str, float], None]


def _code(status: Status | None) -> str:
    return "Success" if status is None else code_name(status.code)


class _Timed:
    """A plugin stand-in that times every call and records (plugin, point, status)."""

    def __init__(self, plugin: Any, record: RecordFn) -> None:
        self._plugin = plugin
        self._record = record
        self.name: str = plugin.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self._plugin, name)

    def _time(
        self, point: str, fn: Callable[..., Any], status_of: Callable[[Any], Any], *args: Any
    ) -> Any:
        start = time.perf_counter()
        try:
            result = fn(*args)
        except Exception:
            self._record(self.name, point, "Error", time.perf_counter() - start)
            raise
        self._record(self.name, point, _code(status_of(result)), time.perf_counter() - start)
        return result

    def pre_filter(self, *args: Any) -> Any:
        return self._time("PreFilter", self._plugin.pre_filter, _second, *args)

    def filter(self, *args: Any) -> Any:
        return self._time("Filter", self._plugin.filter, _same, *args)

    def post_filter(self, *args: Any) -> Any:
        return self._time("PostFilter", self._plugin.post_filter, _second, *args)

    def pre_score(self, *args: Any) -> Any:
        return self._time("PreScore", self._plugin.pre_score, _same, *args)

    def score(self, *args: Any) -> Any:
        return self._time("Score", self._plugin.score, _second, *args)

    def reserve(self, *args: Any) -> Any:
        return self._time("Reserve", self._plugin.reserve, _same, *args)

    def unreserve(self, *args: Any) -> Any:
        return self._time("Unreserve", self._plugin.unreserve, _none, *args)

    def permit(self, *args: Any) -> Any:
        return self._time("Permit", self._plugin.permit, _first, *args)

    def pre_bind(self, *args: Any) -> Any:
        return self._time("PreBind", self._plugin.pre_bind, _same, *args)

    def bind(self, *args: Any) -> Any:
        return self._time("Bind", self._plugin.bind, _same, *args)

    def post_bind(self, *args: Any) -> Any:
        return self._time("PostBind", self._plugin.post_bind, _none, *args)

    def pre_filter_extensions(self) -> Any:
        ext = self._plugin.pre_filter_extensions()
        return None if ext is None else _TimedExtensions(self.name, ext, self._record)

    def score_extensions(self) -> Any:
        ext = self._plugin.score_extensions()
        return None if ext is None else _TimedExtensions(self.name, ext, self._record)


class _TimedExtensions(_Timed):
    """PreFilterExtensions / ScoreExtensions of a timed plugin."""

    def __init__(self, name: str, ext: Any, record: RecordFn) -> None:
        self._plugin = ext
        self._record = record
        self.name = name

    def add_pod(self, *args: Any) -> Any:
        return self._time("PreFilterExtensionAddPod", self._plugin.add_pod, _same, *args)

    def remove_pod(self, *args: Any) -> Any:
        return self._time("PreFilterExtensionRemovePod", self._plugin.remove_pod, _same, *args)

    def normalize_score(self, *args: Any) -> Any:
        return self._time("ScoreExtensionNormalize", self._plugin.normalize_score, _same, *args)


def _same(r: Any) -> Any:
    return r


def _first(r: Any) -> Any:
    return r[0]


def _second(r: Any) -> Any:
    return r[1]


def _none(r: Any) -> None:
    return None


_PLUGIN_TUPLES = (
    "pre_filter_plugins",
    "filter_plugins",
    "post_filter_plugins",
    "pre_score_plugins",
    "reserve_plugins",
    "permit_plugins",
    "pre_bind_plugins",
    "bind_plugins",
    "post_bind_plugins",
)


class _Instrumentation:
    """The Framework's plugin tuples, plain and timed; ``use(timed)`` installs one set."""

    def __init__(self, fwk: Framework, record: RecordFn) -> None:
        self.fwk = fwk
        self.available = hasattr(fwk, "_filters") and hasattr(fwk, "_scores")
        self.plain: dict[str, Any] = {name: getattr(fwk, name) for name in _PLUGIN_TUPLES}
        self.plain["score_plugins"] = fwk.score_plugins
        self.timed: dict[str, Any] = {}
        self.current = False
        if not self.available:
            return
        self.plain["_filters"] = fwk._filters
        self.plain["_scores"] = fwk._scores
        proxies: dict[int, _Timed] = {}

        def timed(plugin: Any) -> _Timed:
            proxy = proxies.get(id(plugin))
            if proxy is None:
                proxy = proxies[id(plugin)] = _Timed(plugin, record)
            return proxy

        for name in _PLUGIN_TUPLES:
            self.timed[name] = tuple(timed(p) for p in self.plain[name])
        self.timed["score_plugins"] = tuple((timed(p), w) for p, w in fwk.score_plugins)
        self.timed["_filters"] = tuple((p.name, timed(p).filter) for p in fwk.filter_plugins)
        self.timed["_scores"] = tuple(
            (p.name, timed(p).score, w, timed(p).score_extensions()) for p, w in fwk.score_plugins
        )

    def use(self, timed: bool) -> None:
        if timed == self.current or not self.available:
            return
        for name, value in (self.timed if timed else self.plain).items():
            setattr(self.fwk, name, value)
        self.current = timed

    @property
    def first_binder(self) -> Any:
        plugins = self.plain["bind_plugins"]
        return plugins[0] if plugins else None


@dataclass
class _PendingBind:
    fwk: Framework
    state: CycleState
    info: QueuedPodInfo
    assumed: Pod
    host: str
    outcome: PodOutcome
    pods_to_activate: dict[str, Pod]
    sampled: bool
    submitted: float = field(default_factory=time.perf_counter)


class LiveScheduler(Scheduler):
    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        writer: ClusterWriter,
        now: Callable[[], float],
        *,
        metrics: ops.SchedulerMetrics,
        submit_bind: Callable[[Pod, str], None],
        current_pod: Callable[[str], Pod | None],
        seed: int = 0,
        sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT,
    ) -> None:
        super().__init__(config, registry, writer, now, seed)
        self.metrics = metrics
        self.submit_bind = submit_bind
        self.current_pod = current_pod
        self.sample_percent = sample_percent
        self._instr = {
            name: _Instrumentation(fwk, metrics.plugin) for name, fwk in self.frameworks.items()
        }
        self._sampled: dict[str, bool] = {}  # uid -> whether its cycle is sampled
        self._attempt_start: dict[str, float] = {}
        self._binds: dict[str, _PendingBind] = {}
        self._metrics_rng = random.Random(seed ^ 0x5EED)
        self.bind_conflicts = 0

    @property
    def binds_in_flight(self) -> int:
        return len(self._binds)

    # --- informer events ----------------------------------------------------------------

    def on_pod_add(self, pod: Pod) -> None:
        if not pod.node_name and (pod.deletion_timestamp or pod.is_terminal):
            return
        super().on_pod_add(pod)
        if not pod.node_name and pod.uid in self.outcomes and pod.nominated_node_name:
            # Nominated by an earlier leader: count it on that node (PriorityQueue.Add).
            self.nominator.add(pod, pod.nominated_node_name)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        uid = new.uid
        if not new.node_name and (new.deletion_timestamp or new.is_terminal):
            self._drop_pending(new)
            return
        super().on_pod_update(old, new)
        if new.node_name:
            self._done_with(uid)
            return
        if uid in self.outcomes:
            # UpdateNominatedPod: follow the API's nomination unless neither version has one,
            # in which case a nomination made in memory (not yet written back) stays.
            if old.nominated_node_name or new.nominated_node_name:
                self.nominator.add(new, new.nominated_node_name)
            else:
                node = self.nominator.node_of(uid)
                if node:
                    self.nominator.add(new, node)

    def on_pod_delete(self, pod: Pod) -> None:
        super().on_pod_delete(pod)
        self._done_with(pod.uid)

    def _drop_pending(self, pod: Pod) -> None:
        """A pending pod being deleted (or finished) is not scheduled any more."""
        uid = pod.uid
        self.queue.delete(pod)
        self.nominator.delete(uid)
        wp = self.waiting_pods.get(uid)
        if wp is not None:
            wp.reject("", "pod is being deleted")
        self._done_with(uid)

    def _done_with(self, uid: str) -> None:
        # Live pods come and go: forget per-pod bookkeeping the simulator keeps for its report.
        self.outcomes.pop(uid, None)
        self._attempt_generation.pop(uid, None)
        if uid not in self._binds and self.waiting_pods.get(uid) is None:
            self._attempt_start.pop(uid, None)
            self._sampled.pop(uid, None)

    # --- scheduling cycle ----------------------------------------------------------------

    def _scheduling_cycle(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        outcome: PodOutcome,
        pods_to_activate: dict[str, Pod],
    ) -> None:
        uid = info.pod.uid
        self._attempt_start[uid] = time.perf_counter()
        sampled = self._metrics_rng.randrange(100) < self.sample_percent
        self._sampled[uid] = sampled
        instr = self._instr[fwk.profile_name]
        instr.use(sampled)
        try:
            super()._scheduling_cycle(fwk, state, info, outcome, pods_to_activate)
        finally:
            instr.use(False)

    def _handle_failure(
        self,
        fwk: Framework,
        info: QueuedPodInfo,
        status: Status,
        diagnosis: Diagnosis | None,
        nominating: NominatingInfo | None,
        outcome: PodOutcome,
    ) -> None:
        uid = info.pod.uid
        rejected = status.code in (
            Code.UNSCHEDULABLE,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            Code.PENDING,
        )
        self._observe_attempt(uid, ops.UNSCHEDULABLE if rejected else ops.ERROR, fwk.profile_name)
        latest = self.current_pod(uid)
        if latest is None or latest.node_name:
            # handleSchedulingFailure: a pod gone from the informer, or bound meanwhile
            # (by another replica, an extender), is not requeued.
            self._forget(fwk, info.pod)
            outcome.result = UNSCHEDULABLE if rejected else ERROR
            outcome.message = status.message
            self.queue.done(uid)
            return
        info.pod = latest
        log.info(
            "unable to schedule pod pod=%s reason=%s message=%r",
            latest.key,
            "Unschedulable" if rejected else "SchedulerError",
            status.message,
        )
        super()._handle_failure(fwk, info, status, diagnosis, nominating, outcome)

    def _observe_attempt(self, uid: str, result: str, profile: str) -> None:
        start = self._attempt_start.pop(uid, None)
        self._sampled.pop(uid, None)
        if start is not None:
            self.metrics.attempt(result, profile, time.perf_counter() - start)

    # --- binding cycle -----------------------------------------------------------------------

    def _binds_async(self, fwk: Framework, pod: Pod) -> bool:
        if not isinstance(self._instr[fwk.profile_name].first_binder, DefaultBinder):
            return False
        return not any(e.has_bind and e.is_interested(pod) for e in self.extenders)

    def _binding_cycle(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        assumed: Pod,
        host: str,
        outcome: PodOutcome,
        wp: WaitingPod | None,
        pods_to_activate: dict[str, Pod],
    ) -> None:
        instr = self._instr[fwk.profile_name]
        previous = instr.current
        instr.use(self._sampled.get(assumed.uid, False))
        try:
            self._binding_cycle_live(fwk, state, info, assumed, host, outcome, wp, pods_to_activate)
        finally:
            instr.use(previous)

    def _binding_cycle_live(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        assumed: Pod,
        host: str,
        outcome: PodOutcome,
        wp: WaitingPod | None,
        pods_to_activate: dict[str, Pod],
    ) -> None:
        uid = assumed.uid
        sampled = self._sampled.get(uid, False)
        rejected_at_permit = (
            wp is not None and wp.status is not None and wp.status.code != Code.SUCCESS
        )
        if rejected_at_permit or not self._binds_async(fwk, assumed):
            super()._binding_cycle(fwk, state, info, assumed, host, outcome, wp, pods_to_activate)
            if outcome.result == SCHEDULED and outcome.node == host:
                self._observe_attempt(uid, ops.SCHEDULED, fwk.profile_name)
                log.info("bound pod pod=%s node=%s", assumed.key, host)
            return
        status = fwk.run_pre_bind_plugins(state, assumed, host)
        if status is not None:
            self._binding_failure(fwk, state, info, assumed, host, status, None, outcome)
            return
        self._binds[uid] = _PendingBind(
            fwk, state, info, assumed, host, outcome, pods_to_activate, sampled
        )
        self.submit_bind(assumed, host)

    def finish_binding(self, result: BindResult) -> None:
        """The answer to a binding POST, on the scheduling thread."""
        pending = self._binds.get(result.uid)
        if pending is None or pending.host != result.node:
            return
        del self._binds[result.uid]
        fwk, state, info, assumed, host, outcome = (
            pending.fwk,
            pending.state,
            pending.info,
            pending.assumed,
            pending.host,
            pending.outcome,
        )
        uid = assumed.uid
        if pending.sampled:
            self.metrics.plugin(
                DefaultBinder.name, "Bind", "Success" if result.ok else "Error", result.seconds
            )
        instr = self._instr[fwk.profile_name]
        instr.use(pending.sampled)
        try:
            if result.ok:
                self._bound(pending)
                return
            if result.conflict:
                # Already bound elsewhere, or deleted: nothing to retry; the watch has the truth.
                self.bind_conflicts += 1
                self.metrics.binding_conflicts.inc()
                log.info(
                    "binding refused, forgetting pod pod=%s node=%s error=%r",
                    assumed.key,
                    host,
                    result.message,
                )
                fwk.run_reserve_plugins_unreserve(state, assumed, host)
                self.cache.forget_pod(assumed)
                self._forget(fwk, assumed)
                self.queue.on_event(ev.ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid)
                self.queue.done(uid)
                outcome.result = ERROR
                outcome.message = result.message
                self._observe_attempt(uid, ops.ERROR, fwk.profile_name)
                return
            log.warning("binding failed pod=%s node=%s error=%r", assumed.key, host, result.message)
            status = Status(
                Code.ERROR,
                f"running Bind plugin {DefaultBinder.name!r}: {result.message}",
                plugin=DefaultBinder.name,
            )
            self._binding_failure(fwk, state, info, assumed, host, status, None, outcome)
        finally:
            instr.use(False)

    def _bound(self, p: _PendingBind) -> None:
        """The end of a successful binding cycle (after Bind)."""
        fwk, assumed, host, outcome = p.fwk, p.assumed, p.host, p.outcome
        uid = assumed.uid
        fwk.run_post_bind_plugins(p.state, assumed, host)
        self._forget(fwk, assumed)
        outcome.result = SCHEDULED
        outcome.node = host
        outcome.message = ""
        outcome.scheduled_at = self.now()
        self.nominator.delete(uid)
        self._observe_attempt(uid, ops.SCHEDULED, fwk.profile_name)
        log.info("bound pod pod=%s node=%s", assumed.key, host)
        self.writer.record_event(
            Event(
                time=self.now(),
                regarding=ObjectReference("Pod", "v1", assumed.name, assumed.namespace, uid),
                related=None,
                type="Normal",
                reason="Scheduled",
                action="Binding",
                note=f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
                reporter="wasmsched",
            )
        )
        if p.pods_to_activate:
            self.queue.activate(p.pods_to_activate.values())
            p.pods_to_activate.clear()
        self.queue.done(uid)

    # --- introspection ---------------------------------------------------------------------

    def pending_counts(self) -> Mapping[str, int]:
        """scheduler_pending_pods by queue: active, backoff, unschedulable, gated."""
        q = self.queue
        active = q.active_len()
        gated = sum(1 for info in q.unschedulable.values() if info.gated)
        unschedulable = len(q.unschedulable) - gated
        backoff = max(0, len(q) - active - len(q.unschedulable))
        return {
            "active": active,
            "backoff": backoff,
            "unschedulable": unschedulable,
            "gated": gated,
        }


__all__ = ["ERROR", "PLUGIN_METRICS_SAMPLE_PERCENT", "SCHEDULED", "LiveScheduler"]
