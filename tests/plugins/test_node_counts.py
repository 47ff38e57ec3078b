"""plugins/node_counts: NodeChanges records the positions whose NodeInfo generation changed,
once per scheduling cycle when given the cycle's state."""

from __future__ import annotations

import random
from typing import Any

import pytest
from incremental_support import RACK, ZONE, apply, cache_with, node_doc

from wasmsched.api.objects import Pod
from wasmsched.cluster.cache import Cache
from wasmsched.framework.cycle_state import CycleState
from wasmsched.plugins.node_counts import Contribution, NodeChanges, NodeCounts


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


def _by_zone(ni: Any) -> tuple[Contribution, ...]:
    """Pods per zone (every node contributes, even without pods: its zone is marked)."""
    return ((0, ZONE, ni.node.labels.get(ZONE, ""), len(ni.pods)),)


def _apps_by_rack(ni: Any) -> tuple[Contribution, ...]:
    """Pods labelled app=a per rack, only from nodes that have some."""
    n = sum(1 for p in ni.pods if p.pod.labels.get("app") == "a")
    return ((0, RACK, ni.node.labels.get(RACK, ""), n),) if n else ()


@pytest.mark.parametrize("seed", range(6))
def test_counts_follow_new_node_lists_reading_only_what_changed(seed: int) -> None:
    # The snapshot lists its nodes anew when one is added or removed: NodeChanges matches
    # the new list with the previous one, so counts last updated any number of lists ago
    # recompute only the nodes added or changed since, and equal a count from scratch.
    rng = random.Random(seed)
    node_docs = [node_doc(i, rng.choice(["z0", "z1", "z2"]), "r0", True, False) for i in range(300)]
    pods = [
        Pod(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"p{i}",
                    "uid": f"p{i}",
                    "namespace": "default",
                    "labels": {"app": rng.choice("ab")},
                },
                "spec": {"containers": []},
            }
        )
        for i in range(600)
    ]
    cache = cache_with(node_docs, pods, [rng.randrange(10**6) for _ in pods])
    changes = NodeChanges()
    kept = {fn: NodeCounts(1) for fn in (_by_zone, _apps_by_rack)}
    computed: list[str] = []

    def counting(fn: Any) -> Any:
        def compute(ni: Any) -> Any:
            computed.append(ni.name)
            return fn(ni)

        return compute

    kinds = ["add-pod", "remove-pod", "relabel-pod", "relabel-node", "add-node", "remove-node"]
    for _ in range(40):
        for _ in range(rng.randint(0, 3)):
            step = (rng.choice(kinds), rng.randrange(40), rng.randrange(40))
            apply(cache, step, pods, node_docs)
        nodes = cache.snapshot().node_infos
        if rng.random() < 0.2:
            continue  # no cycle sees this list: the next is matched with the last seen
        changes.advance(nodes, CycleState())
        for fn, counts in kept.items():
            if rng.random() < 0.4:
                continue  # this kind of pod skips the cycle: its counts fall behind
            first = counts._epoch < 0  # its first update counts every node
            since = changes.since(nodes, counts._epoch)
            stale = {
                ni.name
                for ni in nodes
                if (e := counts.entries.get(ni.name)) is None
                or e[0] is not ni
                or e[1] != ni.generation
            }
            computed.clear()
            counts.update(nodes, counting(fn), changes)
            fresh = NodeCounts(1)
            fresh.update(nodes, fn)
            assert counts.totals == fresh.totals and counts.contributing == fresh.contributing
            assert counts.entries.keys() == fresh.entries.keys()
            assert sorted(computed) == sorted(stale)
            if not first:
                # Known across every new list: exactly the nodes added or changed since.
                assert since is not None and {nodes[i].name for i in since} == stale
