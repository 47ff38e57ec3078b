"""The structured-parameters allocator that kube-scheduler v1.37.2 uses with its default gates.

k8s.io/dynamic-resource-allocation@v0.37.2/structured picks the first implementation whose
features cover the enabled ones; with DRADeviceBindingConditions, DRAConsumableCapacity and
DRAFractionalCapacityRange on (1.37's defaults) that is ``internal/incubating``
(allocator_incubating.go, consumable_capacity.go). This module follows it: the same
exhaustive depth-first search in the same order (claims, requests, subrequests in
``firstAvailable`` order, then pools sorted by driver and pool name, slices by name, devices
in slice order; only ascending device combinations within one request), so it chooses the
same devices.

Not the same: a consumable-capacity share ID is a uuid4 in kube (GenerateShareID); here it
is derived from the claim, request and device, so runs are reproducible.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from wasmsched.api.cel import CELError, SelectorCache
from wasmsched.plugins.dynamic_resources.slices import (
    Capacity,
    Device,
    DeviceID,
    Pool,
    Slice,
    device_id_text,
    gather_pools,
    node_matches,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Node

Manifest = Mapping[str, Any]

# resource/v1: AllocationResultsMaxSize, FirstAvailableDeviceRequestMaxSize.
ALLOCATION_RESULTS_MAX_SIZE = 32
FIRST_AVAILABLE_MAX_SIZE = 8

_SHARE_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://wasmsched.invalid/dra-share")


class AllocationError(Exception):
    """Allocation must stop: something is wrong with a claim or class (kube: an error from
    Allocate that is not ErrFailedAllocationOnNode; the plugin makes it an Error status)."""


class FailedOnNode(Exception):
    """structured.ErrFailedAllocationOnNode: not this node, maybe another."""


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: backtrack further."""


@dataclass(frozen=True)
class Features:
    """structured.Features (dynamicresources.go: AllocatorFeatures)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = True


@dataclass
class AllocatedState:
    """structured.AllocatedState: devices held by allocated (or in-flight) claims."""

    devices: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[DeviceID, str]] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def add_allocation(self, allocation: Manifest, consumable_capacity: bool) -> None:
        """allocateddevices.go: foreachAllocatedDevice over one claim's allocation."""
        for result in _l(_m(allocation.get("devices")).get("results")):
            r = _m(result)
            if r.get("adminAccess") is True:
                continue
            device_id = (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
            share = r.get("shareID")
            if consumable_capacity and share is not None:
                self.shared.add((device_id, str(share)))
                consumed = r.get("consumedCapacity")
                if consumed is not None:
                    held = self.capacity.setdefault(device_id, {})
                    for name, value in _m(consumed).items():
                        held[name] = held.get(name, Fraction(0)) + _quantity(value)
                continue
            self.devices.add(device_id)

    def is_allocated(self, device_id: DeviceID) -> bool:
        """internal.IsDeviceAllocated."""
        return device_id in self.devices or any(d == device_id for d, _ in self.shared)


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _l(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _quantity(value: Any) -> Fraction:
    from wasmsched.api.quantity import parse_quantity

    return parse_quantity(value)


_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""))
_SMALL_SUFFIXES = ((-3, "m"), (-6, "u"), (-9, "n"))


def is_binary(text: Any) -> bool:
    """Whether a quantity text has resource.BinarySI format (a Ki..Ei suffix)."""
    return isinstance(text, str) and text.endswith(_BINARY_SUFFIXES)


def format_quantity(value: Fraction, binary: bool = False) -> str:
    """Quantity.String() of ``value`` in the format of the quantity it came from: BinarySI
    as the largest power of 1024 that divides it (whole values of at least 1024), else
    DecimalSI with the largest power of 1000 that leaves a whole mantissa."""
    if binary and value.denominator == 1 and abs(value) >= 1024:
        amount, exponent = value.numerator, 0
        while exponent < 6 and amount % 1024 == 0:
            amount //= 1024
            exponent += 1
        return f"{amount}{_BINARY_SUFFIXES[exponent - 1]}" if exponent else str(amount)
    if value == 0:
        return "0"
    for power, suffix in _DECIMAL_SUFFIXES:
        scaled = value / Fraction(10) ** power
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    for power, suffix in _SMALL_SUFFIXES:
        scaled = value / Fraction(10) ** power
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    scaled = value * 10**9
    return f"{-(-scaled.numerator // scaled.denominator)}n"


