"""The scheduler: queue, frameworks and cache tied together (k8s schedule_one.go).

The same loop serves the simulator and the live mode; they differ in the ``ClusterWriter``
(store or API server) and in the clock. Everything runs on one thread: cluster changes
are fed in through the ``on_*`` handlers between cycles, as informers would.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from wasmsched.cluster.cache import Cache
from wasmsched.config import SchedulerConfig, expand_extension_points
from wasmsched.errors import InternalError
from wasmsched.extenders import (
    MAX_EXTENDER_PRIORITY,
    ExtenderClient,
    ExtenderError,
    apply_ignored_resources,
    build_extenders,
)
from wasmsched.framework import interfaces as fi
from wasmsched.framework.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState
from wasmsched.framework.diagnosis import NO_NODES_AVAILABLE, Diagnosis, FitError
from wasmsched.framework.interfaces import (
    MAX_NODE_SCORE,
    MODE_OVERRIDE,
    Event,
    NominatingInfo,
    Registry,
)
from wasmsched.framework.node_info import NodeInfo, PodInfo, Snapshot
from wasmsched.framework.runtime import (
    BindingPending,
    CycleRecord,
    Framework,
    NodePluginScores,
    PluginObserver,
    PluginScore,
)
from wasmsched.framework.status import Code, Status
from wasmsched.framework.waiting_pods import WaitingPod, WaitingPods
from wasmsched.queue import events as ev
from wasmsched.queue.scheduling_queue import (
    BACKOFF_FLUSH_PERIOD,
    UNSCHEDULABLE_FLUSH_PERIOD,
    SchedulingQueue,
)
from wasmsched.queue.types import QueuedPodInfo

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod

log = logging.getLogger("wasmsched.scheduler")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"


class ClusterWriter(Protocol):
    """What the scheduler writes back (a simulator store or the API server), and its view
    of a pod's latest version.

    A writer may also offer ``bind_async(pod, node_name) -> None``: the binding goes on
    elsewhere and its answer reaches ``Scheduler.complete_binding`` later, on the scheduling
    thread. DefaultBinder uses it when present (and answers ``BindingPending``).
    """

    def current_pod(self, uid: str) -> Pod | None:
        """The pod as the cluster (the informer) has it now; None once it is gone."""
        ...

    def bind(self, pod: Pod, node_name: str) -> Status | None: ...

    def delete_pod(self, pod: Pod, reason: str) -> None: ...

    def set_nominated_node(self, pod: Pod, node_name: str) -> None: ...

    def set_unschedulable(self, pod: Pod, reason: str, message: str) -> None: ...

    def record_event(self, event: Event) -> None: ...

    def extender_bound(self, pod: Pod, node_name: str) -> Status | None:
        """An extender bound the pod: make the binding visible if it is not already."""
        ...


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (k8s numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class PodOutcome:
    """Where a pod stands, for the report."""

    pod: Pod
    profile: str
    result: str = "Pending"
    node: str | None = None
    message: str = ""
    nominated_node: str | None = None
    attempts: int = 0
    scheduled_at: float | None = None
    preempted_by: str | None = None
    cycles: list[CycleRecord] = field(default_factory=list)


@dataclass(slots=True)
class _BindingInFlight:
    """A binding cycle parked while a Bind plugin's asynchronous binding runs."""

    fwk: Framework
    state: CycleState
    info: QueuedPodInfo
    assumed: Pod
    host: str
    outcome: PodOutcome
    pods_to_activate: dict[str, Pod]
    observer: PluginObserver | None
    plugin: str
    started: float


@dataclass
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    top: list[NodePluginScores] = field(default_factory=list)


