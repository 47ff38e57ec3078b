"""Kubernetes ``resource.Quantity`` parsing, plus the field-error base the api package shares.

``parse_quantity`` follows ``k8s.io/apimachinery/pkg/api/resource.ParseQuantity``: the same
grammar (sign, digits, optional fraction, a suffix that is decimal SI, binary SI or a decimal
exponent), values rounded away from zero to a multiple of 1n, and binary quantities capped at
2^63-1. The result is an exact ``Fraction``.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Self

from wasmsched.errors import InputError

__all__ = [
    "FieldError",
    "QuantityError",
    "milli_value",
    "parse_quantity",
    "value",
]


class FieldError(InputError):
    """A bad value at a field path; base of every parse error of the api package.

    ``str(err)`` is ``"<path>: <problem>"``, or just the problem when the path is empty.
    """

    def __init__(self, problem: str, path: str = "") -> None:
        self.problem = problem
        self.path = path
        super().__init__(f"{path}: {problem}" if path else problem)

    def under(self, prefix: str) -> Self:
        """The same error, its path placed under ``prefix``."""
        return type(self)(self.problem, join_path(prefix, self.path))


class QuantityError(FieldError):
    """A string that is not a Kubernetes quantity: ``invalid quantity "12x"``."""


def quote(value: Any) -> str:
    """Show a manifest value in an error message the way Go's %q would (JSON quoting)."""
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def join_path(prefix: str, path: str) -> str:
    """Join field paths: ``join_path("spec", "containers[0]")`` is ``spec.containers[0]``."""
    if not prefix:
        return path
    if not path:
        return prefix
    if path.startswith("["):
        return prefix + path
    return f"{prefix}.{path}"


def type_name(value: Any) -> str:
    """The JSON-ish name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


_EMPTY_MAPPING: Mapping[str, Any] = {}


def expect_mapping(value: Any, path: str) -> Mapping[str, Any]:
    """``value`` as a mapping; null reads as empty (as a Go nil map does)."""
    if value is None:
        return _EMPTY_MAPPING
    # A dict first: isinstance against the Mapping ABC costs a Python-level check.
    if type(value) is not dict and not isinstance(value, Mapping):
        raise FieldError(f"expected a mapping, got {type_name(value)}: {quote(value)}", path)
    return value


def expect_list(value: Any, path: str) -> list[Any] | tuple[Any, ...]:
    """``value`` as a list; null reads as empty."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise FieldError(f"expected a list, got {type_name(value)}: {quote(value)}", path)
    return value


def expect_str(value: Any, path: str) -> str:
    """``value`` as a string; null reads as empty."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(f"expected a string, got {type_name(value)}: {quote(value)}", path)
    return value


def expect_int(value: Any, path: str) -> int | None:
    """``value`` as an integer, or None when null. Integral floats (``3.0``) are accepted."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise FieldError(f"expected an integer, got boolean: {quote(value)}", path)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise FieldError(f"expected an integer, got {type_name(value)}: {quote(value)}", path)


