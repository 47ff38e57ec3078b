"""Tests for wasmsched.api.quantity (resource.Quantity parsing)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wasmsched.api.quantity import (
    FieldError,
    QuantityError,
    join_path,
    milli_value,
    parse_quantity,
    value,
)

F = Fraction

DECIMAL = {
    "n": F(1, 10**9),
    "u": F(1, 10**6),
    "m": F(1, 1000),
    "": F(1),
    "k": F(10**3),
    "M": F(10**6),
    "G": F(10**9),
    "T": F(10**12),
    "P": F(10**15),
    "E": F(10**18),
}
BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
EXPONENTS = {
    "e0": F(1),
    "e3": F(1000),
    "E3": F(1000),
    "e+3": F(1000),
    "e-3": F(1, 1000),
    "E-9": F(1, 10**9),
    "e18": F(10**18),
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # every decimal SI suffix
        ("1n", F(1, 10**9)),
        ("1u", F(1, 10**6)),
        ("100m", F(1, 10)),
        ("1", F(1)),
        ("1k", F(1000)),
        ("1M", F(10**6)),
        ("2G", F(2 * 10**9)),
        ("1T", F(10**12)),
        ("1P", F(10**15)),
        ("1E", F(10**18)),
        # every binary SI suffix
        ("1Ki", F(1024)),
        ("1Mi", F(2**20)),
        ("200Mi", F(200 * 2**20)),
        ("1Gi", F(2**30)),
        ("1Ti", F(2**40)),
        ("1Pi", F(2**50)),
        ("1Ei", F(2**60)),
        ("2880020Ki", F(2880020 * 1024)),
        # decimal exponents
        ("1e3", F(1000)),
        ("1E3", F(1000)),
        ("1e+3", F(1000)),
        ("1E-3", F(1, 1000)),
        ("1.5e2", F(150)),
        ("1e09", F(10**9)),
        # signs, fractions, leading zeros
        ("+1", F(1)),
        ("-1", F(-1)),
        ("-100m", F(-1, 10)),
        ("+1.5Gi", F(3 * 2**29)),
        ("0.5", F(1, 2)),
        (".5", F(1, 2)),
        ("1.", F(1)),
        ("1.G", F(10**9)),
        ("0", F(0)),
        ("000", F(0)),
        ("007", F(7)),
        ("-0", F(0)),
        ("0.1Ki", F(1024, 10)),
        ("1.5Ki", F(1536)),
        ("7.123456M", F(7123456)),
        ("1.01E", F(101 * 10**16)),
        # ParseQuantity accepts these oddities as zero; so do we
        ("Ki", F(0)),
        ("-", F(0)),
        (".", F(0)),
        # rounded away from zero to a multiple of 1n
        ("1e-12", F(1, 10**9)),
        ("-1e-12", F(-1, 10**9)),
        ("1.5n", F(2, 10**9)),
        ("0.000000000001Ki", F(2, 10**9)),
        (".001", F(1, 1000)),
        (".0001k", F(1, 10)),
        ("1e-500", F(1, 10**9)),
        # binary values are capped at 2^63-1
        ("8Ei", F(2**63 - 1)),
        ("-8Ei", F(-(2**63 - 1))),
        ("7Ei", F(7 * 2**60)),
        # the exponent is kept in an int32, wrapping around as Go does
        ("1e4294967296", F(1)),
    ],
)
def test_parse_valid(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        " 1",
        "1 ",
        " ",
        "1.2.3",
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        "12x",
        "1K",
        "1ki",
        "1KI",
        "1KiB",
        "1Zi",
        "1Z",
        "1µ",
        "1e",
        "1e+",
        "1e1.5",
        "1e.5",
        "1e3k",
        "1E3Ki",
        "1e+-3",
        "1..5",
        "1-",
        "++1",
        "1,5",
        "1_000",
        "0x10",
        "1/2",
        "１",  # fullwidth digit
        "٣",  # Arabic-Indic digit
        "1\x00",
        "Inf",
        "NaN",
        "1e9223372036854775808",
        "1e1000",
        "1" * 5000,
    ],
)
def test_parse_invalid(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value).startswith("invalid quantity ")


def test_error_names_the_value() -> None:
    with pytest.raises(QuantityError, match=r'^invalid quantity "12x"$'):
        parse_quantity("12x")
    with pytest.raises(ValueError, match="unknown suffix"):
        parse_quantity("1K")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (2, F(2)),
        (0, F(0)),
        (-3, F(-3)),
        (0.5, F(1, 2)),
        (0.1, F(1, 10)),
        (1500.0, F(1500)),
        (1e-05, F(1, 100000)),
        (1e20, F(10**20)),
    ],
)
def test_parse_numbers(raw: int | float, expected: Fraction) -> None:
    assert parse_quantity(raw) == expected


@pytest.mark.parametrize("raw", [True, False, float("nan"), float("inf"), None, [1], {"a": 1}])
def test_parse_rejects_non_quantities(raw: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(raw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        ("1", 1000, 1),
        ("100m", 100, 1),
        ("1m", 1, 1),
        ("0.1m", 1, 1),
        ("1n", 1, 1),
        ("1001u", 2, 1),
        ("999m", 999, 1),
        ("1.0001", 1001, 2),
        ("0", 0, 0),
        ("2G", 2 * 10**12, 2 * 10**9),
        ("1Ki", 1024000, 1024),
        ("0.5", 500, 1),
    ],
)
def test_milli_value_and_value_round_up(text: str, milli: int, whole: int) -> None:
    q = parse_quantity(text)
    assert milli_value(q) == milli
    assert value(q) == whole


def test_repeated_parse_is_stable() -> None:
    assert parse_quantity("250m") is parse_quantity("250m")
    assert parse_quantity("250m") == F(1, 4)


@pytest.mark.parametrize(
    ("prefix", "path", "joined"),
    [
        ("", "a", "a"),
        ("a", "", "a"),
        ("spec", "containers[0]", "spec.containers[0]"),
        ("spec.tolerations", "[1].key", "spec.tolerations[1].key"),
    ],
)
def test_join_path(prefix: str, path: str, joined: str) -> None:
    assert join_path(prefix, path) == joined


def test_field_error_under() -> None:
    e = QuantityError('invalid quantity "x"', "cpu").under("requests")
    assert isinstance(e, QuantityError)
    assert str(e) == 'requests.cpu: invalid quantity "x"'
    assert str(FieldError("boom")) == "boom"


_SUFFIXES = sorted({**DECIMAL, **EXPONENTS}.items()) + [(k, F(v)) for k, v in BINARY.items()]


@given(n=st.integers(min_value=-(10**12), max_value=10**12), suffix=st.sampled_from(_SUFFIXES))
def test_integer_with_suffix_property(n: int, suffix: tuple[str, Fraction]) -> None:
    text, multiplier = suffix
    expected = n * multiplier
    if text in BINARY and abs(expected) > 2**63 - 1:
        expected = (2**63 - 1) * (1 if n > 0 else -1)
    assert parse_quantity(f"{n}{text}") == expected


@given(n=st.integers(min_value=0, max_value=10**15), decimals=st.integers(0, 6))
def test_fraction_with_milli_suffix_rounds_up(n: int, decimals: int) -> None:
    text = f"{n}" if decimals == 0 else f"{n // 10**decimals}.{n % 10**decimals:0{decimals}d}"
    q = parse_quantity(text + "m")
    assert q == F(n, 10**decimals) / 1000
    assert milli_value(q) == -(-n // 10**decimals)
