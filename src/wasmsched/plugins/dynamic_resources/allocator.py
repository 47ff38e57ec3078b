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

import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from hashlib import sha1
from typing import TYPE_CHECKING, Any

from wasmsched.api.cel import CELError, DeviceSelector, SelectorCache
from wasmsched.plugins.dynamic_resources.capacity import (
    CapacityError,
    consumed_capacity,
    format_quantity,
    format_source,
    is_binary,
    request_fits_capacity,
)
from wasmsched.plugins.dynamic_resources.claims import as_list, as_mapping, requests_of
from wasmsched.plugins.dynamic_resources.requests import (
    ALLOCATION_RESULTS_MAX_SIZE,
    DistinctAttribute,
    MatchAttribute,
    Request,
    parse_requests,
    taint_prevents_allocation,
)

# Re-exported: the plugin and the tests catch it as the allocator's error.
from wasmsched.plugins.dynamic_resources.requests import AllocationError as AllocationError
from wasmsched.plugins.dynamic_resources.results import NodeSelectorError, allocation_result
from wasmsched.plugins.dynamic_resources.slices import (
    Device,
    DeviceID,
    Pool,
    Slice,
    device_id_text,
    gather_pools,
    node_matches,
)
from wasmsched.plugins.dynamic_resources.tracker import AllocatedState

if TYPE_CHECKING:
    from wasmsched.api.objects import Node

Manifest = Mapping[str, Any]

# resource/v1: FirstAvailableDeviceRequestMaxSize.
FIRST_AVAILABLE_MAX_SIZE = 8

_SHARE_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://wasmsched.invalid/dra-share")
_SHARE_PREFIX = _SHARE_NAMESPACE.bytes


def share_id(claim: str, request: str, device: str, number: int) -> str:
    """A consumable-capacity share's ID: the claim's key, the request's full name, the
    device and the share's number within one Allocate call (kube: a uuid4, GenerateShareID
    in consumable_capacity.go)."""
    # uuid.uuid5's value, spelled out: a kept answer is renamed for every pod on every
    # node it is kept for (answers.py), and the UUID object was most of that.
    digest = bytearray(
        sha1(_SHARE_PREFIX + f"{claim}/{request}/{device}/{number}".encode()).digest()[:16]
    )
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


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


def claim_key(claim: Manifest) -> str:
    """klog.KObj of a claim: ``namespace/name``."""
    meta = as_mapping(claim.get("metadata"))
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


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
        pools_for: Callable[[Node, bool], list[Pool]] | None = None,
    ) -> None:
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self._slices_for = slices_for
        self.all_slices = all_slices
        self.selectors = selectors
        # GatherPools for a node, kept across cycles by the caller (SliceIndex.pools_for);
        # without it gathered on each call.
        self._pools_for = pools_for
        # Per claim (by identity): its node-independent requests (_Run._claim_requests),
        # and the compiled selectors by expression, for every node of the cycle.
        self._requests: dict[int, tuple[Manifest, dict[tuple[int, int], Request]]] = {}
        self._compiled: dict[str, DeviceSelector] = {}
        self._available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}

    def allocate(self, node: Node, claims: Sequence[Manifest]) -> list[dict[str, Any]] | None:
        """Allocate: one AllocationResult per claim, or None when they do not fit on the
        node; AllocationError for a broken claim or class, FailedOnNode when only invalid
        pools were in the way."""
        return _Run(self, node, claims).run()

    def allocate_numbering_shares(
        self, node: Node, claims: Sequence[Manifest]
    ) -> tuple[list[dict[str, Any]] | None, dict[str, int]]:
        """allocate, and the number of each share ID it made (share_id's ``number``), so
        that an answer kept for other claims of the same specs can be given their IDs."""
        run = _Run(self, node, claims)
        return run.run(), run.share_numbers


