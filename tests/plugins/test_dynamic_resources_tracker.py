"""The DynamicResources plugin's claim tracker (plugins/dynamic_resources/tracker.py): what it
keeps up to date from claim changes equals what going over every claim on each cycle gives
(the plugin's way before the tracker, kept here as the oracle, with the assume cache's rules:
a listed claim replaces the assumed one only when it is that object or has a higher
resourceVersion; an assumed claim listed when written is dropped once it is not listed)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from wasmsched.plugins.dynamic_resources.claims import (
    allocation_of,
    claim_key,
    claim_uid,
    is_newer,
)
from wasmsched.plugins.dynamic_resources.tracker import AllocatedState, ClaimTracker

Manifest = Mapping[str, Any]


class Oracle:
    """Every claim looked at on every read: the listed claims with the assumed versions
    over them, and GatherAllocatedState over all of them and the in-flight allocations."""

    def __init__(self) -> None:
        self.assumed: dict[str, Manifest] = {}
        self.assumed_listed: set[str] = set()
        self.in_flight: dict[str, tuple[Manifest, str]] = {}

    def assume(self, claim: Manifest, listed: Sequence[Manifest]) -> None:
        key = claim_key(claim)
        self.assumed[key] = claim
        if any(claim_key(c) == key for c in listed):
            self.assumed_listed.add(key)
        else:
            self.assumed_listed.discard(key)
        self.claims(listed)  # a version the list has (or a newer one) is not kept

    def claims(self, listed: Sequence[Manifest]) -> list[Manifest]:
        out: list[Manifest] = []
        seen: set[str] = set()
        for claim in listed:
            key = claim_key(claim)
            assumed = self.assumed.get(key)
            if assumed is not None and assumed is not claim and not is_newer(claim, assumed):
                claim = assumed
            elif assumed is not None:
                del self.assumed[key]
                self.assumed_listed.discard(key)
            seen.add(key)
            out.append(claim)
        for key in [k for k in self.assumed if k not in seen]:
            if key in self.assumed_listed:  # deleted
                del self.assumed[key]
                self.assumed_listed.discard(key)
            else:
                out.append(self.assumed[key])
        return out

    def state(self, listed: Sequence[Manifest]) -> AllocatedState:
        state = AllocatedState()
        seen: set[str] = set()
        for claim in self.claims(listed):
            uid = claim_uid(claim)
            in_flight = self.in_flight.get(uid)
            allocation = allocation_of(in_flight[0]) if in_flight else allocation_of(claim)
            seen.add(uid)
            if allocation is not None:
                state.add_allocation(allocation, True)
        for uid, (claim, _) in self.in_flight.items():
            if uid not in seen:
                allocation = allocation_of(claim)
                if allocation is not None:
                    state.add_allocation(allocation, True)
        return state

    def by_key(self, listed: Sequence[Manifest]) -> dict[str, Manifest]:
        return {claim_key(c): c for c in self.claims(listed)}


def _result(r: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {
        "request": "r",
        "driver": "gpu.example.com",
        "pool": f"p{r.randint(0, 1)}",
        "device": f"gpu-{r.randint(0, 4)}",
    }
    kind = r.random()
    if kind < 0.2:
        out["shareID"] = f"share-{r.randint(0, 3)}"
        if r.random() < 0.7:
            out["consumedCapacity"] = {"memory": r.choice(["1Gi", "2Gi", "500Mi"])}
    elif kind < 0.3:
        out["adminAccess"] = True
    return out


def _claim(r: random.Random, name: str, allocated: bool | None = None) -> dict[str, Any]:
    claim: dict[str, Any] = {
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": r.choice(["default", "default", "other"])},
        "spec": {"devices": {"requests": []}},
    }
    if r.random() < 0.7:  # unique per claim, as the API server makes them
        claim["metadata"]["uid"] = f"uid-{claim['metadata']['namespace']}-{name}"
    if r.random() < 0.6:  # from an API server; simulated claims have none
        claim["metadata"]["resourceVersion"] = str(r.randint(1, 6))
    if allocated if allocated is not None else r.random() < 0.6:
        results = [_result(r) for _ in range(r.randint(1, 3))]
        claim["status"] = {"allocation": {"devices": {"results": results}}}
    return claim


def _same(got: AllocatedState, want: AllocatedState) -> None:
    assert got.devices == want.devices
    assert got.shared == want.shared
    assert got.capacity == want.capacity


@pytest.mark.parametrize("seed", range(40))
def test_tracker_keeps_what_a_full_pass_finds(seed: int) -> None:
    """Random claim changes (added, updated, deleted, a list that is new but holds the
    same claims), writes assumed before the list shows them (with resourceVersions older
    or newer than the listed ones, updates of listed claims that then get deleted),
    allocations held in flight and released: after each, the tracker's devices and claims
    are the full pass's."""
    r = random.Random(seed)
    listed: dict[str, Manifest] = {}  # key -> claim, as the handle's store holds them
    tracker = ClaimTracker(consumable_capacity=True)
    oracle = Oracle()
    names = [f"c{i}" for i in range(8)]
    current: list[Manifest] = []
    for _ in range(60):
        op = r.random()
        if op < 0.35:
            claim = _claim(r, r.choice(names))
            listed[claim_key(claim)] = claim
        elif op < 0.45 and listed:
            del listed[r.choice(sorted(listed))]
        elif op < 0.6:
            written = _claim(r, r.choice(names))
            tracker.refresh(current)
            tracker.assume(written)
            oracle.assume(written, current)
            if r.random() < 0.5:  # the informer delivers the write
                listed[claim_key(written)] = written
        elif op < 0.75:
            claim = _claim(r, r.choice(names), allocated=True)
            tracker.refresh(current)
            tracker.hold(claim, "pod-uid")
            oracle.in_flight[claim_uid(claim)] = (claim, "pod-uid")
        elif op < 0.85 and oracle.in_flight:
            uid = r.choice(sorted(oracle.in_flight))
            tracker.refresh(current)
            tracker.release(uid)
            del oracle.in_flight[uid]
        if r.random() < 0.9:  # a new list (the store hands one out after any change)
            current = list(listed.values())
            r.shuffle(current)
        tracker.refresh(current)
        _same(tracker.allocated_state(), oracle.state(current))
        want = oracle.by_key(current)
        for key in {*want, *(f"{ns}/{n}" for ns in ("default", "other") for n in names)}:
            assert tracker.current(key) is want.get(key)
        assert tracker.assumed == oracle.assumed
        assert tracker.claims() == oracle.claims(current)
