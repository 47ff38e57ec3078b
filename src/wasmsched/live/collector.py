"""The garbage collector in the live mode: full collections at idle moments, not mid-cycle.

CPython's full (generation 2) collection walks every tracked object while every thread
waits: with the informers' objects of 500 nodes and 2,400 pods it stopped the process for
243 ms in the middle of the steady pods (``benchmarks/bench_live.py --trace-pods``), and
its cost grows with the cluster. kube-scheduler's collector (Go's) runs concurrently with
its goroutines. So the live loop moves what it holds into the permanent generation
(``gc.freeze``), which the collector no longer walks: once the informers have synced, and
again at an idle moment of the loop every ``freeze_period`` after collecting what was
allocated since (only those objects are walked: a few milliseconds when done every second;
frozen only every 30 s, the 2,000 pods bound after the sync were still young when the
steady pods came, and their automatic full collection took 145 ms). Every
``full_period``, at an idle moment, everything is unfrozen and collected once: a reference
cycle that became garbage after it was frozen is freed then.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

FREEZE_PERIOD = 1.0
FULL_PERIOD = 600.0


class IdleCollector:
    """Freezes the objects the loop holds; collects at idle moments of the loop."""

    def __init__(
        self,
        freeze_period: float = FREEZE_PERIOD,
        full_period: float = FULL_PERIOD,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.freeze_period = freeze_period
        self.full_period = full_period
        self.clock = clock
        self.frozen_at: float | None = None
        self.full_at = 0.0
        self.freezes = 0
        self.full_collections = 0

    def synced(self) -> None:
        """The informers' first lists are in: collect, then freeze what survived."""
        gc.collect()
        gc.freeze()
        self.frozen_at = self.full_at = self.clock()
        self.freezes += 1

    def idle(self) -> None:
        """The loop has nothing to schedule: the periodic freeze or full collection if due
        (a clock read otherwise)."""
        if self.frozen_at is None:
            return
        now = self.clock()
        if now - self.full_at >= self.full_period:
            gc.unfreeze()
            gc.collect()
            self.full_at = now
            self.full_collections += 1
        elif now - self.frozen_at >= self.freeze_period:
            gc.collect()
        else:
            return
        gc.freeze()
        self.frozen_at = now
        self.freezes += 1

    def close(self) -> None:
        """Back to the collector's own rules (the loop has stopped)."""
        if self.frozen_at is not None:
            gc.unfreeze()
            self.frozen_at = None
