"""plugins/node_counts: NodeChanges records the positions whose NodeInfo generation changed,
once per scheduling cycle when given the cycle's state."""

from __future__ import annotations

from incremental_support import node_doc

from wasmsched.api.objects import Pod
from wasmsched.cluster.cache import Cache
from wasmsched.framework.cycle_state import CycleState
from wasmsched.plugins.node_counts import NodeChanges


def _pod(name: str, node: str) -> Pod:
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "uid": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": []},
        }
    )


def test_node_changes_compare_generations_once_per_cycle() -> None:
    cache = Cache()
    for i in range(4):
        cache.add_node(node_doc(i, "z0", None, True, False))
    nodes = cache.snapshot().node_infos
    changes = NodeChanges()
    first = CycleState()
    changes.advance(nodes, first)
    start = changes.epoch
    assert changes.since(nodes, start) == []
    cache.add_pod(_pod("a", nodes[2].name))
    # The same cycle again: nothing is compared (the snapshot does not change in a cycle).
    changes.advance(nodes, first)
    assert changes.epoch == start
    # A new cycle (or no cycle given) sees the change, at its position in the list.
    changes.advance(nodes, CycleState())
    assert changes.epoch == start + 1
    assert changes.since(nodes, start) == [2]
    cache.add_pod(_pod("b", nodes[0].name))
    changes.advance(nodes)
    assert sorted(changes.since(nodes, start) or []) == [0, 2]
    assert changes.since(nodes, start + 1) == [0]
