"""Node taints and pod tolerations (``k8s.io/api/core/v1`` toleration.go, taint.go)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from wasmsched.api.quantity import (
    FieldError,
    expect_int,
    expect_list,
    expect_mapping,
    expect_str,
    expect_timestamp,
    join_path,
    quote,
)
from wasmsched.api.selectors import is_qualified_name, is_valid_label_value

__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "Taint",
    "TaintError",
    "Toleration",
    "count_intolerable_prefer_no_schedule",
    "find_untolerated_taint",
    "tolerates",
]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)

EQUAL = "Equal"
EXISTS = "Exists"


class TaintError(FieldError):
    """An invalid taint or toleration; the path names the field."""


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint."""

    key: str
    value: str = ""
    effect: str = NO_SCHEDULE
    time_added: str | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str = "") -> Taint:
        """Parse and validate a taint (as the API server validates node taints)."""
        try:
            m = expect_mapping(d, path)
            key = expect_str(m.get("key"), join_path(path, "key"))
            value = expect_str(m.get("value"), join_path(path, "value"))
            effect = expect_str(m.get("effect"), join_path(path, "effect"))
            time_added = expect_timestamp(m.get("timeAdded"), join_path(path, "timeAdded"))
        except FieldError as e:
            raise TaintError(e.problem, e.path) from None
        if not is_qualified_name(key):
            raise TaintError(f"invalid taint key: {quote(key)}", join_path(path, "key"))
        if not is_valid_label_value(value):
            raise TaintError(f"invalid taint value: {quote(value)}", join_path(path, "value"))
        if effect not in TAINT_EFFECTS:
            raise TaintError(
                f"unsupported effect {quote(effect)} (expected one of {', '.join(TAINT_EFFECTS)})",
                join_path(path, "effect"),
            )
        return cls(key, value, effect, time_added)

    def __str__(self) -> str:
        # Taint.ToString(): key=value:effect, or key:effect when the value is empty.
        if self.value:
            return f"{self.key}={self.value}:{self.effect}"
        return f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration. An empty ``operator`` means Equal and an empty ``effect`` all effects."""

    key: str = ""
    operator: str = EQUAL
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str = "") -> Toleration:
        """Parse and validate a toleration (ValidateTolerations); "" operator becomes Equal."""
        try:
            m = expect_mapping(d, path)
            key = expect_str(m.get("key"), join_path(path, "key"))
            op = expect_str(m.get("operator"), join_path(path, "operator")) or EQUAL
            value = expect_str(m.get("value"), join_path(path, "value"))
            effect = expect_str(m.get("effect"), join_path(path, "effect"))
            seconds = expect_int(m.get("tolerationSeconds"), join_path(path, "tolerationSeconds"))
        except FieldError as e:
            raise TaintError(e.problem, e.path) from None
        if key and not is_qualified_name(key):
            raise TaintError(f"invalid toleration key: {quote(key)}", join_path(path, "key"))
        if op == EQUAL:
            if not key:
                raise TaintError(
                    'operator must be Exists when key is empty: "Equal"',
                    join_path(path, "operator"),
                )
            if not is_valid_label_value(value):
                raise TaintError(
                    f"invalid toleration value: {quote(value)}", join_path(path, "value")
                )
        elif op == EXISTS:
            if value:
                raise TaintError(
                    f"value must be empty when operator is Exists: {quote(value)}",
                    join_path(path, "value"),
                )
        else:
            raise TaintError(
                f"unsupported operator {quote(op)} (expected Equal or Exists)",
                join_path(path, "operator"),
            )
        if effect and effect not in TAINT_EFFECTS:
            raise TaintError(
                f"unsupported effect {quote(effect)} "
                f"(expected one of {', '.join(TAINT_EFFECTS)} or empty)",
                join_path(path, "effect"),
            )
        if seconds is not None and effect != NO_EXECUTE:
            raise TaintError(
                f"effect must be NoExecute when tolerationSeconds is set: {quote(effect)}",
                join_path(path, "effect"),
            )
        return cls(key, op, value, effect, seconds)

    def tolerates(self, taint: Taint) -> bool:
        """v1.Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op == EQUAL or not op:
            return self.value == taint.value
        return op == EXISTS


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Whether ``toleration`` tolerates ``taint`` (v1.Toleration.ToleratesTaint).

    An empty toleration effect matches every effect; an empty key (with Exists) matches every
    key; Equal compares values, Exists ignores them.
    """
    return toleration.tolerates(taint)


def _tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    for t in tolerations:  # noqa: SIM110  (a plain loop is faster on this hot path)
        if t.tolerates(taint):
            return True
    return False


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Iterable[Toleration], effects: frozenset[str]
) -> Taint | None:
    """The first taint with an effect in ``effects`` that no toleration tolerates, else None."""
    tols = tolerations if isinstance(tolerations, tuple | list) else tuple(tolerations)
    for taint in taints:
        if taint.effect in effects and not _tolerated(taint, tols):
            return taint
    return None


def count_intolerable_prefer_no_schedule(
    taints: Iterable[Taint], tolerations: Iterable[Toleration]
) -> int:
    """How many PreferNoSchedule taints no toleration tolerates (TaintToleration scoring)."""
    tols = tolerations if isinstance(tolerations, tuple | list) else tuple(tolerations)
    count = 0
    for taint in taints:
        if taint.effect == PREFER_NO_SCHEDULE and not _tolerated(taint, tols):
            count += 1
    return count


def taints_from_list(lst: Any, path: str) -> tuple[Taint, ...]:
    """Parse a list of taints; errors carry ``path[i]``."""
    try:
        items = expect_list(lst, path)
    except FieldError as e:
        raise TaintError(e.problem, e.path) from None
    return tuple(Taint.from_dict(t, f"{path}[{i}]") for i, t in enumerate(items))


def tolerations_from_list(lst: Any, path: str) -> tuple[Toleration, ...]:
    """Parse a list of tolerations; errors carry ``path[i]``."""
    try:
        items = expect_list(lst, path)
    except FieldError as e:
        raise TaintError(e.problem, e.path) from None
    return tuple(Toleration.from_dict(t, f"{path}[{i}]") for i, t in enumerate(items))
