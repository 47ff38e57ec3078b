"""The dispatcher's calls in flight: climbing against a slow server, staying low on a busy one."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable

import pytest

from live_support import ManualClock
from wasmsched.live.dispatcher import (
    API_CALLS_FLOOR,
    DEFAULT_API_WORKERS,
    Dispatcher,
    InFlightLimit,
)


def run_rounds(
    limit: InFlightLimit,
    clock: ManualClock,
    rate_at: Callable[[int], float],
    seconds: float,
    waiting: bool = True,
) -> list[int]:
    """Answers calls at ``rate_at(limit)`` per second for ``seconds``; the limits seen."""
    seen = [limit.limit]
    end = clock.t + seconds
    while clock.t < end:
        clock.t += 1.0 / rate_at(limit.limit)
        limit.answered(waiting)
        if limit.limit != seen[-1]:
            seen.append(limit.limit)
    return seen


@pytest.mark.parametrize(
    ("name", "rate_at", "seconds", "waiting", "path", "final"),
    [
        # 200 ms an answer whatever the load: every doubling doubles the rate.
        ("slow server", lambda n: n / 0.2, 1.5, True, [8, 16, 32, 64], 64),
        # A server that answers 400 calls/s however many wait: the probe up is undone.
        ("busy server", lambda n: 400.0, 1.5, True, [8, 16, 8], 8),
        # The callers, not the limit, set the rate: nothing to learn, nothing changes.
        ("no backlog", lambda n: n / 0.2, 3.0, False, [8], 8),
        # Rates up to 32 in flight, then flat: 64 is not kept.
        ("saturates at 32", lambda n: min(n, 32) / 0.1, 1.0, True, [8, 16, 32, 64, 32], 32),
    ],
)
def test_in_flight_limit_climbs_only_while_it_pays(
    name: str,
    rate_at: Callable[[int], float],
    seconds: float,
    waiting: bool,
    path: list[int],
    final: int,
) -> None:
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    assert run_rounds(limit, clock, rate_at, seconds, waiting) == path, name
    assert limit.limit == final


def test_in_flight_limit_comes_down_when_the_server_stops_keeping_up() -> None:
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    run_rounds(limit, clock, lambda n: n / 0.2, 2.0)
    assert limit.limit == 64
    # The server now answers 300 calls/s however many are in flight: the probes down
    # (one a hold apart) are kept, back to the floor.
    seen = run_rounds(limit, clock, lambda n: 300.0, 10.0)
    assert seen[:3] == [64, 32, 16] and limit.limit == 8


def test_in_flight_limit_backs_off_its_probes() -> None:
    # A busy server: each failed probe waits twice as long before the next one.
    clock = ManualClock()
    limit = InFlightLimit(8, 64, hold=1.0, clock=clock)
    probes: list[float] = []
    end = clock.t + 20.0
    while clock.t < end:
        clock.t += 1.0 / 400
        before = limit.limit
        limit.answered(True)
        if limit.limit > before:
            probes.append(clock.t)
    gaps = [b - a for a, b in itertools.pairwise(probes)]
    assert len(probes) >= 4
    assert all(later > earlier * 1.5 for earlier, later in itertools.pairwise(gaps))
    assert max(gaps) <= 8.0 + 0.5


@pytest.mark.parametrize(("floor", "ceiling", "start"), [(8, 1, 1), (8, 4, 4), (2, 16, 2)])
def test_in_flight_limit_stays_within_the_workers(floor: int, ceiling: int, start: int) -> None:
    clock = ManualClock()
    limit = InFlightLimit(floor, ceiling, clock=clock)
    assert limit.limit == start
    seen = run_rounds(limit, clock, lambda n: n / 0.05, 3.0)
    assert all(1 <= n <= ceiling for n in seen)


class Server:
    """Calls that take ``seconds`` each, at most ``capacity`` at once (None: no bound)."""

    def __init__(self, seconds: float, capacity: int | None = None) -> None:
        self.seconds = seconds
        self._slots = threading.Semaphore(capacity) if capacity else None
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def call(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            if self._slots is None:
                time.sleep(self.seconds)
            else:
                with self._slots:
                    time.sleep(self.seconds)
        finally:
            with self._lock:
                self.in_flight -= 1


def test_a_slow_server_gets_every_worker_quickly() -> None:
    # 200 ms an answer: 8 calls at a time would take 3.2 s for these 128.
    server = Server(0.2)
    d = Dispatcher()
    try:
        started = time.monotonic()
        for i in range(128):
            d.submit(f"pod-{i}", server.call)
        assert d.drain(30)
        took = time.monotonic() - started
    finally:
        d.close()
    assert server.peak == DEFAULT_API_WORKERS
    assert took < 2.0, f"{took:.2f} s"


def test_a_server_that_cannot_go_faster_gets_few_calls_at_once() -> None:
    # Two calls at a time, 5 ms each: 400 calls/s however many wait. 64 in flight
    # would only queue in the server.
    server = Server(0.005, capacity=2)
    d = Dispatcher()
    try:
        for i in range(300):
            d.submit(f"pod-{i}", server.call)
        assert d.drain(30)
    finally:
        d.close()
    assert server.peak <= 2 * API_CALLS_FLOOR
    assert d.calls.limit.limit == API_CALLS_FLOOR


def test_a_key_never_has_two_calls_in_flight() -> None:
    d = Dispatcher(workers=16)
    running: dict[str, int] = {}
    overlaps: list[str] = []
    lock = threading.Lock()

    def call(key: str) -> Callable[[], None]:
        def run() -> None:
            with lock:
                running[key] = running.get(key, 0) + 1
                if running[key] > 1:
                    overlaps.append(key)
            time.sleep(0.002)
            with lock:
                running[key] -= 1

        return run

    try:
        for _ in range(20):
            for key in ("a", "b", "c"):
                d.submit(key, call(key))
        assert d.drain(30)
    finally:
        d.close()
    assert overlaps == []


def test_a_filling_event_queue_gets_more_workers() -> None:
    # Events are dropped once their queue is full: as it fills, more go out at once
    # whatever the climb says (all 16 workers once a quarter full; 2 by the climb).
    release = threading.Event()
    server_lock = threading.Lock()
    running = [0]
    peak = [0]

    def event() -> None:
        with server_lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        release.wait(10)
        with server_lock:
            running[0] -= 1

    d = Dispatcher(event_workers=16, event_queue_length=24)
    try:
        for _ in range(6):
            d.submit_event(event)
        deadline = time.monotonic() + 10
        while peak[0] < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        release.set()
        assert d.drain(10)
    finally:
        d.close()
    assert peak[0] == 6 and d.dropped_events == 0
