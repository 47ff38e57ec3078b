"""Dynamic Resource Allocation objects (resource.k8s.io/v1): their kinds, and the defaults
the API server writes into them.

DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate and DeviceTaintRule are kept
as manifests (``ClusterObjects.others``), like the storage objects; the DynamicResources
plugin reads them. What the scheduler depends on of the API server's defaulting
(pkg/apis/resource/v1/defaults.go and zz_generated.defaults.go) is applied when a manifest
is loaded: a request without ``allocationMode`` is ``ExactCount``, an ``ExactCount`` request
without ``count`` asks for 1 (kube-scheduler itself refuses a claim without them:
"unsupported count mode"), and a toleration without ``operator`` is ``Equal``.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import uuid
from collections.abc import Iterable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod

__all__ = [
    "CLUSTER_SCOPED_DRA_KINDS",
    "DEVICE_CLASS",
    "DEVICE_CLASS_RESOURCE_PREFIX",
    "DEVICE_TAINT_RULE",
    "DRA_API_VERSION",
    "DRA_KINDS",
    "EXTENDED_CLAIM_IN_MEMORY_NAME",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "RESOURCE_CLAIM",
    "RESOURCE_CLAIM_TEMPLATE",
    "RESOURCE_SLICE",
    "PodResourceClaim",
    "claims_from_templates",
    "created_extended_resource_claim",
    "extended_resource_claim",
    "extended_resource_classes",
    "is_dra_extended_resource_name",
    "released_claim",
    "with_dra_defaults",
    "with_extended_resource_claim_status",
]

DRA_API_VERSION = "resource.k8s.io/v1"
DEVICE_CLASS = "DeviceClass"
RESOURCE_SLICE = "ResourceSlice"
RESOURCE_CLAIM = "ResourceClaim"
RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate"
DEVICE_TAINT_RULE = "DeviceTaintRule"
DRA_KINDS = frozenset(
    {DEVICE_CLASS, RESOURCE_SLICE, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE, DEVICE_TAINT_RULE}
)
CLUSTER_SCOPED_DRA_KINDS = frozenset({DEVICE_CLASS, RESOURCE_SLICE, DEVICE_TAINT_RULE})

EXACT_COUNT = "ExactCount"


def _request_defaults(request: MutableMapping[str, Any]) -> None:
    """SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest, and the tolerations'
    operator (zz_generated.defaults.go)."""
    if not request.get("allocationMode"):
        request["allocationMode"] = EXACT_COUNT
    if request["allocationMode"] == EXACT_COUNT and not request.get("count"):
        request["count"] = 1
    for toleration in request.get("tolerations") or ():
        if isinstance(toleration, MutableMapping) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def _claim_spec_defaults(spec: Any) -> None:
    if not isinstance(spec, MutableMapping):
        return
    devices = spec.get("devices")
    if not isinstance(devices, MutableMapping):
        return
    for request in devices.get("requests") or ():
        if not isinstance(request, MutableMapping):
            continue
        exactly = request.get("exactly")
        if isinstance(exactly, MutableMapping):
            _request_defaults(exactly)
        for sub in request.get("firstAvailable") or ():
            if isinstance(sub, MutableMapping):
                _request_defaults(sub)


def with_dra_defaults(kind: str, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``manifest`` (a structurally valid DRA object) with the API server's
    defaults; other kinds are copied unchanged."""
    out: dict[str, Any] = copy.deepcopy(dict(manifest))
    if kind == RESOURCE_CLAIM:
        _claim_spec_defaults(out.get("spec"))
        status = out.get("status")
        allocation = status.get("allocation") if isinstance(status, Mapping) else None
        if isinstance(allocation, Mapping):
            for result in (allocation.get("devices") or {}).get("results") or ():
                for toleration in (result or {}).get("tolerations") or ():
                    if isinstance(toleration, MutableMapping) and not toleration.get("operator"):
                        toleration["operator"] = "Equal"
    elif kind == RESOURCE_CLAIM_TEMPLATE:
        spec = out.get("spec")
        if isinstance(spec, Mapping):
            _claim_spec_defaults(spec.get("spec"))
    return out


# --- the resourceclaim controller ------------------------------------------------------------

# resource/v1: PodResourceClaimAnnotation; Finalizer, which the scheduler adds when allocating.
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
ALLOCATION_FINALIZER = "resource.kubernetes.io/delete-protection"


