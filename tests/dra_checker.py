"""A check that no device is over-allocated at any instant of a run.

``ClaimLog`` records every ResourceClaim write and deletion of a simulation's store, in
order, with the simulated time; ``over_allocations`` walks that log, keeps each claim's
allocation (device -> consumed capacity), sums them per device after every step and
reports each moment a device holds more than it has: a device without consumable
capacity may be held by one claim (or admin-access ones), a device with
``allowMultipleAllocations`` up to its capacity, summed over every claim's share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from wasmsched.api.quantity import parse_quantity
from wasmsched.sim.simulation import Simulation

DeviceKey = tuple[str, str, str]  # driver, pool, device


@dataclass(frozen=True)
class ClaimWrite:
    at: float
    claim: str  # namespace/name
    results: tuple[Mapping[str, Any], ...] | None  # None: deleted or not allocated


@dataclass
class ClaimLog:
    """Every claim write of ``sim``'s store from now on (attach before running)."""

    sim: Simulation
    writes: list[ClaimWrite] = field(default_factory=list)

    def __post_init__(self) -> None:
        store = self.sim.store
        write, delete = store.write_resource_claim, store.delete_resource_claim

        def on_write(claim: Mapping[str, Any]) -> Any:
            self.writes.append(ClaimWrite(self.sim.now(), _key(claim), _results(claim)))
            return write(claim)

        def on_delete(claim: Mapping[str, Any]) -> None:
            self.writes.append(ClaimWrite(self.sim.now(), _key(claim), None))
            delete(claim)

        store.write_resource_claim = on_write  # type: ignore[method-assign]
        store.delete_resource_claim = on_delete  # type: ignore[method-assign]


def _key(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _results(claim: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...] | None:
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return None
    return tuple((allocation.get("devices") or {}).get("results") or ())


def device_capacities(
    slices: Iterable[Mapping[str, Any]],
) -> dict[DeviceKey, dict[str, Fraction] | None]:
    """Per device of the slices: its consumable capacity (None: not shareable)."""
    out: dict[DeviceKey, dict[str, Fraction] | None] = {}
    for s in slices:
        spec = s["spec"]
        for d in spec.get("devices") or ():
            key = (spec["driver"], spec["pool"]["name"], d["name"])
            if d.get("allowMultipleAllocations"):
                out[key] = {
                    name: parse_quantity(c["value"])
                    for name, c in (d.get("capacity") or {}).items()
                }
            else:
                out[key] = None
    return out


def over_allocations(
    writes: Iterable[ClaimWrite], capacities: Mapping[DeviceKey, dict[str, Fraction] | None]
) -> list[str]:
    """Every moment a device held more than it has, one line each (empty: none)."""
    held: dict[str, dict[DeviceKey, list[dict[str, Fraction]]]] = {}
    totals: dict[DeviceKey, dict[str, Fraction]] = {}
    holders: dict[DeviceKey, set[str]] = {}
    problems: list[str] = []
    for w in writes:
        for device, shares in held.pop(w.claim, {}).items():
            holders[device].discard(w.claim)
            for share in shares:
                for name, amount in share.items():
                    totals[device][name] -= amount
        if w.results is None:
            continue
        mine: dict[DeviceKey, list[dict[str, Fraction]]] = {}
        for r in w.results:
            if r.get("adminAccess"):
                continue
            device = (r["driver"], r["pool"], r["device"])
            if device not in capacities:
                problems.append(f"t={w.at}: {w.claim} holds unknown device {device}")
                continue
            share = {
                name: parse_quantity(q) for name, q in (r.get("consumedCapacity") or {}).items()
            }
            mine.setdefault(device, []).append(share)
        held[w.claim] = mine
        for device, shares in mine.items():
            capacity = capacities[device]
            others = holders.setdefault(device, set())
            count = sum(len(held[c][device]) for c in others) + len(shares)
            if capacity is None and count > 1:
                problems.append(
                    f"t={w.at}: device {'/'.join(device)} held {count} times "
                    f"({', '.join(sorted({*others, w.claim}))})"
                )
            total = totals.setdefault(device, {})
            for share in shares:
                for name, amount in share.items():
                    total[name] = total.get(name, Fraction(0)) + amount
            for name, amount in total.items():
                limit = (capacity or {}).get(name)
                if limit is not None and amount > limit:
                    problems.append(
                        f"t={w.at}: device {'/'.join(device)} {name} {amount} > {limit} "
                        f"({', '.join(sorted({*others, w.claim}))})"
                    )
            others.add(w.claim)
    return problems


def peak_sharing(writes: Iterable[ClaimWrite]) -> int:
    """The most claims that held one device at the same time."""
    held: dict[str, list[DeviceKey]] = {}
    count: dict[DeviceKey, int] = {}
    peak = 0
    for w in writes:
        for device in held.pop(w.claim, []):
            count[device] -= 1
        if w.results is None:
            continue
        devices = [(r["driver"], r["pool"], r["device"]) for r in w.results]
        held[w.claim] = devices
        for device in devices:
            count[device] = count.get(device, 0) + 1
            peak = max(peak, count[device])
    return peak
