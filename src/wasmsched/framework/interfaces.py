"""Plugin protocols, one per extension point, and the values they exchange.

A plugin is any object with a ``name``; it serves an extension point when it has that
point's method (or lists the point in ``extension_points``, which wasm plugins use because
their capabilities are decided by the guest's exports, not by their class). The framework
discovers capabilities once, when a profile is built, never per call.

Every method returns ``None`` for Success so that the hot path allocates nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.extender import Extender
    from wasmsched.framework.node_info import NodeInfo, PodInfo, Snapshot
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.types import ClusterEventWithHint, QueuedPodInfo
    from wasmsched.release.features import SchedulerFeatures

# Extension point names, as in KubeSchedulerConfiguration's plugin sections.
PRE_ENQUEUE = "preEnqueue"
QUEUE_SORT = "queueSort"
PRE_FILTER = "preFilter"
FILTER = "filter"
POST_FILTER = "postFilter"
PRE_SCORE = "preScore"
SCORE = "score"
RESERVE = "reserve"
PERMIT = "permit"
PRE_BIND = "preBind"
BIND = "bind"
POST_BIND = "postBind"

# The method that serves each extension point.
POINT_METHODS: dict[str, str] = {
    PRE_ENQUEUE: "pre_enqueue",
    QUEUE_SORT: "less",
    PRE_FILTER: "pre_filter",
    FILTER: "filter",
    POST_FILTER: "post_filter",
    PRE_SCORE: "pre_score",
    SCORE: "score",
    RESERVE: "reserve",
    PERMIT: "permit",
    PRE_BIND: "pre_bind",
    BIND: "bind",
    POST_BIND: "post_bind",
}

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


def implements(plugin: object, point: str) -> bool:
    """Whether ``plugin`` serves extension ``point``."""
    declared: Iterable[str] | None = getattr(plugin, "extension_points", None)
    if declared is not None:
        return point in declared
    return callable(getattr(plugin, POINT_METHODS[point], None))


def has_enqueue_extensions(plugin: object) -> bool:
    """Whether ``plugin`` registers cluster events (framework.EnqueueExtensions)."""
    return callable(getattr(plugin, "events_to_register", None))


class PreFilterResult:
    """The nodes a PreFilter plugin allows; ``None`` node_names means all nodes."""

    __slots__ = ("node_names",)

    def __init__(self, node_names: Iterable[str] | None = None) -> None:
        self.node_names: frozenset[str] | None = (
            None if node_names is None else frozenset(node_names)
        )

    def all_nodes(self) -> bool:
        """Whether the result allows every node."""
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """Intersection, where None (all nodes) is the identity."""
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)

    def __repr__(self) -> str:
        names = None if self.node_names is None else sorted(self.node_names)
        return f"PreFilterResult({names})"


class NodeScore:
    """A node's score from one plugin; NormalizeScore mutates ``score`` in place."""

    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int) -> None:
        self.name = name
        self.score = score

    def __repr__(self) -> str:
        return f"NodeScore({self.name!r}, {self.score})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeScore):
            return NotImplemented
        return self.name == other.name and self.score == other.score


MODE_NOOP = 0
MODE_OVERRIDE = 1


@dataclass(slots=True)
class NominatingInfo:
    """Where PostFilter nominates the pod (framework.NominatingInfo); MODE_OVERRIDE replaces any earlier nomination."""

    nominated_node_name: str = ""
    mode: int = MODE_NOOP


@dataclass(slots=True)
class PostFilterResult:
    """What a PostFilter plugin answers (framework.PostFilterResult): usually a nomination."""

    nominating_info: NominatingInfo | None = None


class NodeToStatus:
    """Statuses of the nodes a cycle rejected; nodes not recorded get ``absent_nodes_status``."""

    __slots__ = ("absent_nodes_status", "statuses")

    def __init__(self, absent_nodes_status: Status | None = None) -> None:
        self.statuses: dict[str, Status] = {}
        self.absent_nodes_status = absent_nodes_status

    def set(self, node_name: str, status: Status) -> None:
        """Records a node's status."""
        self.statuses[node_name] = status

    def update(self, pairs: Iterable[tuple[str, Status]]) -> None:
        """Records the statuses of many nodes, in order."""
        self.statuses.update(pairs)

    def get(self, node_name: str) -> Status | None:
        """A node's status, or ``absent_nodes_status`` when none was recorded."""
        status = self.statuses.get(node_name)
        return status if status is not None else self.absent_nodes_status

    def explicit(self) -> dict[str, Status]:
        """The statuses recorded node by node."""
        return self.statuses

    def __len__(self) -> int:
        return len(self.statuses)


