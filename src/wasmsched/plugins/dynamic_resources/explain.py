"""Why a pod's claims were, or were not, allocatable on a node: what ``--explain`` shows.

Only explained cycles come here (DynamicResources.filter, with the cycle's recorder set):
the allocator's search itself records nothing. After Filter has its answer, each device
the node sees is questioned on its own for each request, with the allocator's own checks
in its own order (allocator_incubating.go: allocateOne, then allocateDevice): taken by
another claim, binding conditions, the class's then the request's selectors, per-device
node selection, consumable capacity, shared counters, device taints, a constraint's
attribute. A device that passes them all "matches"; one the allocation chose is
"allocated". A device that matches on its own may still be left out when the devices
cannot be found together (a constraint between two of them, counters two of them share):
the entry's ``matching`` against ``needs`` tells that case apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from wasmsched.api.cel import CELError
from wasmsched.plugins.dynamic_resources.allocator import (
    AllocationError,
    Allocator,
    FailedOnNode,
    _Run,
    claim_key,
)
from wasmsched.plugins.dynamic_resources.capacity import (
    CapacityError,
    consumed_capacity,
    readable_quantity,
)
from wasmsched.plugins.dynamic_resources.claims import as_list, as_mapping
from wasmsched.plugins.dynamic_resources.requests import DistinctAttribute, tolerates
from wasmsched.plugins.dynamic_resources.slices import device_id_text, node_matches

if TYPE_CHECKING:
    from wasmsched.api.objects import Node
    from wasmsched.plugins.dynamic_resources.requests import Request
    from wasmsched.plugins.dynamic_resources.slices import Device, DeviceID, Pool, Slice

Manifest = Mapping[str, Any]
ALLOCATED = "allocated"
MATCHES = "matches"
IN_USE = "in use: allocated to"


def device_holders(
    claims: Sequence[Manifest], in_flight: Iterable[tuple[Manifest, str]]
) -> dict[str, str]:
    """``driver/pool/device`` -> the claim that holds it, over the allocated claims and
    those in flight (claim, pod uid); admin access holds nothing, a shared device names
    its first holder."""
    holders: dict[str, str] = {}
    for claim in [*claims, *(c for c, _ in in_flight)]:
        allocation = as_mapping(as_mapping(claim.get("status")).get("allocation"))
        for raw in as_list(as_mapping(allocation.get("devices")).get("results")):
            result = as_mapping(raw)
            if result.get("adminAccess") is not True:
                device = f"{result.get('driver')}/{result.get('pool')}/{result.get('device')}"
                holders.setdefault(device, claim_key(claim))
    return holders


class _SetUpOnly(_Run):
    """An Allocate call that stops after its set-up (the node's pools, the requests
    checked against their classes): explain.py questions it device by device, so the
    allocator itself needs no hook and its search stays as it is."""

    def _allocate_one(self, *args: Any) -> bool:
        return False


def node_entries(
    allocator: Allocator | None,
    node: Node,
    unavailable: Sequence[Manifest],
    claims: Sequence[Manifest],
    allocations: Sequence[Mapping[str, Any]] | None,
    holders: Mapping[str, str],
) -> list[dict[str, Any]]:
    """What an explained Filter records for ``node``: an entry for each allocated claim
    the node cannot use, then (with claims to allocate) ``explain_node``'s."""
    entries = [
        {"claim": claim_key(c), "error": "allocated earlier, not available on this node"}
        for c in unavailable
    ]
    if allocator is not None:
        entries += explain_node(allocator, node, claims, allocations, holders)
    return entries


