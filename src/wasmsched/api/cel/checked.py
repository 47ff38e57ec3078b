"""A checked CEL expression as cel-expr-python serializes it: ``cel.expr.CheckedExpr``.

``Expression.serialize()`` returns a ``google.protobuf.Any`` holding the checker's output
(cel-spec ``proto/cel/expr/checked.proto`` and ``syntax.proto``): the expression tree with
macros expanded, ``reference_map`` (the overload ids each call may dispatch to) and
``type_map`` (each node's deduced type). :mod:`wasmsched.api.cel.cost` walks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from wasmsched.api.protobuf.reader import WIRE_LEN, double, read_fields, signed64
from wasmsched.errors import InternalError

__all__ = ["CelType", "CheckedExpr", "Expr", "decode_checked"]

_CHECKED_EXPR_URL = b"type.googleapis.com/cel.expr.CheckedExpr"


@dataclass(frozen=True, slots=True)
class CelType:
    """A checked type in cel-go's terms: ``kind`` is ``bool``, ``list``, ``struct``, ...

    ``name`` is the message, opaque or type-parameter name; ``params`` the list element,
    the map key and value, or the opaque type's parameters.
    """

    kind: str
    name: str = ""
    params: tuple[CelType, ...] = ()


DYN = CelType("dyn")
STRING = CelType("string")
BOOL = CelType("bool")
QUANTITY = CelType("struct", "kubernetes.Quantity")
SEMVER = CelType("struct", "kubernetes.Semver")

# cel.expr.Type.PrimitiveType
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
# cel.expr.Type.WellKnownType
_WELL_KNOWN = {1: "any", 2: "timestamp", 3: "duration"}


@dataclass(slots=True, eq=False)
class Expr:
    """One node of the tree; which fields are set depends on ``kind``.

    ``const``: ``value``, ``const_kind``. ``ident``: ``name``. ``select``: ``operand``,
    ``name`` (the field), ``test_only``. ``call``: ``name`` (the function), ``target``,
    ``args``. ``list``: ``args`` (the elements). ``map`` and ``struct``: ``entries``.
    ``comprehension``: the ``iter_*``/``accu_*``/``loop_*`` fields and ``result``.
    """

    id: int
    kind: str = ""
    name: str = ""
    value: object = None
    const_kind: str = ""
    test_only: bool = False
    operand: Expr | None = None
    target: Expr | None = None
    args: list[Expr] = field(default_factory=list)
    entries: list[tuple[Expr | None, Expr]] = field(default_factory=list)
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Expr | None = None
    accu_init: Expr | None = None
    loop_condition: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None


@dataclass(frozen=True, slots=True)
class CheckedExpr:
    """The tree, the overload ids by call id, and the types by node id."""

    expr: Expr
    overloads: dict[int, tuple[str, ...]]
    types: dict[int, CelType]


def _text(value: int | bytes) -> str:
    return bytes(value).decode() if isinstance(value, bytes) else ""


def _message(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise InternalError("CheckedExpr: expected a message field")
    return value


@lru_cache(maxsize=1024)
def _decode_type(data: bytes) -> CelType:
    # Cached: the same few types (bool, string, dyn, ...) fill every type map.
    for number, _, value in read_fields(data):
        if number == 1:
            return DYN
        if number == 2:
            return CelType("null")
        if number == 3 and isinstance(value, int):
            return CelType(_PRIMITIVES.get(value, "dyn"))
        if number == 4 and isinstance(value, int):
            return CelType("wrapper", _PRIMITIVES.get(value, ""))
        if number == 5 and isinstance(value, int):
            return CelType(_WELL_KNOWN.get(value, "dyn"))
        if number == 6:
            elem = [_decode_type(_message(v)) for n, _, v in read_fields(_message(value)) if n == 1]
            return CelType("list", params=(elem[0] if elem else DYN,))
        if number == 7:
            return _map_type(_message(value))
        if number == 9:
            return CelType("struct", _text(value))
        if number == 10:
            return CelType("type_param", _text(value))
        if number == 11:
            return CelType("type")
        if number == 12:
            return CelType("error")
        if number == 13:
            name, params = "", []
            for n, _, v in read_fields(_message(value)):
                if n == 1:
                    name = _text(v)
                elif n == 2:
                    params.append(_decode_type(_message(v)))
            return CelType("opaque", name, tuple(params))
    return DYN


def _map_type(data: bytes) -> CelType:
    key, val = DYN, DYN
    for number, _, value in read_fields(data):
        if number == 1:
            key = _decode_type(_message(value))
        elif number == 2:
            val = _decode_type(_message(value))
    # The encodings of kube's quantity and semver values (library.py) are these map types.
    if key == STRING and val == DYN:
        return QUANTITY
    if key == CelType("int") and val == STRING:
        return SEMVER
    return CelType("map", params=(key, val))


def _decode_constant(node: Expr, data: bytes) -> None:
    for number, wire, value in read_fields(data):
        if number == 1:
            node.const_kind, node.value = "null", None
        elif number == 2:
            node.const_kind, node.value = "bool", bool(value)
        elif number == 3 and isinstance(value, int):
            node.const_kind, node.value = "int", signed64(value)
        elif number == 4:
            node.const_kind, node.value = "uint", value
        elif number == 5 and isinstance(value, bytes):
            node.const_kind, node.value = "double", double(value)
        elif number == 6:
            node.const_kind, node.value = "string", _text(value)
        elif number == 7 and wire == WIRE_LEN:
            node.const_kind, node.value = "bytes", bytes(_message(value))
        elif number == 8:
            node.const_kind = "duration"
        elif number == 9:
            node.const_kind = "timestamp"


def _decode_expr(data: bytes) -> Expr:
    node = Expr(0)
    for number, _, value in read_fields(data):
        if number == 2 and isinstance(value, int):
            node.id = signed64(value)
        elif number == 3:
            node.kind = "const"
            _decode_constant(node, _message(value))
        elif number == 4:
            node.kind = "ident"
            node.name = next((_text(v) for n, _, v in read_fields(_message(value)) if n == 1), "")
        elif number == 5:
            node.kind = "select"
            for n, _, v in read_fields(_message(value)):
                if n == 1:
                    node.operand = _decode_expr(_message(v))
                elif n == 2:
                    node.name = _text(v)
                elif n == 3:
                    node.test_only = bool(v)
        elif number == 6:
            node.kind = "call"
            for n, _, v in read_fields(_message(value)):
                if n == 1:
                    node.target = _decode_expr(_message(v))
                elif n == 2:
                    node.name = _text(v)
                elif n == 3:
                    node.args.append(_decode_expr(_message(v)))
        elif number == 7:
            node.kind = "list"
            node.args = [
                _decode_expr(_message(v)) for n, _, v in read_fields(_message(value)) if n == 1
            ]
        elif number == 8:
            _decode_struct(node, _message(value))
        elif number == 9:
            _decode_comprehension(node, _message(value))
    return node


def _decode_struct(node: Expr, data: bytes) -> None:
    node.kind = "map"
    for number, _, value in read_fields(data):
        if number == 1 and value:
            node.kind = "struct"
            node.name = _text(value)
        elif number == 2:
            key: Expr | None = None
            val: Expr | None = None
            for n, _, v in read_fields(_message(value)):
                if n == 3:
                    key = _decode_expr(_message(v))
                elif n == 4:
                    val = _decode_expr(_message(v))
            if val is not None:
                node.entries.append((key, val))


def _decode_comprehension(node: Expr, data: bytes) -> None:
    node.kind = "comprehension"
    for number, _, value in read_fields(data):
        if number == 1:
            node.iter_var = _text(value)
        elif number == 8:
            node.iter_var2 = _text(value)
        elif number == 3:
            node.accu_var = _text(value)
        elif number in _COMPREHENSION_PARTS:
            setattr(node, _COMPREHENSION_PARTS[number], _decode_expr(_message(value)))


_COMPREHENSION_PARTS = {
    2: "iter_range",
    4: "accu_init",
    5: "loop_condition",
    6: "loop_step",
    7: "result",
}


def decode_checked(serialized: bytes) -> CheckedExpr:
    """The CheckedExpr inside cel-expr-python's ``serialize()`` output (an ``Any``)."""
    url, payload = b"", b""
    for number, _, value in read_fields(serialized):
        if number == 1:
            url = _message(value)
        elif number == 2:
            payload = _message(value)
    if url != _CHECKED_EXPR_URL:
        raise InternalError(f"cel-expr-python serialized {url!r}, not a CheckedExpr")
    expr: Expr | None = None
    overloads: dict[int, tuple[str, ...]] = {}
    types: dict[int, CelType] = {}
    for number, _, value in read_fields(payload):
        if number == 4:
            expr = _decode_expr(_message(value))
        elif number in (2, 3):
            key, entry = 0, b""
            for n, _, v in read_fields(_message(value)):
                if n == 1 and isinstance(v, int):
                    key = signed64(v)
                elif n == 2:
                    entry = _message(v)
            if number == 3:
                types[key] = _decode_type(entry)
            else:
                ids = tuple(_text(v) for n, _, v in read_fields(entry) if n == 3)
                if ids:
                    overloads[key] = ids
    if expr is None:
        raise InternalError("CheckedExpr without an expression")
    return CheckedExpr(expr, overloads, types)
