"""Trace replay: a workload over simulated time through the real scheduler.

Each pod is created at its arrival time and goes through the same queue, framework,
preemption and binding as in ``simulate``; once bound it runs for its duration (or until
the trace deletes it), then it is deleted, which frees capacity and emits the cluster
events that requeue waiting pods. Nodes may be added, cordoned and deleted on the way
(a deleted node's pods are deleted with it). Nothing sleeps: the simulated clock jumps
from one due thing to the next.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from wasmsched.api.admission import admit_pods
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import SchedulerConfig
from wasmsched.framework.interfaces import Registry
from wasmsched.replay.metrics import ClusterMetrics, median_requests, percentiles, qos_class
from wasmsched.replay.trace import (
    WORKLOAD_KINDS,
    AddNode,
    CordonNode,
    CreateObject,
    DeleteNode,
    DeletePod,
    TraceError,
    TraceEvent,
    sort_events,
)
from wasmsched.sim.devices import pod_devices
from wasmsched.sim.simulation import Simulation
from wasmsched.sim.workloads import WorkloadControllers

# Results of a replayed pod, beside simulate's Scheduled / Unschedulable / Error.
COMPLETED = "Completed"  # ran and was deleted (its duration ended, or the trace deleted it)
RUNNING = "Running"  # bound and still running when the replay ended
DELETED = "Deleted"  # deleted while waiting, or with its node
PREEMPTED = "Preempted"
NOT_CREATED = "NotCreated"  # its arrival is after --until

ProgressFn = Callable[[float, float, int], None]  # (simulated now, end, events so far)


@dataclass
class ReplayPod:
    """One pod of the trace and what happened to it."""

    pod: Pod
    created_at: float | None = None
    scheduled_at: float | None = None
    deleted_at: float | None = None
    node: str | None = None
    result: str = NOT_CREATED
    message: str = ""
    duration: float | None = None
    delete_at: float | None = None
    preempted_by: str | None = None
    # The devices its claims held when it was bound (sim/devices.py: pod_devices).
    devices: list[dict[str, Any]] | None = None

    @property
    def wait_seconds(self) -> float | None:
        if self.created_at is None or self.scheduled_at is None:
            return None
        return round(self.scheduled_at - self.created_at, 6)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "namespace": self.pod.namespace,
            "name": self.pod.name,
            "node": self.node,
            "result": self.result,
            "message": self.message,
            "createdAt": self.created_at,
            "scheduledAt": self.scheduled_at,
            "deletedAt": self.deleted_at,
            "waitSeconds": self.wait_seconds,
        }
        if self.preempted_by:
            data["preemptedBy"] = self.preempted_by
        if self.devices:
            data["devices"] = self.devices
        return data


@dataclass
class ReplayResult:
    """The output of a replay: every pod once, the series, and the summary."""

    pods: list[ReplayPod]
    series: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)
    # With DeviceClasses in the cluster: devices allocated per class over the replay, as
    # simulate's ``devices`` (sim/devices.py: DeviceUsage.to_dict).
    devices: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pods": [p.to_dict() for p in self.pods], "series": self.series}
        if self.devices is not None:
            out["devices"] = self.devices
        out["summary"] = self.summary
        return out


class Replay:
    """Replays trace events on a cluster with one scheduler configuration."""

    def __init__(
        self,
        cluster: ClusterObjects,
        events: Iterable[TraceEvent],
        config: SchedulerConfig,
        registry: Registry,
        *,
        seed: int = 0,
        until: float | None = None,
        expand: Callable[[CreateObject], list[Pod]] | None = None,
    ) -> None:
        # Workloads of the cluster file are created at time 0 like the trace's, so that the
        # replay owns their controllers (their pods are reported, re-created with a node).
        others = [o for o in cluster.others if o.get("kind") not in WORKLOAD_KINDS]
        standing = [CreateObject(0.0, o) for o in cluster.others if o.get("kind") in WORKLOAD_KINDS]
        self.events = sort_events([*standing, *events])
        self.until = until if until is not None else math.inf
        self.expand = expand or self._expand
        self._controllers: list[WorkloadControllers] = []
        # Objects a workload controller needs besides its workload (admission's classes).
        self._context = [o for o in others if o.get("kind") in _CONTEXT_KINDS]
        # Nodes that a trace adds at time 0 are part of the starting cluster.
        start = ClusterObjects(list(cluster.nodes), list(cluster.pods), others)
        later: list[TraceEvent] = []
        for event in self.events:
            if isinstance(event, AddNode) and event.at <= 0:
                start.nodes.append(Node(event.manifest))
            else:
                later.append(event)
        if not start.nodes and not any(isinstance(e, AddNode) for e in later):
            raise TraceError("replay: no nodes: give --cluster or node events in the trace")
        self.sim = Simulation(start, config, registry, seed=seed, max_simulated_seconds=self.until)
        self.store = self.sim.store
        self.pods: dict[str, ReplayPod] = {}  # by namespace/name
        self._order: list[ReplayPod] = []
        self._counts = {"pending": 0, "running": 0, "completed": 0, "failedToSchedule": 0}
        self.preemptions = 0
        self.series: list[dict[str, Any]] = []
        self._events_done = 0
        self._deleting_node = False
        trace_pods: list[Pod] = []
        for pod in start.pods:
            self._track(pod, None, None, at=0.0, running=bool(pod.node_name))
        # Workloads expand once, here, so that every pod is known (and reported) from the
        # start and its generated name is the same when it arrives.
        self._created: dict[int, list[Pod]] = {}
        self._nodes_at_start = list(start.nodes)
        for event in later:
            if isinstance(event, CreateObject):
                pods = self._created[id(event)] = admit_pods(self.expand(event), start.others)
                for pod in pods:
                    trace_pods.append(pod)
                    self._track(pod, event.duration, event.delete_at, at=None)
        self._others = start.others
        self.metrics = ClusterMetrics(median_requests([*start.pods, *trace_pods]))
        for node in start.nodes:
            self.metrics.add_node(node)
        for pod in start.pods:
            if pod.node_name and not pod.is_terminal:
                self.metrics.pod_changed(pod, +1)
        self.store.subscribe(on_bound=self._bound, on_deleted=self._deleted)
        self._schedule(later)

    def _expand(self, event: CreateObject) -> list[Pod]:
        """A Pod, or the pods a workload's controller creates when it appears (as in
        ``simulate``: wasmsched.sim.workloads)."""
        if event.manifest.get("kind") == "Pod":
            return [Pod(event.manifest)]
        wc = WorkloadControllers(self._nodes_at_start, [], [*self._context, event.manifest])
        self._controllers.append(wc)
        return wc.initial_pods()

    # --- bookkeeping --------------------------------------------------------------------

    def _track(
        self,
        pod: Pod,
        duration: float | None,
        delete_at: float | None,
        *,
        at: float | None,
        running: bool = False,
    ) -> ReplayPod:
        if pod.key in self.pods:
            raise TraceError(f"replay: pod {pod.key} is created twice")
        rp = ReplayPod(pod, duration=duration, delete_at=delete_at)
        if at is not None:
            rp.created_at = at
            if running:
                rp.scheduled_at, rp.node, rp.result = None, pod.node_name, RUNNING
                self._counts["running"] += 1
            else:
                rp.result = "Pending"
                self._counts["pending"] += 1
        self.pods[pod.key] = rp
        self._order.append(rp)
        return rp

    def _now(self) -> float:
        return self.sim.now()

    def _sample(self) -> None:
        point = self.metrics.point(self._now(), self._counts)
        if self.series and self.series[-1]["t"] == point["t"]:
            self.series[-1] = point  # several changes at one instant: keep the last state
        else:
            self.series.append(point)

    def _bound(self, pod: Pod) -> None:
        rp = self.pods.get(pod.key)
        if rp is None:
            return
        now = self._now()
        rp.scheduled_at, rp.node, rp.result, rp.message = now, pod.node_name, RUNNING, ""
        if pod.resource_claims or "extendedResourceClaimStatus" in pod.status:
            rp.devices = pod_devices(pod, self.store.resource_claims)
        self._counts["pending"] -= 1
        self._counts["running"] += 1
        self.metrics.pod_changed(pod, +1)
        ends = []
        if rp.duration is not None:
            ends.append(now + rp.duration)
        if rp.delete_at is not None:
            ends.append(max(rp.delete_at, now))
        if ends:
            uid = pod.uid
            self.sim.at(min(ends), lambda: self._finish(uid))
        for wc in self._controllers:  # an OrderedReady StatefulSet's next ordinal
            self._create_now(wc.on_pod_bound(pod), rp)
        self._sample()

    def _create_now(self, pods: list[Pod], like: ReplayPod) -> None:
        """Pods a controller creates during the replay; they run as long as ``like``."""
        for pod in admit_pods(pods, self._others):
            # A StatefulSet's replacement keeps the name: the earlier life stays reported.
            self.pods.pop(pod.key, None)
            self._track(pod, like.duration, None, at=self._now())
            self.sim.add_pod(pod)

    def _deleted(self, pod: Pod, reason: str) -> None:
        rp = self.pods.get(pod.key)
        if rp is None or rp.deleted_at is not None:
            return
        rp.deleted_at = self._now()
        if pod.node_name:
            self._counts["running"] -= 1
            self.metrics.pod_changed(pod, -1)
            if reason:
                rp.result, rp.preempted_by = PREEMPTED, reason
                self.preemptions += 1
            elif self._deleting_node:
                rp.result = DELETED
            else:
                rp.result = COMPLETED
                self._counts["completed"] += 1
        else:
            self._counts["pending"] -= 1
            rp.result = DELETED
        self._sample()

    def _finish(self, uid: str) -> None:
        self.store.remove_pod(uid)

    # --- trace events -------------------------------------------------------------------

    def _schedule(self, events: list[TraceEvent]) -> None:
        for event in events:
            if event.at > self.until:
                continue
            self.sim.at(event.at, self._handler(event))

    def _handler(self, event: TraceEvent) -> Callable[[], None]:
        def run() -> None:
            self._events_done += 1
            self._apply(event)
            self._sample()

        return run

    def _apply(self, event: TraceEvent) -> None:
        store = self.store
        if isinstance(event, CreateObject):
            for pod in self._created.pop(id(event), []):
                rp = self.pods[pod.key]
                rp.created_at = self._now()
                if pod.node_name:  # created bound (a trace of running pods)
                    rp.result, rp.node, rp.scheduled_at = RUNNING, pod.node_name, self._now()
                    self._counts["running"] += 1
                    store.add_pod(pod)
                    self.metrics.pod_changed(pod, +1)
                    self._bound_end(rp)
                else:
                    rp.result = "Pending"
                    self._counts["pending"] += 1
                    self.sim.add_pod(pod)
        elif isinstance(event, DeletePod):
            target = self.pods.get(event.key)
            if target is not None:
                store.remove_pod(target.pod.uid)
        elif isinstance(event, AddNode):
            node = Node(event.manifest)
            store.update_node(node)
            self.metrics.add_node(node)
        elif isinstance(event, CordonNode):
            old = self.sim.node(event.node)
            if old is not None:
                node = _cordoned(old)
                store.update_node(node)
                self.metrics.add_node(node)
        elif isinstance(event, DeleteNode):
            self._deleting_node = True
            try:
                gone = store.remove_node(event.node)
            finally:
                self._deleting_node = False
            self.metrics.remove_node(event.node)
            # The pod garbage collector deleted its pods: their controllers re-create them
            # (all of them are the replay's: the cluster file's workloads too, see above).
            for pod in gone:
                like = self.pods.get(pod.key)
                for wc in self._controllers:
                    replacements = wc.on_pod_deleted(pod)
                    if replacements and like is not None:
                        self._create_now(replacements, like)

    def _bound_end(self, rp: ReplayPod) -> None:
        if rp.duration is not None:
            uid = rp.pod.uid
            self.sim.at(self._now() + rp.duration, lambda: self._finish(uid))

    # --- the run ------------------------------------------------------------------------

    def run(self, progress: ProgressFn | None = None) -> ReplayResult:
        """Runs the replay to the end of the trace (or ``until``) and collects the result."""
        started = time.perf_counter()
        end = (
            self.until
            if math.isfinite(self.until)
            else max((e.at for e in self.events), default=0.0)
        )

        def on_progress(done: int, total: int) -> None:
            if progress is not None:
                progress(self._now(), end, self._events_done)

        self._sample()
        result = self.sim.run(on_progress)
        outcomes = {o.pod.uid: o for o in result.outcomes}
        for rp in self._order:
            if rp.result == "Pending":
                outcome = outcomes.get(rp.pod.uid)
                if outcome is not None and outcome.result in ("Unschedulable", "Error"):
                    rp.result, rp.message = outcome.result, outcome.message
                    self._counts["failedToSchedule"] += 1
        self._sample()
        wall = time.perf_counter() - started
        return ReplayResult(
            self._order,
            self.series,
            self._summary(result.simulated_seconds, wall, result),
            result.devices,
        )

    def _summary(self, simulated: float, wall: float, result: Any) -> dict[str, Any]:
        by_result: dict[str, int] = {}
        for rp in self._order:
            by_result[rp.result] = by_result.get(rp.result, 0) + 1
        waits = [w for rp in self._order if (w := rp.wait_seconds) is not None]
        by_priority: dict[str, list[float]] = {}
        by_qos: dict[str, list[float]] = {}
        for rp in self._order:
            w = rp.wait_seconds
            if w is None:
                continue
            by_priority.setdefault(rp.pod.priority_class_name or str(rp.pod.priority), []).append(w)
            by_qos.setdefault(qos_class(rp.pod), []).append(w)
        peak = {
            name: max((p["allocated"].get(name, 0.0) for p in self.series), default=0.0)
            for name in self.metrics.allocatable
        }
        return {
            "pods": len(self._order),
            "results": dict(sorted(by_result.items())),
            "nodes": len(self.sim.nodes()),
            "preemptions": self.preemptions,
            "schedulingCycles": result.cycles,
            "simulatedSeconds": round(simulated, 3),
            "wallSeconds": round(wall, 3),
            "events": self._events_done,
            "waitSeconds": percentiles(waits),
            "waitSecondsByPriority": {k: percentiles(v) for k, v in sorted(by_priority.items())},
            "waitSecondsByQoS": {k: percentiles(v) for k, v in sorted(by_qos.items())},
            "peakAllocation": peak,
            "stoppedEarly": result.stopped_early or None,
        }


_CONTEXT_KINDS = frozenset({"PriorityClass", "RuntimeClass", "StorageClass"})


def _cordoned(node: Node) -> Node:
    manifest = dict(node.manifest)
    manifest["spec"] = {**(manifest.get("spec") or {}), "unschedulable": True}
    return Node(manifest)
