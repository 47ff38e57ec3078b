"""Informers against the double: list, watch, bookmarks, relist differences, disabled kinds."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest

from apiserver import ApiServerDouble
from live_support import ManualClock, api_for, node, pod, wait
from wasmsched.live.client import RESOURCES
from wasmsched.live.informer import Delta, Disabled, Informer, InformerItem, Synced, WatchBackoff


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble(bookmark_interval=0.2)
    server.start()
    yield server
    server.stop()


def informer(srv: ApiServerDouble, kind: str, items: list[InformerItem]) -> Informer:
    return Informer(
        api_for(srv), RESOURCES[kind], items.append, initial_backoff=0.05, max_backoff=0.2
    )


def summary(items: list[InformerItem]) -> list[tuple[str, str]]:
    """(what, name) per item: add/update/delete/synced/disabled."""
    out = []
    for item in items:
        if isinstance(item, Delta):
            what = "add" if item.old is None else "delete" if item.new is None else "update"
            obj = item.new if item.new is not None else item.old
            assert obj is not None
            out.append((what, obj["metadata"]["name"]))
        else:
            out.append(("synced" if isinstance(item, Synced) else "disabled", item.kind))
    return out


def test_list_then_watch_delivers_every_change_in_order(srv: ApiServerDouble) -> None:
    srv.create(node("node-0"))
    items: list[InformerItem] = []
    inf = informer(srv, "Node", items)
    inf.start()
    try:
        wait(lambda: inf.synced.is_set(), what="sync")
        changed = srv.get("Node", None, "node-0")
        changed["metadata"]["labels"]["x"] = "y"
        srv.update(changed)
        srv.create(node("node-1"))
        srv.delete("Node", None, "node-0")
        wait(lambda: len(items) == 5, what="deltas")
    finally:
        inf.stop()
    assert summary(items) == [
        ("add", "node-0"),
        ("synced", "Node"),
        ("update", "node-0"),
        ("add", "node-1"),
        ("delete", "node-0"),
    ]
    update = items[2]
    assert isinstance(update, Delta) and update.old is not None and update.new is not None
    assert "x" not in update.old["metadata"]["labels"]
    assert update.new["metadata"]["labels"]["x"] == "y"
    assert update.new["kind"] == "Node" and update.new["apiVersion"] == "v1"


def test_bookmarks_move_the_resource_version_without_deltas(srv: ApiServerDouble) -> None:
    items: list[InformerItem] = []
    inf = informer(srv, "Node", items)
    inf.start()
    try:
        wait(lambda: inf.synced.is_set(), what="sync")
        before = int(inf.resource_version)
        srv.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "elsewhere"}})
        target = int(srv.resource_version)
        wait(lambda: int(inf.resource_version) >= target, what="a bookmark")
        assert target > before
        assert summary(items) == [("synced", "Node")]
        assert inf.watches == 1
    finally:
        inf.stop()


def test_relist_delivers_the_differences(srv: ApiServerDouble) -> None:
    for name in ("keep", "change", "remove", "recreate"):
        srv.create(pod(name))
    items: list[InformerItem] = []
    inf = informer(srv, "Pod", items)
    inf._relist()
    old_uid = srv.get("Pod", "default", "recreate")["metadata"]["uid"]
    # Meanwhile, unseen by any watch:
    changed = srv.get("Pod", "default", "change")
    changed["metadata"]["labels"] = {"v": "2"}
    srv.update(changed)
    srv.delete("Pod", "default", "remove")
    srv.delete("Pod", "default", "recreate")
    srv.create(pod("recreate"))
    srv.create(pod("added"))
    items.clear()
    inf._relist()
    assert sorted(summary(items)) == sorted(
        [
            ("update", "change"),
            ("delete", "remove"),
            ("delete", "recreate"),
            ("add", "recreate"),
            ("add", "added"),
        ]
    )
    recreated = [i for i in items if isinstance(i, Delta) and i.old is not None and i.new is None]
    assert any(i.old is not None and i.old["metadata"]["uid"] == old_uid for i in recreated)
    assert inf.relists == 2


def test_terminal_pods_are_treated_as_absent(srv: ApiServerDouble) -> None:
    srv.create(pod("web-0"))
    items: list[InformerItem] = []
    inf = Informer(
        api_for(srv),
        RESOURCES["Pod"],
        items.append,
        keep=lambda m: (m.get("status") or {}).get("phase") != "Succeeded",
    )
    inf.start()
    try:
        wait(lambda: inf.synced.is_set(), what="sync")
        finished = copy.deepcopy(srv.get("Pod", "default", "web-0"))
        finished["status"]["phase"] = "Succeeded"
        srv.update(finished)
        wait(lambda: len(items) == 3, what="the delete")
    finally:
        inf.stop()
    assert summary(items) == [("add", "web-0"), ("synced", "Pod"), ("delete", "web-0")]


@pytest.mark.parametrize(
    ("kind", "status", "disabled"),
    [
        ("PodDisruptionBudget", 403, True),
        ("CSINode", 404, True),
        ("Node", 403, False),  # required kinds are retried
        ("PriorityClass", 500, False),
    ],
)
def test_failures_on_the_first_list(
    srv: ApiServerDouble, kind: str, status: int, disabled: bool
) -> None:
    resource = RESOURCES[kind]
    srv.faults.fail_next("GET", f"^{resource.collection_path}$", status=status, count=2)
    items: list[InformerItem] = []
    inf = informer(srv, kind, items)
    inf.start()
    try:
        wait(lambda: bool(items) and not isinstance(items[-1], Delta), what="an outcome")
    finally:
        inf.stop()
    if disabled:
        assert isinstance(items[-1], Disabled) and not inf.synced.is_set()
    else:
        assert isinstance(items[-1], Synced)
        failed = [r for r in srv.requests if r[2] == status]
        assert len(failed) == 2


def test_watch_backoff_grows_caps_and_resets_after_a_healthy_period() -> None:
    clock = ManualClock()
    b = WatchBackoff(0.8, 30.0, 120.0, clock=clock, jitter=0.0)
    delays = []
    for _ in range(8):
        clock.t += 1.0
        delays.append(b.next())
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0])
    clock.t += 119.0  # within the reset period of the last backoff: no reset
    assert b.next() == 30.0
    clock.t += 121.0  # healthy for longer than the reset period
    assert b.next() == 0.8
    jittered = WatchBackoff(0.8, 30.0, 120.0, clock=clock)
    samples = [WatchBackoff(0.8, 30.0, 120.0, clock=clock).next() for _ in range(50)]
    assert all(0.8 <= s <= 1.6 for s in samples) and len(set(samples)) > 1
    assert 0.8 <= jittered.next() <= 1.6


def test_a_drop_after_a_healthy_period_reconnects_fast(srv: ApiServerDouble) -> None:
    # The delay went back to its minimum only when a watch ended cleanly: after a burst of
    # drops, every later drop left the informer blind for the maximum delay.
    srv.create(node("node-0"))
    clock = ManualClock()
    items: list[InformerItem] = []
    inf = Informer(
        api_for(srv),
        RESOURCES["Node"],
        items.append,
        initial_backoff=0.05,
        max_backoff=2.0,
        backoff_reset=120.0,
        clock=clock,
    )
    inf.start()
    try:
        wait(lambda: inf.synced.is_set(), 30, "sync")
        for i in range(6):  # a burst of drops: 0.05 .. 1.6 s, then the cap
            srv.faults.drop_watch("Node", after_events=1)
            srv.create(node(f"burst-{i}"))
            wait(lambda i=i: len(inf.backoff_delays) == i + 1, 30, f"drop {i}")
            wait(lambda i=i: f"burst-{i}" in str(inf.store), 30, f"burst-{i} seen")
        assert inf.backoff_delays[-1] >= 1.6
        clock.t += 121.0  # a healthy period: no error for longer than the reset period
        watches = inf.watches
        srv.faults.drop_watch("Node", after_events=1)
        srv.create(node("after"))
        wait(lambda: len(inf.backoff_delays) == 7, 30, "the drop after the healthy period")
        started = time.monotonic()
        wait(lambda: inf.watches > watches, 30, "reconnect")
        reconnect = time.monotonic() - started
        srv.create(node("later"))
        wait(lambda: "later" in inf.store, 30, "an event after the reconnect")
    finally:
        inf.stop()
    assert inf.backoff_delays[-1] <= 0.1  # the minimum with its jitter, not the 2 s cap
    assert reconnect < 1.5
