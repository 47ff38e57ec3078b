"""InterPodAffinity term parsing, queueing hints (interpodaffinity/plugin.go) and the counts
kept across cycles.
"""

from __future__ import annotations

from typing import Any

import pytest
from affinity_support import (
    FOO_BAR,
    FOO_IN_BAR,
    M1,
    M2,
    M3,
    NAMESPACES,
    STAY_WITH_S1_IN_REGION,
    ObjectsHandle,
    affinity,
    expr,
    node,
    pod,
    term,
    weighted,
)
from conftest import make_snapshot

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import Snapshot
from wasmsched.framework.types import QueueingHint
from wasmsched.plugins.inter_pod_affinity import (
    PRE_FILTER_KEY,
    InterPodAffinity,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
    pod_affinity_terms,
)

# --- parsing ------------------------------------------------------------------------


def test_terms_parse_once_per_pod_object() -> None:
    p = pod(aff=STAY_WITH_S1_IN_REGION)
    assert pod_affinity_terms(p) is pod_affinity_terms(p)
    (t,) = pod_affinity_terms(p).preferred_affinity
    assert (t.weight, t.topology_key, t.namespaces) == (5, "region", frozenset({"default"}))
    assert pod_affinity_terms(pod()).required_affinity == ()


# --- queueing hints ------------------------------------------------------------------


HINT_POD = pod(
    aff=affinity(req=[term("region", FOO_IN_BAR)], anti=[term("zone", expr("app", "Exists"))])
)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, pod(FOO_BAR, node="n1"), QueueingHint.QUEUE, id="add matching affinity"),
        pytest.param(
            None, pod({"app": "x"}, node="n1"), QueueingHint.QUEUE_SKIP, id="add unrelated"
        ),
        pytest.param(None, pod(FOO_BAR), QueueingHint.QUEUE_SKIP, id="add unscheduled"),
        pytest.param(
            pod({"app": "x"}, node="n1"), None, QueueingHint.QUEUE, id="delete matching anti"
        ),
        pytest.param(pod(FOO_BAR, node="n1"), None, QueueingHint.QUEUE_SKIP, id="delete unrelated"),
        pytest.param(
            pod({"foo": "baz"}, node="n1", name="u"),
            pod(FOO_BAR, node="n1", name="u"),
            QueueingHint.QUEUE,
            id="update starts matching affinity",
        ),
        pytest.param(
            pod({"app": "x"}, node="n1", name="u"),
            pod({}, node="n1", name="u"),
            QueueingHint.QUEUE,
            id="update stops matching anti-affinity",
        ),
        pytest.param(
            pod({"y": "1"}, node="n1", name="u"),
            pod({"y": "2"}, node="n1", name="u"),
            QueueingHint.QUEUE_SKIP,
            id="unrelated update",
        ),
    ],
)
def test_is_schedulable_after_pod_change(
    old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    assert is_schedulable_after_pod_change(HINT_POD, old, new) == want


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(node("n", region="r1"), QueueingHint.QUEUE, id="affinity topology key"),
        pytest.param(node("n", zone="z1"), QueueingHint.QUEUE, id="anti-affinity topology key"),
        pytest.param(node("n", other="x"), QueueingHint.QUEUE_SKIP, id="no topology key"),
    ],
)
def test_is_schedulable_after_node_change(new: Node, want: QueueingHint) -> None:
    assert is_schedulable_after_node_change(HINT_POD, None, new) == want


# --- counts kept across cycles -----------------------------------------------------------


def test_counts_kept_across_cycles_follow_cluster_changes() -> None:
    """A plugin reused over cycles (counts kept per node) agrees with a fresh one each time."""
    db = pod({"app": "db"}, node="machine1", name="db")
    repel = pod(
        {"app": "x"}, node="machine2", name="repel", aff=affinity(anti=[term("zone", FOO_IN_BAR)])
    )
    prefers = pod(
        {"app": "y"},
        node="machine3",
        name="prefers",
        aff=affinity(pref=[weighted(4, term("region", FOO_IN_BAR))]),
    )
    snapshot = make_snapshot([M1, M2, M3], [db, repel, prefers])
    handle = ObjectsHandle(snapshot, NAMESPACES)
    kept = InterPodAffinity({}, handle)
    incoming = pod(
        FOO_BAR,
        aff=affinity(
            req=[term("region", expr("app", "In", "db"))],
            anti=[term("hostname", FOO_IN_BAR)],
            pref=[weighted(3, term("zone", expr("app", "Exists")))],
        ),
    )

    def observe(pl: InterPodAffinity) -> tuple[Any, ...]:
        out: list[Any] = []
        for p in (incoming, pod(FOO_BAR)):  # with preferred terms, and without any terms
            state = CycleState()
            _, status = pl.pre_filter(state, p, handle.snapshot().list())
            s = state.get(PRE_FILTER_KEY)
            out.append(status)
            out.append(None if s is None else (s.existing_anti, s.affinity, s.anti))
            state = CycleState()
            out.append(pl.pre_score(state, p, handle.snapshot().list()))
            ps = state.get("PreScoreInterPodAffinity")
            out.append(None if ps is None else ps.topology_score)
        return tuple(out)

    def check() -> None:
        assert observe(kept) == observe(InterPodAffinity({}, handle))

    check()
    m1, m2, m3 = (snapshot.get(name) for name in ("machine1", "machine2", "machine3"))
    assert m1 is not None and m2 is not None and m3 is not None
    m2.add_pod(pod(FOO_BAR, node="machine2", name="twin"))
    m3.add_pod(pod({"app": "db"}, node="machine3", name="db2"))
    snapshot.refresh_affinity_lists()
    check()
    m2.remove_pod(repel)
    m1.remove_pod(db)
    snapshot.refresh_affinity_lists()
    check()
    handle._snapshot = Snapshot([m1, m3])  # machine2 is gone
    check()
    m3.remove_pod(prefers)
    handle._snapshot.refresh_affinity_lists()
    check()
