"""NodeResourcesFit: does the node have room for the pod, and how full will it be.

k8s ``plugins/noderesources/fit.go`` with its scoring strategies (``least_allocated.go``,
``most_allocated.go``, ``requested_to_capacity_ratio.go``) as of v1.33.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.resources import is_scalar_resource_name
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.node_info import NodeInfo
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.helpers import go_div, is_extended_resource_name
from wasmsched.plugins.resource_allocation import (
    KIND_CPU,
    KIND_EPHEMERAL,
    KIND_MEMORY,
    ResourceSpec,
    go_round,
    parse_resource_specs,
    pod_request_list,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.api.resources import Resource
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult

NAME = "NodeResourcesFit"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

REASON_TOO_MANY_PODS = "Too many pods"
REASON_CPU = "Insufficient cpu"
REASON_MEMORY = "Insufficient memory"
REASON_EPHEMERAL = "Insufficient ephemeral-storage"

# Bits of the fixed (non-scalar) failures, in the order k8s reports them.
_PODS, _CPU, _MEMORY, _EPHEMERAL = 1, 2, 4, 8
_FIXED_REASONS = (
    (_PODS, REASON_TOO_MANY_PODS),
    (_CPU, REASON_CPU),
    (_MEMORY, REASON_MEMORY),
    (_EPHEMERAL, REASON_EPHEMERAL),
)

_QUALIFIED_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


class PodRequest:
    """The pod's request as Filter reads it, computed once in PreFilter."""

    __slots__ = ("empty", "ephemeral_storage", "memory", "milli_cpu", "scalars")

    def __init__(
        self,
        request: Resource,
        ignored: frozenset[str] = frozenset(),
        ignored_groups: frozenset[str] = frozenset(),
    ) -> None:
        self.milli_cpu = request.milli_cpu
        self.memory = request.memory
        self.ephemeral_storage = request.ephemeral_storage
        scalar = request.scalar
        self.empty = not (self.milli_cpu or self.memory or self.ephemeral_storage or scalar)
        # (name, quantity, reason) for the scalar resources Filter must check.
        self.scalars: tuple[tuple[str, int, str], ...] = tuple(
            (name, qty, "Insufficient " + name)
            for name, qty in scalar.items()
            if qty and not _ignored(name, ignored, ignored_groups)
        )

    def clone(self) -> PodRequest:
        """StateData.Clone (noderesources/fit.go: preFilterState.Clone): read-only, shared."""
        return self


def _ignored(name: str, ignored: frozenset[str], groups: frozenset[str]) -> bool:
    if not is_extended_resource_name(name):
        return False
    return name in ignored or (bool(groups) and name.split("/", 1)[0] in groups)


def insufficient_resources(
    request: PodRequest, node_info: NodeInfo
) -> tuple[int, list[str] | None] | None:
    """None when the pod fits, else (bitmask of fixed failures, scalar failure reasons or None).

    Nothing is allocated when the pod fits: Filter calls this for every node.
    """
    alloc = node_info.allocatable
    mask = _PODS if len(node_info.pods) + 1 > alloc.allowed_pod_number else 0
    if request.empty:
        return (mask, None) if mask else None
    used = node_info.requested
    if request.milli_cpu and request.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        mask |= _CPU
    if request.memory and request.memory > alloc.memory - used.memory:
        mask |= _MEMORY
    eph = request.ephemeral_storage
    if eph and eph > alloc.ephemeral_storage - used.ephemeral_storage:
        mask |= _EPHEMERAL
    extra: list[str] | None = None
    if request.scalars:
        alloc_scalar = alloc.scalar
        used_scalar = used.scalar
        for name, qty, reason in request.scalars:
            if qty > alloc_scalar.get(name, 0) - used_scalar.get(name, 0):
                if extra is None:
                    extra = [reason]
                else:
                    extra.append(reason)
    if not mask and extra is None:
        return None
    return mask, extra


def fits(pod: Pod, node_info: NodeInfo) -> list[str]:
    """Reasons the pod does not fit the node, empty when it fits (noderesources.Fits)."""
    found = insufficient_resources(PodRequest(pod.requests), node_info)
    if found is None:
        return []
    mask, extra = found
    reasons = [reason for bit, reason in _FIXED_REASONS if mask & bit]
    if extra:
        reasons.extend(extra)
    return reasons


