"""InterPodAffinity Filter codes and reasons, AddPod/RemovePod (interpodaffinity/filtering.go).

Cases follow filtering_test.go (TestRequiredAffinitySingleNode,
TestRequiredAffinityMultipleNodes, TestPreFilterStateAddRemovePod) of kube-scheduler v1.33.
"""

from __future__ import annotations

import pytest
from affinity_support import (
    AFFINITY_REJECTED,
    ANTI_REJECTED,
    EXISTING_REJECTED,
    FOO_BAR,
    FOO_IN_BAR,
    M1,
    M2,
    M3,
    affinity,
    expr,
    node,
    plugin,
    pod,
    run_filter,
    term,
)

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import PodInfo
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.inter_pod_affinity import (
    PRE_FILTER_KEY,
)

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
