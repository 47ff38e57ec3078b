"""NodeAffinity: PreFilter results, Filter reasons, preferred scores and hints.

Cases follow node_affinity_test.go (TestNodeAffinity, TestNodeAffinityPriority,
Test_isSchedulableAfterNodeChange).
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_node, make_node_info, make_pod, make_snapshot, run_scores

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import PreFilterResult
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_affinity import NodeAffinity

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
ERR_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {REQ: {"nodeSelectorTerms": list(terms)}}}


def name_in(*names: str) -> dict[str, Any]:
    return expr("metadata.name", "In", *names)


SKIP = "skip"
ANY_NODE = None

# (name, pod kwargs, node labels, added affinity, PreFilter result, PreFilter status, Filter reason)
CASES: list[tuple[str, dict[str, Any], dict[str, str], Any, Any, Any, str | None]] = [
    ("no selector", {}, {}, None, None, SKIP, None),
    ("missing labels", {"node_selector": {"foo": "bar"}}, {}, None, None, None, ERR_POD),
    ("same labels", {"node_selector": {"foo": "bar"}}, {"foo": "bar"}, None, None, None, None),
    (
        "node labels are superset",
        {"node_selector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        None,
        None,
        None,
        None,
    ),
    (
        "node labels are subset",
        {"node_selector": {"foo": "bar", "baz": "blah"}},
        {"foo": "bar"},
        None,
        None,
        None,
        ERR_POD,
    ),
    (
        "empty nodeSelector is still a selector (not skipped)",
        {"node_selector": {}},
        {},
        None,
        None,
        None,
        None,
    ),
    (
        "affinity with matchExpressions using In",
        {"affinity": required({"matchExpressions": [expr("foo", "In", "bar", "value2")]})},
        {"foo": "bar"},
        None,
        None,
        None,
        None,
    ),
    (
        "affinity with matchExpressions using Gt",
        {"affinity": required({"matchExpressions": [expr("kernel-version", "Gt", "0204")]})},
        {"kernel-version": "0206"},
        None,
        None,
        None,
        None,
    ),
    (
        "affinity with matchExpressions using NotIn and DoesNotExist",
        {
            "affinity": required(
                {
                    "matchExpressions": [
                        expr("mem-type", "NotIn", "DDR", "DDR2"),
                        expr("GPU", "DoesNotExist"),
                    ]
                }
            )
        },
        {"mem-type": "DDR3"},
        None,
        None,
        None,
        None,
    ),
    (
        "affinity does not match",
        {"affinity": required({"matchExpressions": [expr("foo", "In", "bar", "value2")]})},
        {"foo": "baz"},
        None,
        None,
        None,
        ERR_POD,
    ),
    (
        "an empty nodeSelectorTerms list matches no node",
        {"affinity": required()},
        {"foo": "bar"},
        None,
        None,
        None,
        ERR_POD,
    ),
    (
        "an empty matchExpressions term matches no node",
        {"affinity": required({"matchExpressions": []})},
        {"foo": "bar"},
        None,
        None,
        None,
        ERR_POD,
    ),
    (
        "terms are ORed",
        {
            "affinity": required(
                {"matchExpressions": [expr("foo", "In", "bar")]},
                {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]},
            )
        },
        {"foo": "bar"},
        None,
        None,
        None,
        None,
    ),
    (
        "nodeSelector and affinity are ANDed",
        {
            "node_selector": {"foo": "bar"},
            "affinity": required({"matchExpressions": [expr("foo", "Exists")]}),
        },
        {"foo": "baz"},
        None,
        None,
        None,
        ERR_POD,
    ),
    (
        "matchFields on the node name",
        {"affinity": required({"matchFields": [name_in("node1")]})},
        {},
        None,
        {"node1"},
        None,
        None,
    ),
    (
        "matchFields on another node name",
        {"affinity": required({"matchFields": [name_in("node2")]})},
        {},
        None,
        {"node2"},
        None,
        ERR_POD,
    ),
    (
        "matchFields of two terms are unioned",
        {
            "affinity": required(
                {"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]}
            )
        },
        {},
        None,
        {"node1", "node2"},
        None,
        None,
    ),
    (
        "a term without matchFields allows every node",
        {
            "affinity": required(
                {"matchFields": [name_in("node2")]},
                {"matchExpressions": [expr("foo", "In", "bar")]},
            )
        },
        {"foo": "bar"},
        None,
        ANY_NODE,
        None,
        None,
    ),
    (
        "matchFields and matchExpressions of a term are ANDed",
        {
            "affinity": required(
                {"matchFields": [name_in("node2")], "matchExpressions": [expr("foo", "In", "bar")]}
            )
        },
        {"foo": "bar"},
        None,
        {"node2"},
        None,
        ERR_POD,
    ),
    (
        "conflicting matchFields in a term",
        {"affinity": required({"matchFields": [name_in("node1"), name_in("node2")]})},
        {},
        None,
        None,
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod affinity terms conflict"),
        None,
    ),
    (
        "addedAffinity rejects a node the pod would accept",
        {},
        {"foo": "bar"},
        {REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "foo")]}]}},
        None,
        None,
        ERR_ENFORCED,
    ),
    (
        "addedAffinity and pod affinity both match",
        {"node_selector": {"foo": "bar"}},
        {"foo": "bar", "zone": "foo"},
        {REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "foo")]}]}},
        None,
        None,
        None,
    ),
    (
        "addedAffinity matches but the pod affinity does not",
        {"node_selector": {"foo": "bar"}},
        {"zone": "foo"},
        {REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "foo")]}]}},
        None,
        None,
        ERR_POD,
    ),
]


@pytest.mark.parametrize(
    ("pod_kw", "labels", "added", "want_result", "want_status", "want_reason"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_pre_filter_and_filter(
    pod_kw: dict[str, Any],
    labels: dict[str, str],
    added: Any,
    want_result: Any,
    want_status: Any,
    want_reason: str | None,
) -> None:
    plugin = NodeAffinity({"addedAffinity": added} if added is not None else {})
    ni = make_node_info(make_node("node1", labels=labels))
    pod = make_pod(**pod_kw)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [ni])
    if want_status == SKIP:
        assert status is not None and status.code == Code.SKIP
    else:
        assert status == want_status
    if want_result is None:
        assert result is None
    else:
        assert isinstance(result, PreFilterResult)
        assert result.node_names == frozenset(want_result)
    if status is not None and status.code != Code.SKIP:
        return
    got = plugin.filter(state, pod, ni)
    if want_reason is None:
        assert got is None
    else:
        assert got == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want_reason)


def test_filter_without_pre_filter_state() -> None:
    ni = make_node_info(make_node("node1", labels={"foo": "bar"}))
    plugin = NodeAffinity({})
    assert plugin.filter(CycleState(), make_pod(node_selector={"foo": "bar"}), ni) is None
    got = plugin.filter(CycleState(), make_pod(node_selector={"foo": "baz"}), ni)
    assert got == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_POD)


def pref(weight: int, *exprs: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "preference": {"matchExpressions": list(exprs)}}


AFFINITY1 = {"nodeAffinity": {PREF: [pref(2, expr("foo", "In", "bar"))]}}
AFFINITY2 = {
    "nodeAffinity": {
        PREF: [
            pref(2, expr("foo", "In", "bar")),
            pref(4, expr("key", "In", "value")),
            pref(5, expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")),
        ]
    }
}
LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

SCORE_CASES = [
    ("no node matches preferred scheduling requirements", AFFINITY1, [LABEL4] * 3, None, [0, 0, 0]),
    ("only node1 matches", AFFINITY1, [LABEL1, LABEL2, LABEL3], None, [100, 0, 0]),
    (
        "all nodes match with different priorities",
        AFFINITY2,
        [LABEL1, LABEL5, LABEL2],
        None,
        [18, 100, 36],
    ),
    (
        "added affinity",
        AFFINITY1,
        [LABEL1, LABEL2, LABEL5],
        {PREF: [pref(3, expr("key", "In", "value"))]},
        [40, 60, 100],
    ),
    (
        "added affinity only",
        None,
        [LABEL1, LABEL2],
        {PREF: [pref(3, expr("key", "In", "value"))]},
        [0, 100],
    ),
]


@pytest.mark.parametrize(
    ("affinity", "labels", "added", "want"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(affinity: Any, labels: Any, added: Any, want: list[int]) -> None:
    nodes = [make_node(f"node{i}", labels=lab) for i, lab in enumerate(labels)]
    snapshot = make_snapshot(nodes)
    plugin = NodeAffinity({"addedAffinity": added} if added is not None else {})
    pod = make_pod(affinity=affinity)
    assert [s for _, s in run_scores(plugin, pod, snapshot)] == want


def test_pre_score_skips_without_preferences() -> None:
    status = NodeAffinity({}).pre_score(CycleState(), make_pod(), [])
    assert status is not None and status.code == Code.SKIP


def test_score_without_pre_score_state() -> None:
    ni = make_node_info(make_node("n", labels=LABEL5))
    assert NodeAffinity({}).score(CycleState(), make_pod(affinity=AFFINITY2), ni) == (11, None)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (
            {
                "addedAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("foo", "In")]}]}
                }
            },
            REQ,
        ),
        ({"addedAffinity": {PREF: [{"weight": 0, "preference": {}}]}}, PREF),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_invalid_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match="NodeAffinityArgs") as info:
        NodeAffinity(args)
    assert field in str(info.value)


SELECTOR_POD = make_pod(node_selector={"foo": "bar"})


@pytest.mark.parametrize(
    ("args", "old", "new", "want"),
    [
        ({}, None, make_node("n"), QueueingHint.QUEUE_SKIP),
        ({}, None, make_node("n", labels={"foo": "bar"}), QueueingHint.QUEUE),
        (
            {},
            make_node("n", labels={"foo": "bar"}),
            make_node("n", labels={"foo": "bar", "a": "b"}),
            QueueingHint.QUEUE_SKIP,
        ),
        ({}, make_node("n"), make_node("n", labels={"foo": "bar"}), QueueingHint.QUEUE),
        ({}, make_node("n", labels={"foo": "bar"}), make_node("n"), QueueingHint.QUEUE_SKIP),
        (
            {
                "addedAffinity": {
                    REQ: {"nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "z1")]}]}
                }
            },
            None,
            make_node("n", labels={"foo": "bar"}),
            QueueingHint.QUEUE_SKIP,
        ),
    ],
    ids=[
        "skip-queue-on-add",
        "queue-on-add",
        "skip-unrelated-changes",
        "queue-on-labels-change",
        "skip-labels-removed",
        "skip-added-affinity-mismatch",
    ],
)
def test_hint_after_node_change(args: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeAffinity(args).is_schedulable_after_node_change(SELECTOR_POD, old, new) == want


def test_events_to_register() -> None:
    assert [e.event for e in NodeAffinity({}).events_to_register()] == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
    ]
