"""A node update reaches the queue only when a property scheduling reads changed
(pkg/scheduler/eventhandlers.go: updateNodeInCache; framework/events.go:
NodeSchedulingPropertiesChange): a status update such as the kubelet's heartbeat, or a
node cordoned, moves no unschedulable pod; a node that gains room, a condition's status or
is uncordoned does."""

from __future__ import annotations

from typing import Any

from sched_support import default_profile_config, node, pod, simulate
from wasmsched.api.objects import Node
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.eventhandlers import node_update_action


def _with(base: Node, spec: dict[str, Any] | None = None, **status: Any) -> Node:
    manifest = dict(base.manifest)
    manifest["spec"] = {**(manifest.get("spec") or {}), **(spec or {})}
    manifest["status"] = {**manifest["status"], **status}
    return Node(manifest)


def _ready(beat: str, status: str = "True") -> list[dict[str, str]]:
    return [{"type": "Ready", "status": status, "lastHeartbeatTime": beat}]


def test_only_scheduling_properties_move_unschedulable_pods() -> None:
    small = _with(node("n1", cpu="1"), conditions=_ready("t0"))
    _, sim = simulate([small], [pod("big", cpu="2")], in_tree_registry(), default_profile_config())
    sched = sim.scheduler
    assert "default/big" in {i.pod.key for i in sched.queue.unschedulable.values()}

    def update(old: Node, new: Node) -> int:
        before = sched.queue.moves
        sched.on_node_update(old, new)
        return sched.queue.moves - before

    beat = _with(small, conditions=_ready("t1"))
    assert node_update_action(small, beat) == 0
    assert update(small, beat) == 0  # the heartbeat: nothing scheduling reads changed
    cordoned = _with(beat, {"unschedulable": True})
    assert update(beat, cordoned) == 0  # a node cordoned cannot make a pod schedulable
    not_ready = _with(cordoned, conditions=_ready("t2", "False"))
    assert node_update_action(cordoned, not_ready) != 0  # a condition's status changed
    uncordoned = _with(cordoned, {"unschedulable": False})
    assert node_update_action(cordoned, uncordoned) != 0
    bigger = _with(beat, allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})
    assert update(beat, bigger) == 1