def explain_node(
    allocator: Allocator,
    node: Node,
    claims: Sequence[Manifest],
    allocations: Sequence[Mapping[str, Any]] | None,
    holders: Mapping[str, str],
) -> list[dict[str, Any]]:
    """One entry per request (each ``firstAvailable`` subrequest apart) of the claims to
    allocate: its devices on ``node`` with the verdict of each, and what Filter allocated
    (``allocations``, None when the claims did not fit). ``holders`` names the claim
    that holds an allocated device (``device_holders``)."""
    run = _SetUpOnly(allocator, node, claims)
    try:
        run.run()
    except AllocationError as err:
        return [{"error": str(err)}]
    except FailedOnNode:
        pass  # the pools are listed with their state below
    chosen: dict[tuple[int, str], list[str]] = {}
    mine: dict[str, tuple[int, str]] = {}  # device -> (claim, request) of this pod that got it
    for ci, allocation in enumerate(allocations or ()):
        for raw in as_list(as_mapping(allocation.get("devices")).get("results")):
            result = as_mapping(raw)
            device = f"{result.get('driver')}/{result.get('pool')}/{result.get('device')}"
            request = str(result.get("request"))
            chosen.setdefault((ci, request), []).append(device)
            mine.setdefault(device, (ci, request))
    fitted = allocations is not None
    # A device this pod got rules a request out only if its request was searched first.
    order = {(ci, r.full_name): i for i, ((ci, _, _), r) in enumerate(run.requests.items())}
    entries = []
    for (ci, _, _), r in run.requests.items():
        earlier = {
            device: taker
            for device, taker in mine.items()
            if order.get(taker, -1) < order[(ci, r.full_name)] and not _siblings(r, ci, taker)
        }
        entries.append(_request_entry(run, ci, r, chosen, earlier, holders, fitted))
    return entries


def _request_entry(
    run: _Run,
    ci: int,
    r: Request,
    chosen: Mapping[tuple[int, str], list[str]],
    taken: Mapping[str, tuple[int, str]],
    holders: Mapping[str, str],
    fitted: bool,
) -> dict[str, Any]:
    """The entry of request ``r`` of claim ``ci``; ``taken`` holds the devices requests
    of this pod searched before ``r`` got (device -> (claim, request))."""
    key = claim_key(run.claims[ci])
    allocated = chosen.get((ci, r.full_name), [])
    devices: list[dict[str, str]] = []
    pools: list[dict[str, str]] = []
    matching = 0
    for pool in run.pools:
        if pool.incomplete:
            pools.append({"pool": pool.pool_id, "result": "being updated: not all its slices"})
            continue
        if pool.invalid:
            pools.append({"pool": pool.pool_id, "result": f"invalid: {pool.invalid_reason}"})
            continue
        for s in pool.slices_targeting_node:
            for device in s.devices:
                device_id = (pool.driver, pool.name, device.name)
                text = device_id_text(device_id)
                taker = taken.get(text)
                if text in allocated:
                    verdict = ALLOCATED
                elif taker is not None and not r.admin_access:
                    verdict = (
                        f"in use: allocated to {claim_key(run.claims[taker[0]])}, request "
                        f"{taker[1]} of this pod"
                    )
                else:
                    verdict = _verdict(run, ci, r, s, pool, device, device_id)
                    if verdict == IN_USE:
                        verdict += f" {holders.get(text, '(in flight)')}"
                if verdict in (ALLOCATED, MATCHES):
                    matching += 1
                devices.append({"device": text, "result": verdict})
    entry: dict[str, Any] = {
        "claim": key,
        "request": r.full_name,
        "deviceClass": r.class_name,
        "needs": "all" if r.mode == "All" else r.num_devices,
        "matching": matching,
    }
    if fitted:
        entry["allocated"] = list(allocated)
    if pools:
        entry["pools"] = pools
    entry["devices"] = devices
    return entry


def _siblings(r: Request, ci: int, taker: tuple[int, str]) -> bool:
    """Whether the request that took a device is another subrequest of ``r``'s request
    (then ``r`` was simply not the alternative chosen)."""
    return r.parent is not None and taker[0] == ci and taker[1].startswith(f"{r.parent}/")


