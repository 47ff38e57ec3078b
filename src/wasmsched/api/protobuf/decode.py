"""Kubernetes protobuf answers decoded to the dicts their JSON form gives.

The API server answers a client that accepts ``application/vnd.kubernetes.protobuf`` with
the ``k8s\\0`` prefix and a ``runtime.Unknown`` envelope (apimachinery
pkg/runtime/serializer/protobuf/protobuf.go: Serializer.Decode), and a protobuf watch with
length-prefixed ``metav1.WatchEvent`` frames (pkg/runtime/serializer/streaming). The
decoder (native/_protodecode.c, built by setup.py) walks the message declarations of this
package, with the types.go json tags they carry (KEEP, OMITZERO, OPT), and builds exactly
the dict msgspec builds from the JSON of the same object: camelCase keys, omitempty
honoured, times in RFC 3339, quantities as their strings, int-or-strings as int or str.

Decoded kinds: Pod, Node, their lists, Status. Field numbers a newer server adds are
skipped; so are the fields not declared here (the removed in-tree volume sources, the
alpha ``schedulingGroup``, ``evictionResponders``, ``volumeHealth``,
``nodeAllocatableResourceClaimStatuses``, ``podCertificate`` projections,
``ListMeta.shardInfo``). A zero ``creationTimestamp`` (in a template's metadata) is left
out as 1.34's omitzero tag has JSON do, or null as before (``omitzero=False``, 1.33).
Without the compiled module ``AVAILABLE`` is false and the client speaks JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from wasmsched.api.protobuf.meta import _LIST_META, _STATUS
from wasmsched.api.protobuf.node import _NODE
from wasmsched.api.protobuf.pod import _POD
from wasmsched.api.protobuf.schema import (
    _BOOL,
    _I32,
    _I64,
    _MAP_QTY,
    _MAP_SS,
    _RAW_JSON,
    _RI32,
    _RI64,
    _RMSG,
    _RSTR,
    _STR,
    _TIME,
    KEEP,
    OMITZERO,
    OPT,
    _Message,
    m,
    rm,
)
from wasmsched.errors import ExternalError

try:
    from wasmsched.api.protobuf import _decode as _native  # type: ignore[attr-defined]
except ImportError:  # not built: the client speaks JSON
    _native = None

__all__ = [
    "AVAILABLE",
    "DECODED_KINDS",
    "PROTOBUF",
    "ProtobufDecodeError",
    "decode",
    "decode_watch_frames",
]

PROTOBUF = "application/vnd.kubernetes.protobuf"
AVAILABLE = _native is not None

# The policies of native/_protodecode.c: what JSON writes for an unset or zero field.
_P_OMIT, _P_NULL, _P_OMITEMPTY, _P_ALWAYS, _P_OMITZERO = range(5)
_REPEATED = frozenset({_RSTR, _RMSG, _RI32, _RI64, _MAP_SS, _MAP_QTY})
_SCALARS = frozenset({_STR, _I32, _I64, _BOOL})


class ProtobufDecodeError(ExternalError):
    """An API server answer that is not a decodable Kubernetes protobuf object."""


def _policy(kind: int, flags: int, omitzero: bool) -> int:
    if kind in _REPEATED or flags & OPT or kind == _RAW_JSON:
        return _P_NULL if flags & KEEP else _P_OMIT
    if kind == _TIME:
        return _P_OMITZERO if flags & OMITZERO and omitzero else _P_ALWAYS
    if kind in _SCALARS:
        return _P_ALWAYS if flags & KEEP else _P_OMITEMPTY
    return _P_ALWAYS  # structs, quantities, int-or-strings: always written


def _tables(
    roots: dict[str, _Message], omitzero: bool
) -> tuple[list[tuple[Any, ...]], dict[str, int]]:
    """The native tables of ``roots`` and every message they hold, and the roots' indexes."""
    index: dict[int, int] = {}
    order: list[_Message] = []

    def visit(msg: _Message) -> int:
        if id(msg) not in index:
            index[id(msg)] = len(order)
            order.append(msg)
            for decl in msg.decls:
                if decl[3] is not None:
                    visit(decl[3])
        return index[id(msg)]

    root_index = {kind: visit(msg) for kind, msg in roots.items()}
    tables = [
        tuple(
            (
                number,
                key,
                kind,
                -1 if sub is None else index[id(sub)],
                _policy(kind, flags, omitzero),
            )
            for key, number, kind, sub, flags in msg.decls
        )
        for msg in order
    ]
    return tables, root_index


def _list(name: str, item: _Message) -> _Message:
    # items has no omitempty, but the API server writes an empty list as [] (decode sets it)
    return _Message(name, m("metadata", 1, _LIST_META), rm("items", 2, item))


_ROOTS = {
    "Pod": _POD,
    "Node": _NODE,
    "PodList": _list("PodList", _POD),
    "NodeList": _list("NodeList", _NODE),
    "Status": _STATUS,
}
DECODED_KINDS = frozenset({"Pod", "Node"})
_TABLES, _INDEX = _tables(_ROOTS, omitzero=True)
# By omitzero: 1.34 on (apimachinery types.go: ObjectMeta.CreationTimestamp) and before.
_SCHEMAS: dict[bool, Any] = {}
if _native is not None:
    _loads = msgspec.json.Decoder().decode
    _SCHEMAS = {
        True: _native.compile(_TABLES, _loads),
        False: _native.compile(_tables(_ROOTS, omitzero=False)[0], _loads),
    }
# A watch frame's size limit (apimachinery streaming.go: NewDecoder, maxBytes).
MAX_FRAME = 16 * 1024 * 1024


def decode(data: bytes, omitzero: bool = True) -> dict[str, Any]:
    """One answer's object (a Pod, Node, their list, a Status) as its JSON dict."""
    assert _native is not None
    try:
        obj: dict[str, Any] = _native.decode_object(_SCHEMAS[omitzero], _INDEX, data)
    except ValueError as err:
        raise ProtobufDecodeError(str(err)) from None
    if obj["kind"].endswith("List"):
        obj.setdefault("items", [])
    return obj


def decode_watch_frames(
    chunks: Iterator[bytes], on_event: Callable[[dict[str, Any]], None], omitzero: bool = True
) -> int:
    """Every event of a protobuf watch stream, each as the dict its JSON gives
    ({"type": ..., "object": ...}), to ``on_event``; the number of events.

    Frames are a 4-byte big-endian length and a WatchEvent
    (apimachinery pkg/runtime/serializer/streaming/streaming.go: decoder.Decode, with
    framer.NewLengthDelimitedFrameReader), read in C as whole frames arrive.
    """
    assert _native is not None
    schema = _SCHEMAS[omitzero]
    buf = bytearray()
    events = 0
    for chunk in chunks:
        buf += chunk
        try:
            decoded, used = _native.watch_frames(schema, _INDEX, buf, MAX_FRAME)
        except ValueError as err:
            raise ProtobufDecodeError(str(err)) from None
        del buf[:used]
        for event in decoded:
            on_event(event)
        events += len(decoded)
    if buf:
        raise ProtobufDecodeError(f"protobuf: watch stream ended inside a frame ({len(buf)} bytes)")
    return events
