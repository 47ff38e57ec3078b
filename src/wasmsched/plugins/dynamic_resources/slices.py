"""ResourceSlices as the allocator reads them: parsed once per slice object, and gathered into
the pools a node sees (k8s.io/dynamic-resource-allocation/structured/internal/incubating:
pools_incubating.go, GatherPools).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from wasmsched.api.cel import CELError, DeviceInput, DeviceSelector, device_input
from wasmsched.api.quantity import parse_quantity
from wasmsched.api.selectors import NodeSelector
from wasmsched.plugins.dynamic_resources.claims import as_list, as_mapping

if TYPE_CHECKING:
    from wasmsched.api.objects import Node

Manifest = Mapping[str, Any]
# structured.DeviceID: (driver, pool, device).
DeviceID = tuple[str, str, str]


def device_id_text(device_id: DeviceID) -> str:
    """DeviceID.String(): ``driver/pool/device``."""
    return "/".join(device_id)


def _selector(raw: Any) -> NodeSelector | None:
    return None if raw is None else NodeSelector.from_dict(raw)


class Capacity:
    """One DeviceCapacity: its value and request policy."""

    __slots__ = ("default", "has_range", "step", "valid_max", "valid_min", "valid_values", "value")

    def __init__(self, raw: Any) -> None:
        c = as_mapping(raw)
        self.value = parse_quantity(c.get("value", "0"))
        policy = as_mapping(c.get("requestPolicy")) if c.get("requestPolicy") is not None else None
        self.default: Fraction | None = None
        self.valid_values: tuple[Fraction, ...] | None = None
        self.valid_min: Fraction | None = None
        self.valid_max: Fraction | None = None
        self.step: Fraction | None = None
        self.has_range = False
        if policy is not None:
            if policy.get("default") is not None:
                self.default = parse_quantity(policy["default"])
            if policy.get("validValues") is not None:
                self.valid_values = tuple(parse_quantity(v) for v in as_list(policy["validValues"]))
            valid_range = policy.get("validRange")
            if valid_range is not None:
                self.has_range = True
                r = as_mapping(valid_range)
                self.valid_min = parse_quantity(r["min"]) if r.get("min") is not None else None
                self.valid_max = parse_quantity(r["max"]) if r.get("max") is not None else None
                self.step = parse_quantity(r["step"]) if r.get("step") is not None else None

    @property
    def has_policy(self) -> bool:
        """Whether a requestPolicy is set."""
        return any(
            v is not None
            for v in (self.default, self.valid_values, self.valid_min, self.valid_max, self.step)
        )


class Device:
    """One device of a slice, with what the allocator asks of it."""

    __slots__ = (
        "_cel",
        "_selector_results",
        "all_nodes",
        "allow_multiple",
        "attributes",
        "binding_conditions",
        "binding_failure_conditions",
        "binds_to_node",
        "capacity",
        "consumes",
        "default_capacity_fit",
        "driver",
        "name",
        "node_name",
        "node_selector",
        "raw",
        "taints",
    )

    def __init__(self, driver: str, raw: Manifest) -> None:
        self.raw = raw
        self.driver = driver
        self.name: str = raw.get("name") or ""
        self.attributes: Mapping[str, Any] = as_mapping(raw.get("attributes"))
        self.capacity: dict[str, Capacity] = {
            name: Capacity(c) for name, c in as_mapping(raw.get("capacity")).items()
        }
        self.allow_multiple = raw.get("allowMultipleAllocations") is True
        self.taints: list[Mapping[str, Any]] = [as_mapping(t) for t in as_list(raw.get("taints"))]
        self.consumes: list[tuple[str, dict[str, Fraction]]] = [
            (
                str(as_mapping(c).get("counterSet") or ""),
                {
                    name: parse_quantity(as_mapping(v).get("value", "0"))
                    for name, v in as_mapping(as_mapping(c).get("counters")).items()
                },
            )
            for c in as_list(raw.get("consumesCounters"))
        ]
        self.binding_conditions: list[str] = list(as_list(raw.get("bindingConditions")))
        self.binding_failure_conditions: list[str] = list(
            as_list(raw.get("bindingFailureConditions"))
        )
        self.binds_to_node = raw.get("bindsToNode") is True
        self.node_name: str = raw.get("nodeName") or ""
        self.node_selector = _selector(raw.get("nodeSelector"))
        self.all_nodes = raw.get("allNodes") is True
        self._cel: DeviceInput | None = None
        # What a selector expression answered for this device (True, False, or the
        # CELError of its evaluation): a device does not change until its slice does
        # (a new slice object parses new devices), so each expression runs once per
        # device, not once per device, pod and node.
        self._selector_results: dict[str, bool | CELError] = {}
        # The allocator's capacity check of a request without capacity requests while
        # nothing of the device is held, per fractional-range switch: it depends on the
        # device alone (True, False, or the CapacityError's text).
        self.default_capacity_fit: dict[bool, bool | str] = {}

    def cel_input(self) -> DeviceInput:
        """The device as the CEL variable ``device`` (built once)."""
        if self._cel is None:
            self._cel = device_input(
                self.driver,
                self.attributes,
                {name: as_mapping(c) for name, c in as_mapping(self.raw.get("capacity")).items()},
                self.allow_multiple,
            )
        return self._cel

    def selector_matches(self, selector: DeviceSelector) -> bool:
        """``selector.matches(self.cel_input())``, remembered per expression; CELError as
        the evaluation raised it (each time it is asked)."""
        result = self._selector_results.get(selector.expression)
        if result is None:
            try:
                result = selector.matches(self.cel_input())
            except CELError as err:
                result = err.with_traceback(None)
            self._selector_results[selector.expression] = result
        if isinstance(result, CELError):
            raise result
        return result

    def with_taints(self, extra: Sequence[Mapping[str, Any]]) -> Device:
        """A copy with DeviceTaintRules' taints added after its own."""
        copy = Device(self.driver, self.raw)
        copy.taints = self.taints + list(extra)
        return copy


