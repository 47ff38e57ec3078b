"""DynamicResources: a pod's ResourceClaims must be allocated, or allocatable, on the node.

Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go (v1.37.2).
PreEnqueue holds back a pod whose claims do not exist yet; PreFilter writes the plugin's
cycle state for every pod (and Skips pods without claims, so Filter does not run for them);
PostFilter reads that state before anything else, so a pod whose cycle ended in an earlier
PreFilter fails PostFilter with the Error "not found" and DefaultPreemption, after it in the
default profile, never runs; Score is 0 without claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.api.cel import SelectorCache
from wasmsched.api.dra import ALLOCATION_FINALIZER
from wasmsched.api.selectors import NodeSelector
from wasmsched.framework import interfaces as fi
from wasmsched.framework.columns import IntArray, NodeRows, default_normalize_columns
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    DEVICE_CLASS,
    NODE,
    POD,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from wasmsched.plugins.dynamic_resources.allocator import (
    FIRST_AVAILABLE_MAX_SIZE,
    AllocationError,
    Allocator,
    FailedOnNode,
    Features,
)
from wasmsched.plugins.dynamic_resources.claims import (
    RESOURCE_CLAIM as CLAIM_KIND,
)
from wasmsched.plugins.dynamic_resources.claims import (
    ClaimError,
    Manifest,
    allocation_of,
    allocator_inputs,
    api_timestamp,
    as_list,
    as_mapping,
    check_device_class,
    claim_key,
    claim_uid,
    meta_of,
    with_status,
)
from wasmsched.plugins.dynamic_resources.hints import (
    schedulable_after_claim_change,
    schedulable_after_target_pod_update,
)
from wasmsched.plugins.dynamic_resources.slices import SliceIndex
from wasmsched.plugins.dynamic_resources.tracker import ClaimTracker
from wasmsched.plugins.helpers import default_normalize_score

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import (
        Handle,
        NodeScore,
        NodeToStatus,
        PostFilterResult,
        PreFilterResult,
    )
    from wasmsched.framework.node_info import NodeInfo

NAME = "DynamicResources"
DEVICE_CLASS_KIND = "DeviceClass"
SLICE_KIND = "ResourceSlice"
TAINT_RULE_KIND = "DeviceTaintRule"
FINALIZER = ALLOCATION_FINALIZER
STATE_KEY = NAME
# framework.ErrNotFound: what CycleState.Read answers for a key never written.
ERR_NOT_FOUND = "not found"

# The extension points of v1.37.2's plugin (its `var _ fwk.XPlugin` lines); Score only
# from 1.35 (SchedulerFeatures.dynamic_resources_scores).
_POINTS = frozenset(
    {fi.PRE_ENQUEUE, fi.PRE_FILTER, fi.FILTER, fi.POST_FILTER, fi.RESERVE, fi.PRE_BIND}
)


class _Claim:
    """informationForClaim, with the claim: ``available_on`` is the node selector of an
    allocated claim; ``allocation`` the one Reserve made (published by PreBind)."""

    __slots__ = ("allocation", "available_on", "claim", "name")

    def __init__(self, name: str, claim: Manifest) -> None:
        self.name = name
        self.claim = claim
        self.available_on: NodeSelector | None = None
        self.allocation: dict[str, Any] | None = None


class _State:
    """dynamicresources.go: stateData, written by PreFilter for every pod it sees.

    ``claims`` is the pod's claims in ``spec.resourceClaims`` order (empty: nothing to do);
    ``node_allocations`` Filter's allocation per node (the claims to allocate, in order),
    ``unavailable`` the indices of allocated claims some node could not use.
    ``allocating`` is what Filter hands the allocator on every node (the claims to allocate
    as PreFilter found them), ``prioritized`` whether any claim has a ``firstAvailable``
    request (without one, computeScore is 0 on every node).
    """

    __slots__ = (
        "allocating",
        "allocator",
        "claims",
        "inputs",
        "node_allocations",
        "pool_versions",
        "prioritized",
        "unavailable",
    )

    def __init__(self) -> None:
        self.claims: list[_Claim] = []
        self.allocator: Allocator | None = None
        self.allocating: list[Manifest] = []
        # What the allocator's answer depends on besides the node and its pools' devices
        # held (None: not kept across cycles), and those pools' versions at PreFilter.
        self.inputs: tuple[Any, ...] | None = None
        self.pool_versions: dict[tuple[str, str], int] = {}
        self.prioritized = False
        self.node_allocations: dict[str, list[dict[str, Any]]] = {}
        self.unavailable: set[int] = set()

    def clone(self) -> _State:
        return self  # as upstream (stateData.Clone): shared across clones

    def to_allocate(self) -> list[tuple[int, _Claim]]:
        """claimStore.toAllocate: the claims without an allocation, with their index."""
        return [(i, c) for i, c in enumerate(self.claims) if allocation_of(c.claim) is None]


class DynamicResources:
    """The DynamicResources plugin (dynamicresources.go: DynamicResources, New).

    Without the DynamicResourceAllocation gate the plugin is there but does nothing, as
    upstream's New returns an empty plugin then. Across cycles it keeps what kube keeps in
    its DRA manager: the allocations made at Reserve and not yet written (in flight), and
    the claims it wrote until the handle's objects show them (the assume cache).
    """

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        features = handle.features
        self._enabled = features.dynamic_resource_allocation
        self._prioritized_list = features.dra_prioritized_list
        self._consumable_capacity = features.dra_consumable_capacity
        self._binding_status = (
            features.dra_device_binding_conditions and features.dra_resource_claim_device_status
        )
        self._allocator_features = Features(
            admin_access=features.dra_admin_access,
            prioritized_list=features.dra_prioritized_list,
            partitionable_devices=features.dra_partitionable_devices,
            device_taints=features.dra_device_taints,
            device_binding_and_status=self._binding_status,
            consumable_capacity=features.dra_consumable_capacity,
            fractional_capacity_range=features.dra_consumable_capacity,
        )
        self._taint_rules = features.dra_device_taint_rules
        self.extension_points = (
            _POINTS | {fi.SCORE} if features.dynamic_resources_scores else _POINTS
        )
        # dra_manager.go: the claimTracker (claims with the assumed versions over them,
        # in-flight allocations, allocated devices).
        self._claims = ClaimTracker(self._consumable_capacity)
        # Filter's allocation per node across cycles: node name -> (node, the allocator's
        # inputs, its pools' versions, the answer); see _allocate.
        self._answers: dict[str, tuple[Node, tuple[Any, ...], tuple[int, ...], Any]] = {}
        self._slices = SliceIndex()
        self._selectors = SelectorCache()
        self._skip = Status(Code.SKIP)

    # --- the DRA manager ----------------------------------------------------------------------

    def _claims_now(self) -> ClaimTracker:
        """The tracker, caught up with the handle's claims."""
        self._claims.refresh(self.handle.objects(CLAIM_KIND))
        return self._claims

    def _pod_claims(self, pod: Pod) -> list[tuple[str, Manifest]]:
        """foreachPodResourceClaim over the current claims."""
        if not pod.resource_claims:
            return []
        return self._claims_now().pod_claims(pod)

    def _write(self, claim: dict[str, Any]) -> Status | None:
        """UpdateStatus through the handle, then AssumeClaimAfterAPICall."""
        status = self.handle.write_resource_claim(claim)
        if status is None or status.is_success():
            self._claims.assume(claim)
        return status

    # --- PreEnqueue -------------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """PreEnqueue (dynamicresources.go: DynamicResources.PreEnqueue): a pod whose claims
        are not all there (not made from their template yet, missing, being deleted) waits
        for a claim or pod event (UnschedulableAndUnresolvable, statusUnschedulable)."""
        if not self._enabled or not pod.resource_claims:
            return None
        try:
            self._pod_claims(pod)
        except ClaimError as err:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        return None

    # --- SignPod (batching, 1.35+) --------------------------------------------------------

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]] | None:
        """SignPod (dynamicresources.go: DynamicResources.SignPod): no fragment of its own;
        a pod with claims cannot be signed ("pods with dra resource claims are not
        signable"), so it is never batched."""
        return None if pod.resource_claims else []

    # --- PreFilter / Filter -----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (dynamicresources.go: DynamicResources.PreFilter): writes the state for
        every pod first (PostFilter reads it), then Skips a pod without claims. For the
        claims: an allocated one restricts the nodes to its allocation's; one in flight for
        another pod makes the pod wait; every device class a request names must exist; the
        allocator is set up once for the cycle."""
        if not self._enabled:
            return None, self._skip
        s = _State()
        state.write(STATE_KEY, s)
        try:
            claims = self._pod_claims(pod)
        except ClaimError as err:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        if not claims:
            return None, self._skip
        # Kept in the state only once PreFilter succeeds (as upstream's s.claims = claims).
        infos = [_Claim(name, claim) for name, claim in claims]
        to_allocate = 0
        class_list = self.handle.objects(DEVICE_CLASS_KIND)
        classes = {str(meta_of(c).get("name")): c for c in class_list}
        for info in infos:
            allocation = allocation_of(info.claim)
            if allocation is not None:
                selector = allocation.get("nodeSelector")
                if selector is not None:
                    info.available_on = NodeSelector.from_dict(selector)
                continue
            to_allocate += 1
            uid = claim_uid(info.claim)
            if uid in self._claims.in_flight:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"resource claim {claim_key(info.claim)} is in the process of being allocated",
                )
            for request in as_list(
                as_mapping(as_mapping(info.claim.get("spec")).get("devices")).get("requests")
            ):
                status = self._check_request(as_mapping(request), classes)
                if status is not None:
                    return None, status
        if to_allocate:
            self._slices.refresh(
                self.handle.objects(SLICE_KIND),
                self.handle.objects(TAINT_RULE_KIND) if self._taint_rules else [],
            )
            s.allocator = Allocator(
                self._allocator_features,
                self._claims_now().allocated_state(),
                classes,
                self._slices.for_node,
                self._slices.all,
                self._selectors,
                self._slices.pools_for,
            )
        s.claims = infos
        s.allocating = [info.claim for _, info in s.to_allocate()]
        if s.allocator is not None:
            s.inputs = allocator_inputs(s.allocating, class_list, self._slices.generation)
            s.pool_versions = self._claims.pool_versions()
        s.prioritized = any(
            as_mapping(r).get("firstAvailable")
            for info in infos
            for r in as_list(
                as_mapping(as_mapping(info.claim.get("spec")).get("devices")).get("requests")
            )
        )
        return None, None

    def _check_request(
        self, request: Mapping[str, Any], classes: Mapping[str, Manifest]
    ) -> Status | None:
        """PreFilter's check of a request's kind and device classes (validateDeviceClass)."""
        name = request.get("name") or ""
        exactly = request.get("exactly")
        subs = as_list(request.get("firstAvailable"))
        if exactly is not None:
            return check_device_class(
                as_mapping(exactly).get("deviceClassName") or "", name, classes
            )
        if subs:
            if not self._prioritized_list:
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"request {name}: has subrequests, but the DRAPrioritizedList feature is "
                    "disabled",
                )
            for sub in subs:
                status = check_device_class(
                    as_mapping(sub).get("deviceClassName") or "",
                    f"{name}/{as_mapping(sub).get('name') or ''}",
                    classes,
                )
                if status is not None:
                    return status
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"request {name}: unknown request type")

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (dynamicresources.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (dynamicresources.go: DynamicResources.Filter): an allocated claim must be
        available on the node; the others must be allocatable there, all together (the
        allocator's answer is kept per node for Score and Reserve)."""
        if not self._enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        if not s.claims:
            return None
        node = node_info.node
        unavailable = [
            i
            for i, info in enumerate(s.claims)
            if info.available_on is not None
            and not info.available_on.matches(node.labels, node.name)
        ]
        allocations: list[dict[str, Any]] = []
        if s.allocator is not None:
            claims = s.allocating
            try:
                result = self._allocate(s, node)
            except FailedOnNode as err:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"{err}")
            except AllocationError as err:
                return Status(Code.ERROR, str(err))
            if result is None or len(result) != len(claims):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
            allocations = result
        if unavailable:
            s.unavailable.update(unavailable)
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node"
            )
        if s.allocator is not None:
            s.node_allocations[node.name] = allocations
        return None

    def _allocate(self, s: _State, node: Node) -> list[dict[str, Any]] | None:
        """The allocator's answer on ``node``; kept across cycles, per node, while its inputs
        are equal: the claims' specs (claims from one template have equal specs), the
        classes, the slices, the node object, and the versions of the node's pools (which
        devices of them are held). Errors and answers with share IDs (derived from the
        claim's name) are not kept."""
        assert s.allocator is not None
        if s.inputs is None:
            return s.allocator.allocate(node, s.allocating)
        pools = self._slices.pools_for(node, self._allocator_features.partitionable_devices)
        versions = tuple(s.pool_versions.get((p.driver, p.name), 0) for p in pools)
        kept = self._answers.get(node.name)
        if kept is not None and kept[0] is node and kept[1] == s.inputs and kept[2] == versions:
            answer: list[dict[str, Any]] | None = kept[3]
            return answer
        answer = s.allocator.allocate(node, s.allocating)
        if answer is None or not any(
            "shareID" in r for a in answer for r in a["devices"]["results"]
        ):
            self._answers[node.name] = (node, s.inputs, versions, answer)
        return answer

    # --- PostFilter -------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """PostFilter (dynamicresources.go: DynamicResources.PostFilter): reads the state
        first. When PreFilter never ran for the pod (an earlier PreFilter answered
        UnschedulableAndUnresolvable) that read fails: Error "not found", which stops
        RunPostFilterPlugins before DefaultPreemption. Without claims: Unschedulable, the
        next PostFilter plugin runs. Otherwise an allocated claim that some node could not
        use, and that no other pod uses, is deallocated (the lowest index here; kube picks
        one at random) so that the next attempt may allocate it elsewhere."""
        if not self._enabled:
            return None, Status(Code.UNSCHEDULABLE)
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return None, Status(Code.ERROR, ERR_NOT_FOUND)
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE)
        for index in sorted(s.unavailable):
            claim = s.claims[index].claim
            reserved = as_list(as_mapping(claim.get("status")).get("reservedFor"))
            if not reserved or (
                len(reserved) == 1 and as_mapping(reserved[0]).get("uid") == pod.uid
            ):
                updated = with_status(claim, allocation=None, reserved_for=None, devices=None)
                status = self._write(updated)
                if status is not None and not status.is_success():
                    return None, Status(Code.ERROR, status.message)
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        return None, Status(Code.UNSCHEDULABLE)

    # --- Score ------------------------------------------------------------------------------

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (dynamicresources.go: DynamicResources.Score, computeScore; from 1.35): for
        each claim with a prioritized list, 8 - i for the subrequest i that got allocated;
        0 for a pod without claims."""
        if not self._enabled or not self._prioritized_list:
            return 0, None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return 0, Status(Code.ERROR, ERR_NOT_FOUND)
        if not s.claims:
            return 0, None
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None or not s.prioritized:
            # Filter kept one allocation per claim to allocate: without a prioritized
            # list computeScore adds nothing.
            return 0, None
        return compute_score([info.claim for info in s.claims], allocations)

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` over the rows: all 0 for a pod without claims, or without a claim
        with a prioritized list."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or (s.claims and s.prioritized):
            return None
        return np.zeros(len(rows), np.int64)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """NormalizeScore (dynamicresources.go): helper.DefaultNormalizeScore."""
        if not self._enabled:
            return None
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_columns(self, values: IntArray) -> IntArray:
        """``normalize_score`` over an array of scores."""
        if not self._enabled:
            return values
        return default_normalize_columns(MAX_NODE_SCORE, False, values)

    def score_extensions(self) -> DynamicResources:
        """ScoreExtensions (dynamicresources.go): the plugin itself (NormalizeScore)."""
        return self

    # --- Reserve / PreBind ------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Reserve (dynamicresources.go: DynamicResources.Reserve): the allocations Filter
        made for ``node_name`` are held in flight (SignalClaimPendingAllocation), so that
        later pods do not get the same devices before PreBind writes them."""
        if not self._enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        to_allocate = s.to_allocate()
        if not to_allocate or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            return Status(Code.ERROR, "claim allocation not found for node")
        if len(allocations) != len(to_allocate):
            return Status(
                Code.ERROR,
                f"internal error, have {len(allocations)} allocations, {len(to_allocate)} "
                f"claims to allocate, want {len(to_allocate)} claims",
            )
        for (_, info), allocation in zip(to_allocate, allocations, strict=True):
            info.allocation = allocation
            claim = with_status(info.claim, allocation=allocation)
            meta = dict(meta_of(claim))
            finalizers = list(meta.get("finalizers") or [])
            if FINALIZER not in finalizers:
                meta["finalizers"] = [*finalizers, FINALIZER]
            claim["metadata"] = meta
            self._claims.hold(claim, pod.uid)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve (dynamicresources.go: DynamicResources.Unreserve): forgets the pod's
        in-flight allocations, and takes the pod out of reservedFor where PreBind put it."""
        if not self._enabled:
            return
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return
        for info in s.claims:
            uid = claim_uid(info.claim)
            held = self._claims.in_flight.get(uid)
            if held is not None and held[1] == pod.uid:
                self._claims.release(uid)
            current = self._current(info.claim)
            reserved = as_list(as_mapping(current.get("status")).get("reservedFor"))
            if allocation_of(current) is not None and any(
                as_mapping(r).get("uid") == pod.uid for r in reserved
            ):
                kept = [r for r in reserved if as_mapping(r).get("uid") != pod.uid]
                self._write(with_status(current, reserved_for=kept or None))

    def _current(self, claim: Manifest) -> Manifest:
        """The claim as the scheduler knows it now (assumed or listed)."""
        current = self._claims_now().current(claim_key(claim))
        return claim if current is None else current

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBindPreFlight (dynamicresources.go, 1.35+): work to do (None) for a pod with
        claims, else Skip."""
        if not self._enabled or not pod.resource_claims:
            return self._skip
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBind (dynamicresources.go: DynamicResources.PreBind, bindClaim): writes each
        claim not yet reserved for the pod, with the allocation Reserve made (and the
        delete-protection finalizer) and the pod added to reservedFor."""
        if not self._enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        for info in s.claims:
            current = self._current(info.claim)
            reserved = as_list(as_mapping(current.get("status")).get("reservedFor"))
            if any(as_mapping(r).get("uid") == pod.uid for r in reserved):
                continue
            uid = claim_uid(info.claim)
            if meta_of(current).get("deletionTimestamp"):
                return Status(Code.ERROR, f"claim {claim_key(current)} got deleted in the meantime")
            allocation = info.allocation
            if allocation is not None and allocation_of(current) is not None:
                return Status(
                    Code.ERROR,
                    f"claim {claim_key(current)} got allocated elsewhere in the meantime",
                )
            updated = with_status(current)
            if allocation is not None:
                meta = dict(meta_of(updated))
                finalizers = list(meta.get("finalizers") or [])
                if FINALIZER not in finalizers:
                    meta["finalizers"] = [*finalizers, FINALIZER]
                updated["metadata"] = meta
                allocation = dict(allocation)
                if self._binding_status and "allocationTimestamp" not in allocation:
                    allocation["allocationTimestamp"] = api_timestamp(self.handle.now())
                updated["status"]["allocation"] = allocation
            elif allocation_of(current) is None:
                return Status(
                    Code.ERROR,
                    f"claim {claim_key(current)} got deallocated elsewhere in the meantime",
                )
            updated["status"]["reservedFor"] = [
                *reserved,
                {"resource": "pods", "name": pod.name, "uid": pod.uid},
            ]
            status = self._write(updated)
            if status is not None and not status.is_success():
                return Status(
                    Code.ERROR,
                    f"add allocation and reservation to claim {claim_key(current)}: {status.message}",
                )
            self._claims.release(uid)
            info.claim = updated
        return None

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (dynamicresources.go: DynamicResources.EventsToRegister): nodes
        (topology), claims, the pod's own claim-status update, classes and slices."""
        if not self._enabled:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE | ActionType.DELETE
                ),
                partial(schedulable_after_claim_change, self._pod_claims),
            ),
            # 1.37 registers this for TargetPod (the pod itself); the queue here tells the
            # pod's own updates apart by the hint.
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                partial(schedulable_after_target_pod_update, self._pod_claims),
            ),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]


def compute_score(
    claims: Sequence[Manifest], allocations: Sequence[Mapping[str, Any]]
) -> tuple[int, Status | None]:
    """dynamicresources.go: computeScore. For each claim's request with a prioritized list,
    8 - i for the subrequest i allocated; an allocated claim counts with its own allocation,
    the others with Filter's, in order."""
    score = 0
    pending = iter(allocations)
    for claim in claims:
        allocation = allocation_of(claim)
        if allocation is None:
            allocation = next(pending, None)
            if allocation is None:
                return 0, Status(
                    Code.ERROR,
                    f"number of allocations {len(allocations)} is smaller than number of "
                    "claims needing allocation",
                )
        chosen = {
            str(as_mapping(r).get("request"))
            for r in as_list(as_mapping(allocation.get("devices")).get("results"))
            if "/" in str(as_mapping(r).get("request"))
        }
        for request in as_list(
            as_mapping(as_mapping(claim.get("spec")).get("devices")).get("requests")
        ):
            r = as_mapping(request)
            if r.get("exactly") is not None:
                continue
            for i, sub in enumerate(as_list(r.get("firstAvailable"))):
                if f"{r.get('name')}/{as_mapping(sub).get('name')}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score, None


def new(args: dict[str, Any], handle: Handle) -> DynamicResources:
    """The registry factory (dynamicresources.go: New)."""
    return DynamicResources(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import (
        EnqueueExtensions,
        FilterPlugin,
        PostFilterPlugin,
        PreBindPlugin,
        PreEnqueuePlugin,
        PreFilterPlugin,
        ReservePlugin,
        ScorePlugin,
    )

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's `var _ fwk.PreFilterPlugin = &DynamicResources{}`
    # (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go).
    _pre_enqueue: type[PreEnqueuePlugin] = DynamicResources
    _pre_filter: type[PreFilterPlugin] = DynamicResources
    _filter: type[FilterPlugin] = DynamicResources
    _post_filter: type[PostFilterPlugin] = DynamicResources
    _score: type[ScorePlugin] = DynamicResources
    _reserve: type[ReservePlugin] = DynamicResources
    _pre_bind: type[PreBindPlugin] = DynamicResources
    _enqueue_extensions: type[EnqueueExtensions] = DynamicResources
