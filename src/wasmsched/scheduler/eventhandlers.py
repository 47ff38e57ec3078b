"""Cluster event handlers and the store of other objects (pkg/scheduler/eventhandlers.go).

Informers (the live mode's watches, the simulator's store) call these between scheduling
cycles: they update the cache, the nominator and the queue, and turn each change into
the ClusterEvent that may make pending pods schedulable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wasmsched.framework import types as ev
from wasmsched.scheduler.types import PodOutcome

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.scheduler.scheduler import Scheduler

# The event resource of each kind a plugin may register for (framework.EventResource).
EVENT_RESOURCES = {
    "PersistentVolume": ev.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": ev.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": ev.STORAGE_CLASS,
    "CSINode": ev.CSI_NODE,
    "ResourceClaim": ev.RESOURCE_CLAIM,
    "ResourceSlice": ev.RESOURCE_SLICE,
    "DeviceClass": ev.DEVICE_CLASS,
    "CSIDriver": ev.CSI_DRIVER,
}


class ObjectStore:
    """Cluster objects other than pods and nodes (PDBs, PVCs, PVs, StorageClasses...), by
    kind and "namespace/name": what kube-scheduler's plugins read through listers."""

    def __init__(self) -> None:
        self.by_kind: dict[str, dict[str, Mapping[str, Any]]] = {}
        self._lists: dict[str, list[Mapping[str, Any]]] = {}

    def list(self, kind: str) -> list[Mapping[str, Any]]:
        """The objects of ``kind``; the list is shared until that kind changes."""
        cached = self._lists.get(kind)
        if cached is None:
            cached = self._lists[kind] = list(self.by_kind.get(kind, {}).values())
        return cached

    def add(self, manifest: Mapping[str, Any]) -> str:
        """Adds or replaces an object; returns its kind."""
        kind = str(manifest.get("kind", ""))
        self.by_kind.setdefault(kind, {})[_key(manifest)] = manifest
        self._lists.pop(kind, None)
        return kind

    def delete(self, manifest: Mapping[str, Any]) -> bool:
        """Removes an object; False when it was not there."""
        kind = str(manifest.get("kind", ""))
        if self.by_kind.get(kind, {}).pop(_key(manifest), None) is None:
            return False
        self._lists.pop(kind, None)
        return True


