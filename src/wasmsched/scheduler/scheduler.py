"""The Scheduler: queue, frameworks, cache and extenders tied together (pkg/scheduler/
scheduler.go and schedule_one.go: ScheduleOne).

The same loop serves the simulator and the live mode; they differ in the ``ClusterWriter``
(store or API server), in the clock and in the attempt observer. Everything runs on one
thread: cluster changes are fed in through the ``on_*`` handlers between cycles, as
informers would.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.cluster.cache import Cache
from wasmsched.config import SchedulerConfig
from wasmsched.extenders import build_extenders, ignored_resources
from wasmsched.framework.batching import OpportunisticBatch
from wasmsched.framework.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState
from wasmsched.framework.interfaces import AsyncBinder, Event, Registry
from wasmsched.framework.node_info import NodeInfo, PodInfo, Snapshot
from wasmsched.framework.node_search import run_filter_plugins_with_nominated_pods
from wasmsched.framework.records import CycleRecord
from wasmsched.framework.runtime import Framework
from wasmsched.framework.status import Status
from wasmsched.framework.waiting_pods import WaitingPod, WaitingPods
from wasmsched.queue.nominator import Nominator
from wasmsched.queue.scheduling_queue import (
    BACKOFF_FLUSH_PERIOD,
    UNSCHEDULABLE_FLUSH_PERIOD,
    SchedulingQueue,
)
from wasmsched.scheduler.binding import BindingCycles
from wasmsched.scheduler.eventhandlers import EventHandlers, ObjectStore
from wasmsched.scheduler.failure import SchedulingFailure, handle_scheduling_failure
from wasmsched.scheduler.profile import ProfileOptions, build_profiles
from wasmsched.scheduler.schedule_one import Algorithm, scheduling_cycle
from wasmsched.scheduler.types import UNSCHEDULABLE, AttemptObserver, ClusterWriter, PodOutcome

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.extender import Extender


class SchedulerHandle:
    """framework.Handle for one scheduler; plugins reach the cluster only through this."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self.parallelism = scheduler.config.parallelism
        self.features = scheduler.config.features
        writer = scheduler.writer
        self._async_binder = writer if isinstance(writer, AsyncBinder) else None

    def snapshot(self) -> Snapshot:
        """The cluster as the current cycle sees it."""
        return self._scheduler.current_snapshot

    def now(self) -> float:
        """The scheduler's clock."""
        return self._scheduler.now()

    def record_event(self, event: Event) -> None:
        """Records a Kubernetes Event through the writer."""
        self._scheduler.writer.record_event(event)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod waiting at Permit with that UID, if any."""
        return self._scheduler.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Rejects a waiting pod; False when none has that UID."""
        wp = self._scheduler.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def iterate_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        """Calls ``fn`` on every pod waiting at Permit."""
        for wp in self._scheduler.waiting_pods:
            fn(wp)

    def binder(self) -> ClusterWriter:
        """The writer, where bindings go."""
        return self._scheduler.writer

    def async_binder(self) -> AsyncBinder | None:
        """The writer when it binds in the background, else None."""
        return self._async_binder

    def framework_for(self, pod: Pod) -> Framework | None:
        """The framework of the pod's profile."""
        return self._scheduler.frameworks.get(pod.scheduler_name)

    def run_filter_plugins_with_nominated_pods(
        self, fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filters ``pod`` on ``node_info`` counting higher-or-equal priority nominated pods."""
        nominator = self._scheduler.nominator
        return run_filter_plugins_with_nominated_pods(nominator, fwk, state, pod, node_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``."""
        return self._scheduler.nominator.pods_for_node(node_name)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Deletes a preemption victim through the writer."""
        self._scheduler.writer.delete_pod(pod, reason)

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        """Writes a pod's nominated node through the writer."""
        self._scheduler.writer.set_nominated_node(pod, node_name)

    def extenders(self) -> Sequence[Extender]:
        """The configured extenders (preemption asks those that support it)."""
        return self._scheduler.extenders

    def write_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """Writes a ResourceClaim through the writer."""
        return self._scheduler.writer.write_resource_claim(claim)

    def delete_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """Deletes a ResourceClaim through the writer."""
        return self._scheduler.writer.delete_resource_claim(claim)

    def set_extended_resource_claim_status(
        self, pod: Pod, status: Mapping[str, Any]
    ) -> Status | None:
        """Writes the pod's extendedResourceClaimStatus through the writer."""
        return self._scheduler.writer.set_extended_resource_claim_status(pod, status)

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        """Other cluster objects by kind; the list is shared: do not modify it."""
        return self._scheduler.objects.list(kind)


class Scheduler:
    """One scheduler: its profiles' frameworks, the queue, the cache, the extenders.

    ``attempts`` (optional) sees each attempt begin and end and may observe its plugin
    calls (the live mode's metrics); ``explain`` keeps a CycleRecord per attempt.
    """

    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        writer: ClusterWriter,
        now: Callable[[], float],
        seed: int = 0,
        explain: bool = False,
        attempts: AttemptObserver | None = None,
    ) -> None:
        self.config = config
        self.writer = writer
        self.now = now
        self.explain = explain
        # With explain: the "namespace/name" of the pods to record (None: every pod).
        self.explain_pods: frozenset[str] | None = None
        self.attempts = attempts
        # Set by the simulator, whose writes reach the event handlers when a step ends,
        # before the next Pop. kube-scheduler pops again as soon as handleSchedulingFailure
        # returns, and the watch event of its status patch (updatePod, its last call)
        # reaches the queue during the next cycle: a pod popped at once (activeQ empty,
        # SchedulerPopFromBackoffQ) is tried without the nominatedNodeName it was just
        # given (schedule_one.go: handleSchedulingFailure; scheduling_queue.go: Update of
        # an in-flight pod). So that write waits for the next Pop. Live, the informer
        # decides.
        self.nomination_written_after_pop = False
        self._after_pop: list[Callable[[], None]] = []
        self.cache = Cache(config.features)
        self.current_snapshot = Snapshot()
        self.waiting_pods = WaitingPods()
        self.nominator = Nominator()
        self.handle = SchedulerHandle(self)
        self.outcomes: dict[str, PodOutcome] = {}
        self.objects = ObjectStore()
        # As kube's scheduler.New: the extenders, then the profiles (their ignoredByScheduler
        # resources change NodeResourcesFit's args).
        self.extenders: list[Extender] = build_extenders(config.extenders, config.source)
        options = ProfileOptions(
            registry,
            self.handle,
            self.waiting_pods,
            ignored_resources=tuple(ignored_resources(config.extenders)),
            source=config.source,
        )
        profiles = build_profiles(config, options)
        self.frameworks: dict[str, Framework] = {n: p.framework for n, p in profiles.items()}
        # Per profile: the plugins it enables that the registry does not have.
        self.skipped_defaults = {n: p.skipped_plugins for n, p in profiles.items()}
        self.queue = SchedulingQueue(
            now,
            self.frameworks,
            float(config.pod_initial_backoff_seconds),
            float(config.pod_max_backoff_seconds),
            backoff_by_unschedulable_count=config.features.backoff_by_unschedulable_count,
            pop_from_backoff=config.features.pop_from_backoff_q,
        )
        self.algorithm = Algorithm(
            self.extenders,
            self.nominator,
            random.Random(seed),
            config.percentage_of_nodes_to_score,
            host_from_sorted_nodes=config.features.host_from_sorted_nodes,
            now=now,
        )
        if config.features.opportunistic_batching and not self.extenders:
            # computeBatchablePlugins: a profile with extenders never batches.
            for fwk in self.frameworks.values():
                fwk.batch = OpportunisticBatch.for_framework(fwk)
        self.binding = BindingCycles(self)
        self.events = EventHandlers(self)
        self._timers: list[tuple[float, int, Callable[[], object]]] = []
        self._timer_seq = itertools.count()
        self._ready_bindings: deque[Callable[[], None]] = deque()
        # Cluster generation seen at each pod's last attempt, to know when to stop.
        self._attempt_generation: dict[str, int] = {}
        self.cluster_generation = 0
        self.cycles = 0
        self.scheduled_pods = 0  # bound by this scheduler, for progress reports

    @property
    def rng(self) -> random.Random:
        """The seeded generator that breaks score ties."""
        return self.algorithm.rng

    # --- cluster event handlers (informers) -----------------------------------------------

    def on_node_add(self, node: Node) -> None:
        """A node appeared."""
        self.events.on_node_add(node)

    def on_node_update(self, old: Node, new: Node) -> None:
        """A node changed."""
        self.events.on_node_update(old, new)

    def on_node_delete(self, node: Node) -> None:
        """A node is gone."""
        self.events.on_node_delete(node)

    def on_object_add(self, manifest: Mapping[str, Any]) -> None:
        """Another object (PDB, PVC, PV, StorageClass...) appeared or changed."""
        self.events.on_object_add(manifest)

    def on_object_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Another object changed (an Update event, with both versions for the hints)."""
        self.events.on_object_update(old, new)

    def on_object_delete(self, manifest: Mapping[str, Any]) -> None:
        """Another object is gone."""
        self.events.on_object_delete(manifest)

    def on_pod_add(self, pod: Pod) -> None:
        """A pod appeared."""
        self.events.on_pod_add(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        """A pod changed."""
        self.events.on_pod_update(old, new)

    def on_pod_delete(self, pod: Pod) -> None:
        """A pod is gone."""
        self.events.on_pod_delete(pod)

    def object_list(self, kind: str) -> list[Mapping[str, Any]]:
        """Other cluster objects of ``kind`` (shared: do not modify)."""
        return self.objects.list(kind)

    # --- the loop -------------------------------------------------------------------------

    def schedule_one(self) -> bool:
        """k8s ScheduleOne: one scheduling cycle, then the failure handler or the binding
        cycle (at once unless the pod waits at Permit); False when idle."""
        self.run_ready_bindings()
        info = self.queue.pop()
        if self._after_pop:
            writes, self._after_pop = self._after_pop, []
            for write in writes:
                write()
        if info is None:
            return False
        pod = info.pod
        fwk = self.frameworks.get(pod.scheduler_name)
        outcome = self.outcomes.get(pod.uid)
        if fwk is None or outcome is None or self.cache.is_assumed(pod.uid):
            self.queue.done(pod.uid)
            return True
        self.cycles += 1
        outcome.attempts = info.attempts
        self._attempt_generation[pod.uid] = self.cluster_generation
        explained = self.explain and (self.explain_pods is None or pod.key in self.explain_pods)
        record = CycleRecord() if explained else None
        if record is not None:
            outcome.cycles.append(record)
        observer = self.attempts.attempt_started(fwk, info) if self.attempts else None
        # The recorder and the observer travel with the attempt, through both cycles.
        state = CycleState(record, observer)
        pods_to_activate: dict[str, Pod] = {}
        state.write(PODS_TO_ACTIVATE_KEY, pods_to_activate)
        result = scheduling_cycle(self, fwk, state, info, pods_to_activate)
        if isinstance(result, SchedulingFailure):
            handle_scheduling_failure(self, fwk, info, result, outcome)
        else:
            self.binding.start(fwk, state, info, result, outcome, pods_to_activate)
        self.run_ready_bindings()
        return True

    def write_nomination(self, pod: Pod, node_name: str) -> None:
        """handleSchedulingFailure's nominatedNodeName patch: written now, or after the
        next Pop (``nomination_written_after_pop``)."""
        if self.nomination_written_after_pop:
            self._after_pop.append(lambda: self.writer.set_nominated_node(pod, node_name))
        else:
            self.writer.set_nominated_node(pod, node_name)

    def attempt_ended(self, fwk: Framework, pod: Pod, outcome: PodOutcome) -> None:
        """Tells the attempt observer that an attempt ended."""
        if self.attempts is not None:
            self.attempts.attempt_ended(fwk, pod, outcome)

    def binding_in_flight(self, uid: str) -> bool:
        """Whether a pod's asynchronous binding awaits ``complete_binding``."""
        return uid in self.binding.in_flight

    @property
    def binds_in_flight(self) -> int:
        """How many asynchronous bindings await their answer."""
        return len(self.binding.in_flight)

    def complete_binding(
        self,
        uid: str,
        node_name: str,
        status: Status | None,
        *,
        conflict: bool = False,
        seconds: float | None = None,
    ) -> bool:
        """The answer to a Bind plugin's ``BindingPending``, on the scheduling thread.

        ``status`` None: bound (PostBind, Scheduled event, done). ``conflict``: the pod was
        bound elsewhere or deleted meanwhile (409/404): Unreserve and forget it, write
        nothing; the watch has the truth. Otherwise the binding-failure path. ``seconds``
        is the Bind call's duration for the observer (by default, since it was started).
        False when no binding of that pod to that node is in flight.
        """
        return self.binding.complete_binding(
            uid, node_name, status, conflict=conflict, seconds=seconds
        )

    def release_pod(self, uid: str) -> None:
        """Drops what is kept about a pod for the report (its outcome, its last attempt).

        The simulator reports every pod at the end; a scheduler that runs for ever calls
        this when a pod is bound or deleted.
        """
        self.outcomes.pop(uid, None)
        self._attempt_generation.pop(uid, None)

    # --- time --------------------------------------------------------------------------------

    def add_timer(self, when: float, fn: Callable[[], object]) -> None:
        """Runs ``fn`` at ``when`` on the scheduler's clock (from ``tick``)."""
        heapq.heappush(self._timers, (when, next(self._timer_seq), fn))

    def run_soon(self, fn: Callable[[], None]) -> None:
        """Runs ``fn`` (a binding cycle that stopped waiting) before the next cycle."""
        self._ready_bindings.append(fn)

    def run_ready_bindings(self) -> None:
        """Runs the binding cycles of pods that stopped waiting at Permit."""
        while self._ready_bindings:
            self._ready_bindings.popleft()()

    def next_wakeup(self) -> float | None:
        """When something becomes due: a timer, a backoff expiry, a leftover flush."""
        candidates = []
        if self._timers:
            candidates.append(self._timers[0][0])
        expiry = self.queue.next_backoff_expiry()
        if expiry is not None:
            # flushBackoffQCompleted runs every second.
            candidates.append(_next_tick(expiry, BACKOFF_FLUSH_PERIOD))
        leftover = self.queue.next_leftover_flush()
        if leftover is not None:
            # flushUnschedulablePodsLeftover runs every 30 s and moves pods that have been
            # there strictly longer than the limit.
            candidates.append(_next_tick(leftover, UNSCHEDULABLE_FLUSH_PERIOD, strictly_after=True))
        return min(candidates) if candidates else None

    def tick(self) -> None:
        """Runs what is due at ``now()``."""
        now = self.now()
        while self._timers and self._timers[0][0] <= now:
            _, _, fn = heapq.heappop(self._timers)
            fn()
        self.run_ready_bindings()
        self.queue.flush_backoff_completed()
        self.queue.flush_unschedulable_leftover()

    def has_work_that_could_change(self) -> bool:
        """False when every pending pod was last tried against the current cluster state."""
        if (
            self.queue.active_len()
            or self._ready_bindings
            or len(self.waiting_pods)
            or self.binding.waiting_in_pre_bind
        ):
            return True
        for info in self.queue.pending():
            if info.gated:
                # PreEnqueue keeps a gated pod out of activeQ until the pod itself changes
                # (pkg/scheduler/backend/queue/scheduling_queue.go: Update re-runs
                # PreEnqueue); no other cluster change can let it in.
                continue
            if self._attempt_generation.get(info.pod.uid, -1) != self.cluster_generation:
                return True
        return False

    def finalize_outcomes(self) -> None:
        """Pods never tried because PreEnqueue keeps them out are reported unschedulable."""
        for info in self.queue.pending():
            outcome = self.outcomes.get(info.pod.uid)
            if outcome is not None and info.gated and outcome.result == "Pending":
                outcome.result = UNSCHEDULABLE
                outcome.message = info.gated_message

    def pending_timers(self) -> bool:
        """Whether any timer (a Permit deadline) is set."""
        return bool(self._timers)

    def close(self) -> None:
        """Closes every plugin and extender."""
        for fwk in self.frameworks.values():
            fwk.close()
        for extender in self.extenders:
            extender.close()


def _next_tick(t: float, period: float, strictly_after: bool = False) -> float:
    """The first multiple of ``period`` at or (strictly) after ``t``."""
    ticks = t // period + 1 if strictly_after else -(-t // period)
    return float(ticks * period)


__all__ = ["Scheduler", "SchedulerHandle"]
