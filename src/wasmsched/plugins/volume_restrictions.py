"""VolumeRestrictions: in-tree disks a node already mounts read-write, and claims with the
ReadWriteOncePod access mode that another pod uses (k8s ``plugins/volumerestrictions``; the
ReadWriteOncePod message is reworded in v1.34).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.framework.batching import VOLUMES_SIGNER, volumes_signature
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.helpers import features_of
from wasmsched.plugins.volume_binding import (
    access_modes,
    name_of,
    namespace_of,
    pvc_not_found,
    storage_for,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult
    from wasmsched.framework.node_info import NodeInfo, PodInfo

NAME = "VolumeRestrictions"
PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
# Since v1.34 (volume_restrictions.go: ErrReasonReadWriteOncePodConflict).
ERR_REASON_RWOP_IN_USE = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

# A disk a pod mounts: (kind, identity, read-only, RBD monitors).
Disk = tuple[str, tuple[str, ...], bool, frozenset[str]]


def _volumes(pod: Pod) -> list[Mapping[str, Any]]:
    vols = pod.spec.get("volumes")
    return [v for v in vols if isinstance(v, Mapping)] if isinstance(vols, list) else []


# Pods never change (a binding makes a new object): their disks are parsed once.
_DISKS: weakref.WeakKeyDictionary[Pod, list[Disk]] = weakref.WeakKeyDictionary()


def pod_disks(pod: Pod) -> list[Disk]:
    """The GCE PD, AWS EBS, iSCSI and RBD volumes of a pod, the kinds that conflict."""
    cached = _DISKS.get(pod)
    if cached is None:
        cached = _DISKS[pod] = _parse_disks(pod)
    return cached


def _parse_disks(pod: Pod) -> list[Disk]:
    out: list[Disk] = []
    for vol in _volumes(pod):
        gce = vol.get("gcePersistentDisk")
        if isinstance(gce, Mapping):
            out.append(("gce", (str(gce.get("pdName") or ""),), bool(gce.get("readOnly")), _NONE))
            continue
        ebs = vol.get("awsElasticBlockStore")
        if isinstance(ebs, Mapping):
            out.append(("ebs", (str(ebs.get("volumeID") or ""),), False, _NONE))
            continue
        iscsi = vol.get("iscsi")
        if isinstance(iscsi, Mapping):
            out.append(
                ("iscsi", (str(iscsi.get("iqn") or ""),), bool(iscsi.get("readOnly")), _NONE)
            )
            continue
        rbd = vol.get("rbd")
        if isinstance(rbd, Mapping):
            monitors = frozenset(str(m) for m in rbd.get("monitors") or ())
            # The API server defaults the pool to "rbd".
            ident = (str(rbd.get("pool") or "rbd"), str(rbd.get("image") or ""))
            out.append(("rbd", ident, bool(rbd.get("readOnly")), monitors))
    return out


_NONE: frozenset[str] = frozenset()


def disks_conflict(wanted: Sequence[Disk], existing: Sequence[Disk]) -> bool:
    """isVolumeConflict: the same GCE PD / iSCSI IQN / RBD image unless both are read-only,
    the same EBS volume always."""
    for kind, ident, read_only, monitors in wanted:
        for ekind, eident, eread_only, emonitors in existing:
            if kind != ekind or ident != eident:
                continue
            if kind == "ebs":
                return True
            if kind == "rbd" and not (monitors & emonitors):
                continue
            if not (read_only and eread_only):
                return True
    return False


def claim_names(pod: Pod) -> list[str]:
    """Names of the pod's persistentVolumeClaim volumes (ephemeral volumes not included)."""
    out = []
    for vol in _volumes(pod):
        claim = vol.get("persistentVolumeClaim")
        if isinstance(claim, Mapping):
            out.append(str(claim.get("claimName") or ""))
    return out


class _PreFilterState:
    __slots__ = ("conflicting_refs", "disks", "rwop_claims")

    def __init__(self, disks: list[Disk], rwop_claims: frozenset[str], refs: int) -> None:
        self.disks = disks
        self.rwop_claims = rwop_claims
        # How many scheduled pods use one of the pod's ReadWriteOncePod claims.
        self.conflicting_refs = refs

    def update_with_pod(self, info: PodInfo, multiplier: int) -> None:
        # As upstream, only the claim name is compared (not the namespace).
        rwop = self.rwop_claims
        if rwop:
            n = sum(1 for name in claim_names(info.pod) if name in rwop)
            self.conflicting_refs += multiplier * n

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.disks, self.rwop_claims, self.conflicting_refs)


