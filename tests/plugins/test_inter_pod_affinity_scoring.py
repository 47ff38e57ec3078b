"""InterPodAffinity preferred scores (interpodaffinity/scoring.go).

Cases follow scoring_test.go (TestPreferredAffinity,
TestPreferredAffinityWithHardPodAffinitySymmetricWeight) of kube-scheduler v1.33.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from affinity_support import (
    STAY_WITH_S1_IN_REGION,
    affinity,
    expr,
    node,
    plugin,
    pod,
    term,
    weighted,
)

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.node_info import Snapshot
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.inter_pod_affinity import (
    InterPodAffinity,
)

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
