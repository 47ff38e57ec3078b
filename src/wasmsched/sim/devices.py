"""Devices allocated per DeviceClass over a run, for the report's device view; and the
devices a pod's claims hold (``pod_devices``, replay's per-pod ``devices``).

A watcher of the store's ResourceClaim writes (``ClusterStore.subscribe(on_claim=...)``),
made only for a cluster with DeviceClasses. Each allocated result counts for the class of
the request it answers (``request`` or ``request/subrequest`` of the claim's spec); a
device counts once per class however many claims share it. Where devices offer
consumable capacity (``allowMultipleAllocations``), the share of it the results consume
is kept too. A sample is taken after every write that changes the counts, at the
scheduling cycle and simulated time of the write.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from wasmsched.api.cel import CELError, SelectorCache
from wasmsched.api.quantity import QuantityError, parse_quantity
from wasmsched.plugins.dynamic_resources.capacity import readable_quantity
from wasmsched.plugins.dynamic_resources.slices import Device

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod

__all__ = ["DeviceUsage", "pod_devices"]

Manifest = Mapping[str, Any]
# (class, "driver/pool/device", {capacity name: consumed}) per allocated result.
_Held = tuple[str, str, dict[str, Fraction]]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _key(claim: Manifest) -> str:
    meta = _mapping(claim.get("metadata"))
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


class DeviceUsage:
    """Allocated devices (and consumed capacity) per DeviceClass, sampled over the run."""

    def __init__(
        self,
        classes: Sequence[Manifest],
        slices: Sequence[Manifest],
        cycle: Callable[[], int],
        now: Callable[[], float],
    ) -> None:
        self._cycle = cycle
        self._now = now
        self.classes = sorted(str(_mapping(c.get("metadata")).get("name")) for c in classes)
        self.devices: dict[str, int] = dict.fromkeys(self.classes, 0)
        self.capacity: dict[str, dict[str, Fraction]] = {}
        self._count_devices(classes, slices)
        self._held: dict[str, list[_Held]] = {}
        self._users: dict[tuple[str, str], int] = {}  # (class, device) -> results holding it
        self._allocated: dict[str, int] = dict.fromkeys(self.classes, 0)  # devices held
        self._consumed: dict[str, dict[str, Fraction]] = {}
        self.series: list[dict[str, Any]] = []

    def _count_devices(self, classes: Sequence[Manifest], slices: Sequence[Manifest]) -> None:
        """How many devices of the cluster's slices each class selects (its capacity), and
        the consumable capacity of the shareable ones."""
        cache = SelectorCache()
        devices = [
            (str(_mapping(s.get("spec")).get("driver") or ""), _mapping(d))
            for s in slices
            for d in _list(_mapping(s.get("spec")).get("devices"))
        ]
        for device_class in classes:
            name = str(_mapping(device_class.get("metadata")).get("name"))
            expressions = [
                str(_mapping(_mapping(s).get("cel")).get("expression") or "")
                for s in _list(_mapping(device_class.get("spec")).get("selectors"))
            ]
            # What a selector sees of a device (api/cel: device_input) is its driver,
            # attributes, capacity and allowMultipleAllocations, not its name: devices
            # alike (a node's eight GPUs) are parsed and evaluated once.
            seen: dict[str, Device | None] = {}
            for driver, raw in devices:
                shape = json.dumps(
                    [
                        driver,
                        raw.get("attributes"),
                        raw.get("capacity"),
                        raw.get("allowMultipleAllocations"),
                    ],
                    sort_keys=True,
                    default=str,
                )
                if shape not in seen:
                    parsed = Device(driver, raw)
                    try:
                        selected = all(
                            cache.get(e).matches(parsed.cel_input()) for e in expressions
                        )
                    except CELError:
                        selected = False  # the allocator would refuse it as well
                    seen[shape] = parsed if selected else None
                alike = seen[shape]
                if alike is None:
                    continue
                self.devices[name] += 1
                if alike.allow_multiple:
                    total = self.capacity.setdefault(name, {})
                    for cap_name, capacity in alike.capacity.items():
                        total[cap_name] = total.get(cap_name, Fraction(0)) + capacity.value

    def start(self, claims: Sequence[Manifest]) -> None:
        """The claims allocated before the run: the first sample."""
        for claim in claims:
            self._set(claim, _results(claim))
        self._sample()

    def on_claim(self, old: Manifest | None, new: Manifest | None) -> None:
        """A claim was written (``new``) or deleted (``new`` None)."""
        claim = new if new is not None else old
        if claim is None:
            return
        held = _results(new) if new is not None else []
        if not held and _key(claim) not in self._held:
            return  # made from a template, or written without an allocation again
        if self._set(claim, held):
            self._sample()

    def _set(self, claim: Manifest, held: list[_Held]) -> bool:
        key = _key(claim)
        before = self._held.get(key, [])
        if before == held:
            return False
        for class_name, device, consumed in before:
            users = self._users[(class_name, device)] - 1
            if users:
                self._users[(class_name, device)] = users
            else:
                del self._users[(class_name, device)]
                self._allocated[class_name] -= 1
            totals = self._consumed.setdefault(class_name, {})
            for name, value in consumed.items():
                totals[name] = totals.get(name, Fraction(0)) - value
        for class_name, device, consumed in held:
            users = self._users.get((class_name, device), 0)
            if not users:
                self._allocated[class_name] = self._allocated.get(class_name, 0) + 1
            self._users[(class_name, device)] = users + 1
            totals = self._consumed.setdefault(class_name, {})
            for name, value in consumed.items():
                totals[name] = totals.get(name, Fraction(0)) + value
        if held:
            self._held[key] = held
        else:
            self._held.pop(key, None)
        return True

    def _sample(self) -> None:
        allocated = dict(self._allocated)
        share: dict[str, dict[str, float]] = {}
        for class_name, totals in self.capacity.items():
            consumed = self._consumed.get(class_name, {})
            share[class_name] = {
                name: round(float(consumed.get(name, Fraction(0)) / total), 4)
                for name, total in totals.items()
                if total > 0
            }
        sample: dict[str, Any] = {
            "cycle": self._cycle(),
            "t": round(self._now(), 3),
            "allocated": allocated,
        }
        if share:
            sample["capacityShare"] = share
        last = self.series[-1] if self.series else None
        if last is not None and (last["cycle"], last["t"]) == (sample["cycle"], sample["t"]):
            self.series[-1] = sample  # several writes of one cycle: its final state
        else:
            self.series.append(sample)

    def to_dict(self) -> dict[str, Any]:
        """The ``devices`` entry of ``simulate --output json``."""
        return {
            "classes": [
                {
                    "name": name,
                    "devices": self.devices.get(name, 0),
                    **(
                        {
                            "capacity": {
                                k: readable_quantity(v) for k, v in self.capacity[name].items()
                            }
                        }
                        if name in self.capacity
                        else {}
                    ),
                }
                for name in self.classes
            ],
            "series": self.series,
        }


def _results(claim: Manifest) -> list[_Held]:
    """The claim's allocated results with the class of the request each answers (results
    with admin access hold nothing)."""
    status = _mapping(claim.get("status"))
    results = _list(_mapping(_mapping(status.get("allocation")).get("devices")).get("results"))
    if not results:
        return []
    classes: dict[str, str] = {}
    for raw in _list(_mapping(_mapping(claim.get("spec")).get("devices")).get("requests")):
        request = _mapping(raw)
        name = str(request.get("name") or "")
        exactly = request.get("exactly")
        if exactly is not None:
            classes[name] = str(_mapping(exactly).get("deviceClassName") or "")
        for sub in _list(request.get("firstAvailable")):
            sub_name = str(_mapping(sub).get("name") or "")
            classes[f"{name}/{sub_name}"] = str(_mapping(sub).get("deviceClassName") or "")
    held: list[_Held] = []
    for raw in results:
        result = _mapping(raw)
        class_name = classes.get(str(result.get("request")), "")
        if result.get("adminAccess") is True or not class_name:
            continue
        device = f"{result.get('driver')}/{result.get('pool')}/{result.get('device')}"
        consumed: dict[str, Fraction] = {}
        for name, value in _mapping(result.get("consumedCapacity")).items():
            try:
                consumed[str(name)] = parse_quantity(value)
            except QuantityError:
                continue
        held.append((class_name, device, consumed))
    return held


# The fields of an allocated result that say which device (or share of one) it holds.
_RESULT_FIELDS = ("request", "driver", "pool", "device", "shareID", "consumedCapacity")


def pod_devices(pod: Pod, claims: Mapping[str, Manifest]) -> list[dict[str, Any]]:
    """The devices allocated to the pod's claims (``claims`` by ``namespace/name``): its
    ``spec.resourceClaims`` in order, then the claim for its extended resources; per
    allocated result, the claim's name and the result's request, driver, pool and device
    (with its share ID and consumed capacity when it has them)."""
    names: list[str] = []
    for entry in pod.resource_claims:
        if entry.claim_name is not None:
            names.append(entry.claim_name)
        elif entry.template_name is not None:
            made = pod.resource_claim_statuses.get(entry.name)
            if made:
                names.append(made)
    extended = _mapping(pod.status.get("extendedResourceClaimStatus")).get("resourceClaimName")
    if extended:
        names.append(str(extended))
    out: list[dict[str, Any]] = []
    for name in names:
        claim = claims.get(f"{pod.namespace}/{name}")
        if claim is None:
            continue
        allocation = _mapping(_mapping(claim.get("status")).get("allocation"))
        for raw in _list(_mapping(allocation.get("devices")).get("results")):
            result = _mapping(raw)
            held: dict[str, Any] = {"claim": name}
            held.update((k, result[k]) for k in _RESULT_FIELDS if k in result)
            out.append(held)
    return out
