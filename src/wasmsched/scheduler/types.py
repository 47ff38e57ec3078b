"""What the scheduler reports and what it needs from outside: outcomes, the writer, the
attempt observer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from wasmsched.errors import InternalError
from wasmsched.framework.interfaces import Event

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.records import CycleRecord, PluginObserver
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.status import Status
    from wasmsched.framework.types import QueuedPodInfo

# PodOutcome.result values (and "Pending" until a pod's first attempt ends).
SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"


class NoNodes(InternalError):
    """The snapshot has no node at all (k8s ErrNoNodesAvailable)."""


@dataclass
class PodOutcome:
    """Where a pod stands: the result of its last attempt, for the report.

    ``result`` is "Pending", SCHEDULED, UNSCHEDULABLE or ERROR; ``cycles`` holds one
    explain record per attempt when the scheduler was built with ``explain=True``.
    """

    pod: Pod
    profile: str
    result: str = "Pending"
    node: str | None = None
    message: str = ""
    nominated_node: str | None = None
    attempts: int = 0
    scheduled_at: float | None = None
    preempted_by: str | None = None
    cycles: list[CycleRecord] = field(default_factory=list)
    # After a rejection: how many nodes each plugin rejected in the last attempt.
    rejected_by: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class AssumedPod:
    """What a successful scheduling cycle hands the binding cycle (schedule_one.go:
    ``ScheduleResult`` and ``assumedPodInfo``): the pod assumed on ``host``, and the
    timeout of each Permit plugin that asked it to wait (empty: bind at once)."""

    pod: Pod
    host: str
    waits: dict[str, float] = field(default_factory=dict)


class ClusterWriter(Protocol):
    """What the scheduler writes back (a simulator store or the API server), and its view
    of a pod's latest version.

    A writer may also be an ``AsyncBinder`` (``bind_async(pod, node_name)``): the binding
    goes on elsewhere and its answer reaches ``Scheduler.complete_binding`` later, on the
    scheduling thread. DefaultBinder uses it when present (and answers ``BindingPending``).
    """

    def current_pod(self, uid: str) -> Pod | None:
        """The pod as the cluster (the informer) has it now; None once it is gone."""
        ...

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        """Binds the pod; a Status on failure."""
        ...

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Deletes a pod (a preemption victim)."""
        ...

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        """Writes ``status.nominatedNodeName``."""
        ...

    def set_unschedulable(self, pod: Pod, reason: str, message: str) -> None:
        """Writes the PodScheduled=False condition."""
        ...

    def record_event(self, event: Event) -> None:
        """Records a Kubernetes Event."""
        ...

    def extender_bound(self, pod: Pod, node_name: str) -> Status | None:
        """An extender bound the pod: make the binding visible if it is not already."""
        ...

    def write_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """Writes a ResourceClaim's new version (DynamicResources: its allocation and
        reservedFor, UpdateStatus); a Status on failure."""
        ...

    def delete_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """Deletes a ResourceClaim (DynamicResources: a pod's stale extended-resource
        claim); a Status on failure."""
        ...

    def set_extended_resource_claim_status(
        self, pod: Pod, status: Mapping[str, Any]
    ) -> Status | None:
        """Writes the pod's ``status.extendedResourceClaimStatus`` (DynamicResources'
        PreBind); a Status on failure."""
        ...


class AttemptObserver(Protocol):
    """Sees each scheduling attempt begin and end (the live mode's metrics and logs).

    kube-scheduler measures attempts in ScheduleOne and samples plugin metrics per cycle
    (pkg/scheduler/schedule_one.go: ScheduleOne, ``pluginMetricsSamplePercent``); an
    observer injected into the Scheduler does the same here without subclassing it.
    """

    def attempt_started(self, fwk: Framework, info: QueuedPodInfo) -> PluginObserver | None:
        """An attempt begins; the PluginObserver returned (if any) sees every plugin call
        of its scheduling and binding cycles."""
        ...

    def attempt_ended(self, fwk: Framework, pod: Pod, outcome: PodOutcome) -> None:
        """An attempt ended: ``outcome.result`` is SCHEDULED, UNSCHEDULABLE or ERROR."""
        ...


def pod_event(now: float, pod: Pod, type_: str, reason: str, action: str, note: str) -> Event:
    """An Event about ``pod`` reported by wasmsched."""
    return Event.about_pod(now, pod, type_, reason, action, note, "wasmsched")


__all__ = [
    "ERROR",
    "SCHEDULED",
    "UNSCHEDULABLE",
    "AssumedPod",
    "AttemptObserver",
    "ClusterWriter",
    "PodOutcome",
    "pod_event",
]
