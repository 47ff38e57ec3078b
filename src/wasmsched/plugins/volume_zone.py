"""VolumeZone: a node must be in the zone and region of the pod's bound PersistentVolumes
(k8s ``plugins/volumezone``, v1.33)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.framework.batching import VOLUMES_SIGNER, volumes_signature
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.volume_binding import (
    WAIT_FOR_FIRST_CONSUMER,
    StorageObjects,
    binding_mode,
    labels_of,
    name_of,
    namespace_of,
    pvc_not_found,
    pvc_volume_name,
    storage_for,
)
from wasmsched.plugins.volume_restrictions import claim_names

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult
    from wasmsched.framework.node_info import NodeInfo

NAME = "VolumeZone"
PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_GA_LABEL = {LABEL_BETA_ZONE: LABEL_ZONE, LABEL_BETA_REGION: LABEL_REGION}

# (PV name, label key, allowed values)
PVTopology = tuple[str, str, frozenset[str]]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """volumehelpers.LabelZonesToSet: "a__b" -> {a, b}; None when a zone is empty."""
    zones = value.split("__")
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: Mapping[str, Any]) -> list[PVTopology]:
    """The zone/region labels of a PV; unparsable values are ignored, as upstream."""
    labels = labels_of(pv)
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(str(value))
        if zones is not None:
            out.append((name_of(pv), key, zones))
    return out


class _State:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies

    def clone(self) -> _State:
        return self


class VolumeZone:
    """The VolumeZone plugin (pkg/scheduler/framework/plugins/volumezone/volume_zone.go:
    VolumeZone).
    """

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self._skip = Status(Code.SKIP)
        self._conflict = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (volume_zone.go: VolumeZone.PreFilter): the zone and region labels of the
        pod's bound PVs (getPVbyPod); Skip when there are none.
        """
        names = claim_names(pod)
        if not names:
            return None, self._skip
        topologies, status = self.pod_pv_topologies(storage_for(state, self.handle), pod, names)
        if status is not None:
            return None, status
        if not topologies:
            return None, self._skip
        state.write(PRE_FILTER_KEY, _State(topologies))
        return None, None

    def pod_pv_topologies(
        self, storage: StorageObjects, pod: Pod, names: Sequence[str]
    ) -> tuple[list[PVTopology], Status | None]:
        """getPVbyPod: the topologies of the PVs bound to the pod's claims."""
        out: list[PVTopology] = []
        for name in names:
            if not name:
                return [], _unresolvable("PersistentVolumeClaim had no name")
            pvc = storage.pvc(pod.namespace, name)
            if pvc is None:
                return [], _unresolvable(pvc_not_found(name))
            pv_name = pvc_volume_name(pvc)
            if not pv_name:
                class_name = storage.claim_class(pvc)
                if not class_name:
                    return [], _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                sc = storage.classes.get(class_name)
                if sc is None:
                    return [], _unresolvable(
                        f'storageclass.storage.k8s.io "{class_name}" not found'
                    )
                if binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER:
                    continue  # not bound yet: VolumeBinding checks the match
                return [], _unresolvable("PersistentVolume had no name")
            pv = storage.pvs.get(pv_name)
            if pv is None:
                return [], _unresolvable(f'persistentvolume "{pv_name}" not found')
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (volume_zone.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (volume_zone.go: VolumeZone.Filter): rejects a node whose zone or region label
        is not among the values a bound PV allows.
        """
        s: _State | None = state.get(PRE_FILTER_KEY)
        if s is None:
            storage = StorageObjects.from_handle(self.handle)
            topologies, status = self.pod_pv_topologies(storage, pod, claim_names(pod))
            if status is not None:
                return status
        else:
            topologies = s.topologies
        labels = node_info.node.labels
        # A node without any topology label is taken as a single-zone cluster's node.
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None
        for _, key, values in topologies:
            value = labels.get(key)
            if value is None:
                value = labels.get(_GA_LABEL.get(key, key))
            if value is None or value not in values:
                return self._conflict
        return None

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (volume_zone.go, 1.35+): the volumes."""
        return [(VOLUMES_SIGNER, volumes_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (volume_zone.go: VolumeZone.EventsToRegister): StorageClass/Add,
        Node Add/UpdateNodeLabel, PVC and PV Add/Update, with their queueing hints.
        """
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(STORAGE_CLASS, ActionType.ADD),
                is_schedulable_after_storage_class_added,
            ),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(PERSISTENT_VOLUME_CLAIM, add_update), is_schedulable_after_pvc_change
            ),
            ClusterEventWithHint(
                ClusterEvent(PERSISTENT_VOLUME, add_update), is_schedulable_after_pv_change
            ),
        ]


def _unresolvable(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


def is_schedulable_after_pvc_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterPersistentVolumeClaimChange (volume_zone.go): queue for a claim of
    the pod.
    """
    if not isinstance(new_obj, Mapping) or namespace_of(new_obj) != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    if name_of(new_obj) in claim_names(pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_storage_class_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Only a WaitForFirstConsumer class can help (binding modes are immutable)."""
    if isinstance(new_obj, Mapping) and new_obj.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pv_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A new PV, or a PV whose zone/region labels changed."""
    if not isinstance(old_obj, Mapping) or not isinstance(new_obj, Mapping):
        return QueueingHint.QUEUE
    if pv_topologies(old_obj) != pv_topologies(new_obj):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: dict[str, Any], handle: Handle) -> VolumeZone:
    """The registry factory (volume_zone.go: New); the plugin takes no args."""
    return VolumeZone(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreFilterPlugin = &VolumeZone{}`
    # (pkg/scheduler/framework/plugins/volumezone/volume_zone.go).
    _pre_filter: type[PreFilterPlugin] = VolumeZone
    _filter: type[FilterPlugin] = VolumeZone
    _enqueue_extensions: type[EnqueueExtensions] = VolumeZone
