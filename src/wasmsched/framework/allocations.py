"""A pod's device allocations, for plugins written in Python.

kube-scheduler's plugins read claims through the informer's lister
(``handle.SharedDRAManager().ResourceClaims()``); here ``pod_allocations`` reads the
handle's ResourceClaims (``handle.objects("ResourceClaim")``) and answers, for one pod,
which devices its claims hold: the claims named in ``spec.resourceClaims`` (directly, or
made from a template and named in ``status.resourceClaimStatuses``) that have a
``status.allocation``. A claim is allocated at Reserve and written at PreBind: a pod being
scheduled has no allocation yet, a bound pod (``node_info.pods``) has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from wasmsched.api.dra import RESOURCE_CLAIM
from wasmsched.api.objects import Pod
from wasmsched.framework.interfaces import Handle

__all__ = ["DeviceAllocation", "pod_allocations"]


@dataclass(frozen=True, slots=True)
class DeviceAllocation:
    """One device allocated to one of a pod's claims (resource/v1
    DeviceRequestAllocationResult), read-only.

    ``claim`` is the ResourceClaim's ``namespace/name``, ``pod_claim`` the pod's name for
    it (its ``spec.resourceClaims`` entry); ``request`` the claim's request (``req/sub``
    for a subrequest of ``firstAvailable``); ``driver``, ``pool`` and ``device`` name the
    device; ``share_id`` and ``consumed_capacity`` (capacity name -> quantity text) are
    set for a share of a device with ``allowMultipleAllocations``; ``admin_access`` for
    an admin-access request.
    """

    claim: str
    pod_claim: str
    request: str
    driver: str
    pool: str
    device: str
    share_id: str | None
    consumed_capacity: Mapping[str, str]
    admin_access: bool


# The last claim list seen and its index by namespace/name: the handle's list is shared
# until a claim changes, so the index is built once per change, not per call.
_index: tuple[Sequence[Mapping[str, Any]] | None, dict[str, Mapping[str, Any]]] = (None, {})


def _claims_by_key(handle: Handle) -> dict[str, Mapping[str, Any]]:
    global _index
    claims = handle.objects(RESOURCE_CLAIM)
    listed, index = _index
    if listed is not claims:
        index = {}
        for claim in claims:
            meta = claim.get("metadata") or {}
            index[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = claim
        _index = (claims, index)
    return index


def pod_allocations(handle: Handle, pod: Pod) -> tuple[DeviceAllocation, ...]:
    """The devices allocated to ``pod``'s claims, in ``spec.resourceClaims`` order and each
    claim's result order (empty: no claims, or none allocated yet)."""
    if not pod.resource_claims:
        return ()
    claims = _claims_by_key(handle)
    statuses = pod.resource_claim_statuses
    out: list[DeviceAllocation] = []
    for entry in pod.resource_claims:
        name = entry.claim_name or statuses.get(entry.name)
        if not name:
            continue  # its claim is not made yet
        key = f"{pod.namespace}/{name}"
        claim = claims.get(key)
        allocation = ((claim or {}).get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or ():
            out.append(
                DeviceAllocation(
                    claim=key,
                    pod_claim=entry.name,
                    request=str(r.get("request") or ""),
                    driver=str(r.get("driver") or ""),
                    pool=str(r.get("pool") or ""),
                    device=str(r.get("device") or ""),
                    share_id=r.get("shareID"),
                    consumed_capacity=MappingProxyType(
                        {str(k): str(v) for k, v in (r.get("consumedCapacity") or {}).items()}
                    ),
                    admin_access=bool(r.get("adminAccess")),
                )
            )
    return tuple(out)