class _Scorer:
    """One scoring strategy over the configured resources (resourceAllocationScorer)."""

    __slots__ = ("resource_score", "resources", "rtcr")

    def __init__(
        self,
        resources: Sequence[ResourceSpec],
        resource_score: Callable[[int, int], int],
        rtcr: bool,
    ) -> None:
        self.resources = tuple(resources)
        self.resource_score = resource_score
        self.rtcr = rtcr

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> int:
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

    def score_many(self, nodes: Sequence[NodeInfo], pod_requests: Sequence[int]) -> list[int]:
        """``score`` of every node, in order; cpu and memory alone (the default resources)
        take a loop without the per-resource dispatch, with the same integer arithmetic.
        """
        specs = self.resources
        if (
            self.rtcr
            or len(specs) != 2
            or specs[0].kind != KIND_CPU
            or specs[1].kind != KIND_MEMORY
        ):
            return [self.score(ni, pod_requests) for ni in nodes]
        resource_score = self.resource_score
        cpu_weight, memory_weight = specs[0].weight, specs[1].weight
        pod_cpu, pod_memory = pod_requests
        out: list[int] = []
        append = out.append
        if resource_score is least_requested_score:
            # leastRequestedScore inline: (capacity - requested) * 100 / capacity, or 0.
            for ni in nodes:
                alloc_res = ni.allocatable
                alloc_cpu = alloc_res.milli_cpu
                alloc_memory = alloc_res.memory
                node_score = 0
                weight_sum = 0
                if alloc_cpu:
                    req = ni.non_zero_cpu + pod_cpu
                    if req <= alloc_cpu:
                        node_score = (alloc_cpu - req) * MAX_NODE_SCORE // alloc_cpu * cpu_weight
                    weight_sum = cpu_weight
                if alloc_memory:
                    req = ni.non_zero_memory + pod_memory
                    if req <= alloc_memory:
                        node_score += (
                            (alloc_memory - req) * MAX_NODE_SCORE // alloc_memory * memory_weight
                        )
                    weight_sum += memory_weight
                append(node_score // weight_sum if weight_sum else 0)
            return out
        for ni in nodes:
            alloc_res = ni.allocatable
            alloc_cpu = alloc_res.milli_cpu
            alloc_memory = alloc_res.memory
            node_score = 0
            weight_sum = 0
            if alloc_cpu:
                node_score = resource_score(ni.non_zero_cpu + pod_cpu, alloc_cpu) * cpu_weight
                weight_sum = cpu_weight
            if alloc_memory:
                node_score += (
                    resource_score(ni.non_zero_memory + pod_memory, alloc_memory) * memory_weight
                )
                weight_sum += memory_weight
            append(node_score // weight_sum if weight_sum else 0)
        return out


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


class _PreScoreState:
    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        return self


class FitArgs:
    """Validated NodeResourcesFitArgs (v1 defaults applied)."""

    __slots__ = ("ignored_resource_groups", "ignored_resources", "resources", "shape", "strategy")

    def __init__(self, raw: dict[str, Any] | None) -> None:
        raw = dict(raw or {})
        raw.pop("apiVersion", None)
        raw.pop("kind", None)
        known = {"scoringStrategy", "ignoredResources", "ignoredResourceGroups"}
        for key in raw:
            if key not in known:
                raise ValueError(f"NodeResourcesFitArgs: {key}: unknown field")
        self.ignored_resources = frozenset(_names(raw.get("ignoredResources"), "ignoredResources"))
        groups = _names(raw.get("ignoredResourceGroups"), "ignoredResourceGroups")
        for i, group in enumerate(groups):
            if "/" in group:
                raise ValueError(
                    f"NodeResourcesFitArgs: ignoredResourceGroups[{i}]: Invalid value: "
                    f"{group!r}: resource group name can't contain '/'"
                )
        self.ignored_resource_groups = frozenset(groups)

        strategy = raw.get("scoringStrategy")
        if strategy is None:
            strategy = {"type": LEAST_ALLOCATED}
        if not isinstance(strategy, dict):
            raise ValueError("NodeResourcesFitArgs: scoringStrategy: must be a mapping")
        self.strategy = strategy.get("type")
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: "
                f"{self.strategy!r}: supported values: {', '.join(STRATEGIES)}"
            )
        try:
            self.resources = parse_resource_specs(
                strategy.get("resources"), "scoringStrategy.resources"
            )
        except ValueError as e:
            raise ValueError(f"NodeResourcesFitArgs: {e}") from None
        for i, spec in enumerate(self.resources):
            if spec.weight <= 0 or spec.weight > 100:
                raise ValueError(
                    f"NodeResourcesFitArgs: scoringStrategy.resources[{i}].weight: Invalid value: "
                    f"{spec.weight}: resource weight of {spec.name} not in valid range (0, 100]"
                )
        self.shape: list[tuple[int, int]] = []
        rtcr = strategy.get("requestedToCapacityRatio")
        if rtcr is not None:
            if not isinstance(rtcr, dict):
                raise ValueError(
                    "NodeResourcesFitArgs: scoringStrategy.requestedToCapacityRatio: "
                    "must be a mapping"
                )
            self.shape = _shape(rtcr.get("shape"))
        elif self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            raise ValueError(
                "NodeResourcesFitArgs: scoringStrategy.requestedToCapacityRatio: Required value: "
                "RequestedToCapacityRatio needs a shape"
            )


def _names(raw: Any, field: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"NodeResourcesFitArgs: {field}: must be a list of strings")
    for i, name in enumerate(raw):
        if not isinstance(name, str) or not _QUALIFIED_NAME.match(name) or len(name) > 316:
            raise ValueError(
                f"NodeResourcesFitArgs: {field}[{i}]: Invalid value: {name!r}: "
                "must be a qualified name"
            )
    return list(raw)


def _shape(raw: Any) -> list[tuple[int, int]]:
    field = "NodeResourcesFitArgs: scoringStrategy.shape"
    if not raw:
        raise ValueError(f"{field}: Required value: at least one point must be specified")
    if not isinstance(raw, list):
        raise ValueError(f"{field}: must be a list of {{utilization, score}}")
    points: list[tuple[int, int]] = []
    for i, point in enumerate(raw):
        if not isinstance(point, dict):
            raise ValueError(f"{field}[{i}]: must be a mapping with utilization and score")
        u = point.get("utilization", 0)
        s = point.get("score", 0)
        for key, value in (("utilization", u), ("score", s)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(
                    f"{field}[{i}].{key}: Invalid value: {value!r}: must be an integer"
                )
        points.append((u, s))
    for i in range(1, len(points)):
        if points[i - 1][0] >= points[i][0]:
            raise ValueError(
                f"{field}[{i}].utilization: Invalid value: {points[i][0]}: "
                "values must be sorted in increasing order"
            )
    for i, (u, s) in enumerate(points):
        if not 0 <= u <= MAX_UTILIZATION:
            raise ValueError(
                f"{field}[{i}].utilization: Invalid value: {u}: not in valid range [0, 100]"
            )
        if not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ValueError(f"{field}[{i}].score: Invalid value: {s}: not in valid range [0, 10]")
    return points


class NodeResourcesFit:
    """Filter by free resources; score by the configured strategy."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        parsed = FitArgs(args)
        self.args = parsed
        self.handle = handle
        self.ignored_resources = parsed.ignored_resources
        self.ignored_resource_groups = parsed.ignored_resource_groups
        self.resources = tuple(parsed.resources)
        if parsed.strategy == LEAST_ALLOCATED:
            self._scorer = _Scorer(self.resources, least_requested_score, rtcr=False)
        elif parsed.strategy == MOST_ALLOCATED:
            self._scorer = _Scorer(self.resources, most_requested_score, rtcr=False)
        else:
            self._scorer = _Scorer(
                self.resources, requested_to_capacity_ratio_score(parsed.shape), rtcr=True
            )
        # Statuses for the fixed failure combinations, built on first use and shared.
        self._statuses: dict[int, Status] = {}

    # --- PreFilter / Filter ---------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (fit.go: Fit.PreFilter): computes the pod's effective requests once."""
        state.write(
            PRE_FILTER_KEY,
            PodRequest(pod.requests, self.ignored_resources, self.ignored_resource_groups),
        )
        return None, None

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (fit.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (fit.go: Fit.Filter): rejects a node without room for the pod's requests
        (fitsRequest), one reason per insufficient resource.
        """
        request = state.get(PRE_FILTER_KEY)
        if request is None:
            return Status(
                Code.ERROR, f'error reading "{PRE_FILTER_KEY}" from cycleState: not found'
            )
        found = insufficient_resources(request, node_info)
        if found is None:
            return None
        return self._rejection(found)

    def filter_batch(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> list[Status | None]:
        """``filter`` of every node in one call (the framework's batch Filter form); a pod
        that requests cpu, memory and pods only takes an inline fitsRequest loop.
        """
        request = state.get(PRE_FILTER_KEY)
        if request is None:
            return [self.filter(state, pod, ni) for ni in nodes]
        if request.empty or request.ephemeral_storage or request.scalars:
            return [
                None
                if (found := insufficient_resources(request, ni)) is None
                else self._rejection(found)
                for ni in nodes
            ]
        cpu = request.milli_cpu
        memory = request.memory
        out: list[Status | None] = []
        append = out.append
        for ni in nodes:
            alloc = ni.allocatable
            used = ni.requested
            mask = _PODS if len(ni.pods) + 1 > alloc.allowed_pod_number else 0
            if cpu and cpu > alloc.milli_cpu - used.milli_cpu:
                mask |= _CPU
            if memory and memory > alloc.memory - used.memory:
                mask |= _MEMORY
            append(self._rejection((mask, None)) if mask else None)
        return out

    def _rejection(self, found: tuple[int, list[str] | None]) -> Status:
        """The Unschedulable status of insufficient_resources' answer (one per fixed mask)."""
        mask, extra = found
        if extra is None:
            status = self._statuses.get(mask)
            if status is None:
                status = Status(Code.UNSCHEDULABLE, *(r for bit, r in _FIXED_REASONS if mask & bit))
                self._statuses[mask] = status
            return status
        reasons = [r for bit, r in _FIXED_REASONS if mask & bit]
        reasons.extend(extra)
        return Status(Code.UNSCHEDULABLE, *reasons)

    # --- PreScore / Score -----------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (fit.go: Fit.PreScore): the pod's requests of the scored resources."""
        state.write(PRE_SCORE_KEY, _PreScoreState(pod_request_list(pod, self.resources, False)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (fit.go: Fit.Score): the scoring strategy's score (LeastAllocated,
        MostAllocated or RequestedToCapacityRatio) of the node with the pod placed.
        """
        s = state.get(PRE_SCORE_KEY)
        pod_requests = (
            s.pod_requests if s is not None else pod_request_list(pod, self.resources, False)
        )
        return self._scorer.score(node_info, pod_requests), None

    def score_batch(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """``score`` of every node in one call (the framework's batch Score form)."""
        s = state.get(PRE_SCORE_KEY)
        pod_requests = (
            s.pod_requests if s is not None else pod_request_list(pod, self.resources, False)
        )
        return self._scorer.score_many(nodes, pod_requests), None

    def score_extensions(self) -> None:
        """ScoreExtensions (fit.go): none."""
        return None

    # --- queueing hints -------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (fit.go: Fit.EventsToRegister): Pod Delete/UpdatePodScaleDown and
        Node Add/UpdateNodeAllocatable, each with its queueing hint.
        """
        # Queueing hints and InPlacePodVerticalScaling are both on by default in v1.33.
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_event(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A scheduled pod deleted, or a pod scaled down, may free what ``pod`` needs."""
        if new_obj is None:
            if old_obj is None or not old_obj.node_name:
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        if old_obj is None:
            return QueueingHint.QUEUE_SKIP
        if _scale_down_frees(pod, old_obj, new_obj):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """A node that is added, or grows, and could hold the pod when empty."""
        if new_obj is None or not _is_fit(pod, new_obj):
            return QueueingHint.QUEUE_SKIP
        if old_obj is None:
            return QueueingHint.QUEUE
        if _requested_resources_increased(pod, old_obj, new_obj):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _scale_down_frees(target: Pod, original: Pod, modified: Pod) -> bool:
    if modified.uid == target.uid:
        return True
    if not modified.node_name:
        return False
    before = original.requests
    after = modified.requests
    wanted = target.requests
    if wanted.milli_cpu and before.milli_cpu > after.milli_cpu:
        return True
    if wanted.memory and before.memory > after.memory:
        return True
    if wanted.ephemeral_storage and before.ephemeral_storage > after.ephemeral_storage:
        return True
    for name, qty in wanted.scalar.items():
        if (
            qty
            and is_scalar_resource_name(name)
            and (before.scalar.get(name, 0) > after.scalar.get(name, 0))
        ):
            return True
    return False


def _is_fit(pod: Pod, node: Node) -> bool:
    return not fits(pod, NodeInfo(node))


def _requested_resources_increased(pod: Pod, original: Node, modified: Node) -> bool:
    before = original.allocatable
    after = modified.allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    request = pod.requests
    if not (request.milli_cpu or request.memory or request.ephemeral_storage or request.scalar):
        return False
    if (
        (request.milli_cpu and after.milli_cpu > before.milli_cpu)
        or (request.memory and after.memory > before.memory)
        or (request.ephemeral_storage and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(
        qty and after.scalar.get(name, 0) > before.scalar.get(name, 0)
        for name, qty in request.scalar.items()
    )


def new(args: dict[str, Any], handle: Handle) -> NodeResourcesFit:
    """The registry factory (fit.go: NewFit), from NodeResourcesFitArgs."""
    return NodeResourcesFit(args, handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import (
        EnqueueExtensions,
        FilterPlugin,
        PreFilterPlugin,
        PreScorePlugin,
        ScorePlugin,
    )

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreFilterPlugin = &NodeResourcesFit{}`
    # (pkg/scheduler/framework/plugins/noderesources/fit.go).
    _pre_filter: type[PreFilterPlugin] = NodeResourcesFit
    _filter: type[FilterPlugin] = NodeResourcesFit
    _pre_score: type[PreScorePlugin] = NodeResourcesFit
    _score: type[ScorePlugin] = NodeResourcesFit
    _enqueue_extensions: type[EnqueueExtensions] = NodeResourcesFit
