"""The dispatcher's calls in flight: every worker, fewer against a server that thrashes."""

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


def thrashing(n: int) -> float:
    """A server that answers fewer calls a second the more it is sent at once."""
    return 4000.0 / n**0.5


@pytest.mark.parametrize(
    ("name", "rate_at", "seconds", "waiting", "path"),
    [
        # 200 ms an answer whatever the load: halving halves the rate, so 64 stay.
        ("slow server", lambda n: n / 0.2, 1.5, True, [64, 32, 64]),
        # 400 calls/s however many wait: fewer are no better, so 64 stay.
        ("busy server", lambda n: 400.0, 1.5, True, [64, 32, 64]),
        # Each halving answers 1.4x more: down to the floor.
        ("thrashing server", thrashing, 1.0, True, [64, 32, 16, 8]),
        # Best at 16: halving pays twice, the third halving does not.
        ("best at 16", lambda n: 160.0 * min(n, 256 / n), 2.0, True, [64, 32, 16, 8, 16]),
        # The callers, not the limit, set the rate: nothing to learn, nothing changes.
        ("no backlog", thrashing, 3.0, False, [64]),
    ],
)
def test_in_flight_limit_comes_down_only_where_fewer_answer_more(
    name: str,
    rate_at: Callable[[int], float],
    seconds: float,
    waiting: bool,
    path: list[int],
) -> None:
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    assert run_rounds(limit, clock, rate_at, seconds, waiting) == path, name
    assert limit.limit == path[-1]


def test_in_flight_limit_goes_back_up_when_the_server_recovers() -> None:
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    run_rounds(limit, clock, thrashing, 2.0)
    assert limit.limit == 8
    # The server now answers in 200 ms however many are in flight: after a hold, the
    # probes up are kept, one after the other.
    seen = run_rounds(limit, clock, lambda n: n / 0.2, 10.0)
    assert seen[:4] == [8, 16, 32, 64] and limit.limit == 64


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
        if limit.limit < before:
            probes.append(clock.t)
    gaps = [b - a for a, b in itertools.pairwise(probes)]
    assert len(probes) >= 4
    assert all(later > earlier * 1.5 for earlier, later in itertools.pairwise(gaps))
    assert max(gaps) <= 8.0 + 0.5


@pytest.mark.parametrize(("floor", "ceiling", "start"), [(8, 1, 1), (8, 4, 4), (2, 16, 16)])
def test_in_flight_limit_stays_within_the_workers(floor: int, ceiling: int, start: int) -> None:
    clock = ManualClock()
    limit = InFlightLimit(floor, ceiling, clock=clock)
    assert limit.limit == start
    seen = run_rounds(limit, clock, thrashing, 3.0)
    assert all(1 <= n <= ceiling for n in seen)


class Server:
    """Calls that take ``seconds(n)`` each, ``n`` the calls in flight when one starts;
    ``started_with`` keeps each call's ``n``."""

    def __init__(self, seconds: Callable[[int], float]) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self.in_flight = 0
        self.started_with: list[int] = []

    def call(self) -> None:
        with self._lock:
            self.in_flight += 1
            n = self.in_flight
            self.started_with.append(n)
        try:
            time.sleep(self.seconds(n))
        finally:
            with self._lock:
                self.in_flight -= 1


def test_a_slow_server_gets_every_worker_quickly() -> None:
    # 200 ms an answer: 8 calls at a time would take 3.2 s for these 128.
    server = Server(lambda n: 0.2)
    d = Dispatcher()
    try:
        started = time.monotonic()
        for i in range(128):
            d.submit(f"pod-{i}", server.call)
        assert d.drain(30)
        took = time.monotonic() - started
    finally:
        d.close()
    assert max(server.started_with) == DEFAULT_API_WORKERS
    assert took < 2.0, f"{took:.2f} s"


def test_a_server_that_thrashes_gets_fewer_calls_at_once() -> None:
    # Each call takes 0.05 ms times the square of the calls in flight when it starts:
    # 64 at once answer about 310 calls/s, 8 at once about 2500.
    server = Server(lambda n: 0.00005 * n * n)
    d = Dispatcher()
    try:
        for i in range(1500):
            d.submit(f"pod-{i}", server.call)
        assert d.drain(60)
    finally:
        d.close()
    started_with = server.started_with
    assert max(started_with[:100]) > 2 * API_CALLS_FLOOR  # all the workers at first
    # Later, at most 16 at once but for a probe back up now and then (a round of 32 and
    # the calls answered while it settles); the fixed pool started every one with 64.
    late = started_with[-400:]
    assert sum(1 for n in late if n > 2 * API_CALLS_FLOOR) < len(late) // 4


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
