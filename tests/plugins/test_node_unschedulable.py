"""NodeUnschedulable (node_unschedulable_test.go cases) and its hints."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_node, make_node_info, make_pod

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, POD, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_unschedulable import NodeUnschedulable

REASON = "node(s) were unschedulable"
KEY = "node.kubernetes.io/unschedulable"

CASES = [
    ("does not schedule pod to an unschedulable node", [], True, False),
    ("schedules pod to a normal node", [], False, True),
    (
        "schedules pod tolerating the unschedulable taint",
        [{"key": KEY, "effect": "NoSchedule"}],
        True,
        True,
    ),
    (
        "an Exists toleration of every key tolerates it",
        [{"operator": "Exists", "effect": "NoSchedule"}],
        True,
        True,
    ),
    (
        "an Exists toleration of every key and effect tolerates it",
        [{"operator": "Exists"}],
        True,
        True,
    ),
    (
        "a NoExecute toleration does not",
        [{"key": KEY, "operator": "Exists", "effect": "NoExecute"}],
        True,
        False,
    ),
    (
        "a toleration with a value does not",
        [{"key": KEY, "value": "x", "effect": "NoSchedule"}],
        True,
        False,
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "unschedulable", "fits"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_filter(tolerations: Any, unschedulable: bool, fits: bool) -> None:
    ni = make_node_info(make_node(unschedulable=unschedulable))
    status = NodeUnschedulable().filter(CycleState(), make_pod(tolerations=tolerations), ni)
    assert status == (None if fits else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON))


def _hints() -> dict[str, Any]:
    return {e.event.resource: e.hint for e in NodeUnschedulable().events_to_register()}


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_node(), QueueingHint.QUEUE),
        (None, make_node(unschedulable=True), QueueingHint.QUEUE_SKIP),
        (make_node(unschedulable=True), make_node(), QueueingHint.QUEUE),
        (make_node(), make_node(labels={"a": "b"}), QueueingHint.QUEUE_SKIP),
        (make_node(), make_node(unschedulable=True), QueueingHint.QUEUE_SKIP),
    ],
    ids=[
        "queue-on-schedulable-node-added",
        "skip-on-unschedulable-node-added",
        "queue-on-node-made-schedulable",
        "skip-on-unrelated-update",
        "skip-on-node-cordoned",
    ],
)
def test_hint_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert _hints()[NODE](make_pod(), old, new) == want


TOLERATING = [{"key": KEY, "operator": "Exists", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (
            make_pod("p", uid="u"),
            make_pod("p", uid="u", tolerations=TOLERATING),
            QueueingHint.QUEUE,
        ),
        (
            make_pod("o", uid="o"),
            make_pod("o", uid="o", tolerations=TOLERATING),
            QueueingHint.QUEUE_SKIP,
        ),
        (
            make_pod("p", uid="u"),
            make_pod("p", uid="u", tolerations=[{"key": "x", "operator": "Exists"}]),
            QueueingHint.QUEUE_SKIP,
        ),
    ],
    ids=["queue-on-target-tolerates", "skip-other-pod", "skip-unrelated-toleration"],
)
def test_hint_after_pod_toleration_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert _hints()[POD](make_pod("p", uid="u"), old, new) == want


def test_events_to_register() -> None:
    assert [e.event for e in NodeUnschedulable().events_to_register()] == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION),
    ]
