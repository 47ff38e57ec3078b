"""The worker threads that run the live mode's API calls, and how many run at once.

Bindings, status patches and deletes go through one lane, events through another. Each
lane starts threads as calls need them, up to its workers (``--api-workers``,
``--event-workers``), the most recently idle taking the next call, and lets ``limit``
calls be in flight: a few, and more only while more answer clearly more calls a second
(against an API server 200 ms away the lane needs its 64), as ``InFlightLimit`` judges
(benchmarks/README.md, "Warm workers").

Calls with the same key (a pod's uid) run one at a time, in the order they were submitted;
every waiting call stays in the lane's one queue until a worker is free, so a slow call
never holds up the calls of other keys behind it.
"""

from __future__ import annotations

import itertools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

log = logging.getLogger("wasmsched.live.dispatcher")

Job = Callable[[], None]

DEFAULT_API_WORKERS = 64
DEFAULT_EVENT_WORKERS = 16
EVENT_QUEUE_LENGTH = 1000
# The calls in flight a lane starts at and goes down to (capped by its workers).
API_CALLS_FLOOR = 8
EVENT_CALLS_FLOOR = 4
# A call answered sooner never reached a server (a write fenced off before it was sent,
# a job with nothing to send): it says nothing of the server's latency or rate, and is
# left out of both. A request through live/http.py takes longer than this before it is
# even on the wire.
NO_ROUND_TRIP = 0.0001


