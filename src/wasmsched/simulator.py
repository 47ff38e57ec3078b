"""The simulator: an in-memory cluster, a simulated clock and the scheduler loop.

It is a discrete-event loop: nothing sleeps. Time jumps to the next thing that is due
(a backoff expiry, a permit timeout, the unschedulable-pool flush, a traced arrival).
The run ends when every pending pod is bound, or when nothing left can change an
outcome: every pod still pending was last tried against the current cluster state.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wasmsched.api.admission import admit_pods
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.api.workloads import WorkloadControllers
from wasmsched.config import SchedulerConfig
from wasmsched.framework.interfaces import Event, Registry
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, PodOutcome, Scheduler

log = logging.getLogger("wasmsched.simulator")

# A run that would go on past this much simulated time is cut (a guest that errors on
# every attempt, for instance, would otherwise be retried forever).
DEFAULT_MAX_SIMULATED_SECONDS = 24 * 3600.0
DEFAULT_MAX_CYCLES_PER_POD = 50


class SimClock:
    def __init__(self, start: float = 0.0) -> None:
        self.t = start

    def now(self) -> float:
        return self.t


@dataclass
class Preemption:
    victim: str
    node: str
    preemptor: str
    time: float


@dataclass
class SimulationResult:
    outcomes: list[PodOutcome]
    other_scheduler_pods: list[Pod]
    events: list[Event]
    preemptions: list[Preemption]
    simulated_seconds: float
    wall_seconds: float
    cycles: int
    nodes: int
    skipped_plugins: dict[str, list[str]]
    stopped_early: str = ""

    def counts(self) -> dict[str, int]:
        counts = {SCHEDULED: 0, UNSCHEDULABLE: 0, ERROR: 0}
        for o in self.outcomes:
            counts[o.result] = counts.get(o.result, 0) + 1
        return counts

    def summary(self) -> dict[str, Any]:
        counts = self.counts()
        return {
            "pods": len(self.outcomes),
            "scheduled": counts.get(SCHEDULED, 0),
            "unschedulable": counts.get(UNSCHEDULABLE, 0),
            "error": counts.get(ERROR, 0),
            "pending": counts.get("Pending", 0),
            "nodes": self.nodes,
            "schedulingCycles": self.cycles,
            "simulatedSeconds": round(self.simulated_seconds, 3),
            "wallSeconds": round(self.wall_seconds, 3),
            "podsPerSecond": round(len(self.outcomes) / self.wall_seconds, 1)
            if self.wall_seconds > 0
            else None,
            "otherSchedulers": [
                {"namespace": p.namespace, "name": p.name, "schedulerName": p.scheduler_name}
                for p in self.other_scheduler_pods
            ],
            "preemptions": [
                {"victim": p.victim, "node": p.node, "preemptor": p.preemptor, "time": p.time}
                for p in self.preemptions
            ],
            "pluginsNotImplemented": self.skipped_plugins,
            "stoppedEarly": self.stopped_early or None,
        }


class ClusterStore:
    """The simulator's API server: it holds the objects and tells the scheduler of changes,
    as informers would after a write."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.events: list[Event] = []
        self.preemptions: list[Preemption] = []
        self.conditions: dict[str, tuple[str, str]] = {}
        self.scheduler: Scheduler | None = None
        self._preemptor: Pod | None = None
        self.workloads: WorkloadControllers | None = None  # their pods react to bind/delete

    # --- ClusterWriter ------------------------------------------------------------------

    def current_pod(self, uid: str) -> Pod | None:
        return self.pods.get(uid)

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        current = self.pods.get(pod.uid)
        if current is None:
            return Status(Code.ERROR, f'pods "{pod.name}" not found')
        if current.node_name:
            return Status(
                Code.ERROR,
                f'Operation cannot be fulfilled on pods/binding "{pod.name}": pod '
                f'{pod.name} is already assigned to node "{current.node_name}"',
            )
        if node_name not in self.nodes:
            return Status(Code.ERROR, f'nodes "{node_name}" not found')
        bound = current.with_node_name(node_name)
        self.pods[pod.uid] = bound
        self.conditions.pop(pod.uid, None)
        if self.scheduler is not None:
            self.scheduler.on_pod_update(current, bound)
        for pod in self.workloads.on_pod_bound(bound) if self.workloads else ():
            self.add_pod(pod)
        return None

    def extender_bound(self, pod: Pod, node_name: str) -> Status | None:
        # The extender answered for an API server it cannot reach here: apply it.
        return self.bind(pod, node_name)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        current = self.pods.pop(pod.uid, None)
        if current is None:
            return
        self.preemptions.append(
            Preemption(
                victim=current.key,
                node=current.node_name,
                preemptor=reason,
                time=self.clock.now(),
            )
        )
        self.record_event(Event.preempted(self.clock.now(), current, reason, "wasmsched"))
        if self.scheduler is not None:
            self.scheduler.on_pod_delete(current)
        for pod in self.workloads.on_pod_deleted(current) if self.workloads else ():
            self.add_pod(pod)

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        current = self.pods.get(pod.uid)
        if current is None or current.nominated_node_name == node_name:
            return
        updated = current.with_nominated_node_name(node_name)
        self.pods[pod.uid] = updated
        if self.scheduler is not None:
            self.scheduler.on_pod_update(current, updated)

    def set_unschedulable(self, pod: Pod, reason: str, message: str) -> None:
        self.conditions[pod.uid] = (reason, message)

    def record_event(self, event: Event) -> None:
        self.events.append(event)

    # --- loading --------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        self.nodes[node.name] = node
        if self.scheduler is not None:
            self.scheduler.on_node_add(node)

    def add_pod(self, pod: Pod) -> None:
        self.pods[pod.uid] = pod
        if self.scheduler is not None:
            self.scheduler.on_pod_add(pod)