class SchedulerHandle:
    """framework.Handle for one scheduler; plugins reach the cluster only through this."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self.parallelism = scheduler.config.parallelism

    def snapshot(self) -> Snapshot:
        return self._scheduler.current_snapshot

    def now(self) -> float:
        return self._scheduler.now()

    def record_event(self, event: Event) -> None:
        self._scheduler.writer.record_event(event)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._scheduler.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self._scheduler.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def iterate_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        for wp in self._scheduler.waiting_pods:
            fn(wp)

    def binder(self) -> ClusterWriter:
        return self._scheduler.writer

    # Preemption and other framework-aware plugins use these (framework.Handle's runners).
    def framework_for(self, pod: Pod) -> Framework | None:
        return self._scheduler.frameworks.get(pod.scheduler_name)

    def run_filter_plugins_with_nominated_pods(
        self, fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filters ``pod`` on ``node_info`` counting higher-or-equal priority nominated pods."""
        return self._scheduler._filter_with_nominated(fwk, state, pod, node_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self._scheduler.nominator.pods_for_node(node_name)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self._scheduler.writer.delete_pod(pod, reason)

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        self._scheduler.writer.set_nominated_node(pod, node_name)

    def extenders(self) -> list[ExtenderClient]:
        """The configured extenders (preemption asks those that support it)."""
        return self._scheduler.extenders

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        """Other cluster objects by kind (PodDisruptionBudget, PersistentVolumeClaim, ...).

        The list is shared until that kind changes: callers must not modify it.
        """
        return self._scheduler.object_list(kind)


class Nominator:
    """Pods nominated to nodes by preemption (k8s nominator)."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pod: Pod, node_name: str) -> None:
        self.delete(pod.uid)
        if not node_name:
            return
        self._by_node.setdefault(node_name, {})[pod.uid] = PodInfo(pod)
        self._node_of[pod.uid] = node_name

    def delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is not None:
            pods = self._by_node.get(node)
            if pods is not None:
                pods.pop(uid, None)
                if not pods:
                    del self._by_node[node]

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def pods_for_node(self, node_name: str) -> list[PodInfo]:
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def __bool__(self) -> bool:
        return bool(self._by_node)


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfig,
        registry: Registry,
        writer: ClusterWriter,
        now: Callable[[], float],
        seed: int = 0,
        explain: bool = False,
    ) -> None:
        self.config = config
        self.writer = writer
        self.now = now
        self.rng = random.Random(seed)
        self.explain = explain
        # With explain: the "namespace/name" of the pods to record (None: every pod).
        self.explain_pods: frozenset[str] | None = None
        self.cache = Cache()
        self.current_snapshot = Snapshot()
        self.waiting_pods = WaitingPods()
        self.nominator = Nominator()
        self.handle = SchedulerHandle(self)
        self.outcomes: dict[str, PodOutcome] = {}
        # kind -> "namespace/name" -> manifest, for plugins that read more than pods and nodes
        self.objects: dict[str, dict[str, Mapping[str, Any]]] = {}
        self._object_lists: dict[str, list[Mapping[str, Any]]] = {}
        self.skipped_defaults: dict[str, list[str]] = {}
        # Extenders come first: their ignoredByScheduler resources change NodeResourcesFit's args.
        apply_ignored_resources(config)
        self.extenders: list[ExtenderClient] = build_extenders(config.extenders, config.source)
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            self.frameworks[profile.scheduler_name] = self._build_framework(profile, registry)
        self.queue = SchedulingQueue(
            now,
            self.frameworks,
            float(config.pod_initial_backoff_seconds),
            float(config.pod_max_backoff_seconds),
        )
        self._next_start_node_index = 0
        self._timers: list[tuple[float, int, Callable[[], object]]] = []
        self._timer_seq = itertools.count()
        self._ready_bindings: deque[Callable[[], None]] = deque()
        self._bindings_in_flight: dict[str, _BindingInFlight] = {}
        self._next_backoff_flush: float | None = None
        # Cluster generation seen at each pod's last attempt, to know when to stop.
        self._attempt_generation: dict[str, int] = {}
        self.cluster_generation = 0
        self.cycles = 0
        self.scheduled_pods = 0  # bound by this scheduler, for progress reports

    # --- construction ---------------------------------------------------------------

    def _build_framework(self, profile: Any, registry: Registry) -> Framework:
        plugins: dict[str, Any] = {}

        def instance(name: str) -> Any:
            if name not in plugins:
                wasm_args = profile.wasm_plugins.get(name)
                if wasm_args is not None:
                    plugins[name] = _wasm_plugin(name, wasm_args, self.handle)
                    return plugins[name]
                factory = registry.factories.get(name)
                if factory is None:
                    return None
                plugins[name] = factory(dict(profile.plugin_args.get(name, {})), self.handle)
            return plugins[name]

        skipped: list[str] = []

        def implements(name: str, point: str) -> bool:
            plugin = instance(name)
            if plugin is None:
                if name not in skipped:
                    skipped.append(name)
                return False
            return fi.implements(plugin, point)

        points = expand_extension_points(profile, implements)
        resolved = {
            point: [(instance(name), weight) for name, weight in entries if name in plugins]
            for point, entries in points.items()
        }
        self.skipped_defaults[profile.scheduler_name] = skipped
        enqueue = [p for p in plugins.values() if fi.has_enqueue_extensions(p)]
        fwk = Framework(
            profile.scheduler_name,
            resolved,
            profile.percentage_of_nodes_to_score,
            enqueue,
            self.waiting_pods,
        )
        return fwk

    # --- cluster event handlers (informers) -----------------------------------------------

    def _changed(self) -> None:
        self.cluster_generation += 1

    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self._changed()
        self.queue.on_event(ev.NODE_ADD, None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)
        self._changed()
        self.queue.on_event(ev.ClusterEvent(ev.NODE, _node_update_action(old, new)), old, new)

    def on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node.name)
        self._changed()
        self.queue.on_event(ev.NODE_DELETE, node, None)

    def object_list(self, kind: str) -> list[Mapping[str, Any]]:
        cached = self._object_lists.get(kind)
        if cached is None:
            cached = self._object_lists[kind] = list(self.objects.get(kind, {}).values())
        return cached

    def on_object_add(self, manifest: Mapping[str, Any]) -> None:
        """Any other object (PDB, PVC, PV, StorageClass...); a change may help pending pods."""
        kind = str(manifest.get("kind", ""))
        meta = manifest.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        self.objects.setdefault(kind, {})[key] = manifest
        self._object_lists.pop(kind, None)
        self._changed()
        self.queue.on_event(
            ev.ClusterEvent(_EVENT_RESOURCES.get(kind, kind), ev.ActionType.ADD), None, manifest
        )

    def on_object_delete(self, manifest: Mapping[str, Any]) -> None:
        kind = str(manifest.get("kind", ""))
        meta = manifest.get("metadata") or {}
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        if self.objects.get(kind, {}).pop(key, None) is not None:
            self._object_lists.pop(kind, None)
            self._changed()
            self.queue.on_event(
                ev.ClusterEvent(_EVENT_RESOURCES.get(kind, kind), ev.ActionType.DELETE),
                manifest,
                None,
            )

    def on_pod_add(self, pod: Pod) -> None:
        if pod.node_name:
            self.cache.add_pod(pod)
            self._changed()
            self.queue.on_event(ev.ASSIGNED_POD_ADD, None, pod)
            return
        if pod.is_terminal or pod.deletion_timestamp:
            return
        fwk = self.frameworks.get(pod.scheduler_name)
        if fwk is None:
            return  # another scheduler's pod
        self.outcomes.setdefault(pod.uid, PodOutcome(pod, fwk.profile_name))
        if pod.nominated_node_name:
            self.nominator.add(pod, pod.nominated_node_name)
        self.queue.add(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if new.node_name:
            was_assigned = bool(old.node_name)
            self.cache.add_pod(new)  # confirms an assumed pod
            self._changed()
            self.queue.delete(new)
            if not was_assigned:
                self.queue.on_event(ev.ASSIGNED_POD_ADD, None, new)
            else:
                self.queue.on_event(ev.ClusterEvent(ev.POD, ev.ActionType.UPDATE), old, new)
            return
        outcome = self.outcomes.get(new.uid)
        if outcome is not None:
            outcome.pod = new
            if new.nominated_node_name != old.nominated_node_name:
                # k8s updateNominatedPod: status.nominatedNodeName is the source of truth
                self.nominator.add(new, new.nominated_node_name)
                outcome.nominated_node = new.nominated_node_name or None
            self.queue.update(old, new)

    def on_pod_delete(self, pod: Pod) -> None:
        self.nominator.delete(pod.uid)
        if pod.node_name:
            self.cache.remove_pod(pod)
            self._changed()
            self.queue.on_event(ev.ASSIGNED_POD_DELETE, pod, None)
            return
        # An unassigned pod (possibly assumed and waiting at Permit): k8s rejects the
        # waiting pod; its binding cycle then forgets the assumed copy.
        self.queue.delete(pod)
        wp = self.waiting_pods.get(pod.uid)
        if wp is not None:
            wp.reject("", "pod deleted")

    # --- the loop -------------------------------------------------------------------------

    def schedule_one(self) -> bool:
        """One scheduling cycle (and its binding cycle unless it waits); False when idle."""
        self.run_ready_bindings()
        info = self.queue.pop()
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
        fwk.recorder = record
        if record is not None:
            outcome.cycles.append(record)
        state = CycleState()
        pods_to_activate: dict[str, Pod] = {}
        state.write(PODS_TO_ACTIVATE_KEY, pods_to_activate)
        observer = self.on_attempt_start(fwk, info)
        previous = fwk.observer
        if observer is not None:
            state.record_plugin_metrics = True
            fwk.set_observer(observer)
        try:
            self._scheduling_cycle(fwk, state, info, outcome, pods_to_activate, observer)
        finally:
            fwk.recorder = None
            if observer is not None:
                fwk.set_observer(previous)
        self.run_ready_bindings()
        return True

    # --- hooks and seams for long-running schedulers ------------------------------------------

    def on_attempt_start(self, fwk: Framework, info: QueuedPodInfo) -> PluginObserver | None:
        """A scheduling attempt begins; the observer returned sees its plugin calls.

        The observer is set on ``fwk`` for the scheduling cycle and the binding cycle that
        follows (whenever it runs), and the previous one (usually None) restored in between.
        The base returns None: the framework's own observer, if any, stays.
        """
        return None

    def on_attempt_end(self, fwk: Framework, pod: Pod, outcome: PodOutcome) -> None:
        """An attempt ended: ``outcome.result`` is SCHEDULED, UNSCHEDULABLE or ERROR."""

    def binding_in_flight(self, uid: str) -> bool:
        """Whether a pod's asynchronous binding awaits ``complete_binding``."""
        return uid in self._bindings_in_flight

    @property
    def binds_in_flight(self) -> int:
        return len(self._bindings_in_flight)

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
        p = self._bindings_in_flight.get(uid)
        if p is None or p.host != node_name:
            return False
        del self._bindings_in_flight[uid]
        fwk, state, assumed, host = p.fwk, p.state, p.assumed, p.host
        previous = fwk.observer
        swap = p.observer is not None and p.observer is not previous
        if swap:
            fwk.set_observer(p.observer)
        try:
            if seconds is None:
                seconds = time.perf_counter() - p.started
            failed = status is not None or conflict
            fwk.observe(
                "Bind", p.plugin, status or (Status(Code.ERROR) if failed else None), seconds
            )
            if not failed:
                self._bound(fwk, state, assumed, host, p.outcome, p.pods_to_activate)
            elif conflict:
                fwk.run_reserve_plugins_unreserve(state, assumed, host)
                self.cache.forget_pod(assumed)
                self._forget(fwk, assumed)
                self.queue.on_event(ev.ASSIGNED_POD_DELETE, assumed, None, lambda q: q.uid != uid)
                self.queue.done(uid)
                p.outcome.result = ERROR
                p.outcome.node = None
                p.outcome.message = status.message if status is not None else "binding conflict"
                self.on_attempt_end(fwk, assumed, p.outcome)
            else:
                assert status is not None
                failure = Status(
                    Code.ERROR,
                    f"running Bind plugin {p.plugin!r}: {status.message}",
                    plugin=p.plugin,
                )
                self._binding_failure(fwk, state, p.info, assumed, host, failure, None, p.outcome)
        finally:
            if swap:
                fwk.set_observer(previous)
        return True

    def release_pod(self, uid: str) -> None:
        """Drops what is kept about a pod for the report (its outcome, its last attempt).

        The simulator reports every pod at the end; a scheduler that runs for ever calls
        this when a pod is bound or deleted.
        """
        self.outcomes.pop(uid, None)
        self._attempt_generation.pop(uid, None)

    def _scheduling_cycle(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        outcome: PodOutcome,
        pods_to_activate: dict[str, Pod],
        observer: PluginObserver | None,
    ) -> None:
        pod = info.pod
        try:
            result = self.schedule_pod(fwk, state, pod)
        except FitError as fit:
            nominating: NominatingInfo | None = None
            if fwk.has_post_filter_plugins:
                pf_result, pf_status = fwk.run_post_filter_plugins(
                    state, pod, fit.diagnosis.node_to_status
                )
                if pf_status is not None:
                    fit.diagnosis.post_filter_msg = pf_status.message
                if pf_result is not None:
                    nominating = pf_result.nominating_info
            self._handle_failure(
                fwk, info, Status(Code.UNSCHEDULABLE, str(fit)), fit.diagnosis, nominating, outcome
            )
            return
        except _NoNodes:
            no_nodes = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_AVAILABLE)
            self._handle_failure(
                fwk, info, no_nodes, Diagnosis(), NominatingInfo("", MODE_OVERRIDE), outcome
            )
            return
        except _CycleError as err:
            self._handle_failure(
                fwk, info, err.status, None, NominatingInfo("", MODE_OVERRIDE), outcome
            )
            return

        host = result.suggested_host
        if fwk.recorder is not None:
            fwk.recorder.selected_node = host
        assumed = self.cache.assume_pod(pod, host)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status is not None:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._forget(fwk, assumed)
            failure, diagnosis = self._rejection(host, status)
            self._handle_failure(
                fwk, info, failure, diagnosis, NominatingInfo("", MODE_OVERRIDE), outcome
            )
            return
        permit_status, waits = fwk.run_permit_plugins(state, assumed, host)
        if permit_status is not None and permit_status.code != Code.WAIT:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed)
            self._forget(fwk, assumed)
            failure, diagnosis = self._rejection(host, permit_status)
            self._handle_failure(
                fwk, info, failure, diagnosis, NominatingInfo("", MODE_OVERRIDE), outcome
            )
            return
        if pods_to_activate:
            self.queue.activate(pods_to_activate.values())
            pods_to_activate.clear()

        def continue_binding(wp: WaitingPod | None = None) -> None:
            previous = fwk.observer
            swap = observer is not None and observer is not previous
            if swap:
                fwk.set_observer(observer)
            try:
                self._binding_cycle(
                    fwk, state, info, assumed, host, outcome, wp, pods_to_activate, observer
                )
            finally:
                if swap:
                    fwk.set_observer(previous)

        if permit_status is not None:  # Wait
            now = self.now()
            deadlines = {plugin: now + timeout for plugin, timeout in waits.items()}
            waited = dict(waits)

            def decided(wp: WaitingPod) -> None:
                self.waiting_pods.remove(wp.pod.uid)
                self._ready_bindings.append(lambda: continue_binding(wp))

            wp = WaitingPod(assumed, host, deadlines, decided)
            self.waiting_pods.add(wp)
            self._add_timer(
                min(deadlines.values()),
                lambda: wp.expire(self.now(), lambda p: waited.get(p, 0.0)),
            )
            return
        continue_binding(None)

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
        observer: PluginObserver | None,
    ) -> None:
        record = outcome.cycles[-1] if self.explain and outcome.cycles else None
        fwk.recorder = record
        try:
            status: Status | None = None
            if wp is not None and wp.status is not None and wp.status.code != Code.SUCCESS:
                failure, diagnosis = self._rejection(host, wp.status)
                self._binding_failure(fwk, state, info, assumed, host, failure, diagnosis, outcome)
                return
            status = fwk.run_pre_bind_plugins(state, assumed, host)
            if status is None:
                bound, status = self._extenders_bind(assumed, host)
                if not bound:
                    status = fwk.run_bind_plugins(state, assumed, host)
                    if isinstance(status, BindingPending):
                        # Finished by complete_binding; the pod stays assumed meanwhile.
                        self._bindings_in_flight[assumed.uid] = _BindingInFlight(
                            fwk,
                            state,
                            info,
                            assumed,
                            host,
                            outcome,
                            pods_to_activate,
                            observer,
                            status.plugin,
                            time.perf_counter(),
                        )
                        return
                if status is not None and status.code == Code.SKIP:
                    status = Status(Code.ERROR, "no bind plugin bound the pod (all returned Skip)")
            if status is not None:
                self._binding_failure(fwk, state, info, assumed, host, status, None, outcome)
                return
            self._bound(fwk, state, assumed, host, outcome, pods_to_activate)
        finally:
            fwk.recorder = None

    def _bound(
        self,
        fwk: Framework,
        state: CycleState,
        assumed: Pod,
        host: str,
        outcome: PodOutcome,
        pods_to_activate: dict[str, Pod],
    ) -> None:
        """The end of a successful binding cycle: PostBind, the Scheduled event, done."""
        fwk.run_post_bind_plugins(state, assumed, host)
        self._forget(fwk, assumed)
        outcome.result = SCHEDULED
        self.scheduled_pods += 1
        outcome.node = host
        outcome.message = ""
        outcome.scheduled_at = self.now()
        self.nominator.delete(assumed.uid)
        self.writer.record_event(
            _event(
                self.now(),
                assumed,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
            )
        )
        if pods_to_activate:
            self.queue.activate(pods_to_activate.values())
            pods_to_activate.clear()
        self.queue.done(assumed.uid)
        self.on_attempt_end(fwk, assumed, outcome)

    def _extenders_bind(self, pod: Pod, host: str) -> tuple[bool, Status | None]:
        """An interested binder extender binds instead of the Bind plugins."""
        for extender in self.extenders:
            if not extender.has_bind or not extender.is_interested(pod):
                continue
            try:
                extender.bind(pod, host)
            except ExtenderError as err:
                if extender.ignorable:
                    continue
                return True, Status(Code.ERROR, str(err))
            # The extender wrote the binding to its API server; the simulator's store
            # has to be told (a live writer sees it through its watch).
            return True, self.writer.extender_bound(pod, host)
        return False, None

    def _binding_failure(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        assumed: Pod,
        host: str,
        status: Status,
        diagnosis: Diagnosis | None,
        outcome: PodOutcome,
    ) -> None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        self.cache.forget_pod(assumed)
        self._forget(fwk, assumed)
        # No cluster generation change: the pod was only assumed, never bound.
        uid = assumed.uid
        if status.code in (2, 3, 6):
            self.queue.on_event(ev.ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid)
        else:
            self.queue.on_event(ev.ASSIGNED_POD_DELETE, assumed, None)
        self._handle_failure(
            fwk, info, status, diagnosis, NominatingInfo("", MODE_OVERRIDE), outcome
        )

    def _forget(self, fwk: Framework, pod: Pod) -> None:
        fwk.forget_pod(pod.uid)

    @staticmethod
    def _single_node_diagnosis(host: str, status: Status) -> Diagnosis:
        diagnosis = Diagnosis()
        diagnosis.node_to_status.set(host, status)
        diagnosis.add_plugin_status(status)
        return diagnosis

    def _rejection(self, host: str, status: Status) -> tuple[Status, Diagnosis | None]:
        """A rejection on the chosen node becomes a one-node FitError, as in kube-scheduler."""
        if status.code not in (2, 3, 6):
            return status, None
        diagnosis = self._single_node_diagnosis(host, status)
        return Status(status.code, str(FitError(1, diagnosis)), plugin=status.plugin), diagnosis

    def _handle_failure(
        self,
        fwk: Framework,
        info: QueuedPodInfo,
        status: Status,
        diagnosis: Diagnosis | None,
        nominating: NominatingInfo | None,
        outcome: PodOutcome,
    ) -> None:
        pod = info.pod
        rejected = status.code in (2, 3, 6)
        latest = self.writer.current_pod(pod.uid)
        if latest is None or latest.node_name:
            # handleSchedulingFailure: a pod gone meanwhile, or bound (by another replica,
            # an extender), is not requeued, and nothing is written about it.
            self._forget(fwk, pod)
            outcome.result = UNSCHEDULABLE if rejected else ERROR
            outcome.node = None
            outcome.message = status.message
            self.queue.done(pod.uid)
            self.on_attempt_end(fwk, pod, outcome)
            return
        # Requeued as the cluster has it now (its latest labels, nomination...).
        info.pod = pod = latest
        if diagnosis is not None and rejected:
            info.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
            info.pending_plugins = set(diagnosis.pending_plugins)
        else:
            info.unschedulable_plugins = set()
            info.pending_plugins = set()
        message = status.message
        self._forget(fwk, pod)
        outcome.result = UNSCHEDULABLE if rejected else ERROR
        outcome.node = None
        outcome.message = message
        self.queue.add_unschedulable(info)
        if nominating is not None and nominating.mode == MODE_OVERRIDE:
            self.nominator.add(pod, nominating.nominated_node_name)
            if nominating.nominated_node_name or outcome.nominated_node:
                outcome.nominated_node = nominating.nominated_node_name or None
                self.writer.set_nominated_node(pod, nominating.nominated_node_name)
        self.writer.record_event(
            _event(self.now(), pod, "Warning", "FailedScheduling", "Scheduling", message)
        )
        self.writer.set_unschedulable(
            pod, "Unschedulable" if rejected else "SchedulerError", message
        )
        self.on_attempt_end(fwk, pod, outcome)

    # --- the algorithm ---------------------------------------------------------------------

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod) -> ScheduleResult:
        snapshot = self.current_snapshot = self.cache.snapshot()
        if len(snapshot) == 0:
            raise _NoNodes()
        feasible, diagnosis = self._find_nodes_that_fit(fwk, state, pod, snapshot)
        if not feasible:
            raise FitError(len(snapshot), diagnosis)
        evaluated = diagnosis.evaluated_nodes
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, evaluated, 1)
        priorities = self._prioritize(fwk, state, pod, feasible)
        host = self._select_host(priorities)
        return ScheduleResult(host, evaluated, len(feasible))

    def _find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = snapshot.node_infos
        pre_result, status, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        diagnosis.unschedulable_plugins = set(plugins)
        if status is not None and status.code != Code.SUCCESS:
            if status.code not in (2, 3, 6):
                raise _CycleError(status)
            diagnosis.node_to_status.absent_nodes_status = status
            diagnosis.pre_filter_msg = status.message
            diagnosis.add_plugin_status(status)
            return [], diagnosis

        nominated = pod.nominated_node_name
        if nominated:
            node_info = snapshot.get(nominated)
            if node_info is not None:
                feasible = self._pass_filters(fwk, state, pod, diagnosis, [node_info], all_nodes)
                if feasible:
                    return feasible, diagnosis

        nodes: Sequence[NodeInfo] = all_nodes
        if pre_result is not None and pre_result.node_names is not None:
            names = pre_result.node_names
            nodes = [ni for ni in all_nodes if ni.name in names]
            diagnosis.node_to_status.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",
            )
        feasible = self._pass_filters(fwk, state, pod, diagnosis, nodes, all_nodes)
        if self.extenders and feasible:
            feasible = self._pass_extenders(pod, feasible, diagnosis)
        return feasible, diagnosis

    def _pass_extenders(
        self, pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        """k8s findNodesThatPassExtenders: extenders filter in turn; unresolvable wins."""
        nts = diagnosis.node_to_status
        for extender in self.extenders:
            if not feasible:
                break
            if not extender.has_filter or not extender.is_interested(pod):
                continue
            try:
                feasible, failed, unresolvable = extender.filter(pod, feasible)
            except ExtenderError as err:
                if extender.ignorable:
                    log.info("skipping ignorable extender %s: %s", extender.name, err)
                    continue
                raise _CycleError(Status(Code.ERROR, str(err))) from None
            for node_name, msg in unresolvable.items():
                nts.set(node_name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg))
            for node_name, msg in failed.items():
                if node_name not in unresolvable:
                    nts.set(node_name, Status(Code.UNSCHEDULABLE, msg))
        return feasible

    def _pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
        all_nodes: Sequence[NodeInfo],
    ) -> list[NodeInfo]:
        num_nodes = len(nodes)
        percentage = fwk.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.config.percentage_of_nodes_to_score
        to_find = num_feasible_nodes_to_find(percentage, num_nodes)
        if not fwk.has_score_plugins and not any(
            e.has_filter or e.has_prioritize for e in self.extenders
        ):
            to_find = min(to_find, 1) if num_nodes else 0
        start = self._next_start_node_index
        if not fwk.has_filter_plugins:
            feasible = [nodes[(start + i) % num_nodes] for i in range(min(to_find, num_nodes))]
            self._next_start_node_index = (start + len(feasible)) % max(len(all_nodes), 1)
            diagnosis.evaluated_nodes = len(feasible)
            return feasible
        feasible: list[NodeInfo] = []  # type: ignore[no-redef]
        nts = diagnosis.node_to_status
        run_filters = fwk.run_filter_plugins
        nominator = self.nominator
        processed = 0
        for i in range(num_nodes):
            node_info = nodes[(start + i) % num_nodes]
            processed += 1
            if nominator:
                status = self._filter_with_nominated(fwk, state, pod, node_info)
            else:
                status = run_filters(state, pod, node_info)
            if status is None:
                feasible.append(node_info)
                if len(feasible) >= to_find:
                    break
                continue
            if status.code not in (2, 3, 6):
                self._next_start_node_index = (start + processed) % max(len(all_nodes), 1)
                raise _CycleError(status)
            nts.set(node_info.name, status)
            diagnosis.add_plugin_status(status)
        self._next_start_node_index = (start + processed) % max(len(all_nodes), 1)
        diagnosis.evaluated_nodes = processed
        return feasible

    def _filter_with_nominated(
        self, fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """k8s RunFilterPluginsWithNominatedPods: filter with and without nominated pods."""
        nominated = [
            pi
            for pi in self.nominator.pods_for_node(node_info.name)
            if pi.pod.uid != pod.uid and pi.pod.priority >= pod.priority
        ]
        if not nominated:
            return fwk.run_filter_plugins(state, pod, node_info)
        state_with = state.clone()
        info_with = node_info.clone()
        for pi in nominated:
            info_with.add_pod_info(pi)
            status = fwk.run_pre_filter_extension_add_pod(state_with, pod, pi, info_with)
            if status is not None:
                return status
        status = fwk.run_filter_plugins(state_with, pod, info_with)
        if status is not None:
            return status
        return fwk.run_filter_plugins(state, pod, node_info)

    def _prioritize(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> list[NodePluginScores]:
        prioritizers = [e for e in self.extenders if e.has_prioritize]
        if not fwk.has_score_plugins and not prioritizers:
            return [NodePluginScores(ni.name, [], 1) for ni in nodes]
        status = fwk.run_pre_score_plugins(state, pod, nodes)
        if status is not None:
            raise _CycleError(status)
        scores, status = fwk.run_score_plugins(state, pod, nodes)
        if status is not None:
            raise _CycleError(status)
        if prioritizers:
            self._add_extender_scores(pod, nodes, scores, prioritizers)
        return scores

    def _add_extender_scores(
        self,
        pod: Pod,
        nodes: list[NodeInfo],
        scores: list[NodePluginScores],
        extenders: list[ExtenderClient],
    ) -> None:
        """Extender scores, scaled by weight * MaxNodeScore / MaxExtenderPriority (10)."""
        by_name = {entry.name: entry for entry in scores}
        for extender in extenders:
            if not extender.is_interested(pod):
                continue
            try:
                priorities = extender.prioritize(pod, nodes)
            except ExtenderError as err:
                # kube-scheduler ignores prioritization errors: other scores decide.
                log.info("extender %s prioritize failed: %s", extender.name, err)
                continue
            for node_name, score in priorities:
                entry = by_name.get(node_name)
                if entry is None:
                    continue
                final = score * extender.weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
                entry.scores.append(PluginScore(extender.name, final))
                entry.total_score += final

    def _select_host(self, scores: list[NodePluginScores]) -> str:
        """The highest total; ties broken by reservoir sampling with the seeded generator."""
        best = scores[0]
        count = 1
        for entry in scores[1:]:
            if entry.total_score > best.total_score:
                best = entry
                count = 1
            elif entry.total_score == best.total_score:
                count += 1
                if self.rng.randrange(count) == 0:
                    best = entry
        return best.name

    # --- time --------------------------------------------------------------------------------

    def _add_timer(self, when: float, fn: Callable[[], object]) -> None:
        heapq.heappush(self._timers, (when, next(self._timer_seq), fn))

    def run_ready_bindings(self) -> None:
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
        if self.queue.active_len() or self._ready_bindings or len(self.waiting_pods):
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
        return bool(self._timers)

    def close(self) -> None:
        for fwk in self.frameworks.values():
            fwk.close()
        for extender in self.extenders:
            extender.close()


def _wasm_plugin(name: str, args: Any, handle: SchedulerHandle) -> Any:
    """A WasmPlugin from already validated ``pluginConfig`` args (config.WasmPluginArgs)."""
    from wasmsched.wasm import WasmPlugin, WasmPluginConfig

    config = WasmPluginConfig(
        guest_url=args.guest_url,
        guest_config=args.guest_config,
        log_severity=args.log_severity,
        args=list(args.args),
        call_timeout_ms=args.call_timeout_ms,
        memory_limit_mib=args.memory_limit_mib,
    )
    return WasmPlugin(name, config, handle)


_EVENT_RESOURCES = {
    "PersistentVolume": ev.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": ev.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": ev.STORAGE_CLASS,
    "CSINode": ev.CSI_NODE,
}


def _next_tick(t: float, period: float, strictly_after: bool = False) -> float:
    """The first multiple of ``period`` at or (strictly) after ``t``."""
    ticks = t // period + 1 if strictly_after else -(-t // period)
    return float(ticks * period)


class _NoNodes(InternalError):
    pass


class _CycleError(InternalError):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def _event(now: float, pod: Pod, type_: str, reason: str, action: str, note: str) -> Event:
    return Event.about_pod(now, pod, type_, reason, action, note, "wasmsched")


def _node_update_action(old: Node, new: Node) -> int:
    action = 0
    if old.allocatable != new.allocatable:
        action |= ev.ActionType.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= ev.ActionType.UPDATE_NODE_LABEL
    if old.taints != new.taints or old.unschedulable != new.unschedulable:
        action |= ev.ActionType.UPDATE_NODE_TAINT
    if old.manifest.get("status", {}).get("conditions") != new.manifest.get("status", {}).get(
        "conditions"
    ):
        action |= ev.ActionType.UPDATE_NODE_CONDITION
    if old.annotations != new.annotations:
        action |= ev.ActionType.UPDATE_NODE_ANNOTATION
    return action or ev.ActionType.UPDATE


__all__ = [
    "ERROR",
    "SCHEDULED",
    "UNSCHEDULABLE",
    "ClusterWriter",
    "PodOutcome",
    "Scheduler",
    "num_feasible_nodes_to_find",
]
