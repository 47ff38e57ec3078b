"""PodTopologySpread, split as upstream's pkg/scheduler/framework/plugins/podtopologyspread."""

from wasmsched.plugins.pod_topology_spread.plugin import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    LABEL_HOSTNAME,
    NAME,
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    CriticalPaths,
    PodTopologySpread,
    new,
    round_half_away,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "LABEL_HOSTNAME",
    "NAME",
    "PRE_FILTER_KEY",
    "PRE_SCORE_KEY",
    "CriticalPaths",
    "PodTopologySpread",
    "new",
    "round_half_away",
]
