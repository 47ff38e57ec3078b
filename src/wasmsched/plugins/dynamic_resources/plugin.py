"""DynamicResources: a pod's ResourceClaims must be allocated, or allocatable, on the node.

Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go (v1.37.2).
PreEnqueue holds back a pod whose claims do not exist yet; PreFilter writes the plugin's
cycle state for every pod (and Skips pods without claims, so Filter does not run for them);
PostFilter reads that state before anything else, so a pod whose cycle ended in an earlier
PreFilter fails PostFilter with the Error "not found" and DefaultPreemption, after it in the
default profile, never runs; Score is 0 without claims.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    ClusterEventWithHint,
)
from wasmsched.plugins.dynamic_resources.allocator import (
    AllocationError,
    Allocator,
    FailedOnNode,
    Features,
)
from wasmsched.plugins.dynamic_resources.answers import NodeAnswers
from wasmsched.plugins.dynamic_resources.binding import (
    DEFAULT_BINDING_TIMEOUT,
    binding_failed,
    binding_timeout,
    wait_for_devices,
)
from wasmsched.plugins.dynamic_resources.claims import (
    RESOURCE_CLAIM as CLAIM_KIND,
)
from wasmsched.plugins.dynamic_resources.claims import (
    ClaimError,
    DeviceClasses,
    Manifest,
    allocation_of,
    allocator_inputs,
    api_timestamp,
    as_list,
    as_mapping,
    check_request,
    claim_key,
    claim_uid,
    delete_claim,
    meta_of,
    requests_of,
    with_status,
)
from wasmsched.plugins.dynamic_resources.explain import device_holders, node_entries
from wasmsched.plugins.dynamic_resources.extended import (
    ExtendedResourceResolver,
    create_extended_claim,
    patch_extended_status,
    pre_filter_extended,
)
from wasmsched.plugins.dynamic_resources.hints import events_to_register
from wasmsched.plugins.dynamic_resources.scoring import compute_score
from wasmsched.plugins.dynamic_resources.slices import SliceIndex
from wasmsched.plugins.dynamic_resources.state import ClaimInfo, StateData
from wasmsched.plugins.dynamic_resources.tracker import ClaimTracker
from wasmsched.plugins.helpers import default_normalize_score

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
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


class DynamicResources:
    """The DynamicResources plugin (dynamicresources.go: DynamicResources, New).

    Without the DynamicResourceAllocation gate the plugin is there but does nothing, as
    upstream's New returns an empty plugin then. Across cycles it keeps what kube keeps in
    its DRA manager: the allocations made at Reserve and not yet written (in flight), and
    the claims it wrote until the handle's objects show them (the assume cache).
    """

    name = NAME

    def __init__(self, handle: Handle, binding_timeout: float = DEFAULT_BINDING_TIMEOUT) -> None:
        self.handle = handle
        # DynamicResourcesArgs.bindingTimeout: how long PreBind waits for binding conditions.
        self._binding_timeout = binding_timeout
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
        self._extended_resources = features.dra_extended_resource
        self._resolver = ExtendedResourceResolver()
        self.extension_points = (
            _POINTS | {fi.SCORE} if features.dynamic_resources_scores else _POINTS
        )
        # dra_manager.go: the claimTracker (claims with the assumed versions over them,
        # in-flight allocations, allocated devices).
        self._claims = ClaimTracker(self._consumable_capacity)
        self._slices = SliceIndex()
        # Filter's allocation per node, kept across cycles while its inputs are equal.
        self._answers = NodeAnswers(
            self._slices.pools_for, self._allocator_features.partitionable_devices
        )
        self._selectors = SelectorCache()
        self._classes = DeviceClasses()
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
        """UpdateStatus through the handle, then AssumeClaimAfterAPICall (unless the
        handle lists the written version already: the live mode's claim cache)."""
        status = self.handle.write_resource_claim(claim)
        if status is None or status.is_success():
            self._claims_now().assume(claim)
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
        s = StateData()
        state.write(STATE_KEY, s)
        try:
            claims = self._pod_claims(pod)
        except ClaimError as err:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        # No extended resource requested, no special claim: no closures made for its lookups.
        found = (self._extended_resources and pod.requests.scalar) and pre_filter_extended(
            pod,
            self._resolver,
            lambda: self.handle.objects(DEVICE_CLASS_KIND),
            lambda: self._claims_now().claims(),
        )
        extended = ClaimInfo("", found) if found else None
        if found:
            s.pod_scalars = pod.requests.scalar
        if not claims and extended is None:
            return None, self._skip
        # Kept in the state only once PreFilter succeeds (as upstream's s.claims = claims).
        infos = [ClaimInfo(name, claim) for name, claim in claims]
        if extended is not None:
            infos.append(extended)
        to_allocate = 0
        device_classes = self._classes.refresh(self.handle.objects(DEVICE_CLASS_KIND))
        classes = device_classes.by_name
        for index, info in enumerate(infos):
            allocation = allocation_of(info.claim)
            if allocation is not None:
                selector = allocation.get("nodeSelector")
                if selector is not None:
                    info.available_on = NodeSelector.from_dict(selector)
                if self._binding_status and binding_failed(
                    info.claim, self._binding_timeout, self.handle.now()
                ):
                    s.not_ready.add(index)
                continue
            to_allocate += 1
            uid = claim_uid(info.claim)
            if uid in self._claims.in_flight:
                return None, Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"resource claim {claim_key(info.claim)} is in the process of being allocated",
                )
            if info is extended:
                # Its requests are made per node in Filter (or it is stale: Filter says so).
                continue
            for request in requests_of(info.claim):
                status = check_request(as_mapping(request), classes, self._prioritized_list)
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
        s.extended = extended
        s.allocating = [info.claim for _, info in s.to_allocate()]
        if s.allocator is not None:
            s.inputs = allocator_inputs(s.allocating, device_classes, self._slices.generation)
            s.pool_versions = self._claims.pool_versions()
        s.prioritized = any(
            as_mapping(r).get("firstAvailable") for info in infos for r in requests_of(info.claim)
        )
        return None, None

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (dynamicresources.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (dynamicresources.go: DynamicResources.Filter): an allocated claim must be
        available on the node; the others must be allocatable there, all together (the
        allocator's answer is kept per node for Score and Reserve)."""
        if not self._enabled:
            return None
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        if not s.claims:
            return None
        node_claim = s.filter_extended(pod, node_info, self._resolver)
        if isinstance(node_claim, Status):
            return node_claim
        if node_claim is None and s.no_user_claim():
            # Every extended resource is the node's own: NodeResourcesFit checked them.
            return None
        node = node_info.node
        unavailable = [
            i
            for i, info in enumerate(s.claims)
            if info.available_on is not None
            and not info.available_on.matches(node.labels, node.name)
        ]
        if s.not_ready:
            # Allocated, its binding failed or timed out (the same on every node):
            # PostFilter may deallocate it so that other devices are tried.
            unavailable = sorted({*unavailable, *s.not_ready})
        allocations: list[dict[str, Any]] | None = []
        failed: Status | None = None
        if s.allocator is not None:
            claims = s.allocating if node_claim is None else s.with_node_claim(node_claim)
            try:
                allocations = self._answers.allocate(
                    s, node, claims, node_claim, state.recorder is not None
                )
            except FailedOnNode as err:
                allocations, failed = None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"{err}")
            except AllocationError as err:
                allocations, failed = None, Status(Code.ERROR, str(err))
            if failed is None and (allocations is None or len(allocations) != len(claims)):
                allocations = None
                failed = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims")
        if state.recorder is not None:  # an explained cycle: why, device by device
            if s.holders is None:
                s.holders = device_holders(
                    self._claims_now().claims(), self._claims.in_flight.values()
                )
            state.recorder.devices[node.name] = node_entries(
                s.allocator,
                node,
                [s.claims[i].claim for i in unavailable],
                s.allocating,
                allocations,
                s.holders,
            )
        if failed is not None:
            return failed
        if unavailable:
            s.unavailable.update(unavailable)
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node"
            )
        if s.allocator is not None and allocations is not None:
            s.node_allocations[node.name] = allocations
        return None

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
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return None, Status(Code.ERROR, ERR_NOT_FOUND)
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE)
        extended, stale = s.extended, s.extended_created()
        for index in sorted(s.unavailable):
            if s.claims[index] is extended:
                if stale:
                    break
                continue
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
        if extended is not None and stale:
            # Made in an earlier cycle: deleted, the next attempt makes a new one.
            status = self._delete_extended(extended.claim)
            if status is not None and not status.is_success():
                return None, Status(Code.ERROR, status.message)
            return None, Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        return None, Status(Code.UNSCHEDULABLE)

    # --- Score ------------------------------------------------------------------------------

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (dynamicresources.go: DynamicResources.Score, computeScore; from 1.35): for
        each claim with a prioritized list, 8 - i for the subrequest i that got allocated;
        0 for a pod without claims."""
        if not self._enabled or not self._prioritized_list:
            return 0, None
        s: StateData | None = state.get(STATE_KEY)
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
        s: StateData | None = state.get(STATE_KEY)
        if s is None or (s.claims and s.prioritized):
            return None
        return np.zeros(len(rows), np.int64)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """NormalizeScore (dynamicresources.go): helper.DefaultNormalizeScore."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores) if self._enabled else None

    def normalize_columns(self, values: IntArray) -> IntArray:
        """``normalize_score`` over an array of scores."""
        return default_normalize_columns(MAX_NODE_SCORE, False, values) if self._enabled else values

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
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        to_allocate = s.to_allocate()
        if not to_allocate or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            if len(to_allocate) == 1 and to_allocate[0][1] is s.extended:
                # The node has the extended resources itself: nothing to allocate.
                return None
            return Status(Code.ERROR, "claim allocation not found for node")
        if len(allocations) != len(to_allocate):
            return Status(
                Code.ERROR,
                f"internal error, have {len(allocations)} allocations, {len(to_allocate)} "
                f"claims to allocate, want {len(to_allocate)} claims",
            )
        node_extended = s.node_extended.get(node_name)
        for (_, info), allocation in zip(to_allocate, allocations, strict=True):
            info.allocation = allocation
            claim = info.claim
            if info is s.extended and node_extended is not None:
                claim = node_extended[0]  # the claim made for this node stands in
            claim = with_status(claim, allocation=allocation)
            meta = dict(meta_of(claim))
            finalizers = list(meta.get("finalizers") or [])
            if FINALIZER not in finalizers:
                meta["finalizers"] = [*finalizers, FINALIZER]
            claim["metadata"] = meta
            self._claims.hold(claim, pod.uid, claim_uid(info.claim))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve (dynamicresources.go: DynamicResources.Unreserve): forgets the pod's
        in-flight allocations, and takes the pod out of reservedFor where PreBind put it."""
        if not self._enabled:
            return
        s: StateData | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return
        for info in s.claims:
            held = self._claims.in_flight.get(info.uid)
            if held is not None and held[1] == pod.uid:
                self._claims.release(info.uid)
            if info is s.extended:
                # unreserveExtendedResourceClaim: a claim PreBind created is deleted.
                if s.extended_created():
                    self._delete_extended(info.claim)
                continue
            current = self._current(info.claim)
            reserved = as_list(as_mapping(current.get("status")).get("reservedFor"))
            if allocation_of(current) is not None and any(
                as_mapping(r).get("uid") == pod.uid for r in reserved
            ):
                kept = [r for r in reserved if as_mapping(r).get("uid") != pod.uid]
                self._write(with_status(current, reserved_for=kept or None))

    def _delete_extended(self, claim: Manifest) -> Status | None:
        """deleteClaim, for a special claim PreBind created."""
        self._claims.forget(claim_key(claim))
        return delete_claim(self.handle, self._current(claim))

    def _current(self, claim: Manifest) -> Manifest:
        """The claim as the scheduler knows it now (assumed or listed)."""
        current = self._claims_now().current(claim_key(claim))
        return claim if current is None else current

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBindPreFlight (dynamicresources.go, 1.35+): work to do (None) for a pod with
        claims, else Skip."""
        if not self._enabled:
            return self._skip
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        return None if s.claims else self._skip

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBind (dynamicresources.go: DynamicResources.PreBind, bindClaim): writes each
        claim not yet reserved for the pod, with the allocation Reserve made (and the
        delete-protection finalizer) and the pod added to reservedFor."""
        if not self._enabled:
            return None
        s: StateData | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        if not s.claims:
            return None  # nothing to write, no device to wait for
        for info in s.claims:
            current = self._current(info.claim)
            reserved = as_list(as_mapping(current.get("status")).get("reservedFor"))
            if any(as_mapping(r).get("uid") == pod.uid for r in reserved):
                continue
            uid = info.uid
            mappings: list[dict[str, str]] | None = None
            if info is s.extended:
                if info.allocation is None and not requests_of(info.claim):
                    continue  # the node has the extended resources itself
                mappings = s.node_extended.get(node_name, (None, []))[1]
                if not s.extended_created():
                    made = create_extended_claim(s.node_extended, node_name, pod, self._write)
                    if isinstance(made, Status):
                        return made
                    info.claim = current = made
                    reserved = []
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
            if mappings is not None:
                status = patch_extended_status(self.handle, pod, updated, mappings)
                if status is not None:
                    return status
        if not self._binding_status:
            return None
        return wait_for_devices(
            self.handle, pod, node_name, s, self._claims_now, self._binding_timeout
        )

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (dynamicresources.go: DynamicResources.EventsToRegister)."""
        return events_to_register(self._pod_claims) if self._enabled else []


def new(args: dict[str, Any], handle: Handle) -> DynamicResources:
    """The registry factory (dynamicresources.go: New), with DynamicResourcesArgs'
    ``bindingTimeout`` (binding.py: binding_timeout)."""
    return DynamicResources(handle, binding_timeout(args, handle.features))


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
