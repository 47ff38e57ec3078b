"""A claim's requests and constraints as the allocator reads them
(allocator_incubating.go: requestAccessor, matchAttributeConstraint,
distinctAttributeConstraint, lookupAttribute, taintPreventsAllocation;
resourceclaim.ToleratesTaint).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from wasmsched.api.quantity import parse_quantity
from wasmsched.plugins.dynamic_resources.claims import as_list, as_mapping
from wasmsched.plugins.dynamic_resources.slices import Device, DeviceID, Pool, Slice

Manifest = Mapping[str, Any]

# resource/v1: AllocationResultsMaxSize.
ALLOCATION_RESULTS_MAX_SIZE = 32


class AllocationError(Exception):
    """Allocation must stop: something is wrong with a claim or class (kube: an error from
    Allocate that is not ErrFailedAllocationOnNode; the plugin makes it an Error status)."""


class Request:
    """requestAccessor: a request's ``exactly`` or one of its ``firstAvailable`` entries."""

    __slots__ = (
        "admin_access",
        "all_devices",
        "capacity_requests",
        "class_name",
        "count",
        "device_class",
        "has_admin_access",
        "mode",
        "name",
        "num_devices",
        "parent",
        "raw",
        "selected_sub",
        "selectors",
        "tolerations",
    )

    def __init__(self, raw: Manifest, name: str, parent: str | None, sub: bool) -> None:
        self.raw = raw
        self.name = name
        self.parent = parent
        self.class_name: str = raw.get("deviceClassName") or ""
        self.mode: str = raw.get("allocationMode") or ""
        self.count: int = raw.get("count") or 0
        self.has_admin_access = not sub and raw.get("adminAccess") is not None
        self.admin_access = not sub and raw.get("adminAccess") is True
        self.selectors: list[Any] = as_list(raw.get("selectors"))
        self.tolerations: list[Mapping[str, Any]] = [
            as_mapping(t) for t in as_list(raw.get("tolerations"))
        ]
        capacity = raw.get("capacity")
        self.capacity_requests: dict[str, Fraction] | None = (
            None
            if capacity is None or as_mapping(capacity).get("requests") is None
            else {
                k: parse_quantity(v)
                for k, v in as_mapping(as_mapping(capacity).get("requests")).items()
            }
        )
        self.device_class: Manifest | None = None
        self.num_devices = 0
        self.all_devices: list[tuple[DeviceID, Device, Slice, Pool]] = []
        self.selected_sub = 0

    @property
    def full_name(self) -> str:
        """requestData.requestName: ``request`` or ``request/subrequest``."""
        return self.name if self.parent is None else f"{self.parent}/{self.name}"


class MatchAttribute:
    """matchAttributeConstraint: every device of the named requests has the same value."""

    __slots__ = ("attribute", "name", "num_devices", "requests")

    def __init__(self, requests: Sequence[str], name: str) -> None:
        self.requests = set(requests)
        self.name = name
        self.attribute: tuple[str, Any] | None = None
        self.num_devices = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, device: Device, device_id: DeviceID) -> bool:
        """constraint.add: whether the device may join (then it is counted)."""
        if not self._applies(request, sub):
            return True
        attribute = lookup_attribute(device, device_id, self.name)
        if attribute is None:
            return False
        if self.num_devices == 0:
            self.attribute = attribute
            self.num_devices = 1
            return True
        kind, value = attribute
        if kind not in ("string", "int", "bool", "version"):
            return False
        assert self.attribute is not None
        if self.attribute[0] != kind or self.attribute[1] != value:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub: str, device: Device, device_id: DeviceID) -> None:
        """constraint.remove: undoes an add."""
        if self._applies(request, sub):
            self.num_devices -= 1


class DistinctAttribute(MatchAttribute):
    """distinctAttributeConstraint: the devices of the named requests all differ."""

    __slots__ = ("seen",)

    def __init__(self, requests: Sequence[str], name: str) -> None:
        super().__init__(requests, name)
        self.seen: list[tuple[str, Any]] = []

    def add(self, request: str, sub: str, device: Device, device_id: DeviceID) -> bool:
        """Whether the device's value differs from all others so far (then it is kept)."""
        if not self._applies(request, sub):
            return True
        attribute = lookup_attribute(device, device_id, self.name)
        if attribute is None or attribute in self.seen:
            return False
        self.seen.append(attribute)
        return True

    def remove(self, request: str, sub: str, device: Device, device_id: DeviceID) -> None:
        """Undoes an add."""
        if not self._applies(request, sub):
            return
        attribute = lookup_attribute(device, device_id, self.name)
        if attribute in self.seen:
            self.seen.remove(attribute)


_ATTRIBUTE_KINDS = ("bool", "int", "string", "version", "bools", "ints", "strings", "versions")


def lookup_attribute(device: Device, device_id: DeviceID, name: str) -> tuple[str, Any] | None:
    """allocator_incubating.go: lookupAttribute. (value kind, value) of a fully qualified
    attribute; a bare attribute of the device counts under its driver's domain."""
    attribute = device.attributes.get(name)
    if attribute is None:
        domain, sep, ident = name.partition("/")
        if not sep or domain != device_id[0]:
            return None
        attribute = device.attributes.get(ident)
        if attribute is None:
            return None
    a = as_mapping(attribute)
    for kind in _ATTRIBUTE_KINDS:
        value = a.get(kind)
        if value is not None:
            return kind, tuple(value) if isinstance(value, list) else value
    return ("", None)


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """resourceclaim.ToleratesTaint."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def taint_prevents_allocation(device: Device, request: Request) -> bool:
    """allocator_incubating.go: taintPreventsAllocation (NoSchedule and NoExecute only)."""
    for taint in device.taints:
        if taint.get("effect") in ("NoExecute", "NoSchedule") and not any(
            tolerates(t, taint) for t in request.tolerations
        ):
            return True
    return False


def parse_requests(
    claim: Manifest,
    key: str,
    prioritized_list: bool,
    validate: Callable[[int, int, Request], None],
) -> dict[tuple[int, int], Request]:
    """Allocate's request loop for one claim: its requests and subrequests by index, each
    validated, within the claim's limit of results."""
    parsed: dict[tuple[int, int], Request] = {}
    devices = as_mapping(as_mapping(claim.get("spec")).get("devices"))
    min_per_claim = 0
    for ri, raw in enumerate(as_list(devices.get("requests"))):
        request = as_mapping(raw)
        name = request.get("name") or ""
        subs = as_list(request.get("firstAvailable"))
        if subs and not prioritized_list:
            raise AllocationError(
                f"claim {key}, request {name}: has subrequests, but the "
                "DRAPrioritizedList feature is disabled"
            )
        if subs:
            least = None
            for si, sub in enumerate(subs):
                r = Request(as_mapping(sub), as_mapping(sub).get("name") or "", name, sub=True)
                validate(ri, si, r)
                parsed[(ri, si)] = r
                least = r.num_devices if least is None else min(least, r.num_devices)
            per_request = least or 0
        else:
            r = Request(as_mapping(request.get("exactly")), name, None, sub=False)
            validate(ri, 0, r)
            parsed[(ri, 0)] = r
            per_request = r.num_devices
        if per_request > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
            raise AllocationError(
                f"claim {key}, request {name}: adding {per_request} devices exceeds the "
                f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} "
                "already accounted for"
            )
        min_per_claim += per_request
    return parsed
