"""The live mode's protobuf request bodies (api/protobuf: encode_object): a v1 Binding and an
events.k8s.io/v1 Event, byte for byte as the field numbers of k8s.io/api core/v1 and
events/v1 generated.proto and apimachinery's runtime.Unknown envelope lay them out, and read
back to the same dict by the API server double's own reader (tests/apiserver/protobuf.py).
The real API server takes them: tests/test_live_real_apiserver.py
(test_protobuf_writes_bind_and_record_as_json_does)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.protobuf import read_body
from wasmsched.api.protobuf import ENCODED_KINDS, ProtobufEncodeError, encode_object

BINDING: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "web-0", "namespace": "default", "uid": "u-1"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "node-0"},
}
EVENT: dict[str, Any] = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "web-0.1f", "namespace": "default"},
    "eventTime": "2026-12-05T10:56:27.123456Z",
    "reportingController": "wasmsched",
    "reportingInstance": "wasmsched-host",
    "action": "Binding",
    "reason": "Scheduled",
    "regarding": {"kind": "Pod", "apiVersion": "v1", "name": "web-0", "namespace": "default",
                  "uid": "u-1"},
    "note": "Successfully assigned default/web-0 to node-0",
    "type": "Normal",
}  # fmt: skip


def varint(value: int) -> bytes:
    out = b""
    while value > 0x7F:
        out += bytes([value & 0x7F | 0x80])
        value >>= 7
    return out + bytes([value])


def ld(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field (wire type 2)."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def vi(number: int, value: int) -> bytes:
    """A varint field (wire type 0)."""
    return varint(number << 3) + varint(value)


def object_meta(name: str, namespace: str, uid: str = "") -> bytes:
    # name=1 generateName=2 namespace=3 selfLink=4 uid=5 resourceVersion=6 generation=7
    # creationTimestamp=8 (the zero Time: empty), and the retired clusterName=15 our ObjectMeta
    # table still writes empty (ignored by the server).
    return (
        ld(1, name) + ld(2, "") + ld(3, namespace) + ld(4, "") + ld(5, uid) + ld(6, "")
        + vi(7, 0) + ld(8, b"") + ld(15, "")
    )  # fmt: skip


def object_reference(kind: str, name: str, namespace: str = "", uid: str = "") -> bytes:
    # kind=1 namespace=2 name=3 uid=4 apiVersion=5 resourceVersion=6 fieldPath=7
    return (
        ld(1, kind) + ld(2, namespace) + ld(3, name) + ld(4, uid) + ld(5, "v1") + ld(6, "")
        + ld(7, "")
    )  # fmt: skip


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    # "k8s\0", runtime.Unknown {typeMeta=1 {apiVersion=1, kind=2}, raw=2, contentEncoding=3,
    # contentType=4}
    return b"k8s\x00" + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + ld(3, "") + ld(4, "")


def test_a_binding_is_its_fields_in_the_envelope() -> None:
    raw = ld(1, object_meta("web-0", "default", "u-1")) + ld(2, object_reference("Node", "node-0"))
    assert encode_object(BINDING) == envelope("v1", "Binding", raw)


@pytest.mark.parametrize("related", [False, True])
def test_an_event_is_its_fields_in_the_envelope(related: bool) -> None:
    body = dict(EVENT)
    if related:
        body["related"] = {"kind": "Node", "apiVersion": "v1", "name": "node-0"}
    # 2026-12-05T10:56:27Z is 1796468187 s after the epoch; MicroTime {seconds=1, nanos=2}.
    event_time = vi(1, 1796468187) + vi(2, 123456000)
    raw = (
        ld(1, object_meta("web-0.1f", "default")) + ld(2, event_time)
        + ld(4, "wasmsched") + ld(5, "wasmsched-host") + ld(6, "Binding") + ld(7, "Scheduled")
        + ld(8, object_reference("Pod", "web-0", "default", "u-1"))
        + (ld(9, object_reference("Node", "node-0")) if related else b"")
        + ld(10, "Successfully assigned default/web-0 to node-0") + ld(11, "Normal")
        # deprecatedSource=12 {component=1, host=2}, deprecatedFirstTimestamp=13 and
        # deprecatedLastTimestamp=14 (zero Times), deprecatedCount=15: non-pointers, written.
        + ld(12, ld(1, "") + ld(2, "")) + ld(13, b"") + ld(14, b"") + vi(15, 0)
    )  # fmt: skip
    assert encode_object(body) == envelope("events.k8s.io/v1", "Event", raw)


@pytest.mark.parametrize("body", [BINDING, EVENT], ids=["Binding", "Event"])
def test_the_double_reads_back_the_json_body(body: dict[str, Any]) -> None:
    assert read_body(encode_object(body)) == body


def test_the_encoded_kinds() -> None:
    assert {("v1", "Binding"), ("events.k8s.io/v1", "Event")} == ENCODED_KINDS


def test_a_bad_event_time_names_the_field() -> None:
    with pytest.raises(ProtobufEncodeError, match=r"^eventTime: invalid RFC3339 timestamp"):
        encode_object({**EVENT, "eventTime": "yesterday"})
