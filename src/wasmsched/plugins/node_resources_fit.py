"""NodeResourcesFit: does the node have room for the pod, and how full will it be.

k8s ``plugins/noderesources/fit.go`` with its scoring strategies (``least_allocated.go``,
``most_allocated.go``, ``requested_to_capacity_ratio.go``) as of v1.33; since v1.34 a request
larger than the node's allocatable is UnschedulableAndUnresolvable (fitsRequest).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.api.dra import DEVICE_CLASS, DEVICE_CLASS_RESOURCE_PREFIX
from wasmsched.api.resources import is_scalar_resource_name
from wasmsched.framework.batching import RESOURCES_SIGNER, resources_signature
from wasmsched.framework.columns import SAFE_LIMIT, IntArray, NodeRows
from wasmsched.framework.node_info import NodeInfo
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import DEVICE_CLASS as DEVICE_CLASS_RESOURCE
from wasmsched.framework.types import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.dynamic_resources.extended import ExtendedResourceResolver
from wasmsched.plugins.helpers import features_of, is_extended_resource_name
from wasmsched.plugins.resource_allocation import (
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    PodRequests,
    least_requested_score,
    most_requested_score,
    parse_resource_specs,
    pod_request_list,
    requested_to_capacity_ratio_score,
)
from wasmsched.plugins.resource_allocation import Scorer as _Scorer
from wasmsched.plugins.resource_allocation import (
    broken_linear_function as broken_linear_function,  # re-exported: the strategies' API
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


REASON_TOO_MANY_PODS = "Too many pods"
REASON_CPU = "Insufficient cpu"
REASON_MEMORY = "Insufficient memory"
REASON_EPHEMERAL = "Insufficient ephemeral-storage"

# Bits of the fixed (non-scalar) failures, in the order k8s reports them.
_PODS, _CPU, _MEMORY, _EPHEMERAL = 1, 2, 4, 8
# Set beside the failures when one of them asks more than the node's allocatable (v1.34+
# fit.go: fitsRequest's InsufficientResource.Unresolvable); above the scalars' bits (16 << k
# for at most 48 scalars).
_UNRESOLVABLE = 1 << 62
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

    __slots__ = ("delegated", "empty", "ephemeral_storage", "memory", "milli_cpu", "scalars")

    def __init__(
        self,
        request: Resource,
        ignored: frozenset[str] = frozenset(),
        ignored_groups: frozenset[str] = frozenset(),
        delegated: frozenset[str] = frozenset(),
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
        # Extended resources a DeviceClass backs (DRAExtendedResource): a node that does
        # not advertise one leaves it to DynamicResources (fit.go:
        # shouldDelegateResourceToDRA).
        self.delegated = delegated

    def clone(self) -> PodRequest:
        """StateData.Clone (noderesources/fit.go: preFilterState.Clone): read-only, shared."""
        return self


def _ignored(name: str, ignored: frozenset[str], groups: frozenset[str]) -> bool:
    if not is_extended_resource_name(name):
        return False
    return name in ignored or (bool(groups) and name.split("/", 1)[0] in groups)


def insufficient_resources(
    request: PodRequest, node_info: NodeInfo, unresolvable: bool = False
) -> tuple[int, list[str] | None] | None:
    """None when the pod fits, else (bitmask of fixed failures, scalar failure reasons or None).

    With ``unresolvable`` (v1.34+) the mask carries _UNRESOLVABLE when a failing request
    exceeds the node's allocatable outright ("Too many pods" never does). Nothing is
    allocated when the pod fits: Filter calls this for every node.
    """
    return insufficient_amounts(
        request, node_info.allocatable, node_info.requested, len(node_info.pods), unresolvable
    )


def insufficient_amounts(
    request: PodRequest, alloc: Resource, used: Resource, pods: int, unresolvable: bool = False
) -> tuple[int, list[str] | None] | None:
    """``insufficient_resources`` of a node with allocatable ``alloc``, requested ``used``
    and ``pods`` pods (preemption's what-if sums, plugins/default_preemption.py)."""
    mask = _PODS if pods + 1 > alloc.allowed_pod_number else 0
    if request.empty:
        return (mask, None) if mask else None
    cpu = request.milli_cpu
    if cpu and cpu > alloc.milli_cpu - used.milli_cpu:
        mask |= _CPU | (_UNRESOLVABLE if unresolvable and cpu > alloc.milli_cpu else 0)
    memory = request.memory
    if memory and memory > alloc.memory - used.memory:
        mask |= _MEMORY | (_UNRESOLVABLE if unresolvable and memory > alloc.memory else 0)
    eph = request.ephemeral_storage
    if eph and eph > alloc.ephemeral_storage - used.ephemeral_storage:
        mask |= _EPHEMERAL | (
            _UNRESOLVABLE if unresolvable and eph > alloc.ephemeral_storage else 0
        )
    extra: list[str] | None = None
    if request.scalars:
        alloc_scalar = alloc.scalar
        used_scalar = used.scalar
        delegated = request.delegated
        for name, qty, reason in request.scalars:
            node_alloc = alloc_scalar.get(name, 0)
            if node_alloc <= 0 and name in delegated:
                continue
            if qty > node_alloc - used_scalar.get(name, 0):
                if unresolvable and qty > node_alloc:
                    mask |= _UNRESOLVABLE
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


_SCORES_POD_LEVEL = False
# PodRequests kept by NodeResourcesFit (one per distinct requests object; a cluster has few
# templates); past it the table starts over.
_MAX_POD_REQUESTS = 4096


class NodeResourcesFit:
    """Filter by free resources; score by the configured strategy."""

    name = NAME
    # Filter reads the node's allocatable, requested sums and pod count alone, and writes
    # nothing (framework/nominated.py: nominated_filter).
    filter_reads_sums = True

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
        features = features_of(handle)
        self._unresolvable = features.fit_unresolvable_over_allocatable
        # PodLevelResources: spec.resources.requests count (fit.go: computePodResourceRequest).
        self._pod_level = features.pod_level_resources
        # DRAExtendedResource: extended resources backed by a DeviceClass (fit.go:
        # shouldDelegateResourceToDRA); the classes come through the handle.
        self._dra_extended = features.dra_extended_resource and handle is not None
        self._resolver = ExtendedResourceResolver()
        # The PreFilter state of each requests object seen (id -> (requests, state)): the
        # pods of one template share their parsed requests (api/pod_spec), and a
        # PodRequest is read-only; kept with its requests, so an id is never reused.
        self._pod_requests: dict[int, tuple[Resource, PodRequest]] = {}

    # --- PreFilter / Filter ---------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (fit.go: Fit.PreFilter): computes the pod's effective requests once."""
        request = self._requests(pod)
        delegable = self._delegable(request.scalar)
        if delegable:
            pod_request = PodRequest(
                request, self.ignored_resources, self.ignored_resource_groups, delegable
            )
        else:
            pod_request = self._pod_request(request)
        state.write(PRE_FILTER_KEY, pod_request)
        return None, None

    def _pod_request(self, request: Resource) -> PodRequest:
        """The PodRequest of ``request`` with nothing delegated, once per requests object."""
        found = self._pod_requests.get(id(request))
        if found is not None and found[0] is request:
            return found[1]
        if len(self._pod_requests) >= _MAX_POD_REQUESTS:
            self._pod_requests.clear()
        made = PodRequest(request, self.ignored_resources, self.ignored_resource_groups)
        self._pod_requests[id(request)] = (request, made)
        return made

    def _delegable(self, scalars: Mapping[str, int]) -> frozenset[str]:
        """The requested extended resources a DeviceClass backs (the DRA manager's
        DeviceClassResolver), which a node without them leaves to DynamicResources."""
        if not self._dra_extended or not scalars or self.handle is None:
            return frozenset()
        resolver = self._resolver.refresh(self.handle.objects(DEVICE_CLASS))
        return frozenset(resolver.backed(scalars))

    def _requests(self, pod: Pod) -> Resource:
        """The pod's requests as the release counts them."""
        return pod.pod_level_requests if self._pod_level else pod.requests

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
        found = insufficient_resources(request, node_info, self._unresolvable)
        if found is None:
            return None
        return self._rejection(found)

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]] | None:
        """``filter`` of every row over the columns (fit.go: fitsRequest): one bit per
        insufficient resource, in the order of the reasons, then one status per distinct
        combination (None when a request is too large for int64)."""
        request = state.get(PRE_FILTER_KEY)
        if request is None or len(request.scalars) > 48:
            return None
        columns = rows.columns
        r = rows.rows
        fails = [(_PODS, columns.free_pods[r] < 1)]
        # The allocatable each failure is checked against for _UNRESOLVABLE (v1.34+).
        over: list[tuple[IntArray, IntArray, int]] = []
        if not request.empty:
            for qty, bit, free, node_alloc in (
                (request.milli_cpu, _CPU, columns.free_cpu, columns.alloc_cpu),
                (request.memory, _MEMORY, columns.free_memory, columns.alloc_memory),
                (
                    request.ephemeral_storage,
                    _EPHEMERAL,
                    columns.free_ephemeral,
                    columns.alloc_ephemeral,
                ),
            ):
                if not qty:
                    continue
                if abs(qty) >= SAFE_LIMIT:
                    return None
                bad = free[r] < qty
                fails.append((bit, bad))
                over.append((bad, node_alloc[r], qty))
            for k, (name, qty, _) in enumerate(request.scalars):
                if abs(qty) >= SAFE_LIMIT:
                    return None
                alloc, used = columns.scalar(name)
                if not columns.usable:
                    return None
                bad = alloc[r] - used[r] < qty
                if name in request.delegated:
                    bad &= alloc[r] > 0
                fails.append((16 << k, bad))
                over.append((bad, alloc[r], qty))
        if not any(bad.any() for _, bad in fails):
            return np.zeros(len(r), np.int64), []
        mask = np.zeros(len(r), np.int64)
        for bit, bad in fails:
            mask[bad] |= bit
        if self._unresolvable:
            for bad, node_alloc, qty in over:
                mask[bad & (node_alloc < qty)] |= _UNRESOLVABLE
        if not mask.any():
            return mask, []
        values, codes = np.unique(mask, return_inverse=True)
        statuses: list[Status] = []
        offset = 0 if values[0] == 0 else 1
        for value in values.tolist():
            if value == 0:
                continue
            extra = [
                reason for k, (_, _, reason) in enumerate(request.scalars) if value & (16 << k)
            ]
            statuses.append(self._rejection((value & (15 | _UNRESOLVABLE), extra or None)))
        return codes.reshape(-1).astype(np.int64) + offset, statuses

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` of every row over the columns (the framework's columnar Score form)."""
        s = state.get(PRE_SCORE_KEY)
        pod_requests = (
            s.pod_requests
            if s is not None
            else pod_request_list(pod, self.resources, False, _SCORES_POD_LEVEL)
        )
        return self._scorer.score_columns(rows, pod_requests)

    def _rejection(self, found: tuple[int, list[str] | None]) -> Status:
        """The status of insufficient_resources' answer (one per fixed mask): Unschedulable,
        or UnschedulableAndUnresolvable when a request exceeds the allocatable (fit.go:
        Fit.Filter, v1.34+)."""
        mask, extra = found
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if mask & _UNRESOLVABLE else Code.UNSCHEDULABLE
        if extra is None:
            status = self._statuses.get(mask)
            if status is None:
                status = Status(code, *(r for bit, r in _FIXED_REASONS if mask & bit))
                self._statuses[mask] = status
            return status
        reasons = [r for bit, r in _FIXED_REASONS if mask & bit]
        reasons.extend(extra)
        return Status(code, *reasons)

    # --- PreScore / Score -----------------------------------------------------------
    # The scoring strategies never see pod-level requests, whatever PodLevelResources says:
    # fit.go (v1.37.2) builds its resourceAllocationScorer (getScorer,
    # nodeResourceStrategyTypeMap) without enablePodLevelResources, so
    # calculatePodResourceRequest skips spec.resources (the v1.37.2 reference agrees).
    # BalancedAllocation sets it and counts them.

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (fit.go: Fit.PreScore): the pod's requests of the scored resources."""
        state.write(
            PRE_SCORE_KEY,
            PodRequests(pod_request_list(pod, self.resources, False, _SCORES_POD_LEVEL)),
        )
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (fit.go: Fit.Score): the scoring strategy's score (LeastAllocated,
        MostAllocated or RequestedToCapacityRatio) of the node with the pod placed.
        """
        s = state.get(PRE_SCORE_KEY)
        pod_requests = (
            s.pod_requests
            if s is not None
            else pod_request_list(pod, self.resources, False, _SCORES_POD_LEVEL)
        )
        return self._scorer.score(node_info, pod_requests), None

    def score_extensions(self) -> None:
        """ScoreExtensions (fit.go): none."""
        return None

    # --- queueing hints -------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]] | None:
        """SignPod (fit.go, 1.35+): the pod's requests; not signable (None) when it
        requests an extended resource a DeviceClass backs ("signature disabled when dra
        extended resources are used in the cluster")."""
        if self._dra_extended and self._delegable(self._requests(pod).scalar):
            return None
        return [(RESOURCES_SIGNER, resources_signature(pod, self._pod_level))]

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
            *(
                [
                    ClusterEventWithHint(
                        ClusterEvent(DEVICE_CLASS_RESOURCE, ActionType.ADD | ActionType.UPDATE),
                        self.is_schedulable_after_device_class_event,
                    )
                ]
                if self._dra_extended
                else []
            ),
        ]

    def is_schedulable_after_device_class_event(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """fit.go: isSchedulableAfterDeviceClassEvent: a class added with the pod's implicit
        name, or added or changed to name an extended resource the pod requests."""
        if new_obj is None:
            return QueueingHint.QUEUE_SKIP
        spec = new_obj.get("spec") or {}
        requests = pod.requests.scalar
        if old_obj is not None:
            if (old_obj.get("spec") or {}).get("extendedResourceName") == spec.get(
                "extendedResourceName"
            ):
                return QueueingHint.QUEUE_SKIP
        elif (
            DEVICE_CLASS_RESOURCE_PREFIX + str((new_obj.get("metadata") or {}).get("name"))
            in requests
        ):
            return QueueingHint.QUEUE
        explicit = spec.get("extendedResourceName")
        if explicit and explicit in requests:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_pod_event(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """A scheduled (or nominated) pod deleted, or a pod scaled down, may free what
        ``pod`` needs (fit.go: isSchedulableAfterPodEvent)."""
        if new_obj is None:
            if old_obj is None or not (old_obj.node_name or old_obj.nominated_node_name):
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
        request = self._requests(pod)
        delegated = self._delegable(request.scalar)
        if new_obj is None or not _is_fit(request, new_obj, delegated):
            return QueueingHint.QUEUE_SKIP
        if old_obj is None:
            return QueueingHint.QUEUE
        if _requested_resources_increased(request, old_obj, new_obj, delegated):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _scale_down_frees(target: Pod, original: Pod, modified: Pod) -> bool:
    if modified.uid == target.uid:
        return True
    if not modified.node_name:
        return False
    # haveEnoughRelevantResourcesDecreased (fit.go, v1.33.4 and v1.37.2) calls PodRequests
    # without SkipPodLevelResources: pod-level requests count whatever the gate.
    before = original.pod_level_requests
    after = modified.pod_level_requests
    wanted = target.pod_level_requests
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


def _is_fit(request: Resource, node: Node, delegated: frozenset[str] = frozenset()) -> bool:
    """Whether the request fits the empty node (fit.go: isFit)."""
    found = insufficient_resources(PodRequest(request, delegated=delegated), NodeInfo(node))
    return found is None


def _requested_resources_increased(
    request: Resource, original: Node, modified: Node, delegated: frozenset[str]
) -> bool:
    """fit.go: haveAnyRequestedResourcesIncreased; a requested resource that the modified
    node leaves to DRA counts as increased."""
    before = original.allocatable
    after = modified.allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if not (request.milli_cpu or request.memory or request.ephemeral_storage or request.scalar):
        return False
    if (
        (request.milli_cpu and after.milli_cpu > before.milli_cpu)
        or (request.memory and after.memory > before.memory)
        or (request.ephemeral_storage and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(
        qty
        and (
            after.scalar.get(name, 0) > before.scalar.get(name, 0)
            or (name in delegated and after.scalar.get(name, 0) <= 0)
        )
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
