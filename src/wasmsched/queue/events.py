"""Cluster events and queueing hints: re-exported from ``wasmsched.framework.types``.

They are framework-level types (kube-scheduler's framework/types.go); this module keeps
the old import path working for code not yet moved. New code imports the framework.
"""

from __future__ import annotations

from wasmsched.framework.types import (
    ASSIGNED_POD,
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    CSI_DRIVER,
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    DEVICE_CLASS,
    EVENT_UNSCHEDULABLE_POD_UPDATE,
    FORCE_ACTIVATE,
    NODE,
    NODE_ADD,
    NODE_DELETE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
    STORAGE_CLASS,
    UNSCHEDULABLE_POD,
    UNSCHEDULABLE_TIMEOUT,
    VOLUME_ATTACHMENT,
    WILDCARD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
)

__all__ = [
    "ASSIGNED_POD",
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_DELETE",
    "CSI_DRIVER",
    "CSI_NODE",
    "CSI_STORAGE_CAPACITY",
    "DEVICE_CLASS",
    "EVENT_UNSCHEDULABLE_POD_UPDATE",
    "FORCE_ACTIVATE",
    "NODE",
    "NODE_ADD",
    "NODE_DELETE",
    "PERSISTENT_VOLUME",
    "PERSISTENT_VOLUME_CLAIM",
    "POD",
    "RESOURCE_CLAIM",
    "RESOURCE_SLICE",
    "STORAGE_CLASS",
    "UNSCHEDULABLE_POD",
    "UNSCHEDULABLE_TIMEOUT",
    "VOLUME_ATTACHMENT",
    "WILDCARD",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "QueueingHint",
    "QueueingHintFn",
]
