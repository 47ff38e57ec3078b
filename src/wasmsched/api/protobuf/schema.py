"""Message declarations and the generic encoder that walks a manifest against them.

A message is declared once as its fields (JSON key, field number from k8s.io/api
core/v1/generated.proto, kind, pointer-ness from core/v1/types.go) and compiled to tag bytes
and the bytes an unset non-pointer field gets, as the generated gogo marshallers
(generated.pb.go: MarshalToSizedBuffer) write them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wasmsched.api.protobuf.wire import (
    _I32_MAX,
    _I32_MIN,
    _I64_MAX,
    _I64_MIN,
    _QTY_ZERO,
    _WT_LEN,
    _WT_VARINT,
    _Fail,
    _fail,
    _int_or_string_payload,
    _integer,
    _mapping,
    _micro_time_payload,
    _put_len,
    _put_varint,
    _quantity_payload,
    _seq,
    _short,
    _time_payload,
    _utf8,
    _varint,
)

# Field kinds.
_STR, _I32, _I64, _BOOL = 0, 1, 2, 3
_MSG, _INLINE, _QTY, _TIME, _IOS = 4, 5, 6, 7, 8
_RSTR, _RMSG, _RI32, _RI64 = 9, 10, 11, 12
_MAP_SS, _MAP_QTY = 13, 14
_RAW_JSON = 15  # metav1.FieldsV1 {raw=1}: JSON bytes (decoded only)
_MICRO_TIME = 16  # metav1.MicroTime (encoded only: an Event's eventTime)

_WIRE = {
    _STR: _WT_LEN, _I32: _WT_VARINT, _I64: _WT_VARINT, _BOOL: _WT_VARINT,
    _MSG: _WT_LEN, _INLINE: _WT_LEN, _QTY: _WT_LEN, _TIME: _WT_LEN, _IOS: _WT_LEN,
    _RSTR: _WT_LEN, _RMSG: _WT_LEN, _RI32: _WT_VARINT, _RI64: _WT_VARINT,
    _MAP_SS: _WT_LEN, _MAP_QTY: _WT_LEN, _RAW_JSON: _WT_LEN, _MICRO_TIME: _WT_LEN,
}  # fmt: skip

# Field flags (types.go tags), combined with |:
OPT = 1  # a Go pointer: written only when set
KEEP = 2  # a json tag without omitempty: JSON writes the zero value (null for nil)
OMITZERO = 4  # a json tag with omitzero: JSON leaves a zero Time out
DECODED = 8  # read from the API server, not encoded for guests (decode.py)

# A declared field: (json key, field number, kind, sub-message, flags)
_Decl = tuple[str | None, int, int, "_Message | None", int]
# A compiled field: (json key, tag bytes, kind, sub-message, bytes written when unset)
_Compiled = tuple[str | None, bytes, int, "_Message | None", bytes]


class _Message:
    """One protobuf message: fields sorted by number, plus its all-defaults encoding."""

    __slots__ = ("decls", "empty", "fields", "name")

    def __init__(self, name: str, *decls: _Decl) -> None:
        self.name = name
        numbers = [d[1] for d in decls]
        if len(set(numbers)) != len(numbers):
            raise AssertionError(f"duplicate field number in {name}")
        # Every field, for the decoder; the encoder's fields leave the DECODED ones out.
        self.decls = tuple(sorted(decls, key=lambda d: d[1]))
        fields: list[_Compiled] = []
        for key, number, kind, sub, flags in self.decls:
            if flags & DECODED:
                continue
            pointer = flags & OPT
            tag = _varint((number << 3) | _WIRE[kind])
            fields.append((key, tag, kind, sub, b"" if pointer else _default(kind, tag, sub)))
        self.fields: tuple[_Compiled, ...] = tuple(fields)
        buf = bytearray()
        _encode_message(self, {}, buf)
        self.empty = bytes(buf)


def _default(kind: int, tag: bytes, sub: _Message | None) -> bytes:
    """Bytes gogo writes for an unset non-pointer field of this kind."""
    if kind in (_STR, _I32, _I64, _BOOL, _TIME, _MICRO_TIME):
        return tag + b"\x00"
    if kind in (_MSG, _INLINE):
        assert sub is not None
        return tag + _varint(len(sub.empty)) + sub.empty
    if kind == _QTY:
        return tag + b"\x03\x0a\x010"  # Quantity{string: "0"}
    if kind == _IOS:
        return tag + b"\x06\x08\x00\x10\x00\x1a\x00"
    return b""  # repeated fields and maps: nothing


def s(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _STR, None, flags)


def i32(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _I32, None, flags)


def i64(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _I64, None, flags)


def b(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _BOOL, None, flags)


def m(key: str, number: int, sub: _Message, flags: int = 0) -> _Decl:
    return (key, number, _MSG, sub, flags)


def inline(number: int, sub: _Message) -> _Decl:
    """An embedded Go struct whose JSON fields sit in the parent object."""
    return (None, number, _INLINE, sub, 0)


def q(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _QTY, None, flags)


def t(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _TIME, None, flags)


def mt(key: str, number: int) -> _Decl:
    return (key, number, _MICRO_TIME, None, 0)


def ios(key: str, number: int) -> _Decl:
    return (key, number, _IOS, None, 0)


def rs(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _RSTR, None, flags)


def rm(key: str, number: int, sub: _Message, flags: int = 0) -> _Decl:
    return (key, number, _RMSG, sub, flags)


def raw_json(key: str, number: int) -> _Decl:
    """A pointer to a metav1.FieldsV1, whose JSON is its raw bytes (decoded only)."""
    return (key, number, _RAW_JSON, None, OPT | DECODED)


def ri32(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _RI32, None, flags)


def ri64(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _RI64, None, flags)


def mss(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _MAP_SS, None, flags)


def mq(key: str, number: int, flags: int = 0) -> _Decl:
    return (key, number, _MAP_QTY, None, flags)


def _encode_message(msg: _Message, obj: Mapping[str, Any], out: bytearray) -> None:
    key: str | None = None
    try:
        get = obj.get
        for key, tag, kind, sub, unset in msg.fields:
            if kind == _INLINE:
                assert sub is not None
                buf = bytearray()
                _encode_message(sub, obj, buf)
                _put_len(out, tag, buf)
                continue
            value = get(key)  # type: ignore[arg-type]
            if value is None:
                out += unset
            elif kind == _STR:
                _put_len(out, tag, _utf8(value))
            elif kind == _MSG:
                assert sub is not None
                buf = bytearray()
                _encode_message(sub, _mapping(value), buf)
                _put_len(out, tag, buf)
            elif kind == _RMSG:
                assert sub is not None
                _encode_repeated_messages(sub, tag, _seq(value), out)
            elif kind in (_I32, _I64):
                if kind == _I32:
                    number = _integer(value, _I32_MIN, _I32_MAX, "int32")
                else:
                    number = _integer(value, _I64_MIN, _I64_MAX, "int64")
                out += tag
                _put_varint(out, number)
            elif kind == _BOOL:
                if value is not True and value is not False:
                    _fail("boolean", value)
                out += tag
                out.append(1 if value else 0)
            elif kind in (_MAP_SS, _MAP_QTY):
                _encode_map(tag, _mapping(value), kind == _MAP_QTY, out)
            elif kind == _RSTR:
                for index, item in enumerate(_seq(value)):
                    try:
                        _put_len(out, tag, b"" if item is None else _utf8(item))
                    except _Fail as err:
                        err.parts.append(f"[{index}]")
                        raise
            elif kind == _TIME:
                _put_len(out, tag, _time_payload(value))
            elif kind == _QTY:
                _put_len(out, tag, _quantity_payload(value))
            elif kind == _MICRO_TIME:
                _put_len(out, tag, _micro_time_payload(value))
            elif kind == _IOS:
                _put_len(out, tag, _int_or_string_payload(value))
            else:  # _RI32 / _RI64
                lo, hi, width = (
                    (_I32_MIN, _I32_MAX, "int32")
                    if kind == _RI32
                    else (_I64_MIN, _I64_MAX, "int64")
                )
                for index, item in enumerate(_seq(value)):
                    try:
                        number = _integer(item, lo, hi, width)
                    except _Fail as err:
                        err.parts.append(f"[{index}]")
                        raise
                    out += tag
                    _put_varint(out, number)
    except _Fail as err:
        if key is not None:
            err.parts.append(key)
        raise


def _encode_repeated_messages(
    sub: _Message, tag: bytes, items: Sequence[Any], out: bytearray
) -> None:
    for index, item in enumerate(items):
        try:
            if item is None:  # a null list element decodes to the zero struct in Go
                _put_len(out, tag, sub.empty)
                continue
            buf = bytearray()
            _encode_message(sub, _mapping(item), buf)
            _put_len(out, tag, buf)
        except _Fail as err:
            err.parts.append(f"[{index}]")
            raise


def _encode_map(tag: bytes, value: Mapping[str, Any], quantities: bool, out: bytearray) -> None:
    for key in value:
        if not isinstance(key, str):
            raise _Fail(f"map key must be a string, got {_short(key)}")
    # gogo sorts keys bytewise; code-point order of str is the same as UTF-8 byte order.
    for key in sorted(value):
        item = value[key]
        try:
            if quantities:
                # a null quantity is Quantity{}, whose String() is "0"
                payload = _QTY_ZERO if item is None else _quantity_payload(item)
            else:
                payload = b"" if item is None else _utf8(item)
        except _Fail as err:
            err.parts.append(f"[{key!r}]")
            raise
        key_bytes = _utf8(key)
        entry = bytearray(b"\x0a")
        _put_varint(entry, len(key_bytes))
        entry += key_bytes
        entry.append(0x12)
        _put_varint(entry, len(payload))
        entry += payload
        _put_len(out, tag, entry)
