"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable, on the node
(k8s ``plugins/volumebinding``, v1.33).

The module also holds the storage helpers the other volume plugins share (k8s
``component-helpers/storage/volume`` and ``ephemeral``): claim lookup, classes, PV node
affinity and PV matching.

What the simulator does not do is said, not silently passed: a claim that would need dynamic
provisioning makes the node UnschedulableAndUnresolvable with a ``wasmsched:`` message.
Static binding of WaitForFirstConsumer claims is simulated: the match chosen at Reserve is
kept by the plugin (the assume cache) and counts as bound for later pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from wasmsched.api.quantity import QuantityError, parse_quantity
from wasmsched.api.selectors import LabelSelector, NodeSelector, SelectorError
from wasmsched.framework.status import Code, Status
from wasmsched.queue.events import (
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

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult
    from wasmsched.framework.node_info import NodeInfo

NAME = "VolumeBinding"
STATE_KEY = NAME
# Where the volume plugins keep the cycle's StorageObjects (not a kube-scheduler key).
STORAGE_STATE_KEY = "wasmsched/storage-objects"

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
# v1.33.4 pkg/scheduler/framework/plugins/volumebinding/binder.go: ErrReasonNodeConflict
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

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
    return str(_meta(m).get("name") or "")


def namespace_of(m: Manifest) -> str:
    """metadata.namespace, "default" when absent (namespaced kinds only)."""
    return str(_meta(m).get("namespace") or "default")


def labels_of(m: Manifest) -> Mapping[str, str]:
    labels = _meta(m).get("labels")
    return labels if isinstance(labels, Mapping) else _EMPTY


def annotations_of(m: Manifest) -> Mapping[str, str]:
    ann = _meta(m).get("annotations")
    return ann if isinstance(ann, Mapping) else _EMPTY


def pvc_volume_name(pvc: Manifest) -> str:
    return str(_spec(pvc).get("volumeName") or "")


def access_modes(obj: Manifest) -> tuple[str, ...]:
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
    return f'persistentvolumeclaim "{name}" not found'


class StorageObjects:
    """PVCs, PVs, StorageClasses and CSINodes of the cluster, indexed by key."""

    __slots__ = ("_pvs_by_class", "classes", "csi_nodes", "default_class", "pvcs", "pvs")

    def __init__(
        self,
        pvcs: Sequence[Manifest] = (),
        pvs: Sequence[Manifest] = (),
        classes: Sequence[Manifest] = (),
        csi_nodes: Sequence[Manifest] = (),
    ) -> None:
        self.pvcs: dict[str, Manifest] = {f"{namespace_of(m)}/{name_of(m)}": m for m in pvcs}
        self.pvs: dict[str, Manifest] = {name_of(m): m for m in pvs}
        self.classes: dict[str, Manifest] = {name_of(m): m for m in classes}
        self.csi_nodes: dict[str, Manifest] = {name_of(m): m for m in csi_nodes}
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
    def from_handle(cls, handle: Any) -> StorageObjects:
        objects = getattr(handle, "objects", None)
        if objects is None:
            return cls()
        return cls(
            objects("PersistentVolumeClaim"),
            objects("PersistentVolume"),
            objects("StorageClass"),
            objects("CSINode"),
        )

    def clone(self) -> StorageObjects:
        return self  # read-only for the cycle

    def pvc(self, namespace: str, name: str) -> Manifest | None:
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


# --- the plugin ------------------------------------------------------------------------


class PodVolumes:
    """What Filter found for one node: static PV matches and claims to provision."""

    __slots__ = ("dynamic_provisions", "static_bindings")

    def __init__(
        self, static_bindings: list[tuple[str, str]], dynamic_provisions: list[Manifest]
    ) -> None:
        self.static_bindings = static_bindings  # (claim key, pv name)
        self.dynamic_provisions = dynamic_provisions


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


class VolumeBinding:
    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self._skip = Status(Code.SKIP)
        # The assume cache: claim key -> PV name chosen at Reserve, and its reverse.
        self._assumed: dict[str, str] = {}
        self._assumed_pvs: dict[str, str] = {}
        self._by_pod: dict[str, list[str]] = {}

    # --- binding state as the scheduler sees it ----------------------------------------

    def bound_volume(self, key: str, pvc: Manifest) -> str:
        """The PV a claim is fully bound to ("" when not): bind-completed (or phase Bound)
        with a volumeName, or a binding this plugin assumed."""
        assumed = self._assumed.get(key)
        if assumed is not None:
            return assumed
        volume = pvc_volume_name(pvc)
        if volume and (
            ANN_BIND_COMPLETED in annotations_of(pvc) or _status(pvc).get("phase") == "Bound"
        ):
            return volume
        return ""

    # --- PreFilter ------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
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
            if self.bound_volume(key, pvc):
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
        return None

    # --- Filter ---------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
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

    def find_pod_volumes(
        self, s: _State, pod: Pod, node_info: NodeInfo
    ) -> tuple[PodVolumes, list[str], str]:
        """(volumes, conflict reasons, error) as volumeBinder.FindPodVolumes."""
        node_labels = node_info.node.labels
        storage = s.storage
        bound_ok = unbound_ok = sufficient = pvs_found = True
        static: list[tuple[str, str]] = []
        dynamic: list[Manifest] = []

        def result(err: str = "") -> tuple[PodVolumes, list[str], str]:
            reasons = []
            if not err:
                if not bound_ok:
                    reasons.append(ERR_REASON_NODE_CONFLICT)
                if not unbound_ok:
                    reasons.append(ERR_REASON_BIND_CONFLICT)
                if not sufficient:
                    reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
                if not pvs_found:
                    reasons.append(ERR_REASON_PV_NOT_EXIST)
            return PodVolumes(static, dynamic), reasons, err

        for pvc in s.bound_claims:
            key = f"{namespace_of(pvc)}/{name_of(pvc)}"
            pv = storage.pvs.get(self.bound_volume(key, pvc))
            if pv is None:
                pvs_found = False
                break
            if not check_node_affinity(pv, node_labels):
                bound_ok = False
                break
        # Unbound claims are checked even when a bound one failed: both reasons are reported.
        if s.claims_to_bind:
            to_match: list[Manifest] = []
            to_provision: list[Manifest] = []
            for pvc in s.claims_to_bind:
                selected = annotations_of(pvc).get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node_info.name:
                        unbound_ok = False
                        return result()
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if to_match:
                unbound_ok, static, unmatched, err = self.find_matching_volumes(
                    storage, to_match, node_labels
                )
                if err:
                    return result(err)
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, sufficient, dynamic, err = check_volume_provisions(
                    storage, to_provision, node_labels
                )
                if err:
                    return result(err)
        return result()

    def find_matching_volumes(
        self, storage: StorageObjects, claims: list[Manifest], node_labels: Mapping[str, str]
    ) -> tuple[bool, list[tuple[str, str]], list[Manifest], str]:
        """Smallest fitting PV per claim, smallest claims first; (all found, bindings,
        unmatched claims, error)."""
        chosen: set[str] = set()
        bindings: list[tuple[str, str]] = []
        unmatched: list[Manifest] = []
        found_all = True
        for pvc in sorted(claims, key=pvc_request):
            pv, err = self.find_matching_volume(
                storage, pvc, storage.pvs_of_class(storage.claim_class(pvc)), node_labels, chosen
            )
            if err:
                return False, [], [], err
            if pv is None:
                unmatched.append(pvc)
                found_all = False
                continue
            chosen.add(name_of(pv))
            bindings.append((f"{namespace_of(pvc)}/{name_of(pvc)}", name_of(pv)))
        return found_all, bindings, unmatched, ""

    def find_matching_volume(
        self,
        storage: StorageObjects,
        pvc: Manifest,
        pvs: Sequence[Manifest],
        node_labels: Mapping[str, str],
        excluded: set[str],
    ) -> tuple[Manifest | None, str]:
        """volume.FindMatchingVolume on the scheduler path (a node, delayed binding)."""
        requested = pvc_request(pvc)
        requested_class = storage.claim_class(pvc)
        claim_key = f"{namespace_of(pvc)}/{name_of(pvc)}"
        raw_selector = _spec(pvc).get("selector")
        selector: LabelSelector | None = None
        if raw_selector is not None:
            try:
                selector = LabelSelector.from_dict(raw_selector)
            except SelectorError as e:
                return None, f"error creating internal label selector for claim: {claim_key}: {e}"
        claim_mode = _spec(pvc).get("volumeMode") or "Filesystem"
        wanted_modes = access_modes(pvc)
        smallest: Manifest | None = None
        smallest_size = Fraction(0)
        for pv in pvs:
            pv_name = name_of(pv)
            if pv_name in excluded:
                continue
            assumed_for = self._assumed_pvs.get(pv_name)
            if assumed_for is not None:
                bound_here = assumed_for == claim_key
                if not bound_here:
                    continue
            else:
                bound_here = is_volume_bound_to_claim(pv, pvc)
                if _spec(pv).get("claimRef") is not None and not bound_here:
                    continue
            size = pv_capacity(pv)
            if size < requested:
                continue
            if (_spec(pv).get("volumeMode") or "Filesystem") != claim_mode:
                continue
            if _meta(pv).get("deletionTimestamp"):
                continue
            affinity_ok = check_node_affinity(pv, node_labels)
            if bound_here:
                return (pv if affinity_ok else None), ""
            # A PV without status is taken as Available, as the PV controller would make it.
            if (_status(pv).get("phase") or "Available") != "Available":
                continue
            if selector is not None and not selector.matches(labels_of(pv)):
                continue
            if pv_class(pv) != requested_class or not affinity_ok:
                continue
            pv_modes = access_modes(pv)
            if any(m not in pv_modes for m in wanted_modes):
                continue
            if smallest is None or size < smallest_size:
                smallest, smallest_size = pv, size
        return smallest, ""

    # --- Reserve / PreBind ----------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
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
        for claim_key in self._by_pod.pop(pod.uid, ()):
            pv_name = self._assumed.pop(claim_key, None)
            if pv_name is not None:
                self._assumed_pvs.pop(pv_name, None)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.all_bound:
            return None
        if node_name not in s.pod_volumes_by_node:
            return Status(Code.ERROR, f'no pod volumes found for node "{node_name}"')
        # The simulator has no PV controller: the assumed bindings stand as made.
        self._by_pod.pop(pod.uid, None)
        return None

    # --- events ---------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
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


def check_volume_provisions(
    storage: StorageObjects, claims: Sequence[Manifest], node_labels: Mapping[str, str]
) -> tuple[bool, bool, list[Manifest], str]:
    """(provisionable, enough storage, claims to provision, error) as checkVolumeProvisions.

    CSIStorageCapacity is not loaded by the simulator, so capacity always suffices.
    """
    dynamic: list[Manifest] = []
    for pvc in claims:
        class_name = storage.claim_class(pvc)
        if not class_name:
            return False, False, [], f'no class for claim "{namespace_of(pvc)}/{name_of(pvc)}"'
        sc = storage.classes.get(class_name)
        if sc is None:
            return False, False, [], f'failed to find storage class "{class_name}"'
        provisioner = str(sc.get("provisioner") or "")
        if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            return False, True, [], ""
        if not topology_terms_match(sc.get("allowedTopologies"), node_labels):
            return False, True, [], ""
        dynamic.append(pvc)
    return True, True, dynamic, ""


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


def new(args: dict[str, Any], handle: Handle) -> VolumeBinding:
    # bindTimeoutSeconds and shape configure waiting on the PV controller and the
    # VolumeCapacityPriority score (alpha, off): neither applies in the simulator.
    return VolumeBinding(handle)
