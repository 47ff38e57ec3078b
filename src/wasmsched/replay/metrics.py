"""Metrics over simulated time for a trace replay, kept incrementally.

Every change (a pod bound or gone, a node added, cordoned or deleted) updates a few
sums in O(1) per resource, so a series point can be taken at every change:

- allocation per resource: requested over allocatable, both summed over the nodes that
  are schedulable (not cordoned);
- fragmentation per resource, the FGD paper's notion at node granularity: the free
  capacity on schedulable nodes where the trace's median request of that resource no
  longer fits, as a share of all free capacity on schedulable nodes;
- pods pending, running, completed and failed to schedule.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wasmsched.api.objects import Node, Pod
from wasmsched.api.resources import Resource

CPU = "cpu"
MEMORY = "memory"


def resource_amounts(r: Resource) -> dict[str, int]:
    """A Resource as ``{name: amount}``: cpu in millicores, memory in bytes, scalars as is."""
    out = {CPU: r.milli_cpu, MEMORY: r.memory}
    if r.ephemeral_storage:
        out["ephemeral-storage"] = r.ephemeral_storage
    out.update(r.scalar)
    return out


def qos_class(pod: Pod) -> str:
    """The pod's QoS class (pkg/apis/core/helper/qos/qos.go: GetPodQOS)."""
    spec = pod.spec
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        requests = res.get("requests") or {}
        limits = res.get("limits") or {}
        if requests or limits:
            any_set = True
        for name in (CPU, MEMORY):
            limit = limits.get(name)
            if limit is None or str(requests.get(name, limit)) != str(limit):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    """p50, p90 and p99 by the nearest-rank method (None without values)."""
    if not values:
        return {"p50": None, "p90": None, "p99": None, "max": None}
    ordered = sorted(values)

    def rank(q: float) -> float:
        # ceil(q * n) - 1, with a tolerance for q * n landing a hair above an integer
        index = max(0, min(len(ordered) - 1, math.ceil(q * len(ordered) - 1e-9) - 1))
        return round(ordered[index], 3)

    return {"p50": rank(0.50), "p90": rank(0.90), "p99": rank(0.99), "max": round(ordered[-1], 3)}


def median_requests(pods: Iterable[Pod]) -> dict[str, float]:
    """Per resource, the median request over the pods that request it at all."""
    amounts: dict[str, list[int]] = {}
    for pod in pods:
        for name, amount in resource_amounts(pod.requests).items():
            if amount > 0:
                amounts.setdefault(name, []).append(amount)
    return {name: float(statistics.median(v)) for name, v in amounts.items()}


@dataclass
class _NodeState:
    allocatable: dict[str, int]
    requested: dict[str, int] = field(default_factory=dict)
    schedulable: bool = True


class ClusterMetrics:
    """Allocation and fragmentation over the schedulable nodes, updated per change."""

    def __init__(self, medians: Mapping[str, float]) -> None:
        self.medians = dict(medians)
        self.nodes: dict[str, _NodeState] = {}
        self.allocatable: dict[str, int] = {}
        self.requested: dict[str, int] = {}
        self.free: dict[str, int] = {}
        self.stranded: dict[str, int] = {}  # free capacity where the median does not fit

    # Each node contributes to the sums only while schedulable; a change takes the old
    # contribution out and puts the new one in.
    def _contribute(self, state: _NodeState, sign: int) -> None:
        if not state.schedulable:
            return
        for name, total in state.allocatable.items():
            used = state.requested.get(name, 0)
            free = max(total - used, 0)
            self.allocatable[name] = self.allocatable.get(name, 0) + sign * total
            self.requested[name] = self.requested.get(name, 0) + sign * used
            self.free[name] = self.free.get(name, 0) + sign * free
            median = self.medians.get(name)
            if median is not None and free < median:
                self.stranded[name] = self.stranded.get(name, 0) + sign * free

    def add_node(self, node: Node) -> None:
        old = self.nodes.get(node.name)
        if old is not None:
            self._contribute(old, -1)
        state = _NodeState(
            {k: v for k, v in resource_amounts(node.allocatable).items() if v > 0},
            old.requested if old is not None else {},
            not node.unschedulable,
        )
        self.nodes[node.name] = state
        self._contribute(state, +1)

    def remove_node(self, name: str) -> None:
        state = self.nodes.pop(name, None)
        if state is not None:
            self._contribute(state, -1)

    def pod_changed(self, pod: Pod, sign: int) -> None:
        """A pod bound to its node (+1) or gone from it (-1)."""
        state = self.nodes.get(pod.node_name)
        if state is None:
            return
        self._contribute(state, -1)
        for name, amount in resource_amounts(pod.requests).items():
            if amount:
                state.requested[name] = state.requested.get(name, 0) + sign * amount
        self._contribute(state, +1)

    def allocation(self) -> dict[str, float]:
        return {
            name: round(self.requested.get(name, 0) / total, 6)
            for name, total in sorted(self.allocatable.items())
            if total > 0
        }

    def fragmentation(self) -> dict[str, float]:
        return {
            name: round(self.stranded.get(name, 0) / free, 6) if free > 0 else 0.0
            for name, free in sorted(self.free.items())
            if name in self.medians and self.allocatable.get(name, 0) > 0
        }

    def point(self, t: float, counts: Mapping[str, int]) -> dict[str, Any]:
        return {
            "t": round(t, 3),
            **counts,
            "allocated": self.allocation(),
            "fragmentation": self.fragmentation(),
        }