# --- plugin protocols -------------------------------------------------------------


class Plugin(Protocol):
    """Any plugin: an object with a name (framework.Plugin); what else it serves is found
    by ``implements``."""

    name: str


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    """Decides whether a pod may enter the active queue (framework.PreEnqueuePlugin)."""

    name: str

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """None to admit the pod; a Status keeps it out (gated)."""
        ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    """Orders the active queue (framework.QueueSortPlugin)."""

    name: str

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` is scheduled before ``b``."""
        ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """The cluster events that may make a pod this plugin rejected schedulable."""

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """The events, each with an optional queueing hint."""
        ...


class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state when preemption adds or removes pods."""

    def add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Updates the state as if ``pod_info_to_add`` ran on ``node_info``."""
        ...

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Updates the state as if ``pod_info_to_remove`` left ``node_info``."""
        ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    """Runs once per cycle before Filter (framework.PreFilterPlugin)."""

    name: str

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """(the nodes allowed, or None for all; None or a Status)."""
        ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The plugin's AddPod/RemovePod, or None."""
        ...


@runtime_checkable
class FilterPlugin(Protocol):
    """Rejects nodes that cannot run the pod (framework.FilterPlugin)."""

    name: str

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """None when the pod fits ``node_info``; a rejection or error Status otherwise."""
        ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    """Runs when no node fits, e.g. preemption (framework.PostFilterPlugin)."""

    name: str

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """(a result, usually a nomination; None or a Status)."""
        ...


@runtime_checkable
class PreScorePlugin(Protocol):
    """Runs once per cycle before Score (framework.PreScorePlugin)."""

    name: str

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """None, Skip (do not call this plugin's Score) or an error Status."""
        ...


class ScoreExtensions(Protocol):
    """Normalization of a Score plugin's scores (framework.ScoreExtensions)."""

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Rescales ``scores`` in place into [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
        ...


@runtime_checkable
class ScorePlugin(Protocol):
    """Ranks the feasible nodes (framework.ScorePlugin)."""

    name: str

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """(score, None or an error Status) of the pod on ``node_info``."""
        ...

    def score_extensions(self) -> ScoreExtensions | None:
        """The plugin's NormalizeScore, or None."""
        ...


@runtime_checkable
class ReservePlugin(Protocol):
    """Reserves resources for the chosen node and undoes it on failure (framework.ReservePlugin)."""

    name: str

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """None when reserved; a Status fails the cycle (then Unreserve runs)."""
        ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undoes ``reserve`` (it cannot fail)."""
        ...


@runtime_checkable
class PermitPlugin(Protocol):
    """Allows, rejects or delays the binding (framework.PermitPlugin)."""

    name: str

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """(status, timeout in seconds); the timeout matters only with a Wait status."""
        ...


@runtime_checkable
class PreBindPlugin(Protocol):
    """Prepares the binding, e.g. volumes (framework.PreBindPlugin)."""

    name: str

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """None when ready; a Status fails the binding cycle."""
        ...


@runtime_checkable
class BindPlugin(Protocol):
    """Binds the pod to the node (framework.BindPlugin)."""

    name: str

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """None when bound, Skip to let the next Bind plugin do it, or an error Status."""
        ...


@runtime_checkable
class PostBindPlugin(Protocol):
    """Informed after a successful binding (framework.PostBindPlugin)."""

    name: str

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Called once the pod is bound."""
        ...


# --- what plugins may ask of the scheduler --------------------------------------


@dataclass(slots=True)
class ObjectReference:
    """The object an Event is about (core/v1 ObjectReference)."""

    kind: str = ""
    api_version: str = ""
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""


@dataclass(slots=True)
class Event:
    """A Kubernetes Event as a plugin (or the scheduler) records it."""

    time: float
    regarding: ObjectReference
    related: ObjectReference | None
    type: str
    reason: str
    action: str
    note: str
    reporter: str = ""

    @classmethod
    def about_pod(
        cls, time: float, pod: Pod, type: str, reason: str, action: str, note: str, reporter: str
    ) -> Event:
        """An event regarding ``pod`` with no related object."""
        regarding = ObjectReference("Pod", "v1", pod.name, pod.namespace, pod.uid)
        return cls(time, regarding, None, type, reason, action, note, reporter)

    @classmethod
    def preempted(cls, time: float, victim: Pod, preemptor: str, reporter: str) -> Event:
        """The event a preemption victim gets (``preemptor`` is its ns/name, or "")."""
        note = (
            f"Preempted by pod {preemptor} on node {victim.node_name}" if preemptor else "Preempted"
        )
        return cls.about_pod(time, victim, "Normal", "Preempted", "Preempting", note, reporter)


class WaitingPod(Protocol):
    """A pod held at Permit, as plugins see it (framework.WaitingPod)."""

    pod: Pod

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; it is bound once every waiting plugin has allowed."""
        ...

    def reject(self, plugin: str, message: str) -> None:
        """Rejects the pod: its binding cycle fails with an Unschedulable status."""
        ...

    def pending_plugins(self) -> list[str]:
        """The plugins the pod still waits for."""
        ...


class Binder(Protocol):
    """Where a Bind plugin writes a binding: the simulator's store or the API server."""

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        """Binds ``pod`` to ``node_name``; a Status on failure."""
        ...


@runtime_checkable
class AsyncBinder(Protocol):
    """A binder that binds in the background (the API server's writer).

    ``bind_async`` starts the binding and returns; its answer reaches the scheduler's
    ``complete_binding`` later, on the scheduling thread, as kube-scheduler's binding
    goroutine reports back (pkg/scheduler/schedule_one.go: bindingCycle).
    """

    def bind_async(self, pod: Pod, node_name: str) -> None:
        """Starts binding ``pod`` to ``node_name``; the outcome comes back later."""
        ...


class Handle(Protocol):
    """Everything plugins may use of the scheduler (framework.Handle).

    kube-scheduler's Handle (pkg/scheduler/framework/interface.go) gives plugins the
    snapshot, the waiting pods, the event recorder, the binder, the nominator
    (PodNominator), the framework runners (RunFilterPluginsWithNominatedPods) and the
    extenders; ``objects`` stands for its informer factory (listers of other kinds).
    ``features`` is the release and gates the scheduler follows: kube hands each in-tree
    plugin factory its ``feature.Features`` (plugins/registry.go: NewInTreeRegistry);
    here plugins read it from the handle when they are built.
    """

    parallelism: int
    features: SchedulerFeatures

    def snapshot(self) -> Snapshot:
        """The cluster as the current cycle sees it."""
        ...

    def now(self) -> float:
        """The scheduler's clock (simulated or real), in seconds."""
        ...

    def record_event(self, event: Event) -> None:
        """Records a Kubernetes Event."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod waiting at Permit with that UID, if any."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Rejects a waiting pod; False when none has that UID."""
        ...

    def iterate_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        """Calls ``fn`` on every pod waiting at Permit."""
        ...

    def binder(self) -> Binder:
        """Where bindings are written."""
        ...

    def async_binder(self) -> AsyncBinder | None:
        """The binder's background form when it has one (the live mode's), else None."""
        ...

    def framework_for(self, pod: Pod) -> Framework | None:
        """The framework of the pod's profile (by ``spec.schedulerName``)."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filters ``pod`` on ``node_info`` counting higher-or-equal priority nominated pods."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name`` (by preemption)."""
        ...

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Deletes a pod (a preemption victim); ``reason`` names the preemptor."""
        ...

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        """Writes ``status.nominatedNodeName`` ("" clears it)."""
        ...

    def extenders(self) -> Sequence[Extender]:
        """The configured extenders."""
        ...

    def write_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """Writes a ResourceClaim's new version through the writer (the clientset's
        UpdateStatus in kube); a Status on failure."""
        ...

    def delete_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """Deletes a ResourceClaim through the writer; a Status on failure."""
        ...

    def set_extended_resource_claim_status(
        self, pod: Pod, status: Mapping[str, Any]
    ) -> Status | None:
        """Writes the pod's ``status.extendedResourceClaimStatus`` through the writer."""
        ...

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        """Other cluster objects by kind (PodDisruptionBudget, PersistentVolumeClaim, ...).

        The list is shared until that kind changes: callers must not modify it.
        """
        ...


PluginFactory = Callable[[dict[str, Any], Handle], "Plugin"]
"""Builds a plugin from its ``pluginConfig`` args (possibly empty) and the handle."""


@dataclass
class Registry:
    """Plugin factories by name; the framework builds profiles from it."""

    factories: dict[str, PluginFactory] = field(default_factory=dict)

    def register(self, name: str, factory: PluginFactory) -> None:
        """Adds a factory under ``name``, the name a KubeSchedulerConfiguration enables."""
        if name in self.factories:
            raise ValueError(f"plugin {name!r} is registered twice")
        self.factories[name] = factory

    def __contains__(self, name: object) -> bool:
        return name in self.factories

    def names(self) -> list[str]:
        """The registered plugin names."""
        return list(self.factories)
