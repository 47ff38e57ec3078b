"""Extended resources backed by DRA (DRAExtendedResource): a pod's request of an extended
resource that a DeviceClass names (``spec.extendedResourceName``, or the implicit
``deviceclass.resource.kubernetes.io/<class>``) is allocated from devices where the node
does not advertise the resource itself.

Mirrors pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go
(v1.37.2): the resolver (the DRA manager's ExtendedResourceCache), the special claim's
requests and the pod's request mappings (createRequestsAndMappings).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.dra import (
    EXTENDED_CLAIM_IN_MEMORY_NAME,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    created_extended_resource_claim,
    extended_resource_claim,
    extended_resource_classes,
    is_dra_extended_resource_name,
)
from wasmsched.api.resources import container_requests
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.dynamic_resources.claims import allocation_of, as_mapping

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo

Manifest = Mapping[str, Any]


class ExtendedResourceResolver:
    """fwk.DeviceClassResolver over the handle's DeviceClasses: rebuilt when the list
    changes (the handle hands out a new list then)."""

    __slots__ = ("_by_resource", "_source")

    def __init__(self) -> None:
        self._source: Sequence[Manifest] | None = None
        self._by_resource: dict[str, Manifest] = {}

    def refresh(self, device_classes: Sequence[Manifest]) -> ExtendedResourceResolver:
        """Itself, rebuilt when ``device_classes`` is a new list."""
        if device_classes is not self._source:
            self._source = device_classes
            self._by_resource = extended_resource_classes(device_classes)
        return self

    def device_class(self, resource: str) -> Manifest | None:
        """GetDeviceClass: the class backing ``resource``, or None."""
        return self._by_resource.get(resource)

    def backed(self, requests: Mapping[str, int]) -> dict[str, int]:
        """The requested (non-zero) DRA extended resources that a class backs
        (hasDeviceClassMappedExtendedResource, kept with their amounts)."""
        by_resource = self._by_resource
        if not by_resource:
            return {}
        return {
            name: qty
            for name, qty in requests.items()
            if qty and name in by_resource and is_dra_extended_resource_name(name)
        }


def in_memory(claim: Manifest) -> bool:
    """isSpecialClaimName: the special claim not created on the API server yet."""
    return (claim.get("metadata") or {}).get("name") == EXTENDED_CLAIM_IN_MEMORY_NAME


def find_extended_claim(pod: Pod, claims: Sequence[Manifest]) -> Manifest | None:
    """findExtendedResourceClaim: a claim annotated as the extended-resource claim and
    controlled by the pod (made in an earlier cycle)."""
    for claim in claims:
        meta = claim.get("metadata") or {}
        if (meta.get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        for ref in meta.get("ownerReferences") or ():
            if ref.get("name") == pod.name and ref.get("controller") and ref.get("uid") == pod.uid:
                return claim
    return None


class _Container:
    __slots__ = ("index", "long_lived", "name", "requests")

    def __init__(self, index: int, raw: Mapping[str, Any], path: str, long_lived: bool) -> None:
        self.index = index
        self.name = str(raw.get("name") or "")
        self.long_lived = long_lived
        # The requests as the API server stores them (limits defaulting missing requests).
        self.requests = container_requests(raw, path, True)


def _containers(pod: Pod) -> list[_Container]:
    """Init containers, then containers, with their index in that list
    (partitionContainerIndices: a non-sidecar init container is short-lived)."""
    out: list[_Container] = []
    for i, raw in enumerate(pod.spec.get("initContainers") or ()):
        sidecar = raw.get("restartPolicy") == "Always"
        out.append(_Container(i, raw, f"spec.initContainers[{i}]", sidecar))
    offset = len(out)
    for i, raw in enumerate(pod.spec.get("containers") or ()):
        out.append(_Container(offset + i, raw, f"spec.containers[{i}]", True))
    return out


def _request_and_mappings(
    container: _Container, resource: str, class_name: str, reusable: Sequence[dict[str, Any]]
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """createResourceRequestAndMappings: the container's device request for ``resource``
    (None when the reusable requests of later long-lived containers cover it) and its
    mappings. ``container-<index>-request-<index of the resource among the container's
    sorted request names>`` names the request."""
    amount = container.requests.get(resource)
    if amount is None or amount.denominator != 1 or amount == 0:
        return None, []  # Quantity.AsInt64 fails on a fraction
    wanted = int(amount)
    mappings: list[dict[str, str]] = []
    covered = 0
    for request in reusable:
        covered += int(request["exactly"]["count"])
        mappings.append(
            {
                "containerName": container.name,
                "resourceName": resource,
                "requestName": request["name"],
            }
        )
        if covered >= wanted:
            return None, mappings
    position = sorted(container.requests).index(resource)
    name = f"container-{container.index}-request-{position}"
    mappings.append(
        {"containerName": container.name, "resourceName": resource, "requestName": name}
    )
    request = {
        "name": name,
        "exactly": {
            "deviceClassName": class_name,
            "allocationMode": "ExactCount",
            "count": wanted - covered,
        },
    }
    return request, mappings


def requests_and_mappings(
    pod: Pod, extended: Mapping[str, int], resolver: ExtendedResourceResolver
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """createRequestsAndMappings: the special claim's device requests (sorted by name) for
    the ``extended`` resources this node leaves to DRA, and the pod's request mappings
    (``status.extendedResourceClaimStatus.requestMappings``): per resource in name order,
    one request per long-lived container, and for the short-lived init containers, which
    run one at a time, the largest of theirs (each may reuse the requests of long-lived
    containers after it)."""
    containers = _containers(pod)
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(extended):
        device_class = resolver.device_class(resource)
        if device_class is None:
            continue
        class_name = str((device_class.get("metadata") or {}).get("name") or "")
        long_lived: dict[int, dict[str, Any]] = {}
        long_mappings: list[dict[str, str]] = []
        for c in containers:
            if c.long_lived:
                request, found = _request_and_mappings(c, resource, class_name, ())
                if request is not None:
                    long_lived[c.index] = request
                long_mappings.extend(found)
        largest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for c in containers:
            if c.long_lived:
                continue
            later = [r for i, r in sorted(long_lived.items()) if i >= c.index]
            request, found = _request_and_mappings(c, resource, class_name, later)
            if request is not None:
                short_names.add(request["name"])
                if largest is None or largest["exactly"]["count"] < request["exactly"]["count"]:
                    largest = request
            short_mappings.extend(found)
        if largest is not None and len(short_names) > 1:
            # Every short-lived container uses the largest request: they run in turn.
            short_names.discard(largest["name"])
            for mapping in short_mappings:
                if mapping["requestName"] in short_names:
                    mapping["requestName"] = largest["name"]
        if largest is not None:
            requests.append(largest)
        requests.extend(request for _, request in sorted(long_lived.items()))
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda r: str(r["name"]))
    return requests, mappings


def filter_extended(
    claim: Manifest,
    pod_scalars: Mapping[str, int],
    no_user_claim: bool,
    pod: Pod,
    node_info: NodeInfo,
    resolver: ExtendedResourceResolver,
) -> tuple[Manifest, list[dict[str, str]]] | Status | None:
    """extendeddynamicresources.go: filterExtendedResources. The special claim with the
    requests this node leaves to DRA (the backed extended resources it does not
    advertise) and the request mappings; None when there is nothing to allocate for it
    here; Unschedulable for a claim made in an earlier cycle (PostFilter deletes it) or a
    resource neither advertised nor backed."""
    if as_mapping(as_mapping(claim.get("spec")).get("devices")).get("requests") is not None:
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot schedule extended resource claim"
        )
    allocatable = node_info.allocatable.scalar
    to_dra: dict[str, int] = {}
    for name, qty in pod_scalars.items():
        if not qty or not is_dra_extended_resource_name(name):
            continue
        if allocatable.get(name, 0) == 0 and resolver.device_class(name) is not None:
            to_dra[name] = qty
        elif name not in allocatable:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot fit resource")
    if (not to_dra and no_user_claim) or allocation_of(claim) is not None:
        return None
    requests, mappings = requests_and_mappings(pod, to_dra, resolver)
    spec = dict(as_mapping(claim.get("spec")))
    spec["devices"] = {**as_mapping(spec.get("devices")), "requests": requests or None}
    return {**claim, "spec": spec}, mappings


def patch_extended_status(
    handle: Handle, pod: Pod, claim: Manifest, mappings: list[dict[str, str]]
) -> Status | None:
    """patchPodExtendedResourceClaimStatus: the pod's extendedResourceClaimStatus names the
    claim and maps each container's extended resource to its request."""
    if not mappings:
        return Status(
            Code.ERROR,
            f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
            "ExtendedResourceClaimStatus",
        )
    status = handle.set_extended_resource_claim_status(
        pod,
        {
            "requestMappings": mappings,
            "resourceClaimName": (claim.get("metadata") or {}).get("name"),
        },
    )
    if status is not None and not status.is_success():
        return Status(
            Code.ERROR,
            f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {status.message}",
        )
    return None


