"""Resource lists and per-node lookups shared by NodeResourcesFit and BalancedAllocation.

Mirrors k8s ``noderesources/resource_allocation.go``: a plugin scores a fixed list of
resources; the pod's request for each is computed once per cycle (PreScore) and each
node contributes ``(allocatable, requested + pod request)`` per resource.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.api.resources import is_scalar_resource_name
from wasmsched.framework.columns import SAFE_LIMIT, IntArray, NodeRows
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.plugins.helpers import go_div

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.node_info import NodeInfo

KIND_CPU = 0
KIND_MEMORY = 1
KIND_EPHEMERAL = 2
KIND_OTHER = 3

_KINDS = {"cpu": KIND_CPU, "memory": KIND_MEMORY, "ephemeral-storage": KIND_EPHEMERAL}

DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))

MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


class ResourceSpec:
    """A scored resource: its name, weight and which NodeInfo field holds it."""

    __slots__ = ("kind", "name", "scalar", "weight")

    def __init__(self, name: str, weight: int) -> None:
        self.name = name
        self.weight = weight
        self.kind = _KINDS.get(name, KIND_OTHER)
        self.scalar = self.kind == KIND_OTHER and is_scalar_resource_name(name)

    def __repr__(self) -> str:
        return f"ResourceSpec({self.name!r}, {self.weight})"


def parse_resource_specs(raw: Any, field: str) -> list[ResourceSpec]:
    """``[{name, weight}]`` with v1 defaulting: empty list -> cpu, memory; weight 0 -> 1."""
    if raw is None or raw == []:
        return [ResourceSpec(n, w) for n, w in DEFAULT_RESOURCES]
    if not isinstance(raw, list):
        raise ValueError(f"{field}: must be a list of {{name, weight}}")
    specs = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"{field}[{i}]: must be a mapping with name and weight")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{field}[{i}].name: Required value")
        weight = item.get("weight", 0)
        if weight is None:
            weight = 0
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise ValueError(f"{field}[{i}].weight: Invalid value: {weight!r}: must be an integer")
        specs.append(ResourceSpec(name, weight or 1))
    return specs


class PodRequests:
    """The pod's request of each scored resource, computed once at PreScore: the PreScore
    state of NodeResourcesFit and of BalancedAllocation alike (fit.go ``preScoreState``,
    balanced_allocation.go ``balancedAllocationPreScoreState``: both ``podRequests``)."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> PodRequests:
        """Itself: read-only once written (framework.StateData.Clone)."""
        return self


def pod_request_list(
    pod: Pod, specs: Sequence[ResourceSpec], use_requested: bool, pod_level: bool = False
) -> list[int]:
    """The pod's request for each spec; cpu/memory non-zero unless ``use_requested``.

    Non-zero requests give each container that sets no cpu/memory request the scheduler's
    defaults (100m, 200Mi), as ``NonMissingContainerRequests`` does; with ``pod_level``
    (PodLevelResources) the pod-level requests then replace the aggregate
    (resource_allocation.go: calculatePodResourceRequest).
    """
    requests = pod.pod_level_requests if pod_level else pod.requests
    if use_requested:
        cpu, memory = requests.milli_cpu, requests.memory
    elif pod_level:
        cpu, memory = pod.pod_level_non_zero_requests
    else:
        cpu, memory = pod.non_zero_requests
    out = []
    for spec in specs:
        kind = spec.kind
        if kind == KIND_CPU:
            out.append(cpu)
        elif kind == KIND_MEMORY:
            out.append(memory)
        elif kind == KIND_EPHEMERAL:
            out.append(requests.ephemeral_storage)
        else:
            out.append(requests.scalar.get(spec.name, 0))
    return out


