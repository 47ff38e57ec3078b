"""LiveScheduler: the Scheduler with kube-scheduler's live-cluster behaviour and metrics.

It uses only the Scheduler's public seams:

* asynchronous binding: the runner's LiveWriter offers ``bind_async``, so DefaultBinder
  answers ``BindingPending`` and the POST runs on a worker while the next pod is
  scheduled; its ``BindResult`` comes back through the runner's inbox to
  ``finish_binding``, which hands it to ``Scheduler.complete_binding`` (bound: PostBind and
  the ``Scheduled`` event; 409/404: forgotten without any write; other errors: the
  binding-failure path). A failed pod is requeued with its latest informer version, and
  not at all once it is gone or bound (the base Scheduler's rule, via
  ``writer.current_pod``).
* metrics: ``on_attempt_start``/``on_attempt_end`` time attempts by result; on a 10%
  sample of attempts ``on_attempt_start`` returns an observer that the Framework calls for
  every plugin call (nothing is observed, nor costs anything, in the other attempts).

It also follows kube-scheduler's event handlers where the live cluster differs from the
simulator: pods being deleted or terminal leave the queue; nominations written by another
replica are honoured; per-pod records are dropped once a pod is bound or deleted.
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
    from wasmsched.live.writer import BindResult
    from wasmsched.queue.types import QueuedPodInfo

log = logging.getLogger("wasmsched.live.scheduler")

# kube-scheduler's pluginMetricsSamplePercent.
PLUGIN_METRICS_SAMPLE_PERCENT = 10

_RESULTS = {SCHEDULED: ops.SCHEDULED, UNSCHEDULABLE: ops.UNSCHEDULABLE, ERROR: ops.ERROR}


class LiveScheduler(Scheduler):
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
        super().__init__(config, registry, writer, now, seed)
        self.metrics = metrics
        self.sample_percent = sample_percent
        self._attempt_start: dict[str, float] = {}
        self._metrics_rng = random.Random(seed ^ 0x5EED)
        # One observer object for every sampled attempt: the Framework keeps its timed
        # stand-ins for the last observer set.
        self._plugin_observer: PluginObserver = self._observe_plugin
        self.bind_conflicts = 0

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
        self.release_pod(uid)
        if not self.binding_in_flight(uid) and self.waiting_pods.get(uid) is None:
            self._attempt_start.pop(uid, None)

    # --- attempts and plugin metrics -------------------------------------------------------

    def on_attempt_start(self, fwk: Framework, info: QueuedPodInfo) -> PluginObserver | None:
        self._attempt_start[info.pod.uid] = time.perf_counter()
        if self._metrics_rng.randrange(100) < self.sample_percent:
            return self._plugin_observer
        return None

    def on_attempt_end(self, fwk: Framework, pod: Pod, outcome: PodOutcome) -> None:
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

    def _observe_plugin(self, point: str, plugin: str, code: str, seconds: float) -> None:
        self.metrics.plugin(plugin, point, code, seconds)

    # --- binding --------------------------------------------------------------------------

    def finish_binding(self, result: BindResult) -> None:
        """The answer to a binding POST, on the scheduling thread."""
        status = None if result.ok else Status(Code.ERROR, result.message)
        if not self.complete_binding(
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


__all__ = ["ERROR", "PLUGIN_METRICS_SAMPLE_PERCENT", "SCHEDULED", "LiveScheduler"]
