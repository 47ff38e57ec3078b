"""NodePorts: host port conflicts (node_ports_test.go cases) and the pod-deleted hint."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_node, make_node_info, make_pod

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, POD, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_ports import NodePorts, ports_conflict

REASON = "node(s) didn't have free ports for the requested pod ports"

CASES = [
    ("same udp port", [("127.0.0.1", "UDP", 8080)], [("127.0.0.1", "UDP", 8080)], False),
    ("same tcp port", [("127.0.0.1", "TCP", 8080)], [("127.0.0.1", "TCP", 8080)], False),
    ("different host ip", [("127.0.0.1", "TCP", 8080)], [("127.0.0.2", "TCP", 8080)], True),
    ("different protocol", [("127.0.0.1", "UDP", 8080)], [("127.0.0.1", "TCP", 8080)], True),
    (
        "second udp port conflict",
        [("127.0.0.1", "UDP", 8000), ("127.0.0.1", "UDP", 8080)],
        [("127.0.0.1", "UDP", 8080)],
        False,
    ),
    (
        "first tcp port conflict",
        [("127.0.0.1", "TCP", 8001), ("127.0.0.1", "UDP", 8080)],
        [("127.0.0.1", "TCP", 8001), ("127.0.0.1", "UDP", 8081)],
        False,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        [("0.0.0.0", "TCP", 8001)],
        [("127.0.0.1", "TCP", 8001)],
        False,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        [("10.0.10.10", "TCP", 8001), ("0.0.0.0", "TCP", 8001)],
        [("127.0.0.1", "TCP", 8001)],
        False,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        [("127.0.0.1", "TCP", 8001)],
        [("0.0.0.0", "TCP", 8001)],
        False,
    ),
    ("second different protocol", [("127.0.0.1", "UDP", 8001)], [("0.0.0.0", "TCP", 8001)], True),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        [("0.0.0.0", "TCP", 8001), ("0.0.0.0", "UDP", 8001)],
        [("127.0.0.1", "TCP", 8001)],
        False,
    ),
    ("nothing used on the node", [("0.0.0.0", "TCP", 80)], [], True),
]


@pytest.mark.parametrize(
    ("wanted", "used", "fits"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_filter(wanted: Any, used: Any, fits: bool) -> None:
    existing = [make_pod("e", node_name="n", host_ports=used)] if used else []
    ni = make_node_info(make_node("n"), existing)
    pod = make_pod("p", host_ports=wanted)
    plugin = NodePorts()
    state = CycleState()
    assert plugin.pre_filter(state, pod, [ni]) == (None, None)
    status = plugin.filter(state, pod, ni)
    assert status == (None if fits else Status(Code.UNSCHEDULABLE, REASON))
    assert ports_conflict(pod.host_ports, [p for e in existing for p in e.host_ports]) is not fits


def test_pod_without_host_ports_is_skipped() -> None:
    _, status = NodePorts().pre_filter(CycleState(), make_pod(), [])
    assert status is not None and status.code == Code.SKIP


def test_filter_without_pre_filter_state_is_an_error() -> None:
    status = NodePorts().filter(CycleState(), make_pod(), make_node_info(make_node()))
    assert status is not None and status.code == Code.ERROR


TARGET = make_pod("target", host_ports=[("0.0.0.0", "TCP", 8080)])


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        (make_pod("d", host_ports=[("0.0.0.0", "TCP", 8080)]), QueueingHint.QUEUE_SKIP),
        (make_pod("d", node_name="n"), QueueingHint.QUEUE_SKIP),
        (
            make_pod("d", node_name="n", host_ports=[("0.0.0.0", "TCP", 8081)]),
            QueueingHint.QUEUE_SKIP,
        ),
        (make_pod("d", node_name="n", host_ports=[("127.0.0.1", "TCP", 8080)]), QueueingHint.QUEUE),
        (
            make_pod("d", nominated_node_name="n", host_ports=[("0.0.0.0", "TCP", 8080)]),
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "skip-queue-on-unscheduled",
        "skip-queue-on-pod-without-ports",
        "skip-queue-on-unrelated-ports",
        "queue-on-released-port",
        "queue-on-nominated-pod-released-port",
    ],
)
def test_hint_after_pod_deleted(deleted: Any, want: QueueingHint) -> None:
    hint = NodePorts().events_to_register()[0].hint
    assert hint is not None
    assert hint(TARGET, deleted, None) == want


def test_events_to_register() -> None:
    events = NodePorts().events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(POD, ActionType.DELETE),
        ClusterEvent(NODE, ActionType.ADD),
    ]
    assert events[1].hint is None
