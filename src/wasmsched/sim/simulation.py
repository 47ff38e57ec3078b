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
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wasmsched.api.admission import admit_pods
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.api.resources import Resource
from wasmsched.config import SchedulerConfig
from wasmsched.framework.interfaces import Event, Registry
from wasmsched.framework.runtime import CycleRecord
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, PodOutcome, Scheduler
from wasmsched.sim.workloads import WorkloadControllers

log = logging.getLogger("wasmsched.sim.simulation")

# A run that would go on past this much simulated time is cut (a guest that errors on
# every attempt, for instance, would otherwise be retried forever).
DEFAULT_MAX_SIMULATED_SECONDS = 24 * 3600.0
DEFAULT_MAX_CYCLES_PER_POD = 50

# Results of pods the simulation did not schedule (the output contract's extension).
RUNNING = "Running"  # bound before the run and still there at the end
SKIPPED = "Skipped"  # left to another scheduler, or being deleted
PREEMPTED = "Preempted"  # deleted by preemption during the run
TERMINATED = ("Succeeded", "Failed")  # status.phase of a finished pod, reported as it is


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
    uid: str = ""  # the victim's


@dataclass
class PodReport:
    """One pod of the cluster as the output reports it.

    ``was_pending`` tells a pod this simulation had to schedule (its ``outcome`` is the
    scheduler's) from one that was already bound, finished or left to someone else.
    """

    pod: Pod
    result: str
    node: str | None = None
    message: str = ""
    nominated_node: str | None = None
    preempted_by: str | None = None
    was_pending: bool = False
    outcome: PodOutcome | None = None


@dataclass
class NodeReport:
    """A node's utilization at the end of the run: what its bound pods request.

    Amounts are integers: milli-CPU for ``cpu``, bytes for memory and storage, counts for
    ``pods`` and for extended resources. Terminated pods count for nothing.
    """

    name: str
    allocatable: dict[str, int]
    requested: dict[str, int]
    pods: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "allocatable": {k: format_amount(k, v) for k, v in self.allocatable.items()},
            "requested": {k: format_amount(k, v) for k, v in self.requested.items()},
            "pods": self.pods,
        }


