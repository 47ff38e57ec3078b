"""PodTopologySpread's queueing hints (podtopologyspread/plugin.go: isSchedulableAfterPodChange,
isSchedulableAfterNodeChange).
"""

from __future__ import annotations

import pytest
from spread_support import (
    DNS,
    FOO,
    NO_SCHEDULE_TAINT,
    n,
    plugin,
    pod,
    sc,
    zn,
)

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.types import QueueingHint

# --- queueing hints ------------------------------------------------------------------


SPREAD_POD = pod("p", labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO)])


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None, pod("a", node="n1", labels={"foo": ""}), QueueingHint.QUEUE, id="add matching"
        ),
        pytest.param(
            None,
            pod("a", node="n1", labels={"bar": ""}),
            QueueingHint.QUEUE_SKIP,
            id="add unmatched",
        ),
        pytest.param(
            None, pod("a", labels={"foo": ""}), QueueingHint.QUEUE_SKIP, id="add unscheduled"
        ),
        pytest.param(
            None,
            pod("a", node="n1", labels={"foo": ""}, ns="ns1"),
            QueueingHint.QUEUE_SKIP,
            id="other namespace",
        ),
        pytest.param(
            pod("a", node="n1", labels={"foo": ""}), None, QueueingHint.QUEUE, id="delete matching"
        ),
        pytest.param(
            pod("a", node="n1", labels={"bar": ""}),
            None,
            QueueingHint.QUEUE_SKIP,
            id="delete unmatched",
        ),
        pytest.param(
            pod("a", node="n1", labels={"bar": ""}),
            pod("a", node="n1", labels={"foo": ""}),
            QueueingHint.QUEUE,
            id="label update starts matching",
        ),
        pytest.param(
            pod("a", node="n1", labels={"foo": "", "x": "1"}),
            pod("a", node="n1", labels={"foo": "", "x": "2"}),
            QueueingHint.QUEUE_SKIP,
            id="unrelated label update",
        ),
    ],
)
def test_is_schedulable_after_pod_change(
    old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    pl, _ = plugin([])
    assert pl.is_schedulable_after_pod_change(SPREAD_POD, old, new) == want


def test_pod_hint_own_toleration_change_with_taints_policy_honor() -> None:
    pl, _ = plugin([])
    target = pod("p", labels={"foo": ""}, spread=[sc(1, "zone", DNS, FOO, taints_policy="Honor")])
    tolerating = pod(
        "p",
        labels={"foo": ""},
        spread=[sc(1, "zone", DNS, FOO, taints_policy="Honor")],
        tolerations=[{"key": "k", "operator": "Exists"}],
    )
    assert pl.is_schedulable_after_pod_change(target, target, tolerating) == QueueingHint.QUEUE


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, zn("n1", "zone1"), QueueingHint.QUEUE, id="add node with zone"),
        pytest.param(None, n("n1", node="n1"), QueueingHint.QUEUE_SKIP, id="add node without zone"),
        pytest.param(zn("n1", "zone1"), None, QueueingHint.QUEUE, id="delete node with zone"),
        pytest.param(n("n1"), None, QueueingHint.QUEUE_SKIP, id="delete node without zone"),
        pytest.param(zn("n1", "zone1"), zn("n1", "zone2"), QueueingHint.QUEUE, id="zone changed"),
        pytest.param(n("n1"), zn("n1", "zone1"), QueueingHint.QUEUE, id="zone added"),
        pytest.param(
            zn("n1", "zone1"),
            n("n1", zone="zone1", node="n1", x="y"),
            QueueingHint.QUEUE_SKIP,
            id="unrelated label",
        ),
        pytest.param(
            zn("n1", "zone1"),
            n("n1", taints=[NO_SCHEDULE_TAINT], zone="zone1", node="n1"),
            QueueingHint.QUEUE,
            id="taints changed",
        ),
    ],
)
def test_is_schedulable_after_node_change(
    old: Node | None, new: Node | None, want: QueueingHint
) -> None:
    pl, _ = plugin([])
    assert pl.is_schedulable_after_node_change(SPREAD_POD, old, new) == want
