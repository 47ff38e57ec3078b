"""The live loop's garbage collection: frozen after the informers sync, collected when idle
(the runner's side: tests/test_live_runner.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from live_support import ManualClock
from wasmsched.live.collector import IdleCollector


class Cycle:
    """An object in a reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def _alive(refs: list[weakref.ref[Cycle]]) -> int:
    return sum(1 for r in refs if r() is not None)


def test_synced_freezes_what_survives_a_collection(unfrozen: None) -> None:
    refs = [weakref.ref(Cycle())]
    collector = IdleCollector(clock=ManualClock(0.0))
    collector.synced()
    assert gc.get_freeze_count() > 0
    assert _alive(refs) == 0  # collected before the freeze, not frozen as garbage


def test_idle_refreezes_only_when_the_period_has_passed(unfrozen: None) -> None:
    clock = ManualClock(0.0)
    collector = IdleCollector(freeze_period=30.0, full_period=600.0, clock=clock)
    collector.idle()  # before the informers synced: nothing
    assert (collector.freezes, gc.get_freeze_count()) == (0, 0)
    collector.synced()
    kept = [Cycle() for _ in range(10)]
    clock.t = 29.0
    collector.idle()
    assert collector.freezes == 1
    before = gc.get_freeze_count()
    clock.t = 30.0
    collector.idle()
    assert collector.freezes == 2
    assert gc.get_freeze_count() >= before + len(kept)  # what was allocated since, frozen


def test_the_full_period_frees_cycles_that_died_frozen(unfrozen: None) -> None:
    clock = ManualClock(0.0)
    collector = IdleCollector(freeze_period=30.0, full_period=600.0, clock=clock)
    doomed = [Cycle() for _ in range(5)]
    refs = [weakref.ref(c) for c in doomed]
    collector.synced()
    del doomed[:]  # garbage now, but frozen: a refreeze does not walk it
    clock.t = 30.0
    collector.idle()
    assert _alive(refs) == 5
    clock.t = 600.0
    collector.idle()
    assert (_alive(refs), collector.full_collections) == (0, 1)
    assert gc.get_freeze_count() > 0
    collector.close()
    assert gc.get_freeze_count() == 0
