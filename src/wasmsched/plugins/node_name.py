"""NodeName: a pod with spec.nodeName fits only that node (k8s ``plugins/nodename``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.batching import NODE_NAME_SIGNER
from wasmsched.framework.columns import IntArray, NodeRows
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node: Node) -> bool:
    """Fits (nodename/node_name.go): the pod names no node, or names this one."""
    wanted = pod.node_name
    return not wanted or wanted == node.name


class NodeName:
    """The NodeName Filter plugin (pkg/scheduler/framework/plugins/nodename/node_name.go:
    NodeName).
    """

    name = NAME
    # Filter reads the node alone, never the pods on it, and writes nothing: preemption's
    # dry run by sums (plugins/default_preemption.py) and the nominated nodes' first
    # Filter pass (framework/nominated.py) take its verdict on the node as it stands.
    filter_reads_node_alone = True

    def __init__(self) -> None:
        self._rejected = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (node_name.go: NodeName.Filter): UnschedulableAndUnresolvable on any node but
        the one the pod names.
        """
        wanted = pod.node_name
        if not wanted or wanted == node_info.name:
            return None
        return self._rejected

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]]:
        """``filter`` over the columns: every row but the named node's is rejected."""
        wanted = pod.node_name
        if not wanted:
            return np.zeros(len(rows), np.int64), []
        row = rows.columns.row_of.get(wanted, -1)
        return (rows.rows != row).astype(np.int64), [self._rejected]

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (node_name.go, 1.35+): spec.nodeName."""
        return [(NODE_NAME_SIGNER, pod.node_name)]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (node_name.go: NodeName.EventsToRegister): Node/Add only, with
        isSchedulableAfterNodeAdd as its hint.
        """
        # With queueing hints (default since v1.32) only Node/Add is registered.
        return [
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD), is_schedulable_after_node_add)
        ]


def is_schedulable_after_node_add(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """isSchedulableAfterNodeAdd (node_name.go): queue only for the node the pod names."""
    if new_obj is None or not fits(pod, new_obj):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def new(args: dict[str, Any], handle: Handle) -> NodeName:
    """The registry factory (node_name.go: New); NodeName takes no args."""
    return NodeName()


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, FilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.FilterPlugin = &NodeName{}`
    # (pkg/scheduler/framework/plugins/nodename/node_name.go).
    _filter: type[FilterPlugin] = NodeName
    _enqueue_extensions: type[EnqueueExtensions] = NodeName
