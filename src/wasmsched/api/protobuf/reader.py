"""The protobuf wire reader: a message's fields, in order, as (number, wire type, value).

Used to decode what cel-expr-python serializes (``cel.expr.CheckedExpr``, see
:mod:`wasmsched.api.cel.checked`); the wire format is protobuf's
(https://protobuf.dev/programming-guides/encoding/).
"""

from __future__ import annotations

import struct

from wasmsched.errors import InternalError

__all__ = ["WIRE_FIXED64", "WIRE_LEN", "WIRE_VARINT", "double", "read_fields", "signed64"]

WIRE_VARINT = 0
WIRE_FIXED64 = 1
WIRE_LEN = 2
_WIRE_FIXED32 = 5


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise InternalError("protobuf: truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def read_fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """The fields of one message: a varint as int, fixed64/fixed32/length-delimited as bytes."""
    fields: list[tuple[int, int, int | bytes]] = []
    pos, end = 0, len(data)
    while pos < end:
        # One-byte varints (field numbers below 16, small values and lengths) are the
        # common case: read them inline.
        key = data[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == WIRE_VARINT:
            value, pos = _varint(data, pos)
        elif wire == WIRE_LEN:
            size = data[pos] if pos < end else 0x80
            if size < 0x80:
                pos += 1
            else:
                size, pos = _varint(data, pos)
            value = data[pos : pos + size]
            pos += size
        elif wire == WIRE_FIXED64:
            value = data[pos : pos + 8]
            pos += 8
        elif wire == _WIRE_FIXED32:
            value = data[pos : pos + 4]
            pos += 4
        else:
            raise InternalError(f"protobuf: unsupported wire type {wire}")
        if pos > end:
            raise InternalError("protobuf: truncated field")
        fields.append((number, wire, value))
    return fields


def signed64(value: int) -> int:
    """A varint as an int64 (two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def double(value: bytes) -> float:
    """A fixed64 field as a double."""
    return float(struct.unpack("<d", value)[0])
