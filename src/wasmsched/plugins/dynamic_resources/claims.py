"""A pod's ResourceClaims: which claim each ``spec.resourceClaims`` entry names, and the
lookups the plugin makes of them (k8s.io/dynamic-resource-allocation/resourceclaim).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from wasmsched.api.dra import ALLOCATION_FINALIZER
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod, PodResourceClaim
    from wasmsched.framework.interfaces import Handle

Manifest = Mapping[str, Any]

RESOURCE_CLAIM = "ResourceClaim"
_UID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://wasmsched.invalid/objects")

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


def meta_of(obj: Manifest) -> Mapping[str, Any]:
    """The object's metadata (empty when absent)."""
    meta = obj.get("metadata")
    return meta if type(meta) is dict or isinstance(meta, Mapping) else {}


def is_controlled_by(obj: Manifest, pod: Pod) -> bool:
    """metav1.IsControlledBy: the object's controller owner reference has the pod's UID."""
    for ref in meta_of(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return bool(ref.get("uid") == pod.uid)
    return False


def check_is_for_pod(pod: Pod, claim: Manifest) -> None:
    """resourceclaim.go: IsForPod (without pod groups); ClaimError when the claim was not
    made for the pod."""
    meta = meta_of(claim)
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


# --- claim fields, and the claim versions the plugin writes ----------------------------------


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one (a field absent or null). A dict is
    told first: the ABC check costs a microsecond, and the allocator asks per device."""
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` as a list if it is one, else an empty one."""
    return list(value) if isinstance(value, list | tuple) else []


def claim_uid(claim: Manifest) -> str:
    """metadata.uid, or a uuid5 of namespace/name when the manifest has none (as a Pod's
    uid is derived), so that claims written without one stay apart."""
    uid = meta_of(claim).get("uid")
    if uid:
        return str(uid)
    return str(uuid.uuid5(_UID_NAMESPACE, f"resourceclaim/{claim_key(claim)}"))


def claim_key(claim: Manifest) -> str:
    """klog.KObj: ``namespace/name``."""
    meta = meta_of(claim)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def allocation_of(claim: Manifest) -> Any:
    """The claim's status.allocation, None when it is not allocated."""
    status = claim.get("status")
    if type(status) is dict or isinstance(status, Mapping):
        return status.get("allocation")
    return None


def is_newer(listed: Manifest, assumed: Manifest) -> bool:
    """``listed`` has a higher resourceVersion than ``assumed`` (both integers, as the
    assume cache compares them: assumecache.go, AssumeCache.add); False without them."""
    try:
        return int(meta_of(listed)["resourceVersion"]) > int(meta_of(assumed)["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return False


_UNSET = object()


def with_status(
    claim: Manifest, *, allocation: Any = _UNSET, reserved_for: Any = _UNSET, devices: Any = _UNSET
) -> dict[str, Any]:
    """A copy of ``claim`` with these status fields set (None removes one)."""
    out = dict(claim)
    status = dict(as_mapping(claim.get("status")))
    for field, value in (
        ("allocation", allocation),
        ("reservedFor", reserved_for),
        ("devices", devices),
    ):
        if value is _UNSET:
            continue
        if value is None:
            status.pop(field, None)
        else:
            status[field] = value
    out["status"] = status
    return out


def api_timestamp(seconds: float) -> str:
    """metav1.Time as the API writes it (RFC 3339, seconds)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_device_class(
    class_name: str, request: str, classes: Mapping[str, Manifest]
) -> Status | None:
    """validateDeviceClass: Error without a class name; the pod waits for a missing class."""
    if not class_name:
        return Status(Code.ERROR, f"request {request}: unsupported request type")
    if class_name not in classes:
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"request {request}: device class {class_name} does not exist",
        )
    return None


def check_request(
    request: Mapping[str, Any], classes: Mapping[str, Manifest], prioritized_list: bool
) -> Status | None:
    """PreFilter's check of a request's kind and device classes (validateDeviceClass)."""
    name = request.get("name") or ""
    exactly = request.get("exactly")
    subs = as_list(request.get("firstAvailable"))
    if exactly is not None:
        return check_device_class(as_mapping(exactly).get("deviceClassName") or "", name, classes)
    if subs:
        if not prioritized_list:
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"request {name}: has subrequests, but the DRAPrioritizedList feature is disabled",
            )
        for sub in subs:
            status = check_device_class(
                as_mapping(sub).get("deviceClassName") or "",
                f"{name}/{as_mapping(sub).get('name') or ''}",
                classes,
            )
            if status is not None:
                return status
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"request {name}: unknown request type")


def requests_of(claim: Manifest) -> list[Any]:
    """spec.devices.requests."""
    return as_list(as_mapping(as_mapping(claim.get("spec")).get("devices")).get("requests"))


def delete_claim(handle: Handle, claim: Manifest) -> Status | None:
    """extendeddynamicresources.go: deleteClaim: the claim without the delete-protection
    finalizer (an update), then deleted."""
    finalizers = list(meta_of(claim).get("finalizers") or [])
    if ALLOCATION_FINALIZER in finalizers:
        finalizers.remove(ALLOCATION_FINALIZER)
        meta = {k: v for k, v in meta_of(claim).items() if k != "finalizers"}
        if finalizers:
            meta["finalizers"] = finalizers
        claim = {**claim, "metadata": meta}
        status = handle.write_resource_claim(claim)
        if status is not None and not status.is_success():
            return status
    return handle.delete_resource_claim(claim)


class DeviceClasses:
    """The handle's DeviceClasses by name, and as JSON (what Filter's answers kept across
    cycles depend on), made again only when the handle hands out a new list (it does
    when a class changes): PreFilter reads them for every pod."""

    __slots__ = ("_source", "by_name", "json")

    def __init__(self) -> None:
        self._source: Sequence[Manifest] | None = None
        self.by_name: dict[str, Manifest] = {}
        self.json: str | None = None

    def refresh(self, class_list: Sequence[Manifest]) -> DeviceClasses:
        """Itself, made from ``class_list`` when it is not the list seen last."""
        if class_list is not self._source:
            self._source = class_list
            self.by_name = {str(meta_of(c).get("name")): c for c in class_list}
            try:
                self.json = json.dumps(list(class_list), sort_keys=True)
            except (TypeError, ValueError):
                self.json = None
        return self


def allocator_inputs(
    claims: Sequence[Manifest], classes: DeviceClasses, slices_generation: int
) -> tuple[Any, ...] | None:
    """What an allocation depends on besides the node and the devices held: the claims'
    specs (their names only word errors and share IDs), the classes and the slices. None
    when a spec or a class does not serialize."""
    if classes.json is None:
        return None
    try:
        specs = tuple(json.dumps(c.get("spec"), sort_keys=True) for c in claims)
    except (TypeError, ValueError):
        return None
    return (specs, classes.json, slices_generation)


def node_claim_inputs(claim: Manifest) -> str | None:
    """What ``allocator_inputs`` lacks for the extended-resource claim made for one node
    (its requests are the node's: extendeddynamicresources.go, filterExtendedResources):
    its spec. None when it does not serialize."""
    try:
        return json.dumps(claim.get("spec"), sort_keys=True)
    except (TypeError, ValueError):
        return None
