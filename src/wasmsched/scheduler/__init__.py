"""The scheduler, cut as kube-scheduler's pkg/scheduler is: the algorithm and the
scheduling cycle (``schedule_one``), the binding cycle (``binding``), the failure handler
both end in (``failure``), a profile's Framework built from its configuration
(``profile``), the informer callbacks (``eventhandlers``) and the ``Scheduler`` that
composes them."""

from wasmsched.framework.node_search import num_feasible_nodes_to_find
from wasmsched.scheduler.scheduler import Scheduler, SchedulerHandle
from wasmsched.scheduler.types import (
    ERROR,
    SCHEDULED,
    UNSCHEDULABLE,
    AttemptObserver,
    ClusterWriter,
    PodOutcome,
)

__all__ = [
    "ERROR",
    "SCHEDULED",
    "UNSCHEDULABLE",
    "AttemptObserver",
    "ClusterWriter",
    "PodOutcome",
    "Scheduler",
    "SchedulerHandle",
    "num_feasible_nodes_to_find",
]
