"""InterPodAffinity, split as upstream's pkg/scheduler/framework/plugins/interpodaffinity."""

from wasmsched.plugins.inter_pod_affinity.plugin import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    InterPodAffinity,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
    new,
    pod_affinity_terms,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PRE_FILTER_KEY",
    "PRE_SCORE_KEY",
    "InterPodAffinity",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_change",
    "new",
    "pod_affinity_terms",
]
