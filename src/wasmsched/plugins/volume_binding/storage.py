"""The storage helpers the volume plugins share: claim lookup, classes, PV node affinity.

Mirrors k8s.io/component-helpers/storage/volume (helpers.go: GetPersistentVolumeClass,
GetPersistentVolumeClaimClass, CheckNodeAffinity; pv_helpers.go), k8s.io/component-helpers/
storage/ephemeral (ephemeral.go: VolumeClaimName, VolumeIsForPod) and
pkg/apis/core/v1/helper/helpers.go: MatchTopologySelectorTerms, over the manifests the cluster
holds. VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits build one
``StorageObjects`` index per cycle and share it through the CycleState.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from wasmsched.api.quantity import QuantityError, parse_quantity
from wasmsched.api.selectors import NodeSelector, SelectorError

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle

# Where the volume plugins keep the cycle's StorageObjects (not a kube-scheduler key).
STORAGE_STATE_KEY = "wasmsched/storage-objects"

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

Manifest = Mapping[str, Any]
_EMPTY: Mapping[str, Any] = {}


# --- manifest access -------------------------------------------------------------------


def _meta(m: Manifest) -> Mapping[str, Any]:
    meta = m.get("metadata")
    return meta if isinstance(meta, Mapping) else _EMPTY


def _spec(m: Manifest) -> Mapping[str, Any]:
    spec = m.get("spec")
    return spec if isinstance(spec, Mapping) else _EMPTY


def _status(m: Manifest) -> Mapping[str, Any]:
    status = m.get("status")
    return status if isinstance(status, Mapping) else _EMPTY


def name_of(m: Manifest) -> str:
    """metadata.name of a manifest ("" when absent)."""
    return str(_meta(m).get("name") or "")


def namespace_of(m: Manifest) -> str:
    """metadata.namespace, "default" when absent (namespaced kinds only)."""
    return str(_meta(m).get("namespace") or "default")


def labels_of(m: Manifest) -> Mapping[str, str]:
    """metadata.labels of a manifest (empty when absent)."""
    labels = _meta(m).get("labels")
    return labels if isinstance(labels, Mapping) else _EMPTY


def annotations_of(m: Manifest) -> Mapping[str, str]:
    """metadata.annotations of a manifest (empty when absent)."""
    ann = _meta(m).get("annotations")
    return ann if isinstance(ann, Mapping) else _EMPTY


def pvc_volume_name(pvc: Manifest) -> str:
    """A claim's spec.volumeName: the PV it is (or is to be) bound to."""
    return str(_spec(pvc).get("volumeName") or "")


def access_modes(obj: Manifest) -> tuple[str, ...]:
    """spec.accessModes of a claim or PV."""
    modes = _spec(obj).get("accessModes")
    return tuple(str(m) for m in modes) if isinstance(modes, list) else ()


def _storage_quantity(resources: Any) -> Fraction:
    if not isinstance(resources, Mapping):
        return Fraction(0)
    raw = resources.get("storage")
    if raw is None:
        return Fraction(0)
    try:
        return parse_quantity(raw)
    except QuantityError:
        return Fraction(0)


def pvc_request(pvc: Manifest) -> Fraction:
    """spec.resources.requests.storage (0 when absent)."""
    resources = _spec(pvc).get("resources")
    requests = resources.get("requests") if isinstance(resources, Mapping) else None
    return _storage_quantity(requests)


def pv_capacity(pv: Manifest) -> Fraction:
    """A PV's spec.capacity.storage (0 when absent or invalid)."""
    return _storage_quantity(_spec(pv).get("capacity"))


def pv_class(pv: Manifest) -> str:
    """GetPersistentVolumeClass: the beta annotation wins over spec.storageClassName."""
    ann = annotations_of(pv).get(ANN_BETA_STORAGE_CLASS)
    if ann is not None:
        return str(ann)
    return str(_spec(pv).get("storageClassName") or "")


def binding_mode(sc: Manifest) -> str:
    """volumeBindingMode, defaulted to Immediate as the API server does."""
    return str(sc.get("volumeBindingMode") or "Immediate")


def check_node_affinity(pv: Manifest, node_labels: Mapping[str, str]) -> bool:
    """volume.CheckNodeAffinity: the PV's required node affinity matches the node's labels
    (match fields see an empty node name, as upstream builds a node from labels only)."""
    affinity = _spec(pv).get("nodeAffinity")
    if not isinstance(affinity, Mapping):
        return True
    required = affinity.get("required")
    if required is None:
        return True
    try:
        selector = NodeSelector.from_dict(required)
    except SelectorError:
        return False
    return selector.matches(node_labels, "")


