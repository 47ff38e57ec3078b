"""InterPodAffinity: required pod (anti-)affinity filters, preferred terms score.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/plugin.go (v1.33): the plugin type,
New (argument validation), EventsToRegister and its queueing hints. The extension points are
in filtering.py and scoring.py, the term parsing in terms.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wasmsched.framework.batching import LABELS_SIGNER
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.inter_pod_affinity.common import NAME, NodeChanges, NodeCounts
from wasmsched.plugins.inter_pod_affinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    Filtering,
)
from wasmsched.plugins.inter_pod_affinity.scoring import Scoring
from wasmsched.plugins.inter_pod_affinity.terms import matches_all, pod_affinity_terms

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.interfaces import Handle

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1


class InterPodAffinity(Filtering, Scoring):
    """The InterPodAffinity plugin (plugin.go: InterPodAffinity, New)."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = dict(args or {})
        self.handle = handle
        weight = args.get("hardPodAffinityWeight")
        self.hard_pod_affinity_weight = (
            DEFAULT_HARD_POD_AFFINITY_WEIGHT if weight is None else int(weight)
        )
        if not 0 <= self.hard_pod_affinity_weight <= 100:
            raise ValueError(
                "InterPodAffinityArgs: hardPodAffinityWeight: not in valid range [0, 100]"
            )
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False)
        )
        # Per kind of incoming pod (its terms, namespace and labels): counts kept across cycles.
        self._incremental: dict[tuple[Any, ...], NodeCounts] = {}
        self._changes = NodeChanges()
        self._skip = Status(Code.SKIP)
        self._affinity_rejected = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
        )
        # Anti-affinity rejections are Unschedulable: evicting the matching pods can help.
        self._anti_rejected = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        self._existing_rejected = Status(
            Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
        )

    # --- queueing hints -------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]] | None:
        """SignPod (interpodaffinity/plugin.go, 1.35+): refuses a pod with pod (anti-)
        affinity; else its labels, which other pods' terms may select, unless only pods
        with affinity count (ignorePreferredTermsOfExistingPods)."""
        affinity = (pod.spec or {}).get("affinity") or {}
        if affinity.get("podAffinity") is not None or affinity.get("podAntiAffinity") is not None:
            return None
        if self.ignore_preferred_terms_of_existing_pods:
            return []
        return [(LABELS_SIGNER, dict(pod.labels))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (interpodaffinity/plugin.go: InterPodAffinity.EventsToRegister):
        Pod Add/UpdatePodLabel/Delete and Node Add/UpdateNodeLabel/UpdateNodeTaint.
        """
        # Node UpdateNodeTaint catches nodes that were added while not ready (k8s #110175).
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                ),
                is_schedulable_after_node_change,
            ),
        ]


def is_schedulable_after_pod_change(
    pod: Pod, old_obj: Pod | None, new_obj: Pod | None
) -> QueueingHint:
    """Queue for an assigned pod that starts matching the affinity or stops (or is deleted
    while) matching the anti-affinity."""
    if (new_obj is not None and not new_obj.node_name) or (
        old_obj is not None and not old_obj.node_name
    ):
        return QueueingHint.QUEUE_SKIP
    terms = pod_affinity_terms(pod)
    if new_obj is not None and old_obj is not None:
        if not matches_all(terms.required_affinity, old_obj) and matches_all(
            terms.required_affinity, new_obj
        ):
            return QueueingHint.QUEUE
        if matches_all(terms.required_anti_affinity, old_obj) and not matches_all(
            terms.required_anti_affinity, new_obj
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if new_obj is not None:
        if matches_all(terms.required_affinity, new_obj):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if old_obj is not None and matches_all(terms.required_anti_affinity, old_obj):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_node_change(
    pod: Pod, old_obj: Node | None, new_obj: Node | None
) -> QueueingHint:
    """Queue for a node that has the topology key of one of the pod's required terms."""
    if new_obj is None:
        return QueueingHint.QUEUE_SKIP
    terms = pod_affinity_terms(pod)
    labels = new_obj.labels
    for t in terms.required_affinity:
        if t.topology_key in labels:
            return QueueingHint.QUEUE
    for t in terms.required_anti_affinity:
        if t.topology_key in labels:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: dict[str, Any], handle: Handle) -> InterPodAffinity:
    """The registry factory (plugin.go: New), from InterPodAffinityArgs."""
    return InterPodAffinity(args, handle)


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
    # `var _ framework.PreFilterPlugin = &InterPodAffinity{}`
    # (pkg/scheduler/framework/plugins/interpodaffinity/plugin.go).
    _pre_filter: type[PreFilterPlugin] = InterPodAffinity
    _filter: type[FilterPlugin] = InterPodAffinity
    _pre_score: type[PreScorePlugin] = InterPodAffinity
    _score: type[ScorePlugin] = InterPodAffinity
    _enqueue_extensions: type[EnqueueExtensions] = InterPodAffinity
