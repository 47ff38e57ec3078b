"""The Kubernetes CEL functions of DRA's environment, as cel-expr-python declarations.

Each group follows its library in ``k8s.io/apiserver/pkg/cel/library`` at v0.37.2:
``quantity.go`` (kubernetes.quantity), ``semverlib.go`` (kubernetes.Semver, version 1: the
normalizing ``semver(s, true)`` overloads), ``lists.go`` (kubernetes.lists, version 1 with
``includes``) and ``regex.go`` (``find``, ``findAll``).

Two cel-expr-python limits shape the encoding. It cannot carry an opaque Python value, so a
quantity is the map ``{"kubernetes.Quantity": "<num>/<den>", "whole": 0 or 0.0}`` (type
``map(string, dyn)``; see :class:`~wasmsched.api.cel.values.Quantity` for ``whole``) and a
version ``{0: "<major.minor.patch-pre>"}`` (``map(int, string)``): distinct static types,
so the checker picks kube's overloads, and maps equal exactly when kube's ``Equal`` says
so. And its runtime registers one implementation per function name and
argument *kinds*, so the Quantity and Semver overloads of ``isGreaterThan``/``isLessThan``/
``compareTo`` (both maps at runtime) share one implementation that dispatches on the map,
and kube's per-element-type overloads of ``isSorted``/``sum``/``min``/``max`` are one
``list(dyn)`` overload each (so ``["a"].sum()`` fails at run time, not at compile time).

``find``/``findAll`` run Python's ``re``, not Go's RE2 ``regexp``: patterns RE2 and ``re``
read differently (lookarounds, possessive quantifiers) can differ. ``matches`` is
cel-cpp's own, on RE2.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from wasmsched.api.cel.errors import CELError
from wasmsched.api.cel.values import Quantity, Semver, parse_quantity, parse_semver

__all__ = [
    "KUBERNETES_FUNCTIONS",
    "QUANTITY_KEY",
    "SEMVER_KEY",
    "FunctionFailure",
    "decode_quantity",
    "decode_semver",
    "encode_quantity",
    "encode_semver",
    "function_declarations",
    "value_type_name",
]

QUANTITY_KEY = "kubernetes.Quantity"
# 0 (an int) when the quantity is a whole int64 amount, 0.0 otherwise: CEL's == compares
# 0 and 0.0 equal, so two quantities stay equal exactly when their values are.
_WHOLE_KEY = "whole"
SEMVER_KEY = 0

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)

# The functions of the Kubernetes libraries (not cel-go's standard ones), by name.
KUBERNETES_FUNCTIONS = (
    *("quantity", "isQuantity", "sign", "asApproximateFloat", "asInteger", "isInteger"),
    *("add", "sub", "isGreaterThan", "isLessThan", "compareTo"),
    *("semver", "isSemver", "major", "minor", "patch"),
    *("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes", "find", "findAll"),
)


class FunctionFailure(Exception):
    """A Kubernetes function's runtime error; its text is kube's, the CEL error's message.

    cel-expr-python turns an exception raised by a function into an error value
    (``UNKNOWN: <text>``) that CEL's ``||``/``&&`` may still absorb, exactly as cel-go's
    error values; the evaluator strips the status prefix.
    """


def encode_quantity(q: Quantity) -> dict[str, Any]:
    """The CEL value of a quantity: its exact value and its ``whole`` flag."""
    return {
        QUANTITY_KEY: f"{q.value.numerator}/{q.value.denominator}",
        _WHOLE_KEY: 0 if q.whole else 0.0,
    }


def encode_semver(v: Semver) -> dict[int, str]:
    """The CEL value of a version."""
    return {SEMVER_KEY: v.canonical()}


@lru_cache(maxsize=4096)
def _fraction_of(text: str) -> Fraction:
    numerator, _, denominator = text.partition("/")
    return Fraction(int(numerator), int(denominator))


@lru_cache(maxsize=4096)
def _semver_of(text: str) -> Semver:
    return parse_semver(text)


def decode_quantity(value: Any) -> Quantity | None:
    """The quantity a CEL value encodes, or None."""
    if type(value) is dict and len(value) == 2:
        text = value.get(QUANTITY_KEY)
        whole = value.get(_WHOLE_KEY)
        if type(text) is str and (type(whole) is int or type(whole) is float):
            return Quantity(_fraction_of(text), type(whole) is int)
    return None


def decode_semver(value: Any) -> Semver | None:
    """The version a CEL value encodes, or None."""
    if type(value) is dict and len(value) == 1:
        text = value.get(SEMVER_KEY)
        if type(text) is str:
            return _semver_of(text)
    return None


def value_type_name(value: Any) -> str:
    """cel-go's type name of a result value, for kube's "could not be converted" message."""
    if decode_quantity(value) is not None:
        return QUANTITY_KEY
    if decode_semver(value) is not None:
        return "kubernetes.Semver"
    names: list[tuple[type | tuple[type, ...], str]] = [
        (bool, "bool"),
        (int, "int"),
        (float, "double"),
        (str, "string"),
        (bytes, "bytes"),
        (Mapping, "map"),
        ((list, tuple), "list"),
        (datetime.datetime, "google.protobuf.Timestamp"),
        (datetime.timedelta, "google.protobuf.Duration"),
        (type(None), "null_type"),
    ]
    for kind, name in names:
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _no_overload(function: str, *args: Any) -> FunctionFailure:
    kinds = ", ".join(value_type_name(a) for a in args)
    return FunctionFailure(f"no such overload: {function}({kinds})")


def _quantity_arg(function: str, value: Any, *args: Any) -> Quantity:
    q = decode_quantity(value)
    if q is None:
        raise _no_overload(function, *args)
    return q


# --- kubernetes.quantity ------------------------------------------------------------------


@lru_cache(maxsize=1024)
def _quantity(text: str) -> dict[str, Any]:
    # Cached: a selector's literal quantity is parsed once, not once per device. The
    # binding copies the returned map into CEL, so sharing it is safe.
    try:
        return encode_quantity(parse_quantity(text))
    except CELError as err:
        raise FunctionFailure(err.problem) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except CELError:
        return False
    return True


def _sign(value: Any) -> int:
    return _quantity_arg("sign", value, value).sign()


def _as_approximate_float(value: Any) -> float:
    return _quantity_arg("asApproximateFloat", value, value).approximate_float()


def _as_integer(value: Any) -> int:
    whole = _quantity_arg("asInteger", value, value).as_int64()
    if whole is None:
        raise FunctionFailure("cannot convert value to integer")
    return whole


def _is_integer(value: Any) -> bool:
    return _quantity_arg("isInteger", value, value).as_int64() is not None


def _operands(function: str, value: Any, other: Any) -> tuple[Quantity, Quantity]:
    """The two quantities of ``add``/``sub``; an int is ``resource.NewQuantity(n, ...)``."""
    q = _quantity_arg(function, value, value, other)
    if isinstance(other, int) and not isinstance(other, bool):
        return q, Quantity(Fraction(other), whole=True)
    return q, _quantity_arg(function, other, value, other)


def _add(value: Any, other: Any) -> dict[str, Any]:
    q, operand = _operands("add", value, other)
    return encode_quantity(q.add(operand))


def _sub(value: Any, other: Any) -> dict[str, Any]:
    q, operand = _operands("sub", value, other)
    return encode_quantity(q.sub(operand))


# --- kubernetes.Semver --------------------------------------------------------------------


def _semver(text: str, normalize: bool = False) -> dict[int, str]:
    try:
        return encode_semver(parse_semver(text, normalize))
    except CELError as err:
        raise FunctionFailure(err.problem) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except CELError:
        return False
    return True


def _semver_arg(function: str, value: Any) -> Semver:
    v = decode_semver(value)
    if v is None:
        raise _no_overload(function, value)
    return v


def _major(value: Any) -> int:
    return _semver_arg("major", value).major


def _minor(value: Any) -> int:
    return _semver_arg("minor", value).minor


def _patch(value: Any) -> int:
    return _semver_arg("patch", value).patch


# --- shared by Quantity and Semver (one runtime overload per kinds) ------------------------


def _compare(function: str, value: Any, other: Any) -> int:
    # The per-device path of every capacity comparison: exact, on integers.
    if type(value) is dict and type(other) is dict:
        a, b = value.get(QUANTITY_KEY), other.get(QUANTITY_KEY)
        if type(a) is str and type(b) is str:
            x, y = _fraction_of(a), _fraction_of(b)
            left, right = x.numerator * y.denominator, y.numerator * x.denominator
            return (left > right) - (left < right)
        v, w = decode_semver(value), decode_semver(other)
        if v is not None and w is not None:
            return v.compare(w)
    raise _no_overload(function, value, other)


def _compare_to(value: Any, other: Any) -> int:
    return _compare("compareTo", value, other)


def _is_greater_than(value: Any, other: Any) -> bool:
    return _compare("isGreaterThan", value, other) == 1


def _is_less_than(value: Any, other: Any) -> bool:
    return _compare("isLessThan", value, other) == -1


# --- kubernetes.lists ---------------------------------------------------------------------


def _equal(a: Any, b: Any) -> bool:
    """CEL equality of two plain values: bool is not a number, numbers compare by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b) and not (isinstance(a, Mapping) and isinstance(b, Mapping)):
        return False
    return bool(a == b)


