"""NodeVolumeLimits: a node must have room for the pod's CSI volumes under each driver's
attach limit, from CSINode ``allocatable.count`` or the node's ``attachable-volumes-csi-*``
allocatable (k8s ``plugins/nodevolumelimits/csi.go``, v1.33). Under VolumeLimitScaling (1.37)
a driver whose CSIDriver sets ``preventPodSchedulingIfMissing`` must also be on the node.

In-tree volumes migrated to CSI (AWS EBS, GCE PD, Azure Disk, Cinder) count against their
CSI driver when the node has a CSINode object, as upstream.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.framework.batching import VOLUMES_SIGNER, volumes_signature
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    CSI_NODE,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.helpers import features_of
from wasmsched.plugins.volume_binding import (
    StorageObjects,
    ephemeral_owner_error,
    name_of,
    namespace_of,
    pod_claims,
    pvc_not_found,
    pvc_volume_name,
    storage_for,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult
    from wasmsched.framework.node_info import NodeInfo

NAME = "NodeVolumeLimits"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
CSI_ATTACH_LIMIT_PREFIX = "csi-"
RESOURCE_NAME_LENGTH_LIMIT = 63
# Upstream draws a random prefix per scheduler; a fixed one keeps simulations reproducible.
VOLUME_ID_PREFIX = "wasmsched"

# In-tree plugin -> (pod volume / PV source field, CSI driver, volume id field)
IN_TREE: dict[str, tuple[str, str, str]] = {
    "kubernetes.io/aws-ebs": ("awsElasticBlockStore", "ebs.csi.aws.com", "volumeID"),
    "kubernetes.io/gce-pd": ("gcePersistentDisk", "pd.csi.storage.gke.io", "pdName"),
    "kubernetes.io/azure-disk": ("azureDisk", "disk.csi.azure.com", "diskURI"),
    "kubernetes.io/cinder": ("cinder", "cinder.csi.openstack.org", "volumeID"),
}
_BY_SOURCE = {
    source: (plugin, driver, id_field) for plugin, (source, driver, id_field) in IN_TREE.items()
}


def csi_attach_limit_key(driver: str) -> str:
    """volumeutil.GetCSIAttachLimitKey: long driver names are cut and suffixed with a hash."""
    prefix = ATTACHABLE_VOLUMES_PREFIX + CSI_ATTACH_LIMIT_PREFIX
    if len(prefix) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return prefix + driver[:23] + digest
    return prefix + driver


def _volume_id(source: Mapping[str, Any], id_field: str) -> str:
    raw = str(source.get(id_field) or "")
    if id_field == "volumeID" and raw.startswith("aws://"):
        raw = raw.rsplit("/", 1)[-1]  # aws://<zone>/<id> -> <id>
    return raw


def _migration_on(csi_node: Mapping[str, Any] | None, plugin: str) -> bool:
    """isCSIMigrationOn: migration of these plugins is GA, so a CSINode is all it takes."""
    return csi_node is not None and plugin in IN_TREE


class _State:
    __slots__ = ("storage",)

    def __init__(self, storage: StorageObjects) -> None:
        self.storage = storage

    def clone(self) -> _State:
        return self


class NodeVolumeLimits:
    """The NodeVolumeLimits plugin (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go:
    CSILimits).
    """

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self._skip = Status(Code.SKIP)
        self._exceeded = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        self._driver_must_be_installed = features_of(handle).volume_limit_scaling

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (csi.go: CSILimits.PreFilter): Skip for a pod without PVC, generic
        ephemeral or in-tree (CSI-migrated) volumes; otherwise shares the cycle's storage index.
        """
        volumes = pod.spec.get("volumes")
        if not isinstance(volumes, list):
            return None, self._skip
        for vol in volumes:
            if not isinstance(vol, Mapping):
                continue
            if (
                vol.get("persistentVolumeClaim") is not None
                or vol.get("ephemeral") is not None
                or any(vol.get(src) is not None for src in _BY_SOURCE)
            ):
                state.write(STATE_KEY, _State(storage_for(state, self.handle)))
                return None, None
        return None, self._skip

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (csi.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (csi.go: CSILimits.Filter): rejects a node where the pod's new CSI volumes
        would exceed a driver's attach limit.
        """
        s: _State | None = state.get(STATE_KEY)
        storage = s.storage if s is not None else StorageObjects.from_handle(self.handle)
        csi_node = storage.csi_nodes.get(node_info.name)
        new_volumes: dict[str, str] = {}
        err, not_found = self.attachable_volumes(storage, pod, csi_node, True, new_volumes)
        if err:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if not_found else Code.ERROR
            return Status(code, err)
        if not new_volumes:
            return None
        if self._driver_must_be_installed:
            for driver in new_volumes.values():
                if not csi_driver_on_node(storage, driver, csi_node):
                    return Status(
                        Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node"
                    )
        limits = volume_limits(node_info, csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for info in node_info.pods:
            err, _ = self.attachable_volumes(storage, info.pod, csi_node, False, attached)
            if err:
                return Status(Code.ERROR, err)
        attached_count: dict[str, int] = {}
        for unique_name, key in attached.items():
            new_volumes.pop(unique_name, None)  # a volume shared with a pod here counts once
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(csi_attach_limit_key(key))
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return self._exceeded
        return None

    def attachable_volumes(
        self,
        storage: StorageObjects,
        pod: Pod,
        csi_node: Mapping[str, Any] | None,
        new_pod: bool,
        result: dict[str, str],
    ) -> tuple[str, bool]:
        """Adds "<driver>/<handle>" -> driver for each CSI volume of the pod;
        returns (error, whether it is a missing claim)."""
        volumes = pod.spec.get("volumes")
        if not isinstance(volumes, list):
            return "", False
        claims = {id(vol): (name, eph) for name, eph, vol in pod_claims(pod)}
        for vol in volumes:
            if not isinstance(vol, Mapping):
                continue
            claim = claims.get(id(vol))
            if claim is None:
                self._inline_volume(vol, csi_node, result)
                continue
            name, ephemeral = claim
            if not name:
                return "PersistentVolumeClaim had no name", False
            pvc = storage.pvc(pod.namespace, name)
            if pvc is None:
                if new_pod:
                    return f"looking up PVC {pod.namespace}/{name}: {pvc_not_found(name)}", True
                continue  # an existing pod's claim may be gone: not counted
            if ephemeral:
                err = ephemeral_owner_error(pod, pvc)
                if err:
                    return err, False
            driver, handle = self.csi_driver_info(storage, csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = driver
        return "", False

    @staticmethod
    def _inline_volume(
        vol: Mapping[str, Any], csi_node: Mapping[str, Any] | None, result: dict[str, str]
    ) -> None:
        """An inline in-tree volume counts when its plugin is migrated to CSI on the node."""
        for source, (plugin, driver, id_field) in _BY_SOURCE.items():
            src = vol.get(source)
            if isinstance(src, Mapping):
                if _migration_on(csi_node, plugin):
                    result[f"{driver}/{_volume_id(src, id_field)}"] = driver
                return

    def csi_driver_info(
        self, storage: StorageObjects, csi_node: Mapping[str, Any] | None, pvc: Mapping[str, Any]
    ) -> tuple[str, str]:
        """(driver, volume handle) of a claim's PV, or guessed from its class when unbound."""
        pv_name = pvc_volume_name(pvc)
        pv = storage.pvs.get(pv_name) if pv_name else None
        if pv is None:
            return self._driver_info_from_class(storage, csi_node, pvc)
        spec = pv.get("spec") or {}
        csi = spec.get("csi")
        if isinstance(csi, Mapping):
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        for source, (plugin, driver, id_field) in _BY_SOURCE.items():
            src = spec.get(source)
            if isinstance(src, Mapping):
                if not _migration_on(csi_node, plugin):
                    return "", ""
                return driver, _volume_id(src, id_field)
        return "", ""

    @staticmethod
    def _driver_info_from_class(
        storage: StorageObjects, csi_node: Mapping[str, Any] | None, pvc: Mapping[str, Any]
    ) -> tuple[str, str]:
        class_name = storage.claim_class(pvc)
        if not class_name:
            return "", ""  # immediate binding: bound before scheduling, not counted here
        sc = storage.classes.get(class_name)
        if sc is None:
            return "", ""
        handle = f"{VOLUME_ID_PREFIX}-{namespace_of(pvc)}/{name_of(pvc)}"
        provisioner = str(sc.get("provisioner") or "")
        in_tree = IN_TREE.get(provisioner)
        if in_tree is not None:
            if not _migration_on(csi_node, provisioner):
                return "", ""
            return in_tree[1], handle
        return provisioner, handle

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (csi.go, 1.35+): the volumes."""
        return [(VOLUMES_SIGNER, volumes_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (csi.go: CSILimits.EventsToRegister): CSINode/Add, Pod/Delete and
        PVC/Add, with their queueing hints.
        """
        return [
            ClusterEventWithHint(ClusterEvent(CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.DELETE), is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(
                ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                is_schedulable_after_pvc_added,
            ),
        ]


def csi_driver_on_node(
    storage: StorageObjects, driver: str, csi_node: Mapping[str, Any] | None
) -> bool:
    """csi.go: checkCSIDriverOnNode: True unless the driver's CSIDriver sets
    spec.preventPodSchedulingIfMissing and the node's CSINode does not list the driver (a
    driver without a CSIDriver object may not be CSI at all, so it passes)."""
    csi_driver = storage.csi_drivers.get(driver)
    if csi_driver is None:
        return True
    spec = csi_driver.get("spec")
    if not isinstance(spec, Mapping) or spec.get("preventPodSchedulingIfMissing") is not True:
        return True
    if csi_node is None:
        return False
    node_spec = csi_node.get("spec")
    drivers = node_spec.get("drivers") if isinstance(node_spec, Mapping) else None
    return any(isinstance(d, Mapping) and d.get("name") == driver for d in drivers or ())


def volume_limits(node_info: NodeInfo, csi_node: Mapping[str, Any] | None) -> dict[str, int]:
    """The CSINode driver counts: v1.33.4 reads no other limit, not the node's
    attachable-volumes-* allocatable (plugins/nodevolumelimits/csi.go: getVolumeLimits)."""
    del node_info  # kept for the callers; the node's allocatable is not a limit
    limits: dict[str, int] = {}
    if csi_node is not None:
        drivers = (csi_node.get("spec") or {}).get("drivers") or ()
        for d in drivers:
            if not isinstance(d, Mapping):
                continue
            allocatable = d.get("allocatable")
            count = allocatable.get("count") if isinstance(allocatable, Mapping) else None
            if isinstance(count, int):
                limits[csi_attach_limit_key(str(d.get("name") or ""))] = count
    return limits


def is_schedulable_after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """A scheduled pod with a claim or a migratable in-tree volume was deleted."""
    deleted = old_obj
    if deleted is None or not deleted.node_name:
        return QueueingHint.QUEUE_SKIP
    volumes = deleted.spec.get("volumes")
    if not isinstance(volumes, list):
        return QueueingHint.QUEUE_SKIP
    for vol in volumes:
        if isinstance(vol, Mapping) and (
            vol.get("persistentVolumeClaim") is not None
            or vol.get("ephemeral") is not None
            or any(vol.get(src) is not None for src in _BY_SOURCE)
        ):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pvc_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterPVCAdded (csi.go): queue when a claim of the pod is created."""
    if not isinstance(new_obj, Mapping) or namespace_of(new_obj) != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    if any(name == name_of(new_obj) for name, _, _ in pod_claims(pod)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: dict[str, Any], handle: Handle) -> NodeVolumeLimits:
    """The registry factory (csi.go: NewCSI); the plugin takes no args."""
    return NodeVolumeLimits(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreFilterPlugin = &NodeVolumeLimits{}`
    # (pkg/scheduler/framework/plugins/nodevolumelimits/csi.go).
    _pre_filter: type[PreFilterPlugin] = NodeVolumeLimits
    _filter: type[FilterPlugin] = NodeVolumeLimits
    _enqueue_extensions: type[EnqueueExtensions] = NodeVolumeLimits
