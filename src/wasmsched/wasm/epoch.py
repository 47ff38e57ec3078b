"""What advances the engine's epoch, the clock of every guest call's deadline.

Two keepers, by call path (wasm/_fastpath.py explains the deadline itself):

* the compiled path's watchdog, a C thread of the extension (native/_native.c): it ticks
  only while a compiled call runs, which keeps the GIL, and the compiled callers re-arm on
  its own count;
* the Python ticker, a daemon thread, for instances on the ctypes path (and for compiled
  ones when the watchdog could not start): it bumps ``python_ticks`` just before the
  engine's epoch, and runs only while such an instance is open. Waiting on the GIL at
  every tick, it was woken by every GIL release of the scheduling thread meanwhile (a
  context switch each: a quarter of a wasm plugin's cost in a scheduling cycle), so a
  process whose instances are all compiled has no such thread.

While both run, the Python ticker leaves the engine's epoch to the watchdog during a
compiled call (``native_calls_held``), so that no interval is ticked twice. A forked child
starts again whichever keepers the instances it inherited need.
"""

from __future__ import annotations

import math
import os
import threading
import time
from ctypes import c_void_p, cast

import wasmtime
from wasmtime import _ffi as ffi

from wasmsched.wasm.native import native_calls_held, start_native_watchdog

__all__ = ["TICK_SECONDS", "deadline_ticks", "keep_epoch", "python_ticks", "release_python_ticker"]

TICK_SECONDS = 0.005
"""Epoch period: the resolution of per-call deadlines."""

python_ticks: list[int] = [0]
"""The Python ticker's count, bumped just before the engine's epoch (the native watchdog
has its own count, native/_native.c)."""

_increment_epoch = ffi.dll._FuncPtr(("wasmtime_engine_increment_epoch", ffi.dll))
_increment_epoch.argtypes = None  # type: ignore[assignment]
_increment_epoch.restype = None

_lock = threading.Lock()
_engine_ptr = 0  # the engine whose epoch is kept (one per process)
_watchdog = False  # the native watchdog runs
_ticker: threading.Thread | None = None
_ticker_users = 0  # open instances that need the Python ticker


def _tick_forever(engine_ptr: c_void_p) -> None:
    global _ticker
    sleep = time.sleep
    ticks = python_ticks
    held = native_calls_held()
    while True:
        sleep(TICK_SECONDS)
        ticks[0] += 1  # each value is a distinct int object: callers compare by identity
        if held is None or not held():  # during a compiled call the watchdog ticks
            _increment_epoch(engine_ptr)
        if not _ticker_users:
            with _lock:
                if not _ticker_users:  # the last instance that needed it is closed
                    _ticker = None
                    return


def keep_epoch(engine: wasmtime.Engine, native: bool) -> bool:
    """Starts the keeper a new instance needs (the watchdog for a compiled one, else the
    Python ticker); True when that is the Python ticker: the instance then counts as its
    user until it calls ``release_python_ticker``."""
    global _watchdog, _ticker_users, _engine_ptr
    if native and _watchdog:
        return False
    ptr = cast(engine.ptr(), c_void_p).value or 0
    with _lock:
        _engine_ptr = ptr
        if native and not _watchdog:
            _watchdog = start_native_watchdog(ptr, TICK_SECONDS)
            if _watchdog:
                return False
        _ticker_users += 1
        _start_ticker()
        return True


def _start_ticker() -> None:
    global _ticker
    if _ticker is None:
        ptr = c_void_p(_engine_ptr)
        thread = threading.Thread(
            target=_tick_forever, args=(ptr,), name="wasmsched-epoch", daemon=True
        )
        thread.start()
        _ticker = thread


def release_python_ticker() -> None:
    """An instance that needed the Python ticker is closed."""
    global _ticker_users
    with _lock:
        _ticker_users = max(0, _ticker_users - 1)


def _restart_after_fork() -> None:
    """Threads do not survive fork(): the child starts again the keepers that the
    instances it inherited need (native/_native.c has reset the watchdog's state)."""
    global _lock, _ticker, _watchdog, _ticker_users
    _lock = threading.Lock()  # another thread may have held it at the fork
    _ticker = None
    inherited_watchdog, _watchdog = _watchdog, False
    if inherited_watchdog:
        _watchdog = start_native_watchdog(_engine_ptr, TICK_SECONDS)
        if not _watchdog:
            _ticker_users += 1  # the compiled instances' calls now rely on it: for good
    if _ticker_users:
        _start_ticker()


os.register_at_fork(after_in_child=_restart_after_fork)


def deadline_ticks(timeout_ms: int) -> int:
    """Epoch ticks for a timeout: rounded up, plus one for the partial current tick."""
    return max(1, math.ceil(timeout_ms / (TICK_SECONDS * 1000))) + 1