ProgressFn = Callable[[int, int], None]


class Simulation:
    """Loads a cluster, schedules every pending pod, reports the outcome."""

    def __init__(
        self,
        cluster: ClusterObjects,
        config: SchedulerConfig,
        registry: Registry,
        seed: int = 0,
        explain: bool = False,
        max_simulated_seconds: float = DEFAULT_MAX_SIMULATED_SECONDS,
    ) -> None:
        self.clock = SimClock()
        self.store = ClusterStore(self.clock)
        self.scheduler = Scheduler(config, registry, self.store, self.clock.now, seed, explain)
        self.store.scheduler = self.scheduler
        self.cluster = cluster
        self.max_simulated_seconds = max_simulated_seconds
        self._arrivals: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self.other_scheduler_pods: list[Pod] = []

    def at(self, when: float, fn: Callable[[], None]) -> None:
        """Schedules a cluster change (a traced arrival, a completion) at simulated time."""
        heapq.heappush(self._arrivals, (when, next(self._seq), fn))

    def run(self, progress: ProgressFn | None = None) -> SimulationResult:
        started = time.perf_counter()
        sched = self.scheduler
        workloads = WorkloadControllers(self.cluster.nodes, self.cluster.pods, self.cluster.others)
        self.store.workloads = workloads
        for manifest in [*self.cluster.others, *workloads.objects]:
            sched.on_object_add(manifest)
        for node in self.cluster.nodes:
            self.store.add_node(node)
        pods = admit_pods([*self.cluster.pods, *workloads.initial_pods()], self.cluster.others)
        for pod in pods:
            if pod.node_name:
                self.store.add_pod(pod)
        for pod in pods:
            if pod.node_name:
                continue
            if pod.scheduler_name not in sched.frameworks:
                self.other_scheduler_pods.append(pod)
                self.store.pods[pod.uid] = pod
                continue
            self.store.add_pod(pod)
        total = len(sched.outcomes) + workloads.pods_to_come()
        stopped = ""
        max_cycles = DEFAULT_MAX_CYCLES_PER_POD * max(total, 1)
        cycles_at_last_tick = -1
        while True:
            while sched.schedule_one():
                if progress is not None:
                    progress(sched.scheduled_pods, total)
                if sched.cycles >= max_cycles:
                    break
            if sched.cycles >= max_cycles:
                stopped = f"stopped after {sched.cycles} scheduling cycles"
                break
            next_arrival = self._arrivals[0][0] if self._arrivals else None
            if next_arrival is None and not sched.has_work_that_could_change():
                break
            wakeup = sched.next_wakeup()
            candidates = [t for t in (wakeup, next_arrival) if t is not None]
            if not candidates:
                break
            target = max(self.clock.t, min(candidates))
            if target == self.clock.t and sched.cycles == cycles_at_last_tick:
                # Something claims to be due now, yet nothing ran since the last tick.
                stopped = f"stopped: no progress at {target:.3f} simulated seconds"
                break
            cycles_at_last_tick = sched.cycles
            if target > self.max_simulated_seconds:
                stopped = f"stopped at {self.max_simulated_seconds:.0f} simulated seconds"
                break
            self.clock.t = target
            while self._arrivals and self._arrivals[0][0] <= self.clock.t:
                _, _, fn = heapq.heappop(self._arrivals)
                fn()
            sched.tick()
        sched.finalize_outcomes()
        for wp in sched.waiting_pods:
            outcome = sched.outcomes.get(wp.pod.uid)
            if outcome is not None:
                outcome.result = UNSCHEDULABLE
                outcome.message = (
                    f"still waiting at Permit ({', '.join(wp.pending_plugins())}) on "
                    f"{wp.node_name} when the simulation stopped"
                )
        if progress is not None:
            progress(sched.scheduled_pods, total)
        wall = time.perf_counter() - started
        return SimulationResult(
            outcomes=list(sched.outcomes.values()),
            other_scheduler_pods=self.other_scheduler_pods,
            events=self.store.events,
            preemptions=self.store.preemptions,
            simulated_seconds=self.clock.t,
            wall_seconds=wall,
            cycles=sched.cycles,
            nodes=len(self.store.nodes),
            skipped_plugins={k: v for k, v in sched.skipped_defaults.items() if v},
            stopped_early=stopped,
        )

    def close(self) -> None:
        self.scheduler.close()


def outcome_to_dict(outcome: PodOutcome, explain: bool = False) -> dict[str, Any]:
    pod = outcome.pod
    data: dict[str, Any] = {
        "namespace": pod.namespace,
        "name": pod.name,
        "node": outcome.node,
        "result": outcome.result,
        "message": outcome.message,
        "nominatedNode": outcome.nominated_node,
    }
    if explain:
        data["attempts"] = outcome.attempts
        data["cycles"] = [c.to_dict() for c in outcome.cycles]
    return data
