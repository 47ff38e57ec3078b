"""The Kubernetes protobuf envelope of a request body.

A protobuf body is the magic ``k8s\\0`` and a ``runtime.Unknown`` {typeMeta=1 {apiVersion=1,
kind=2}, raw=2, contentEncoding=3, contentType=4} whose raw is the object's message
(apimachinery pkg/runtime/serializer/protobuf/protobuf.go: Serializer.doEncode, and
pkg/runtime/types_proto.go: Unknown.NestedMarshalTo, which writes the two empty strings too).
"""

from __future__ import annotations

from wasmsched.api.protobuf.wire import _put_len, _utf8

__all__ = ["MAGIC", "envelope"]

MAGIC = b"k8s\x00"
# contentEncoding=3 and contentType=4, empty: the raw bytes are the object's message.
_PLAIN_RAW = b"\x1a\x00\x22\x00"


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """``raw`` (a ``kind`` message of ``api_version``) as a request body."""
    type_meta = bytearray()
    _put_len(type_meta, b"\x0a", _utf8(api_version))
    _put_len(type_meta, b"\x12", _utf8(kind))
    out = bytearray(MAGIC)
    _put_len(out, b"\x0a", type_meta)
    _put_len(out, b"\x12", raw)
    out += _PLAIN_RAW
    return bytes(out)
