"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable, on the node.

Mirrors pkg/scheduler/framework/plugins/volumebinding/volume_binding.go (v1.33): PreFilter sorts
the pod's claims into bound and delayed-binding ones, Filter asks the binder (binder.py) for the
node, Reserve assumes the chosen PVs and PreBind keeps them; the storage helpers the volume
plugins share are in storage.py. Under StorageCapacityScoring (1.37) PreScore and Score rank
the nodes by how full the pod's new volumes would be (``ScoringVolumeBinding``).

What the simulator does not do is said, not silently passed: a claim that would need dynamic
provisioning makes the node UnschedulableAndUnresolvable with a ``wasmsched:`` message.
Static binding of WaitForFirstConsumer claims is simulated: the match chosen at Reserve is
kept by the plugin (the assume cache) and counts as bound for later pods.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.batching import VOLUMES_SIGNER, volumes_signature
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    CSI_DRIVER,
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.helpers import features_of
from wasmsched.plugins.resource_allocation import requested_to_capacity_ratio_score
from wasmsched.plugins.volume_binding.binder import PodVolumes, VolumeBinder
from wasmsched.plugins.volume_binding.storage import (
    ANN_MIGRATED_PLUGINS,
    WAIT_FOR_FIRST_CONSUMER,
    Manifest,
    StorageObjects,
    _meta,
    _spec,
    _status,
    annotations_of,
    binding_mode,
    ephemeral_owner_error,
    name_of,
    namespace_of,
    pod_claims,
    pv_capacity,
    pvc_not_found,
    pvc_request,
    pvc_volume_name,
    storage_for,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.columns import IntArray, NodeRows
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult
    from wasmsched.framework.node_info import NodeInfo

NAME = "VolumeBinding"
STATE_KEY = NAME
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
# v1/defaults.go: SetDefaults_VolumeBindingArgs under StorageCapacityScoring: (utilization,
# score 0..10), preferring the node with the most free capacity.
DEFAULT_SHAPE = ((0, 10), (100, 0))


class _State:
    __slots__ = (
        "all_bound",
        "bound_claims",
        "claims_to_bind",
        "pod_volumes_by_node",
        "storage",
    )

    def __init__(
        self, storage: StorageObjects, bound: list[Manifest], to_bind: list[Manifest]
    ) -> None:
        self.storage = storage
        self.bound_claims = bound
        self.claims_to_bind = to_bind
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.all_bound = False

    def clone(self) -> _State:
        return self  # as upstream: Filter results are shared across clones


class VolumeBinding(VolumeBinder):
    """The VolumeBinding plugin (volume_binding.go: VolumeBinding, New)."""

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self._skip = Status(Code.SKIP)
        # The assume cache: claim key -> PV name chosen at Reserve, and its reverse.
        self._assumed: dict[str, str] = {}
        self._assumed_pvs: dict[str, str] = {}
        self._by_pod: dict[str, list[str]] = {}

    # --- PreFilter ------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (volume_binding.go: VolumeBinding.PreFilter): sorts the pod's claims into
        bound and delayed-binding ones; UnschedulableAndUnresolvable for a missing, lost or
        terminating claim, or an unbound claim with Immediate binding.
        """
        claims = pod_claims(pod)
        if not claims:
            return None, self._skip
        storage = storage_for(state, self.handle)
        found: list[tuple[str, Manifest]] = []
        for name, ephemeral, _ in claims:
            pvc = storage.pvc(pod.namespace, name)
            if pvc is None:
                msg = (
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                    f'"{name}"'
                    if ephemeral
                    else pvc_not_found(name)
                )
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
            if _status(pvc).get("phase") == "Lost":
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{pvc_volume_name(pvc)}"',
                )
            if _meta(pvc).get("deletionTimestamp"):
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f'persistentvolumeclaim "{name}" is being deleted',
                )
            if ephemeral:
                err = ephemeral_owner_error(pod, pvc)
                if err:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, err)
            found.append((f"{pod.namespace}/{name}", pvc))

        bound: list[Manifest] = []
        delayed: list[Manifest] = []
        immediate = False
        for key, pvc in found:
            if self.bound_volume(key, pvc, storage):
                bound.append(pvc)
                continue
            class_name = storage.claim_class(pvc)
            sc = storage.classes.get(class_name) if class_name else None
            delay = sc is not None and binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER
            # A pre-bound claim (volumeName set, not yet bound) counts as immediate.
            if delay and not pvc_volume_name(pvc):
                delayed.append(pvc)
            else:
                immediate = True
        if immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(storage, bound, delayed))
        return None, None

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (volume_binding.go): none."""
        return None

    # --- Filter ---------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (volume_binding.go: VolumeBinding.Filter): the binder's FindPodVolumes for the
        node; its conflict reasons reject the node, its PV matches are kept for Reserve.
        """
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, f'reading "{STATE_KEY}" from cycleState: not found')
        volumes, reasons, err = self.find_pod_volumes(s, pod, node_info)
        if err:
            return Status(Code.ERROR, err)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        if volumes.dynamic_provisions:
            names = ", ".join(name_of(pvc) for pvc in volumes.dynamic_provisions)
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"wasmsched: dynamic provisioning of PersistentVolumeClaim {names} "
                "is not simulated",
            )
        s.pod_volumes_by_node[node_info.name] = volumes
        return None

    # --- Reserve / PreBind ----------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Reserve (volume_binding.go: VolumeBinding.Reserve): assumes the PVs Filter matched on
        ``node_name`` (AssumePodVolumes).
        """
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return None  # PreFilter skipped: the pod has no claim
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is None or not volumes.static_bindings:
            s.all_bound = True
            return None
        assumed: list[str] = []
        for claim_key, pv_name in volumes.static_bindings:
            if claim_key in self._assumed:
                continue
            self._assumed[claim_key] = pv_name
            self._assumed_pvs[pv_name] = claim_key
            assumed.append(claim_key)
        self._by_pod[pod.uid] = assumed
        s.all_bound = False
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve (volume_binding.go: VolumeBinding.Unreserve): reverts the pod's assumed
        bindings (RevertAssumedPodVolumes).
        """
        for claim_key in self._by_pod.pop(pod.uid, ()):
            pv_name = self._assumed.pop(claim_key, None)
            if pv_name is not None:
                self._assumed_pvs.pop(pv_name, None)

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBindPreFlight (1.35+, volume_binding.go): work to do (None) unless every
        claim is bound (Skip); an error for a node without pod volumes."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.all_bound:
            return Status(Code.SKIP)  # as pre_bind: nothing to bind
        if node_name not in s.pod_volumes_by_node:
            return Status(Code.ERROR, f'no pod volume found for node "{node_name}"')
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBind (volume_binding.go: VolumeBinding.PreBind): the assumed bindings stand, as
        the simulator has no PV controller to wait on (BindPodVolumes).
        """
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.all_bound:
            return None
        if node_name not in s.pod_volumes_by_node:
            return Status(Code.ERROR, f'no pod volumes found for node "{node_name}"')
        # The simulator has no PV controller: the assumed bindings stand as made.
        self._by_pod.pop(pod.uid, None)
        return None

    # --- events ---------------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (volume_binding.go, 1.35+): the volumes."""
        return [(VOLUMES_SIGNER, volumes_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (volume_binding.go: VolumeBinding.EventsToRegister): storage
        classes, claims, volumes, nodes, CSI nodes, drivers and capacities.
        """
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(STORAGE_CLASS, add_update), is_schedulable_after_storage_class_change
            ),
            ClusterEventWithHint(
                ClusterEvent(PERSISTENT_VOLUME_CLAIM, add_update), is_schedulable_after_pvc_change
            ),
            ClusterEventWithHint(ClusterEvent(PERSISTENT_VOLUME, add_update)),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(CSI_NODE, add_update), is_schedulable_after_csi_node_change
            ),
            ClusterEventWithHint(ClusterEvent(CSI_DRIVER, ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(CSI_STORAGE_CAPACITY, add_update)),
        ]


def _claim_names(pod: Pod) -> set[str]:
    return {name for name, _, _ in pod_claims(pod)}


def is_schedulable_after_pvc_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A claim of the pod, in its namespace, was added or changed."""
    if not isinstance(new_obj, Mapping) or namespace_of(new_obj) != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if name_of(new_obj) in _claim_names(pod) else QueueingHint.QUEUE_SKIP


def is_schedulable_after_storage_class_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Any new class; an updated one only when its allowedTopologies changed."""
    if not isinstance(old_obj, Mapping) or not isinstance(new_obj, Mapping):
        return QueueingHint.QUEUE
    if old_obj.get("allowedTopologies") != new_obj.get("allowedTopologies"):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_csi_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Any new CSINode; an updated one only when its migrated-plugins annotation changed."""
    if not isinstance(old_obj, Mapping) or not isinstance(new_obj, Mapping):
        return QueueingHint.QUEUE
    if annotations_of(old_obj).get(ANN_MIGRATED_PLUGINS) != annotations_of(new_obj).get(
        ANN_MIGRATED_PLUGINS
    ):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


class ScoringVolumeBinding(VolumeBinding):
    """VolumeBinding with its Score (volume_binding.go: PreScore, Score), built by ``new``
    only under StorageCapacityScoring: before the gate the plugin has no scorer, so its
    PreScore always skips and the simulator leaves it out of the score points.
    """

    def __init__(self, handle: Any, shape: Sequence[tuple[int, int]]) -> None:
        super().__init__(handle)
        # volume_binding.go: New scales the 0..10 shape scores to 0..100
        # (buildScorerFunction in scorer.go, the same curve as RequestedToCapacityRatio).
        self._class_score = requested_to_capacity_ratio_score(shape)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (volume_binding.go: VolumeBinding.PreScore): with a scorer and
        StorageCapacityScoring on, Score runs, for a pod without claims too (kube's
        PreFilter leaves it an empty state: it scores 0 everywhere)."""
        return None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` over the rows for a pod without claims (no PreFilter state): 0 on
        every node; else None, and ``score`` runs node by node."""
        if state.get(STATE_KEY) is not None:
            return None
        return np.zeros(len(rows), np.int64)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (volume_binding.go: VolumeBinding.Score): the storage the pod's new volumes
        take of the node's, per class, through the shape (scorer.go: buildScorerFunction).

        Static bindings are scored by their PVs' capacity; without them, kube scores the
        claims to provision by the node's CSIStorageCapacity. The simulator's Filter
        rejects a node where a claim needs provisioning, so a scored node has none and
        scores 0 then, as kube's empty class map does.
        """
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return 0, None  # PreFilter skipped: the pod has no claim
        volumes = s.pod_volumes_by_node.get(node_info.name)
        if volumes is None or not volumes.static_bindings:
            return 0, None
        storage = s.storage
        by_class: dict[str, list[int]] = {}
        for claim_key, pv_name in volumes.static_bindings:
            pv = storage.pvs[pv_name]
            pvc = storage.pvcs[claim_key]
            # binder.go: BindingInfo.StorageClassName, StorageResource (Quantity.Value
            # rounds up to whole bytes).
            totals = by_class.setdefault(str(_spec(pv).get("storageClassName") or ""), [0, 0])
            totals[0] += math.ceil(pvc_request(pvc))
            totals[1] += math.ceil(pv_capacity(pv))
        return class_resources_score(self._class_score, by_class.values()), None

    def score_extensions(self) -> None:
        """ScoreExtensions (volume_binding.go): none."""
        return None


def class_resources_score(
    class_score: Callable[[int, int], int], classes: Collection[Sequence[int]]
) -> int:
    """scorer.go: buildScorerFunction's node score: the mean of the classes' scores
    (requested, capacity), rounded half away from zero as math.Round; 0 without classes."""
    if not classes:
        return 0
    total = sum(class_score(requested, capacity) for requested, capacity in classes)
    return (2 * total + len(classes)) // (2 * len(classes))


def new(args: dict[str, Any], handle: Handle) -> VolumeBinding:
    """The registry factory (volume_binding.go: New).

    VolumeBindingArgs' bindTimeoutSeconds is accepted and unused: it bounds waiting on the
    PV controller, which the simulator does not have. ``shape`` (defaulted by the config
    loader under StorageCapacityScoring) builds the scorer, only with that gate on.
    """
    if not features_of(handle).storage_capacity_scoring:
        return VolumeBinding(handle)
    # Args built without the config loader get its default (SetDefaults_VolumeBindingArgs).
    shape = [(int(p["utilization"]), int(p["score"])) for p in args.get("shape") or ()]
    return ScoringVolumeBinding(handle, shape or DEFAULT_SHAPE)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import (
        EnqueueExtensions,
        FilterPlugin,
        PreBindPlugin,
        PreFilterPlugin,
        PreScorePlugin,
        ReservePlugin,
        ScorePlugin,
    )

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreFilterPlugin = &VolumeBinding{}`
    # (pkg/scheduler/framework/plugins/volumebinding/volume_binding.go).
    _pre_filter: type[PreFilterPlugin] = VolumeBinding
    _filter: type[FilterPlugin] = VolumeBinding
    _reserve: type[ReservePlugin] = VolumeBinding
    _pre_bind: type[PreBindPlugin] = VolumeBinding
    _enqueue_extensions: type[EnqueueExtensions] = VolumeBinding
    # Under StorageCapacityScoring (1.37) it also serves PreScore and Score.
    _scoring_pre_filter: type[PreFilterPlugin] = ScoringVolumeBinding
    _scoring_filter: type[FilterPlugin] = ScoringVolumeBinding
    _scoring_pre_score: type[PreScorePlugin] = ScoringVolumeBinding
    _scoring_score: type[ScorePlugin] = ScoringVolumeBinding
    _scoring_reserve: type[ReservePlugin] = ScoringVolumeBinding
    _scoring_pre_bind: type[PreBindPlugin] = ScoringVolumeBinding
    _scoring_enqueue_extensions: type[EnqueueExtensions] = ScoringVolumeBinding
