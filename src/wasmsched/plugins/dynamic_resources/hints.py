"""DynamicResources' queueing hints (dynamicresources.go: isSchedulableAfterClaimChange,
isSchedulableAfterTargetPodUpdate): which claim and pod events may make a pod that the
plugin rejected schedulable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

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
    ClaimError,
    Manifest,
    allocation_of,
    claim_uid,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod

PodClaims = Callable[["Pod"], "list[tuple[str, Manifest]]"]
"""A pod's claims (foreachPodResourceClaim); ClaimError when one is not usable."""


def schedulable_after_claim_change(
    pod_claims: PodClaims, pod: Pod, old_obj: Any, new_obj: Any
) -> QueueingHint:
    """dynamicresources.go: isSchedulableAfterClaimChange. A deleted claim matters only
    if it was allocated; a changed one if it was deallocated, or is the pod's and was
    created or had its status changed."""
    if new_obj is None:
        if isinstance(old_obj, Mapping) and allocation_of(old_obj) is None:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE
    if not isinstance(new_obj, Mapping):
        return QueueingHint.QUEUE
    try:
        claims = pod_claims(pod)
    except ClaimError:
        return QueueingHint.QUEUE_SKIP
    new_uid = claim_uid(new_obj)
    uses_claim = any(claim_uid(claim) == new_uid for _, claim in claims)
    old = old_obj if isinstance(old_obj, Mapping) else None
    if old is not None and allocation_of(old) is not None and allocation_of(new_obj) is None:
        return QueueingHint.QUEUE
    if not uses_claim:
        return QueueingHint.QUEUE_SKIP
    if old is None:
        return QueueingHint.QUEUE
    if (old.get("status") or {}) == (new_obj.get("status") or {}):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def schedulable_after_target_pod_update(
    pod_claims: PodClaims, pod: Pod, old_obj: Any, new_obj: Any
) -> QueueingHint:
    """dynamicresources.go: isSchedulableAfterTargetPodUpdate: the updated pod now has
    all its claims."""
    if new_obj is None or getattr(new_obj, "uid", None) != pod.uid:
        return QueueingHint.QUEUE_SKIP
    try:
        pod_claims(new_obj)
    except ClaimError:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def events_to_register(pod_claims: PodClaims) -> list[ClusterEventWithHint]:
    """dynamicresources.go: DynamicResources.EventsToRegister: nodes (topology), claims,
    the pod's own claim-status update, classes and slices."""
    return [
        ClusterEventWithHint(
            ClusterEvent(
                NODE,
                ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
            )
        ),
        ClusterEventWithHint(
            ClusterEvent(RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE | ActionType.DELETE),
            partial(schedulable_after_claim_change, pod_claims),
        ),
        # 1.37 registers this for TargetPod (the pod itself); the queue here tells the
        # pod's own updates apart by the hint.
        ClusterEventWithHint(
            ClusterEvent(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
            partial(schedulable_after_target_pod_update, pod_claims),
        ),
        ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
        ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
    ]