class _Run:
    """allocator_incubating.go: allocator, the state of one Allocate call."""

    def __init__(self, owner: Allocator, node: Node, claims: Sequence[Manifest]) -> None:
        self.a = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], Request] = {}
        self.constraints: list[list[MatchAttribute]] = []
        self.matches: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.keys = [claim_key(c) for c in claims]
        # Each claim's number of requests (allocateOne's len(claim.Spec.Devices.Requests)).
        self.request_counts = [len(requests_of(c)) for c in claims]
        self.results: list[list[dict[str, Any]]] = [[] for _ in claims]
        self.result_devices: list[list[tuple[Device, Slice]]] = [[] for _ in claims]
        self.shares = 0
        self.share_numbers: dict[str, int] = {}

    # --- setup -------------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]] | None:
        a = self.a
        partitionable = self.features.partitionable_devices
        if a._pools_for is not None:
            self.pools = a._pools_for(self.node, partitionable)
        else:
            self.pools = gather_pools(
                a._slices_for(self.node.name), self.node, a.all_slices, partitionable
            )
        for ci, claim in enumerate(self.claims):
            key = self.keys[ci]
            devices = as_mapping(as_mapping(claim.get("spec")).get("devices"))
            for (ri, si), r in self._claim_requests(ci, claim, key).items():
                self.requests[(ci, ri, si)] = r
            constraints: list[MatchAttribute] = []
            for i, raw in enumerate(as_list(devices.get("constraints"))):
                c = as_mapping(raw)
                requests = [str(r) for r in as_list(c.get("requests"))]
                if c.get("matchAttribute") is not None:
                    constraints.append(MatchAttribute(requests, str(c["matchAttribute"])))
                elif c.get("distinctAttribute") is not None:
                    constraints.append(DistinctAttribute(requests, str(c["distinctAttribute"])))
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
        out = []
        for ci, claim in enumerate(self.claims):
            n = len(requests_of(claim))
            chosen = []
            for ri in range(n):
                r = self.requests[(ci, ri, 0)]
                chosen.append(r if r.parent is None else self.requests[(ci, ri, r.selected_sub)])
            try:
                out.append(
                    allocation_result(
                        claim, chosen, self.results[ci], self.result_devices[ci], self.node.name
                    )
                )
            except NodeSelectorError as err:
                raise AllocationError(
                    f"create NodeSelector for claim {as_mapping(claim.get('metadata')).get('name')}: {err}"
                ) from None
        return out

    def _claim_requests(self, ci: int, claim: Manifest, key: str) -> dict[tuple[int, int], Request]:
        """The claim's requests by (request, subrequest) index, validated. Requests of
        ExactCount mode do not depend on the node (the search only sets a parent's
        ``selected_sub``, before reading it), so a claim whose requests all are is set up
        once per Allocator, not once per node."""
        cached = self.a._requests.get(id(claim))
        if cached is not None and cached[0] is claim:
            return cached[1]
        parsed = parse_requests(
            claim,
            key,
            self.features.prioritized_list,
            lambda ri, si, r: self._validate(ci, ri, si, r, key),
        )
        if all(r.mode == "ExactCount" for r in parsed.values()):
            self.a._requests[id(claim)] = (claim, parsed)
        return parsed

    def _validate(self, ci: int, ri: int, si: int, r: Request, key: str) -> None:
        """validateDeviceRequest."""
        if r.raw.get("derivedAttributes"):
            raise AllocationError(
                f"claim {key}, request {r.name}: cannot handle request with derived "
                "attributes, the feature is disabled"
            )
        for i, selector in enumerate(r.selectors):
            if as_mapping(selector).get("cel") is None:
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
                        if self.features.consumable_capacity and not _fits(
                            key, r, device_id, device, {}, {}, self.features
                        ):
                            continue
                        r.all_devices.append((device_id, device, s, pool))
            r.num_devices = len(r.all_devices)
        else:
            raise AllocationError(f"claim {key}, request {r.name}: unsupported count mode {r.mode}")

    # --- matching ----------------------------------------------------------------------------

    def _selectable(
        self, rk: tuple[int, int, int], r: Request, s: Slice, device: Device, device_id: DeviceID
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
        compiled_by_expression = self.a._compiled
        for i, selector in enumerate(selectors):
            expression = as_mapping(as_mapping(selector).get("cel")).get("expression") or ""
            compiled = compiled_by_expression.get(expression)
            if compiled is None:
                try:
                    compiled = self.a.selectors.get(expression)
                except CELError as err:
                    raise AllocationError(
                        f"{self._who(rk, device_class)}: selector #{i}: CEL compile error: "
                        f"{err.problem}"
                    ) from None
                compiled_by_expression[expression] = compiled
            try:
                if not device.selector_matches(compiled):
                    return False
            except CELError as err:
                raise AllocationError(
                    f"{self._who(rk, device_class)}: selector #{i} on device "
                    f"{device_id_text(device_id)}: CEL runtime error: {err.problem}"
                ) from None
        return True

    def _who(self, rk: tuple[int, int, int], device_class: Manifest | None) -> str:
        """Whose selector failed, as kube's errors name it."""
        if device_class is not None:
            return f"class {as_mapping(device_class.get('metadata')).get('name')}"
        return f"claim {self.keys[rk[0]]}"

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
        if ri >= self.request_counts[ci]:
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
                        ci, r, device_id, device
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

    def _capacity_fits(self, ci: int, r: Request, device_id: DeviceID, device: Device) -> bool:
        """allocator.CmpRequestOverCapacity."""
        return _fits(
            self.keys[ci],
            r,
            device_id,
            device,
            self.a.allocated.capacity.get(device_id, {}),
            self.allocating_capacity.get(device_id, {}),
            self.features,
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
        r: Request,
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
            undo_steps.append(functools.partial(constraint.remove, base, sub, device, device_id))
        if not multiple:
            self.allocating.setdefault(device_id, set()).add(ci)
            undo_steps.append(lambda: self.allocating[device_id].discard(ci))
        consumed: dict[str, Fraction] = {}
        share: str | None = None
        if self.features.consumable_capacity:
            if not self._capacity_fits(ci, r, device_id, device):
                undo()
                return None
            if multiple:
                consumed = consumed_capacity(
                    r.capacity_requests, device, self.features.fractional_capacity_range
                )
                self.shares += 1
                share = share_id(self.keys[ci], r.full_name, device_id_text(device_id), self.shares)
                self.share_numbers[share] = self.shares
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
                k: format_quantity(v, is_binary(format_source(r, device, k, v)))
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


def _class_selectors(r: Request) -> list[Any]:
    assert r.device_class is not None
    return as_list(as_mapping(r.device_class.get("spec")).get("selectors"))


def _fits(
    key: str,
    r: Request,
    device_id: DeviceID,
    device: Device,
    current: Mapping[str, Fraction],
    allocating: Mapping[str, Fraction],
    features: Features,
) -> bool:
    """request_fits_capacity, its failure worded as the allocator's error. Without capacity
    requests and with nothing of the device held, the answer depends on the device alone
    and is kept on it."""
    fractional = features.fractional_capacity_range
    memo = (
        device.default_capacity_fit
        if r.capacity_requests is None and not current and not allocating
        else None
    )
    fits = memo.get(fractional) if memo is not None else None
    if fits is None:
        try:
            fits = request_fits_capacity(
                current, r.capacity_requests, device, allocating, fractional
            )
        except CapacityError as err:
            fits = str(err)
        if memo is not None:
            memo[fractional] = fits
    if isinstance(fits, str):
        raise AllocationError(
            f"claim {key}, request {r.name}: checking capacity for device "
            f"{device_id_text(device_id)}: {fits}"
        ) from None
    return fits
