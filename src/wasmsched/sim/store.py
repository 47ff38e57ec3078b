"""The simulation's API server: the cluster's objects, the scheduler's writes, and the
subscriptions that see each change.

Two kinds of subscribers, with the timing each has in a cluster:

- Event handlers (``add_event_handler``): the scheduler's informer callbacks
  (pkg/scheduler/eventhandlers.go: addAllEventHandlers). Every change reaches them in
  order, but not while the scheduler is inside a step (``deliver_after``): a write made
  inside a scheduling cycle (a Bind, a preemption victim's deletion) reaches them after
  that cycle, as kube-scheduler's informers call them on their own goroutine. The live
  mode's inbox keeps the same rule.
- Watchers (``subscribe``): the drivers of a run (the workload controllers, a trace
  replay, capacity, explain's record) are called at the write itself, at the same
  simulated instant; what they write in response is one more change.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from wasmsched.api.dra import with_extended_resource_claim_status
from wasmsched.api.objects import Node, Pod
from wasmsched.framework.interfaces import Event
from wasmsched.framework.status import Code, Status
from wasmsched.sim.clock import SimClock

__all__ = [
    "ClaimWritten",
    "ClusterEventHandler",
    "ClusterStore",
    "PodBound",
    "PodDeleted",
    "PodNominated",
    "Preemption",
]

T = TypeVar("T")

PodBound = Callable[[Pod], None]
"""A pod was bound (the pod as bound)."""
PodDeleted = Callable[[Pod, str], None]
"""A pod was deleted: the pod as it was, and the preemptor's key ("" for a plain deletion)."""
PodNominated = Callable[[Pod, str], None]
"""The scheduler nominated a pod to a node ("" clears the nomination)."""
ClaimWritten = Callable[[Mapping[str, Any] | None, Mapping[str, Any] | None], None]
"""A ResourceClaim was written: the claim before (None: new) and after (None: deleted)."""


class ClusterEventHandler(Protocol):
    """The informer callbacks the store delivers changes to (the Scheduler has them)."""

    def on_node_add(self, node: Node) -> None: ...

    def on_node_update(self, old: Node, new: Node) -> None: ...

    def on_node_delete(self, node: Node) -> None: ...

    def on_pod_add(self, pod: Pod) -> None: ...

    def on_pod_update(self, old: Pod, new: Pod) -> None: ...

    def on_pod_delete(self, pod: Pod) -> None: ...

    def on_object_add(self, manifest: Mapping[str, Any]) -> None: ...

    def on_object_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None: ...

    def on_object_delete(self, manifest: Mapping[str, Any]) -> None: ...


_Change = Callable[[ClusterEventHandler], None]


@dataclass
class Preemption:
    """A deletion through the scheduler's writer, in the order the run made them."""

    victim: str
    node: str
    preemptor: str
    time: float
    uid: str = ""  # the victim's


