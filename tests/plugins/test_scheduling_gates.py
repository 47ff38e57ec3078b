"""SchedulingGates (scheduling_gates_test.go cases)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_pod

from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import POD, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.scheduling_gates import SchedulingGates


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        ((), None),
        (
            ("foo",),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo]"),
        ),
        (
            ("foo", "bar"),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo bar]"),
        ),
    ],
    ids=["pod does not carry scheduling gates", "one gate", "pod carries scheduling gates"],
)
def test_pre_enqueue(gates: tuple[str, ...], want: Status | None) -> None:
    assert SchedulingGates().pre_enqueue(make_pod(scheduling_gates=gates)) == want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        (make_pod("p", uid="u"), QueueingHint.QUEUE),
        (make_pod("o", uid="o"), QueueingHint.QUEUE_SKIP),
    ],
    ids=["queue-on-own-gates-eliminated", "skip-other-pod"],
)
def test_hint(new: Any, want: QueueingHint) -> None:
    (registration,) = SchedulingGates().events_to_register()
    assert registration.event == ClusterEvent(
        POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    )
    assert registration.hint is not None
    old = make_pod("p", uid="u", scheduling_gates=["g"])
    assert registration.hint(make_pod("p", uid="u", scheduling_gates=["g"]), old, new) == want
