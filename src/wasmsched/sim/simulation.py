"""The simulation: an in-memory cluster, a simulated clock and the scheduler's loop.

It is a discrete-event loop: nothing sleeps. Time jumps to the next thing that is due
(a backoff expiry, a permit timeout, the unschedulable-pool flush, a traced arrival).
The run ends when every pending pod is bound, or when nothing left can change an
outcome: every pod still pending was last tried against the current cluster state.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from wasmsched.api.admission import admit_pods
from wasmsched.api.dra import (
    DEVICE_CLASS,
    RESOURCE_CLAIM,
    RESOURCE_CLAIM_TEMPLATE,
    RESOURCE_SLICE,
    claims_from_templates,
    released_claim,
)
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.api.resources import Resource
from wasmsched.config import SchedulerConfig
from wasmsched.framework.interfaces import Registry
from wasmsched.framework.records import CycleRecord
from wasmsched.scheduler import UNSCHEDULABLE, PodOutcome, Scheduler
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.clock import SimClock
from wasmsched.sim.devices import DeviceUsage
from wasmsched.sim.result import (
    PREEMPTED,
    RUNNING,
    SKIPPED,
    NodeUsage,
    PodResult,
    SimulationResult,
)
from wasmsched.sim.store import ClusterStore
from wasmsched.sim.workloads import WorkloadControllers

__all__ = [
    "DEFAULT_MAX_CYCLES_PER_POD",
    "DEFAULT_MAX_SIMULATED_SECONDS",
    "ProgressFn",
    "Simulation",
]

# A run that would go on past this much simulated time is cut (a guest that errors on
# every attempt, for instance, would otherwise be retried forever).
DEFAULT_MAX_SIMULATED_SECONDS = 24 * 3600.0
DEFAULT_MAX_CYCLES_PER_POD = 50

ProgressFn = Callable[[int, int], None]


class Simulation:
    """Loads a cluster, schedules every pending pod, reports the outcome.

    ``store`` is the cluster's API server: a driver of the run (a trace replay, capacity)
    writes to it and subscribes to it, schedules its own changes with ``at``, and reads
    the cluster and the scheduler's outcomes through ``pod``, ``node``, ``pods``,
    ``nodes`` and ``outcome``. ``registry`` None is the default registry.
    """

    def __init__(
        self,
        cluster: ClusterObjects,
        config: SchedulerConfig,
        registry: Registry | None = None,
        seed: int = 0,
        explain: bool = False,
        max_simulated_seconds: float = DEFAULT_MAX_SIMULATED_SECONDS,
        explain_pods: frozenset[str] | None = None,
    ) -> None:
        if registry is None:
            registry = default_registry()
        self.clock = SimClock()
        self.store = ClusterStore(
            self.clock, config.features.clearing_nominated_node_name_after_binding
        )
        self.scheduler = Scheduler(config, registry, self.store, self.clock.now, seed, explain)
        self.scheduler.explain_pods = explain_pods
        self.scheduler.nomination_written_after_pop = True
        self.store.add_event_handler(self.scheduler)
        if explain:
            self.store.subscribe(
                on_deleted=self._record_victim, on_nominated=self._record_nomination
            )
        self.cluster = cluster
        self.max_simulated_seconds = max_simulated_seconds
        self._arrivals: list[tuple[float, int, Callable[[], object]]] = []
        self._seq = itertools.count()
        self.other_scheduler_pods: list[Pod] = []
        self._skipped: dict[str, str] = {}  # uid -> why this simulation does not schedule it
        # ResourceClaimTemplates by "namespace/name", for the resourceclaim controller.
        self._templates: dict[str, Mapping[str, Any]] = {}

    # --- what a driver of the run reads ----------------------------------------------------

    def now(self) -> float:
        """Simulated seconds since the start."""
        return self.clock.t

    def pod(self, uid: str) -> Pod | None:
        """The pod as the cluster has it now; None once it is gone."""
        return self.store.pods.get(uid)

    def node(self, name: str) -> Node | None:
        """The node as the cluster has it now."""
        return self.store.nodes.get(name)

    def pods(self) -> Collection[Pod]:
        """Every pod of the cluster now."""
        return self.store.pods.values()

    def nodes(self) -> Collection[Node]:
        """Every node of the cluster now."""
        return self.store.nodes.values()

    def outcome(self, uid: str) -> PodOutcome | None:
        """What the scheduler made of a pod of our profiles so far."""
        return self.scheduler.outcomes.get(uid)

    # --- explain: what the store's writes add to the record of the attempt that made them --

    def _attempt_record(self, uid: str) -> CycleRecord | None:
        outcome = self.scheduler.outcomes.get(uid)
        return outcome.cycles[-1] if outcome is not None and outcome.cycles else None

    def _record_victim(self, victim: Pod, preemptor: str) -> None:
        record = self._attempt_record(self.store.uid_of(preemptor))
        if record is not None:
            record.victims.append(victim.key)

    def _record_nomination(self, pod: Pod, node_name: str) -> None:
        record = self._attempt_record(pod.uid)
        if record is not None:
            record.nominated_node = node_name or None

    # --- the run ---------------------------------------------------------------------------

    def at(self, when: float, fn: Callable[[], object]) -> None:
        """Schedules a cluster change (a traced arrival, a completion) at simulated time."""
        heapq.heappush(self._arrivals, (when, next(self._seq), fn))

    def run(self, progress: ProgressFn | None = None) -> SimulationResult:
        started = time.perf_counter()
        sched, store = self.scheduler, self.store
        workloads = WorkloadControllers(self.cluster.nodes, self.cluster.pods, self.cluster.others)
        # The controllers answer a bound pod (an OrderedReady StatefulSet's next ordinal)
        # and a deleted one (its replacement) with the pods they create.
        store.subscribe(
            on_bound=lambda pod: self._create(workloads.on_pod_bound(pod)),
            on_deleted=lambda pod, _: self._create(workloads.on_pod_deleted(pod)),
        )
        for manifest in [*self.cluster.others, *workloads.objects]:
            sched.on_object_add(manifest)
            if manifest.get("kind") == RESOURCE_CLAIM:
                meta = manifest.get("metadata") or {}
                key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
                store.resource_claims[key] = manifest
        devices = self._device_usage()
        # The resourceclaim controller frees what a deleted or finished pod held.
        store.subscribe(on_deleted=lambda pod, _: self._release_claims(pod))
        # An informer's initial LIST returns the nodes in key order, by name (the API
        # server's storage lists etcd keys in order: storage/etcd3/store.go: GetList), and
        # kube-scheduler's node tree (backend/cache/node_tree.go: addNode) keeps that order.
        for node in sorted(self.cluster.nodes, key=lambda n: n.name):
            store.add_node(node)
        pods = admit_pods([*self.cluster.pods, *workloads.initial_pods()], self.cluster.others)
        self._templates = {
            f"{(t.get('metadata') or {}).get('namespace') or 'default'}/"
            f"{(t.get('metadata') or {}).get('name')}": t
            for t in self.cluster.others
            if t.get("kind") == RESOURCE_CLAIM_TEMPLATE
        }
        pods = [self._with_claims(pod) for pod in pods]
        for pod in pods:
            # A finished pod holds nothing: kube-scheduler's pod informer lists pods with
            # the field selector status.phase!=Succeeded,status.phase!=Failed
            # (pkg/scheduler/scheduler.go: newPodInformer), so its cache never sees one.
            if pod.node_name and not pod.is_terminal:
                store.add_pod(pod)
        for pod in pods:
            if pod.node_name or pod.is_terminal:
                continue
            if pod.scheduler_name not in sched.frameworks:
                self.other_scheduler_pods.append(pod)
            elif pod.deletion_timestamp:
                # pkg/scheduler/schedule_one.go: skipPodSchedule skips a pod being deleted.
                self._skipped[pod.uid] = "being deleted (metadata.deletionTimestamp is set)"
            store.add_pod(pod)  # the event handlers leave those two alone
        total = len(sched.outcomes) + workloads.pods_to_come()
        # The loaded cluster lives as long as the run, and CPython's full collections walk
        # every object it holds, again and again: one took about 40 ms at 5,000 nodes, a
        # third of scheduler_perf's 1,000 DaemonSet pods (benchmarks/README.md). As the
        # live mode does (live/collector.py), it stays out of the collector's sight while
        # the pods are scheduled, and is handed back when the run ends.
        with _frozen_heap():
            stopped = self._schedule_all(progress, total)
        sched.finalize_outcomes()
        for wp in sched.waiting_pods:
            outcome = sched.outcomes.get(wp.pod.uid)
            if outcome is not None:
                outcome.result = UNSCHEDULABLE
                outcome.message = (
                    f"still waiting at Permit ({', '.join(wp.pending_plugins())}) on "
                    f"{wp.node_name} when the simulation stopped"
                )
        for uid, (plugin, host) in sched.binding.waiting_in_pre_bind.items():
            outcome = sched.outcomes.get(uid)
            if outcome is not None:
                outcome.result = UNSCHEDULABLE
                outcome.message = (
                    f"still waiting at PreBind ({plugin}) on {host} when the simulation stopped"
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
            pods=self._pod_results(pods),
            node_usage=self._node_usage(),
            kubernetes_version=str(sched.config.features.version),
            feature_gates=sched.config.features.gates.changed(),
            devices=devices.to_dict() if devices is not None else None,
        )

    def _schedule_all(self, progress: ProgressFn | None, total: int) -> str:
        """Cycles and ticks until nothing is left to do; why it stopped early ("" if not)."""
        sched, store = self.scheduler, self.store
        stopped = ""
        cycles_at_last_tick = -1
        while True:
            # Pods may arrive during the run (a trace): the cap grows with them.
            max_cycles = DEFAULT_MAX_CYCLES_PER_POD * max(len(sched.outcomes), 1)
            while store.deliver_after(sched.schedule_one):
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
            store.deliver_after(sched.tick)
        return stopped

    def add_pod(self, pod: Pod) -> None:
        """A pod created during the run (a traced arrival, a capacity copy): the
        resourceclaim controller makes the claims of its templates, then the scheduler
        sees it."""
        self.store.add_pod(self._with_claims(pod))

    def _device_usage(self) -> DeviceUsage | None:
        """With DeviceClasses in the cluster: the watcher of devices allocated per class
        (the report's device view), started from the claims allocated before the run."""
        classes = [m for m in self.cluster.others if m.get("kind") == DEVICE_CLASS]
        if not classes:
            return None
        slices = [m for m in self.cluster.others if m.get("kind") == RESOURCE_SLICE]
        usage = DeviceUsage(classes, slices, lambda: self.scheduler.cycles, self.now)
        usage.start(list(self.store.resource_claims.values()))
        self.store.subscribe(on_claim=usage.on_claim)
        return usage

    def _create(self, pods: list[Pod]) -> None:
        for pod in pods:
            self.add_pod(pod)

    def _release_claims(self, pod: Pod) -> None:
        """The resourceclaim controller after a pod is gone (controller.go: syncClaim): the
        pod leaves reservedFor; a claim left without consumers is deallocated (when the
        scheduler allocated it: its finalizer); a claim the pod owned is deleted."""
        store = self.store
        for claim in list(store.resource_claims.values()):
            status = claim.get("status") or {}
            reserved = status.get("reservedFor") or []
            remaining = [r for r in reserved if r.get("uid") != pod.uid]
            owned = any(
                ref.get("controller") and ref.get("uid") == pod.uid
                for ref in (claim.get("metadata") or {}).get("ownerReferences") or ()
            )
            if len(remaining) < len(reserved):
                claim = released_claim(claim, remaining)
                store.write_resource_claim(claim)
            if owned and not remaining:
                store.delete_resource_claim(claim)

    def _with_claims(self, pod: Pod) -> Pod:
        """The resourceclaim controller, before the scheduler sees a pending pod: the
        claims from its templates are made and named in its status (api/dra.py)."""
        if pod.node_name or pod.is_terminal or not pod.resource_claims or not self._templates:
            return pod
        pod, claims = claims_from_templates(pod, self._templates)
        for claim in claims:
            self.store.write_resource_claim(claim)
        return pod

    def _node_usage(self) -> list[NodeUsage]:
        """Requested and allocatable per node, counting bound pods only (not assumed ones)."""
        cache = self.scheduler.cache
        # What a pod requests as the release counts it (pod-level requests with the gate).
        pod_level = self.scheduler.config.features.pod_level_resources
        usage: list[NodeUsage] = []
        for name in self.store.nodes:
            info = cache.nodes.get(name)
            if info is None:
                continue
            bound = [pi.pod for pi in info.pods if not cache.is_assumed(pi.pod.uid)]
            requested = Resource()
            for pod in bound:
                requested.add(pod.pod_level_requests if pod_level else pod.requests)
            requested.allowed_pod_number = len(bound)
            names = list(info.allocatable.names())
            names += [n for n in requested.names() if n not in names]
            usage.append(
                NodeUsage(
                    name,
                    {n: info.allocatable.get(n) for n in names},
                    {n: requested.get(n) for n in names},
                    len(bound),
                )
            )
        return usage

    def _pod_results(self, pods: list[Pod]) -> list[PodResult]:
        """Every loaded pod, in input order, with what became of it."""
        outcomes = self.scheduler.outcomes
        preempted = {p.uid: p for p in self.store.preemptions if p.preemptor}
        for p in self.other_scheduler_pods:
            self._skipped[p.uid] = (
                f'schedulerName "{p.scheduler_name}" has no profile here: left to that scheduler'
            )
        results: list[PodResult] = []
        seen: set[str] = set()
        # Loaded pods first, then those that arrived during the run (Simulation.at).
        arrived = [o.pod for o in outcomes.values()] + list(self.store.pods.values())
        for pod in [*pods, *arrived]:
            if pod.uid in seen:
                continue
            seen.add(pod.uid)
            if pod.is_terminal:
                results.append(PodResult(pod, pod.phase, pod.node_name or None))
                continue
            outcome = outcomes.get(pod.uid)
            victim = preempted.get(pod.uid)
            if victim is not None:
                # Deleted by preemption, whether it ran before the run or was bound in it.
                if outcome is not None:
                    outcome.result = PREEMPTED
                    outcome.node = victim.node or None
                    outcome.preempted_by = victim.preemptor
                results.append(
                    PodResult(
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
                results.append(PodResult(pod, SKIPPED, None, skipped))
                continue
            if outcome is not None:
                results.append(
                    PodResult(
                        pod,
                        outcome.result,
                        outcome.node,
                        outcome.message,
                        outcome.nominated_node,
                        outcome.preempted_by,
                        was_pending=True,
                        outcome=outcome,
                        extended_resource_claim=self._extended_resource_claim(pod.uid),
                    )
                )
            else:
                results.append(PodResult(pod, RUNNING, pod.node_name or None))
        return results

    def _extended_resource_claim(self, uid: str) -> dict[str, Any] | None:
        """The pod's status.extendedResourceClaimStatus and its claim (DynamicResources'
        PreBind wrote both), as the run left them."""
        current = self.store.pods.get(uid)
        status = current.status.get("extendedResourceClaimStatus") if current else None
        if not status:
            return None
        key = f"{current.namespace}/{status.get('resourceClaimName')}" if current else ""
        return {"status": status, "claim": self.store.resource_claims.get(key)}

    def close(self) -> None:
        self.scheduler.close()


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """Every object alive now moved to the collector's permanent generation for the block
    (gc.freeze), and back after it; left alone when the caller froze objects itself."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