def _verdict(
    run: _Run, ci: int, r: Request, s: Slice, pool: Pool, device: Device, device_id: DeviceID
) -> str:
    """The first of the allocator's checks the device fails for the request alone, or
    "matches"."""
    features = run.features
    if not r.admin_access and device_id in run.a.allocated.devices:
        return IN_USE
    if not features.device_binding_and_status and device.binding_conditions:
        return "binding conditions: the device has some, and DRADeviceBindingConditions is off"
    rk = (ci, 0, 0)
    try:
        why = _selector_false(run, rk, r, device, device_id)
    except AllocationError as err:
        return f"selector error: {err}"
    if why:
        return why
    if s.per_device and not node_matches(
        run.node, device.node_name, device.all_nodes, device.node_selector
    ):
        return "node selection: the device is not available on this node"
    if features.consumable_capacity:
        try:
            fits = run._capacity_fits(ci, r, device_id, device)
        except AllocationError as err:
            return f"capacity: {err}"
        if not fits:
            return _capacity_reason(run, r, device_id, device)
    if device.consumes:
        if not features.partitionable_devices:
            return "counters: the device consumes counters, and DRAPartitionableDevices is off"
        multiple = features.consumable_capacity and device.allow_multiple
        if not (multiple and run._capacity_in_use(device_id)):
            if not run._reserve_counters(device, pool):
                return _counter_reason(run, device, pool)
            run._release_counters(device, pool)
    if features.device_taints:
        taint = _untolerated_taint(device, r)
        if taint is not None:
            return f"taint: {_taint_text(taint)} is not tolerated"
    base, sub = (r.name, "") if r.parent is None else (r.parent, r.name)
    for constraint in run.constraints[ci]:
        fresh = type(constraint)(sorted(constraint.requests), constraint.name)
        if not fresh.add(base, sub, device, device_id):
            kind = (
                "distinctAttribute"
                if isinstance(constraint, DistinctAttribute)
                else "matchAttribute"
            )
            return f"constraint: {kind} {constraint.name}: the device has no such attribute"
    return MATCHES


def _selector_false(
    run: _Run, rk: tuple[int, int, int], r: Request, device: Device, device_id: DeviceID
) -> str:
    """The first selector (the class's, then the request's) that is false for the device."""
    device_class = r.device_class
    groups: list[tuple[str, Manifest | None, list[Any]]] = []
    if device_class is not None:
        name = as_mapping(device_class.get("metadata")).get("name")
        selectors = as_list(as_mapping(device_class.get("spec")).get("selectors"))
        groups.append((f"class {name}", device_class, selectors))
    groups.append(("request", None, r.selectors))
    for who, owner, selectors in groups:
        for i, selector in enumerate(selectors):
            try:
                ok = run._selectors_match(rk, device, device_id, owner, [selector])
            except CELError as err:  # pragma: no cover - _selectors_match words them
                return f"selector error: {err}"
            if not ok:
                expression = as_mapping(as_mapping(selector).get("cel")).get("expression") or ""
                return f"selector false: {who} selector #{i}: {expression}"
    return ""


def _capacity_reason(run: _Run, r: Request, device_id: DeviceID, device: Device) -> str:
    requests = r.capacity_requests or {}
    missing = [name for name in requests if name not in device.capacity]
    if missing:
        return f"capacity: the device has no capacity {missing[0]}"
    try:
        consumed = consumed_capacity(requests, device, run.features.fractional_capacity_range)
    except CapacityError as err:  # pragma: no cover - _capacity_fits raised it first
        return f"capacity: {err}"
    held = run.a.allocated.capacity.get(device_id, {})
    for name, capacity in device.capacity.items():
        value = consumed[name]
        free = capacity.value - held.get(name, Fraction(0))
        if value > free:
            return (
                f"capacity: {name} needs {readable_quantity(value)}, {readable_quantity(free)} of "
                f"{readable_quantity(capacity.value)} free"
            )
    return "capacity: the request is outside the device's request policy"


def _counter_reason(run: _Run, device: Device, pool: Pool) -> str:
    available = run._available(pool)
    for set_name, counters in device.consumes:
        left_in_set = available.get(set_name, {})
        for name, value in counters.items():
            left = left_in_set.get(name)
            if left is not None and value > left:
                return (
                    f"counter exhausted: {set_name}/{name} needs {readable_quantity(value)}, "
                    f"{readable_quantity(max(left, Fraction(0)))} left"
                )
    return "counter exhausted"


def _untolerated_taint(device: Device, r: Request) -> Mapping[str, Any] | None:
    """requests.taint_prevents_allocation's taint: NoSchedule or NoExecute, not tolerated."""
    for taint in device.taints:
        if taint.get("effect") in ("NoExecute", "NoSchedule") and not any(
            tolerates(t, taint) for t in r.tolerations
        ):
            return taint
    return None


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = taint.get("value")
    key = f"{taint.get('key')}={value}" if value else str(taint.get("key"))
    return f"{key}:{taint.get('effect')}"
