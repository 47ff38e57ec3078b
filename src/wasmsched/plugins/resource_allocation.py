"""Resource lists and per-node lookups shared by NodeResourcesFit and BalancedAllocation.

Mirrors k8s ``noderesources/resource_allocation.go``: a plugin scores a fixed list of
resources; the pod's request for each is computed once per cycle (PreScore) and each
node contributes ``(allocatable, requested + pod request)`` per resource.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.resources import is_scalar_resource_name

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.node_info import NodeInfo

KIND_CPU = 0
KIND_MEMORY = 1
KIND_EPHEMERAL = 2
KIND_OTHER = 3

_KINDS = {"cpu": KIND_CPU, "memory": KIND_MEMORY, "ephemeral-storage": KIND_EPHEMERAL}

DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))


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


def pod_request_list(pod: Pod, specs: Sequence[ResourceSpec], use_requested: bool) -> list[int]:
    """The pod's request for each spec; cpu/memory non-zero unless ``use_requested``.

    Non-zero requests give each container that sets no cpu/memory request the scheduler's
    defaults (100m, 200Mi), as ``NonMissingContainerRequests`` does.
    """
    requests = pod.requests
    if use_requested:
        cpu, memory = requests.milli_cpu, requests.memory
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
