"""PrioritySort.less (queue_sort_test.go cases, plus the seq tie-break)."""

from __future__ import annotations

import pytest
from conftest import make_pod

from wasmsched.framework.types import QueuedPodInfo
from wasmsched.plugins.queue_sort import PrioritySort


def info(priority: int | None, timestamp: float, seq: int = 0) -> QueuedPodInfo:
    return QueuedPodInfo(make_pod(priority=priority), timestamp, seq)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (info(100, 1.0), info(200, 0.0), False),
        (info(200, 1.0), info(100, 0.0), True),
        (info(100, 0.0), info(100, 1.0), True),
        (info(100, 1.0), info(100, 0.0), False),
        (info(None, 0.0), info(-1, 0.0), True),
        (info(0, 5.0, seq=1), info(0, 5.0, seq=2), True),
        (info(0, 5.0, seq=2), info(0, 5.0, seq=1), False),
        (info(0, 5.0, seq=1), info(0, 5.0, seq=1), False),
    ],
    ids=[
        "p1.priority less than p2.priority",
        "p1.priority greater than p2.priority",
        "equal priority, p1 added to queue earlier",
        "equal priority, p2 added to queue earlier",
        "no priority counts as 0",
        "equal priority and timestamp, lower seq first",
        "equal priority and timestamp, higher seq second",
        "identical entries are not less",
    ],
)
def test_less(a: QueuedPodInfo, b: QueuedPodInfo, want: bool) -> None:
    assert PrioritySort().less(a, b) is want
