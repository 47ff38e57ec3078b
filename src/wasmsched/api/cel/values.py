"""The two Kubernetes value types of DRA's CEL: ``kubernetes.Quantity`` and ``kubernetes.Semver``.

:func:`parse_quantity` follows ``resource.ParseQuantity`` (``k8s.io/apimachinery/pkg/api/
resource/quantity.go``) with its error texts: values exact, rounded away from zero to 1n when
held as an ``inf.Dec``, binary ones capped at 2^63-1; and it records which values
``ParseQuantity`` keeps as a whole int64 amount, which is what ``isInteger``/``asInteger``
read (:class:`Quantity`).

:func:`parse_semver` follows ``github.com/blang/semver/v4`` ``Parse`` (strict) with its error
texts, and ``normalizeAndParse`` of ``k8s.io/apiserver/pkg/cel/library/semverlib.go`` for
``semver(s, true)``; :meth:`Semver.compare` is ``Version.Compare`` (build metadata ignored,
so it is ignored by ``==`` too, as ``Semver.Equal`` uses ``Version.EQ``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from wasmsched.api.cel.errors import CELError

__all__ = [
    "QUANTITY_FORMAT_ERROR",
    "Quantity",
    "Semver",
    "parse_quantity",
    "parse_semver",
]

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_NANO_SCALE = -9
_NANO = 10**9
# resource.maxInt64Factors: decimal digits an int64 amount always holds.
_MAX_INT64_FACTORS = 18
# Mantissa exponents beyond this cannot come from a real quantity; refusing them keeps the
# exact arithmetic from building numbers with millions of digits (upstream keeps the scale
# symbolically in an int32).
_MAX_SCALE = 4096

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
# resource.ErrFormatWrong, ErrSuffix and ErrNumeric, word for word.
QUANTITY_FORMAT_ERROR = f"quantities must match the regular expression '{_SPLIT_RE}'"
_SUFFIX_ERROR = "unable to parse quantity's suffix"
_NUMERIC_ERROR = "unable to parse numeric part of quantity"

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIXES |= {"P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")

# Go's math.Pow10 tables: exact float64 literals multiplied, never pow().
_POW10_TAB = tuple(float(f"1e{i}") for i in range(32))
_POW10_POS32 = tuple(float(f"1e{32 * i}") for i in range(10))


def _pow10(n: int) -> float:
    """``math.Pow10(n)`` as Go computes it (table products; 0 or +Inf out of range)."""
    if 0 <= n <= 308:
        return _POW10_TAB[n % 32] * _POW10_POS32[n // 32]
    if -323 <= n < 0:
        return 1 / (_POW10_TAB[-n % 32] * _POW10_POS32[-n // 32])
    return 0.0 if n < 0 else float("inf")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A ``resource.Quantity``: its exact value, and whether it is a whole int64 amount.

    ``Quantity.AsInt64``, which ``isInteger``/``asInteger`` call, answers from the
    representation, not the value: only an int64 amount with a scale >= 0 converts (so
    ``quantity("1")`` does and ``quantity("1000m")``, held as 1000 * 10^-3, does not; nor
    does any value ``ParseQuantity`` holds as an ``inf.Dec``, such as one written with more
    than 18 digits). ``whole`` records exactly that; comparisons and ``==`` read the value.
    """

    value: Fraction
    whole: bool = True

    def compare(self, other: Quantity) -> int:
        """``Quantity.Cmp``: -1, 0 or 1."""
        a, b = self.value, other.value
        return (a > b) - (a < b)

    def sign(self) -> int:
        """``Quantity.Sign``."""
        return (self.value > 0) - (self.value < 0)

    def as_int64(self) -> int | None:
        """``Quantity.AsInt64``: the value if held as a whole int64 amount that fits, else None."""
        if not self.whole or not _INT64_MIN <= self.value <= _INT64_MAX:
            return None
        return int(self.value)

    def approximate_float(self) -> float:
        """``Quantity.AsApproximateFloat64``: mantissa times ``math.Pow10(scale)``.

        The mantissa and scale are the value's shortest (an int64 amount keeps the ones it
        was written with), so the result can differ from kube's in the last bit.
        """
        value = self.value
        if value.denominator == 1:
            return float(value.numerator)
        scale = 0
        while value.denominator != 1 and scale > -_MAX_SCALE:
            value *= 10
            scale -= 1
        if value.denominator != 1:
            return float(self.value)
        return float(value.numerator) * _pow10(scale)

    def add(self, other: Quantity) -> Quantity:
        """``Quantity.Add`` on a copy: a zero operand keeps the other's representation."""
        return Quantity(self.value + other.value, _sum_whole(self, other))

    def sub(self, other: Quantity) -> Quantity:
        """``Quantity.Sub`` on a copy (``int64Amount.Sub`` adds the negated amount)."""
        return Quantity(self.value - other.value, _sum_whole(self, other))


