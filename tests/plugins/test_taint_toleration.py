"""TaintToleration: Filter reasons, scores and hints (taint_toleration_test.go cases)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_node_info, make_pod, make_snapshot, run_scores

from wasmsched.framework.columns import NodeColumns, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, ActionType, ClusterEvent, QueueingHint
from wasmsched.framework.types import POD as POD_RESOURCE
from wasmsched.plugins.taint_toleration import TaintToleration
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def tol(key: str, value: str = "", effect: str = "", operator: str = "Equal") -> dict[str, str]:
    t = {"key": key, "operator": operator, "effect": effect}
    if value:
        t["value"] = value
    return t


PNS = "PreferNoSchedule"

SCORE_CASES = [
    (
        "node with taints tolerated by the pod gets a higher score than intolerable ones",
        [tol("foo", "bar", PNS)],
        [[taint("foo", "bar", PNS)], [taint("foo", "blah", PNS)]],
        [100, 0],
    ),
    (
        "the number of tolerated taints does not matter",
        [tol("cpu-type", "arm64", PNS), tol("disk-type", "ssd", PNS)],
        [
            [],
            [taint("cpu-type", "arm64", PNS)],
            [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        ],
        [100, 100, 100],
    ),
    (
        "the more intolerable taints a node has, the lower its score",
        [tol("foo", "bar", PNS)],
        [
            [],
            [taint("cpu-type", "arm64", PNS)],
            [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        ],
        [100, 50, 0],
    ),
    (
        "only PreferNoSchedule taints and tolerations are considered",
        [tol("cpu-type", "arm64", "NoSchedule"), tol("disk-type", "ssd", "NoSchedule")],
        [
            [],
            [taint("cpu-type", "arm64", "NoSchedule")],
            [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        ],
        [100, 100, 0],
    ),
    (
        "no taints and no tolerations: lands on the node without taints",
        [],
        [[], [taint("cpu-type", "arm64", PNS)]],
        [100, 0],
    ),
    (
        "a toleration without effect counts for PreferNoSchedule",
        [tol("foo", "bar")],
        [[taint("foo", "bar", PNS)], [taint("foo", "baz", PNS)]],
        [100, 0],
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "node_taints", "want"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(tolerations: Any, node_taints: Any, want: list[int]) -> None:
    nodes = [make_node(f"node{i}", taints=t) for i, t in enumerate(node_taints)]
    snapshot = make_snapshot(nodes)
    pod = make_pod(tolerations=tolerations)
    assert [s for _, s in run_scores(TaintToleration(), pod, snapshot)] == want


def test_score_without_pre_score_is_an_error() -> None:
    ni = make_node_info(make_node(taints=[taint("a", "b", PNS)]))
    _, status = TaintToleration().score(CycleState(), make_pod(), ni)
    assert status is not None and status.code == Code.ERROR


FILTER_CASES = [
    (
        "a pod with no tolerations can't be scheduled onto a node with taints",
        [],
        [taint("dedicated", "user1", "NoSchedule")],
        "node(s) had untolerated taint {dedicated: user1}",
    ),
    (
        "a pod tolerating the taint of a dedicated node",
        [tol("dedicated", "user1", "NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        None,
    ),
    (
        "a pod whose toleration value differs",
        [tol("dedicated", "user2", "NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        "node(s) had untolerated taint {dedicated: user1}",
    ),
    (
        "an Exists toleration tolerates any value",
        [tol("foo", effect="NoSchedule", operator="Exists")],
        [taint("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "multiple tolerations, multiple taints, all tolerated",
        [
            tol("dedicated", "user2", "NoSchedule"),
            tol("foo", effect="NoSchedule", operator="Exists"),
        ],
        [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "key and value match but the (non-empty) effect does not",
        [tol("foo", "bar", PNS)],
        [taint("foo", "bar", "NoSchedule")],
        "node(s) had untolerated taint {foo: bar}",
    ),
    (
        "an empty toleration effect tolerates NoSchedule",
        [tol("foo", "bar")],
        [taint("foo", "bar", "NoSchedule")],
        None,
    ),
    (
        "PreferNoSchedule taints never filter",
        [tol("dedicated", "user2", "NoSchedule")],
        [taint("dedicated", "user1", PNS)],
        None,
    ),
    ("no toleration, PreferNoSchedule taint", [], [taint("dedicated", "user1", PNS)], None),
    (
        "NoExecute taints filter too; the first untolerated one is reported",
        [tol("a", "1", "NoSchedule")],
        [taint("a", "1", "NoSchedule"), taint("b", "", "NoExecute"), taint("c", "3", "NoSchedule")],
        "node(s) had untolerated taint {b: }",
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "reason"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter(tolerations: Any, taints: Any, reason: str | None) -> None:
    ni = make_node_info(make_node("nodeA", taints=taints))
    status = TaintToleration().filter(CycleState(), make_pod(tolerations=tolerations), ni)
    if reason is None:
        assert status is None
    else:
        assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


TARGET = make_pod("pod1", uid="uid0", tolerations=[tol("dedicated", "user2", "NoSchedule")])


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (
            None,
            make_node("nodeA", taints=[taint("dedicated", "user1", "NoSchedule")]),
            QueueingHint.QUEUE_SKIP,
        ),
        (
            None,
            make_node("nodeA", taints=[taint("dedicated", "user2", "NoSchedule")]),
            QueueingHint.QUEUE,
        ),
        (
            make_node("nodeA", taints=[taint("dedicated", "user1", "NoSchedule")]),
            make_node(
                "nodeA",
                taints=[
                    taint("dedicated", "user1", "NoSchedule"),
                    taint("dedicated", "user3", "NoSchedule"),
                ],
            ),
            QueueingHint.QUEUE_SKIP,
        ),
        (
            make_node("nodeA", taints=[taint("dedicated", "user1", "NoSchedule")]),
            make_node("nodeA", taints=[taint("dedicated", "user2", "NoSchedule")]),
            QueueingHint.QUEUE,
        ),
        (make_node("nodeA"), make_node("nodeA", labels={"a": "b"}), QueueingHint.QUEUE_SKIP),
    ],
    ids=[
        "skip-queue-on-untoleratedtaint-node-added",
        "queue-on-toleratedtaint-node-added",
        "skip-unrelated-change",
        "queue-on-taint-change",
        "skip-already-tolerated",
    ],
)
def test_hint_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert _hint(NODE)(TARGET, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (
            make_pod("pod2", uid="uid1"),
            make_pod("pod2", uid="uid1", tolerations=[tol("a", "b")]),
            QueueingHint.QUEUE_SKIP,
        ),
        (
            make_pod("pod1", uid="uid0"),
            make_pod("pod1", uid="uid0", tolerations=[tol("a", "b")]),
            QueueingHint.QUEUE,
        ),
    ],
    ids=["skip-updates-other-pod", "queue-on-update-target-pod"],
)
def test_hint_after_pod_toleration_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert _hint(POD_RESOURCE)(TARGET, old, new) == want


def _hint(resource: str) -> Any:
    for e in TaintToleration().events_to_register():
        if e.event.resource == resource:
            return e.hint
    raise AssertionError(resource)


def test_events_to_register() -> None:
    assert [e.event for e in TaintToleration().events_to_register()] == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(POD_RESOURCE, ActionType.UPDATE_POD_TOLERATION),
    ]


@pytest.mark.parametrize(
    ("tolerations", "taints", "reason"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter_message_since_1_34(tolerations: Any, taints: Any, reason: str | None) -> None:
    # taint_toleration.go (v1.37.2) Filter: one reason for every untolerated taint.
    features = SchedulerFeatures.of(KubernetesVersion(1, 37))
    plugin = TaintToleration(FakeHandle(features=features))
    ni = make_node_info(make_node("nodeA", taints=taints))
    pod = make_pod(tolerations=tolerations)
    status = plugin.filter(CycleState(), pod, ni)
    if reason is None:
        assert status is None
    else:
        want = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)")
        assert status == want
        columns = NodeColumns([ni])
        codes, statuses = plugin.filter_columns(
            CycleState(), pod, NodeRows(columns, columns.all_rows)
        )
        assert statuses[int(codes[0]) - 1] == want
