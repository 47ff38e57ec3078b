"""Framework-level types: cluster events, queueing hints and the queued pod.

kube-scheduler keeps these in ``pkg/scheduler/framework/types.go`` and
``framework/events.go``: the framework, the plugins and the queue all speak them, so they
live below the queue (which imports them) rather than in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod


class ActionType(IntFlag):
    """What changed about an object (framework.ActionType), a bit set."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE_POD_OTHER = 4096
    ALL = 8191
    UPDATE = 8188


# Resource names of framework.EventResource.
POD = "Pod"
NODE = "Node"
PERSISTENT_VOLUME = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
CSI_NODE = "storage.k8s.io/CSINode"
CSI_DRIVER = "storage.k8s.io/CSIDriver"
CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS = "resource.k8s.io/DeviceClass"
WILDCARD = "*"
# Internal resources: a pod bound to a node and a pod waiting in the queue.
ASSIGNED_POD = "AssignedPod"
UNSCHEDULABLE_POD = "UnschedulablePod"


class QueueingHint(IntEnum):
    """A plugin's verdict on whether an event may make a pod schedulable (framework.QueueingHint)."""

    QUEUE_SKIP = 0
    QUEUE = 1


QueueingHintFn = Callable[["Pod", Any, Any], QueueingHint]
"""(pod waiting in the queue, old object, new object) -> hint."""


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A change in the cluster: a resource, what happened to it, and a label for logs
    (framework.ClusterEvent)."""

    resource: str
    action: int
    label: str = ""

    def matches(self, incoming: ClusterEvent) -> bool:
        """Whether a registered event (self) covers an incoming event (k8s ClusterEvent.Match)."""
        if self.resource == WILDCARD:
            resource_ok = True
        elif self.resource == POD:
            resource_ok = incoming.resource in (POD, ASSIGNED_POD, UNSCHEDULABLE_POD)
        else:
            resource_ok = self.resource == incoming.resource
        return resource_ok and (self.action & incoming.action) != 0

    def __str__(self) -> str:
        return self.label or f"{self.resource}{ActionType(self.action & 8191)!r}"


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """An event a plugin registers, with the hint that filters it (None: always queue)."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None


# Events the scheduler itself emits (k8s framework/events.go).
ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
NODE_ADD = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
NODE_DELETE = ClusterEvent(NODE, ActionType.DELETE, "NodeDelete")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(WILDCARD, ActionType.ALL, "ForceActivate")
EVENT_UNSCHEDULABLE_POD_UPDATE = ClusterEvent(
    UNSCHEDULABLE_POD, ActionType.UPDATE, "UnschedulablePodUpdate"
)


class QueuedPodInfo:
    """A pending pod with its queue bookkeeping (framework.QueuedPodInfo)."""

    __slots__ = (
        "attempts",
        "backoff_expiry",
        "consecutive_errors_count",
        "gated",
        "gated_message",
        "initial_attempt_timestamp",
        "pending_plugins",
        "pod",
        "seq",
        "timestamp",
        "unschedulable_count",
        "unschedulable_plugins",
    )

    def __init__(self, pod: Pod, timestamp: float, seq: int = 0) -> None:
        self.pod = pod
        self.timestamp = timestamp  # last time it was added to the queue
        self.initial_attempt_timestamp: float | None = None
        self.attempts = 0
        # Returns to the queue rejected by plugins, and errors since the last rejection
        # (1.34+ back off by these: backend/queue/backoff_queue.go: getBackoffTime).
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gated = False
        self.gated_message = ""  # the PreEnqueue rejection while gated
        self.backoff_expiry = 0.0
        self.seq = seq  # insertion order, for stable heap ordering

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.key}, attempts={self.attempts})"