def _sum_whole(a: Quantity, b: Quantity) -> bool:
    """Whether ``int64Amount.Add`` of the two gives a whole amount (at the smaller scale)."""
    if b.value == 0:
        return a.whole
    if a.value == 0:
        return b.whole
    return a.whole and b.whole


def _quantity_error(text: str, problem: str) -> CELError:
    return CELError(f"quantity {text!r}: {problem}", problem=problem)


def _split(text: str) -> tuple[bool, str, str, str]:
    """``parseQuantityString``: (positive, numerator, fraction digits, suffix)."""
    end = len(text)
    pos = 0
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    numerator = text[start:pos] or "0"
    fraction = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise _quantity_error(text, QUANTITY_FORMAT_ERROR)
    return positive, numerator, fraction, text[suffix_start:]


def _interpret(suffix: str, text: str) -> tuple[int, int]:
    """``suffixHandler.interpret``: (base, exponent)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:].lstrip("+-")
        if digits and set(digits) <= _DIGITS and suffix[1:].count("-") + suffix[1:].count("+") <= 1:
            parsed = int(suffix[1:])
            if _INT64_MIN <= parsed <= _INT64_MAX:
                # Go stores the int64 exponent in an int32, wrapping around.
                return 10, ((parsed + (1 << 31)) % (1 << 32)) - (1 << 31)
    raise _quantity_error(text, _SUFFIX_ERROR)


def parse_quantity(text: str) -> Quantity:
    """``resource.ParseQuantity``: the exact value, or CELError with upstream's message."""
    if not text:
        raise _quantity_error(text, QUANTITY_FORMAT_ERROR)
    if text == "0":
        return Quantity(Fraction(0), whole=True)
    positive, numerator, fraction, suffix = _split(text)
    base, exponent = _interpret(suffix, text)
    if abs(exponent) > _MAX_SCALE or len(numerator) + len(fraction) > _MAX_SCALE:
        raise _quantity_error(text, "exponent out of the supported range")
    digits = len(numerator) + len(fraction)
    sign = 1 if positive else -1
    if base == 10:
        scale = exponent - len(fraction)
        if _MAX_INT64_FACTORS - digits >= 0 and scale >= _NANO_SCALE:
            mantissa = sign * int(numerator + fraction)
            return Quantity(mantissa * Fraction(10) ** scale, whole=scale >= 0)
    elif exponent >= 0 and not fraction:
        # 1Mi (2^20) has ~6 digits of decimal precision (ParseQuantity's own estimate).
        precision = 15 - len(numerator) - int(exponent * 3 / 10) - 1
        value = int(numerator) << exponent
        if precision >= 0 and value <= _INT64_MAX:
            return Quantity(Fraction(sign * value), whole=True)
    # The inf.Dec path: exact, rounded away from zero to 1n, binary values capped at 2^63-1.
    unscaled = int(numerator + fraction)
    if base == 10:
        amount = Fraction(unscaled) * Fraction(10) ** (exponent - len(fraction))
    else:
        amount = Fraction(unscaled << exponent, 10 ** len(fraction))
    if amount == 0:
        return Quantity(Fraction(0), whole=False)
    nanos = amount * 10**9
    rounded = -((-nanos.numerator) // nanos.denominator)  # ceil: amount is positive here
    if base == 2 and rounded > _INT64_MAX * 10**9:
        return Quantity(Fraction(sign * _INT64_MAX), whole=False)
    return Quantity(Fraction(sign * rounded, _NANO), whole=False)


# blang/semver's character sets.
_NUMBERS = frozenset("0123456789")
_ALPHANUM = _NUMBERS | frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_UINT64_MAX = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class Semver:
    """A ``semver.Version``: prerelease identifiers are ints (numeric) or strings."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def compare(self, other: Semver) -> int:
        """``Version.Compare``: -1, 0 or 1 (build metadata ignored)."""
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if isinstance(a, int) != isinstance(b, int):
                return -1 if isinstance(a, int) else 1  # numeric identifiers sort first
            return 1 if a > b else -1  # type: ignore[operator]  # same kind, checked above
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def canonical(self) -> str:
        """The version without build metadata: equal for versions ``==`` calls equal."""
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        return text


def _semver_error(text: str, problem: str) -> CELError:
    return CELError(f"semver {text!r}: {problem}", problem=problem)


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _version_number(part: str, what: str, text: str) -> int:
    if not set(part) <= _NUMBERS:
        raise _semver_error(text, f"Invalid character(s) found in {what} number {_go_quote(part)}")
    if len(part) > 1 and part[0] == "0":
        raise _semver_error(
            text, f"{what.capitalize()} number must not contain leading zeroes {_go_quote(part)}"
        )
    if not part or int(part) > _UINT64_MAX:
        problem = "invalid syntax" if not part else "value out of range"
        raise _semver_error(text, f"strconv.ParseUint: parsing {_go_quote(part)}: {problem}")
    return int(part)


def _parse_strict(text: str, shown: str) -> Semver:
    """``semver.Parse``, with its error messages."""
    if not text:
        raise _semver_error(shown, "Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise _semver_error(shown, "No Major.Minor.Patch elements found")
    major = _version_number(parts[0], "major", shown)
    minor = _version_number(parts[1], "minor", shown)
    rest = parts[2]
    build: list[str] = []
    pre_texts: list[str] = []
    plus = rest.find("+")
    if plus != -1:
        build = rest[plus + 1 :].split(".")
        rest = rest[:plus]
    dash = rest.find("-")
    if dash != -1:
        pre_texts = rest[dash + 1 :].split(".")
        rest = rest[:dash]
    patch = _version_number(rest, "patch", shown)
    pre: list[int | str] = []
    for item in pre_texts:
        if not item:
            raise _semver_error(shown, "Prerelease is empty")
        if set(item) <= _NUMBERS:
            if len(item) > 1 and item[0] == "0":
                raise _semver_error(
                    shown,
                    f"Numeric PreRelease version must not contain leading zeroes {_go_quote(item)}",
                )
            pre.append(int(item))
        elif set(item) <= _ALPHANUM:
            pre.append(item)
        else:
            raise _semver_error(
                shown, f"Invalid character(s) found in prerelease {_go_quote(item)}"
            )
    for item in build:
        if not item:
            raise _semver_error(shown, "Build meta data is empty")
        if not set(item) <= _ALPHANUM:
            raise _semver_error(
                shown, f"Invalid character(s) found in build meta data {_go_quote(item)}"
            )
    return Semver(major, minor, patch, tuple(pre), tuple(build))


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """``semver.Parse``, or with ``normalize`` the library's ``normalizeAndParse``.

    Normalizing drops one leading ``v``, strips leading zeros from the first three dot parts
    and pads a short version with ``.0`` ("v1.02" is 1.2.0).
    """
    if not normalize:
        return _parse_strict(text, text)
    stripped = text.removeprefix("v")
    parts = stripped.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise _semver_error(text, "short version cannot contain PreRelease/Build meta data")
        parts.extend(["0"] * (3 - len(parts)))
    return _parse_strict(".".join(parts), text)