_COMPARABLE = (int, float, str, bytes, datetime.datetime, datetime.timedelta)
_SUMMABLE = (int, float, datetime.timedelta)


def _elements(function: str, items: Sequence[Any], kinds: tuple[type, ...]) -> Sequence[Any]:
    """``items`` when they are all of one of ``kinds`` (bool counts as its own kind)."""
    if items:
        first = type(items[0])
        if not isinstance(items[0], kinds) or any(type(item) is not first for item in items):
            raise _no_overload(function, list(items))
    return items


def _is_sorted(items: Sequence[Any]) -> bool:
    items = _elements("isSorted", items, (*_COMPARABLE, bool))
    return all(not (items[i] > items[i + 1]) for i in range(len(items) - 1))


def _sum(items: Sequence[Any]) -> Any:
    items = _elements("sum", items, _SUMMABLE)
    if not items or isinstance(items[0], bool):
        if items:
            raise _no_overload("sum", list(items))
        return 0
    total = items[0]
    for item in items[1:]:
        total = total + item
        if isinstance(total, int) and not _INT64_MIN <= total <= _INT64_MAX:
            raise FunctionFailure("integer overflow")
    return total


def _extreme(name: str, items: Sequence[Any], replace: Callable[[Any, Any], bool]) -> Any:
    items = _elements(name, items, (*_COMPARABLE, bool))
    if not items:
        raise FunctionFailure(f"{name} called on empty list")
    result = items[0]
    for item in items[1:]:
        if replace(result, item):
            result = item
    return result


