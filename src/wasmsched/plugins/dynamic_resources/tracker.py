"""The claims as the DynamicResources plugin sees them across cycles (dra_manager.go:
claimTracker; allocateddevices.go: allocatedDevices).

kube keeps the allocated devices up to date from its informer's claim events, and
GatherAllocatedState copies them with the in-flight allocations. Here the handle hands out
a new list of claims whenever one changes; the tracker tells the claims that changed from
those that did not by object identity (an unchanged claim is the same object in the new
list), so that a cycle costs the claims that changed, not all claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from wasmsched.plugins.dynamic_resources.claims import RESOURCE_CLAIM as CLAIM_KIND
from wasmsched.plugins.dynamic_resources.claims import (
    ClaimError,
    allocation_of,
    as_list,
    as_mapping,
    check_is_for_pod,
    claim_key,
    claim_name,
    claim_uid,
    is_newer,
    meta_of,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.plugins.dynamic_resources.slices import DeviceID

Manifest = Mapping[str, Any]


@dataclass
class AllocatedState:
    """structured.AllocatedState: devices held by allocated (or in-flight) claims."""

    devices: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[DeviceID, str]] = field(default_factory=set)
    capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def add_allocation(self, allocation: Manifest, consumable_capacity: bool) -> None:
        """allocateddevices.go: foreachAllocatedDevice over one claim's allocation."""
        devices, shared, consumed = allocated_devices(allocation, consumable_capacity)
        self.devices.update(devices)
        self.shared.update(shared)
        for device_id, capacity in consumed:
            held = self.capacity.setdefault(device_id, {})
            for name, value in capacity.items():
                held[name] = held.get(name, Fraction(0)) + value

    def is_allocated(self, device_id: DeviceID) -> bool:
        """internal.IsDeviceAllocated."""
        return device_id in self.devices or any(d == device_id for d, _ in self.shared)


