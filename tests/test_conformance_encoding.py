"""Conformance: byte formats crossing the boundary (upstream's scheduler/plugin/plugin_test.go).

Upstream tests its decoders directly; here a guest (``result_bytes.wat``) sends the very
bytes of those test vectors through the host imports, so the whole path is checked.
The ``test`` benchmark guest's protobuf walker is checked against a Python walk of the same
bytes, so its "full unmarshal" visits every field.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from wasm_support import (
    FakeHandle,
    Plugins,
    make_node,
    make_pod,
    new_state,
    node_info,
    node_real,
    plugins_fixture,
    pod_real,
    pod_small,
    result_bytes,
)
from wasmsched.api.protobuf import encode_node, encode_pod
from wasmsched.framework.interfaces import MODE_OVERRIDE, NodeToStatus
from wasmsched.framework.status import Code
from wasmsched.framework.types import (
    CSI_NODE,
    NODE,
    PERSISTENT_VOLUME,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def _events(*pairs: tuple[str, int]) -> list[ClusterEventWithHint]:
    return [ClusterEventWithHint(ClusterEvent(r, a)) for r, a in pairs]


DEFAULT = object()


# --- item 4: cluster events ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (bytes([1, 0, 0, 0, 1, 0, 0, 0]), _events((NODE, ActionType.ADD))),
        (
            bytes([1, 0, 0, 0, 0x28, 0, 0, 0]),
            _events((NODE, ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_CONDITION)),
        ),
        (
            bytes([1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]),
            _events((NODE, ActionType.ADD), (PERSISTENT_VOLUME, ActionType.DELETE)),
        ),
        (
            bytes([1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0]),
            _events((NODE, ActionType.ADD)),
        ),
        (bytes([7, 0, 0, 0, 63, 0, 0, 0]), _events((CSI_NODE, ActionType.ALL))),
        (bytes([99, 0, 0, 0, 2, 0, 0, 0]), _events(("EventResource(99)", ActionType.DELETE))),
        (bytes([1, 0, 0, 0, 1, 0, 0]), DEFAULT),
        (b"", DEFAULT),
    ],
    ids=[
        "node-add",
        "label-condition",
        "two",
        "truncated",
        "guest-all",
        "unknown",
        "7-bytes",
        "empty",
    ],
)
def test_cluster_events(plugins: Plugins, payload: bytes, expected: object) -> None:
    events = plugins.load(result_bytes(payload)).events_to_register()
    if expected is DEFAULT:
        assert len(events) == 6 and events[0].event.resource == "Pod"
    else:
        assert events == expected


# --- item 4: NUL-terminated lists (result.node_names) -----------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"", None),
        (b"a\0", {"a"}),
        (b"a\0two\0", {"a", "two"}),
        (b"a\0\0two\0", {"a", "two"}),
        (b"a\0two", {"a"}),
        ("a\0fóo\0c\0".encode(), {"a", "fóo", "c"}),
        (b"\0\0", None),
    ],
)
def test_node_names(plugins: Plugins, payload: bytes, expected: set[str] | None) -> None:
    result, status = plugins.load(result_bytes(payload)).pre_filter(new_state(), pod_small(), [])
    assert status is None
    assert (None if result is None else result.node_names) == expected


# --- strings from the guest ---------------------------------------------------------------


def test_nominated_node_name_utf8(plugins: Plugins) -> None:
    handle = FakeHandle([make_node("nódo-1")])
    plugin = plugins.load(result_bytes("nódo-1".encode()), handle=handle)
    result, status = plugin.post_filter(new_state(), pod_small(), NodeToStatus())
    assert status is None
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == "nódo-1"
    assert result.nominating_info.mode == MODE_OVERRIDE


def test_status_reason_utf8(plugins: Plugins) -> None:
    status, _ = plugins.load(result_bytes("ñö ✓".encode())).permit(new_state(), pod_small(), "n")
    assert status is not None and (status.code, status.message) == (Code.UNSCHEDULABLE, "ñö ✓")


def test_status_reason_out_of_bounds(plugins: Plugins) -> None:
    """A reason pointer beyond guest memory: upstream's fixed reason, no trap."""
    status = plugins.load(result_bytes(b"x")).bind(new_state(), pod_small(), "n")
    assert status is not None
    assert (status.code, status.message) == (Code.ERROR, "BUG: out of memory reading message")


# --- item 5: klog ----------------------------------------------------------------------------


def test_klog_logs_structured(plugins: Plugins) -> None:
    plugin = plugins.load(result_bytes(b"err\0unhandled\0"))
    assert plugin.filter(new_state(), pod_small(), node_info("n")) is None
    assert [r.text for r in plugin.logs] == ['"hello" err="unhandled"']


def test_klog_logs_without_kvs_is_log(plugins: Plugins) -> None:
    plugin = plugins.load(result_bytes(b""))
    assert plugin.filter(new_state(), pod_small(), node_info("n")) is None
    assert [r.text for r in plugin.logs] == ["hello"]


def test_klog_log(plugins: Plugins) -> None:
    plugin = plugins.load(result_bytes(b"hello\n"))
    assert plugin.score(new_state(), pod_small(), node_info("n")) == (0, None)
    assert [r.text for r in plugin.logs] == ["hello"]


# --- protobuf: the test guest walks every field -------------------------------------------------


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(data) or shift >= 64:
            raise ValueError("bad varint")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def walk(data: bytes, depth: int = 0) -> int:
    """Fields in ``data`` counting nested messages, by the same schema-less rule as the
    test guest: a length-delimited field that parses as a message is one. -1: invalid."""
    if depth > 64:
        return -1
    count = i = 0
    try:
        while i < len(data):
            key, i = _varint(data, i)
            field, wire = key >> 3, key & 7
            if field == 0:
                return -1
            count += 1
            if wire == 0:
                _, i = _varint(data, i)
            elif wire == 1:
                i += 8
            elif wire == 5:
                i += 4
            elif wire == 2:
                size, i = _varint(data, i)
                payload = data[i : i + size]
                if len(payload) < size:
                    return -1
                i += size
                nested = walk(payload, depth + 1) if payload else 0
                count += max(nested, 0)
            else:
                return -1
            if i > len(data):
                return -1
    except ValueError:
        return -1
    return count


@pytest.mark.parametrize("real", [False, True], ids=["small", "real"])
def test_test_guest_walks_every_field(plugins: Plugins, real: bool) -> None:
    pod = pod_real() if real else pod_small()
    node = node_real() if real else make_node("good-node")
    plugin = plugins.load("test", args=["test", "count"], handle=FakeHandle([node]))
    state = new_state()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    status = plugin.filter(state, pod, node_info(node))
    pod_fields = walk(encode_pod(pod.manifest))
    node_fields = walk(encode_node(node.manifest))
    assert pod_fields > (300 if real else 20)
    assert status is not None and status.code == Code.SKIP
    assert status.message == f"pod {pod_fields} node {node_fields}"


def test_test_guest_filter_semantics(plugins: Plugins) -> None:
    plugin = plugins.load("test", handle=FakeHandle([make_node("good-node"), make_node("x")]))
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    assert plugin.filter(state, pod_small(), node_info("good-node")) is None
    status = plugin.filter(state, pod_small(), node_info("x"))
    assert status is not None and status.message == "good-node != x"
    assert plugin.score(state, pod_small(), node_info("good-node")) == (100, None)
    state = new_state()
    plugin.pre_filter(state, make_pod(), [])
    assert plugin.filter(state, make_pod(), node_info("x")) is None