class Slice:
    """One ResourceSlice, parsed."""

    __slots__ = (
        "all_nodes",
        "counter_sets",
        "devices",
        "driver",
        "generation",
        "name",
        "node_name",
        "node_selector",
        "per_device",
        "pool",
        "raw",
        "slice_count",
    )

    def __init__(self, raw: Manifest) -> None:
        self.raw = raw
        spec = as_mapping(raw.get("spec"))
        pool = as_mapping(spec.get("pool"))
        self.name: str = as_mapping(raw.get("metadata")).get("name") or ""
        self.driver: str = spec.get("driver") or ""
        self.pool: str = pool.get("name") or ""
        self.generation: int = pool.get("generation") or 0
        self.slice_count: int = pool.get("resourceSliceCount") or 0
        self.node_name: str = spec.get("nodeName") or ""
        self.node_selector = _selector(spec.get("nodeSelector"))
        self.all_nodes = spec.get("allNodes") is True
        self.per_device = spec.get("perDeviceNodeSelection") is True
        self.devices: list[Device] = [
            Device(self.driver, as_mapping(d)) for d in as_list(spec.get("devices"))
        ]
        self.counter_sets: list[tuple[str, dict[str, Fraction]]] = [
            (
                str(as_mapping(s).get("name") or ""),
                {
                    name: parse_quantity(as_mapping(v).get("value", "0"))
                    for name, v in as_mapping(as_mapping(s).get("counters")).items()
                },
            )
            for s in as_list(spec.get("sharedCounters"))
        ]

    @property
    def pool_id(self) -> tuple[str, str]:
        """(driver, pool name)."""
        return (self.driver, self.pool)


