"""PrioritySort: the default QueueSort plugin (k8s ``plugins/queuesort``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wasmsched.plugins.helpers import ALL_EVENTS

if TYPE_CHECKING:
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.types import ClusterEventWithHint, QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    """Orders pods by priority (higher first), then by queue timestamp, then by arrival."""

    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Less (queuesort/priority_sort.go: PrioritySort.Less): whether ``a`` goes before ``b``."""
        p1 = a.pod.priority
        p2 = b.pod.priority
        if p1 != p2:
            return p1 > p2
        if a.timestamp != b.timestamp:
            return a.timestamp < b.timestamp
        # k8s leaves equal timestamps to the heap; seq keeps our order deterministic.
        return a.seq < b.seq

    def sort_key(self, info: QueuedPodInfo) -> tuple[int, float, int]:
        """A key whose order is ``less``'s (higher priority, then earlier timestamp, then
        arrival): the queue's heap compares these tuples instead of calling ``less``."""
        return (-info.pod.priority, info.timestamp, info.seq)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EnqueueExtensions: every cluster event, as upstream registers for a plugin without
        EventsToRegister (pkg/scheduler/framework/runtime/framework.go: fillEventToPluginMap).
        """
        return list(ALL_EVENTS)


def new(args: dict[str, Any], handle: Handle) -> PrioritySort:
    """The registry factory (priority_sort.go: New); PrioritySort takes no args."""
    return PrioritySort()


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, QueueSortPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.QueueSortPlugin = &PrioritySort{}`
    # (pkg/scheduler/framework/plugins/queuesort/priority_sort.go).
    _queue_sort: type[QueueSortPlugin] = PrioritySort
    _enqueue_extensions: type[EnqueueExtensions] = PrioritySort