def expect_bool(value: Any, path: str) -> bool:
    """``value`` as a boolean; null reads as false."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise FieldError(f"expected a boolean, got {type_name(value)}: {quote(value)}", path)
    return value


def expect_timestamp(value: Any, path: str) -> str | None:
    """An RFC 3339 timestamp as text, or None when null.

    A YAML loader that resolves timestamps hands over a datetime; it is turned back into
    the UTC ``...Z`` text that Kubernetes writes.
    """
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        moment: datetime.datetime = value
        if moment.tzinfo is not None:
            moment = moment.astimezone(datetime.UTC).replace(tzinfo=None)
        return moment.isoformat() + "Z"
    return expect_str(value, path)


def expect_str_map(value: Any, path: str) -> dict[str, str]:
    """A string-to-string mapping (labels, annotations, nodeSelector); null reads as empty."""
    m = expect_mapping(value, path)
    for k, v in m.items():
        if not isinstance(k, str):
            raise FieldError(f"expected a string key, got {type_name(k)}: {quote(k)}", path)
        if not isinstance(v, str):
            raise FieldError(
                f"expected a string, got {type_name(v)}: {quote(v)}", join_path(path, k)
            )
    return dict(m)


# sign, integer digits, optional "." and fraction digits, then the suffix: letters from the
# scanner's set, an optional sign and digits (ParseQuantity's scanner accepts exactly this).
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)", re.ASCII)
_EXPONENT_RE = re.compile(r"[eE]([+-]?[0-9]+)", re.ASCII)

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

_INT64_MAX = (1 << 63) - 1
_NANO = 10**9
# Exponents beyond these cannot come from a real quantity; upstream keeps them symbolically in
# an inf.Dec, we refuse huge ones rather than build a number with millions of digits.
_MAX_EXPONENT = 400
_MIN_EXPONENT = -400
_MAX_DIGITS = 1000

_cache: dict[str, Fraction] = {}
_CACHE_LIMIT = 4096


def _invalid(value: Any, why: str = "") -> QuantityError:
    return QuantityError(f"invalid quantity {quote(value)}" + (f": {why}" if why else ""))


def _parse_str(s: str) -> Fraction:
    if not s:
        raise _invalid(s)
    m = _QUANTITY_RE.fullmatch(s)
    if m is None:
        raise _invalid(s)
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    binary = False
    if suffix in _DECIMAL_SUFFIXES:
        exponent = _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        exponent = _BINARY_SUFFIXES[suffix]
        binary = True
    else:
        em = _EXPONENT_RE.fullmatch(suffix)
        if em is None:
            raise _invalid(s, "unknown suffix")
        parsed = int(em.group(1))
        if not -(1 << 63) <= parsed <= _INT64_MAX:
            raise _invalid(s, "exponent out of range")
        # Go stores the parsed int64 exponent in an int32, wrapping around.
        exponent = ((parsed + (1 << 31)) % (1 << 32)) - (1 << 31)
    if len(whole) + len(frac) > _MAX_DIGITS:
        raise _invalid(s, "too many digits")
    digits = int(whole + frac) if whole or frac else 0
    if digits == 0:
        return Fraction(0)
    if binary:
        amount = Fraction(digits << exponent, 10 ** len(frac))
    else:
        exponent -= len(frac)
        if exponent > _MAX_EXPONENT:
            raise _invalid(s, "exponent out of range")
        if exponent < _MIN_EXPONENT:
            # Far below 1n: ParseQuantity rounds any non-zero value up to 1n.
            return Fraction(-1 if sign == "-" else 1, _NANO)
        amount = (
            Fraction(digits * 10**exponent) if exponent >= 0 else Fraction(digits, 10**-exponent)
        )
    # Round away from zero to a whole number of nano units, as ParseQuantity does.
    scaled = amount * _NANO
    if scaled.denominator != 1:
        amount = Fraction(math.ceil(scaled), _NANO)
    if binary and amount > _INT64_MAX:
        amount = Fraction(_INT64_MAX)
    return -amount if sign == "-" else amount


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a Kubernetes quantity ("100m", "1.5Gi", "1e3", 2, 0.5) into an exact Fraction.

    Strings follow ``resource.ParseQuantity`` exactly, so whitespace, unknown suffixes and
    "1.2.3" are rejected. Numbers are read as a JSON decoder hands them to Quantity: an int
    exactly, a float through its shortest decimal representation.
    """
    if isinstance(value, str):
        hit = _cache.get(value)
        if hit is not None:
            return hit
        result = _parse_str(value)
        if len(_cache) < _CACHE_LIMIT:
            _cache[value] = result
        return result
    if isinstance(value, bool):
        raise _invalid(value)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _invalid(value)
        return _parse_str(repr(value))
    raise _invalid(value)


def milli_value(q: Fraction) -> int:
    """``ceil(q * 1000)``, as ``Quantity.MilliValue`` (which rounds up)."""
    return math.ceil(q * 1000)


def value(q: Fraction) -> int:
    """``ceil(q)``, as ``Quantity.Value``."""
    return math.ceil(q)