def released_claim(claim: Mapping[str, Any], remaining: list[Any]) -> dict[str, Any]:
    """controller.go: syncClaim after consumers went away: ``remaining`` in reservedFor;
    without any, the scheduler's allocation (marked by its finalizer) is removed, and the
    finalizer with it."""
    out = dict(claim)
    status = dict(claim.get("status") or {})
    meta = dict(claim.get("metadata") or {})
    if remaining:
        status["reservedFor"] = remaining
    else:
        status.pop("reservedFor", None)
        finalizers = list(meta.get("finalizers") or [])
        if ALLOCATION_FINALIZER in finalizers:
            status.pop("allocation", None)
            finalizers.remove(ALLOCATION_FINALIZER)
            if finalizers:
                meta["finalizers"] = finalizers
            else:
                meta.pop("finalizers", None)
    out["status"] = status
    out["metadata"] = meta
    return out


_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand alphanumerics


def _generate_name(pod_name: str, claim_name: str) -> str:
    """controller.go: handleClaim's generateName (``<pod>-<claim>-``, shortened
    proportionally beyond 57 characters)."""
    generate = f"{pod_name}-{claim_name}-"
    max_base = 57
    if len(generate) > max_base:
        generate = (
            pod_name[: len(pod_name) * max_base // len(generate)]
            + "-"
            + claim_name[: len(claim_name) * max_base // len(generate)]
        )
    return generate


def _suffix(seed: str) -> str:
    """Five characters the API server would draw at random; here derived from ``seed`` so
    that a simulation is reproducible."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def _controlled_by(pod: Pod) -> dict[str, Any]:
    """The owner reference that makes ``pod`` a claim's controller."""
    return {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid, "controller": True}


def claims_from_templates(
    pod: Pod, templates: Mapping[str, Mapping[str, Any]]
) -> tuple[Pod, list[dict[str, Any]]]:
    """What the resourceclaim controller does for a pod (pkg/controller/resourceclaim/
    controller.go: syncPod, handleClaim): a ResourceClaim for each ``spec.resourceClaims``
    entry that names a template and has no ``status.resourceClaimStatuses`` entry yet,
    made from the template (``templates``: ``namespace/name`` -> ResourceClaimTemplate),
    owned by the pod and annotated with the pod's claim name; and the pod with those
    claims' names in its status. An entry whose template is missing is left alone (the
    pod waits: DynamicResources' PreEnqueue)."""
    statuses = pod.resource_claim_statuses
    made: dict[str, str | None] = {}
    claims: list[dict[str, Any]] = []
    for entry in pod.resource_claims:
        if entry.template_name is None or entry.name in statuses:
            continue
        template = templates.get(f"{pod.namespace}/{entry.template_name}")
        if template is None:
            continue
        spec = template.get("spec") or {}
        template_meta = spec.get("metadata") or {}
        annotations = dict(template_meta.get("annotations") or {})
        annotations[POD_CLAIM_NAME_ANNOTATION] = entry.name
        name = _generate_name(pod.name, entry.name)
        name += _suffix(f"{pod.uid}/{entry.name}")
        metadata: dict[str, Any] = {
            "name": name,
            "generateName": _generate_name(pod.name, entry.name),
            "namespace": pod.namespace,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"wasmsched:claim/{pod.uid}/{entry.name}")),
            "ownerReferences": [_controlled_by(pod)],
            "annotations": annotations,
        }
        if template_meta.get("labels"):
            metadata["labels"] = dict(template_meta["labels"])
        claims.append(
            {
                "apiVersion": DRA_API_VERSION,
                "kind": RESOURCE_CLAIM,
                "metadata": metadata,
                "spec": copy.deepcopy(spec.get("spec") or {}),
            }
        )
        made[entry.name] = name
    if not made:
        return pod, []
    return pod.with_resource_claim_statuses({**statuses, **made}), claims


class PodResourceClaim:
    """One entry of a pod's ``spec.resourceClaims`` (core/v1 PodResourceClaim): a name the
    containers use, and either the ResourceClaim it names or the ResourceClaimTemplate its
    claim is made from (exactly one, as validation requires)."""

    __slots__ = ("claim_name", "name", "template_name")

    def __init__(self, name: str, claim_name: str | None, template_name: str | None) -> None:
        self.name = name
        self.claim_name = claim_name
        self.template_name = template_name

    def __repr__(self) -> str:
        return (
            f"PodResourceClaim({self.name!r}, claim_name={self.claim_name!r}, "
            f"template_name={self.template_name!r})"
        )


# --- extended resources backed by DeviceClasses (DRAExtendedResource) ------------------------

