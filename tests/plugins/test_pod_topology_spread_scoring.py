"""PodTopologySpread PreScore, Score and NormalizeScore (podtopologyspread/scoring.go), and the
default selector (helper/spread.go: DefaultSelector).

Cases follow scoring_test.go (TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore) of
kube-scheduler v1.33.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from spread_support import (
    BAR,
    DNS,
    FOO,
    HN,
    LIST_ARGS,
    SA,
    foo_pods,
    n,
    plugin,
    pod,
    sc,
    service,
)

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.node_info import Snapshot
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.pod_topology_spread import (
    PRE_SCORE_KEY,
    PodTopologySpread,
    round_half_away,
)

# --- PreScore / Score --------------------------------------------------------------------


def run_score(
    pl: PodTopologySpread, incoming: Pod, snapshot: Snapshot, filtered: Sequence[str]
) -> list[tuple[str, int]]:
    nodes = [ni for ni in snapshot if ni.name in filtered]
    state = CycleState()
    assert pl.pre_score(state, incoming, nodes) is None
    scores = []
    for ni in nodes:
        value, status = pl.score(state, incoming, ni)
        assert status is None
        scores.append(NodeScore(ni.name, value))
    assert pl.normalize_score(state, incoming, scores) is None
    return [(s.name, s.score) for s in scores]


def hn(name: str) -> Node:
    return n(name, hostname=name)


def zh(name: str, zone: str) -> Node:
    return n(name, zone=zone, hostname=name)


HOST_ABCD = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
FOO_HOST = [sc(1, HN, SA, FOO)]

SCORE_CASES = [
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        [hn("node-a"), hn("node-b")],
        [],
        None,
        [("node-a", 100), ("node-b", 100)],
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        [hn("node-a"), hn("node-b")],
        foo_pods(node_a=2, node_b=1),
        ["node-a"],
        [("node-a", 100)],
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        [hn("node-a"), hn("node-b")],
        foo_pods(node_a=1, node_b=1),
        None,
        [("node-a", 100), ("node-b", 100)],
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        HOST_ABCD,
        foo_pods(node_a=2, node_b=1, node_d=3),
        None,
        [("node-a", 20), ("node-b", 60), ("node-c", 100), ("node-d", 0)],
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, HN, SA, None)]),
        HOST_ABCD,
        foo_pods(node_a=2, node_b=1, node_d=3),
        None,
        [("node-a", 100), ("node-b", 100), ("node-c", 100), ("node-d", 100)],
        id="one constraint on node, null selector",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(2, HN, SA, FOO)]),
        HOST_ABCD,
        foo_pods(node_a=2, node_b=1, node_d=3),
        None,
        [("node-a", 33), ("node-b", 66), ("node-c", 100), ("node-d", 16)],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(3, HN, SA, FOO)]),
        HOST_ABCD,
        foo_pods(node_a=4, node_b=3, node_c=2, node_d=1),
        None,
        [("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        [hn("node-a"), hn("node-b"), hn("node-x"), hn("node-y")],
        foo_pods(node_a=4, node_b=2, node_x=1, node_y=3),
        ["node-a", "node-b", "node-x"],
        [("node-a", 33), ("node-b", 83), ("node-x", 100)],
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        [hn("node-a"), n("node-b", n="node-b"), hn("node-x"), hn("node-y")],
        foo_pods(node_a=4, node_b=2, node_x=1, node_y=3),
        ["node-a", "node-b", "node-x"],
        [("node-a", 16), ("node-b", 0), ("node-x", 100)],
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", SA, FOO)]),
        [
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-x", "zone2"),
            zh("node-y", "zone2"),
        ],
        foo_pods(node_a=4, node_b=2, node_x=1, node_y=3),
        ["node-a", "node-b", "node-x"],
        [("node-a", 75), ("node-b", 75), ("node-x", 100)],
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", SA, FOO), sc(1, HN, SA, FOO)]),
        [
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-x", "zone2"),
            zh("node-y", "zone2"),
        ],
        foo_pods(node_a=2, node_b=1, node_x=2, node_y=4),
        ["node-a", "node-x"],
        [("node-a", 100), ("node-x", 63)],
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}, spread=[sc(1, "zone", SA, FOO), sc(1, "zone", SA, BAR)]),
        [
            n("node-a", zone="zone1"),
            n("node-b", zone="zone1"),
            n("node-x", zone="zone2"),
            n("node-y", zone="zone2"),
        ],
        [
            pod("p-a1", node="node-a", labels={"foo": "", "bar": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"foo": "", "bar": ""}),
            pod("p-y3", node="node-y", labels={"foo": ""}),
        ],
        ["node-a", "node-x"],
        [("node-a", 85), ("node-x", 100)],
        id="two Constraints on zone, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}, spread=[sc(1, "zone", SA, FOO), sc(1, HN, SA, BAR)]),
        [
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-x", "zone2"),
            zh("node-y", "zone2"),
        ],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"bar": ""}),
        ],
        None,
        [("node-a", 60), ("node-b", 20), ("node-x", 100), ("node-y", 60)],
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}, spread=[sc(1, "zone", SA, FOO), sc(1, HN, SA, BAR)]),
        [
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-x", "zone2"),
            zh("node-y", "zone2"),
        ],
        [
            pod("p-b1", node="node-b", labels={"bar": ""}),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": "", "bar": ""}),
        ],
        None,
        [("node-a", 100), ("node-b", 60), ("node-x", 40), ("node-y", 0)],
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
    ),
    pytest.param(
        pod(labels={"foo": "", "bar": ""}, spread=[sc(1, "zone", SA, FOO), sc(1, HN, SA, BAR)]),
        [
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-x", "zone2"),
            zh("node-y", "zone2"),
        ],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": "", "bar": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
            pod("p-y2", node="node-y", labels={"bar": ""}),
        ],
        ["node-a", "node-b", "node-x"],
        [("node-a", 50), ("node-b", 25), ("node-x", 100)],
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        [hn("node-a"), hn("node-b")],
        [
            pod("p-a1", node="node-a", labels={"foo": ""}, ns="ns1"),
            pod("p-a2", node="node-a", labels={"foo": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-b2", node="node-b", labels={"foo": ""}),
        ],
        None,
        [("node-a", 100), ("node-b", 33)],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=FOO_HOST),
        [hn("node-a"), hn("node-b")],
        [
            pod("p-a", node="node-a", labels={"foo": ""}, terminating=True),
            pod("p-b", node="node-b", labels={"foo": ""}),
        ],
        None,
        [("node-a", 100), ("node-b", 0)],
        id="terminating Pods should be excluded",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "filtered", "want"), SCORE_CASES)
def test_score(
    incoming: Pod,
    nodes: list[Node],
    pods: list[Pod],
    filtered: list[str] | None,
    want: list[tuple[str, int]],
) -> None:
    pl, snapshot = plugin(nodes, pods)
    names = filtered if filtered is not None else [nd.name for nd in nodes]
    assert run_score(pl, incoming, snapshot, names) == want


def test_score_system_defaulting_nodes_without_zone_pods_match_service() -> None:
    # Same scores as one hostname constraint with maxSkew 3: zone is not required of nodes.
    pl, snapshot = plugin(
        HOST_ABCD,
        foo_pods(node_a=4, node_b=3, node_c=2, node_d=1),
        args={"defaultingType": "System"},
        objects=[service({"foo": ""})],
    )
    got = run_score(pl, pod(labels={"foo": ""}), snapshot, [nd.name for nd in HOST_ABCD])
    assert got == [("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)]


def test_pre_score_state() -> None:
    pl, snapshot = plugin(
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), hn("node-y")],
        foo_pods(node_a=2, node_b=1, node_x=1, node_y=5),
    )
    incoming = pod(labels={"foo": ""}, spread=[sc(1, "zone", SA, FOO), sc(1, HN, SA, FOO)])
    state = CycleState()
    assert pl.pre_score(state, incoming, snapshot.list()) is None
    s = state.read(PRE_SCORE_KEY)
    assert s.ignored == {"node-y"}  # no zone label
    assert s.counts == [{"zone1": 3, "zone2": 1}, {}]
    assert s.weights == [math.log(2 + 2), math.log(3 + 2)]


def test_pre_score_system_default_counts_nodes_without_zone() -> None:
    nodes = [hn("node-a"), hn("node-b")]
    pl, snapshot = plugin(
        nodes, foo_pods(node_a=2, node_b=1), args={}, objects=[service({"foo": ""})]
    )
    state = CycleState()
    assert pl.pre_score(state, pod(labels={"foo": ""}), snapshot.list()) is None
    s = state.read(PRE_SCORE_KEY)
    assert [(c.topology_key, c.max_skew) for c in s.constraints] == [
        (HN, 3),
        ("topology.kubernetes.io/zone", 5),
    ]
    assert s.ignored == set()
    # Without a zone label every node is in the "" zone domain.
    assert s.counts == [{}, {"": 3}]
    assert s.weights == [math.log(2 + 2), math.log(1 + 2)]


@pytest.mark.parametrize(
    ("incoming", "args", "objects"),
    [
        pytest.param(pod(labels={"foo": ""}), {}, [], id="system defaults without a workload"),
        pytest.param(
            pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
            {},
            [service({"foo": ""})],
            id="only hard constraints",
        ),
        pytest.param(
            pod(labels={"foo": ""}), LIST_ARGS, [service({"foo": ""})], id="List without defaults"
        ),
        pytest.param(
            pod(labels={"foo": ""}),
            {},
            [service(None)],
            id="a service with a null selector",
        ),
        pytest.param(
            pod(labels={"foo": ""}),
            {},
            [service({"foo": ""}, ns="other")],
            id="a service in another namespace",
        ),
    ],
)
def test_pre_score_skip(
    incoming: Pod, args: Mapping[str, Any], objects: list[Mapping[str, Any]]
) -> None:
    pl, snapshot = plugin([hn("node-a")], args=args, objects=objects)
    assert pl.pre_score(CycleState(), incoming, snapshot.list()) == Status(Code.SKIP)


OWNED = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}


@pytest.mark.parametrize(
    ("owner", "objects", "want_labels", "want_exprs"),
    [
        pytest.param(
            OWNED,
            [
                {
                    "kind": "ReplicaSet",
                    "metadata": {"name": "rs"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                }
            ],
            {},
            [("app", "In", ("web",))],
            id="ReplicaSet selector",
        ),
        pytest.param(
            {**OWNED, "kind": "StatefulSet"},
            [
                {
                    "kind": "StatefulSet",
                    "metadata": {"name": "rs"},
                    "spec": {
                        "selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}
                    },
                }
            ],
            {},
            [("app", "Exists", ())],
            id="StatefulSet selector",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "controller": True},
            [
                {
                    "kind": "ReplicationController",
                    "metadata": {"name": "rc"},
                    "spec": {"selector": {"app": "web"}},
                }
            ],
            {"app": "web"},
            [],
            id="ReplicationController selector",
        ),
        pytest.param(
            {**OWNED, "controller": False},
            [
                {
                    "kind": "ReplicaSet",
                    "metadata": {"name": "rs"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                }
            ],
            {},
            [],
            id="not the controller",
        ),
        pytest.param(OWNED, [], {}, [], id="owner not in the cluster"),
        pytest.param(
            OWNED,
            [
                service({"tier": "fe"}),
                {
                    "kind": "ReplicaSet",
                    "metadata": {"name": "rs"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                },
            ],
            {"tier": "fe"},
            [("app", "In", ("web",))],
            id="service and ReplicaSet ANDed",
        ),
    ],
)
def test_default_selector(
    owner: Mapping[str, Any],
    objects: list[Mapping[str, Any]],
    want_labels: dict[str, str],
    want_exprs: list[tuple[str, str, tuple[str, ...]]],
) -> None:
    pl, _ = plugin([hn("node-a")], args={}, objects=objects)
    incoming = pod(labels={"app": "web", "tier": "fe"}, owner=owner)
    constraints = pl.constraints(incoming, SA)
    if not want_labels and not want_exprs:
        assert constraints == []
        return
    sel = constraints[0].selector
    assert sel.match_labels == want_labels
    assert [(r.key, r.operator, r.values) for r in sel.match_expressions] == want_exprs


def test_normalize_score_ignored_nodes_get_zero() -> None:
    pl, snapshot = plugin([zh("node-a", "zone1"), hn("node-b")])
    incoming = pod(labels={"foo": ""}, spread=[sc(1, "zone", SA, FOO)])
    got = run_score(pl, incoming, snapshot, ["node-a", "node-b"])
    assert got == [("node-a", 100), ("node-b", 0)]


@pytest.mark.parametrize(("x", "want"), [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (0.0, 0)])
def test_round_half_away(x: float, want: int) -> None:
    assert round_half_away(x) == want
