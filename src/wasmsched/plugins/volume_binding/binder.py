"""VolumeBinding's volume binder: which PVs a node can offer a pod's unbound claims.

Mirrors pkg/scheduler/framework/plugins/volumebinding/binder.go (volumeBinder.FindPodVolumes,
findMatchingVolumes, checkVolumeProvisions, the ErrReason* conflict reasons),
k8s.io/component-helpers/storage/volume/pv_helpers.go: FindMatchingVolume and the assume cache
of volumebinding/assume_cache.go, kept by the plugin itself: the match chosen at Reserve counts
as bound for later pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from wasmsched.api.selectors import LabelSelector, SelectorError
from wasmsched.plugins.volume_binding.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    Manifest,
    StorageObjects,
    _meta,
    _spec,
    _status,
    access_modes,
    annotations_of,
    check_node_affinity,
    is_volume_bound_to_claim,
    labels_of,
    name_of,
    namespace_of,
    pv_capacity,
    pv_class,
    pvc_request,
    pvc_volume_name,
    topology_terms_match,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.plugins.volume_binding.plugin import _State

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
# v1.33.4 pkg/scheduler/framework/plugins/volumebinding/binder.go: ErrReasonNodeConflict
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)


class PodVolumes:
    """What Filter found for one node: static PV matches and claims to provision."""

    __slots__ = ("dynamic_provisions", "static_bindings")

    def __init__(
        self, static_bindings: list[tuple[str, str]], dynamic_provisions: list[Manifest]
    ) -> None:
        self.static_bindings = static_bindings  # (claim key, pv name)
        self.dynamic_provisions = dynamic_provisions


class VolumeBinder:
    """Finding and assuming PVs for a pod's claims (binder.go: volumeBinder).

    The assume cache is set by ``VolumeBinding.__init__``: claim key -> PV name chosen at
    Reserve, its reverse, and the claims each pod assumed.
    """

    _assumed: dict[str, str]
    _assumed_pvs: dict[str, str]
    _by_pod: dict[str, list[str]]

    def bound_volume(self, key: str, pvc: Manifest, storage: StorageObjects) -> str:
        """The PV a claim is fully bound to ("" when not), or a binding this plugin assumed.

        Fully bound is a volumeName with the bind-completed annotation (binder.go:
        isPVCFullyBound). A hand-written status.phase Bound stands for that annotation,
        which the PV controller writes with it (pv_controller.go: bind), but only where
        the controller would have bound the claim (syncUnboundClaim): the named PV exists
        and its claimRef is empty or names this claim (IsVolumeBoundToClaim). A missing
        PV, or one claimed by another claim, leaves the claim unbound.
        """
        assumed = self._assumed.get(key)
        if assumed is not None:
            return assumed
        volume = pvc_volume_name(pvc)
        if not volume:
            return ""
        if ANN_BIND_COMPLETED in annotations_of(pvc):
            return volume
        if _status(pvc).get("phase") != "Bound":
            return ""
        pv = storage.pvs.get(volume)
        if pv is None:
            return ""
        if _spec(pv).get("claimRef") is None or is_volume_bound_to_claim(pv, pvc):
            return volume
        return ""

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
            pv = storage.pvs.get(self.bound_volume(key, pvc, storage))
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