def _min(items: Sequence[Any]) -> Any:
    return _extreme("min", items, lambda best, item: best > item)


def _max(items: Sequence[Any]) -> Any:
    return _extreme("max", items, lambda best, item: best < item)


def _index_of(items: Sequence[Any], item: Any) -> int:
    for i, candidate in enumerate(items):
        if _equal(candidate, item):
            return i
    return -1


def _last_index_of(items: Sequence[Any], item: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if _equal(items[i], item):
            return i
    return -1


def _includes(target: Any, item: Any) -> bool:
    if isinstance(target, list | tuple):
        return any(_equal(candidate, item) for candidate in target)
    return _equal(target, item)


# --- regex.go -----------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise FunctionFailure(f"Illegal regex: {err}") from None


def _find(text: str, pattern: str) -> str:
    found = _regex(pattern).search(text)
    return found.group(0) if found else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    found: list[str] = []
    previous_end = -1
    for match in _regex(pattern).finditer(text):
        # Go's FindAllString ignores an empty match abutting the previous match.
        if match.start() == match.end() == previous_end:
            continue
        found.append(match.group(0))
        previous_end = match.end()
        if 0 < limit <= len(found):
            break
    return found


def function_declarations(cel: Any) -> tuple[list[Any], list[Any]]:
    """DRA's Kubernetes functions as two ``cel.FunctionDecl`` lists: (own, extension).

    ``cel`` is the ``cel_expr_python.cel`` module. The first list goes to ``cel.NewEnv``'s
    ``functions``; there an overload that shares runtime kinds with an earlier one may carry
    no implementation (the earlier one's dispatches). The second goes in a
    ``cel.CelExtension`` after the strings extension: ``indexOf``/``lastIndexOf`` share their
    names with it (overloads merge only there), and a bare ``dyn`` parameter
    (``includes``) only matches at runtime there.
    """
    t = cel.Type
    quantity_t = t.Map(t.STRING, t.DYN)
    semver_t = t.Map(t.INT, t.STRING)
    overload = cel.Overload
    decl = cel.FunctionDecl

    def member(
        oid: str, result: Any, params: list[Any], impl: Callable[..., Any] | None = None
    ) -> Any:
        if impl is None:
            return overload(oid, result, params, is_member=True)
        return overload(oid, result, params, is_member=True, impl=impl)

    def glob(oid: str, result: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
        return overload(oid, result, params, impl=impl)

    def list_member(oid: str, result: Any, impl: Callable[..., Any]) -> Any:
        # One overload over list(dyn): kube templates these per element type, but the
        # runtime keeps one implementation per kinds, which must also fix its result type.
        return decl(oid, [member(f"list_{oid}", result, [t.List(t.DYN)], impl)])

    shared = [
        decl(
            "indexOf",
            [member("list_a_index_of_int", t.INT, [t.List(t.DYN), t.DYN], _index_of)],
        ),
        decl(
            "lastIndexOf",
            [member("list_a_last_index_of_int", t.INT, [t.List(t.DYN), t.DYN], _last_index_of)],
        ),
        decl("includes", [member("list_includes_dyn_dyn", t.BOOL, [t.DYN, t.DYN], _includes)]),
    ]
    own = [
        decl("quantity", [glob("string_to_quantity", quantity_t, [t.STRING], _quantity)]),
        decl("isQuantity", [glob("is_quantity_string", t.BOOL, [t.STRING], _is_quantity)]),
        decl("sign", [glob("quantity_sign", t.INT, [quantity_t], _sign)]),
        decl(
            "isGreaterThan",
            [
                member(
                    "quantity_is_greater_than", t.BOOL, [quantity_t, quantity_t], _is_greater_than
                ),
                member("semver_is_greater_than", t.BOOL, [semver_t, semver_t]),
            ],
        ),
        decl(
            "isLessThan",
            [
                member("quantity_is_less_than", t.BOOL, [quantity_t, quantity_t], _is_less_than),
                member("semver_is_less_than", t.BOOL, [semver_t, semver_t]),
            ],
        ),
        decl(
            "compareTo",
            [
                member("quantity_compare_to", t.INT, [quantity_t, quantity_t], _compare_to),
                member("semver_compare_to", t.INT, [semver_t, semver_t]),
            ],
        ),
        decl(
            "asApproximateFloat",
            [member("quantity_get_float", t.DOUBLE, [quantity_t], _as_approximate_float)],
        ),
        decl("asInteger", [member("quantity_get_int", t.INT, [quantity_t], _as_integer)]),
        decl("isInteger", [member("quantity_is_integer", t.BOOL, [quantity_t], _is_integer)]),
        decl(
            "add",
            [
                member("quantity_add", quantity_t, [quantity_t, quantity_t], _add),
                member("quantity_add_int", quantity_t, [quantity_t, t.INT], _add),
            ],
        ),
        decl(
            "sub",
            [
                member("quantity_sub", quantity_t, [quantity_t, quantity_t], _sub),
                member("quantity_sub_int", quantity_t, [quantity_t, t.INT], _sub),
            ],
        ),
        decl(
            "semver",
            [
                glob("string_to_semver", semver_t, [t.STRING], _semver),
                glob("string_bool_to_semver", semver_t, [t.STRING, t.BOOL], _semver),
            ],
        ),
        decl(
            "isSemver",
            [
                glob("is_semver_string", t.BOOL, [t.STRING], _is_semver),
                glob("is_semver_string_bool", t.BOOL, [t.STRING, t.BOOL], _is_semver),
            ],
        ),
        decl("major", [member("semver_major", t.INT, [semver_t], _major)]),
        decl("minor", [member("semver_minor", t.INT, [semver_t], _minor)]),
        decl("patch", [member("semver_patch", t.INT, [semver_t], _patch)]),
        list_member("isSorted", t.BOOL, _is_sorted),
        list_member("sum", t.DYN, _sum),
        list_member("max", t.DYN, _max),
        list_member("min", t.DYN, _min),
        decl("find", [member("string_find_string", t.STRING, [t.STRING, t.STRING], _find)]),
        decl(
            "findAll",
            [
                member("string_find_all_string", t.List(t.STRING), [t.STRING, t.STRING], _find_all),
                member(
                    "string_find_all_string_int",
                    t.List(t.STRING),
                    [t.STRING, t.STRING, t.INT],
                    _find_all,
                ),
            ],
        ),
    ]
    return own, shared
