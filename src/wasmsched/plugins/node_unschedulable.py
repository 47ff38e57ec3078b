"""NodeUnschedulable: cordoned nodes take only pods that tolerate the unschedulable taint.

k8s ``plugins/nodeunschedulable`` (v1.33).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.api.taints import Taint, tolerates
from wasmsched.framework.batching import TOLERATIONS_SIGNER, tolerations_signature
from wasmsched.framework.columns import IntArray, NodeRows
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import ClusterEventWithHint, QueueingHint
from wasmsched.plugins.helpers import taint_and_toleration_events

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.api.taints import Toleration
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")


def tolerates_unschedulable(tolerations: Sequence[Toleration]) -> bool:
    """Whether the tolerations tolerate ``node.kubernetes.io/unschedulable:NoSchedule``."""
    return any(tolerates(t, _UNSCHEDULABLE_TAINT) for t in tolerations)


class NodeUnschedulable:
    """The NodeUnschedulable Filter plugin (pkg/scheduler/framework/plugins/nodeunschedulable/
    node_unschedulable.go: NodeUnschedulable).
    """

    name = NAME
    # Filter reads the node alone, never the pods on it, and writes nothing: preemption's
    # dry run by sums (plugins/default_preemption.py) and the nominated nodes' first
    # Filter pass (framework/nominated.py) take its verdict on the node as it stands.
    filter_reads_node_alone = True

    def __init__(self) -> None:
        self._rejected = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (node_unschedulable.go: NodeUnschedulable.Filter): a cordoned node rejects a pod
        that does not tolerate the ``node.kubernetes.io/unschedulable`` NoSchedule taint.
        """
        if not node_info.node.unschedulable:
            return None
        if tolerates_unschedulable(pod.tolerations):
            return None
        return self._rejected

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]]:
        """``filter`` over the columns (the cordoned rows)."""
        if tolerates_unschedulable(pod.tolerations):
            return np.zeros(len(rows), np.int64), []
        return rows.columns.unschedulable[rows.rows].astype(np.int64), [self._rejected]

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (node_unschedulable.go, 1.35+): the tolerations."""
        return [(TOLERATIONS_SIGNER, tolerations_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (node_unschedulable.go): Node Add/UpdateNodeTaint and the pod's own
        toleration updates, with this plugin's queueing hints."""
        return taint_and_toleration_events(
            is_schedulable_after_node_change, is_schedulable_after_pod_toleration_change
        )


def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Queue for a schedulable node added, or a node going from unschedulable to schedulable."""
    if new_obj is None or new_obj.unschedulable:
        return QueueingHint.QUEUE_SKIP
    if old_obj is None or old_obj.unschedulable:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_toleration_change(
    pod: Pod, old_obj: Any, new_obj: Any
) -> QueueingHint:
    """Queue when the pod itself gains a toleration of the unschedulable taint."""
    if (
        new_obj is not None
        and old_obj is not None
        and new_obj.uid == pod.uid
        and not tolerates_unschedulable(old_obj.tolerations)
        and tolerates_unschedulable(new_obj.tolerations)
    ):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: dict[str, Any], handle: Handle) -> NodeUnschedulable:
    """The registry factory (node_unschedulable.go: New); the plugin takes no args."""
    return NodeUnschedulable()


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, FilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.FilterPlugin = &NodeUnschedulable{}`
    # (pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go).
    _filter: type[FilterPlugin] = NodeUnschedulable
    _enqueue_extensions: type[EnqueueExtensions] = NodeUnschedulable
