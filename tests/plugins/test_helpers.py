"""Plugin helpers: DefaultNormalizeScore and Go integer division."""

from __future__ import annotations

import pytest

from wasmsched.framework.interfaces import NodeScore
from wasmsched.plugins.helpers import default_normalize_score, go_div, is_extended_resource_name


@pytest.mark.parametrize(
    ("reverse", "scores", "want"),
    [
        (False, [1, 2, 3, 4], [25, 50, 75, 100]),
        (True, [1, 2, 3, 4], [75, 50, 25, 0]),
        (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (False, [1, 1, 1, 1], [100, 100, 100, 100]),
        (True, [1, 1, 1, 1], [0, 0, 0, 0]),
        (False, [0, 0, 0], [0, 0, 0]),
        (True, [0, 0, 0], [100, 100, 100]),
        (False, [], []),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], want: list[int]) -> None:
    node_scores = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert default_normalize_score(100, reverse, node_scores) is None
    assert [s.score for s in node_scores] == want


@pytest.mark.parametrize(
    ("a", "b", "want"), [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (6, 3, 2), (-6, 3, -2)]
)
def test_go_div_truncates_toward_zero(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("example.com/dongle", True),
        ("cpu", False),
        ("hugepages-2Mi", False),
        ("kubernetes.io/something", False),
        ("requests.example.com/x", False),
    ],
)
def test_is_extended_resource_name(name: str, want: bool) -> None:
    assert is_extended_resource_name(name) is want
