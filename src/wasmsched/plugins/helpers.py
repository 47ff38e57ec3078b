"""Helpers shared by the in-tree plugins (k8s ``plugins/helper`` and ``scheduler/util``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wasmsched.framework.types import (
    NODE,
    POD,
    WILDCARD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)
from wasmsched.release.features import SchedulerFeatures

if TYPE_CHECKING:
    from wasmsched.framework.interfaces import Handle, NodeScore
    from wasmsched.framework.status import Status
    from wasmsched.framework.types import QueueingHintFn

# What kube-scheduler registers for a plugin that does not implement EnqueueExtensions
# (framework.defaultEnqueueExtension): every event, no hint.
ALL_EVENTS: tuple[ClusterEventWithHint, ...] = (
    ClusterEventWithHint(ClusterEvent(WILDCARD, ActionType.ALL)),
)


def features_of(handle: Handle | None) -> SchedulerFeatures:
    """The release a plugin follows: the handle's (kube hands each factory its
    feature.Features, plugins/registry.go: NewInTreeRegistry), or the default release for
    a plugin built without a handle."""
    return handle.features if handle is not None else SchedulerFeatures.of()


def taint_and_toleration_events(
    node_hint: QueueingHintFn, toleration_hint: QueueingHintFn
) -> list[ClusterEventWithHint]:
    """Node Add/UpdateNodeTaint and the pod's own toleration updates, each with its
    queueing hint: what the two plugins about taints register, NodeUnschedulable and
    TaintToleration (node_unschedulable.go and taint_toleration.go: EventsToRegister, the
    queueing-hint registration, default since v1.32); each brings its own hints."""
    return [
        ClusterEventWithHint(
            ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT), node_hint
        ),
        ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION), toleration_hint),
    ]


def default_normalize_score(
    max_priority: int, reverse: bool, scores: Sequence[NodeScore]
) -> Status | None:
    """Scales scores from [0, max(scores)] to [0, max_priority], in place (DefaultNormalizeScore).

    When every score is 0 the scores stay 0, or all become ``max_priority`` when reversed.
    """
    max_count = 0
    for ns in scores:
        if ns.score > max_count:
            max_count = ns.score
    if max_count == 0:
        if reverse:
            for ns in scores:
                ns.score = max_priority
        return None
    for ns in scores:
        score = go_div(max_priority * ns.score, max_count)
        ns.score = max_priority - score if reverse else score
    return None


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's ``/`` on int64 does."""
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a prefixed name outside ``kubernetes.io/``, not quota."""
    if "/" not in name or "kubernetes.io/" in name:
        return False
    return not name.startswith("requests.")
