"""The failure handler's input (scheduler/failure.py): what a failure on the chosen node
becomes, whichever cycle it happened in."""

from __future__ import annotations

import pytest

from wasmsched.framework.interfaces import MODE_OVERRIDE, NominatingInfo
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler.failure import rejection


@pytest.mark.parametrize(
    ("status", "message", "unschedulable", "pending"),
    [
        # a rejection at Reserve, Permit or WaitOnPermit is a one-node FitError...
        (
            Status(Code.UNSCHEDULABLE, "node(s) were full", plugin="Quota"),
            "0/1 nodes are available: 1 node(s) were full.",
            {"Quota"},
            set(),
        ),
        (
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gone", plugin="Gate"),
            "0/1 nodes are available: 1 gone.",
            {"Gate"},
            set(),
        ),
        # ...whose Pending plugin is remembered as pending, not unschedulable
        (
            Status(Code.PENDING, "waiting for a claim", plugin="Claims"),
            "0/1 nodes are available: 1 waiting for a claim.",
            set(),
            {"Claims"},
        ),
        # an error stays what it is, without a diagnosis
        (Status(Code.ERROR, "boom", plugin="Broken"), "boom", None, None),
    ],
)
def test_a_failure_on_the_chosen_node(
    status: Status, message: str, unschedulable: set[str] | None, pending: set[str] | None
) -> None:
    failure = rejection("node-1", status)
    assert (failure.status.code, failure.status.message, failure.status.plugin) == (
        status.code,
        message,
        status.plugin,
    )
    if unschedulable is None:
        assert failure.diagnosis is None
    else:
        assert failure.diagnosis is not None
        assert failure.diagnosis.unschedulable_plugins == unschedulable
        assert failure.diagnosis.pending_plugins == pending
        assert failure.diagnosis.node_to_status.get("node-1") is status
    # it clears the pod's nominated node (schedule_one.go: clearNominatedNode)
    assert failure.nominating == NominatingInfo("", MODE_OVERRIDE)
