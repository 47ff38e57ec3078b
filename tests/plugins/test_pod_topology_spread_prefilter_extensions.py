"""PodTopologySpread AddPod/RemovePod, state clones and criticalPaths (filtering.go).

Cases follow filtering_test.go (TestPreFilterStateAddPod, TestPreFilterStateRemovePod) of
kube-scheduler v1.33.
"""

from __future__ import annotations

from typing import Any

import pytest
from spread_support import (
    DNS,
    FOO,
    FOUR_NODES,
    foo_pods,
    n,
    plugin,
    pod,
    sc,
    zn,
)

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import PodInfo
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    PRE_FILTER_KEY,
    CriticalPaths,
)

# --- AddPod / RemovePod ------------------------------------------------------------------


NODE_C = [sc(1, "node", DNS, FOO)]
ZONE_NODE_C = [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]
AB = [zn("node-a", "zone1"), zn("node-b", "zone1")]


@pytest.mark.parametrize(
    ("spread", "nodes", "existing", "added", "counts", "mins"),
    [
        pytest.param(
            NODE_C,
            AB,
            [],
            pod("p-a1", node="node-a", labels={"foo": ""}),
            [{"node-a": 1, "node-b": 0}],
            [0],
            id="node a and b both impact current min match",
        ),
        pytest.param(
            NODE_C,
            AB,
            foo_pods(node_b=1),
            pod("p-a1", node="node-a", labels={"foo": ""}),
            [{"node-a": 1, "node-b": 1}],
            [1],
            id="only node a impacts current min match",
        ),
        pytest.param(
            NODE_C,
            AB,
            foo_pods(node_b=1),
            pod("p-a1", node="node-a", labels={"foo": ""}, ns="ns1"),
            [{"node-a": 0, "node-b": 1}],
            [0],
            id="add a pod in a different namespace doesn't change the counts",
        ),
        pytest.param(
            NODE_C,
            AB,
            foo_pods(node_b=1),
            pod("p-b2", node="node-b", labels={"foo": ""}),
            [{"node-a": 0, "node-b": 2}],
            [0],
            id="add pod on non-critical node won't trigger re-calculation",
        ),
        pytest.param(
            ZONE_NODE_C,
            [zn("node-a", "zone1"), zn("node-x", "zone2")],
            [],
            pod("p-x1", node="node-x", labels={"foo": ""}),
            [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-x": 1}],
            [0, 0],
            id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
        ),
        pytest.param(
            ZONE_NODE_C,
            [zn("node-a", "zone1"), zn("node-x", "zone2")],
            foo_pods(node_a=1),
            pod("p-x2", node="node-x", labels={"foo": ""}),
            [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
            [1, 1],
            id="only node a impacts topologyKeyToMinPodsMap on zone and node",
        ),
        pytest.param(
            ZONE_NODE_C,
            [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
            foo_pods(node_a=1, node_b=2, node_x=1),
            pod("p-b3", node="node-b", labels={"foo": ""}),
            [{"zone1": 4, "zone2": 1}, {"node-a": 1, "node-b": 3, "node-x": 1}],
            [1, 1],
            id="node a and x both impact on zone, node a impacts on node",
        ),
    ],
)
def test_add_pod(
    spread: list[dict[str, Any]],
    nodes: list[Node],
    existing: list[Pod],
    added: Pod,
    counts: list[dict[str, int]],
    mins: list[int],
) -> None:
    pl, snapshot = plugin(nodes, existing)
    incoming = pod(labels={"foo": ""}, spread=spread)
    state = CycleState()
    assert pl.pre_filter(state, incoming, snapshot.list()) == (None, None)
    node_info = snapshot.get(added.node_name)
    assert node_info is not None
    assert pl.add_pod(state, incoming, PodInfo(added), node_info) is None
    s = state.read(PRE_FILTER_KEY)
    assert s.counts == counts
    assert [p.n0 for p in s.paths] == mins


def test_add_pod_honors_node_inclusion_policies() -> None:
    nodes = [n("node-a", node="node-a", foo=""), n("node-b", node="node-b")]
    pl, snapshot = plugin(nodes)
    incoming = pod(labels={"foo": ""}, node_selector={"foo": ""}, spread=NODE_C)
    state = CycleState()
    pl.pre_filter(state, incoming, snapshot.list())
    assert state.read(PRE_FILTER_KEY).counts == [{"node-a": 0}]
    other = snapshot.get("node-b")
    assert other is not None
    pl.add_pod(state, incoming, PodInfo(pod("p-b", node="node-b", labels={"foo": ""})), other)
    assert state.read(PRE_FILTER_KEY).counts == [{"node-a": 0}]


@pytest.mark.parametrize(
    ("existing", "removed", "node", "counts", "mins"),
    [
        pytest.param(
            foo_pods(node_a=1, node_b=1, node_x=2, node_y=2),
            "p-a1",
            "node-a",
            [{"zone1": 1, "zone2": 4}, {"node-a": 0, "node-b": 1, "node-x": 2, "node-y": 2}],
            [1, 0],
            id="remove a pod on the critical node of zone and node",
        ),
        pytest.param(
            foo_pods(node_a=1, node_b=1, node_x=2, node_y=2),
            "p-y1",
            "node-y",
            [{"zone1": 2, "zone2": 3}, {"node-a": 1, "node-b": 1, "node-x": 2, "node-y": 1}],
            [2, 1],
            id="remove a pod on a non-critical node",
        ),
    ],
)
def test_remove_pod(
    existing: list[Pod], removed: str, node: str, counts: list[dict[str, int]], mins: list[int]
) -> None:
    pl, snapshot = plugin(FOUR_NODES, existing)
    incoming = pod(labels={"foo": ""}, spread=ZONE_NODE_C)
    state = CycleState()
    pl.pre_filter(state, incoming, snapshot.list())
    victim = next(p for p in existing if p.name == removed)
    ni = snapshot.get(node)
    assert ni is not None
    assert pl.remove_pod(state, incoming, PodInfo(victim), ni) is None
    s = state.read(PRE_FILTER_KEY)
    assert s.counts == counts
    assert [p.n0 for p in s.paths] == mins


def test_clone_is_independent_and_filter_sees_added_pods() -> None:
    pl, snapshot = plugin(AB, foo_pods(node_b=1))
    incoming = pod(labels={"foo": ""}, spread=NODE_C)
    state = CycleState()
    pl.pre_filter(state, incoming, snapshot.list())
    node_a = snapshot.get("node-a")
    assert node_a is not None
    assert pl.filter(state, incoming, node_a) is None
    copy = state.clone()
    pl.add_pod(copy, incoming, PodInfo(pod("p-a1", node="node-a", labels={"foo": ""})), node_a)
    pl.add_pod(copy, incoming, PodInfo(pod("p-a2", node="node-a", labels={"foo": ""})), node_a)
    rejected = pl.filter(copy, incoming, node_a)
    assert rejected == Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    assert state.read(PRE_FILTER_KEY).counts == [{"node-a": 0, "node-b": 1}]
    assert pl.filter(state, incoming, node_a) is None


def test_critical_paths_track_the_minimum() -> None:
    cp = CriticalPaths()
    for value, num in (("a", 3), ("b", 1), ("c", 2)):
        cp.update(value, num)
    assert cp.as_tuple() == (("b", 1), ("c", 2))
    cp.update("b", 4)  # the minimum grows past the second path: they swap
    assert cp.as_tuple() == (("c", 2), ("b", 4))
    cp.update("a", 0)
    assert cp.as_tuple() == (("a", 0), ("c", 2))
