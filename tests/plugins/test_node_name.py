"""NodeName (node_name_test.go cases)."""

from __future__ import annotations

import pytest
from conftest import make_node, make_node_info, make_pod

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_name import NodeName

REASON = "node(s) didn't match the requested node name"


@pytest.mark.parametrize(
    ("pod_node", "node", "fits"),
    [("", "foo", True), ("foo", "foo", True), ("bar", "foo", False)],
    ids=["no host specified", "host matches", "host doesn't match"],
)
def test_filter(pod_node: str, node: str, fits: bool) -> None:
    ni = make_node_info(make_node(node))
    status = NodeName().filter(CycleState(), make_pod(node_name=pod_node), ni)
    assert status == (None if fits else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON))


@pytest.mark.parametrize(
    ("pod_node", "new", "want"),
    [
        ("foo", "foo", QueueingHint.QUEUE),
        ("foo", "bar", QueueingHint.QUEUE_SKIP),
        ("", "bar", QueueingHint.QUEUE),
    ],
    ids=["queue-on-matching-node-add", "skip-on-other-node-add", "queue-without-node-name"],
)
def test_hint_after_node_add(pod_node: str, new: str, want: QueueingHint) -> None:
    (registration,) = NodeName().events_to_register()
    assert registration.event == ClusterEvent(NODE, ActionType.ADD)
    assert registration.hint is not None
    assert registration.hint(make_pod(node_name=pod_node), None, make_node(new)) == want