def _key(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class EventHandlers:
    """The informer callbacks of one Scheduler (eventhandlers.go: addPodToCache and the
    others)."""

    def __init__(self, sched: Scheduler) -> None:
        self._sched = sched

    def _changed(self) -> None:
        self._sched.cluster_generation += 1

    def on_node_add(self, node: Node) -> None:
        """A node appeared."""
        s = self._sched
        s.cache.add_node(node)
        self._changed()
        s.queue.on_event(ev.NODE_ADD, None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        """A node changed (eventhandlers.go: updateNodeInCache): the cache follows it; the
        queue hears of it only when a property scheduling reads changed (a status update
        such as the kubelet's heartbeat moves no pod)."""
        s = self._sched
        s.cache.update_node(new)
        self._changed()
        action = node_update_action(old, new)
        if action:
            s.queue.on_event(ev.ClusterEvent(ev.NODE, action), old, new)

    def on_node_delete(self, node: Node) -> None:
        """A node is gone."""
        s = self._sched
        s.cache.remove_node(node.name)
        self._changed()
        s.queue.on_event(ev.NODE_DELETE, node, None)

    def on_object_add(self, manifest: Mapping[str, Any]) -> None:
        """Any other object (PDB, PVC, PV, StorageClass...); a change may help pending pods."""
        kind = self._sched.objects.add(manifest)
        self._changed()
        event = ev.ClusterEvent(EVENT_RESOURCES.get(kind, kind), ev.ActionType.ADD)
        self._sched.queue.on_event(event, None, manifest)

    def on_object_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Another object changed: an Update event with both versions (a ResourceClaim the
        scheduler or the resourceclaim controller wrote)."""
        kind = self._sched.objects.add(new)
        self._changed()
        event = ev.ClusterEvent(EVENT_RESOURCES.get(kind, kind), ev.ActionType.UPDATE)
        self._sched.queue.on_event(event, old, new)

    def on_object_delete(self, manifest: Mapping[str, Any]) -> None:
        """Another object is gone."""
        if self._sched.objects.delete(manifest):
            kind = str(manifest.get("kind", ""))
            self._changed()
            event = ev.ClusterEvent(EVENT_RESOURCES.get(kind, kind), ev.ActionType.DELETE)
            self._sched.queue.on_event(event, manifest, None)

    def on_pod_add(self, pod: Pod) -> None:
        """A pod appeared: bound ones go to the cache, pending ones of our profiles queue."""
        s = self._sched
        if pod.node_name:
            s.cache.add_pod(pod)
            self._changed()
            s.queue.on_event(ev.ASSIGNED_POD_ADD, None, pod)
            return
        if pod.is_terminal or pod.deletion_timestamp:
            return
        fwk = s.frameworks.get(pod.scheduler_name)
        if fwk is None:
            return  # another scheduler's pod
        s.outcomes.setdefault(pod.uid, PodOutcome(pod, fwk.profile_name))
        if pod.nominated_node_name:
            # Nominated by an earlier leader: count it on that node (PriorityQueue.Add).
            s.nominator.add(pod, pod.nominated_node_name)
        s.queue.add(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        """A pod changed: bound now (confirming an assumed pod) or still pending."""
        s = self._sched
        if new.node_name:
            was_assigned = bool(old.node_name)
            s.cache.add_pod(new)  # confirms an assumed pod
            self._changed()
            s.queue.delete(new)
            if not was_assigned:
                outcome = s.outcomes.get(new.uid)
                if outcome is not None and new.nominated_node_name != old.nominated_node_name:
                    # The API server cleared it at binding (1.35+).
                    outcome.nominated_node = new.nominated_node_name or None
                s.queue.on_event(ev.ASSIGNED_POD_ADD, None, new)
            else:
                s.queue.on_event(ev.ClusterEvent(ev.POD, ev.ActionType.UPDATE), old, new)
            return
        outcome = s.outcomes.get(new.uid)
        if outcome is not None and s.cache.is_assumed(new.uid):
            # updatePodInSchedulingQueue: an assumed pod's update (the binding cycle's
            # nominatedNodeName, 1.35+) touches neither the queue nor the nominator; the
            # outcome still shows the pod as the API server has it.
            outcome.pod = new
            outcome.nominated_node = new.nominated_node_name or None
            return
        if outcome is not None:
            outcome.pod = new
            s.nominator.update(old, new)
            if new.nominated_node_name != old.nominated_node_name:
                outcome.nominated_node = new.nominated_node_name or None
            s.queue.update(old, new)
            if old.nominated_node_name and new.nominated_node_name != old.nominated_node_name:
                # Lower or equal priority pods counted it on that node as if assigned:
                # treat it as deleted from there (eventhandlers.go:
                # updatePodInSchedulingQueue, hasNominatedNodeNameChanged).
                _nominated_pod_left(s, old)

    def on_pod_delete(self, pod: Pod) -> None:
        """A pod is gone."""
        s = self._sched
        s.nominator.delete(pod.uid)
        if pod.node_name:
            s.cache.remove_pod(pod)
            self._changed()
            s.queue.on_event(ev.ASSIGNED_POD_DELETE, pod, None)
            return
        # An unassigned pod (possibly assumed and waiting at Permit): k8s rejects the
        # waiting pod; its binding cycle then forgets the assumed copy.
        s.queue.delete(pod)
        wp = s.waiting_pods.get(pod.uid)
        if wp is not None:
            wp.reject("", "pod deleted")
        elif pod.nominated_node_name and not s.cache.is_assumed(pod.uid):
            # eventhandlers.go: deletePodFromSchedulingQueue (an assumed pod's deletion
            # already woke the lower priority pods).
            _nominated_pod_left(s, pod)


def _nominated_pod_left(sched: Scheduler, pod: Pod) -> None:
    """A nominated pod no longer holds its node: the pods of lower or equal priority,
    which counted it there, get AssignedPodDelete (getLEPriorityPreCheck)."""
    priority = pod.priority
    # What those pods were last tried against changed: they are worth another attempt.
    sched.cluster_generation += 1
    sched.queue.on_event(ev.ASSIGNED_POD_DELETE, pod, None, lambda p: p.priority <= priority)


def node_update_action(old: Node, new: Node) -> int:
    """What changed about a node that scheduling reads, as ActionType bits; 0 for none
    (framework/events.go: NodeSchedulingPropertiesChange and its extractors)."""
    action = 0
    if old.allocatable != new.allocatable:
        action |= ev.ActionType.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        action |= ev.ActionType.UPDATE_NODE_LABEL
    # extractNodeSpecUnschedulableChange: only a node becoming schedulable counts.
    if old.taints != new.taints or (old.unschedulable and not new.unschedulable):
        action |= ev.ActionType.UPDATE_NODE_TAINT
    # extractNodeConditionsChange: each condition's status by type (not its times).
    if _condition_statuses(old) != _condition_statuses(new):
        action |= ev.ActionType.UPDATE_NODE_CONDITION
    if old.annotations != new.annotations:
        action |= ev.ActionType.UPDATE_NODE_ANNOTATION
    return action


def _condition_statuses(node: Node) -> dict[Any, Any]:
    conditions = (node.manifest.get("status") or {}).get("conditions") or ()
    return {c.get("type"): c.get("status") for c in conditions if isinstance(c, Mapping)}


__all__ = ["EVENT_RESOURCES", "EventHandlers", "ObjectStore", "node_update_action"]