_BYTES = ("memory", "ephemeral-storage")
_BINARY_SUFFIXES = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def format_amount(resource: str, amount: int) -> str:
    """A quantity string as Kubernetes writes it: cpu in cores or millicores, bytes with the
    largest binary suffix that divides them exactly, counts as integers."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount and (resource in _BYTES or resource.startswith("hugepages-")):
        for suffix, size in _BINARY_SUFFIXES:
            if amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)


@dataclass
class SimulationResult:
    """What a simulation reports: each pod's outcome, the events and preemptions it
    recorded, and its counters (``summary()`` is ``simulate --output json``'s summary)."""

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
    # Every pod of the cluster, in input order (pending or not).
    pods: list[PodReport] = field(default_factory=list)
    node_reports: list[NodeReport] = field(default_factory=list)

    def to_dict(self, explain: Callable[[PodReport], bool] | None = None) -> dict[str, Any]:
        """``simulate --output json``'s document without its explain-only ``events``
        (docs/output.md); ``explain`` says which pods carry their attempts and cycles."""
        return {
            "pods": [report_to_dict(r, explain is not None and explain(r)) for r in self.pods],
            "nodes": [n.to_dict() for n in self.node_reports],
            "summary": self.summary(),
        }

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
            "totalPods": len(self.pods),
            **{
                key: sum(1 for r in self.pods if r.result == result)
                for key, result in _OTHER_RESULT_KEYS
            },
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


_OTHER_RESULT_KEYS = (
    ("running", RUNNING),
    ("skipped", SKIPPED),
    ("preempted", PREEMPTED),
    ("succeeded", "Succeeded"),
    ("failed", "Failed"),
)


class ClusterStore:
    """The simulator's API server: it holds the objects and queues each change for the
    scheduler, as informers would after a write.

    The simulation delivers the queued changes between scheduling cycles (``deliver``),
    the live mode's rule for its inbox: a write made inside a cycle (a Bind, a preemption
    victim's deletion) reaches the event handlers after that cycle, as kube-scheduler's
    informers call them on their own goroutine (pkg/scheduler/eventhandlers.go).
    """

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.events: list[Event] = []
        self.preemptions: list[Preemption] = []
        self.conditions: dict[str, tuple[str, str]] = {}
        self.scheduler: Scheduler | None = None
        self._inbox: deque[Callable[[Scheduler], None]] = deque()
        self._uid_of: dict[str, str] = {}  # "namespace/name" -> uid, to find a preemptor
        self.workloads: WorkloadControllers | None = None  # their pods react to bind/delete
        # Callbacks for a driver of the run (trace replay, capacity): a pod was bound; a
        # pod was deleted (reason: the preemptor's key, or "" for a plain deletion).
        self.bound_hooks: list[Callable[[Pod], None]] = []
        self.deleted_hooks: list[Callable[[Pod, str], None]] = []

    def _notify(self, change: Callable[[Scheduler], None]) -> None:
        if self.scheduler is not None:
            self._inbox.append(change)

    def deliver(self) -> None:
        """Hands every queued change to the scheduler's event handlers, in order."""
        sched = self.scheduler
        inbox = self._inbox
        while inbox and sched is not None:
            inbox.popleft()(sched)

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
        self._notify(lambda s: s.on_pod_update(current, bound))
        for hook in self.bound_hooks:
            hook(bound)
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
                uid=current.uid,
            )
        )
        self.record_event(Event.preempted(self.clock.now(), current, reason, "wasmsched"))
        record = self._current_record(self._uid_of.get(reason, ""))
        if record is not None:
            record.victims.append(current.key)
        self._notify(lambda s: s.on_pod_delete(current))
        for hook in self.deleted_hooks:
            hook(current, reason)
        for pod in self.workloads.on_pod_deleted(current) if self.workloads else ():
            self.add_pod(pod)

    def _current_record(self, uid: str) -> CycleRecord | None:
        """The explain record of a pod's attempt under way (None when not explained)."""
        outcome = self.scheduler.outcomes.get(uid) if self.scheduler is not None else None
        return outcome.cycles[-1] if outcome is not None and outcome.cycles else None

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        record = self._current_record(pod.uid)
        if record is not None:
            record.nominated_node = node_name or None
        current = self.pods.get(pod.uid)
        if current is None or current.nominated_node_name == node_name:
            return
        updated = current.with_nominated_node_name(node_name)
        self.pods[pod.uid] = updated
        self._notify(lambda s: s.on_pod_update(current, updated))

    def set_unschedulable(self, pod: Pod, reason: str, message: str) -> None:
        self.conditions[pod.uid] = (reason, message)

    def record_event(self, event: Event) -> None:
        self.events.append(event)

    # --- loading --------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        self.nodes[node.name] = node
        self._notify(lambda s: s.on_node_add(node))

    def add_pod(self, pod: Pod) -> None:
        self.pods[pod.uid] = pod
        self._uid_of[pod.key] = pod.uid
        self._notify(lambda s: s.on_pod_add(pod))

    def remove_pod(self, uid: str) -> Pod | None:
        """A plain API deletion (a finished or deleted pod, not a preemption)."""
        current = self.pods.pop(uid, None)
        if current is None:
            return None
        self.conditions.pop(uid, None)
        self._notify(lambda s: s.on_pod_delete(current))
        for hook in self.deleted_hooks:
            hook(current, "")
        return current

    def update_node(self, node: Node) -> None:
        old = self.nodes.get(node.name)
        self.nodes[node.name] = node
        if old is None:
            self._notify(lambda s: s.on_node_add(node))
        else:
            self._notify(lambda s: s.on_node_update(old, node))

    def remove_node(self, name: str) -> list[Pod]:
        """Deletes a node and, as the pod garbage collector would, the pods bound to it."""
        gone = [p for p in self.pods.values() if p.node_name == name]
        for pod in gone:
            self.remove_pod(pod.uid)
        node = self.nodes.pop(name, None)
        if node is not None:
            gone_node = node
            self._notify(lambda s: s.on_node_delete(gone_node))
        return gone


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
        explain_pods: frozenset[str] | None = None,
    ) -> None:
        self.clock = SimClock()
        self.store = ClusterStore(self.clock)
        self.scheduler = Scheduler(config, registry, self.store, self.clock.now, seed, explain)
        self.scheduler.explain_pods = explain_pods
        self.store.scheduler = self.scheduler
        self.cluster = cluster
        self.max_simulated_seconds = max_simulated_seconds
        self._arrivals: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self.other_scheduler_pods: list[Pod] = []
        self._skipped: dict[str, str] = {}  # uid -> why this simulation does not schedule it

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
        # An informer's initial LIST returns the nodes in key order, by name (the API
        # server's storage lists etcd keys in order: storage/etcd3/store.go: GetList), and
        # kube-scheduler's node tree (backend/cache/node_tree.go: addNode) keeps that order.
        for node in sorted(self.cluster.nodes, key=lambda n: n.name):
            self.store.add_node(node)
        pods = admit_pods([*self.cluster.pods, *workloads.initial_pods()], self.cluster.others)
        for pod in pods:
            # A finished pod holds nothing: kube-scheduler's pod informer lists pods with
            # the field selector status.phase!=Succeeded,status.phase!=Failed
            # (pkg/scheduler/scheduler.go: newPodInformer), so its cache never sees one.
            if pod.node_name and not pod.is_terminal:
                self.store.add_pod(pod)
        for pod in pods:
            if pod.node_name or pod.is_terminal:
                continue
            if pod.scheduler_name not in sched.frameworks:
                self.other_scheduler_pods.append(pod)
                self.store.pods[pod.uid] = pod
                continue
            if pod.deletion_timestamp:
                # pkg/scheduler/schedule_one.go: skipPodSchedule skips a pod being deleted.
                self._skipped[pod.uid] = "being deleted (metadata.deletionTimestamp is set)"
                self.store.pods[pod.uid] = pod
                continue
            self.store.add_pod(pod)
        self.store.deliver()
        total = len(sched.outcomes) + workloads.pods_to_come()
        stopped = ""
        cycles_at_last_tick = -1
        while True:
            self.store.deliver()
            # Pods may arrive during the run (a trace): the cap grows with them.
            max_cycles = DEFAULT_MAX_CYCLES_PER_POD * max(len(sched.outcomes), 1)
            while sched.schedule_one():
                self.store.deliver()
                if progress is not None:
                    progress(sched.scheduled_pods, total)
                if sched.cycles >= max_cycles:
                    break
            self.store.deliver()
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
            self.store.deliver()
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
        reports = self._reports(pods)
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
            pods=reports,
            node_reports=self._node_reports(),
        )

    def _node_reports(self) -> list[NodeReport]:
        """Requested and allocatable per node, counting bound pods only (not assumed ones)."""
        cache = self.scheduler.cache
        reports: list[NodeReport] = []
        for name in self.store.nodes:
            info = cache.nodes.get(name)
            if info is None:
                continue
            bound = [pi.pod for pi in info.pods if not cache.is_assumed(pi.pod.uid)]
            requested = Resource()
            for pod in bound:
                requested.add(pod.requests)
            requested.allowed_pod_number = len(bound)
            names = list(info.allocatable.names())
            names += [n for n in requested.names() if n not in names]
            reports.append(
                NodeReport(
                    name,
                    {n: info.allocatable.get(n) for n in names},
                    {n: requested.get(n) for n in names},
                    len(bound),
                )
            )
        return reports

    def _reports(self, pods: list[Pod]) -> list[PodReport]:
        """Every loaded pod, in input order, with what became of it."""
        outcomes = self.scheduler.outcomes
        preempted = {p.uid: p for p in self.store.preemptions if p.preemptor}
        for p in self.other_scheduler_pods:
            self._skipped[p.uid] = (
                f'schedulerName "{p.scheduler_name}" has no profile here: left to that scheduler'
            )
        reports: list[PodReport] = []
        seen: set[str] = set()
        # Loaded pods first, then those that arrived during the run (Simulation.at).
        arrived = [o.pod for o in outcomes.values()] + list(self.store.pods.values())
        for pod in [*pods, *arrived]:
            if pod.uid in seen:
                continue
            seen.add(pod.uid)
            if pod.is_terminal:
                reports.append(PodReport(pod, pod.phase, pod.node_name or None))
                continue
            outcome = outcomes.get(pod.uid)
            victim = preempted.get(pod.uid)
            if victim is not None:
                # Deleted by preemption, whether it ran before the run or was bound in it.
                if outcome is not None:
                    outcome.result = PREEMPTED
                    outcome.node = victim.node or None
                    outcome.preempted_by = victim.preemptor
                reports.append(
                    PodReport(
                        pod,
                        PREEMPTED,
                        victim.node or None,
                        f"preempted by {victim.preemptor} on {victim.node} at "
                        f"{victim.time:.3f} simulated seconds",
                        preempted_by=victim.preemptor,
                        was_pending=outcome is not None,
                        outcome=outcome,
                    )
                )
                continue
            skipped = self._skipped.get(pod.uid)
            if skipped is not None:
                reports.append(PodReport(pod, SKIPPED, None, skipped))
                continue
            if outcome is not None:
                reports.append(
                    PodReport(
                        pod,
                        outcome.result,
                        outcome.node,
                        outcome.message,
                        outcome.nominated_node,
                        outcome.preempted_by,
                        was_pending=True,
                        outcome=outcome,
                    )
                )
            else:
                reports.append(PodReport(pod, RUNNING, pod.node_name or None))
        return reports

    def close(self) -> None:
        self.scheduler.close()


def report_to_dict(report: PodReport, explain: bool = False) -> dict[str, Any]:
    """A pod's entry in the JSON output (docs/output.md)."""
    pod = report.pod
    data: dict[str, Any] = {
        "namespace": pod.namespace,
        "name": pod.name,
        "node": report.node,
        "result": report.result,
        "message": report.message,
        "nominatedNode": report.nominated_node,
        "preemptedBy": report.preempted_by,
        "wasPending": report.was_pending,
    }
    outcome = report.outcome
    if outcome is not None and outcome.rejected_by and report.result == UNSCHEDULABLE:
        data["rejectedBy"] = outcome.rejected_by
    if explain and outcome is not None:
        data["attempts"] = outcome.attempts
        data["cycles"] = [c.to_dict() for c in outcome.cycles]
    return data