class InFlightLimit:
    """How many calls may be in flight: a few, more only while more answer clearly more
    calls a second, as against a server far away.

    The lane reports each answer (``answered``): how long the call took and whether calls
    were waiting for a worker then (calls answered within ``NO_ROUND_TRIP`` never reached
    a server and are left out). A *round* is ``limit`` answers and at least
    ``min_round`` seconds; only a round in which calls waited at every answer says what
    the limit allows (otherwise the callers, not the limit, set the rate).

    The limit starts at the floor. A probe doubles it, and only when the round's median
    call took at most ``4/3`` of the shortest call of the last ``base_window`` to
    ``2 * base_window`` seconds: the calls are not queueing at the server, so more at once
    may answer more (TCP Vegas' test). It is kept only if the next full round answered
    ``gain`` times as many calls a second; then the next doubling may follow at once.
    Against a server 200 ms away each doubling doubles the rate, and the limit reaches
    the ceiling in a few rounds. Against a local kube-apiserver on a saturated machine
    the calls queue at the server, and more at once answer no more while costing every
    process more CPU per call (benchmarks/README.md, "Warm workers"): it stays. Otherwise,
    above the floor, a probe halves it, kept if the rate holds at ``keep`` times (fewer
    at once answer as many: a server whose latency is its queue). A probe that fails goes
    back to the limit it left; the next one waits ``hold`` seconds, doubled at each
    failure up to 8 holds. The clock is injectable for the tests.
    """

    def __init__(
        self,
        floor: int,
        ceiling: int,
        *,
        min_round: float = 0.05,
        hold: float = 2.0,
        gain: float = 1.2,
        keep: float = 0.9,
        base_window: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.floor = max(1, min(floor, self.ceiling))
        self.limit = self.floor
        self._min_round = min_round
        self._hold = hold
        self._gain = gain
        self._keep = keep
        self._clock = clock
        self._round_start = clock()
        self._latencies: list[float] = []
        self._full = True
        # The shortest call of the window before and of this one (the unloaded latency).
        self._base_window = base_window
        self._window_end = self._round_start + base_window
        self._shortest_before = math.inf
        self._shortest = math.inf
        # Answers still to ignore after the limit changed: the calls sent under the old
        # limit, whose answers say nothing of the new one.
        self._settling = 0
        # The limit a probe left and the rate measured there; None when not probing.
        self._probe_from: int | None = None
        self._probe_from_rate = 0.0
        # The next probe: its direction after a kept one (None: by the calls' latency)
        # and when; each failed probe doubles the wait before the next (up to 8 holds),
        # a kept one resets it.
        self._next_up: bool | None = None
        self._next_probe_at = self._round_start
        self._wait = hold

    def started_idle(self) -> None:
        """A call started with none in flight or waiting: a round starts now, not when
        the lane last had work."""
        self._round_start, self._full = self._clock(), True
        self._latencies.clear()

    def answered(self, seconds: float, waiting: bool) -> None:
        """One call answered after ``seconds``; ``waiting``: calls were queued for a
        worker at that moment."""
        if seconds <= NO_ROUND_TRIP:
            return
        if seconds < self._shortest:
            self._shortest = seconds
        if self._settling:
            self._settling -= 1
            if not self._settling:
                self.started_idle()
            return
        latencies = self._latencies
        latencies.append(seconds)
        self._full = self._full and waiting
        if len(latencies) < self.limit:
            return
        now = self._clock()
        elapsed = now - self._round_start
        if elapsed < self._min_round:
            return
        if now >= self._window_end:
            self._shortest_before, self._shortest = self._shortest, math.inf
            self._window_end = now + self._base_window
        full, answers = self._full, len(latencies)
        median = sorted(latencies)[answers // 2]
        self.started_idle()
        if full:
            # Otherwise the callers set this round's rate: a probe in progress goes on.
            self._step(answers / elapsed, median, now)

    def _step(self, rate: float, median: float, now: float) -> None:
        before = self.limit
        if self._probe_from is not None:
            left, left_rate = self._probe_from, self._probe_from_rate
            self._probe_from = None
            went_up = self.limit > left
            if rate >= left_rate * (self._gain if went_up else self._keep):
                # Kept: the next step goes the same way, at once while there is room.
                self._wait = self._hold
                room = self.limit < self.ceiling if went_up else self.limit > self.floor
                self._next_up = went_up if room else None
                self._next_probe_at = now if room else now + self._hold
            else:
                self.limit = left
                self._next_up = None
                self._next_probe_at = now + self._wait
                self._wait = min(self._wait * 2, self._hold * 8)
        elif now >= self._next_probe_at:
            if self._next_up is None:
                shortest = min(self._shortest_before, self._shortest)
                up = median * 3 <= shortest * 4
            else:
                up = self._next_up
            if up and self.limit >= self.ceiling:
                up = False
            if up:
                self._probe_from, self._probe_from_rate = self.limit, rate
                self.limit = min(self.ceiling, self.limit * 2)
            elif self.limit > self.floor:
                self._probe_from, self._probe_from_rate = self.limit, rate
                self.limit = max(self.floor, self.limit // 2)
        if self.limit != before:
            self._settling = max(self.limit, before)
            log.debug(
                "calls in flight limit=%d was=%d rate=%.0f/s median=%.1fms",
                self.limit,
                before,
                rate,
                median * 1000,
            )


class _Worker:
    """The lock a lane's thread sleeps on while idle (held while it sleeps)."""

    __slots__ = ("wake", "woken")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()
        # Woken (or started) to look for a call, and not yet looked: counted in the
        # lane's ``waking``, so that a burst of calls does not wake a worker for each.
        self.woken = False


class _Lane:
    """One queue of calls and its workers; calls of one key run one at a time, in order.

    Threads start as calls need them, up to the limit's ceiling, and the most recently
    idle one takes the next call: against a server that answers quickly a few threads
    (and their keep-alive connections) carry every call, kept warm. 64 and 16 threads
    taking turns, as a condition variable's waiters do, cost the API server, etcd and
    this process more CPU per pod against a local kube-apiserver than 8 and 4 did
    (benchmarks/README.md, "Warm workers").
    """

    def __init__(
        self,
        name: str,
        workers: int,
        floor: int,
        lock: threading.Lock,
        done: Callable[[], None],
        capacity: int | None = None,
    ) -> None:
        self.name = name
        self.limit = InFlightLimit(floor, workers)
        self._capacity = capacity
        self._lock = lock
        self._done = done
        # Keys with a call queued or running, each with its queued calls in order, and the
        # keys whose next call may start (none of theirs is running).
        self._calls: dict[object, deque[Job]] = {}
        self._startable: deque[object] = deque()
        # Idle workers, the most recently idle last, and the workers about to look for a
        # call (woken, started, or just done with one).
        self._idle: list[_Worker] = []
        self._waking = 0
        self.queued = 0
        self.running = 0
        self.closed = False
        self.abandoned = 0
        self.threads: list[threading.Thread] = []

    def put(self, key: object, job: Job) -> bool:
        """Queues ``job`` (under the dispatcher's lock); False when the lane is full."""
        if self._capacity is not None and self.queued >= self._capacity:
            return False
        if not self.queued and not self.running:
            self.limit.started_idle()
        self.queued += 1
        calls = self._calls.get(key)
        if calls is None:
            self._calls[key] = deque((job,))
            self._startable.append(key)
        else:
            calls.append(job)
        self._fill()
        return True

    def _fill(self) -> None:
        """Wakes workers for the startable calls that may start now (under the lock),
        less those already about to look."""
        wanted = min(self._allowed() - self.running, len(self._startable)) - self._waking
        if wanted > 0:
            self._wake(wanted)

    def _wake(self, count: int) -> None:
        """Wakes ``count`` workers (under the lock): the most recently idle first, then
        new threads up to the ceiling; beyond that a call waits for a worker to finish."""
        for _ in range(count):
            if self._idle:
                worker = self._idle.pop()
                self._about_to_look(worker)
                worker.wake.release()
            elif len(self.threads) < self.limit.ceiling:
                worker = _Worker()
                self._about_to_look(worker)
                thread = threading.Thread(
                    target=self._work,
                    args=(worker,),
                    name=f"{self.name}-{len(self.threads)}",
                    daemon=True,
                )
                self.threads.append(thread)
                thread.start()
            else:
                return

    def _about_to_look(self, worker: _Worker) -> None:
        """``worker`` will look for a call next (under the lock): counted in ``_waking``
        until it does."""
        worker.woken = True
        self._waking += 1

    def _allowed(self) -> int:
        """The calls that may be in flight: the limit, or more once a bounded queue is
        half full (every worker when it is full). Its calls come as fast as the callers
        make them and a full queue drops what comes next, so it must keep up whatever the
        limit says (client-go posts each event on a goroutine of its own); below half
        full they wait, as more calls at once cost more CPU per call everywhere."""
        if self._capacity is None:
            return self.limit.limit
        excess = 2 * (self.queued + self.running) - self._capacity
        if excess <= 0:
            return self.limit.limit
        return max(self.limit.limit, -(-self.limit.ceiling * excess // self._capacity))

    def close(self) -> None:
        """Workers take what is left, abandon it, and stop (under the dispatcher's lock)."""
        self.closed = True
        self._wake(len(self._idle))

    def _work(self, me: _Worker) -> None:
        lock = self._lock
        while True:
            with lock:
                while True:
                    if me.woken:
                        me.woken = False
                        self._waking -= 1
                    if self._startable and (self.running < self._allowed() or self.closed):
                        break
                    if self.closed:
                        return
                    self._idle.append(me)
                    lock.release()
                    try:
                        me.wake.acquire()
                    finally:
                        lock.acquire()
                key = self._startable.popleft()
                job = self._calls[key].popleft()
                self.queued -= 1
                self.running += 1
                abandon = self.closed
            started = time.perf_counter()
            try:
                if abandon:
                    # Shutting down after the drain deadline: what is left is abandoned,
                    # not sent through a client that is being closed.
                    self.abandoned += 1
                else:
                    job()
            except Exception:
                log.exception("API call failed")
            with lock:
                self.running -= 1
                if self._calls[key]:
                    self._startable.append(key)
                else:
                    del self._calls[key]
                self.limit.answered(time.perf_counter() - started, bool(self._startable))
                # This worker looks for the next call itself; others for the rest allowed.
                self._about_to_look(me)
                self._fill()
                self._done()


class Dispatcher:
    """Worker threads running API calls; calls with the same key run in submission order.

    Up to ``workers`` threads take the per-pod calls (bindings, status patches, deletes)
    and up to ``event_workers`` the events, from a queue of ``event_queue_length``: the
    most calls each lane can have in flight. With an API server answering in 200 ms, 64 workers allow
    320 bindings/s and 16 event workers 80 events/s; kube-scheduler binds each pod on its
    own goroutine and the event broadcaster keeps 1000 queued events (client-go
    tools/record: maxQueuedEvents). A lane starts at 8 and 4 calls in flight and climbs
    where more answer clearly more (``InFlightLimit``). ``on_drop`` is told the total
    each time an event is dropped.
    """

    def __init__(
        self,
        workers: int = DEFAULT_API_WORKERS,
        name: str = "api",
        *,
        event_workers: int = DEFAULT_EVENT_WORKERS,
        event_queue_length: int = EVENT_QUEUE_LENGTH,
        on_drop: Callable[[int], None] = lambda total: None,
    ) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self.calls = _Lane(name, workers, API_CALLS_FLOOR, self._lock, self._one_done)
        self.events = _Lane(
            f"{name}-events",
            event_workers,
            EVENT_CALLS_FLOOR,
            self._lock,
            self._one_done,
            capacity=max(1, event_queue_length),
        )
        # Events have no order to keep: each is a key of its own.
        self._event_keys = itertools.count()
        self.dropped_events = 0
        self.on_drop = on_drop
        self._closed = False

    def submit(self, key: str, job: Job) -> None:
        if self._closed:
            log.warning("dispatcher closed, dropping an API call")
            return
        with self._lock:
            self._pending += 1
            self.calls.put(key, job)

    def submit_event(self, job: Job) -> None:
        if self._closed:
            return
        with self._lock:
            if self.events.put(next(self._event_keys), job):
                self._pending += 1
                return
            self.dropped_events += 1
            total = self.dropped_events
        self.on_drop(total)

    @property
    def pending(self) -> int:
        with self._lock:
            return self._pending

    @property
    def threads(self) -> list[threading.Thread]:
        """The worker threads started so far (they start as calls need them)."""
        with self._lock:
            return self.calls.threads + self.events.threads

    @property
    def abandoned(self) -> int:
        return self.calls.abandoned + self.events.abandoned

    def _one_done(self) -> None:
        """A call ended (under the lock)."""
        self._pending -= 1
        if not self._pending:
            self._idle.notify_all()

    def drain(self, timeout: float) -> bool:
        """Waits until every submitted call has run; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._closed = True
            self.calls.close()
            self.events.close()
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))
        if self.abandoned:
            log.warning("API calls abandoned at shutdown count=%d", self.abandoned)
