"""Conformance: what guests reach through the framework Handle: events, waiting pods, the
snapshot's nodes and images, logs (upstream's scheduler/plugin/plugin_test.go), with our
reproductions of upstream's handle test guest and the nodenumber, advanced and
imagelocality examples."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from wasm_support import (
    SMALL_UID,
    FakeHandle,
    Plugins,
    make_node,
    make_pod,
    new_state,
    node_info,
    plugins_fixture,
    pod_real,
    pod_small,
)
from wasmsched.framework.interfaces import ObjectReference
from wasmsched.framework.node_info import NodeInfo
from wasmsched.framework.status import Code, Status


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def log_texts(plugin: Any) -> list[str]:
    return [r.text for r in plugin.logs]


# --- item 20: Eventf ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nodenumber", "advanced"])
def test_prescore_event(plugins: Plugins, name: str) -> None:
    handle = FakeHandle([make_node("good-node")])
    plugin = plugins.load(name, handle=handle)
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    assert plugin.pre_score(state, pod_small(), [node_info("good-node")]) is None
    assert handle.event_texts() == ["good-pod PreScore not match lastNumber Skip "]
    (event,) = handle.events
    assert event.regarding == ObjectReference(
        kind="Pod", api_version="v1", name="good-pod", namespace="test", uid=SMALL_UID
    )
    assert event.related is None
    assert event.time == handle.now()


# --- item 21: RejectWaitingPod ----------------------------------------------------------------


def test_reject_waiting_pod_none_waiting(plugins: Plugins) -> None:
    handle = FakeHandle()
    plugin = plugins.load("handle", args=["test", "rejectWaitingPod"], handle=handle)
    assert plugin.filter(new_state(), pod_small(), node_info("good-node")) is None
    assert handle.rejected_uids == [SMALL_UID]


def test_reject_waiting_pod(plugins: Plugins) -> None:
    waiting = make_pod("handle-test-pod", uid="handle-test")
    handle = FakeHandle(waiting=[waiting])
    plugin = plugins.load("handle", args=["test", "rejectWaitingPod"], handle=handle)
    status = plugin.filter(new_state(), waiting, node_info("good-node"))
    assert status == Status(Code.SKIP, "UID is handle-test")
    assert handle.rejected_uids == ["handle-test"]
    assert handle.waiting["handle-test"].rejected


# --- item 22: GetWaitingPod (broken upstream, issue #144) -------------------------------------


def test_get_waiting_pod_none(plugins: Plugins) -> None:
    handle = FakeHandle()
    plugin = plugins.load("handle", args=["test", "getWaitingPod"], handle=handle)
    status = plugin.filter(new_state(), pod_small(), node_info("good-node"))
    assert status == Status(Code.ERROR, f"No waiting pod found for UID: {SMALL_UID}")
    assert handle.get_waiting_uids == [SMALL_UID]


@pytest.mark.parametrize("real", [False, True], ids=["small", "larger-than-guest-buffer"])
def test_get_waiting_pod(plugins: Plugins, real: bool) -> None:
    waiting = pod_real() if real else make_pod("handle-test-pod", uid="handle-test")
    handle = FakeHandle(waiting=[waiting])
    plugin = plugins.load("handle", args=["test", "getWaitingPod"], handle=handle)
    assert plugin.filter(new_state(), waiting, node_info("good-node")) is None
    assert handle.get_waiting_uids[-1] == waiting.uid


# --- item 25: NodeNumber ----------------------------------------------------------------------

HAPPY = make_pod("happy8-meta", namespace="", uid="happy-uid", node_name="happy8")
GLAD = [make_node("glad9"), make_node("glad8")]


def run_nodenumber(plugin: Any, pod: Any) -> dict[str, int]:
    state = new_state()
    assert plugin.pre_filter(state, pod, [])[1] is None
    infos = [NodeInfo(n) for n in GLAD]
    assert plugin.pre_score(state, pod, infos) is None
    scores = {}
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is None
        scores[info.name] = score
    return scores


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("", {"glad9": 0, "glad8": 10}),
        ('{"reverse": false}', {"glad9": 0, "glad8": 10}),
        ('{"reverse": true}', {"glad9": 10, "glad8": 0}),
    ],
)
def test_nodenumber_advanced(plugins: Plugins, config: str, expected: dict[str, int]) -> None:
    """upstream e2e NodeNumber expectations, met by the Advanced variant (spec.nodeName)."""
    handle = FakeHandle(GLAD)
    plugin = plugins.load("advanced", handle=handle, guest_config=config)
    assert run_nodenumber(plugin, HAPPY) == expected
    assert handle.event_texts() == ["happy8-meta PreScore match lastNumber Continue "]
    applied = ["NodeNumberArgs is successfully applied"] if config else []
    assert log_texts(plugin) == [
        *applied,
        '"execute PreScore on NodeNumber plugin" pod="happy8-meta"',
        '"execute Score on NodeNumber plugin" pod="happy8-meta"',
        '"execute Score on NodeNumber plugin" pod="happy8-meta"',
    ]


@pytest.mark.parametrize(
    ("pod", "config", "expected", "event"),
    [
        # the pod's name has no trailing digit: every node matches (upstream observed 10/10)
        (HAPPY, "", {"glad9": 10, "glad8": 10}, "not match lastNumber Skip"),
        (HAPPY, '{"reverse": true}', {"glad9": 0, "glad8": 0}, "not match lastNumber Skip"),
        (make_pod("happy8"), "", {"glad9": 0, "glad8": 10}, "match lastNumber Continue"),
        (
            make_pod("happy9"),
            '{"reverse": true}',
            {"glad9": 0, "glad8": 10},
            "match lastNumber Continue",
        ),
    ],
)
def test_nodenumber_simple(
    plugins: Plugins, pod: Any, config: str, expected: dict[str, int], event: str
) -> None:
    """examples/nodenumber at upstream HEAD: the digit comes from the pod's name."""
    handle = FakeHandle(GLAD)
    plugin = plugins.load("nodenumber", handle=handle, guest_config=config)
    assert run_nodenumber(plugin, pod) == expected
    assert handle.event_texts() == [f"{pod.name} PreScore {event} "]