def claim_key(claim: Manifest) -> str:
    """klog.KObj of a claim: ``namespace/name``."""
    meta = _m(claim.get("metadata"))
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


class _Request:
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
        self.selectors: list[Any] = _l(raw.get("selectors"))
        self.tolerations: list[Mapping[str, Any]] = [_m(t) for t in _l(raw.get("tolerations"))]
        capacity = raw.get("capacity")
        self.capacity_requests: dict[str, Fraction] | None = (
            None
            if capacity is None or _m(capacity).get("requests") is None
            else {k: _quantity(v) for k, v in _m(_m(capacity).get("requests")).items()}
        )
        self.device_class: Manifest | None = None
        self.num_devices = 0
        self.all_devices: list[tuple[DeviceID, Device, Slice, Pool]] = []
        self.selected_sub = 0

    @property
    def full_name(self) -> str:
        """requestData.requestName: ``request`` or ``request/subrequest``."""
        return self.name if self.parent is None else f"{self.parent}/{self.name}"


class _MatchAttribute:
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
        if self._applies(request, sub):
            self.num_devices -= 1


class _DistinctAttribute(_MatchAttribute):
    """distinctAttributeConstraint: the devices of the named requests all differ."""

    __slots__ = ("seen",)

    def __init__(self, requests: Sequence[str], name: str) -> None:
        super().__init__(requests, name)
        self.seen: list[tuple[str, Any]] = []

    def add(self, request: str, sub: str, device: Device, device_id: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attribute = lookup_attribute(device, device_id, self.name)
        if attribute is None or attribute in self.seen:
            return False
        self.seen.append(attribute)
        return True

    def remove(self, request: str, sub: str, device: Device, device_id: DeviceID) -> None:
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
    a = _m(attribute)
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


def taint_prevents_allocation(device: Device, request: _Request) -> bool:
    """allocator_incubating.go: taintPreventsAllocation (NoSchedule and NoExecute only)."""
    for taint in device.taints:
        if taint.get("effect") in ("NoExecute", "NoSchedule") and not any(
            tolerates(t, taint) for t in request.tolerations
        ):
            return True
    return False


# --- consumable capacity (consumable_capacity.go) --------------------------------------------


def _round_up(requested: Fraction, capacity: Capacity, fractional: bool) -> Fraction:
    """calculateConsumedCapacity for one requested value."""
    if not capacity.has_policy:
        return requested
    if capacity.valid_min is not None:
        low = capacity.valid_min
        if requested < low:
            return low
        step = capacity.step
        if step is None:
            return requested
        unit = Fraction(1, 1000) if fractional and _milli_ok(capacity) else Fraction(1)
        r, s, m = _to_unit(requested, unit), _to_unit(step, unit), _to_unit(low, unit)
        added = r - m
        n = -(-added // s)
        return (m + s * n) * unit
    if capacity.valid_values is not None:
        for v in capacity.valid_values:
            if requested <= v:
                return v
        return requested
    return requested


def _to_unit(value: Fraction, unit: Fraction) -> int:
    """Quantity.Value() / MilliValue(): rounded up to a whole number of units."""
    scaled = value / unit
    return -(-scaled.numerator // scaled.denominator)


def _milli_ok(capacity: Capacity) -> bool:
    """useMilli: every range bound representable in milli units, the step at least 1m."""
    for q in (capacity.valid_min, capacity.valid_max, capacity.step):
        if q is not None and (q * 1000).denominator != 1:
            return False
    return not (capacity.step is not None and capacity.step * 1000 < 1)


def _violates(value: Fraction, capacity: Capacity, fractional: bool) -> bool:
    """violatesPolicy."""
    if not capacity.has_policy:
        return False
    if capacity.default is not None and value == capacity.default:
        return False
    if capacity.has_range:
        if capacity.valid_max is not None and value > capacity.valid_max:
            return True
        if capacity.step is not None and capacity.valid_min is not None:
            unit = Fraction(1, 1000) if fractional and _milli_ok(capacity) else Fraction(1)
            if unit == Fraction(1, 1000) and (value * 1000).denominator != 1:
                return True
            r = _to_unit(value, unit)
            s = _to_unit(capacity.step, unit)
            m = _to_unit(capacity.valid_min, unit)
            return (r - m) % s != 0
        return False
    if capacity.valid_values:
        return value not in capacity.valid_values
    return False


def consumed_capacity(
    requests: dict[str, Fraction] | None, device: Device, fractional: bool
) -> dict[str, Fraction]:
    """GetConsumedCapacityFromRequest: what a share of ``device`` takes of each capacity."""
    out: dict[str, Fraction] = {}
    for name, capacity in device.capacity.items():
        requested = requests.get(name) if requests else None
        if requested is None:
            out[name] = capacity.default if capacity.default is not None else capacity.value
        else:
            out[name] = _round_up(requested, capacity, fractional)
    return out


def _format_source(r: _Request, device: Device, name: str, consumed: Fraction) -> Any:
    """The quantity text whose format the consumed amount keeps (calculateConsumedCapacity:
    the request's, the default's, the range's min or step, or the valid value chosen)."""
    raw_capacity = _m(_m(device.raw.get("capacity")).get(name))
    policy = _m(raw_capacity.get("requestPolicy"))
    requested = _m(_m(r.raw.get("capacity")).get("requests")).get(name)
    if requested is None:
        return policy.get("default", raw_capacity.get("value"))
    valid_range = _m(policy.get("validRange"))
    capacity = device.capacity[name]
    if valid_range.get("min") is not None:
        if capacity.valid_min is not None and consumed == capacity.valid_min:
            return valid_range["min"]
        return valid_range.get("step", requested)
    for text, value in zip(
        _l(policy.get("validValues")), capacity.valid_values or (), strict=False
    ):
        if value == consumed:
            return text
    return requested


def request_fits_capacity(
    current: Mapping[str, Fraction],
    requests: dict[str, Fraction] | None,
    device: Device,
    allocating: Mapping[str, Fraction],
    fractional: bool,
) -> bool:
    """CmpRequestOverCapacity: the request's share fits what is left of every capacity."""
    if requests and any(name not in device.capacity for name in requests):
        return False
    consumed = consumed_capacity(requests, device, fractional)
    for name, capacity in device.capacity.items():
        value = consumed[name]
        if value < 0:
            raise AllocationError(f'capacity "{name}": capacity value is negative')
        if _violates(value, capacity, fractional):
            return False
        total = current.get(name, Fraction(0)) + value + allocating.get(name, Fraction(0))
        if total > capacity.value:
            return False
    return True


# --- the allocator -----------------------------------------------------------------------------


class Allocator:
    """structured.Allocator (incubating): built once per scheduling cycle from the allocated
    state, the classes and the slices; ``allocate`` is called per node."""

    def __init__(
        self,
        features: Features,
        allocated: AllocatedState,
        classes: Mapping[str, Manifest],
        slices_for: Any,
        all_slices: Sequence[Slice],
        selectors: SelectorCache,
    ) -> None:
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self._slices_for = slices_for
        self.all_slices = all_slices
        self.selectors = selectors
        self._available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}

    def allocate(self, node: Node, claims: Sequence[Manifest]) -> list[dict[str, Any]] | None:
        """Allocate: one AllocationResult per claim, or None when they do not fit on the
        node; AllocationError for a broken claim or class, FailedOnNode when only invalid
        pools were in the way."""
        return _Run(self, node, claims).run()


class _Run:
    """allocator_incubating.go: allocator, the state of one Allocate call."""

    def __init__(self, owner: Allocator, node: Node, claims: Sequence[Manifest]) -> None:
        self.a = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.matches: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.results: list[list[dict[str, Any]]] = [[] for _ in claims]
        self.result_devices: list[list[tuple[Device, Slice]]] = [[] for _ in claims]
        self.shares = 0

    # --- setup -------------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]] | None:
        a = self.a
        slices_for_node = a._slices_for(self.node.name)
        self.pools = gather_pools(
            slices_for_node, self.node, a.all_slices, self.features.partitionable_devices
        )
        for ci, claim in enumerate(self.claims):
            key = claim_key(claim)
            devices = _m(_m(claim.get("spec")).get("devices"))
            min_per_claim = 0
            for ri, raw in enumerate(_l(devices.get("requests"))):
                request = _m(raw)
                name = request.get("name") or ""
                subs = _l(request.get("firstAvailable"))
                if subs and not self.features.prioritized_list:
                    raise AllocationError(
                        f"claim {key}, request {name}: has subrequests, but the "
                        "DRAPrioritizedList feature is disabled"
                    )
                if subs:
                    least = None
                    for si, sub in enumerate(subs):
                        r = _Request(_m(sub), _m(sub).get("name") or "", name, sub=True)
                        self._validate(ci, ri, si, r, key)
                        self.requests[(ci, ri, si)] = r
                        least = r.num_devices if least is None else min(least, r.num_devices)
                    per_request = least or 0
                else:
                    r = _Request(_m(request.get("exactly")), name, None, sub=False)
                    self._validate(ci, ri, 0, r, key)
                    self.requests[(ci, ri, 0)] = r
                    per_request = r.num_devices
                if per_request > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    raise AllocationError(
                        f"claim {key}, request {name}: adding {per_request} devices exceeds the "
                        f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} "
                        "already accounted for"
                    )
                min_per_claim += per_request
            constraints: list[_MatchAttribute] = []
            for i, raw in enumerate(_l(devices.get("constraints"))):
                c = _m(raw)
                requests = [str(r) for r in _l(c.get("requests"))]
                if c.get("matchAttribute") is not None:
                    constraints.append(_MatchAttribute(requests, str(c["matchAttribute"])))
                elif c.get("distinctAttribute") is not None:
                    constraints.append(_DistinctAttribute(requests, str(c["distinctAttribute"])))
                else:
                    raise AllocationError(
                        f"claim {key}, constraint #{i}: empty constraint (unsupported "
                        "constraint type?)"
                    )
            self.constraints.append(constraints)
        if not self._allocate_one(0, 0, 0, 0, False, (0, 0, 0)):
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, ci: int, ri: int, si: int, r: _Request, key: str) -> None:
        """validateDeviceRequest."""
        if r.raw.get("derivedAttributes"):
            raise AllocationError(
                f"claim {key}, request {r.name}: cannot handle request with derived "
                "attributes, the feature is disabled"
            )
        for i, selector in enumerate(r.selectors):
            if _m(selector).get("cel") is None:
                raise AllocationError(
                    f"claim {key}, request {r.name}, selector #{i}: CEL expression empty "
                    "(unsupported selector type?)"
                )
        if not self.features.admin_access and r.has_admin_access:
            raise AllocationError(
                f"claim {key}, request {r.name}: admin access is requested, but the feature "
                "is disabled"
            )
        if not self.features.consumable_capacity and r.capacity_requests is not None:
            raise AllocationError(
                f"claim {key}, request {r.name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )
        if not r.class_name:
            raise AllocationError(
                f"claim {key}, request {r.name}: missing device class name (unsupported "
                "request type?)"
            )
        device_class = self.a.classes.get(r.class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {key}, request {r.name}: could not retrieve device class "
                f'{r.class_name}: deviceclasses.resource.k8s.io "{r.class_name}" not found'
            )
        r.device_class = device_class
        if r.mode == "ExactCount":
            r.num_devices = r.count
        elif r.mode == "All":
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {key}, request {r.name}: asks for all devices, but resource "
                        f"pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {key}, request {r.name}: asks for all devices, but resource "
                        f"pool {pool.pool_id} is currently invalid"
                    )
                for s in pool.slices_targeting_node:
                    for device in s.devices:
                        device_id = (s.driver, s.pool, device.name)
                        if not self._selectable((ci, ri, si), r, s, device, device_id):
                            continue
                        if self.features.consumable_capacity and not request_fits_capacity(
                            {},
                            r.capacity_requests,
                            device,
                            {},
                            self.features.fractional_capacity_range,
                        ):
                            continue
                        r.all_devices.append((device_id, device, s, pool))
            r.num_devices = len(r.all_devices)
        else:
            raise AllocationError(f"claim {key}, request {r.name}: unsupported count mode {r.mode}")

    # --- matching ----------------------------------------------------------------------------

    def _selectable(
        self, rk: tuple[int, int, int], r: _Request, s: Slice, device: Device, device_id: DeviceID
    ) -> bool:
        """isSelectable: the class's selectors, then the request's, then per-device node
        selection; the answer is kept per (device, request)."""
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        key = (device_id, rk)
        hit = self.matches.get(key)
        if hit is not None:
            return hit
        ok = (
            r.device_class is None
            or self._selectors_match(rk, device, device_id, r.device_class, _class_selectors(r))
        ) and self._selectors_match(rk, device, device_id, None, r.selectors)
        if ok and s.per_device:
            ok = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
        self.matches[key] = ok
        return ok

    def _selectors_match(
        self,
        rk: tuple[int, int, int],
        device: Device,
        device_id: DeviceID,
        device_class: Manifest | None,
        selectors: list[Any],
    ) -> bool:
        """selectorsMatch, with kube's error wording."""
        who = (
            f"class {_m(device_class.get('metadata')).get('name')}"
            if device_class is not None
            else f"claim {claim_key(self.claims[rk[0]])}"
        )
        for i, selector in enumerate(selectors):
            expression = _m(_m(selector).get("cel")).get("expression") or ""
            try:
                compiled = self.a.selectors.get(expression)
            except CELError as err:
                raise AllocationError(
                    f"{who}: selector #{i}: CEL compile error: {err.problem}"
                ) from None
            try:
                if not compiled.matches(device.cel_input()):
                    return False
            except CELError as err:
                raise AllocationError(
                    f"{who}: selector #{i} on device {device_id_text(device_id)}: CEL runtime "
                    f"error: {err.problem}"
                ) from None
        return True

    # --- the search ----------------------------------------------------------------------------

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated.devices or bool(self.allocating.get(device_id))

    def _allocate_one(
        self,
        ci: int,
        ri: int,
        si: int,
        di: int,
        in_sub: bool,
        start: tuple[int, int, int],
    ) -> bool:
        """allocateOne: one more device for (claim, request, subrequest, device index);
        True when everything after it got allocated too."""
        if ci >= len(self.claims):
            return True
        requests = _l(_m(_m(self.claims[ci].get("spec")).get("devices")).get("requests"))
        if ri >= len(requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False
        r = self.requests[(ci, ri, si)]
        if not in_sub and r.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    done = self._allocate_one(ci, ri, sub, di, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if done:
                    self.requests[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded()
            return False
        do_all = r.mode == "All"
        if do_all and not r.all_devices:
            return False
        if di >= r.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if r.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded()
        if do_all:
            device_id, device, s, pool = r.all_devices[di]
            undo = self._allocate_device(ci, ri, si, r, device_id, device, s, pool, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        rk = (ci, ri, si)
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            slice_start = start[1] if pi == start[0] else 0
            for sli in range(slice_start, len(pool.slices_targeting_node)):
                s = pool.slices_targeting_node[sli]
                device_start = start[2] if pi == start[0] and sli == start[1] else 0
                for dvi in range(device_start, len(s.devices)):
                    device = s.devices[dvi]
                    device_id = (pool.driver, pool.name, device.name)
                    if r.admin_access:
                        if ci in self.allocating.get(device_id, ()):
                            continue
                    elif self._in_use(device_id):
                        continue
                    if not self._selectable(rk, r, s, device, device_id):
                        continue
                    if self.features.consumable_capacity and not self._capacity_fits(
                        r, device_id, device
                    ):
                        continue
                    undo = self._allocate_device(
                        ci, ri, si, r, device_id, device, s, pool, must=False
                    )
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub, (pi, sli, dvi + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _capacity_fits(self, r: _Request, device_id: DeviceID, device: Device) -> bool:
        """allocator.CmpRequestOverCapacity."""
        return request_fits_capacity(
            self.a.allocated.capacity.get(device_id, {}),
            r.capacity_requests,
            device,
            self.allocating_capacity.get(device_id, {}),
            self.features.fractional_capacity_range,
        )

    def _capacity_in_use(self, device_id: DeviceID) -> bool:
        """deviceCapacityInUse."""
        allocated = self.a.allocated
        return (
            device_id in allocated.capacity
            or any(d == device_id for d, _ in allocated.shared)
            or device_id in self.allocating_capacity
        )

    def _allocate_device(
        self,
        ci: int,
        ri: int,
        si: int,
        r: _Request,
        device_id: DeviceID,
        device: Device,
        s: Slice,
        pool: Pool,
        must: bool,
    ) -> Any:
        """allocateDevice: the undo function when the device was taken, else None."""
        multiple = self.features.consumable_capacity and device.allow_multiple
        if not multiple and r.admin_access and ci in self.allocating.get(device_id, ()):
            return None
        if not r.admin_access and self._in_use(device_id):
            return None
        if not self.features.partitionable_devices and device.consumes:
            return None
        skip_counters = multiple and self._capacity_in_use(device_id)
        undo_steps: list[Any] = []

        def undo() -> None:
            for step in reversed(undo_steps):
                step()

        if not skip_counters and device.consumes:
            if not self._reserve_counters(device, pool):
                return None
            undo_steps.append(lambda: self._release_counters(device, pool))
        base, sub = (r.name, "") if r.parent is None else (r.parent, r.name)
        if self.features.device_taints and taint_prevents_allocation(device, r):
            undo()
            return None
        for constraint in self.constraints[ci]:
            if not constraint.add(base, sub, device, device_id):
                undo()
                if must:
                    raise AllocationError(
                        f"claim {claim_key(self.claims[ci])}, request {r.name}: cannot add "
                        f"device {device_id_text(device_id)} because a claim constraint would "
                        "not be satisfied"
                    )
                return None
            undo_steps.append(
                lambda c=constraint: c.remove(base, sub, device, device_id)  # type: ignore[misc]
            )
        if not multiple:
            self.allocating.setdefault(device_id, set()).add(ci)
            undo_steps.append(lambda: self.allocating[device_id].discard(ci))
        consumed: dict[str, Fraction] = {}
        share: str | None = None
        if self.features.consumable_capacity:
            if not self._capacity_fits(r, device_id, device):
                undo()
                return None
            if multiple:
                consumed = consumed_capacity(
                    r.capacity_requests, device, self.features.fractional_capacity_range
                )
                self.shares += 1
                share = str(
                    uuid.uuid5(
                        _SHARE_NAMESPACE,
                        f"{claim_key(self.claims[ci])}/{r.full_name}/"
                        f"{device_id_text(device_id)}/{self.shares}",
                    )
                )
                existed = device_id in self.allocating_capacity
                held = self.allocating_capacity.setdefault(device_id, {})
                for name, value in consumed.items():
                    held[name] = held.get(name, Fraction(0)) + value

                def release_capacity() -> None:
                    held = self.allocating_capacity[device_id]
                    for name, value in consumed.items():
                        held[name] -= value
                        if held[name] == 0:
                            del held[name]
                    if not held and not existed:
                        del self.allocating_capacity[device_id]

                undo_steps.append(release_capacity)
        result: dict[str, Any] = {
            "request": r.full_name,
            "driver": device_id[0],
            "pool": device_id[1],
            "device": device_id[2],
        }
        if r.admin_access:
            result["adminAccess"] = True
        if r.tolerations:
            result["tolerations"] = [dict(t) for t in r.tolerations]
        if share is not None:
            result["shareID"] = share
        if consumed:
            result["consumedCapacity"] = {
                k: format_quantity(v, is_binary(_format_source(r, device, k, v)))
                for k, v in consumed.items()
            }
        if self.features.device_binding_and_status:
            if device.binding_conditions:
                result["bindingConditions"] = list(device.binding_conditions)
            if device.binding_failure_conditions:
                result["bindingFailureConditions"] = list(device.binding_failure_conditions)
        results, placed = self.results[ci], self.result_devices[ci]
        results.append(result)
        placed.append((device, s))

        def drop_result() -> None:
            results.pop()
            placed.pop()

        undo_steps.append(drop_result)
        return undo

    # --- counters (checkAvailableCounters) ----------------------------------------------------

    def _available(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        cached = self.a._available_counters.get(pool.pool_id)
        if cached is not None:
            return cached
        available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        for group in (pool.slices_targeting_node, pool.slices_not_targeting_node):
            for s in group:
                for d in s.devices:
                    if not self.a.allocated.is_allocated((s.driver, s.pool, d.name)):
                        continue
                    for set_name, counters in d.consumes:
                        counter_set = available.get(set_name, {})
                        for name, value in counters.items():
                            if name in counter_set:
                                counter_set[name] -= value
        self.a._available_counters[pool.pool_id] = available
        return available

    def _reserve_counters(self, device: Device, pool: Pool) -> bool:
        available = self._available(pool)
        consumed = self.consumed_counters.setdefault(pool.pool_id, {})
        for set_name, counters in device.consumes:
            held = consumed.setdefault(set_name, {})
            for name, value in counters.items():
                held[name] = held.get(name, Fraction(0)) + value
        for set_name, counters in available.items():
            held = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < held.get(name, Fraction(0)):
                    self._release_counters(device, pool)
                    return False
        return True

    def _release_counters(self, device: Device, pool: Pool) -> None:
        consumed = self.consumed_counters[pool.pool_id]
        for set_name, counters in device.consumes:
            held = consumed[set_name]
            for name, value in counters.items():
                held[name] -= value

    # --- the result ----------------------------------------------------------------------------

    def _result(self, ci: int, claim: Manifest) -> dict[str, Any]:
        devices = _m(_m(claim.get("spec")).get("devices"))
        requests = _l(devices.get("requests"))
        config: list[dict[str, Any]] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        chosen: list[_Request] = []
        for ri in range(len(requests)):
            r = self.requests[(ci, ri, 0)]
            if r.parent is not None:
                r = self.requests[(ci, ri, r.selected_sub)]
            chosen.append(r)
            if r.device_class is None:
                continue
            class_name = str(_m(r.device_class.get("metadata")).get("name"))
            span = class_ranges.get(class_name)
            if span is not None:
                for i in range(*span):
                    config[i]["requests"].append(r.full_name)
                continue
            first = len(config)
            for c in _l(_m(r.device_class.get("spec")).get("config")):
                entry = {"source": "FromClass", "requests": [r.full_name]}
                entry.update({k: v for k, v in _m(c).items() if k != "requests"})
                config.append(entry)
            class_ranges[class_name] = (first, len(config))
        names = [str(_m(q).get("name") or "") for q in requests]
        sub_names = [r.full_name for r in chosen]
        for c in _l(devices.get("config")):
            cfg = _m(c)
            wanted = [str(x) for x in _l(cfg.get("requests"))]
            entry = {"source": "FromClaim", "requests": wanted}
            entry.update({k: v for k, v in cfg.items() if k != "requests"})
            if not wanted:
                config.append(entry)
                continue
            for i, name in enumerate(names):
                if name in wanted or (chosen[i].parent is not None and sub_names[i] in wanted):
                    config.append(entry)
                    break
        for entry in config:
            listed = entry["requests"]
            if listed and all(
                names[i] in listed or (chosen[i].parent is not None and sub_names[i] in listed)
                for i in range(len(names))
            ):
                entry["requests"] = []
        for entry in config:
            if not entry["requests"]:
                del entry["requests"]
        out: dict[str, Any] = {"devices": {"results": self.results[ci]}}
        if config:
            out["devices"]["config"] = config
        selector = self._node_selector(ci)
        if selector is not None:
            out["nodeSelector"] = selector
        return out

    def _node_selector(self, ci: int) -> dict[str, Any] | None:
        """createNodeSelector."""
        fields: list[dict[str, Any]] = []
        expressions: list[dict[str, Any]] = []
        for device, s in self.result_devices[ci]:
            if s.per_device:
                node_name, selector = device.node_name, device.raw.get("nodeSelector")
            else:
                node_name, selector = s.node_name, _m(s.raw.get("spec")).get("nodeSelector")
            if node_name or device.binds_to_node:
                return {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {
                                    "key": "metadata.name",
                                    "operator": "In",
                                    "values": [self.node.name],
                                }
                            ]
                        }
                    ]
                }
            terms = _l(_m(selector).get("nodeSelectorTerms"))
            if len(terms) == 1:
                first = _m(terms[0])
                _add_requirements(_l(first.get("matchFields")), fields)
                _add_requirements(_l(first.get("matchExpressions")), expressions)
            elif len(terms) > 1:
                raise AllocationError(
                    f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms"
                )
        if not fields and not expressions:
            return None
        term: dict[str, Any] = {}
        if expressions:
            term["matchExpressions"] = expressions
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}


def _class_selectors(r: _Request) -> list[Any]:
    assert r.device_class is not None
    return _l(_m(r.device_class.get("spec")).get("selectors"))


def _add_requirements(source: list[Any], into: list[dict[str, Any]]) -> None:
    """addNewNodeSelectorRequirements: each requirement once (values compared as sets)."""
    for raw in source:
        req = _m(raw)
        values = set(_l(req.get("values")))
        if not any(
            e.get("key") == req.get("key")
            and e.get("operator") == req.get("operator")
            and set(_l(e.get("values"))) == values
            for e in into
        ):
            into.append(dict(req))
