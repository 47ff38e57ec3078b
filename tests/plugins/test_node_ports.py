"""NodePorts: host port conflicts (node_ports_test.go cases) and the pod-deleted hint."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_node_info, make_pod

from wasmsched.api.objects import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import NodeInfo
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, POD, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_ports import NodePorts, ports_conflict
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

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


# --- v1.34+: sidecars' host ports count ----------------------------------------------------
# util/utils.go (v1.37.2) GetHostPorts: restartable init containers' ports, then the
# containers', hostPort > 0 only; used by NodePorts.PreFilter, the pod-deleted hint and
# NodeInfo.updateUsedPorts. v1.33.4 node_ports.go getContainerPorts and types.go
# updateUsedPorts read spec.containers alone.

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def sidecar_pod(name: str, port: int, node_name: str = "", restart: str = "Always") -> Pod:
    """A pod whose only host port is on an init container (a sidecar with restart Always)."""
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": node_name,
                "initContainers": [
                    {
                        "name": "s",
                        "image": "img",
                        "restartPolicy": restart,
                        "ports": [{"containerPort": port, "hostPort": port}],
                    }
                ],
                "containers": [{"name": "c", "image": "img"}],
            },
        }
    )


@pytest.mark.parametrize(
    ("features", "incoming", "placed", "want"),
    [
        # The incoming pod's sidecar port against a container port on the node.
        (V137, sidecar_pod("p", 80), make_pod("e", host_ports=[("", "TCP", 80)]), REASON),
        (V133, sidecar_pod("p", 80), make_pod("e", host_ports=[("", "TCP", 80)]), "skip"),
        # A container port against a sidecar port of a pod on the node.
        (V137, make_pod("p", host_ports=[("", "TCP", 80)]), sidecar_pod("e", 80), REASON),
        (V133, make_pod("p", host_ports=[("", "TCP", 80)]), sidecar_pod("e", 80), None),
        # A plain init container's port never counts.
        (
            V137,
            make_pod("p", host_ports=[("", "TCP", 80)]),
            sidecar_pod("e", 80, restart="Never"),
            None,
        ),
    ],
    ids=[
        "1.37 sidecar port wanted",
        "1.33 sidecar port wanted",
        "1.37 sidecar port used",
        "1.33 sidecar port used",
        "1.37 plain init container",
    ],
)
def test_sidecar_host_ports_since_1_34(
    features: SchedulerFeatures, incoming: Pod, placed: Pod, want: str | None
) -> None:
    plugin = NodePorts(FakeHandle(features=features))
    node_info = NodeInfo(make_node("n"), features)
    node_info.add_pod(placed)
    state = CycleState()
    _, status = plugin.pre_filter(state, incoming, [node_info])
    if want == "skip":
        assert status is not None and status.code == Code.SKIP
        return
    assert status is None
    got = plugin.filter(state, incoming, node_info)
    assert got == (None if want is None else Status(Code.UNSCHEDULABLE, want))


@pytest.mark.parametrize(
    ("features", "want"), [(V137, QueueingHint.QUEUE), (V133, QueueingHint.QUEUE_SKIP)]
)
def test_hint_counts_a_deleted_sidecars_ports_since_1_34(
    features: SchedulerFeatures, want: QueueingHint
) -> None:
    hint = NodePorts(FakeHandle(features=features)).events_to_register()[0].hint
    assert hint is not None
    wanting = make_pod("p", host_ports=[("0.0.0.0", "TCP", 80)])
    assert hint(wanting, sidecar_pod("d", 80, node_name="n"), None) == want
