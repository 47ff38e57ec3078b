"""The protobuf wire writer: varints, length-delimited fields and scalar payloads.

Writes what k8s.io/api's generated gogo marshallers (core/v1/generated.pb.go:
encodeVarintGenerated, MarshalToSizedBuffer) write for strings, integers, booleans,
``metav1.Time`` (apimachinery pkg/apis/meta/v1/time_proto.go: Time.ProtoTime, whole seconds),
``resource.Quantity`` and ``intstr.IntOrString``, and the errors that name the field path of a
value that cannot be encoded.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from wasmsched.errors import InputError, InternalError


class ProtobufEncodeError(InputError):
    """A manifest value cannot be encoded; ``path`` names the field."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class _Fail(InternalError):
    """Internal error carrying the path, collected innermost-first while unwinding."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.parts: list[str] = []


_MASK64 = (1 << 64) - 1
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_WT_VARINT = 0
_WT_LEN = 2


def _varint(value: int) -> bytes:
    out = bytearray()
    _put_varint(out, value)
    return bytes(out)


def _put_varint(out: bytearray, value: int) -> None:
    # Negative ints are sign-extended to 64 bits, as Go's uint64(int32/int64) does.
    if value < 0:
        value &= _MASK64
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _fail(expected: str, value: Any) -> NoReturn:
    raise _Fail(f"expected {expected}, got {_short(value)}")


def _utf8(value: Any) -> bytes:
    if not isinstance(value, str):
        _fail("string", value)
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Fail(f"string is not valid unicode: {_short(value)}") from None


def _integer(value: Any, lo: int, hi: int, width: str) -> int:
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail("integer", value)
        if isinstance(value, float) and not value.is_integer():
            _fail("integer", value)
        value = int(value)
    if not lo <= value <= hi:
        raise _Fail(f"integer out of {width} range: {value}")
    return int(value)


def _quantity_text(value: Any) -> bytes:
    # Written as given (see module docstring); numbers from unquoted YAML are stringified.
    if isinstance(value, str):
        return _utf8(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail("quantity (string or number)", value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).encode("ascii")


_UTC = _dt.UTC
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_ZERO_TIME = _dt.datetime(1, 1, 1, tzinfo=_UTC)
_SECOND = _dt.timedelta(seconds=1)


def _time_payload(value: Any) -> bytes:
    """Inner bytes of a metav1.Time: empty for the zero time, else seconds and nanos=0."""
    return _timestamp(_moment(value), 0)


def _micro_time_payload(value: Any) -> bytes:
    """Inner bytes of a metav1.MicroTime: empty for the zero time, else seconds and nanos
    cut to microseconds (apimachinery pkg/apis/meta/v1/micro_time_proto.go:
    MicroTime.ProtoMicroTime)."""
    moment = _moment(value)
    return _timestamp(moment, moment.microsecond * 1000)


def _timestamp(moment: _dt.datetime, nanos: int) -> bytes:
    """A Timestamp {seconds=1, nanos=2}, both written (meta/v1 generated.pb.go:
    Timestamp.MarshalToSizedBuffer); empty for the zero time (time_proto.go: Time.Marshal)."""
    if moment == _ZERO_TIME:
        return b""
    out = bytearray(b"\x08")
    _put_varint(out, (moment - _EPOCH) // _SECOND)
    out.append(0x10)
    _put_varint(out, nanos)
    return bytes(out)


def _moment(value: Any) -> _dt.datetime:
    """A timestamp (datetime, date or RFC 3339 text) as an aware datetime, UTC if naive."""
    if isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, _dt.date):
        moment = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = _dt.datetime.fromisoformat(value)
        except ValueError:
            raise _Fail(f"invalid RFC3339 timestamp: {_short(value)}") from None
    else:
        _fail("RFC3339 timestamp", value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_UTC)
    return moment


def _seq(value: Any) -> Sequence[Any]:
    if isinstance(value, (list, tuple)):
        return value
    _fail("list", value)


def _mapping(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    _fail("mapping", value)


def _put_len(out: bytearray, tag: bytes, payload: bytes | bytearray) -> None:
    out += tag
    _put_varint(out, len(payload))
    out += payload


_QTY_ZERO = b"\x0a\x010"


def _quantity_payload(value: Any) -> bytes:
    text = _quantity_text(value)
    out = bytearray(b"\x0a")
    _put_varint(out, len(text))
    out += text
    return bytes(out)


def _int_or_string_payload(value: Any) -> bytes:
    if isinstance(value, str):
        text = _utf8(value)
        out = bytearray(b"\x08\x01\x10\x00\x1a")
        _put_varint(out, len(text))
        out += text
        return bytes(out)
    number = _integer(value, _I32_MIN, _I32_MAX, "int32")
    out = bytearray(b"\x08\x00\x10")
    _put_varint(out, number)
    out += b"\x1a\x00"
    return bytes(out)