def topology_terms_match(terms: Any, node_labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match everything; else any term whose
    every expression has the label with one of the values."""
    if not isinstance(terms, list) or not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") if isinstance(term, Mapping) else None
        if not isinstance(exprs, list):
            continue
        ok = True
        for expr in exprs:
            if not isinstance(expr, Mapping):
                ok = False
                break
            value = node_labels.get(str(expr.get("key") or ""))
            values = expr.get("values") or ()
            if value is None or value not in values:
                ok = False
                break
        if ok:
            return True
    return False


def is_volume_bound_to_claim(pv: Manifest, pvc: Manifest) -> bool:
    """IsVolumeBoundToClaim (component-helpers/storage/volume/pv_helpers.go): the PV's
    claimRef names the claim (and its uid, when set).
    """
    ref = _spec(pv).get("claimRef")
    if not isinstance(ref, Mapping):
        return False
    if ref.get("name") != name_of(pvc) or (ref.get("namespace") or "default") != namespace_of(pvc):
        return False
    uid = ref.get("uid")
    return not uid or uid == _meta(pvc).get("uid")


def pod_claims(pod: Pod) -> list[tuple[str, bool, Mapping[str, Any]]]:
    """(claim name, is generic ephemeral, volume) for each volume backed by a claim."""
    out: list[tuple[str, bool, Mapping[str, Any]]] = []
    volumes = pod.spec.get("volumes")
    if not isinstance(volumes, list):
        return out
    for vol in volumes:
        if not isinstance(vol, Mapping):
            continue
        claim = vol.get("persistentVolumeClaim")
        if isinstance(claim, Mapping):
            out.append((str(claim.get("claimName") or ""), False, vol))
        elif vol.get("ephemeral") is not None:
            # ephemeral.VolumeClaimName: <pod name>-<volume name>
            out.append((f"{pod.name}-{vol.get('name') or ''}", True, vol))
    return out


def ephemeral_owner_error(pod: Pod, pvc: Manifest) -> str:
    """ephemeral.VolumeIsForPod: "" when the pod controls the claim, else the error."""
    ns, name = namespace_of(pvc), name_of(pvc)
    if ns != pod.namespace:
        return (
            f"PVC {ns}/{name} was not created for pod {pod.namespace}/{pod.name} "
            "(different namespace)"
        )
    for ref in _meta(pvc).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            if ref.get("uid") == pod.uid:
                return ""
            break
    return f"PVC {ns}/{name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"


def pvc_not_found(name: str) -> str:
    """The API's NotFound message for a claim (apimachinery errors.NewNotFound)."""
    return f'persistentvolumeclaim "{name}" not found'


class StorageObjects:
    """PVCs, PVs, StorageClasses, CSINodes and CSIDrivers of the cluster, indexed by key."""

    __slots__ = (
        "_pvs_by_class",
        "classes",
        "csi_drivers",
        "csi_nodes",
        "default_class",
        "pvcs",
        "pvs",
    )

    def __init__(
        self,
        pvcs: Sequence[Manifest] = (),
        pvs: Sequence[Manifest] = (),
        classes: Sequence[Manifest] = (),
        csi_nodes: Sequence[Manifest] = (),
        csi_drivers: Sequence[Manifest] = (),
    ) -> None:
        self.pvcs: dict[str, Manifest] = {f"{namespace_of(m)}/{name_of(m)}": m for m in pvcs}
        self.pvs: dict[str, Manifest] = {name_of(m): m for m in pvs}
        self.classes: dict[str, Manifest] = {name_of(m): m for m in classes}
        self.csi_nodes: dict[str, Manifest] = {name_of(m): m for m in csi_nodes}
        self.csi_drivers: dict[str, Manifest] = {name_of(m): m for m in csi_drivers}
        self._pvs_by_class: dict[str, list[Manifest]] | None = None
        # The DefaultStorageClass admission plugin: the newest default class wins.
        default: tuple[str, str] | None = None
        for m in classes:
            ann = annotations_of(m)
            if ann.get(ANN_DEFAULT_CLASS) == "true" or ann.get(ANN_BETA_DEFAULT_CLASS) == "true":
                created = str(_meta(m).get("creationTimestamp") or "")
                if default is None or created > default[0]:
                    default = (created, name_of(m))
        self.default_class = default[1] if default is not None else ""

    @classmethod
    def from_handle(cls, handle: Handle | None) -> StorageObjects:
        """The index over the objects the handle's cluster holds (empty without a handle)."""
        if handle is None:
            return cls()
        objects = handle.objects
        return cls(
            objects("PersistentVolumeClaim"),
            objects("PersistentVolume"),
            objects("StorageClass"),
            objects("CSINode"),
            objects("CSIDriver"),
        )

    def clone(self) -> StorageObjects:
        """StateData.Clone: the index is read-only for the cycle, so it is shared."""
        return self  # read-only for the cycle

    def pvc(self, namespace: str, name: str) -> Manifest | None:
        """The claim ``namespace/name`` (the PVC lister's Get), None when absent."""
        return self.pvcs.get(f"{namespace}/{name}")

    def claim_class(self, pvc: Manifest) -> str:
        """GetPersistentVolumeClaimClass, with the default class for a claim that names none
        (what admission would have written into spec.storageClassName)."""
        ann = annotations_of(pvc).get(ANN_BETA_STORAGE_CLASS)
        if ann is not None:
            return str(ann)
        spec = _spec(pvc)
        if "storageClassName" not in spec or spec.get("storageClassName") is None:
            return self.default_class
        return str(spec.get("storageClassName") or "")

    def pvs_of_class(self, class_name: str) -> list[Manifest]:
        """The PVs of a class (binder.go: the PV cache's ListPVs), indexed on first use."""
        by_class = self._pvs_by_class
        if by_class is None:
            by_class = {}
            for pv in self.pvs.values():
                by_class.setdefault(pv_class(pv), []).append(pv)
            self._pvs_by_class = by_class
        return by_class.get(class_name, [])


def storage_for(state: CycleState, handle: Any) -> StorageObjects:
    """The cycle's storage index, built once and shared by the volume plugins."""
    storage: StorageObjects | None = state.get(STORAGE_STATE_KEY)
    if storage is None:
        storage = StorageObjects.from_handle(handle)
        state.write(STORAGE_STATE_KEY, storage)
    return storage
