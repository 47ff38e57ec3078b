"""SchedulingGates: keeps gated pods out of the active queue (k8s ``plugins/schedulinggates``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.interfaces import Handle

NAME = "SchedulingGates"


class SchedulingGates:
    """The SchedulingGates PreEnqueue plugin (pkg/scheduler/framework/plugins/schedulinggates/
    scheduling_gates.go: SchedulingGates).
    """

    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """PreEnqueue (scheduling_gates.go: SchedulingGates.PreEnqueue): a pod with scheduling
        gates stays out of the active queue (UnschedulableAndUnresolvable, naming the gates).
        """
        gates = pod.scheduling_gates
        if not gates:
            return None
        # Go's %v of a []string: "[a b]".
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [" + " ".join(gates) + "]",
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (scheduling_gates.go): the pod's own update that removes its gates."""
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                is_schedulable_after_gates_eliminated,
            )
        ]


def is_schedulable_after_gates_eliminated(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Only the gated pod's own update can make it schedulable."""
    if new_obj is None or new_obj.uid != pod.uid:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def new(args: dict[str, Any], handle: Handle) -> SchedulingGates:
    """The registry factory (scheduling_gates.go: New); the plugin takes no args."""
    return SchedulingGates()


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, PreEnqueuePlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreEnqueuePlugin = &SchedulingGates{}`
    # (pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go).
    _pre_enqueue: type[PreEnqueuePlugin] = SchedulingGates
    _enqueue_extensions: type[EnqueueExtensions] = SchedulingGates
