"""The protobuf request bodies the double reads: v1 Binding and events.k8s.io/v1 Event.

A body is ``k8s\\0`` and a runtime.Unknown {typeMeta=1 {apiVersion=1, kind=2}, raw=2}
(apimachinery pkg/runtime/serializer/protobuf/protobuf.go). The raw message is read to the
dict its JSON would be, for what a scheduler writes: field numbers from k8s.io/api
core/v1 and events/v1 generated.proto, written out here on their own (not the encoder's
tables), empty strings, zero numbers and empty messages left out as omitempty leaves them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from wasmsched.api.protobuf.reader import read_fields

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# A message: field number -> (JSON key, "str" | "int" | "time" | "microtime" | message)
_Fields = dict[int, tuple[str, Any]]
_OBJECT_META: _Fields = {
    1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str"),
    5: ("uid", "str"), 6: ("resourceVersion", "str"),
}  # fmt: skip
_OBJECT_REFERENCE: _Fields = {
    1: ("kind", "str"), 2: ("namespace", "str"), 3: ("name", "str"), 4: ("uid", "str"),
    5: ("apiVersion", "str"), 6: ("resourceVersion", "str"), 7: ("fieldPath", "str"),
}  # fmt: skip
_BINDING: _Fields = {1: ("metadata", _OBJECT_META), 2: ("target", _OBJECT_REFERENCE)}
_EVENT: _Fields = {
    1: ("metadata", _OBJECT_META), 2: ("eventTime", "microtime"),
    3: ("series", {1: ("count", "int"), 2: ("lastObservedTime", "microtime")}),
    4: ("reportingController", "str"), 5: ("reportingInstance", "str"), 6: ("action", "str"),
    7: ("reason", "str"), 8: ("regarding", _OBJECT_REFERENCE), 9: ("related", _OBJECT_REFERENCE),
    10: ("note", "str"), 11: ("type", "str"),
    12: ("deprecatedSource", {1: ("component", "str"), 2: ("host", "str")}),
    13: ("deprecatedFirstTimestamp", "time"), 14: ("deprecatedLastTimestamp", "time"),
    15: ("deprecatedCount", "int"),
}  # fmt: skip
_KINDS = {("v1", "Binding"): _BINDING, ("events.k8s.io/v1", "Event"): _EVENT}


class UnsupportedBody(ValueError):
    """Not a body this double reads as protobuf."""


def read_body(data: bytes) -> dict[str, Any]:
    """A protobuf request body as its JSON dict."""
    if not data.startswith(MAGIC):
        raise UnsupportedBody("provided data does not appear to be a protobuf message")
    unknown = {number: value for number, _, value in read_fields(data[len(MAGIC) :])}
    type_meta = {n: v for n, _, v in read_fields(_bytes(unknown.get(1, b"")))}
    api_version = _bytes(type_meta.get(1, b"")).decode()
    kind = _bytes(type_meta.get(2, b"")).decode()
    fields = _KINDS.get((api_version, kind))
    if fields is None:
        raise UnsupportedBody(f"the double reads no protobuf {api_version}/{kind}")
    if unknown.get(3) or unknown.get(4):
        raise UnsupportedBody("raw with a content encoding or type")
    return {
        "apiVersion": api_version,
        "kind": kind,
        **_message(_bytes(unknown.get(2, b"")), fields),
    }


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise UnsupportedBody("a varint where a message was expected")
    return value


def _message(data: bytes, fields: _Fields) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, _, value in read_fields(data):
        if number not in fields:
            continue
        key, kind = fields[number]
        decoded: Any
        if kind == "int":
            decoded = value
        elif kind == "str":
            decoded = _bytes(value).decode()
        elif kind in ("time", "microtime"):
            decoded = _timestamp(_bytes(value), kind == "microtime")
        else:
            decoded = _message(_bytes(value), kind)
        if decoded not in ("", 0, {}, None):
            out[key] = decoded
    return out


def _timestamp(data: bytes, micro: bool) -> str | None:
    parts = {number: value for number, _, value in read_fields(data)}
    if not parts:
        return None  # the zero time
    seconds, nanos = int(parts.get(1, 0)), int(parts.get(2, 0))
    moment = datetime.fromtimestamp(seconds, UTC).replace(microsecond=nanos // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")