def pre_filter_extended(
    pod: Pod,
    resolver: ExtendedResourceResolver,
    device_classes: Callable[[], Sequence[Manifest]],
    claims: Callable[[], Sequence[Manifest]],
) -> Manifest | None:
    """extendeddynamicresources.go: preFilterExtendedResources. For a pod requesting an
    extended resource that a DeviceClass backs: the special claim made for it in an
    earlier cycle, or a new one in memory (no requests yet); None otherwise."""
    scalars = pod.requests.scalar
    if not scalars or not resolver.refresh(device_classes()).backed(scalars):
        return None
    claim = find_extended_claim(pod, claims())
    return claim if claim is not None else extended_resource_claim(pod)


def create_extended_claim(
    made: Mapping[str, tuple[Manifest, list[dict[str, str]]]],
    node_name: str,
    pod: Pod,
    write: Callable[[dict[str, Any]], Status | None],
) -> dict[str, Any] | Status:
    """createExtendedResourceClaimInAPI: the special claim Filter made for the node,
    created on the API server (which names it from its generateName)."""
    for_node = made.get(node_name)
    if for_node is None:
        return Status(Code.ERROR, f"extended resource claim not found for node {node_name}")
    claim = created_extended_resource_claim(for_node[0])
    status = write(claim)
    if status is not None and not status.is_success():
        return Status(
            Code.ERROR,
            # klog.KObj of the claim, its name cleared for the API server to generate.
            f"create claim for extended resources {pod.namespace}/: {status.message}",
        )
    return claim
