"""The preemption evaluator's pure parts: candidate choice, PDBs, candidate nodes."""

from __future__ import annotations

import math
from typing import Any

import pytest
from conftest import make_node, make_node_info

from wasmsched.api.objects import Pod
from wasmsched.framework.interfaces import NodeToStatus
from wasmsched.framework.node_info import PodInfo
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.preemption import (
    Candidate,
    PodDisruptionBudget,
    filter_pods_with_pdb_violation,
    importance_key,
    nodes_for_status_code,
    pick_one_node_for_preemption,
    pod_start_time,
)

MIN_INT32 = -(2**31)
T0 = "2024-01-01T00:00:00Z"
T1 = "2024-01-01T00:00:01Z"
T2 = "2024-01-01T00:00:02Z"


def pod(
    name: str, priority: int = 0, start: str | None = None, labels: dict[str, str] | None = None
) -> Pod:
    manifest: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": {"priority": priority, "containers": [{"name": "c", "image": "i"}]},
    }
    if start is not None:
        manifest["status"] = {"startTime": start}
    return Pod(manifest)


def cand(name: str, *victims: Pod, violations: int = 0) -> Candidate:
    return Candidate(name, list(victims), violations)


# pickOneNodeForPreemption criteria (TestSelectBestCandidate of default_preemption_test.go).
PICK_CASES = [
    (
        "fewest PDB violations",
        [cand("n1", pod("a", 1), violations=2), cand("n2", pod("b", 100), violations=1)],
        "n2",
    ),
    (
        "node with min highest priority pod is picked",
        [
            cand("n1", pod("a", 100), pod("b", 10)),
            cand("n2", pod("c", 100), pod("d", 100)),
            cand("n3", pod("e", 50), pod("f", 50)),
        ],
        "n3",
    ),
    (
        "when highest priorities are the same, minimum sum of lower priority pods is used",
        [
            cand("n1", pod("a", 100), pod("b", 50)),
            cand("n2", pod("c", 100), pod("d", 10)),
            cand("n3", pod("e", 100), pod("f", 20)),
        ],
        "n2",
    ),
    (
        "sum of adjusted priorities is considered: fewer pods with negative priority win",
        [
            cand("n1", pod("a", -10), pod("b", -10), pod("c", -10)),
            cand("n2", pod("d", -10), pod("e", -10)),
        ],
        "n2",
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is used",
        [
            cand("n1", pod("a", 10), pod("b", MIN_INT32)),
            cand("n2", pod("c", 10)),
        ],
        "n2",
    ),
    (
        "same priority and victims, the latest start of highest-priority victims wins",
        [
            cand("n1", pod("a", 10, T0), pod("b", 5, T2)),
            cand("n2", pod("c", 10, T1), pod("d", 5, T0)),
        ],
        "n2",
    ),
    (
        "start time compares only the highest-priority victims, earliest of them",
        [
            cand("n1", pod("a", 10, T2), pod("b", 10, T0)),
            cand("n2", pod("c", 10, T1), pod("d", 10, T1)),
        ],
        "n2",
    ),
    (
        "a victim that has not started counts as starting now",
        [cand("n1", pod("a", 10, T2)), cand("n2", pod("b", 10))],
        "n2",
    ),
    (
        "complete tie: the first candidate",
        [cand("n1", pod("a", 10, T0)), cand("n2", pod("b", 10, T0))],
        "n1",
    ),
]


@pytest.mark.parametrize(
    ("candidates", "want"), [c[1:] for c in PICK_CASES], ids=[c[0] for c in PICK_CASES]
)
def test_pick_one_node_for_preemption(candidates: list[Candidate], want: str) -> None:
    assert pick_one_node_for_preemption(candidates) == want


def test_pick_one_node_with_no_candidate() -> None:
    assert pick_one_node_for_preemption([]) == ""