def node_matches(
    node: Node, node_name: str, all_nodes: bool, selector: NodeSelector | None
) -> bool:
    """pools_incubating.go: NodeMatches."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(node.labels, node.name)
    return False


class Pool:
    """pools_incubating.go: Pool, the slices of one (driver, pool) a node sees."""

    __slots__ = (
        "counter_sets",
        "driver",
        "incomplete",
        "invalid",
        "invalid_reason",
        "name",
        "slices_not_targeting_node",
        "slices_targeting_node",
    )

    def __init__(self, driver: str, name: str) -> None:
        self.driver = driver
        self.name = name
        self.incomplete = False
        self.invalid = False
        self.invalid_reason = ""
        self.slices_targeting_node: list[Slice] = []
        self.slices_not_targeting_node: list[Slice] = []
        self.counter_sets: dict[str, dict[str, Fraction]] = {}

    @property
    def pool_id(self) -> str:
        """PoolID.String(): ``driver/pool``."""
        return f"{self.driver}/{self.name}"


def _build_pool(
    driver: str,
    name: str,
    slices: list[Slice],
    all_slices_for_pool: list[Slice] | None,
    partitionable: bool,
) -> Pool:
    """pools_incubating.go: buildPool."""
    pool = Pool(driver, name)
    slices = sorted(slices, key=lambda s: s.name)
    device_slices: list[Slice] = []
    counter_slices: list[Slice] = []
    for s in slices:
        (counter_slices if partitionable and s.counter_sets else device_slices).append(s)
    not_targeting: list[Slice] = []
    if all_slices_for_pool is not None and len(slices) < len(all_slices_for_pool):
        names = {s.name for s in slices}
        for s in all_slices_for_pool:
            if s.name in names:
                continue
            (counter_slices if partitionable and s.counter_sets else not_targeting).append(s)
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                pool.invalid, pool.invalid_reason = True, f"duplicate device name {d.name}"
                return pool
            seen.add(d.name)
    pool.slices_targeting_node = device_slices
    if not partitionable:
        return pool
    for s in counter_slices:
        for set_name, counters in s.counter_sets:
            if set_name in pool.counter_sets:
                pool.invalid, pool.invalid_reason = True, f"duplicate counter set name {set_name}"
                pool.slices_targeting_node = []
                return pool
            pool.counter_sets[set_name] = counters
    for group in (device_slices, not_targeting):
        for s in group:
            for d in s.devices:
                for set_name, counters in d.consumes:
                    counter_set = pool.counter_sets.get(set_name)
                    problem = ""
                    if counter_set is None:
                        problem = f"counter set {set_name} not found"
                    else:
                        missing = [c for c in counters if c not in counter_set]
                        if missing:
                            problem = f"counter {missing[0]} not found in counter set {set_name}"
                    if problem:
                        pool.invalid, pool.invalid_reason = True, problem
                        pool.slices_targeting_node = []
                        return pool
    pool.slices_not_targeting_node = not_targeting
    return pool


def gather_pools(
    slices_for_node: Iterable[Slice], node: Node, all_slices: Sequence[Slice], partitionable: bool
) -> list[Pool]:
    """pools_incubating.go: GatherPools. The pools with a slice for ``node``, sorted by
    (driver, pool); pools with binding conditions after the others. The newest generation
    of a pool wins; a pool whose slices are not all there is incomplete."""
    by_pool: dict[tuple[str, str], list[Slice]] = {}
    for s in slices_for_node:
        if not partitionable and (s.per_device or s.counter_sets):
            continue
        if s.node_name or s.all_nodes or s.node_selector is not None:
            relevant = node_matches(node, s.node_name, s.all_nodes, s.node_selector)
        elif s.per_device:
            relevant = any(
                node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices
            )
        else:
            continue
        if not relevant:
            continue
        current = by_pool.get(s.pool_id)
        if current is None or s.generation > current[0].generation:
            by_pool[s.pool_id] = [s]
        elif s.generation == current[0].generation:
            current.append(s)
    plain: list[Pool] = []
    with_binding: list[Pool] = []
    for (driver, name), pool_slices in by_pool.items():
        first = pool_slices[0]
        all_for_pool: list[Slice] | None = None
        if len(pool_slices) != first.slice_count:
            obsolete = False
            all_for_pool = []
            for s in all_slices:
                if s.pool_id != (driver, name):
                    continue
                if s.generation == first.generation:
                    all_for_pool.append(s)
                elif s.generation > first.generation:
                    obsolete = True
                    break
            if obsolete:
                continue
            if len(all_for_pool) != first.slice_count:
                pool = Pool(driver, name)
                pool.incomplete = True
                plain.append(pool)
                continue
        pool = _build_pool(driver, name, pool_slices, all_for_pool, partitionable)
        has_binding = any(
            d.raw.get("bindingConditions") is not None
            for s in pool.slices_targeting_node
            for d in s.devices
        )
        (with_binding if has_binding else plain).append(pool)
    plain.sort(key=lambda p: (p.driver, p.name))
    with_binding.sort(key=lambda p: (p.driver, p.name))
    return plain + with_binding


class SliceIndex:
    """The cluster's slices parsed once each, with DeviceTaintRules applied
    (dra_manager.go: ResourceSlices().ListWithDeviceTaintRules), kept until either list
    changes (the handle hands out a new list when a kind changes)."""

    __slots__ = ("_key", "_parsed", "_pools", "all", "generation", "on_node", "shared")

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        # Grows with every re-read: equal generations, same slices.
        self.generation = 0
        self._parsed: dict[int, tuple[Manifest, Slice]] = {}
        # gather_pools per (node name, partitionable), with the Node object it was
        # gathered for (a node's new version gathers again: its labels may select other
        # slices); dropped with the slices.
        self._pools: dict[tuple[str, bool], tuple[Node, list[Pool]]] = {}
        self.all: list[Slice] = []
        self.on_node: dict[str, list[Slice]] = {}
        self.shared: list[Slice] = []

    def refresh(self, slices: Sequence[Manifest], rules: Sequence[Manifest]) -> None:
        """Re-reads when a list is a new one; a slice object seen before is not parsed again."""
        key = (id(slices), id(rules))
        if key == self._key:
            return
        self._key = key
        parsed: dict[int, tuple[Manifest, Slice]] = {}
        out: list[Slice] = []
        for raw in slices:
            hit = self._parsed.get(id(raw))
            s = hit[1] if hit is not None and hit[0] is raw else Slice(raw)
            parsed[id(raw)] = (raw, s)
            out.append(s)
        self._parsed = parsed
        self._pools = {}
        self.generation += 1
        if rules:
            out = [_tainted(s, rules) for s in out]
        self.all = out
        self.on_node = {}
        self.shared = []
        for s in out:
            if s.node_name:
                self.on_node.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)

    def for_node(self, node_name: str) -> list[Slice]:
        """The node's own slices, then the shared ones (Allocate's slicesForNode)."""
        return self.on_node.get(node_name, []) + self.shared

    def pools_for(self, node: Node, partitionable: bool) -> list[Pool]:
        """gather_pools for ``node``, kept until the slices or the node change (the
        allocator only reads the pools)."""
        key = (node.name, partitionable)
        hit = self._pools.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        pools = gather_pools(self.for_node(node.name), node, self.all, partitionable)
        self._pools[key] = (node, pools)
        return pools


def _tainted(s: Slice, rules: Sequence[Manifest]) -> Slice:
    """The slice with the taints of the DeviceTaintRules that select its devices."""
    changed = False
    devices: list[Device] = []
    for d in s.devices:
        extra: list[Mapping[str, Any]] = []
        for rule in rules:
            spec = as_mapping(rule.get("spec"))
            selector = as_mapping(spec.get("deviceSelector"))
            if (
                (selector.get("driver") or s.driver) == s.driver
                and (selector.get("pool") or s.pool) == s.pool
                and (selector.get("device") or d.name) == d.name
            ):
                extra.append(as_mapping(spec.get("taint")))
        if extra:
            changed = True
            devices.append(d.with_taints(extra))
        else:
            devices.append(d)
    if not changed:
        return s
    copy = Slice(s.raw)
    copy.devices = devices
    return copy