# resource/v1: ResourceDeviceClassPrefix, ExtendedResourceClaimAnnotation.
DEVICE_CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def is_dra_extended_resource_name(name: str) -> bool:
    """scheduler/util/utils.go: IsDRAExtendedResourceName: an extended resource name
    (v1helper.IsExtendedResourceName: prefixed, outside ``kubernetes.io/``, not a quota
    name) or a class's implicit ``deviceclass.resource.kubernetes.io/<class>``."""
    if name.startswith(DEVICE_CLASS_RESOURCE_PREFIX):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _created(device_class: Mapping[str, Any]) -> datetime.datetime:
    """metadata.creationTimestamp (the zero time when unset, as Go's)."""
    raw = (device_class.get("metadata") or {}).get("creationTimestamp")
    if isinstance(raw, datetime.datetime):
        return raw if raw.tzinfo is not None else raw.replace(tzinfo=datetime.UTC)
    if isinstance(raw, str) and raw:
        return datetime.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    return _ZERO_TIME


_ZERO_TIME = datetime.datetime(1, 1, 1, tzinfo=datetime.UTC)


def extended_resource_classes(
    device_classes: Iterable[Mapping[str, Any]],
) -> dict[str, Mapping[str, Any]]:
    """The extended resource names DeviceClasses back, and the class of each, as kube's
    ExtendedResourceCache holds them after its informer's initial list, which comes in name
    order (dynamic-resource-allocation deviceclass/extendedresourcecache:
    updateResourceName2class): each class maps its implicit
    ``deviceclass.resource.kubernetes.io/<name>`` and its ``spec.extendedResourceName``.
    When classes name the same resource the newer one keeps it (the name breaks a tie);
    a class that loses that contest is left out entirely, its implicit name too."""
    by_resource: dict[str, Mapping[str, Any]] = {}
    for device_class in sorted(
        device_classes, key=lambda c: str((c.get("metadata") or {}).get("name") or "")
    ):
        name = str((device_class.get("metadata") or {}).get("name") or "")
        explicit = (device_class.get("spec") or {}).get("extendedResourceName")
        if explicit:
            holder = by_resource.get(explicit)
            if holder is not None:
                created, held = _created(device_class), _created(holder)
                if created < held or (
                    created == held and name >= str((holder.get("metadata") or {}).get("name"))
                ):
                    continue
            by_resource[explicit] = device_class
        by_resource[DEVICE_CLASS_RESOURCE_PREFIX + name] = device_class
    return by_resource


# extendeddynamicresources.go: specialClaimInMemName, deliberately not a valid name.
EXTENDED_CLAIM_IN_MEMORY_NAME = "<extended-resources>"


def extended_resource_claim(pod: Pod) -> dict[str, Any]:
    """extendeddynamicresources.go: preFilterExtendedResources' in-memory claim for the
    pod's extended resources backed by DRA: no requests yet (Filter adds them per node),
    owned by the pod, annotated as the extended-resource claim, named at creation from
    ``<pod>-extended-resources-``. Its uid (random in kube) is derived from the pod."""
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": RESOURCE_CLAIM,
        "metadata": {
            "name": EXTENDED_CLAIM_IN_MEMORY_NAME,
            "generateName": f"{pod.name}-extended-resources-",
            "namespace": pod.namespace,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"wasmsched:extended-claim/{pod.uid}")),
            "ownerReferences": [_controlled_by(pod)],
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        },
        "spec": {},
    }


def created_extended_resource_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The in-memory extended-resource claim as the API server creates it
    (createExtendedResourceClaimInAPI clears name, uid and the allocation): named from
    its generateName (names.SimpleNameGenerator: at most 58 characters and 5 random ones,
    here derived from the claim so that runs are reproducible) with a uid of its own."""
    meta = dict(claim.get("metadata") or {})
    base = str(meta.get("generateName") or "")[:_MAX_GENERATED_BASE]
    name = base + _suffix(f"{meta.get('namespace')}/{base}/{meta.get('uid')}")
    meta["name"] = name
    meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"wasmsched:claim/{meta.get('uid')}"))
    out = {key: copy.deepcopy(value) for key, value in claim.items() if key != "status"}
    out["metadata"] = meta
    return out


# apiserver storage/names: maxGeneratedNameLength (63 - the 5 random characters).
_MAX_GENERATED_BASE = 58


def with_extended_resource_claim_status(pod: Pod, status: Mapping[str, Any]) -> Pod:
    """The pod with status.extendedResourceClaimStatus set to ``status`` (requestMappings
    and resourceClaimName), as DynamicResources' PreBind patches it
    (extendeddynamicresources.go: patchPodExtendedResourceClaimStatus)."""
    manifest = dict(pod.manifest)
    manifest["status"] = {**pod.status, "extendedResourceClaimStatus": dict(status)}
    return pod.updated(manifest)
