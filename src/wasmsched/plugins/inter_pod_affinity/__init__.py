"""InterPodAffinity, split as upstream's pkg/scheduler/framework/plugins/interpodaffinity.

``plugin`` holds the plugin type, its construction and queueing hints (plugin.go),
``filtering`` PreFilter/Filter (filtering.go), ``scoring`` PreScore/Score (scoring.go),
``common`` the counts both keep across cycles and ``terms`` the parsed pod affinity terms
(framework/types.go). This module re-exports what the rest of wasmsched imports.
"""

from wasmsched.plugins.inter_pod_affinity.common import NAME
from wasmsched.plugins.inter_pod_affinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_KEY,
)
from wasmsched.plugins.inter_pod_affinity.plugin import (
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    InterPodAffinity,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
    new,
)
from wasmsched.plugins.inter_pod_affinity.scoring import PRE_SCORE_KEY
from wasmsched.plugins.inter_pod_affinity.terms import (
    AffinityTerm,
    PodAffinityTerms,
    matches_all,
    parse_pod_affinity_terms,
    pod_affinity_terms,
)

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PRE_FILTER_KEY",
    "PRE_SCORE_KEY",
    "AffinityTerm",
    "InterPodAffinity",
    "PodAffinityTerms",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_change",
    "matches_all",
    "new",
    "parse_pod_affinity_terms",
    "pod_affinity_terms",
]