class ClusterStore:
    """The objects of the simulated cluster; the scheduler's ``ClusterWriter``.

    ``nodes`` and ``pods`` (by uid) are the cluster as it is now, ``events`` the Events
    recorded, ``preemptions`` the deletions made through the writer, ``conditions`` each
    pod's PodScheduled=False (reason, message). Write through the methods: they notify
    the subscribers.
    """

    def __init__(self, clock: SimClock, clears_nomination_at_binding: bool = False) -> None:
        self.clock = clock
        # pods/binding clears status.nominatedNodeName (1.35+, ClearingNominatedNodeName-
        # AfterBinding: pkg/registry/core/pod/storage/storage.go: setPodNodeAndMetadata).
        self.clears_nomination_at_binding = clears_nomination_at_binding
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.events: list[Event] = []
        self.preemptions: list[Preemption] = []
        self.conditions: dict[str, tuple[str, str]] = {}
        # ResourceClaims as the scheduler last wrote them, by "namespace/name".
        self.resource_claims: dict[str, Mapping[str, Any]] = {}
        self._uid_of: dict[str, str] = {}  # "namespace/name" -> uid, to find a preemptor
        self._handlers: list[ClusterEventHandler] = []
        self._inbox: deque[_Change] = deque()
        self._held = False  # inside a scheduler step: changes wait in the inbox
        self._delivering = False
        self._on_bound: list[PodBound] = []
        self._on_deleted: list[PodDeleted] = []
        self._on_nominated: list[PodNominated] = []
        self._on_claim: list[ClaimWritten] = []

    # --- subscriptions --------------------------------------------------------------------

    def add_event_handler(self, handler: ClusterEventHandler) -> None:
        """Delivers every later change to ``handler``, in order (see the module doc)."""
        self._handlers.append(handler)

    def subscribe(
        self,
        *,
        on_bound: PodBound | None = None,
        on_deleted: PodDeleted | None = None,
        on_nominated: PodNominated | None = None,
        on_claim: ClaimWritten | None = None,
    ) -> None:
        """Calls these at each such write, in the order of subscription."""
        if on_bound is not None:
            self._on_bound.append(on_bound)
        if on_deleted is not None:
            self._on_deleted.append(on_deleted)
        if on_nominated is not None:
            self._on_nominated.append(on_nominated)
        if on_claim is not None:
            self._on_claim.append(on_claim)

    def deliver_after(self, step: Callable[[], T]) -> T:
        """Runs ``step`` (a scheduler step: a cycle, a tick) holding the changes it writes;
        they reach the event handlers when it returns."""
        outer, self._held = self._held, True
        try:
            return step()
        finally:
            self._held = outer
            if not outer:
                self._deliver()

    def _notify(self, change: _Change) -> None:
        if self._handlers:
            self._inbox.append(change)
            if not self._held:
                self._deliver()

    def _deliver(self) -> None:
        # A handler that writes queues its change behind the one being delivered.
        if self._delivering:
            return
        self._delivering = True
        try:
            inbox, handlers = self._inbox, self._handlers
            while inbox:
                change = inbox.popleft()
                for handler in handlers:
                    change(handler)
        finally:
            self._delivering = False

    # --- reads ----------------------------------------------------------------------------

    def uid_of(self, key: str) -> str:
        """The uid of the pod last added as "namespace/name"; "" if none was."""
        return self._uid_of.get(key, "")

    # --- ClusterWriter --------------------------------------------------------------------

    def current_pod(self, uid: str) -> Pod | None:
        return self.pods.get(uid)

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        current = self.pods.get(pod.uid)
        if current is None:
            return Status(Code.ERROR, f'pods "{pod.name}" not found')
        if current.node_name:
            return Status(
                Code.ERROR,
                f'Operation cannot be fulfilled on pods/binding "{pod.name}": pod '
                f'{pod.name} is already assigned to node "{current.node_name}"',
            )
        if node_name not in self.nodes:
            return Status(Code.ERROR, f'nodes "{node_name}" not found')
        bound = current.with_node_name(node_name)
        if self.clears_nomination_at_binding and bound.nominated_node_name:
            bound = bound.with_nominated_node_name("")
        self.pods[pod.uid] = bound
        self.conditions.pop(pod.uid, None)
        self._notify(lambda h: h.on_pod_update(current, bound))
        for on_bound in self._on_bound:
            on_bound(bound)
        return None

    def extender_bound(self, pod: Pod, node_name: str) -> Status | None:
        # The extender answered for an API server it cannot reach here: apply it.
        return self.bind(pod, node_name)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        current = self.pods.pop(pod.uid, None)
        if current is None:
            return
        self.preemptions.append(
            Preemption(
                victim=current.key,
                node=current.node_name,
                preemptor=reason,
                time=self.clock.now(),
                uid=current.uid,
            )
        )
        self.record_event(Event.preempted(self.clock.now(), current, reason, "wasmsched"))
        self._notify(lambda h: h.on_pod_delete(current))
        for on_deleted in self._on_deleted:
            on_deleted(current, reason)

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        for on_nominated in self._on_nominated:
            on_nominated(pod, node_name)
        current = self.pods.get(pod.uid)
        if current is None or current.nominated_node_name == node_name:
            return
        updated = current.with_nominated_node_name(node_name)
        self.pods[pod.uid] = updated
        self._notify(lambda h: h.on_pod_update(current, updated))

    def set_unschedulable(self, pod: Pod, reason: str, message: str) -> None:
        self.conditions[pod.uid] = (reason, message)

    def record_event(self, event: Event) -> None:
        self.events.append(event)

    def write_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        key = _claim_key(claim)
        old = self.resource_claims.get(key)
        self.resource_claims[key] = claim
        if old is None:
            self._notify(lambda h: h.on_object_add(claim))
        else:
            self._notify(lambda h: h.on_object_update(old, claim))
        for watcher in self._on_claim:
            watcher(old, claim)
        return None

    def delete_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """Deletes a ResourceClaim (the garbage collector, its owning pod gone; or
        DynamicResources, a stale extended-resource claim)."""
        gone = self.resource_claims.pop(_claim_key(claim), None)
        if gone is not None:
            self._notify(lambda h: h.on_object_delete(gone))
            for watcher in self._on_claim:
                watcher(gone, None)
        return None

    def set_extended_resource_claim_status(
        self, pod: Pod, status: Mapping[str, Any]
    ) -> Status | None:
        current = self.pods.get(pod.uid)
        if current is None:
            return Status(Code.ERROR, f'pods "{pod.name}" not found')
        updated = with_extended_resource_claim_status(current, status)
        self.pods[pod.uid] = updated
        self._notify(lambda h: h.on_pod_update(current, updated))
        return None

    # --- other writes -----------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        self.nodes[node.name] = node
        self._notify(lambda h: h.on_node_add(node))

    def add_pod(self, pod: Pod) -> None:
        self.pods[pod.uid] = pod
        self._uid_of[pod.key] = pod.uid
        self._notify(lambda h: h.on_pod_add(pod))

    def remove_pod(self, uid: str) -> Pod | None:
        """A plain API deletion (a finished or deleted pod, not a preemption)."""
        current = self.pods.pop(uid, None)
        if current is None:
            return None
        self.conditions.pop(uid, None)
        self._notify(lambda h: h.on_pod_delete(current))
        for on_deleted in self._on_deleted:
            on_deleted(current, "")
        return current

    def update_node(self, node: Node) -> None:
        old = self.nodes.get(node.name)
        self.nodes[node.name] = node
        if old is None:
            self._notify(lambda h: h.on_node_add(node))
        else:
            self._notify(lambda h: h.on_node_update(old, node))

    def remove_node(self, name: str) -> list[Pod]:
        """Deletes a node and, as the pod garbage collector would, the pods bound to it."""
        gone = [p for p in self.pods.values() if p.node_name == name]
        for pod in gone:
            self.remove_pod(pod.uid)
        node = self.nodes.pop(name, None)
        if node is not None:
            gone_node = node
            self._notify(lambda h: h.on_node_delete(gone_node))
        return gone


def _claim_key(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
