"""A pod's ResourceClaims: which claim each ``spec.resourceClaims`` entry names, and the
lookups the plugin makes of them (k8s.io/dynamic-resource-allocation/resourceclaim).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod, PodResourceClaim

Manifest = Mapping[str, Any]

RESOURCE_CLAIM = "ResourceClaim"

# resourceclaim.go: ErrClaimNotFound and ErrAPIUnsupported.
ERR_CLAIM_NOT_FOUND = "ResourceClaim not created yet"
ERR_API_UNSUPPORTED = "none of the supported fields are set"


class ClaimError(Exception):
    """Why a pod's claims cannot be used now; the message is kube's error string."""


def claim_name(pod: Pod, entry: PodResourceClaim) -> tuple[str | None, bool]:
    """resourceclaim.go: Name. (the ResourceClaim's name, whether the pod must own it); the
    name is None when the controller decided that no claim is needed. ClaimError when the
    claim from a template was not made yet, or the entry names neither."""
    if entry.claim_name is not None:
        return entry.claim_name, False
    if entry.template_name is not None:
        statuses = pod.resource_claim_statuses
        if entry.name in statuses:
            return statuses[entry.name], True
        raise ClaimError(f'pod "{pod.namespace}/{pod.name}": {ERR_CLAIM_NOT_FOUND}')
    raise ClaimError(
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{entry.name}": '
        f"{ERR_API_UNSUPPORTED}"
    )


def _meta(obj: Manifest) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def is_controlled_by(obj: Manifest, pod: Pod) -> bool:
    """metav1.IsControlledBy: the object's controller owner reference has the pod's UID."""
    for ref in _meta(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return bool(ref.get("uid") == pod.uid)
    return False


def check_is_for_pod(pod: Pod, claim: Manifest) -> None:
    """resourceclaim.go: IsForPod (without pod groups); ClaimError when the claim was not
    made for the pod."""
    meta = _meta(claim)
    namespace, name = meta.get("namespace") or "default", meta.get("name")
    if namespace != pod.namespace:
        raise ClaimError(
            f"ResourceClaim {namespace}/{name} is not in the same namespace as Pod "
            f"{pod.namespace}/{pod.name}"
        )
    if not is_controlled_by(claim, pod):
        raise ClaimError(
            f"ResourceClaim {namespace}/{name} was not created for Pod "
            f"{pod.namespace}/{pod.name} (Pod is not owner)"
        )


class ClaimIndex:
    """The ResourceClaims of the cluster by ``namespace/name`` (the scheduler's assume cache
    of claims, dra_manager.go: claimTracker.Get)."""

    __slots__ = ("_by_key", "_source")

    def __init__(self) -> None:
        self._source: Sequence[Manifest] | None = None
        self._by_key: dict[str, Manifest] = {}

    def refresh(self, claims: Sequence[Manifest]) -> None:
        """Re-indexes when the handle's list of claims is a new one (it changed)."""
        if claims is self._source:
            return
        self._source = claims
        by_key: dict[str, Manifest] = {}
        for claim in claims:
            meta = _meta(claim)
            by_key[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = claim
        self._by_key = by_key

    def get(self, namespace: str, name: str) -> Manifest:
        """The claim; ClaimError as the assume cache's NotFoundError says it."""
        key = f"{namespace}/{name}"
        claim = self._by_key.get(key)
        if claim is None:
            raise ClaimError(f'could not find {RESOURCE_CLAIM} "{key}"')
        return claim

    def pod_claims(self, pod: Pod) -> list[tuple[str, Manifest]]:
        """dynamicresources.go: foreachPodResourceClaim. (pod claim name, claim) for every
        entry that has a claim; ClaimError for the first that is missing, being deleted or
        (made from a template) not owned by the pod."""
        out: list[tuple[str, Manifest]] = []
        for entry in pod.resource_claims:
            name, must_check_owner = claim_name(pod, entry)
            if name is None:
                continue
            claim = self.get(pod.namespace, name)
            if _meta(claim).get("deletionTimestamp"):
                raise ClaimError(f'resourceclaim "{_meta(claim).get("name")}" is being deleted')
            if must_check_owner:
                check_is_for_pod(pod, claim)
            out.append((entry.name, claim))
        return out