def test_importance_orders_by_priority_then_earlier_start() -> None:
    pods = [pod("late", 5, T2), pod("high", 9, T2), pod("early", 5, T0), pod("unstarted", 5)]
    assert [p.name for p in sorted(pods, key=importance_key)] == [
        "high",
        "early",
        "late",
        "unstarted",
    ]
    assert pod_start_time(pod("x")) == math.inf
    assert pod_start_time(pod("x", start="bogus")) == math.inf


def pdb(
    allowed: int,
    selector: Any = None,
    namespace: str = "default",
    disrupted: tuple[str, ...] = (),
) -> PodDisruptionBudget:
    return PodDisruptionBudget.from_manifest(
        {
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb", "namespace": namespace},
            "spec": {"selector": selector},
            "status": {
                "disruptionsAllowed": allowed,
                "disruptedPods": dict.fromkeys(disrupted, T0),
            },
        }
    )


APP = {"matchLabels": {"app": "a"}}
PDB_CASES = [
    ("no pdb", [], ["p1", "p2"], []),
    ("one disruption allowed: the second pod violates", [pdb(1, APP)], ["p1"], ["p2"]),
    ("nothing allowed: both violate", [pdb(0, APP)], [], ["p1", "p2"]),
    ("other namespace does not match", [pdb(0, APP, namespace="other")], ["p1", "p2"], []),
    ("empty selector matches nothing", [pdb(0, {})], ["p1", "p2"], []),
    ("null selector matches nothing", [pdb(0, None)], ["p1", "p2"], []),
    (
        "invalid selector matches nothing",
        [pdb(0, {"matchExpressions": [{"key": "app", "operator": "Bogus"}]})],
        ["p1", "p2"],
        [],
    ),
    (
        "a pod already in disruptedPods is not counted again",
        [pdb(1, APP, disrupted=("p1",))],
        ["p1", "p2"],
        [],
    ),
    (
        "disrupted pod processed, the other still uses up the budget",
        [pdb(0, APP, disrupted=("p1",))],
        ["p1"],
        ["p2"],
    ),
]


@pytest.mark.parametrize(
    ("pdbs", "non_violating", "violating"),
    [c[1:] for c in PDB_CASES],
    ids=[c[0] for c in PDB_CASES],
)
def test_filter_pods_with_pdb_violation(
    pdbs: list[PodDisruptionBudget], non_violating: list[str], violating: list[str]
) -> None:
    infos = [PodInfo(pod("p1", labels={"app": "a"})), PodInfo(pod("p2", labels={"app": "a"}))]
    got_violating, got_ok = filter_pods_with_pdb_violation(infos, pdbs)
    assert [i.pod.name for i in got_violating] == violating
    assert [i.pod.name for i in got_ok] == non_violating


def test_pod_without_labels_never_violates() -> None:
    infos = [PodInfo(pod("p1"))]
    violating, ok = filter_pods_with_pdb_violation(infos, [pdb(0, {"matchLabels": {}})])
    assert not violating and len(ok) == 1


def _nts(absent: Status | None, **explicit: Status) -> NodeToStatus:
    nts = NodeToStatus(absent)
    for name, status in explicit.items():
        nts.set(name, status)
    return nts


U = Status(Code.UNSCHEDULABLE, "Insufficient cpu")
UU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match Pod's node affinity")
NODES_CASES = [
    ("explicit statuses only", _nts(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE), a=U, b=UU), ["a"]),
    ("absent unschedulable: all nodes", _nts(U), ["a", "b", "c"]),
    ("absent unschedulable minus unresolvable ones", _nts(U, b=UU), ["a", "c"]),
    ("every node unresolvable", _nts(UU, a=UU), []),
]


@pytest.mark.parametrize(
    ("nts", "want"), [c[1:] for c in NODES_CASES], ids=[c[0] for c in NODES_CASES]
)
def test_nodes_for_status_code(nts: NodeToStatus, want: list[str]) -> None:
    infos = [make_node_info(make_node(n)) for n in ("a", "b", "c")]
    got = nodes_for_status_code(nts, infos, Code.UNSCHEDULABLE)
    assert [ni.name for ni in got] == want