def allocated_devices(
    allocation: Manifest, consumable_capacity: bool
) -> tuple[list[DeviceID], list[tuple[DeviceID, str]], list[tuple[DeviceID, dict[str, Fraction]]]]:
    """allocateddevices.go: foreachAllocatedDevice. What one allocation holds: the devices
    it holds alone, its shares of devices, and each share's consumed capacity (admin access
    holds nothing)."""
    devices: list[DeviceID] = []
    shared: list[tuple[DeviceID, str]] = []
    consumed: list[tuple[DeviceID, dict[str, Fraction]]] = []
    for result in as_list(as_mapping(allocation.get("devices")).get("results")):
        r = as_mapping(result)
        if r.get("adminAccess") is True:
            continue
        device_id = (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
        share = r.get("shareID")
        if consumable_capacity and share is not None:
            shared.append((device_id, str(share)))
            capacity = r.get("consumedCapacity")
            if capacity is not None:
                consumed.append(
                    (device_id, {k: _quantity(v) for k, v in as_mapping(capacity).items()})
                )
            continue
        devices.append(device_id)
    return devices, shared, consumed


def _quantity(value: Any) -> Fraction:
    from wasmsched.api.quantity import parse_quantity

    return parse_quantity(value)


# Where an allocation is held: a claim by key, or an allocation in flight by claim uid.
_Source = tuple[str, str]
_CLAIM = "claim"
_FLIGHT = "flight"


class AllocatedDevices:
    """The devices of a set of allocations, kept by reference count so that one
    allocation can be added or taken away without going over the others."""

    __slots__ = (
        "_capacity",
        "_consumable_capacity",
        "_devices",
        "_shared",
        "_sources",
        "pool_versions",
    )

    def __init__(self, consumable_capacity: bool) -> None:
        self._consumable_capacity = consumable_capacity
        # (driver, pool) -> a count that grows whenever an allocation of one of the pool's
        # devices is added or taken away: equal counts, same devices held in the pool.
        self.pool_versions: dict[tuple[str, str], int] = {}
        self._sources: dict[_Source, tuple[Any, _Parts]] = {}
        self._devices: dict[DeviceID, int] = {}
        self._shared: dict[tuple[DeviceID, str], int] = {}
        # Per device, each source's consumed capacity (summed when the state is made).
        self._capacity: dict[DeviceID, dict[_Source, dict[str, Fraction]]] = {}

    def set(self, source: _Source, allocation: Any) -> None:
        """``source`` holds ``allocation`` now (None: nothing)."""
        held = self._sources.get(source)
        if held is not None and held[0] is allocation:
            return
        if held is not None:
            del self._sources[source]
            self._count(source, held[1], -1)
        if allocation is None:
            return
        parts = allocated_devices(allocation, self._consumable_capacity)
        self._sources[source] = (allocation, parts)
        self._count(source, parts, 1)

    def _count(self, source: _Source, parts: _Parts, step: int) -> None:
        devices, shared, consumed = parts
        versions = self.pool_versions
        for device_id in [*devices, *(d for d, _ in shared), *(d for d, _ in consumed)]:
            pool = (device_id[0], device_id[1])
            versions[pool] = versions.get(pool, 0) + 1
        for device_id in devices:
            _bump(self._devices, device_id, step)
        for share in shared:
            _bump(self._shared, share, step)
        for device_id, capacity in consumed:
            by_source = self._capacity.setdefault(device_id, {})
            if step > 0:
                # Two shares of one device in one allocation: summed under the source.
                mine = by_source.setdefault(source, {})
                for name, value in capacity.items():
                    mine[name] = mine.get(name, Fraction(0)) + value
            else:
                by_source.pop(source, None)
                if not by_source:
                    del self._capacity[device_id]

    def state(self) -> AllocatedState:
        """GatherAllocatedState: a copy the allocator may read during the cycle."""
        capacity: dict[DeviceID, dict[str, Fraction]] = {}
        for device_id, by_source in self._capacity.items():
            total: dict[str, Fraction] = {}
            for consumed in by_source.values():
                for name, value in consumed.items():
                    total[name] = total.get(name, Fraction(0)) + value
            capacity[device_id] = total
        return AllocatedState(set(self._devices), set(self._shared), capacity)


_Parts = tuple[
    list["DeviceID"], list[tuple["DeviceID", str]], list[tuple["DeviceID", dict[str, Fraction]]]
]


def _bump(counts: dict[Any, int], key: Any, step: int) -> None:
    n = counts.get(key, 0) + step
    if n:
        counts[key] = n
    else:
        del counts[key]


class ClaimTracker:
    """The cluster's claims with the plugin's own writes over them: the listed claims by
    ``namespace/name``, the versions written and not yet listed (the assume cache), the
    allocations held in flight between Reserve and PreBind, and their devices."""

    __slots__ = (
        "_assumed_listed",
        "_by_id",
        "_by_key",
        "_devices",
        "_listed",
        "assumed",
        "in_flight",
    )

    def __init__(self, consumable_capacity: bool) -> None:
        self._listed: Sequence[Manifest] | None = None
        self._by_id: dict[int, Manifest] = {}
        self._by_key: dict[str, Manifest] = {}
        # Claims written but not yet seen listed (key -> claim), and the in-flight
        # allocations (claim uid -> (claim with the allocation, pod uid)).
        self.assumed: dict[str, Manifest] = {}
        # The assumed claims that were listed when written (updates, not creations): once
        # such a claim is no longer listed it was deleted, and the assume cache drops it
        # with its assumed version (assumecache.go: AssumeCache.delete).
        self._assumed_listed: set[str] = set()
        self.in_flight: dict[str, tuple[Manifest, str]] = {}
        self._devices = AllocatedDevices(consumable_capacity)

    # --- keeping up with the handle ----------------------------------------------------------

    def refresh(self, listed: Sequence[Manifest]) -> None:
        """Takes the handle's current list: only the claims that are not the objects seen
        before are looked at."""
        if listed is self._listed:
            return
        self._listed = listed
        by_id = dict(zip(map(id, listed), listed, strict=True))  # no bytecode per claim
        old = self._by_id
        gone = [old[i] for i in old.keys() - by_id.keys()]
        new = [by_id[i] for i in by_id.keys() - old.keys()]
        self._by_id = by_id
        changed: set[str] = set()
        for claim in gone:
            key = claim_key(claim)
            if self._by_key.get(key) is claim:
                del self._by_key[key]
                changed.add(key)
        for claim in new:
            key = claim_key(claim)
            self._by_key[key] = claim
            changed.add(key)
        if len(self._by_key) != len(by_id):
            # Two listed claims with one key: the later in the list counts, as a lookup
            # table built from the list would have it.
            self._by_key = {claim_key(c): c for c in listed}
            changed.update(self._by_key)
        changed.update(self._caught_up())
        for key in changed:
            self._update(key)

    def _caught_up(self) -> list[str]:
        """Drops the assumed versions the list has caught up with: the listed claim is the
        assumed object or has a higher resourceVersion (assumecache.go: AssumeCache.add
        replaces an assumed object only with a newer one; simulated claims have none), or
        the claim was listed when written and is not any more (deleted). Their keys."""
        dropped = []
        for key, assumed in self.assumed.items():
            listed = self._by_key.get(key)
            if listed is None:
                if key in self._assumed_listed:
                    dropped.append(key)
            elif listed is assumed or is_newer(listed, assumed):
                dropped.append(key)
        for key in dropped:
            self.forget(key)
        return dropped

    def _update(self, key: str) -> None:
        """The devices of the claim under ``key`` as it is now; an allocation in flight
        for it counts instead (under its uid)."""
        claim = self.current(key)
        held = None
        if claim is not None and claim_uid(claim) not in self.in_flight:
            held = allocation_of(claim)
        self._devices.set((_CLAIM, key), held)

    # --- the plugin's writes -----------------------------------------------------------------

    def assume(self, claim: Manifest) -> None:
        """AssumeClaimAfterAPICall: the written version counts until the list shows it (or
        a newer one); a version the list already shows is not assumed (the live mode's
        claim cache lists a write as soon as it is answered)."""
        key = claim_key(claim)
        listed = self._by_key.get(key)
        if listed is claim or (listed is not None and is_newer(listed, claim)):
            self.forget(key)
            return
        self.assumed[key] = claim
        if listed is not None:
            self._assumed_listed.add(key)
        else:
            self._assumed_listed.discard(key)
        self._update(key)

    def forget(self, key: str) -> None:
        """Drops the assumed version under ``key`` (if any); the listed claim counts."""
        self._assumed_listed.discard(key)
        if self.assumed.pop(key, None) is not None:
            self._update(key)

    def hold(self, claim: Manifest, pod_uid: str, uid: str | None = None) -> None:
        """SignalClaimPendingAllocation: ``claim`` (with its allocation) is in flight, under
        ``uid`` (default the claim's: the extended-resource claim made for a node stands in
        for the pod's special claim)."""
        uid = claim_uid(claim) if uid is None else uid
        self.in_flight[uid] = (claim, pod_uid)
        self._devices.set((_FLIGHT, uid), allocation_of(claim))
        self._update(claim_key(claim))

    def release(self, uid: str) -> None:
        """RemoveClaimPendingAllocation."""
        held = self.in_flight.pop(uid, None)
        if held is None:
            return
        self._devices.set((_FLIGHT, uid), None)
        self._update(claim_key(held[0]))

    # --- reads -------------------------------------------------------------------------------

    def current(self, key: str) -> Manifest | None:
        """The claim as the scheduler knows it now: assumed, else listed."""
        assumed = self.assumed.get(key)
        return assumed if assumed is not None else self._by_key.get(key)

    def get(self, namespace: str, name: str) -> Manifest:
        """The claim; ClaimError as the assume cache's NotFoundError says it."""
        key = f"{namespace}/{name}"
        claim = self.current(key)
        if claim is None:
            raise ClaimError(f'could not find {CLAIM_KIND} "{key}"')
        return claim

    def pod_claims(self, pod: Pod) -> list[tuple[str, Manifest]]:
        """dynamicresources.go: foreachPodResourceClaim. (pod claim name, claim) for every
        entry that has a claim; ClaimError for the first that is missing, being deleted or
        (made from a template) not owned by the pod."""
        out: list[tuple[str, Manifest]] = []
        for entry in pod.resource_claims:
            name, must_check_owner = claim_name(pod, entry)
            if name is None:
                continue
            claim = self.get(pod.namespace, name)
            if meta_of(claim).get("deletionTimestamp"):
                raise ClaimError(f'resourceclaim "{meta_of(claim).get("name")}" is being deleted')
            if must_check_owner:
                check_is_for_pod(pod, claim)
            out.append((entry.name, claim))
        return out

    def claims(self) -> list[Manifest]:
        """The handle's claims with the assumed versions in their place, then the assumed
        claims not listed yet (the list the plugin read before the tracker)."""
        listed = self._listed or ()
        assumed = self.assumed
        out = [assumed.get(claim_key(c), c) for c in listed] if assumed else list(listed)
        out.extend(c for k, c in self.assumed.items() if k not in self._by_key)
        return out

    def allocated_state(self) -> AllocatedState:
        """GatherAllocatedState: every allocated claim's devices, and those in flight."""
        return self._devices.state()

    def pool_versions(self) -> dict[tuple[str, str], int]:
        """A copy of the pools' versions (AllocatedDevices.pool_versions) now."""
        return dict(self._devices.pool_versions)
