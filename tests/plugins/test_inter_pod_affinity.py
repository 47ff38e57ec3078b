"""InterPodAffinity: Filter codes and reasons, AddPod/RemovePod, preferred scores and hints.

Cases follow interpodaffinity's filtering_test.go (TestRequiredAffinitySingleNode,
TestRequiredAffinityMultipleNodes, TestPreFilterStateAddRemovePod) and scoring_test.go
(TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight) of
kube-scheduler v1.33.
"""

from __future__ import annotations

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
from wasmsched.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_KEY,
    InterPodAffinity,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
    pod_affinity_terms,
)

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"

AFFINITY_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI_REJECTED = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING_REJECTED = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(
    key: str,
    *exprs: dict[str, Any],
    namespaces: Sequence[str] = (),
    ns_selector: Mapping[str, Any] | None = None,
    match_label_keys: Sequence[str] = (),
    mismatch_label_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """A PodAffinityTerm with topologyKey ``key`` and a selector of ``exprs``."""
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": key}
    if namespaces:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = dict(ns_selector)
    if match_label_keys:
        t["matchLabelKeys"] = list(match_label_keys)
    if mismatch_label_keys:
        t["mismatchLabelKeys"] = list(mismatch_label_keys)
    return t


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(
    req: Sequence[dict[str, Any]] = (),
    anti: Sequence[dict[str, Any]] = (),
    pref: Sequence[dict[str, Any]] = (),
    pref_anti: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if req or pref:
        out["podAffinity"] = {}
        if req:
            out["podAffinity"][REQ] = list(req)
        if pref:
            out["podAffinity"][PREF] = list(pref)
    if anti or pref_anti:
        out["podAntiAffinity"] = {}
        if anti:
            out["podAntiAffinity"][REQ] = list(anti)
        if pref_anti:
            out["podAntiAffinity"][PREF] = list(pref_anti)
    return out


_counter = iter(range(10**9))


def pod(
    labels: Mapping[str, str] | None = None,
    *,
    node: str = "",
    ns: str = "default",
    aff: Mapping[str, Any] | None = None,
    name: str = "",
) -> Pod:
    meta = {"name": name or f"p{next(_counter)}", "namespace": ns, "labels": dict(labels or {})}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    if aff is not None:
        spec["affinity"] = dict(aff)
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def node(name: str, **labels: str) -> Node:
    return make_node(name, labels=labels)


class ObjectsHandle(FakeHandle):
    def __init__(self, snapshot: Snapshot, objects: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(snapshot)
        self._objects = list(objects)

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return [o for o in self._objects if o.get("kind") == kind]


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"kind": "Namespace", "metadata": {"name": name, "labels": labels}}


NAMESPACES = [
    namespace("subteam1.team1", team="team1"),
    namespace("subteam2.team1", team="team1"),
    namespace("subteam1.team2", team="team2"),
    namespace("subteam2.team2", team="team2"),
]


def plugin(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    args: Mapping[str, Any] | None = None,
    objects: Sequence[Mapping[str, Any]] = NAMESPACES,
) -> tuple[InterPodAffinity, Snapshot]:
    snapshot = make_snapshot(nodes, pods)
    return InterPodAffinity(dict(args or {}), ObjectsHandle(snapshot, objects)), snapshot


def run_filter(pl: InterPodAffinity, snapshot: Snapshot, incoming: Pod) -> dict[str, Status | None]:
    """PreFilter then Filter on every node; a skipped PreFilter lets every node pass."""
    state = CycleState()
    result, status = pl.pre_filter(state, incoming, snapshot.list())
    assert result is None
    if status is not None:
        assert status.code == Code.SKIP, status
        return {ni.name: None for ni in snapshot}
    return {ni.name: pl.filter(state, incoming, ni) for ni in snapshot}


SECURITYSCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")
SVC_IN = expr("service", "In", "securityscan", "value2")

SINGLE_NODE_CASES = [
    pytest.param(
        pod(),
        [],
        None,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        pod(S1, aff=affinity(req=[term("region", SVC_IN)])),
        [pod(SECURITYSCAN, node="node1")],
        None,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
    ),
    pytest.param(
        pod(
            S1,
            aff=affinity(req=[term("region", expr("service", "NotIn", "securityscan3", "value3"))]),
        ),
        [pod(SECURITYSCAN, node="node1")],
        None,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
    ),
    pytest.param(
        pod(SECURITYSCAN, aff=affinity(req=[term("region", SVC_IN, namespaces=["DiffNameSpace"])])),
        [pod(SECURITYSCAN, node="node1", ns="ns")],
        AFFINITY_REJECTED,
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        pod(
            SECURITYSCAN,
            aff=affinity(req=[term("region", expr("service", "In", "antivirusscan", "value2"))]),
        ),
        [pod(SECURITYSCAN, node="node1")],
        AFFINITY_REJECTED,
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        pod(
            SECURITYSCAN,
            aff=affinity(
                req=[
                    term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                    term(
                        "region",
                        expr("service", "In", "securityscan"),
                        expr("service", "NotIn", "WrongValue"),
                    ),
                ]
            ),
        ),
        [pod(SECURITYSCAN, node="node1")],
        None,
        id="satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution",
    ),
    pytest.param(
        pod(
            SECURITYSCAN,
            aff=affinity(
                req=[
                    term("region", expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                    term(
                        "region",
                        expr("service", "In", "securityscan2"),
                        expr("service", "NotIn", "WrongValue"),
                    ),
                ]
            ),
        ),
        [pod(SECURITYSCAN, node="node1")],
        AFFINITY_REJECTED,
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression items doesn't match",
    ),
    pytest.param(
        pod(
            S1,
            aff=affinity(
                req=[term("region", SVC_IN)],
                anti=[term("node", expr("service", "In", "antivirusscan", "value2"))],
            ),
        ),
        [pod(SECURITYSCAN, node="node1")],
        None,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(S1, aff=affinity(anti=[term("zone", expr("service", "In", "securityscan"))])),
        [pod(SECURITYSCAN, node="node1")],
        ANTI_REJECTED,
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(SECURITYSCAN, aff=affinity(req=[term("region", SVC_IN)])),
        [
            pod(
                S1,
                node="node1",
                aff=affinity(anti=[term("zone", expr("service", "In", "securityscan"))]),
            )
        ],
        # The pod matches its own term, but a pod matching it exists nowhere else either:
        # so the first-pod rule lets affinity pass, and the existing pod's anti-affinity rejects.
        EXISTING_REJECTED,
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(SECURITYSCAN),
        [
            pod(
                S1,
                node="node1",
                aff=affinity(anti=[term("zone", expr("service", "In", "securityscan"))]),
            )
        ],
        EXISTING_REJECTED,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints",
    ),
    pytest.param(
        pod(S1),
        [
            pod(
                S1,
                node="node1",
                aff=affinity(anti=[term("zone", expr("service", "In", "securityscan"))]),
            )
        ],
        None,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(SECURITYSCAN, aff=affinity(req=[term("region", SVC_IN)])),
        [pod(S1, node="node1")],
        None,
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels (first pod of a group)",
    ),
    pytest.param(
        pod(S1, ns="subteam1.team1"),
        [
            pod(
                SECURITYSCAN,
                node="node1",
                aff=affinity(
                    anti=[
                        term(
                            "zone",
                            expr("security", "In", "S1"),
                            ns_selector={"matchLabels": {"team": "team1"}},
                        )
                    ]
                ),
            )
        ],
        EXISTING_REJECTED,
        id="existing pod's anti-affinity selects the incoming pod's namespace by namespaceSelector",
    ),
    pytest.param(
        pod(S1, ns="subteam1.team2"),
        [
            pod(
                SECURITYSCAN,
                node="node1",
                aff=affinity(
                    anti=[
                        term(
                            "zone",
                            expr("security", "In", "S1"),
                            ns_selector={"matchLabels": {"team": "team1"}},
                        )
                    ]
                ),
            )
        ],
        None,
        id="existing pod's anti-affinity namespaceSelector doesn't select the incoming pod's namespace",
    ),
    pytest.param(
        pod(
            S1,
            ns="subteam1.team1",
            aff=affinity(
                req=[term("region", SVC_IN, ns_selector={"matchLabels": {"team": "team1"}})]
            ),
        ),
        [pod(SECURITYSCAN, node="node1", ns="subteam2.team1")],
        None,
        id="PodAffinity with namespaceSelector matches a pod in another namespace of the team",
    ),
    pytest.param(
        pod(
            S1,
            ns="subteam1.team1",
            aff=affinity(
                req=[term("region", SVC_IN, ns_selector={"matchLabels": {"team": "team1"}})]
            ),
        ),
        [pod(SECURITYSCAN, node="node1", ns="subteam1.team2")],
        AFFINITY_REJECTED,
        id="PodAffinity with namespaceSelector doesn't match a pod of another team",
    ),
    pytest.param(
        pod(S1, aff=affinity(anti=[term("zone", expr("service", "Exists"), ns_selector={})])),
        [pod(SECURITYSCAN, node="node1", ns="elsewhere")],
        ANTI_REJECTED,
        id="an empty namespaceSelector selects every namespace",
    ),
    pytest.param(
        pod(S1, aff=affinity(anti=[term("zone", expr("service", "Exists"))])),
        [pod(SECURITYSCAN, node="node1", ns="elsewhere")],
        None,
        id="no namespaces and no namespaceSelector means the pod's own namespace",
    ),
    pytest.param(
        pod(
            {"app": "a"},
            aff=affinity(anti=[term("zone", expr("app", "Exists"), match_label_keys=["app"])]),
        ),
        [pod({"app": "b"}, node="node1")],
        None,
        id="matchLabelKeys restricts the anti-affinity to the pod's own app",
    ),
    pytest.param(
        pod(
            {"app": "a"},
            aff=affinity(anti=[term("zone", expr("app", "Exists"), match_label_keys=["app"])]),
        ),
        [pod({"app": "a"}, node="node1")],
        ANTI_REJECTED,
        id="matchLabelKeys anti-affinity against the same app",
    ),
    pytest.param(
        pod(
            {"app": "a"},
            aff=affinity(anti=[term("zone", expr("app", "Exists"), mismatch_label_keys=["app"])]),
        ),
        [pod({"app": "a"}, node="node1")],
        None,
        id="mismatchLabelKeys anti-affinity ignores the same app",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "want"), SINGLE_NODE_CASES)
def test_filter_single_node(incoming: Pod, pods: list[Pod], want: Status | None) -> None:
    pl, snapshot = plugin([NODE1], pods)
    assert run_filter(pl, snapshot, incoming) == {"node1": want}


M1 = node("machine1", region="r1", zone="z11", hostname="machine1")
M2 = node("machine2", region="r1", zone="z12", hostname="machine2")
M3 = node("machine3", region="r2", zone="z21", hostname="machine3")
FOO_BAR = {"foo": "bar"}
FOO_IN_BAR = expr("foo", "In", "bar")


@pytest.mark.parametrize(
    ("incoming", "pods", "nodes", "want"),
    [
        pytest.param(
            pod(aff=affinity(req=[term("region", FOO_IN_BAR)])),
            [pod(FOO_BAR, node="machine1")],
            [M1, M2, M3],
            {"machine1": None, "machine2": None, "machine3": AFFINITY_REJECTED},
            id="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
        ),
        pytest.param(
            pod(aff=affinity(anti=[term("zone", FOO_IN_BAR)])),
            [pod(FOO_BAR, node="machine1")],
            [M1, M2, M3],
            {"machine1": ANTI_REJECTED, "machine2": None, "machine3": None},
            id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        ),
        pytest.param(
            pod(aff=affinity(anti=[term("region", FOO_IN_BAR)])),
            [pod(FOO_BAR, node="machine1")],
            [M1, M2, M3],
            {"machine1": ANTI_REJECTED, "machine2": ANTI_REJECTED, "machine3": None},
            id="anti-affinity on region covers every node of the region",
        ),
        pytest.param(
            pod(FOO_BAR),
            [pod({"x": "y"}, node="machine1", aff=affinity(anti=[term("region", FOO_IN_BAR)]))],
            [M1, M2, M3],
            {"machine1": EXISTING_REJECTED, "machine2": EXISTING_REJECTED, "machine3": None},
            id="existing pod's anti-affinity on region rejects the whole region",
        ),
        pytest.param(
            pod(FOO_BAR, aff=affinity(req=[term("region", FOO_IN_BAR)])),
            [],
            [M1, M2, node("machine3", zone="z21")],
            {"machine1": None, "machine2": None, "machine3": AFFINITY_REJECTED},
            id="the first pod of a group goes to any node that has the topology key",
        ),
        pytest.param(
            pod({"foo": "baz"}, aff=affinity(req=[term("region", FOO_IN_BAR)])),
            [],
            [M1, M2, M3],
            {
                "machine1": AFFINITY_REJECTED,
                "machine2": AFFINITY_REJECTED,
                "machine3": AFFINITY_REJECTED,
            },
            id="no matching pod anywhere and the pod doesn't match its own term",
        ),
        pytest.param(
            pod(FOO_BAR, aff=affinity(req=[term("region", FOO_IN_BAR)])),
            [pod(FOO_BAR, node="machine3")],
            [M1, M2, M3],
            {"machine1": AFFINITY_REJECTED, "machine2": AFFINITY_REJECTED, "machine3": None},
            id="once a matching pod exists the pod must follow it",
        ),
        pytest.param(
            pod(
                aff=affinity(req=[term("region", FOO_IN_BAR), term("zone", expr("app", "Exists"))])
            ),
            [pod(FOO_BAR, node="machine1"), pod({"app": "x"}, node="machine2")],
            [M1, M2, M3],
            {
                "machine1": AFFINITY_REJECTED,
                "machine2": AFFINITY_REJECTED,
                "machine3": AFFINITY_REJECTED,
            },
            id="all terms must be matched by the same pod",
        ),
        pytest.param(
            pod(
                aff=affinity(req=[term("region", FOO_IN_BAR), term("zone", expr("app", "Exists"))])
            ),
            [pod({"foo": "bar", "app": "x"}, node="machine1")],
            [M1, M2, M3],
            {"machine1": None, "machine2": AFFINITY_REJECTED, "machine3": AFFINITY_REJECTED},
            id="a pod matching all terms pins every topology",
        ),
    ],
)
def test_filter_multiple_nodes(
    incoming: Pod, pods: list[Pod], nodes: list[Node], want: dict[str, Status | None]
) -> None:
    pl, snapshot = plugin(nodes, pods)
    assert run_filter(pl, snapshot, incoming) == want


def test_pre_filter_invalid_term_is_unresolvable() -> None:
    bad = affinity(req=[term("region", expr("security", "In", "{{.bad-value.}}"))])
    pl, snapshot = plugin([NODE1])
    _, status = pl.pre_filter(CycleState(), pod(aff=bad), snapshot.list())
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message.startswith("parsing pod: requiredAffinityTerms: ")
    assert "{{.bad-value.}}" in status.message


def test_filter_without_pre_filter_state_is_an_error() -> None:
    pl, snapshot = plugin([NODE1])
    status = pl.filter(CycleState(), pod(), snapshot.list()[0])
    assert status is not None and status.code == Code.ERROR


# --- AddPod / RemovePod ---------------------------------------------------------------


def test_add_remove_pod_updates_existing_anti_affinity() -> None:
    nodes = [M1, M2, M3]
    pl, snapshot = plugin(nodes)
    incoming = pod(FOO_BAR, aff=affinity(anti=[term("zone", expr("app", "Exists"))]))
    state = CycleState()
    # Nothing to check yet: the incoming pod's own anti-affinity keeps PreFilter from skipping.
    assert pl.pre_filter(state, incoming, snapshot.list()) == (None, None)
    m1, m2 = snapshot.get("machine1"), snapshot.get("machine2")
    assert m1 is not None and m2 is not None
    blocker = PodInfo(
        pod({"x": "y"}, node="machine1", aff=affinity(anti=[term("region", FOO_IN_BAR)]))
    )
    copy = state.clone()
    assert pl.add_pod(copy, incoming, blocker, m1) is None
    assert pl.filter(copy, incoming, m2) == EXISTING_REJECTED
    assert pl.filter(state, incoming, m2) is None  # the original state is untouched
    assert pl.remove_pod(copy, incoming, blocker, m1) is None
    assert pl.filter(copy, incoming, m2) is None
    assert copy.read(PRE_FILTER_KEY).existing_anti == {}


def test_add_remove_pod_updates_incoming_affinity_and_anti_affinity() -> None:
    pl, snapshot = plugin([M1, M2, M3], [pod({"app": "db"}, node="machine3")])
    incoming = pod(
        aff=affinity(req=[term("region", expr("app", "In", "db"))], anti=[term("zone", FOO_IN_BAR)])
    )
    state = CycleState()
    pl.pre_filter(state, incoming, snapshot.list())
    m1, m3 = snapshot.get("machine1"), snapshot.get("machine3")
    assert m1 is not None and m3 is not None
    assert pl.filter(state, incoming, m1) == AFFINITY_REJECTED
    assert pl.filter(state, incoming, m3) is None
    db = PodInfo(pod({"app": "db"}, node="machine1"))
    pl.add_pod(state, incoming, db, m1)
    assert pl.filter(state, incoming, m1) is None
    victim = PodInfo(pod(FOO_BAR, node="machine3"))
    pl.add_pod(state, incoming, victim, m3)
    assert pl.filter(state, incoming, m3) == ANTI_REJECTED
    pl.remove_pod(state, incoming, victim, m3)
    pl.remove_pod(state, incoming, db, m1)
    s = state.read(PRE_FILTER_KEY)
    assert s.anti == {}
    assert s.affinity == {"region": {"r2": 1}}


# --- PreScore / Score ---------------------------------------------------------------------


def run_score(
    pl: InterPodAffinity, incoming: Pod, snapshot: Snapshot
) -> tuple[Status | None, list[tuple[str, int]]]:
    state = CycleState()
    status = pl.pre_score(state, incoming, snapshot.list())
    if status is not None:
        return status, []
    scores = []
    for ni in snapshot:
        value, st = pl.score(state, incoming, ni)
        assert st is None
        scores.append(NodeScore(ni.name, value))
    assert pl.normalize_score(state, incoming, scores) is None
    return None, [(s.name, s.score) for s in scores]


CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
SEC_S1 = {"security": "S1"}
SEC_S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = affinity(pref=[weighted(5, term("region", expr("security", "In", "S1")))])
STAY_WITH_S2_IN_REGION = affinity(pref=[weighted(6, term("region", expr("security", "In", "S2")))])
AFFINITY3 = affinity(
    pref=[
        weighted(8, term("region", expr("security", "NotIn", "S1"), expr("security", "In", "S2"))),
        weighted(2, term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist"))),
    ]
)
HARD_AFFINITY = affinity(
    req=[
        term("region", expr("security", "In", "S1", "value2")),
        term("region", expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
    ]
)
AWAY_FROM_S1_IN_AZ = affinity(pref_anti=[weighted(5, term("az", expr("security", "In", "S1")))])
AWAY_FROM_S2_IN_AZ = affinity(pref_anti=[weighted(5, term("az", expr("security", "In", "S2")))])
STAY_S1_AWAY_S2 = affinity(
    pref=[weighted(8, term("region", expr("security", "In", "S1")))],
    pref_anti=[weighted(5, term("az", expr("security", "In", "S2")))],
)
TEAM1 = {"matchExpressions": [expr("team", "In", "team1")]}
AFFINITY_NS_SELECTOR = affinity(
    pref=[
        weighted(
            5,
            term(
                "region",
                expr("security", "In", "S1"),
                namespaces=["subteam2.team2"],
                ns_selector=TEAM1,
            ),
        )
    ]
)
ANTI_AFFINITY_NS_SELECTOR = affinity(
    pref_anti=[
        weighted(
            5,
            term(
                "region",
                expr("security", "In", "S1"),
                namespaces=["subteam2.team2"],
                ns_selector=TEAM1,
            ),
        )
    ]
)


def nodes3(a: Mapping[str, str], b: Mapping[str, str], c: Mapping[str, str]) -> list[Node]:
    return [node("node1", **a), node("node2", **b), node("node3", **c)]


PREFERRED_CASES = [
    pytest.param(
        pod(SEC_S1),
        [],
        nodes3(CHINA, INDIA, AZ1),
        None,
        id="all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        pod(SEC_S1, aff=STAY_WITH_S1_IN_REGION),
        [pod(SEC_S1, node="node1"), pod(SEC_S2, node="node2"), pod(SEC_S1, node="node3")],
        nodes3(CHINA, INDIA, AZ1),
        [100, 0, 0],
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others",
    ),
    pytest.param(
        pod(aff=STAY_WITH_S1_IN_REGION),
        [pod(SEC_S1, node="node1")],
        nodes3(CHINA, CHINA_AZ1, INDIA),
        [100, 100, 0],
        id="All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
    ),
    pytest.param(
        pod(SEC_S1, aff=STAY_WITH_S2_IN_REGION),
        [
            pod(SEC_S2, node="node1"),
            pod(SEC_S2, node="node1"),
            pod(SEC_S2, node="node2"),
            pod(SEC_S2, node="node3"),
            pod(SEC_S2, node="node4"),
            pod(SEC_S2, node="node5"),
        ],
        [
            node("node1", **CHINA),
            node("node2", **INDIA),
            node("node3", **CHINA),
            node("node4", **CHINA),
            node("node5", **INDIA),
        ],
        [100, 0, 100, 100, 0],
        id="Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
    ),
    pytest.param(
        pod(SEC_S1, aff=AFFINITY3),
        [pod(SEC_S1, node="node1"), pod(SEC_S2, node="node2"), pod(SEC_S1, node="node3")],
        nodes3(CHINA, INDIA, AZ1),
        [20, 100, 0],
        id="Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures",
    ),
    pytest.param(
        pod(SEC_S2),
        [
            pod(SEC_S1, node="node1", aff=STAY_WITH_S1_IN_REGION),
            pod(SEC_S2, node="node2", aff=STAY_WITH_S2_IN_REGION),
        ],
        nodes3(CHINA, INDIA, AZ1),
        [0, 100, 0],
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        pod(SEC_S1, ns="subteam1.team1"),
        [
            pod(SEC_S1, node="node1", aff=AFFINITY_NS_SELECTOR),
            pod(SEC_S2, node="node2", aff=STAY_WITH_S2_IN_REGION),
        ],
        nodes3(CHINA, INDIA, AZ1),
        [100, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        pod(SEC_S1, ns="subteam1.team1"),
        [
            pod(SEC_S1, node="node1", aff=ANTI_AFFINITY_NS_SELECTOR),
            pod(SEC_S2, node="node2", aff=STAY_WITH_S2_IN_REGION),
        ],
        nodes3(CHINA, INDIA, AZ1),
        [0, 100, 100],
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        pod(SEC_S1),
        [
            pod(SEC_S1, node="node1", aff=HARD_AFFINITY),
            pod(SEC_S2, node="node2", aff=HARD_AFFINITY),
        ],
        nodes3(CHINA, INDIA, AZ1),
        [100, 100, 0],
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        pod(SEC_S1, aff=AWAY_FROM_S1_IN_AZ),
        [pod(SEC_S1, node="node1"), pod(SEC_S2, node="node2")],
        [node("node1", **AZ1), node("node2", **CHINA)],
        [0, 100],
        id="Anti Affinity: pod that does not match existing pods in node will get high score",
    ),
    pytest.param(
        pod(SEC_S1, aff=AWAY_FROM_S1_IN_AZ),
        [pod(SEC_S1, node="node1"), pod(SEC_S1, node="node2")],
        [node("node1", **AZ1), node("node2", **CHINA)],
        [0, 100],
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others",
    ),
    pytest.param(
        pod(SEC_S1, aff=AWAY_FROM_S1_IN_AZ),
        [pod(SEC_S1, node="node1"), pod(SEC_S1, node="node1"), pod(SEC_S2, node="node2")],
        [node("node1", **AZ1), node("node2", **INDIA)],
        [0, 100],
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
    ),
    pytest.param(
        pod(SEC_S2),
        [
            pod(SEC_S1, node="node1", aff=AWAY_FROM_S2_IN_AZ),
            pod(SEC_S2, node="node2", aff=AWAY_FROM_S1_IN_AZ),
        ],
        [node("node1", **AZ1), node("node2", **AZ2)],
        [0, 100],
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
    ),
    pytest.param(
        pod(SEC_S1, aff=STAY_S1_AWAY_S2),
        [pod(SEC_S1, node="node1"), pod(SEC_S1, node="node2")],
        [node("node1", **CHINA), node("node2", **AZ1)],
        [100, 0],
        id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
    ),
    pytest.param(
        pod(SEC_S1, aff=STAY_S1_AWAY_S2),
        [
            pod(SEC_S1, node="node1"),
            pod(SEC_S1, node="node1"),
            pod(SEC_S1, node="node2"),
            pod(SEC_S1, node="node3"),
            pod(SEC_S1, node="node3"),
            pod(SEC_S1, node="node4"),
            pod(SEC_S1, node="node5"),
        ],
        [
            node("node1", **CHINA_AZ1),
            node("node2", **INDIA),
            node("node3", **CHINA),
            node("node4", **CHINA),
            node("node5", **INDIA),
        ],
        [100, 0, 100, 100, 0],
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
    ),
    pytest.param(
        pod(SEC_S1, aff=STAY_S1_AWAY_S2),
        [
            pod(SEC_S1, node="node1"),
            pod(SEC_S2, node="node2"),
            pod(node="node3", aff=STAY_S1_AWAY_S2),
            pod(node="node4", aff=AWAY_FROM_S1_IN_AZ),
        ],
        [
            node("node1", **CHINA),
            node("node2", **AZ1),
            node("node3", **INDIA),
            node("node4", **AZ2),
        ],
        [100, 0, 100, 0],
        id="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
    ),
    pytest.param(
        pod(SEC_S1),
        [pod(SEC_S1, node="node1"), pod(node="node2", aff=STAY_S1_AWAY_S2)],
        [node("node1", **CHINA), node("node2", **CHINA)],
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        pod(SEC_S1, ns="subteam1.team1", aff=AFFINITY_NS_SELECTOR),
        [
            pod(SEC_S1, node="node1", ns="subteam1.team1"),
            pod(SEC_S1, node="node1", ns="subteam1.team1"),
            pod(SEC_S1, node="node2", ns="subteam2.team2"),
            pod(SEC_S1, node="node3", ns="subteam1.team2"),
        ],
        nodes3(CHINA, INDIA, AZ1),
        [100, 50, 0],
        id="Affinity with pods matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "want"), PREFERRED_CASES)
def test_preferred_affinity(
    incoming: Pod, pods: list[Pod], nodes: list[Node], want: list[int] | None
) -> None:
    pl, snapshot = plugin(nodes, pods)
    status, scores = run_score(pl, incoming, snapshot)
    if want is None:
        assert status == Status(Code.SKIP)
    else:
        assert status is None
        assert [s for _, s in scores] == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param({}, [100, 100, 0], id="hard pod affinity symmetry weights 1 by default"),
        pytest.param({"hardPodAffinityWeight": 0}, None, id="hardPodAffinityWeight 0 ignores it"),
    ],
)
def test_hard_pod_affinity_symmetric_weight(
    args: Mapping[str, Any], want: list[int] | None
) -> None:
    pods = [
        pod(SEC_S1, node="node1", aff=HARD_AFFINITY),
        pod(SEC_S2, node="node2", aff=HARD_AFFINITY),
    ]
    pl, snapshot = plugin(nodes3(CHINA, INDIA, AZ1), pods, args)
    status, scores = run_score(pl, pod({"security": "S1"}), snapshot)
    if want is None:
        assert status == Status(Code.SKIP)
    else:
        assert [s for _, s in scores] == want


@pytest.mark.parametrize(
    ("incoming", "want_skip"),
    [
        pytest.param(pod(SEC_S2), True, id="pod without preferred terms skips"),
        pytest.param(
            pod(SEC_S1, aff=STAY_WITH_S1_IN_REGION), False, id="pod with preferred terms scores"
        ),
    ],
)
def test_ignore_preferred_terms_of_existing_pods(incoming: Pod, want_skip: bool) -> None:
    pods = [pod(SEC_S1, node="node1", aff=STAY_WITH_S2_IN_REGION)]
    pl, snapshot = plugin(
        nodes3(CHINA, INDIA, AZ1), pods, {"ignorePreferredTermsOfExistingPods": True}
    )
    status, _ = run_score(pl, incoming, snapshot)
    assert (status == Status(Code.SKIP)) is want_skip


@pytest.mark.parametrize("kind", ["pref", "pref_anti"])
def test_pre_score_invalid_term_is_an_error(kind: str) -> None:
    bad = [weighted(8, term("region", expr("security", "In", "{{.bad-value.}}")))]
    pl, snapshot = plugin(nodes3(CHINA, CHINA, AZ1))
    status, _ = run_score(pl, pod(aff=affinity(**{kind: bad})), snapshot)
    assert status is not None and status.code == Code.ERROR
    assert "{{.bad-value.}}" in status.message


def test_normalize_negative_scores() -> None:
    # Only anti-affinity: raw scores are 0 and negative; min/max maps them onto 0..100.
    pl, snapshot = plugin(
        [node("node1", **AZ1), node("node2", **AZ2), node("node3", az="az3")],
        [pod(SEC_S1, node="node1"), pod(SEC_S1, node="node1"), pod(SEC_S1, node="node2")],
    )
    status, scores = run_score(pl, pod(aff=AWAY_FROM_S1_IN_AZ), snapshot)
    assert status is None
    assert scores == [("node1", 0), ("node2", 50), ("node3", 100)]


# --- parsing ------------------------------------------------------------------------


def test_terms_parse_once_per_pod_object() -> None:
    p = pod(aff=STAY_WITH_S1_IN_REGION)
    assert pod_affinity_terms(p) is pod_affinity_terms(p)
    (t,) = pod_affinity_terms(p).preferred_affinity
    assert (t.weight, t.topology_key, t.namespaces) == (5, "region", frozenset({"default"}))
    assert pod_affinity_terms(pod()).required_affinity == ()


# --- queueing hints ------------------------------------------------------------------


HINT_POD = pod(
    aff=affinity(req=[term("region", FOO_IN_BAR)], anti=[term("zone", expr("app", "Exists"))])
)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, pod(FOO_BAR, node="n1"), QueueingHint.QUEUE, id="add matching affinity"),
        pytest.param(
            None, pod({"app": "x"}, node="n1"), QueueingHint.QUEUE_SKIP, id="add unrelated"
        ),
        pytest.param(None, pod(FOO_BAR), QueueingHint.QUEUE_SKIP, id="add unscheduled"),
        pytest.param(
            pod({"app": "x"}, node="n1"), None, QueueingHint.QUEUE, id="delete matching anti"
        ),
        pytest.param(pod(FOO_BAR, node="n1"), None, QueueingHint.QUEUE_SKIP, id="delete unrelated"),
        pytest.param(
            pod({"foo": "baz"}, node="n1", name="u"),
            pod(FOO_BAR, node="n1", name="u"),
            QueueingHint.QUEUE,
            id="update starts matching affinity",
        ),
        pytest.param(
            pod({"app": "x"}, node="n1", name="u"),
            pod({}, node="n1", name="u"),
            QueueingHint.QUEUE,
            id="update stops matching anti-affinity",
        ),
        pytest.param(
            pod({"y": "1"}, node="n1", name="u"),
            pod({"y": "2"}, node="n1", name="u"),
            QueueingHint.QUEUE_SKIP,
            id="unrelated update",
        ),
    ],
)
def test_is_schedulable_after_pod_change(
    old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    assert is_schedulable_after_pod_change(HINT_POD, old, new) == want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(node("n", region="r1"), QueueingHint.QUEUE, id="affinity topology key"),
        pytest.param(node("n", zone="z1"), QueueingHint.QUEUE, id="anti-affinity topology key"),
        pytest.param(node("n", other="x"), QueueingHint.QUEUE_SKIP, id="no topology key"),
    ],
)
def test_is_schedulable_after_node_change(new: Node, want: QueueingHint) -> None:
    assert is_schedulable_after_node_change(HINT_POD, None, new) == want


# --- counts kept across cycles -----------------------------------------------------------


def test_counts_kept_across_cycles_follow_cluster_changes() -> None:
    """A plugin reused over cycles (counts kept per node) agrees with a fresh one each time."""
    db = pod({"app": "db"}, node="machine1", name="db")
    repel = pod(
        {"app": "x"}, node="machine2", name="repel", aff=affinity(anti=[term("zone", FOO_IN_BAR)])
    )
    prefers = pod(
        {"app": "y"},
        node="machine3",
        name="prefers",
        aff=affinity(pref=[weighted(4, term("region", FOO_IN_BAR))]),
    )
    snapshot = make_snapshot([M1, M2, M3], [db, repel, prefers])
    handle = ObjectsHandle(snapshot, NAMESPACES)
    kept = InterPodAffinity({}, handle)
    incoming = pod(
        FOO_BAR,
        aff=affinity(
            req=[term("region", expr("app", "In", "db"))],
            anti=[term("hostname", FOO_IN_BAR)],
            pref=[weighted(3, term("zone", expr("app", "Exists")))],
        ),
    )

    def observe(pl: InterPodAffinity) -> tuple[Any, ...]:
        out: list[Any] = []
        for p in (incoming, pod(FOO_BAR)):  # with preferred terms, and without any terms
            state = CycleState()
            _, status = pl.pre_filter(state, p, handle.snapshot().list())
            s = state.get(PRE_FILTER_KEY)
            out.append(status)
            out.append(None if s is None else (s.existing_anti, s.affinity, s.anti))
            state = CycleState()
            out.append(pl.pre_score(state, p, handle.snapshot().list()))
            ps = state.get("PreScoreInterPodAffinity")
            out.append(None if ps is None else ps.topology_score)
        return tuple(out)

    def check() -> None:
        assert observe(kept) == observe(InterPodAffinity({}, handle))

    check()
    m1, m2, m3 = (snapshot.get(name) for name in ("machine1", "machine2", "machine3"))
    assert m1 is not None and m2 is not None and m3 is not None
    m2.add_pod(pod(FOO_BAR, node="machine2", name="twin"))
    m3.add_pod(pod({"app": "db"}, node="machine3", name="db2"))
    snapshot.refresh_affinity_lists()
    check()
    m2.remove_pod(repel)
    m1.remove_pod(db)
    snapshot.refresh_affinity_lists()
    check()
    handle._snapshot = Snapshot([m1, m3])  # machine2 is gone
    check()
    m3.remove_pod(prefers)
    handle._snapshot.refresh_affinity_lists()
    check()