class VolumeRestrictions:
    """The VolumeRestrictions plugin (pkg/scheduler/framework/plugins/volumerestrictions/
    volume_restrictions.go: VolumeRestrictions).
    """

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self._skip = Status(Code.SKIP)
        self._disk_conflict = Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
        in_use_message = features_of(handle).rwop_in_use_message
        self._rwop_conflict = Status(
            Code.UNSCHEDULABLE,
            ERR_REASON_RWOP_IN_USE if in_use_message else ERR_REASON_RWOP_CONFLICT,
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (volume_restrictions.go: VolumeRestrictions.PreFilter): the pod's in-tree
        disks and ReadWriteOncePod claims, and how many pods already use those claims.
        """
        if not pod.spec.get("volumes"):
            return None, self._skip  # no volume: no disk and no claim (a DaemonSet pod's)
        disks = pod_disks(pod)
        names = claim_names(pod)
        if not disks and not names:
            return None, self._skip
        rwop: set[str] = set()
        if names:
            storage = storage_for(state, self.handle)
            for name in names:
                pvc = storage.pvc(pod.namespace, name)
                if pvc is None:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, pvc_not_found(name))
                if READ_WRITE_ONCE_POD in access_modes(pvc):
                    rwop.add(name)
        refs = self._claims_in_use(pod.namespace, rwop, nodes) if rwop else 0
        if not disks and refs == 0:
            return None, self._skip
        state.write(PRE_FILTER_KEY, _PreFilterState(disks, frozenset(rwop), refs))
        return None, None

    @staticmethod
    def _claims_in_use(namespace: str, claims: set[str], nodes: Sequence[NodeInfo]) -> int:
        """How many of ``claims`` some scheduled pod uses (the snapshot's IsPVCUsedByPods)."""
        used: set[str] = set()
        for ni in nodes:
            for info in ni.pods:
                p = info.pod
                if p.namespace != namespace:
                    continue
                for name in claim_names(p):
                    if name in claims:
                        used.add(name)
        return len(used)

    def pre_filter_extensions(self) -> VolumeRestrictions:
        """PreFilterExtensions (volume_restrictions.go): the plugin itself (AddPod/RemovePod)."""
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """AddPod (volume_restrictions.go: VolumeRestrictions.AddPod): counts the added pod's
        ReadWriteOncePod claims.
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status(Code.ERROR, f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        s.update_with_pod(pod_info_to_add, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """RemovePod (volume_restrictions.go: VolumeRestrictions.RemovePod): uncounts the removed
        pod's ReadWriteOncePod claims.
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status(Code.ERROR, f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        s.update_with_pod(pod_info_to_remove, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (volume_restrictions.go: VolumeRestrictions.Filter): rejects a node whose pods
        mount one of the pod's disks in a conflicting way, or a ReadWriteOncePod claim in use.
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status(Code.ERROR, f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        if s.disks:
            for info in node_info.pods:
                existing = pod_disks(info.pod)
                if existing and disks_conflict(s.disks, existing):
                    return self._disk_conflict
        if s.conflicting_refs > 0:
            return self._rwop_conflict
        return None

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (volume_restrictions.go, 1.35+): the volumes."""
        return [(VOLUMES_SIGNER, volumes_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (volume_restrictions.go): Pod/Delete, Node/Add and PVC/Add, with
        their queueing hints.
        """
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.DELETE), is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                is_schedulable_after_pvc_added,
            ),
        ]


def is_schedulable_after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """The deleted pod (same namespace) held a conflicting disk or one of the pod's claims."""
    deleted = old_obj
    if deleted is None or deleted.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    wanted = pod_disks(pod)
    if wanted and disks_conflict(wanted, pod_disks(deleted)):
        return QueueingHint.QUEUE
    claims = set(claim_names(pod))
    if claims and any(name in claims for name in claim_names(deleted)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pvc_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterPersistentVolumeClaimAdded (volume_restrictions.go): queue when
    a claim of the pod is created.
    """
    if not isinstance(new_obj, Mapping) or namespace_of(new_obj) != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    if name_of(new_obj) in claim_names(pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: dict[str, Any], handle: Handle) -> VolumeRestrictions:
    """The registry factory (volume_restrictions.go: New); the plugin takes no args."""
    return VolumeRestrictions(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreFilterPlugin = &VolumeRestrictions{}`
    # (pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go).
    _pre_filter: type[PreFilterPlugin] = VolumeRestrictions
    _filter: type[FilterPlugin] = VolumeRestrictions
    _enqueue_extensions: type[EnqueueExtensions] = VolumeRestrictions
