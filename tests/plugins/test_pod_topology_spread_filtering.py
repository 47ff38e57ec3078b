"""PodTopologySpread PreFilter counts and Filter codes (podtopologyspread/filtering.go).

Cases follow filtering_test.go (TestPreFilterState, TestSingleConstraint,
TestMultipleConstraints) of kube-scheduler v1.33.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from spread_support import (
    BAR,
    DNS,
    FOO,
    FOUR_NODES,
    LIST_ARGS,
    NO_SCHEDULE_TAINT,
    SA,
    UU,
    S,
    U,
    foo_pods,
    n,
    node_affinity,
    plugin,
    pod,
    sc,
    service,
    zn,
)

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import Snapshot
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_KEY,
    PodTopologySpread,
)

# --- PreFilter ---------------------------------------------------------------------------


PRE_FILTER_CASES = [
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(5, "zone", DNS, {"matchLabels": {"foo": "bar"}})]),
        FOUR_NODES,
        [],
        [{"zone1": 0, "zone2": 0}],
        [0],
        id="clean cluster with one spreadConstraint",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=2),
        [{"zone1": 3, "zone2": 2}],
        [2],
        id="normal case with one spreadConstraint",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, None)]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=2),
        [{"zone1": 0, "zone2": 0}],
        [0],
        id="normal case with null label selector",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
        [*FOUR_NODES, zn("node-o", "zone3"), zn("node-p", "zone3")],
        foo_pods(node_a=2, node_b=1, node_y=2),
        [{"zone1": 3, "zone2": 2, "zone3": 0}],
        [0],
        id="normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
        FOUR_NODES,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": ""}, ns="ns1"),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}, ns="ns2"),
            pod("p-y2", node="node-y", labels={"foo": ""}),
        ],
        [{"zone1": 2, "zone2": 1}],
        [1],
        id="namespace mismatch doesn't count",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=4),
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        [3, 0],
        id="normal case with two spreadConstraints",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            spread=[
                sc(1, "zone", SA, FOO),
                sc(1, "zone", DNS, FOO),
                sc(1, "node", SA, FOO),
                sc(1, "node", DNS, FOO),
            ],
        ),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        foo_pods(node_a=2, node_b=1, node_y=4),
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        [3, 1],
        id="soft spreadConstraints should be bypassed",
    ),
    pytest.param(
        pod(
            labels={"foo": "", "bar": ""}, spread=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]
        ),
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        [
            pod("p-a", node="node-a", labels={"foo": ""}),
            pod("p-b", node="node-b", labels={"bar": ""}),
        ],
        [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
        [0, 0],
        id="different labelSelectors - simple version",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            affinity=node_affinity("node", "NotIn", "node-x"),
            spread=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)],
        ),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=4),
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        [3, 1],
        id="two spreadConstraints, and with podAffinity",
    ),
    pytest.param(
        pod(labels={"foo": ""}, node_selector={"foo": ""}, spread=[sc(1, "node", DNS, BAR)]),
        [
            n("node-a", node="node-a", foo=""),
            n("node-b", node="node-b", foo=""),
            n("node-c", node="node-c", bar=""),
        ],
        [
            pod("p-a", node="node-a", labels={"bar": ""}),
            pod("p-b", node="node-b", labels={"bar": ""}),
            pod("p-c", node="node-b", labels={"bar": ""}),
            pod("p-d", node="node-c"),
        ],
        [{"node-a": 1, "node-b": 2}],
        [1],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "node", DNS, BAR, affinity_policy="Ignore")],
        ),
        [
            n("node-a", node="node-a", foo=""),
            n("node-b", node="node-b", foo=""),
            n("node-c", node="node-c", bar=""),
        ],
        [
            pod("p-a", node="node-a", labels={"bar": ""}),
            pod("p-b", node="node-b", labels={"bar": ""}),
            pod("p-c", node="node-b", labels={"bar": ""}),
            pod("p-d", node="node-c"),
        ],
        [{"node-a": 1, "node-b": 2, "node-c": 0}],
        [0],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "node", DNS, BAR, taints_policy="Honor")]),
        [
            n("node-a", node="node-a", foo=""),
            n("node-b", node="node-b", foo=""),
            n("node-c", taints=[NO_SCHEDULE_TAINT], node="node-c", bar=""),
        ],
        [
            pod("p-a", node="node-a", labels={"bar": ""}),
            pod("p-b", node="node-b", labels={"bar": ""}),
            pod("p-c", node="node-b", labels={"bar": ""}),
            pod("p-d", node="node-c", labels={"bar": ""}),
        ],
        [{"node-a": 1, "node-b": 2}],
        [1],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "node", DNS, BAR)]),
        [
            n("node-a", node="node-a", foo=""),
            n("node-b", node="node-b", foo=""),
            n("node-c", taints=[NO_SCHEDULE_TAINT], node="node-c", bar=""),
        ],
        [
            pod("p-a", node="node-a", labels={"bar": ""}),
            pod("p-b", node="node-b", labels={"bar": ""}),
            pod("p-c", node="node-b", labels={"bar": ""}),
            pod("p-d", node="node-c", labels={"bar": ""}),
        ],
        [{"node-a": 1, "node-b": 2, "node-c": 1}],
        [1],
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        pod(
            labels={"foo": "", "bar": "a"},
            spread=[sc(1, "zone", DNS, FOO, match_label_keys=["bar"])],
        ),
        FOUR_NODES,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}),
            pod("p-a2", node="node-a", labels={"foo": "", "bar": "a"}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": "", "bar": "a"}),
            pod("p-y2", node="node-y", labels={"bar": ""}),
        ],
        [{"zone1": 1, "zone2": 1}],
        [1],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    pytest.param(
        pod(labels={"foo": "a"}, spread=[sc(1, "zone", DNS, {}, match_label_keys=["foo"])]),
        FOUR_NODES,
        [
            pod("p-a1", node="node-a", labels={"foo": "a"}),
            pod("p-a2", node="node-a", labels={"foo": "a"}),
            pod("p-b1", node="node-b", labels={"foo": "a"}),
            pod("p-y1", node="node-y", labels={"foo": "a"}),
            pod("p-y2", node="node-y", labels={"foo": "a"}),
            pod("p-y3", node="node-y", labels={"foo": "b"}),
        ],
        [{"zone1": 3, "zone2": 2}],
        [2],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, None, match_label_keys=["bar"])]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=2),
        [{"zone1": 0, "zone2": 0}],
        [0],
        id="key in matchLabelKeys is ignored when LabelSelector is nil",
    ),
    pytest.param(
        pod(
            labels={"foo": "", "bar": ""}, spread=[sc(1, "zone", DNS, FOO), sc(1, "zone", DNS, BAR)]
        ),
        FOUR_NODES,
        [
            pod("p-a1", node="node-a", labels={"foo": "", "bar": ""}),
            pod("p-b1", node="node-b", labels={"foo": ""}),
            pod("p-x1", node="node-x", labels={"bar": ""}),
            pod("p-y1", node="node-y", labels={"foo": "", "bar": ""}),
            pod("p-y2", node="node-y", labels={"bar": ""}),
        ],
        [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
        [1, 1],
        id="two spreadConstraints with the same topologyKey",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "counts", "mins"), PRE_FILTER_CASES)
def test_pre_filter_state(
    incoming: Pod,
    nodes: list[Node],
    pods: list[Pod],
    counts: list[dict[str, int]],
    mins: list[int],
) -> None:
    pl, snapshot = plugin(nodes, pods)
    state = CycleState()
    result, status = pl.pre_filter(state, incoming, snapshot.list())
    assert (result, status) == (None, None)
    s = state.read(PRE_FILTER_KEY)
    assert s.counts == counts
    assert [p.n0 for p in s.paths] == mins


@pytest.mark.parametrize(
    ("incoming", "args", "objects"),
    [
        pytest.param(pod(labels={"foo": ""}), LIST_ARGS, [], id="skip if not specified"),
        pytest.param(
            pod(labels={"foo": "bar"}),
            {**LIST_ARGS, "defaultConstraints": [sc(3, "node", DNS, None)]},
            [service({"baz": "kep"})],
            id="default constraints and a service that doesn't match",
        ),
        pytest.param(
            pod(labels={"foo": "bar"}),
            {**LIST_ARGS, "defaultConstraints": [sc(2, "node", SA, None)]},
            [service({"foo": "bar"})],
            id="default soft constraints and a service",
        ),
        pytest.param(
            pod(labels={"foo": "bar"}),
            {},
            [service({"foo": "bar"})],
            id="system defaults are all soft",
        ),
        pytest.param(
            pod(labels={"foo": ""}, spread=[sc(1, "zone", SA, FOO)]),
            LIST_ARGS,
            [],
            id="only soft constraints",
        ),
    ],
)
def test_pre_filter_skip(
    incoming: Pod, args: Mapping[str, Any], objects: list[Mapping[str, Any]]
) -> None:
    pl, snapshot = plugin([zn("node-a", "zone1")], args=args, objects=objects)
    state = CycleState()
    assert pl.pre_filter(state, incoming, snapshot.list()) == (None, Status(Code.SKIP))
    assert PRE_FILTER_KEY not in state


def test_pre_filter_default_constraints_and_a_service() -> None:
    args = {
        **LIST_ARGS,
        "defaultConstraints": [
            sc(3, "node", DNS, None),
            sc(2, "node", SA, None),
            sc(5, "rack", DNS, None),
        ],
    }
    pl, snapshot = plugin([], args=args, objects=[service({"foo": "bar"})])
    state = CycleState()
    incoming = pod(labels={"foo": "bar", "baz": "kar"})
    assert pl.pre_filter(state, incoming, snapshot.list()) == (None, None)
    s = state.read(PRE_FILTER_KEY)
    assert [(c.max_skew, c.topology_key) for c in s.constraints] == [(3, "node"), (5, "rack")]
    for c in s.constraints:
        assert c.selector.match_labels == {"foo": "bar"}
        assert not c.selector.match_expressions
    assert s.counts == [{}, {}]


def test_pre_filter_pod_constraints_win_over_defaults() -> None:
    args = {**LIST_ARGS, "defaultConstraints": [sc(2, "node", DNS, None)]}
    pl, snapshot = plugin([], args=args, objects=[service({"foo": "bar"})])
    state = CycleState()
    incoming = pod(
        labels={"foo": "bar", "baz": "tar"},
        spread=[
            sc(1, "zone", DNS, {"matchLabels": {"baz": "tar"}}),
            sc(2, "planet", SA, {"matchLabels": {"fot": "rok"}}),
        ],
    )
    assert pl.pre_filter(state, incoming, snapshot.list()) == (None, None)
    (c,) = state.read(PRE_FILTER_KEY).constraints
    assert (c.max_skew, c.topology_key, c.selector.match_labels) == (1, "zone", {"baz": "tar"})


def test_pre_filter_bad_selector_is_an_error() -> None:
    bad = {"matchExpressions": [{"key": "foo", "operator": "Bogus"}]}
    pl, snapshot = plugin([zn("node-a", "zone1")])
    _, status = pl.pre_filter(CycleState(), pod(spread=[sc(1, "zone", DNS, bad)]), snapshot.list())
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith(
        "get constraints from pod: obtaining pod's hard topology spread constraints: "
    )


# --- Filter ------------------------------------------------------------------------------


def run_filter(pl: PodTopologySpread, snapshot: Snapshot, incoming: Pod) -> dict[str, int]:
    state = CycleState()
    _, status = pl.pre_filter(state, incoming, snapshot.list())
    assert status is None, status
    codes = {}
    for ni in snapshot:
        st = pl.filter(state, incoming, ni)
        codes[ni.name] = Code.SUCCESS if st is None else st.code
        if st is not None:
            want = (
                ERR_REASON_CONSTRAINTS_NOT_MATCH
                if st.code == U
                else ERR_REASON_NODE_LABEL_NOT_MATCH
            )
            assert st.reasons == (want,)
    return codes


SINGLE_CONSTRAINT_CASES = [
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
        FOUR_NODES,
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="no existing pods",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, BAR)]),
        FOUR_NODES,
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
        FOUR_NODES,
        [
            pod("p-a1", node="node-a", labels={"foo": ""}, ns="ns1"),
            pod("p-b1", node="node-a", labels={"foo": ""}, ns="ns2"),
            pod("p-x1", node="node-x", labels={"foo": ""}),
            pod("p-y1", node="node-y", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, None)]),
        FOUR_NODES,
        foo_pods(node_x=1, node_y=1),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="existing pods do not match null selector",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=3),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)]),
        [
            zn("node-a", "zone1"),
            n("node-b", zon="zone1", node="node-b"),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        foo_pods(node_a=1, node_b=1, node_x=1, node_y=1),
        {"node-a": S, "node-b": UU, "node-x": U, "node-y": U},
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "rack", DNS, FOO)]),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        {"node-a": UU, "node-x": UU},
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "node", DNS, FOO)]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=3),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(2, "node", DNS, FOO)]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=3),
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        pod(labels={"bar": ""}, spread=[sc(1, "node", DNS, FOO)]),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=3),
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            affinity=node_affinity("node", "In", "node-a", "node-y"),
            spread=[sc(1, "node", DNS, FOO)],
        ),
        FOUR_NODES,
        foo_pods(node_a=2, node_b=1, node_y=3),
        # node-b and node-x are left to NodeAffinity: only the counts exclude them.
        {"node-a": S, "node-b": S, "node-x": S, "node-y": U},
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "node", DNS, FOO)]),
        [n("node-a", node="node-a"), n("node-b", node="node-b")],
        [
            pod("p-a", node="node-a", labels={"foo": ""}, terminating=True),
            pod("p-b", node="node-b", labels={"foo": ""}),
        ],
        {"node-a": S, "node-b": U},
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        pod(
            labels={"foo": ""},
            affinity=node_affinity("node", "NotIn", "node-b"),
            spread=[sc(1, "zone", DNS, FOO)],
        ),
        FOUR_NODES,
        foo_pods(node_b=2, node_y=1),
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
        id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(2, "node", DNS, FOO, min_domains=4)]),
        [n("node-a", node="node-a"), n("node-b", node="node-b"), n("node-c", node="node-c")],
        foo_pods(node_a=2, node_b=2, node_c=1),
        {"node-a": U, "node-b": U, "node-c": S},
        id="number of domains < minDomains, then the third node fits",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(2, "node", DNS, FOO, min_domains=2)]),
        [n("node-a", node="node-a"), n("node-b", node="node-b"), n("node-c", node="node-c")],
        foo_pods(node_a=2, node_b=2, node_c=1),
        {"node-a": S, "node-b": S, "node-c": S},
        id="number of domains > minDomains, then all nodes fit",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "node", DNS, FOO, taints_policy="Honor")]),
        [
            n("node-a", taints=[NO_SCHEDULE_TAINT], node="node-a"),
            n("node-b", node="node-b"),
            n("node-c", node="node-c"),
        ],
        foo_pods(node_b=1, node_c=2),
        # node-a's domain is not counted: the minimum is node-b's 1.
        {"node-a": S, "node-b": S, "node-c": U},
        id="NodeTaintsPolicy honored, tainted node excluded from the minimum",
    ),
    pytest.param(
        pod(labels={"foo": ""}, spread=[sc(1, "node", DNS, FOO)]),
        [
            n("node-a", taints=[NO_SCHEDULE_TAINT], node="node-a"),
            n("node-b", node="node-b"),
            n("node-c", node="node-c"),
        ],
        foo_pods(node_b=1, node_c=2),
        {"node-a": S, "node-b": U, "node-c": U},
        id="NodeTaintsPolicy ignored, tainted node holds the minimum",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "want"), SINGLE_CONSTRAINT_CASES)
def test_filter_single_constraint(
    incoming: Pod, nodes: list[Node], pods: list[Pod], want: dict[str, int]
) -> None:
    pl, snapshot = plugin(nodes, pods)
    assert run_filter(pl, snapshot, incoming) == want


MULTI_NODES = [
    zn("node-a", "zone1"),
    zn("node-b", "zone1"),
    zn("node-x", "zone2"),
    zn("node-y", "zone2"),
]


@pytest.mark.parametrize(
    ("incoming", "pods", "want"),
    [
        pytest.param(
            pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
            foo_pods(node_a=2, node_b=1, node_y=3),
            {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
            id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        ),
        pytest.param(
            pod(labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
            foo_pods(node_a=1, node_y=4),
            {"node-a": U, "node-b": S, "node-x": U, "node-y": U},
            id="two Constraints on zone and node, spreads = [1/4, 1/0/0/4]",
        ),
        pytest.param(
            pod(
                labels={"foo": "", "bar": ""},
                spread=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)],
            ),
            [
                pod("p-a", node="node-a", labels={"foo": ""}),
                pod("p-x", node="node-x", labels={"foo": ""}),
                pod("p-y", node="node-y", labels={"bar": ""}),
            ],
            # zone (foo): 1/1, every node fits; node (bar): 0/0/0/1, node-y fails
            {"node-a": S, "node-b": S, "node-x": S, "node-y": U},
            id="Constraints hold different labelSelectors, spreads = [1/1, 0/0/0/1]",
        ),
        pytest.param(
            pod(
                labels={"foo": "", "bar": ""},
                spread=[sc(1, "zone", DNS, FOO), sc(1, "zone", DNS, BAR)],
            ),
            [
                pod("p-a1", node="node-a", labels={"foo": "", "bar": ""}),
                pod("p-b1", node="node-b", labels={"foo": ""}),
                pod("p-x1", node="node-x", labels={"bar": ""}),
                pod("p-y1", node="node-y", labels={"foo": "", "bar": ""}),
                pod("p-y2", node="node-y", labels={"bar": ""}),
            ],
            # Counted per constraint (foo 2/1, bar 1/3): both zones violate one of them. Summing
            # both selectors per topology pair (3/4) would wrongly admit zone1.
            {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
            id="two Constraints with the same topologyKey are counted apart",
        ),
    ],
)
def test_filter_multiple_constraints(incoming: Pod, pods: list[Pod], want: dict[str, int]) -> None:
    pl, snapshot = plugin(MULTI_NODES, pods)
    assert run_filter(pl, snapshot, incoming) == want


def test_filter_without_pre_filter_state_is_an_error() -> None:
    pl, snapshot = plugin([zn("node-a", "zone1")])
    status = pl.filter(CycleState(), pod(), snapshot.list()[0])
    assert status == Status(Code.ERROR, f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
