"""The dispatcher's calls in flight: a few, more where more answer more; its warm workers."""

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
    latency_at: Callable[[int], float],
    seconds: float,
    waiting: bool = True,
) -> list[int]:
    """Answers calls for ``seconds``, each taking ``latency_at(limit)`` with ``limit`` in
    flight (so ``limit / latency`` answers a second); the limits seen."""
    seen = [limit.limit]
    end = clock.t + seconds
    while clock.t < end:
        n = limit.limit
        latency = latency_at(n)
        clock.t += latency / n
        limit.answered(latency, waiting)
        if limit.limit != seen[-1]:
            seen.append(limit.limit)
    return seen


def slow(n: int) -> float:
    """A server 200 ms away: every call takes as long, however many are in flight."""
    return 0.2


def busy(n: int) -> float:
    """A server answering 400 calls a second whatever is sent: its latency is its queue."""
    return n / 400.0


def thrashing(n: int) -> float:
    """A server that answers fewer calls a second the more it is sent at once."""
    return n / (4000.0 / n**0.5)


def best_at_16(n: int) -> float:
    """Up to 16 at once each call takes as long; beyond, they queue and slow it down."""
    return n / (160.0 * min(n, 256 / n))


@pytest.mark.parametrize(
    ("name", "latency_at", "seconds", "waiting", "path"),
    [
        # No queueing, and each doubling doubles the rate: up to the ceiling, and there.
        ("slow server", slow, 2.0, True, [8, 16, 32, 64]),
        # More at once only queue: one probe up, not kept.
        ("busy server", busy, 1.5, True, [8, 16, 8]),
        ("thrashing server", thrashing, 1.5, True, [8, 16, 8]),
        # Doubling pays once, the second doubling does not.
        ("best at 16", best_at_16, 1.5, True, [8, 16, 32, 16]),
        # The callers, not the limit, set the rate: nothing to learn, nothing changes.
        ("no backlog", slow, 3.0, False, [8]),
    ],
)
def test_in_flight_limit_climbs_only_where_more_answer_more(
    name: str,
    latency_at: Callable[[int], float],
    seconds: float,
    waiting: bool,
    path: list[int],
) -> None:
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    assert run_rounds(limit, clock, latency_at, seconds, waiting) == path, name
    assert limit.limit == path[-1]


def test_in_flight_limit_comes_down_when_the_server_queues() -> None:
    # Far away at first: up to 64. Then every call waits in the server's queue (400 a
    # second whatever is sent): halving answers as many, so down to the floor.
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    run_rounds(limit, clock, slow, 2.0)
    assert limit.limit == 64
    seen = run_rounds(limit, clock, busy, 10.0)
    assert seen[:4] == [64, 32, 16, 8] and limit.limit == 8


def test_in_flight_limit_climbs_once_the_shortest_call_is_forgotten() -> None:
    # A thrashing local server, then one 200 ms away: its calls look queued beside the
    # local server's shortest until that leaves the window (10 to 20 s), then it climbs.
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    run_rounds(limit, clock, thrashing, 2.0)
    assert limit.limit == 8
    seen = run_rounds(limit, clock, slow, 8.0)
    assert seen == [8]
    seen = run_rounds(limit, clock, slow, 20.0)
    assert seen[:4] == [8, 16, 32, 64] and limit.limit == 64


def test_in_flight_limit_ignores_calls_that_never_reached_a_server() -> None:
    # Writes fenced off before they were sent answer at once: they are not the server's
    # shortest call, and a server 200 ms away still gets every worker.
    clock = ManualClock()
    limit = InFlightLimit(8, 64, clock=clock)
    for _ in range(20):
        limit.answered(0.00001, True)
    assert run_rounds(limit, clock, slow, 2.0) == [8, 16, 32, 64]


def test_in_flight_limit_backs_off_its_probes() -> None:
    # A busy server: each failed probe waits twice as long before the next one.
    clock = ManualClock()
    limit = InFlightLimit(8, 64, hold=1.0, clock=clock)
    probes: list[float] = []
    end = clock.t + 20.0
    while clock.t < end:
        latency = busy(limit.limit)
        clock.t += latency / limit.limit
        before = limit.limit
        limit.answered(latency, True)
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
    seen = run_rounds(limit, clock, slow, 3.0) + run_rounds(limit, clock, busy, 10.0)
    assert all(start <= n <= ceiling for n in seen)


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
    # 200 ms an answer: 8 calls at a time would take 8 s for these 320, all 64 1 s.
    server = Server(lambda n: 0.2)
    d = Dispatcher()
    try:
        started = time.monotonic()
        for i in range(320):
            d.submit(f"pod-{i}", server.call)
        assert d.drain(30)
        took = time.monotonic() - started
    finally:
        d.close()
    assert max(server.started_with) == DEFAULT_API_WORKERS
    assert took < 4.0, f"{took:.2f} s"


def test_a_server_that_thrashes_keeps_few_calls_in_flight() -> None:
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
    # At most 16 at once but for a probe now and then; starting at every worker, the
    # first calls went out 64 at once.
    assert sum(1 for n in started_with if n > 2 * API_CALLS_FLOOR) < len(started_with) // 10
    assert len(d.threads) <= DEFAULT_API_WORKERS // 2


def test_calls_one_at_a_time_take_one_thread() -> None:
    # The most recently idle worker takes the next call: one call at a time is carried by
    # one thread (and its kept-alive connection) however many the lane may start.
    names: list[str] = []

    def call() -> None:
        names.append(threading.current_thread().name)

    d = Dispatcher()
    try:
        for i in range(50):
            d.submit(f"pod-{i}", call)
            assert d.drain(10)
            time.sleep(0.001)
    finally:
        d.close()
    assert len(names) == 50 and len(set(names)) == 1
    assert len(d.threads) == 1


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


@pytest.mark.parametrize(("queued", "in_flight"), [(12, 4), (18, 8), (24, 16)])
def test_a_filling_event_queue_gets_more_workers(queued: int, in_flight: int) -> None:
    # Events are dropped once their queue is full: past half full more go out at once,
    # whatever the limit says (4 at the floor, all 16 workers once full).
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
        for _ in range(queued):
            d.submit_event(event)
        deadline = time.monotonic() + 10
        while peak[0] < in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # no more than that start
        release.set()
        assert d.drain(10)
    finally:
        d.close()
    assert peak[0] == in_flight and d.dropped_events == 0
