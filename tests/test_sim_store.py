"""The simulation's store (wasmsched.sim.store): when its subscribers see a change.

Event handlers (the scheduler's informer callbacks) get each change in order, at once
outside a scheduler step and after the step inside one; watchers are called at the write.
"""

from __future__ import annotations

from typing import Any

from wasmsched.api.objects import Node, Pod
from wasmsched.sim.clock import SimClock
from wasmsched.sim.store import ClusterStore


def node(name: str) -> Node:
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "1", "pods": "10"}},
        }
    )


def pod(name: str) -> Pod:
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }
    )


class Recorder:
    """An event handler that logs what it is given, as "<callback> <name>"."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def on_node_add(self, node: Node) -> None:
        self.log.append(f"node_add {node.name}")

    def on_node_update(self, old: Node, new: Node) -> None:
        self.log.append(f"node_update {new.name}")

    def on_node_delete(self, node: Node) -> None:
        self.log.append(f"node_delete {node.name}")

    def on_pod_add(self, pod: Pod) -> None:
        self.log.append(f"pod_add {pod.name}")

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        self.log.append(f"pod_update {new.name} {new.node_name}")

    def on_pod_delete(self, pod: Pod) -> None:
        self.log.append(f"pod_delete {pod.name}")


def store_with_log() -> tuple[ClusterStore, list[str]]:
    store = ClusterStore(SimClock())
    log: list[str] = []
    store.add_event_handler(Recorder(log))
    return store, log


def test_changes_outside_a_step_reach_the_handlers_at_once() -> None:
    store, log = store_with_log()
    store.add_node(node("n1"))
    assert log == ["node_add n1"]
    store.add_pod(pod("a"))
    assert log[-1] == "pod_add a"
    store.remove_node("n1")
    assert log[-1] == "node_delete n1"


def test_changes_inside_a_step_reach_the_handlers_after_it_in_order() -> None:
    store, log = store_with_log()
    store.add_node(node("n1"))
    store.add_pod(pod("a"))
    store.add_pod(pod("b"))
    log.clear()

    def step() -> str:  # a scheduling cycle: a bind, then a preemption victim's deletion
        store.bind(store.pods["uid-a"], "n1")
        store.delete_pod(store.pods["uid-b"], "default/a")
        store.deliver_after(lambda: store.add_pod(pod("d")))  # nested: still the same step
        assert log == []
        return "done"

    assert store.deliver_after(step) == "done"
    assert log == ["pod_update a n1", "pod_delete b", "pod_add d"]
    store.add_pod(pod("c"))  # and at once again after the step
    assert log[-1] == "pod_add c"


def test_a_handler_that_writes_queues_its_change_behind_the_one_delivered() -> None:
    store, log = store_with_log()

    class Writer(Recorder):
        def on_node_add(self, added: Node) -> None:
            super().on_node_add(added)
            if added.name == "n1":
                store.add_node(node("n2"))

    writer_log: list[str] = []
    store.add_event_handler(Writer(writer_log))
    store.add_node(node("n1"))
    # Both handlers see n1 before either sees n2.
    assert log == ["node_add n1", "node_add n2"]
    assert writer_log == ["node_add n1", "node_add n2"]


def test_watchers_are_called_at_the_write_in_subscription_order() -> None:
    store, _ = store_with_log()
    calls: list[tuple[Any, ...]] = []
    store.subscribe(
        on_bound=lambda p: calls.append(("bound", p.name, p.node_name)),
        on_deleted=lambda p, preemptor: calls.append(("deleted", p.name, preemptor)),
        on_nominated=lambda p, n: calls.append(("nominated", p.name, n)),
    )
    store.subscribe(on_bound=lambda p: calls.append(("second", p.name)))
    store.add_node(node("n1"))
    for name in ("a", "b", "c"):
        store.add_pod(pod(name))

    def step() -> None:
        store.set_nominated_node(store.pods["uid-a"], "n1")
        store.bind(store.pods["uid-a"], "n1")
        assert calls == [("nominated", "a", "n1"), ("bound", "a", "n1"), ("second", "a")]
        store.delete_pod(store.pods["uid-b"], "default/a")

    store.deliver_after(step)
    store.remove_pod("uid-c")
    assert calls[3:] == [("deleted", "b", "default/a"), ("deleted", "c", "")]
    assert store.uid_of("default/a") == "uid-a" and store.uid_of("default/x") == ""
    assert [p.victim for p in store.preemptions] == ["default/b"]  # a plain deletion is not one
