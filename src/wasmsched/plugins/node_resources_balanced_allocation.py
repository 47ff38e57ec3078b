"""NodeResourcesBalancedAllocation: favours nodes whose resource fractions stay even.

k8s ``plugins/noderesources/balanced_allocation.go``: it scores with the real
``Requested`` sums (``useRequested: true``), not the non-zero ones, and skips best-effort
pods (every configured request zero) at PreScore. Up to v1.35 a node scores the balance it
has with the pod placed; since v1.36 the change in balance the pod makes
(``balancedResourceScorer``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.batching import RESOURCES_SIGNER, resources_signature
from wasmsched.framework.columns import SAFE_LIMIT, IntArray, NodeRows
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.helpers import ALL_EVENTS, features_of
from wasmsched.plugins.resource_allocation import (
    KIND_CPU,
    KIND_EPHEMERAL,
    KIND_MEMORY,
    PodRequests,
    ResourceSpec,
    allocatable_requested,
    parse_resource_specs,
    pod_request_list,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.framework.types import ClusterEventWithHint

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_KEY = "PreScore" + NAME


def parse_args(raw: dict[str, Any] | None) -> list[ResourceSpec]:
    """NodeResourcesBalancedAllocationArgs: ``resources`` (default cpu, memory), weights all 1."""
    raw = dict(raw or {})
    raw.pop("apiVersion", None)
    raw.pop("kind", None)
    for key in raw:
        if key != "resources":
            raise ValueError(f"NodeResourcesBalancedAllocationArgs: {key}: unknown field")
    try:
        specs = parse_resource_specs(raw.get("resources"), "resources")
    except ValueError as e:
        raise ValueError(f"NodeResourcesBalancedAllocationArgs: {e}") from None
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        if spec.name in seen:
            raise ValueError(
                f"NodeResourcesBalancedAllocationArgs: resources[{i}].name: "
                f"Duplicate value: {spec.name!r}"
            )
        seen.add(spec.name)
        if spec.weight != 1:
            raise ValueError(
                f"NodeResourcesBalancedAllocationArgs: resources[{i}].weight: "
                f"Invalid value: {spec.weight}: must be 1"
            )
    return specs


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """(1 - std of the requested fractions) * 100, truncated; fractions capped at 1.

    Float operations follow k8s' order exactly so that the truncation agrees.
    """
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = float(req) / float(alloc)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / n
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / n)
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_change_score(
    requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
) -> int:
    """How much placing the pod improves the node's balance (v1.36+ balanced_allocation.go:
    balancedResourceScorer): 75 for no change, towards 100 better, towards 50 worse.

    Both balances lie in [50, 100], so the halved sum is never negative and Go's integer
    division is Python's.
    """
    with_pod = balanced_resource_score(requested, allocatable)
    without_pod = balanced_resource_score(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + (half + with_pod - without_pod) // 2


class NodeResourcesBalancedAllocation:
    """The NodeResourcesBalancedAllocation Score plugin
    (pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go: BalancedAllocation).
    """

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.resources = tuple(parse_args(args))
        self.handle = handle
        self._skip = Status(Code.SKIP)
        features = features_of(handle)
        self._scores_change = features.balanced_allocation_scores_change
        self._pod_level = features.pod_level_resources

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (balanced_allocation.go: BalancedAllocation.PreScore): the pod's requests of
        the scored resources; Skip for a best-effort pod.
        """
        pod_requests = pod_request_list(pod, self.resources, True, self._pod_level)
        if not any(pod_requests):
            # Best-effort pods would otherwise all pile onto the same node (k8s #129138).
            return self._skip
        state.write(PRE_SCORE_KEY, PodRequests(pod_requests))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (balanced_allocation.go: BalancedAllocation.Score): how evenly the node's
        resource fractions stay with the pod placed (balancedResourceScorer).
        """
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            pod_requests = pod_request_list(pod, self.resources, True, self._pod_level)
            if not any(pod_requests):
                return 0, None
        else:
            pod_requests = s.pod_requests
        requested = []
        allocated = []
        allocatable = []
        for spec, pod_request in zip(self.resources, pod_requests, strict=True):
            alloc, req = allocatable_requested(node_info, spec, pod_request, True)
            if alloc:
                allocatable.append(alloc)
                requested.append(req)
                allocated.append(req - pod_request)
        if self._scores_change:
            return balanced_resource_change_score(requested, allocated, allocatable), None
        return balanced_resource_score(requested, allocatable), None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` of every row over the columns: balanced_resource_score's float
        operations, in the same order, on arrays (None without PreScore's state, or for a
        request too large for int64)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        with_pod = self._balance_columns(rows, s.pod_requests, True)
        if with_pod is None or not self._scores_change:
            return with_pod
        without_pod = self._balance_columns(rows, s.pod_requests, False)
        if without_pod is None:
            return None
        half = MAX_NODE_SCORE // 2
        change: IntArray = half + (half + with_pod - without_pod) // 2
        return change

    def _balance_columns(
        self, rows: NodeRows, pod_requests: Sequence[int], with_pod: bool
    ) -> IntArray | None:
        """balanced_resource_score of every row, with the pod's requests added or (for the
        balance before the pod) not; the resources scored are the same either way."""
        columns = rows.columns
        r = rows.rows
        specs = self.resources
        if len(specs) == 2 and specs[0].kind == KIND_CPU and specs[1].kind == KIND_MEMORY:
            pod_cpu, pod_memory = pod_requests
            alloc_cpu = columns.alloc_cpu[r]
            alloc_memory = columns.alloc_memory[r]
            if (
                abs(pod_cpu) < SAFE_LIMIT
                and abs(pod_memory) < SAFE_LIMIT
                and alloc_cpu.all()
                and alloc_memory.all()
            ):
                # Both fractions present on every row: the two-fraction case alone.
                if not with_pod:
                    pod_cpu = pod_memory = 0
                f0 = np.minimum((columns.req_cpu[r] + pod_cpu) / alloc_cpu, 1.0)
                f1 = np.minimum((columns.req_memory[r] + pod_memory) / alloc_memory, 1.0)
                fast: IntArray = ((1 - np.abs((f0 - f1) / 2)) * float(MAX_NODE_SCORE)).astype(
                    np.int64
                )
                return fast
        size = len(r)
        count = np.zeros(size, np.int64)
        total = np.zeros(size, np.float64)
        first = np.zeros(size, np.float64)
        second = np.zeros(size, np.float64)
        fractions: list[tuple[np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, Any]]] = []
        for spec, pod_request in zip(self.resources, pod_requests, strict=True):
            if abs(pod_request) >= SAFE_LIMIT:
                return None
            kind = spec.kind
            if kind == KIND_CPU:
                alloc, req = columns.alloc_cpu[r], columns.req_cpu[r]
            elif kind == KIND_MEMORY:
                alloc, req = columns.alloc_memory[r], columns.req_memory[r]
            elif kind == KIND_EPHEMERAL:
                alloc, req = columns.alloc_ephemeral[r], columns.req_ephemeral[r]
            else:
                if pod_request == 0 and spec.scalar:
                    continue
                scalar_alloc, scalar_req = columns.scalar(spec.name)
                if not columns.usable:
                    return None
                alloc, req = scalar_alloc[r], scalar_req[r]
            present = alloc != 0
            f = (req + (pod_request if with_pod else 0)).astype(np.float64) / np.where(
                present, alloc, 1
            ).astype(np.float64)
            f = np.where(f > 1, 1.0, f)
            total = total + np.where(present, f, 0.0)
            first = np.where(present & (count == 0), f, first)
            second = np.where(present & (count == 1), f, second)
            count += present
            fractions.append((f, present))
        std = np.where(count == 2, np.abs((first - second) / 2), 0.0)
        many = count > 2
        if many.any():
            mean = total / np.where(many, count, 1)
            acc = np.zeros(size, np.float64)
            for f, present in fractions:
                acc = acc + np.where(present, (f - mean) * (f - mean), 0.0)
            std = np.where(many, np.sqrt(acc / np.where(many, count, 1)), std)
        out: IntArray = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
        return out

    def score_extensions(self) -> None:
        """ScoreExtensions (balanced_allocation.go): none."""
        return None

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (balanced_allocation.go, 1.35+): the pod's requests, as Fit."""
        return [(RESOURCES_SIGNER, resources_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EnqueueExtensions: every cluster event, as upstream registers for a plugin without
        EventsToRegister (pkg/scheduler/framework/runtime/framework.go: fillEventToPluginMap).
        """
        return list(ALL_EVENTS)


def new(args: dict[str, Any], handle: Handle) -> NodeResourcesBalancedAllocation:
    """The registry factory (balanced_allocation.go: NewBalancedAllocation)."""
    return NodeResourcesBalancedAllocation(args, handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, PreScorePlugin, ScorePlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreScorePlugin = &NodeResourcesBalancedAllocation{}`
    # (pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go).
    _pre_score: type[PreScorePlugin] = NodeResourcesBalancedAllocation
    _score: type[ScorePlugin] = NodeResourcesBalancedAllocation
    _enqueue_extensions: type[EnqueueExtensions] = NodeResourcesBalancedAllocation