def test_nodenumber_logs_namespaced_pod(plugins: Plugins) -> None:
    plugin = plugins.load("nodenumber", handle=FakeHandle(GLAD))
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    plugin.pre_score(state, pod_small(), [])
    assert log_texts(plugin) == ['"execute PreScore on NodeNumber plugin" pod="test/good-pod"']


@pytest.mark.parametrize("severity", [1, 3])
def test_nodenumber_log_severity(plugins: Plugins, severity: int) -> None:
    """logSeverity above info silences the guest's Info logs."""
    plugin = plugins.load(
        "nodenumber", handle=FakeHandle(GLAD), guest_config="{}", log_severity=severity
    )
    run_nodenumber(plugin, HAPPY)
    assert log_texts(plugin) == []


def test_nodenumber_enqueue(plugins: Plugins) -> None:
    (event,) = plugins.load("nodenumber").events_to_register()
    assert (event.event.resource, event.event.action) == ("Node", 1)


def test_nodenumber_bad_config(plugins: Plugins) -> None:
    from wasmsched.wasm import WasmError

    with pytest.raises(WasmError) as err:
        plugins.load("nodenumber", guest_config="{not json")
    assert "panic: decode arg into NodeNumberArgs" in err.value.problem


# --- item 26: ImageLocality -----------------------------------------------------------------

MB100 = 100_000_000
IMAGE_NODES = [
    make_node("no-image-node1", [(["other-image:v1"], MB100), (["other-image:v2"], MB100)]),
    *(
        make_node(name, [([f"test-image:v{i}"], MB100) for i in (1, 2, 3)])
        for name in ("image-node1", "image-node2")
    ),
]


@pytest.mark.parametrize(
    ("node", "expected"), [("no-image-node1", 0), ("image-node1", 4), ("image-node2", 4)]
)
def test_imagelocality(plugins: Plugins, node: str, expected: int) -> None:
    handle = FakeHandle(IMAGE_NODES)
    plugin = plugins.load("imagelocality", handle=handle)
    pod = make_pod("image-pod", containers=[{"name": "c", "image": "test-image:v1"}])
    state = new_state()
    plugin.pre_filter(state, pod, [])
    info = handle.snapshot().get(node)
    assert info is not None
    assert plugin.score(state, pod, info) == (expected, None)


def test_imagelocality_untagged_image_is_latest(plugins: Plugins) -> None:
    nodes = [make_node("n1", [(["big:latest"], 600 * 2**20)]), make_node("n2")]
    handle = FakeHandle(nodes)
    plugin = plugins.load("imagelocality", handle=handle)
    pod = make_pod("p", containers=[{"name": "c", "image": "big"}])
    state = new_state()
    plugin.pre_filter(state, pod, [])
    # 600 MiB spread over 1 of 2 nodes = 300 MiB: 100 * (300 - 23) / (1000 - 23) = 28
    assert plugin.score(state, pod, NodeInfo(nodes[0])) == (28, None)


def test_imagelocality_no_nodes(plugins: Plugins) -> None:
    plugin = plugins.load("imagelocality", handle=FakeHandle())
    pod = make_pod("p", containers=[{"name": "c", "image": "test-image:v1"}])
    state = new_state()
    plugin.pre_filter(state, pod, [])
    _, status = plugin.score(state, pod, node_info("gone"))
    assert status == Status(Code.ERROR, "failed to list nodes")


# --- item 5: host functions seen through guests -----------------------------------------------


def test_event_json_from_guest(plugins: Plugins) -> None:
    """eventf with a hand-written EventMessage: references, empty related, literal note."""
    from wasm_support import result_bytes

    message = {
        "RegardingReference": {"Kind": "Node", "APIVersion": "v1", "Name": "n1"},
        "RelatedReference": {},
        "Eventtype": "Normal",
        "Reason": "reason",
        "Action": "action",
        "Note": "note 100%s",
    }
    handle = FakeHandle()
    plugin = plugins.load(result_bytes(json.dumps(message).encode()), handle=handle)
    assert plugin.pre_bind(new_state(), pod_small(), "n1") is None
    assert handle.event_texts() == ["n1 Normal reason action note 100%s"]
    assert handle.events[0].related is None
