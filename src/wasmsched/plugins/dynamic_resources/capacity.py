"""Consumable capacity (structured/internal/incubating/consumable_capacity.go): what a share
of a device that allows multiple allocations takes of each capacity, and whether it fits;
and quantities written back as Quantity.String() writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from wasmsched.plugins.dynamic_resources.claims import as_list, as_mapping
from wasmsched.plugins.dynamic_resources.requests import Request
from wasmsched.plugins.dynamic_resources.slices import Capacity, Device


class CapacityError(Exception):
    """A capacity that cannot be computed (kube: an error from CmpRequestOverCapacity)."""


_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""))
_SMALL_SUFFIXES = ((-3, "m"), (-6, "u"), (-9, "n"))


def is_binary(text: Any) -> bool:
    """Whether a quantity text has resource.BinarySI format (a Ki..Ei suffix)."""
    return isinstance(text, str) and text.endswith(_BINARY_SUFFIXES)


@lru_cache(maxsize=4096)
def format_quantity(value: Fraction, binary: bool = False) -> str:
    """Quantity.String() of ``value`` in the format of the quantity it came from: BinarySI
    as the largest power of 1024 that divides it (whole values of at least 1024), else
    DecimalSI with the largest power of 1000 that leaves a whole mantissa. Kept per value:
    Filter formats every share it tries on every node, and a trace's shares take few
    values."""
    if binary and value.denominator == 1 and abs(value) >= 1024:
        amount, exponent = value.numerator, 0
        while exponent < 6 and amount % 1024 == 0:
            amount //= 1024
            exponent += 1
        return f"{amount}{_BINARY_SUFFIXES[exponent - 1]}" if exponent else str(amount)
    if value == 0:
        return "0"
    for power, suffix in _DECIMAL_SUFFIXES:
        scaled = value / Fraction(10) ** power
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    for power, suffix in _SMALL_SUFFIXES:
        scaled = value / Fraction(10) ** power
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    scaled = value * 10**9
    return f"{-(-scaled.numerator // scaled.denominator)}n"


def readable_quantity(value: Fraction) -> str:
    """A quantity for people (explain, the report): binary suffixes for whole multiples
    of 1024, as bytes are written, else decimal ones."""
    return format_quantity(value, value.denominator == 1 and value % 1024 == 0)


def _round_up(requested: Fraction, capacity: Capacity, fractional: bool) -> Fraction:
    """calculateConsumedCapacity for one requested value."""
    if not capacity.has_policy:
        return requested
    if capacity.valid_min is not None:
        low = capacity.valid_min
        if requested < low:
            return low
        step = capacity.step
        if step is None:
            return requested
        unit = Fraction(1, 1000) if fractional and _milli_ok(capacity) else Fraction(1)
        r, s, m = _to_unit(requested, unit), _to_unit(step, unit), _to_unit(low, unit)
        added = r - m
        n = -(-added // s)
        return (m + s * n) * unit
    if capacity.valid_values is not None:
        for v in capacity.valid_values:
            if requested <= v:
                return v
        return requested
    return requested


def _to_unit(value: Fraction, unit: Fraction) -> int:
    """Quantity.Value() / MilliValue(): rounded up to a whole number of units."""
    scaled = value / unit
    return -(-scaled.numerator // scaled.denominator)


def _milli_ok(capacity: Capacity) -> bool:
    """useMilli: every range bound representable in milli units, the step at least 1m."""
    for q in (capacity.valid_min, capacity.valid_max, capacity.step):
        if q is not None and (q * 1000).denominator != 1:
            return False
    return not (capacity.step is not None and capacity.step * 1000 < 1)


def _violates(value: Fraction, capacity: Capacity, fractional: bool) -> bool:
    """violatesPolicy."""
    if not capacity.has_policy:
        return False
    if capacity.default is not None and value == capacity.default:
        return False
    if capacity.has_range:
        if capacity.valid_max is not None and value > capacity.valid_max:
            return True
        if capacity.step is not None and capacity.valid_min is not None:
            unit = Fraction(1, 1000) if fractional and _milli_ok(capacity) else Fraction(1)
            if unit == Fraction(1, 1000) and (value * 1000).denominator != 1:
                return True
            r = _to_unit(value, unit)
            s = _to_unit(capacity.step, unit)
            m = _to_unit(capacity.valid_min, unit)
            return (r - m) % s != 0
        return False
    if capacity.valid_values:
        return value not in capacity.valid_values
    return False


def consumed_capacity(
    requests: dict[str, Fraction] | None, device: Device, fractional: bool
) -> dict[str, Fraction]:
    """GetConsumedCapacityFromRequest: what a share of ``device`` takes of each capacity."""
    out: dict[str, Fraction] = {}
    for name, capacity in device.capacity.items():
        requested = requests.get(name) if requests else None
        if requested is None:
            out[name] = capacity.default if capacity.default is not None else capacity.value
        else:
            out[name] = _round_up(requested, capacity, fractional)
    return out


def format_source(r: Request, device: Device, name: str, consumed: Fraction) -> Any:
    """The quantity text whose format the consumed amount keeps (calculateConsumedCapacity:
    the request's, the default's, the range's min or step, or the valid value chosen)."""
    raw_capacity = as_mapping(as_mapping(device.raw.get("capacity")).get(name))
    policy = as_mapping(raw_capacity.get("requestPolicy"))
    requested = as_mapping(as_mapping(r.raw.get("capacity")).get("requests")).get(name)
    if requested is None:
        return policy.get("default", raw_capacity.get("value"))
    valid_range = as_mapping(policy.get("validRange"))
    capacity = device.capacity[name]
    if valid_range.get("min") is not None:
        if capacity.valid_min is not None and consumed == capacity.valid_min:
            return valid_range["min"]
        return valid_range.get("step", requested)
    for text, value in zip(
        as_list(policy.get("validValues")), capacity.valid_values or (), strict=False
    ):
        if value == consumed:
            return text
    return requested


def request_fits_capacity(
    current: Mapping[str, Fraction],
    requests: dict[str, Fraction] | None,
    device: Device,
    allocating: Mapping[str, Fraction],
    fractional: bool,
) -> bool:
    """CmpRequestOverCapacity: the request's share fits what is left of every capacity."""
    if requests and any(name not in device.capacity for name in requests):
        return False
    consumed = consumed_capacity(requests, device, fractional)
    for name, capacity in device.capacity.items():
        value = consumed[name]
        if value < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        if _violates(value, capacity, fractional):
            return False
        total = current.get(name, Fraction(0)) + value + allocating.get(name, Fraction(0))
        if total > capacity.value:
            return False
    return True
