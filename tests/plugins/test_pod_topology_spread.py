"""PodTopologySpread: PreFilter counts, Filter codes, AddPod/RemovePod, scores and hints.

Cases follow podtopologyspread's filtering_test.go (TestPreFilterState, TestSingleConstraint,
TestMultipleConstraints, TestPreFilterStateAddPod/RemovePod) and scoring_test.go
(TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore) of kube-scheduler v1.33.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_snapshot

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.node_info import PodInfo, Snapshot
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import QueueingHint
from wasmsched.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    LABEL_HOSTNAME,
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    CriticalPaths,
    PodTopologySpread,
    round_half_away,
)

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HN = LABEL_HOSTNAME
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
NO_SCHEDULE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
S = Code.SUCCESS
LIST_ARGS = {"defaultingType": "List"}


def sc(
    max_skew: int,
    key: str,
    when: str,
    selector: Mapping[str, Any] | None,
    *,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """A TopologySpreadConstraint, argument order as st.MakePod().SpreadConstraint."""
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = dict(selector)
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if match_label_keys:
        c["matchLabelKeys"] = list(match_label_keys)
    return c


def pod(
    name: str = "p",
    *,
    node: str = "",
    labels: Mapping[str, str] | None = None,
    spread: Sequence[Mapping[str, Any]] = (),
    ns: str = "default",
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    owner: Mapping[str, Any] | None = None,
    terminating: bool = False,
    tolerations: Sequence[Mapping[str, Any]] = (),
) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": dict(labels or {})}
    if owner is not None:
        meta["ownerReferences"] = [dict(owner)]
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = [dict(c) for c in spread]
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = dict(affinity)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def n(name: str, taints: Sequence[Mapping[str, str]] = (), **labels: str) -> Node:
    """A node; keyword labels, with ``hostname`` standing for kubernetes.io/hostname."""
    lbl = {(HN if k == "hostname" else k): v for k, v in labels.items()}
    return make_node(name, labels=lbl, taints=taints)


def zn(name: str, zone: str) -> Node:
    """st.MakeNode().Name(name).Label("zone", zone).Label("node", name)."""
    return n(name, zone=zone, node=name)


def node_affinity(key: str, op: str, *values: str) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}
                ]
            }
        }
    }


class ObjectsHandle(FakeHandle):
    """FakeHandle plus the cluster objects (Services, ReplicaSets...) plugins may read."""

    def __init__(self, snapshot: Snapshot, objects: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(snapshot)
        self._objects = list(objects)

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return [o for o in self._objects if o.get("kind") == kind]


def service(selector: Mapping[str, str] | None, ns: str = "default") -> dict[str, Any]:
    spec = {} if selector is None else {"selector": dict(selector)}
    return {"kind": "Service", "metadata": {"name": "svc", "namespace": ns}, "spec": spec}


def plugin(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    args: Mapping[str, Any] = LIST_ARGS,
    objects: Sequence[Mapping[str, Any]] = (),
) -> tuple[PodTopologySpread, Snapshot]:
    snapshot = make_snapshot(nodes, pods)
    return PodTopologySpread(dict(args), ObjectsHandle(snapshot, objects)), snapshot


# 2/1/0/3 on node-a/b/x/y (zones 1 and 2), all with label foo
FOUR_NODES = [
    zn("node-a", "zone1"),
    zn("node-b", "zone1"),
    zn("node-x", "zone2"),
    zn("node-y", "zone2"),
]


def foo_pods(**per_node: int) -> list[Pod]:
    return [
        pod(f"p-{node[-1]}{i}", node=node.replace("_", "-"), labels={"foo": ""})
        for node, count in per_node.items()
        for i in range(1, count + 1)
    ]


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


# --- queueing hints ------------------------------------------------------------------


SPREAD_POD = pod("p", labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)])


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None, pod("a", node="n1", labels={"foo": ""}), QueueingHint.QUEUE, id="add matching"
        ),
        pytest.param(
            None,
            pod("a", node="n1", labels={"bar": ""}),
            QueueingHint.QUEUE_SKIP,
            id="add unmatched",
        ),
        pytest.param(
            None, pod("a", labels={"foo": ""}), QueueingHint.QUEUE_SKIP, id="add unscheduled"
        ),
        pytest.param(
            None,
            pod("a", node="n1", labels={"foo": ""}, ns="ns1"),
            QueueingHint.QUEUE_SKIP,
            id="other namespace",
        ),
        pytest.param(
            pod("a", node="n1", labels={"foo": ""}), None, QueueingHint.QUEUE, id="delete matching"
        ),
        pytest.param(
            pod("a", node="n1", labels={"bar": ""}),
            None,
            QueueingHint.QUEUE_SKIP,
            id="delete unmatched",
        ),
        pytest.param(
            pod("a", node="n1", labels={"bar": ""}),
            pod("a", node="n1", labels={"foo": ""}),
            QueueingHint.QUEUE,
            id="label update starts matching",
        ),
        pytest.param(
            pod("a", node="n1", labels={"foo": "", "x": "1"}),
            pod("a", node="n1", labels={"foo": "", "x": "2"}),
            QueueingHint.QUEUE_SKIP,
            id="unrelated label update",
        ),
    ],
)
def test_is_schedulable_after_pod_change(
    old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    pl, _ = plugin([])
    assert pl.is_schedulable_after_pod_change(SPREAD_POD, old, new) == want


def test_pod_hint_own_toleration_change_with_taints_policy_honor() -> None:
    pl, _ = plugin([])
    target = pod("p", labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO, taints_policy="Honor")])
    tolerating = pod(
        "p",
        labels={"foo": ""},
        spread=[sc(1, "zone", DNS, FOO, taints_policy="Honor")],
        tolerations=[{"key": "k", "operator": "Exists"}],
    )
    assert pl.is_schedulable_after_pod_change(target, target, tolerating) == QueueingHint.QUEUE


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, zn("n1", "zone1"), QueueingHint.QUEUE, id="add node with zone"),
        pytest.param(None, n("n1", node="n1"), QueueingHint.QUEUE_SKIP, id="add node without zone"),
        pytest.param(zn("n1", "zone1"), None, QueueingHint.QUEUE, id="delete node with zone"),
        pytest.param(n("n1"), None, QueueingHint.QUEUE_SKIP, id="delete node without zone"),
        pytest.param(zn("n1", "zone1"), zn("n1", "zone2"), QueueingHint.QUEUE, id="zone changed"),
        pytest.param(n("n1"), zn("n1", "zone1"), QueueingHint.QUEUE, id="zone added"),
        pytest.param(
            zn("n1", "zone1"),
            n("n1", zone="zone1", node="n1", x="y"),
            QueueingHint.QUEUE_SKIP,
            id="unrelated label",
        ),
        pytest.param(
            zn("n1", "zone1"),
            n("n1", taints=[NO_SCHEDULE_TAINT], zone="zone1", node="n1"),
            QueueingHint.QUEUE,
            id="taints changed",
        ),
    ],
)
def test_is_schedulable_after_node_change(
    old: Node | None, new: Node | None, want: QueueingHint
) -> None:
    pl, _ = plugin([])
    assert pl.is_schedulable_after_node_change(SPREAD_POD, old, new) == want
