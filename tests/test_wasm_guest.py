"""wasm/guest.py: the per-guest CallLock (mutual exclusion, blocking, wake-ups)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial

import pytest

from wasmsched.wasm.guest import CallLock


def test_uncontended_acquire_and_release() -> None:
    lock = CallLock()
    assert not lock.locked()
    lock.acquire()
    assert lock.locked() and lock.free == []
    lock.release()
    assert not lock.locked() and lock.free == [True]
    with lock:
        assert lock.locked()
    assert not lock.locked()


def test_contended_acquire_blocks_until_release() -> None:
    lock = CallLock()
    lock.acquire()
    got = threading.Event()

    def waiter() -> None:
        lock.acquire()
        got.set()
        lock.release()

    thread = threading.Thread(target=waiter)
    thread.start()
    deadline = time.monotonic() + 5
    while lock.waiters == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert lock.waiters == 1 and not got.is_set()
    lock.release()  # must wake the sleeping waiter
    assert got.wait(5)
    thread.join()
    assert lock.waiters == 0 and not lock.locked()


def _inlined_acquire(lock: CallLock) -> None:
    # what the plugin's hot paths do instead of calling acquire()
    try:
        lock.free.pop()
    except IndexError:
        lock.wait()


def _inlined_release(lock: CallLock) -> None:
    lock.free.append(True)
    if lock.waiters:
        lock.wake()


@pytest.mark.parametrize("inlined", [False, True], ids=["methods", "inlined"])
def test_threads_are_mutually_excluded(inlined: bool) -> None:
    lock = CallLock()
    acquire: Callable[[], None] = lock.acquire
    release: Callable[[], None] = lock.release
    if inlined:
        acquire = partial(_inlined_acquire, lock)
        release = partial(_inlined_release, lock)
    inside = 0
    overlaps = 0
    total = 0

    def worker() -> None:
        nonlocal inside, overlaps, total
        for i in range(400):
            acquire()
            inside += 1
            if inside != 1:
                overlaps += 1
            value = total
            if i % 7 == 0:
                time.sleep(0)  # let another thread run while we hold the lock
            total = value + 1
            inside -= 1
            release()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads)  # nobody left asleep
    assert overlaps == 0 and total == 1600
    assert not lock.locked() and lock.waiters == 0
