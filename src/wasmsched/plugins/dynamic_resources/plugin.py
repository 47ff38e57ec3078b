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
from typing import TYPE_CHECKING, Any

import numpy as np

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
    QueueingHint,
)
from wasmsched.plugins.dynamic_resources.claims import (
    RESOURCE_CLAIM as CLAIM_KIND,
)
from wasmsched.plugins.dynamic_resources.claims import (
    ClaimError,
    ClaimIndex,
    Manifest,
)
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
STATE_KEY = NAME
# framework.ErrNotFound: what CycleState.Read answers for a key never written.
ERR_NOT_FOUND = "not found"

# The extension points of v1.37.2's plugin (its `var _ fwk.XPlugin` lines); Score only
# from 1.35 (SchedulerFeatures.dynamic_resources_scores).
_POINTS = frozenset(
    {fi.PRE_ENQUEUE, fi.PRE_FILTER, fi.FILTER, fi.POST_FILTER, fi.RESERVE, fi.PRE_BIND}
)


class _State:
    """dynamicresources.go: stateData, written by PreFilter for every pod it sees.

    ``claims`` is the pod's claims in ``spec.resourceClaims`` order (empty: nothing to do).
    """

    __slots__ = ("claims",)

    def __init__(self) -> None:
        self.claims: list[tuple[str, Manifest]] = []

    def clone(self) -> _State:
        return self  # as upstream (stateData.Clone): shared across clones


class DynamicResources:
    """The DynamicResources plugin (dynamicresources.go: DynamicResources, New).

    Without the DynamicResourceAllocation gate the plugin is there but does nothing, as
    upstream's New returns an empty plugin then.
    """

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        features = handle.features
        self._enabled = features.dynamic_resource_allocation
        self._prioritized_list = features.dra_prioritized_list
        self.extension_points = (
            _POINTS | {fi.SCORE} if features.dynamic_resources_scores else _POINTS
        )
        self._claims = ClaimIndex()
        self._skip = Status(Code.SKIP)

    def _pod_claims(self, pod: Pod) -> list[tuple[str, Manifest]]:
        """foreachPodResourceClaim over the handle's current claims."""
        if not pod.resource_claims:
            return []
        self._claims.refresh(self.handle.objects(CLAIM_KIND))
        return self._claims.pod_claims(pod)

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
        every pod first (PostFilter reads it), then Skips a pod without claims."""
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
        return None, Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "wasmsched: allocating ResourceClaims is not simulated yet",
        )

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (dynamicresources.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (dynamicresources.go: DynamicResources.Filter): nothing to check for a pod
        without claims (PreFilter Skipped it, so the framework does not call this then)."""
        if not self._enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status(Code.ERROR, ERR_NOT_FOUND)
        return None

    # --- PostFilter -------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """PostFilter (dynamicresources.go: DynamicResources.PostFilter): reads the state
        first. When PreFilter never ran for the pod (an earlier PreFilter answered
        UnschedulableAndUnresolvable) that read fails: Error "not found", which stops
        RunPostFilterPlugins before DefaultPreemption. Without claims: Unschedulable, the
        next PostFilter plugin runs."""
        if not self._enabled:
            return None, Status(Code.UNSCHEDULABLE)
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return None, Status(Code.ERROR, ERR_NOT_FOUND)
        return None, Status(Code.UNSCHEDULABLE)

    # --- Score ------------------------------------------------------------------------------

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (dynamicresources.go: DynamicResources.Score, from 1.35): 0 for a pod
        without claims."""
        if not self._enabled or not self._prioritized_list:
            return 0, None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return 0, Status(Code.ERROR, ERR_NOT_FOUND)
        return 0, None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` over the rows: all 0 for a pod without claims."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.claims:
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
        """Reserve (dynamicresources.go: DynamicResources.Reserve): nothing to reserve for a
        pod without claims."""
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve (dynamicresources.go: DynamicResources.Unreserve)."""
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBindPreFlight (dynamicresources.go, 1.35+): work to do (None) for a pod with
        claims, else Skip."""
        if not self._enabled or not pod.resource_claims:
            return self._skip
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """PreBind (dynamicresources.go: DynamicResources.PreBind): nothing to write for a
        pod without claims."""
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
                self.is_schedulable_after_claim_change,
            ),
            # 1.37 registers this for TargetPod (the pod itself); the queue here tells the
            # pod's own updates apart by the hint.
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_target_pod_update,
            ),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]

    def is_schedulable_after_claim_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """dynamicresources.go: isSchedulableAfterClaimChange. A deleted claim matters only
        if it was allocated; a changed one if it was deallocated, or is the pod's and was
        created or had its status changed."""
        if new_obj is None:
            if isinstance(old_obj, Mapping) and _allocation(old_obj) is None:
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        if not isinstance(new_obj, Mapping):
            return QueueingHint.QUEUE
        try:
            claims = self._pod_claims(pod)
        except ClaimError:
            return QueueingHint.QUEUE_SKIP
        new_uid = _meta(new_obj).get("uid")
        uses_claim = any(_meta(claim).get("uid") == new_uid for _, claim in claims)
        old = old_obj if isinstance(old_obj, Mapping) else None
        if old is not None and _allocation(old) is not None and _allocation(new_obj) is None:
            return QueueingHint.QUEUE
        if not uses_claim:
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        if (old.get("status") or {}) == (new_obj.get("status") or {}):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_target_pod_update(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """dynamicresources.go: isSchedulableAfterTargetPodUpdate: the updated pod now has
        all its claims."""
        if new_obj is None or getattr(new_obj, "uid", None) != pod.uid:
            return QueueingHint.QUEUE_SKIP
        try:
            self._pod_claims(new_obj)
        except ClaimError:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _meta(obj: Manifest) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _allocation(claim: Manifest) -> Any:
    status = claim.get("status")
    return status.get("allocation") if isinstance(status, Mapping) else None


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
