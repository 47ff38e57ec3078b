"""PodTopologySpread, split as upstream's pkg/scheduler/framework/plugins/podtopologyspread.

``plugin`` holds the plugin type, its construction and queueing hints (plugin.go),
``filtering`` PreFilter/Filter (filtering.go), ``scoring`` PreScore/Score (scoring.go) and
``common`` the parsed constraints and pod counting both use (common.go, helper/spread.go).
This module re-exports what the rest of wasmsched imports.
"""

from wasmsched.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_ZONE,
    NAME,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    count_matching,
    default_selector,
    filter_constraints,
)
from wasmsched.plugins.pod_topology_spread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_KEY,
    CriticalPaths,
)
from wasmsched.plugins.pod_topology_spread.plugin import PodTopologySpread, new
from wasmsched.plugins.pod_topology_spread.scoring import PRE_SCORE_KEY, round_half_away

__all__ = [
    "DO_NOT_SCHEDULE",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "LABEL_HOSTNAME",
    "LABEL_ZONE",
    "NAME",
    "PRE_FILTER_KEY",
    "PRE_SCORE_KEY",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "Constraint",
    "CriticalPaths",
    "PodTopologySpread",
    "count_matching",
    "default_selector",
    "filter_constraints",
    "new",
    "round_half_away",
]
