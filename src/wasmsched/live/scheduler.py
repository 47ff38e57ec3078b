"""LiveScheduler: a Scheduler composed with kube-scheduler's live-cluster behaviour and
metrics.

It uses only the Scheduler's public seams:

* asynchronous binding: the runner's LiveWriter offers ``bind_async``, so DefaultBinder
  answers ``BindingPending`` and the POST runs on a worker while the next pod is
  scheduled; its ``BindResult`` comes back through the runner's inbox to
  ``finish_binding``, which hands it to ``Scheduler.complete_binding`` (bound: PostBind and
  the ``Scheduled`` event; 409/404: forgotten without any write; other errors: the
  binding-failure path). A failed pod is requeued with its latest informer version, and
  not at all once it is gone or bound (the base Scheduler's rule, via
  ``writer.current_pod``).
* metrics: it is the Scheduler's AttemptObserver: ``attempt_started``/``attempt_ended``
  time attempts by result; on a 10% sample of attempts ``attempt_started`` returns an
  observer that the attempt's CycleState carries to the Framework's runners for every
  plugin call (nothing is observed, nor costs anything, in the other attempts).

It also follows kube-scheduler's event handlers where the live cluster differs from the
simulator: pods being deleted or terminal leave the queue; nominations written by another
replica are honoured (by the base's nominator); per-pod records are dropped once a pod is bound or deleted.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from wasmsched.framework.interfaces import Registry
from wasmsched.framework.status import Code, Status
from wasmsched.live import ops
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
    from wasmsched.framework.runtime import Framework, PluginObserver
    from wasmsched.framework.types import QueuedPodInfo
    from wasmsched.live.writer import BindResult

log = logging.getLogger("wasmsched.live.scheduler")

# kube-scheduler's pluginMetricsSamplePercent.
PLUGIN_METRICS_SAMPLE_PERCENT = 10

_RESULTS = {SCHEDULED: ops.SCHEDULED, UNSCHEDULABLE: ops.UNSCHEDULABLE, ERROR: ops.ERROR}


class PluginCallObserver:
    """The plugin observer of sampled attempts (framework/records: PluginCallCounter): the
    calls go to the metrics' queue, a vectorized call's per-node calls in one entry."""

    __slots__ = ("_metrics",)

    def __init__(self, metrics: ops.SchedulerMetrics) -> None:
        self._metrics = metrics

    def __call__(self, point: str, plugin: str, code: str, seconds: float) -> None:
        self._metrics.plugin(plugin, point, code, seconds)

    def calls(self, point: str, plugin: str, code: str, seconds: float, count: int) -> None:
        self._metrics.plugin(plugin, point, code, seconds, count)


class LiveScheduler:
    """A Scheduler (composed, not subclassed) with the live cluster's event rules, attempt
    metrics and asynchronous binding answers; it is the Scheduler's AttemptObserver."""

    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        writer: ClusterWriter,
        now: Callable[[], float],
        *,
        metrics: ops.SchedulerMetrics,
        seed: int = 0,
        sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT,
    ) -> None:
        self.metrics = metrics
        self.sample_percent = sample_percent
        self._attempt_start: dict[str, float] = {}
        self._metrics_rng = random.Random(seed ^ 0x5EED)
        # One observer object for every sampled attempt: the Framework keeps its timed
        # stand-ins for the last observer seen.
        self._plugin_observer: PluginObserver = PluginCallObserver(metrics)
        self.bind_conflicts = 0
        self.scheduler = Scheduler(config, registry, writer, now, seed, attempts=self)
        s = self.scheduler
        # What the runner and the tests use of the Scheduler, unchanged.
        self.config = s.config
        self.writer = s.writer
        self.cache = s.cache
        self.queue = s.queue
        self.frameworks = s.frameworks
        self.extenders = s.extenders
        self.handle = s.handle
        self.nominator = s.nominator
        self.waiting_pods = s.waiting_pods
        self.outcomes = s.outcomes
        self.schedule_one = s.schedule_one
        self.tick = s.tick
        self.next_wakeup = s.next_wakeup
        self.pending_timers = s.pending_timers
        self.close = s.close
        self.on_node_add = s.on_node_add
        self.on_node_update = s.on_node_update
        self.on_node_delete = s.on_node_delete
        self.on_object_add = s.on_object_add
        self.on_object_update = s.on_object_update
        self.on_object_delete = s.on_object_delete

    @property
    def cycles(self) -> int:
        """Scheduling cycles run so far."""
        return self.scheduler.cycles

    @property
    def binds_in_flight(self) -> int:
        """Asynchronous bindings awaiting their answer."""
        return self.scheduler.binds_in_flight

    # --- informer events ----------------------------------------------------------------

    def on_pod_add(self, pod: Pod) -> None:
        """A pod appeared (the base skips pending pods being deleted or finished)."""
        self.scheduler.on_pod_add(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        """A pod changed: a pending pod being deleted or finished leaves the queue."""
        if not new.node_name and (new.deletion_timestamp or new.is_terminal):
            self._drop_pending(new)
            return
        self.scheduler.on_pod_update(old, new)
        if new.node_name:
            self._done_with(new.uid)

    def on_pod_delete(self, pod: Pod) -> None:
        """A pod is gone."""
        self.scheduler.on_pod_delete(pod)
        self._done_with(pod.uid)

    def _drop_pending(self, pod: Pod) -> None:
        """A pending pod being deleted (or finished) is not scheduled any more."""
        uid = pod.uid
        s = self.scheduler
        s.queue.delete(pod)
        s.nominator.delete(uid)
        wp = s.waiting_pods.get(uid)
        if wp is not None:
            wp.reject("", "pod is being deleted")
        self._done_with(uid)

    def _done_with(self, uid: str) -> None:
        # Live pods come and go: forget per-pod bookkeeping the simulator keeps for its report.
        s = self.scheduler
        s.release_pod(uid)
        if not s.binding_in_flight(uid) and s.waiting_pods.get(uid) is None:
            self._attempt_start.pop(uid, None)

    # --- attempts and plugin metrics (AttemptObserver) ---------------------------------------

    def attempt_started(self, fwk: Framework, info: QueuedPodInfo) -> PluginObserver | None:
        """Times the attempt; on a sample of attempts, observes its plugin calls."""
        self._attempt_start[info.pod.uid] = time.perf_counter()
        if self._metrics_rng.randrange(100) < self.sample_percent:
            return self._plugin_observer
        return None

    def attempt_ended(self, fwk: Framework, pod: Pod, outcome: PodOutcome) -> None:
        """Records the attempt's duration by result and logs it."""
        start = self._attempt_start.pop(pod.uid, None)
        if start is not None:
            self.metrics.attempt(
                _RESULTS.get(outcome.result, ops.ERROR),
                fwk.profile_name,
                time.perf_counter() - start,
            )
        if outcome.result == SCHEDULED:
            log.info("bound pod pod=%s node=%s", pod.key, outcome.node)
        else:
            log.info(
                "unable to schedule pod pod=%s reason=%s message=%r",
                pod.key,
                "Unschedulable" if outcome.result == UNSCHEDULABLE else "SchedulerError",
                outcome.message,
            )

    # --- binding --------------------------------------------------------------------------

    def finish_binding(self, result: BindResult) -> None:
        """The answer to a binding POST, on the scheduling thread."""
        status = None if result.ok else Status(Code.ERROR, result.message)
        if not self.scheduler.complete_binding(
            result.uid, result.node, status, conflict=result.conflict, seconds=result.seconds
        ):
            return
        if result.ok:
            return
        current = self.writer.current_pod(result.uid)
        key = current.key if current is not None else result.uid
        if result.conflict:
            # Already bound elsewhere, or deleted: nothing to retry; the watch has the truth.
            self.bind_conflicts += 1
            self.metrics.binding_conflicts.inc()
            log.info(
                "binding refused, forgot pod pod=%s node=%s error=%r",
                key,
                result.node,
                result.message,
            )
        else:
            log.warning("binding failed pod=%s node=%s error=%r", key, result.node, result.message)

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


__all__ = [
    "ERROR",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "SCHEDULED",
    "LiveScheduler",
    "PluginCallObserver",
]