def allocatable_requested(
    node_info: NodeInfo, spec: ResourceSpec, pod_request: int, use_requested: bool
) -> tuple[int, int]:
    """(allocatable, requested including the pod); (0, 0) means "not scored here"."""
    kind = spec.kind
    if kind == KIND_CPU:
        used = node_info.requested.milli_cpu if use_requested else node_info.non_zero_cpu
        return node_info.allocatable.milli_cpu, used + pod_request
    if kind == KIND_MEMORY:
        used = node_info.requested.memory if use_requested else node_info.non_zero_memory
        return node_info.allocatable.memory, used + pod_request
    if kind == KIND_EPHEMERAL:
        return (
            node_info.allocatable.ephemeral_storage,
            node_info.requested.ephemeral_storage + pod_request,
        )
    # An extended resource the pod does not request is left out of the score.
    if pod_request == 0 and spec.scalar:
        return 0, 0
    alloc = node_info.allocatable.scalar.get(spec.name)
    if alloc is None:
        return 0, 0
    return alloc, node_info.requested.scalar.get(spec.name, 0) + pod_request


def go_round(x: float) -> int:
    """math.Round: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return t


# --- NodeResourcesFit's scoring strategies (noderesources/least_allocated.go,
# most_allocated.go, requested_to_capacity_ratio.go) --------------------------------------


class Scorer:
    """One scoring strategy over the configured resources (resourceAllocationScorer)."""

    __slots__ = ("_lut", "resource_score", "resources", "rtcr")

    def __init__(
        self,
        resources: Sequence[ResourceSpec],
        resource_score: Callable[[int, int], int],
        rtcr: bool,
    ) -> None:
        self.resources = tuple(resources)
        self.resource_score = resource_score
        self.rtcr = rtcr
        # RequestedToCapacityRatio scores a utilization in [0, 100] (a request above
        # capacity counts as 100): its broken-linear function as a table of the 101 values.
        self._lut = np.array([resource_score(p, MAX_UTILIZATION) for p in range(101)], np.int64)

    def score_columns(self, rows: NodeRows, pod_requests: Sequence[int]) -> IntArray | None:
        """``score`` of every row with the same integer arithmetic over arrays
        (resource_allocation.go: resourceAllocationScorer.score), or None when a request is
        too large for int64."""
        columns = rows.columns
        r = rows.rows
        specs = self.resources
        if (
            self.resource_score is least_requested_score
            and len(specs) == 2
            and specs[0].kind == KIND_CPU
            and specs[1].kind == KIND_MEMORY
            and abs(pod_requests[0]) < SAFE_LIMIT
            and abs(pod_requests[1]) < SAFE_LIMIT
        ):
            alloc_cpu = columns.alloc_cpu[r]
            alloc_memory = columns.alloc_memory[r]
            if alloc_cpu.all() and alloc_memory.all():
                # The default strategy with both resources on every row: leastRequestedScore
                # of each, then their weighted mean, without the per-resource dispatch.
                req_cpu = columns.non_zero_cpu[r] + pod_requests[0]
                req_memory = columns.non_zero_memory[r] + pod_requests[1]
                cpu = (alloc_cpu - req_cpu) * MAX_NODE_SCORE // alloc_cpu
                cpu[req_cpu > alloc_cpu] = 0
                memory = (alloc_memory - req_memory) * MAX_NODE_SCORE // alloc_memory
                memory[req_memory > alloc_memory] = 0
                w_cpu, w_memory = specs[0].weight, specs[1].weight
                fast: IntArray = (cpu * w_cpu + memory * w_memory) // (w_cpu + w_memory)
                return fast
        node_score = np.zeros(len(r), np.int64)
        weight_sum = np.zeros(len(r), np.int64)
        resource_score = self.resource_score
        for spec, pod_request in zip(self.resources, pod_requests, strict=True):
            if abs(pod_request) >= SAFE_LIMIT:
                return None
            kind = spec.kind
            if kind == KIND_CPU:
                alloc, req = columns.alloc_cpu[r], columns.non_zero_cpu[r] + pod_request
            elif kind == KIND_MEMORY:
                alloc, req = columns.alloc_memory[r], columns.non_zero_memory[r] + pod_request
            elif kind == KIND_EPHEMERAL:
                alloc, req = columns.alloc_ephemeral[r], columns.req_ephemeral[r] + pod_request
            else:
                if pod_request == 0 and spec.scalar:
                    continue
                scalar_alloc, scalar_req = columns.scalar(spec.name)
                if not columns.usable:
                    return None
                alloc, req = scalar_alloc[r], scalar_req[r] + pod_request
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            if resource_score is least_requested_score:
                score = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // safe)
            elif resource_score is most_requested_score:
                score = np.minimum(req, alloc) * MAX_NODE_SCORE // safe
            else:
                utilization = np.where(req > alloc, MAX_UTILIZATION, req * MAX_UTILIZATION // safe)
                score = self._lut[np.clip(utilization, 0, MAX_UTILIZATION)]
            if self.rtcr:
                has &= score > 0
            node_score += np.where(has, score * spec.weight, 0)
            weight_sum += np.where(has, spec.weight, 0)
        scored = weight_sum != 0
        divisor = np.where(scored, weight_sum, 1)
        if self.rtcr:
            x = node_score / divisor
            t = np.trunc(x)
            t = t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)
            out: IntArray = np.where(scored, t.astype(np.int64), 0)
            return out
        result: IntArray = np.where(scored, node_score // divisor, 0)
        return result

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> int:
        """The node's score with the pod placed (resource_allocation.go:
        resourceAllocationScorer.score): the weighted mean of the per-resource scores."""
        alloc_res = node_info.allocatable
        node_score = 0
        weight_sum = 0
        resource_score = self.resource_score
        rtcr = self.rtcr
        for spec, pod_request in zip(self.resources, pod_requests, strict=True):
            kind = spec.kind
            # Non-zero requested for cpu/memory (useRequested is false for this plugin).
            if kind == KIND_CPU:
                alloc = alloc_res.milli_cpu
                req = node_info.non_zero_cpu + pod_request
            elif kind == KIND_MEMORY:
                alloc = alloc_res.memory
                req = node_info.non_zero_memory + pod_request
            elif kind == KIND_EPHEMERAL:
                alloc = alloc_res.ephemeral_storage
                req = node_info.requested.ephemeral_storage + pod_request
            else:
                if pod_request == 0 and spec.scalar:
                    continue
                alloc = alloc_res.scalar.get(spec.name, 0)
                req = node_info.requested.scalar.get(spec.name, 0) + pod_request
            if alloc == 0:
                continue
            s = resource_score(req, alloc)
            # RequestedToCapacityRatio averages only the resources that scored above 0.
            if rtcr and s <= 0:
                continue
            node_score += s * spec.weight
            weight_sum += spec.weight
        if weight_sum == 0:
            return 0
        if rtcr:
            return go_round(node_score / weight_sum)
        return node_score // weight_sum


def least_requested_score(requested: int, capacity: int) -> int:
    """leastRequestedScore (noderesources/least_allocated.go): more free capacity scores
    higher; a request above capacity scores 0.
    """
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """mostRequestedScore (noderesources/most_allocated.go): fuller nodes score higher; the
    request is capped at capacity.
    """
    if capacity == 0:
        return 0
    # Pods without requests get minimum values, so requested may exceed capacity.
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Piecewise-linear f(utilization) through the (utilization, score) points, in Go ints."""
    points = tuple(shape)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return points[0][1]
                pu, ps = points[i - 1]
                return ps + go_div((s - ps) * (p - pu), u - pu)
        return points[-1][1]

    return f


def requested_to_capacity_ratio_score(
    shape: Sequence[tuple[int, int]],
) -> Callable[[int, int], int]:
    """The per-resource score of RequestedToCapacityRatio; shape scores are 0..10, scaled x10."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(u, s * scale) for u, s in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    return resource_score
