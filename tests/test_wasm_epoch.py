"""wasm/epoch.py: the keepers of the engine's epoch (the native watchdog for compiled
instances, the Python ticker for the ctypes path only while one is open) and the deadline
in ticks."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import wasmtime

from wasmsched.wasm._fastpath import NATIVE_ENV, FastInstance, engine, native_available
from wasmsched.wasm.epoch import TICK_SECONDS, deadline_ticks, python_ticks


def test_python_ticker_counts_for_the_ctypes_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # the Python ticker keeps the epoch for the ctypes path (the compiled path's watchdog
    # ticks only during its calls)
    monkeypatch.setenv(NATIVE_ENV, "0")
    inst = FastInstance(
        wasmtime.Module(engine(), "(module)"), {}, memory_limit=1 << 20, timeout_ms=100
    )
    before = python_ticks[0]
    time.sleep(TICK_SECONDS * 4)
    assert python_ticks[0] > before
    inst.close()


def test_deadline_ticks_round_up() -> None:
    assert deadline_ticks(1) == 2
    assert deadline_ticks(1000) == 201


_ONLY_COMPILED = """
import threading, time, wasmtime
from wasmsched.wasm._fastpath import FastInstance, GuestTrap, engine
wat = '(module (func (export "loop") (result i32) (loop $l (br $l)) (i32.const 0)))'
inst = FastInstance(wasmtime.Module(engine(), wat), {}, memory_limit=1 << 20, timeout_ms=50)
start = time.monotonic()
try:
    inst.caller("loop", "i32")()
    raise SystemExit("the loop returned")
except GuestTrap as trap:
    assert trap.interrupted, trap
elapsed = time.monotonic() - start
names = sorted(t.name for t in threading.enumerate())
print(names, round(elapsed, 3))
assert names == ["MainThread"], names  # no Python ticker thread
assert 0.045 < elapsed < 1.0, elapsed

import os
os.environ["WASMSCHED_WASM_NATIVE"] = "0"  # a ctypes-path instance starts the ticker
other = FastInstance(wasmtime.Module(engine(), wat), {}, memory_limit=1 << 20, timeout_ms=50)
assert "wasmsched-epoch" in [t.name for t in threading.enumerate()]
other.close()  # the last one that needed it: the thread ends after its next tick
deadline = time.monotonic() + 2
while "wasmsched-epoch" in [t.name for t in threading.enumerate()]:
    assert time.monotonic() < deadline, "the ticker outlived its instances"
    time.sleep(0.01)
os.environ["WASMSCHED_WASM_NATIVE"] = "1"
try:
    inst.caller("loop", "i32")()
except GuestTrap as trap:
    assert trap.interrupted, trap
"""


def test_compiled_instances_need_no_python_ticker() -> None:
    """Only the ctypes path runs the Python ticker thread (which waits on the GIL at every
    tick, woken by every GIL release meanwhile), and only while such an instance is open;
    compiled instances keep their deadlines by the native watchdog alone."""
    if not native_available():
        pytest.skip("the compiled extension was not built")
    env = dict(os.environ, **{NATIVE_ENV: "1"})
    run = subprocess.run(
        [sys.executable, "-c", _ONLY_COMPILED], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr


_FORKED = """
import os, time, wasmtime
from wasmsched.wasm._fastpath import FastInstance, GuestTrap, engine
wat = '(module (func (export "loop") (result i32) (loop $l (br $l)) (i32.const 0)))'
module = wasmtime.Module(engine(), wat)
os.environ["WASMSCHED_WASM_NATIVE"] = "1"
compiled = FastInstance(module, {}, memory_limit=1 << 20, timeout_ms=50)
os.environ["WASMSCHED_WASM_NATIVE"] = "0"
plain = FastInstance(module, {}, memory_limit=1 << 20, timeout_ms=50)
pid = os.fork()
if pid == 0:
    import signal
    signal.alarm(10)  # a child whose guest is never interrupted dies instead of spinning
    code = 0
    for inst in (compiled, plain):  # the child's keepers must interrupt both
        start = time.monotonic()
        try:
            inst.caller("loop", "i32")()
            code = 3
        except GuestTrap as trap:
            if not trap.interrupted or time.monotonic() - start > 2:
                code = 4
    os._exit(code)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
"""


def test_forked_child_keeps_the_epoch_of_inherited_instances() -> None:
    """Threads do not survive fork(): the child restarts the watchdog and the Python
    ticker that the instances it inherited need (a runaway guest in the child would
    otherwise never be interrupted)."""
    if not native_available():
        pytest.skip("the compiled extension was not built")
    run = subprocess.run(
        [sys.executable, "-c", _FORKED], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
