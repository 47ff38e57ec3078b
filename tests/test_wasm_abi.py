"""wasm/abi.py: NUL-list and cluster-event vectors (upstream's scheduler/plugin/cstring.go,
clusterevent.go), result unpacking and
export analysis (upstream's guest.go: compileGuest, and our decisions)."""

from __future__ import annotations

import pytest

from wasmsched.framework import interfaces as fw
from wasmsched.framework.types import ActionType, ClusterEvent
from wasmsched.wasm.abi import (
    analyse_exports,
    decode_cluster_events,
    decode_nul_list,
    default_events,
    signed32,
    split_high_low,
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (None, None),
        (b"", None),
        (b"a\0", ["a"]),
        (b"a\0two\0", ["a", "two"]),
        (b"a\0\0two\0", ["a", "two"]),
        (b"a\0two", ["a"]),
        ("a\0fóo\0c\0".encode(), ["a", "fóo", "c"]),
        (b"\0\0", None),
        (b"tail-only", None),
    ],
)
def test_decode_nul_list(data: bytes | None, expected: list[str] | None) -> None:
    assert decode_nul_list(data) == expected


NODE_ADD = ClusterEvent("Node", ActionType.ADD)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (bytes([1, 0, 0, 0, 1, 0, 0, 0]), [NODE_ADD]),
        (bytes([1, 0, 0, 0, 0x28, 0, 0, 0]), [ClusterEvent("Node", 8 | 32)]),
        (
            bytes([1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]),
            [NODE_ADD, ClusterEvent("PersistentVolume", ActionType.DELETE)],
        ),
        (bytes([1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0]), [NODE_ADD]),
        (bytes([1, 0, 0, 0, 1, 0, 0]), None),
        (b"", None),
        (None, None),
        # the guest SDK's stale All (63) widens to Kubernetes 1.33's ALL
        (bytes([0, 0, 0, 0, 63, 0, 0, 0]), [ClusterEvent("Pod", ActionType.ALL)]),
        (bytes([5, 0, 0, 0, 1, 0, 0, 0]), [ClusterEvent("resource.k8s.io/ResourceClaim", 1)]),
        (bytes([10, 0, 0, 0, 2, 0, 0, 0]), [ClusterEvent("*", 2)]),
        (bytes([99, 0, 0, 0, 2, 0, 0, 0]), [ClusterEvent("EventResource(99)", 2)]),
    ],
)
def test_decode_cluster_events(data: bytes | None, expected: list[ClusterEvent] | None) -> None:
    assert decode_cluster_events(data) == expected


def test_default_events_use_full_action_mask() -> None:
    events = [e.event for e in default_events()]
    assert [e.resource for e in events] == [
        "Pod",
        "Node",
        "storage.k8s.io/CSINode",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "storage.k8s.io/StorageClass",
    ]
    assert all(e.action == ActionType.ALL == 8191 for e in events)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, (0, 0)),
        ((7 << 32) | 2, (7, 2)),
        (-(2**63), (-(2**31), 0)),
        ((2**31 - 1) << 32 | 0x80000000, (2**31 - 1, -(2**31))),
        (-1, (-1, -1)),
    ],
)
def test_split_high_low(value: int, expected: tuple[int, int]) -> None:
    assert split_high_low(value) == expected


def test_signed32() -> None:
    assert signed32(0xFFFFFFFF) == -1
    assert signed32(0x7FFFFFFF) == 2**31 - 1


I32 = ((), ("i32",))
I64 = ((), ("i64",))
VOID = ((), ())
MEM = ("memory", None, True)


def exports(*funcs: tuple[str, tuple[tuple[str, ...], tuple[str, ...]] | None]) -> list:
    return [MEM, *((name, sig, False) for name, sig in funcs)]


@pytest.mark.parametrize(
    ("funcs", "points"),
    [
        ([("filter", I32)], {fw.FILTER}),
        ([("prefilter", I32)], {fw.PRE_FILTER}),
        ([("prescore", I32)], {fw.PRE_SCORE}),  # PreScore-only is a plugin of its own
        ([("prescore", I32), ("score", I64)], {fw.PRE_SCORE, fw.SCORE}),
        ([("score", I64), ("normalizescore", I32)], {fw.SCORE}),
        ([("reserve", I32), ("permit", I64)], {fw.RESERVE, fw.PERMIT}),
        ([("unreserve", VOID)], {fw.RESERVE}),
        ([("addpod", I32), ("filter", I32)], {fw.PRE_FILTER, fw.FILTER}),
        ([("enqueue", VOID), ("postbind", VOID)], {fw.POST_BIND}),
        (
            [("postfilter", I64), ("prebind", I32), ("bind", I32)],
            {fw.POST_FILTER, fw.PRE_BIND, fw.BIND},
        ),
        ([("filter", I32), ("malloc", ((("i32",), ("i32",)))), ("_start", VOID)], {fw.FILTER}),
    ],
)
def test_extension_points_follow_exports(funcs: list, points: set[str]) -> None:
    analysis = analyse_exports(exports(*funcs))
    assert analysis.problems == ()
    assert analysis.extension_points == frozenset(points)


def test_start_is_detected() -> None:
    assert analyse_exports(exports(("filter", I32), ("_start", VOID))).has_start
    assert not analyse_exports(exports(("filter", I32))).has_start


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ([("filter", I32, False)], "wasm: guest doesn't export memory[memory]"),
        ([MEM], "wasm: guest does not export any plugin functions"),
        ([MEM, ("enqueue", VOID, False)], None),
        (
            [MEM, ("filter", I64, False)],
            "wasm: guest exports the wrong signature for func[filter]. should be () -> (i32)",
        ),
        (
            [MEM, ("addpod", VOID, False)],
            "wasm: guest exports the wrong signature for func[addpod]. should be () -> (i32)",
        ),
        (
            [MEM, ("postfilter", I32, False)],
            "wasm: guest exports the wrong signature for func[postfilter]. should be () -> (i64)",
        ),
        (
            [MEM, ("unreserve", I32, False)],
            "wasm: guest exports the wrong signature for func[unreserve]. should be () -> ()",
        ),
        (
            [MEM, ("filter", None, False)],
            "wasm: guest exports the wrong signature for func[filter]. should be () -> (i32)",
        ),
        (
            [MEM, ("filter", I32, False), ("_start", I32, False)],
            "wasm: guest exports the wrong signature for func[_start]. should be () -> ()",
        ),
        (
            [MEM, ("normalizescore", I32, False)],
            "wasm: guest exports normalizescore without score; NormalizeScore is only "
            "called for Score plugins",
        ),
    ],
)
def test_export_problems(entries: list, problem: str | None) -> None:
    problems = analyse_exports(entries).problems
    if problem is None:
        assert problems == ()
    else:
        assert problems[0] == problem
