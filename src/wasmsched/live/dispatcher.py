"""The worker threads that run the live mode's API calls, and how many run at once.

Bindings, status patches and deletes go through one lane, events through another. Each
lane has a fixed set of threads (``--api-workers``, ``--event-workers``) and lets
``limit`` calls be in flight: all of its workers (against an API server 200 ms away the
lane needs its 64; kube-scheduler binds each pod on a goroutine of its own), fewer only
while fewer answer clearly more calls a second, as a server that thrashes under load
does (``InFlightLimit``; benchmarks/README.md, "Calls in flight").

Calls with the same key (a pod's uid) run one at a time, in the order they were submitted;
every waiting call stays in the lane's one queue until a worker is free, so a slow call
never holds up the calls of other keys behind it.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable

log = logging.getLogger("wasmsched.live.dispatcher")

Job = Callable[[], None]

DEFAULT_API_WORKERS = 64
DEFAULT_EVENT_WORKERS = 16
EVENT_QUEUE_LENGTH = 1000
# The fewest calls in flight a lane goes down to (capped by its workers).
API_CALLS_FLOOR = 8
EVENT_CALLS_FLOOR = 2


class InFlightLimit:
    """How many calls may be in flight: as many as the workers, fewer only where fewer
    answer clearly more calls a second.

    The lane reports each answer (``answered``) and whether calls were waiting for a
    worker then. A *round* is ``limit`` answers and at least ``min_round`` seconds; only
    a round in which calls waited at every answer says what the limit allows (otherwise
    the callers, not the limit, set the rate). The limit starts at the ceiling, as
    kube-scheduler sends each binding from a goroutine of its own. After a full round it
    may be probed: halved, and kept only if the next full round answered ``gain`` times
    as many calls a second (a server that gets slower with more calls at once: then
    halved again at once), or doubled back, and kept if the rate holds at ``keep`` times
    (more calls at once cost nothing: then doubled again at once). A probe that fails goes
    back to the limit it left and the next one goes the other way, after ``hold``
    seconds, doubled at each failure up to 8 holds. The clock is injectable for the tests.
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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.floor = max(1, min(floor, self.ceiling))
        self.limit = self.ceiling
        self._min_round = min_round
        self._hold = hold
        self._gain = gain
        self._keep = keep
        self._clock = clock
        self._round_start = clock()
        self._answers = 0
        self._full = True
        # Answers still to ignore after the limit changed: the calls sent under the old
        # limit, whose answers say nothing of the new one.
        self._settling = 0
        # The limit a probe left and the rate measured there; None when not probing.
        self._probe_from: int | None = None
        self._probe_from_rate = 0.0
        # The next probe: its direction and when; each failed probe doubles the wait
        # before the next (up to 8 holds), a kept one resets it.
        self._next_up = False
        self._next_probe_at = self._round_start
        self._wait = hold

    def started_idle(self) -> None:
        """A call started with none in flight or waiting: a round starts now, not when
        the lane last had work."""
        self._round_start, self._answers, self._full = self._clock(), 0, True

    def answered(self, waiting: bool) -> None:
        """One call answered; ``waiting``: calls were queued for a worker at that moment."""
        if self._settling:
            self._settling -= 1
            if not self._settling:
                self.started_idle()
            return
        self._answers += 1
        self._full = self._full and waiting
        if self._answers < self.limit:
            return
        now = self._clock()
        elapsed = now - self._round_start
        if elapsed < self._min_round:
            return
        full, answers = self._full, self._answers
        self._round_start, self._answers, self._full = now, 0, True
        if full:
            # Otherwise the callers set this round's rate: a probe in progress goes on.
            self._step(answers / elapsed, now)

    def _step(self, rate: float, now: float) -> None:
        before = self.limit
        if self._probe_from is not None:
            left, left_rate = self._probe_from, self._probe_from_rate
            self._probe_from = None
            up = self.limit > left
            if rate >= left_rate * (self._keep if up else self._gain):
                # Kept: the next step the same way at once, while there is room.
                self._next_up = up
                self._wait = self._hold
                room = self.limit < self.ceiling if up else self.limit > self.floor
                self._next_probe_at = now if room else now + self._hold
            else:
                self.limit = left
                self._next_up = not up
                self._next_probe_at = now + self._wait
                self._wait = min(self._wait * 2, self._hold * 8)
        if self._probe_from is None and now >= self._next_probe_at:
            up = self._next_up
            if up and self.limit >= self.ceiling:
                up = False
            elif not up and self.limit <= self.floor:
                up = True
            target = min(self.ceiling, self.limit * 2) if up else max(self.floor, self.limit // 2)
            if target != self.limit:
                self._probe_from, self._probe_from_rate = self.limit, rate
                self.limit = target
        if self.limit != before:
            self._settling = max(self.limit, before)
            log.debug("calls in flight limit=%d was=%d rate=%.0f/s", self.limit, before, rate)


class _Lane:
    """One queue of calls and its workers; calls of one key run one at a time, in order."""

    def __init__(
        self,
        name: str,
        workers: int,
        floor: int,
        lock: threading.Lock,
        done: Callable[[], None],
        capacity: int | None = None,
    ) -> None:
        self.limit = InFlightLimit(floor, workers)
        self._capacity = capacity
        self._ready = threading.Condition(lock)
        self._done = done
        # Keys with a call queued or running, each with its queued calls in order, and the
        # keys whose next call may start (none of theirs is running).
        self._calls: dict[object, deque[Job]] = {}
        self._startable: deque[object] = deque()
        self.queued = 0
        self.running = 0
        self.closed = False
        self.abandoned = 0
        self.threads = [
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
            for i in range(self.limit.ceiling)
        ]

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
            if self.running < self._allowed():
                self._ready.notify()
        else:
            calls.append(job)
        return True

    def _allowed(self) -> int:
        """The calls that may be in flight: the limit, or more as a bounded queue fills
        (every worker once a quarter full). Its calls come as fast as the callers make
        them and a full queue drops what comes next, so it must keep up whatever the
        limit says (client-go posts each event on a goroutine of its own)."""
        if self._capacity is None:
            return self.limit.limit
        outstanding = self.queued + self.running
        wanted = -(-self.limit.ceiling * outstanding * 4 // self._capacity)
        return max(self.limit.limit, wanted)

    def close(self) -> None:
        """Workers take what is left, abandon it, and stop (under the dispatcher's lock)."""
        self.closed = True
        self._ready.notify_all()

    def _work(self) -> None:
        lock = self._ready
        while True:
            with lock:
                while not self._startable or (self.running >= self._allowed() and not self.closed):
                    if self.closed and not self._startable:
                        return
                    lock.wait()
                key = self._startable.popleft()
                job = self._calls[key].popleft()
                self.queued -= 1
                self.running += 1
                abandon = self.closed
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
                self.limit.answered(bool(self._startable))
                free = self._allowed() - self.running
                if free > 0 and self._startable:
                    lock.notify(min(free, len(self._startable)))
                self._done()


class Dispatcher:
    """Worker threads running API calls; calls with the same key run in submission order.

    ``workers`` threads take the per-pod calls (bindings, status patches, deletes) and
    ``event_workers`` the events, from a queue of ``event_queue_length``: the most calls
    each lane can have in flight. With an API server answering in 200 ms, 64 workers allow
    320 bindings/s and 16 event workers 80 events/s; kube-scheduler binds each pod on its
    own goroutine and the event broadcaster keeps 1000 queued events (client-go
    tools/record: maxQueuedEvents). A lane goes down to 8 and 2 calls in flight where
    fewer answer clearly more (``InFlightLimit``). ``on_drop`` is told the total each
    time an event is dropped.
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
        self._threads = self.calls.threads + self.events.threads
        for t in self._threads:
            t.start()

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
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        if self.abandoned:
            log.warning("API calls abandoned at shutdown count=%d", self.abandoned)
