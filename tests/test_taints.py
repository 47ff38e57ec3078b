"""Tests for wasmsched.api.taints (taints, tolerations, ToleratesTaint)."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    Taint,
    TaintError,
    Toleration,
    count_intolerable_prefer_no_schedule,
    find_untolerated_taint,
    taints_from_list,
    tolerates,
    tolerations_from_list,
)

FOO_BAR_NOSCHEDULE = Taint("foo", "bar", NO_SCHEDULE)


# Mirrors k8s.io/api/core/v1 toleration_test.go (TestTolerationToleratesTaint).
@pytest.mark.parametrize(
    ("description", "toleration", "taint", "expected"),
    [
        (
            "toleration and taint have the same key and effect, and operator is Exists, "
            "and taint has no value, expect tolerated",
            Toleration("foo", "Exists", "", NO_SCHEDULE),
            Taint("foo", "", NO_SCHEDULE),
            True,
        ),
        (
            "toleration and taint have the same key and effect, and operator is Exists, "
            "and taint has some value, expect tolerated",
            Toleration("foo", "Exists", "", NO_SCHEDULE),
            FOO_BAR_NOSCHEDULE,
            True,
        ),
        (
            "toleration and taint have the same effect, toleration has empty key and operator "
            "is Exists, means match all taints, expect tolerated",
            Toleration("", "Exists", "", NO_SCHEDULE),
            FOO_BAR_NOSCHEDULE,
            True,
        ),
        (
            "toleration and taint have the same key, effect and value, and operator is Equal, "
            "expect tolerated",
            Toleration("foo", "Equal", "bar", NO_SCHEDULE),
            FOO_BAR_NOSCHEDULE,
            True,
        ),
        (
            "toleration and taint have the same key and effect, but different values, and "
            "operator is Equal, expect not tolerated",
            Toleration("foo", "Equal", "value1", NO_SCHEDULE),
            Taint("foo", "value2", NO_SCHEDULE),
            False,
        ),
        (
            "toleration and taint have the same key and value, but different effects, and "
            "operator is Equal, expect not tolerated",
            Toleration("foo", "Equal", "bar", NO_SCHEDULE),
            Taint("foo", "bar", NO_EXECUTE),
            False,
        ),
        (
            "empty toleration effect matches every effect",
            Toleration("foo", "Equal", "bar", ""),
            Taint("foo", "bar", PREFER_NO_SCHEDULE),
            True,
        ),
        (
            "empty operator means Equal",
            Toleration("foo", "", "bar", NO_SCHEDULE),
            FOO_BAR_NOSCHEDULE,
            True,
        ),
        (
            "empty operator means Equal, values differ",
            Toleration("foo", "", "baz", NO_SCHEDULE),
            FOO_BAR_NOSCHEDULE,
            False,
        ),
        (
            "different keys, expect not tolerated",
            Toleration("other", "Exists", "", ""),
            FOO_BAR_NOSCHEDULE,
            False,
        ),
        (
            "empty key, Exists, empty effect tolerates everything",
            Toleration("", "Exists", "", ""),
            Taint("anything", "x", NO_EXECUTE),
            True,
        ),
        (
            "Exists ignores the toleration value",
            Toleration("foo", "Exists", "ignored", NO_SCHEDULE),
            FOO_BAR_NOSCHEDULE,
            True,
        ),
        (
            "unknown operator tolerates nothing",
            Toleration("foo", "Lt", "bar", NO_SCHEDULE),
            FOO_BAR_NOSCHEDULE,
            False,
        ),
        (
            "empty key with Equal compares values only (ToleratesTaint has no key check then)",
            Toleration("", "Equal", "bar", ""),
            FOO_BAR_NOSCHEDULE,
            True,
        ),
    ],
)
def test_tolerates(description: str, toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert tolerates(toleration, taint) is expected, description
    assert toleration.tolerates(taint) is expected


TAINTS = (
    Taint("a", "1", PREFER_NO_SCHEDULE),
    Taint("b", "", NO_SCHEDULE),
    Taint("c", "x", NO_EXECUTE),
    Taint("d", "", PREFER_NO_SCHEDULE),
)


@pytest.mark.parametrize(
    ("tolerations", "effects", "expected"),
    [
        ((), frozenset({NO_SCHEDULE, NO_EXECUTE}), TAINTS[1]),
        ((Toleration("b", "Exists"),), frozenset({NO_SCHEDULE, NO_EXECUTE}), TAINTS[2]),
        (
            (Toleration("b", "Exists"), Toleration("c", "Equal", "x", NO_EXECUTE)),
            frozenset({NO_SCHEDULE, NO_EXECUTE}),
            None,
        ),
        ((Toleration("", "Exists"),), frozenset({NO_SCHEDULE, NO_EXECUTE}), None),
        ((), frozenset({PREFER_NO_SCHEDULE}), TAINTS[0]),
        ((), frozenset(), None),
        ((Toleration("b", "Exists", effect=NO_EXECUTE),), frozenset({NO_SCHEDULE}), TAINTS[1]),
    ],
)
def test_find_untolerated_taint(
    tolerations: tuple[Toleration, ...], effects: frozenset[str], expected: Taint | None
) -> None:
    assert find_untolerated_taint(TAINTS, tolerations, effects) == expected
    assert find_untolerated_taint(iter(TAINTS), iter(tolerations), effects) == expected


@pytest.mark.parametrize(
    ("tolerations", "count"),
    [
        ((), 2),
        ((Toleration("a", "Equal", "1"),), 1),
        ((Toleration("a", "Equal", "2"),), 2),
        ((Toleration("a", "Exists", effect=NO_SCHEDULE),), 2),
        ((Toleration("", "Exists", effect=PREFER_NO_SCHEDULE),), 0),
        ((Toleration("b", "Exists"), Toleration("c", "Exists")), 2),
    ],
)
def test_count_intolerable_prefer_no_schedule(
    tolerations: tuple[Toleration, ...], count: int
) -> None:
    assert count_intolerable_prefer_no_schedule(TAINTS, tolerations) == count


def test_taint_from_dict() -> None:
    t = Taint.from_dict(
        {
            "key": "dedicated",
            "value": "gpu",
            "effect": "NoSchedule",
            "timeAdded": "2023-05-30T02:42:13Z",
        }
    )
    assert t == Taint("dedicated", "gpu", NO_SCHEDULE, "2023-05-30T02:42:13Z")
    assert str(t) == "dedicated=gpu:NoSchedule"
    assert str(Taint("k", "", NO_EXECUTE)) == "k:NoExecute"
    assert Taint.from_dict({"key": "k", "effect": "NoExecute"}).value == ""


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"key": "k"},
            'effect: unsupported effect "" (expected one of NoSchedule, '
            "PreferNoSchedule, NoExecute)",
        ),
        (
            {"key": "k", "effect": "Sometimes"},
            'effect: unsupported effect "Sometimes" '
            "(expected one of NoSchedule, PreferNoSchedule, NoExecute)",
        ),
        ({"effect": "NoSchedule"}, 'key: invalid taint key: ""'),
        ({"key": "a b", "effect": "NoSchedule"}, 'key: invalid taint key: "a b"'),
        ({"key": "k", "value": "a b", "effect": "NoSchedule"}, 'value: invalid taint value: "a b"'),
        (
            {"key": "k", "value": 1, "effect": "NoSchedule"},
            "value: expected a string, got number: 1",
        ),
        ("k=v:NoSchedule", 'expected a mapping, got string: "k=v:NoSchedule"'),
    ],
)
def test_taint_from_dict_errors(raw: Any, message: str) -> None:
    with pytest.raises(TaintError) as info:
        Taint.from_dict(raw)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"key": "k", "operator": "Exists"}, Toleration("k", "Exists")),
        ({"key": "k", "value": "v"}, Toleration("k", "Equal", "v")),
        ({"key": "k", "operator": "", "value": "v"}, Toleration("k", "Equal", "v")),
        ({"operator": "Exists"}, Toleration("", "Exists")),
        (
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            Toleration("node.kubernetes.io/not-ready", "Exists", "", NO_EXECUTE, 300),
        ),
        (
            {"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"},
            Toleration("k", "Exists", "", PREFER_NO_SCHEDULE),
        ),
    ],
)
def test_toleration_from_dict(raw: dict[str, Any], expected: Toleration) -> None:
    assert Toleration.from_dict(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"key": "k", "operator": "Lt", "value": "1"},
            'operator: unsupported operator "Lt" (expected Equal or Exists)',
        ),
        (
            {"key": "k", "operator": "Exists", "effect": "Never"},
            'effect: unsupported effect "Never" (expected one of NoSchedule, PreferNoSchedule, '
            "NoExecute or empty)",
        ),
        ({"value": "v"}, 'operator: operator must be Exists when key is empty: "Equal"'),
        (
            {"key": "k", "operator": "Exists", "value": "v"},
            'value: value must be empty when operator is Exists: "v"',
        ),
        (
            {"key": "k", "operator": "Exists", "tolerationSeconds": 5},
            'effect: effect must be NoExecute when tolerationSeconds is set: ""',
        ),
        (
            {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": "5"},
            'tolerationSeconds: expected an integer, got string: "5"',
        ),
        ({"key": "bad key", "operator": "Exists"}, 'key: invalid toleration key: "bad key"'),
        ({"key": "k", "value": "a b"}, 'value: invalid toleration value: "a b"'),
    ],
)
def test_toleration_from_dict_errors(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(TaintError) as info:
        Toleration.from_dict(raw)
    assert str(info.value) == message


def test_list_helpers_carry_paths() -> None:
    assert taints_from_list(None, "spec.taints") == ()
    with pytest.raises(TaintError) as info:
        taints_from_list([{"key": "k", "effect": "NoSchedule"}, {"key": "k"}], "spec.taints")
    assert info.value.path == "spec.taints[1].effect"
    with pytest.raises(TaintError) as info:
        tolerations_from_list({"key": "k"}, "spec.tolerations")
    assert str(info.value) == 'spec.tolerations: expected a list, got mapping: {"key": "k"}'
