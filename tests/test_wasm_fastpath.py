"""The fast boundary (wasm/_fastpath.py) against wasmtime's public API: same results, same
traps, host exceptions become traps, memory access, deadlines and memory caps."""

from __future__ import annotations

import time

import pytest
import wasmtime

from wasmsched.wasm import _fastpath
from wasmsched.wasm._fastpath import (
    FastInstance,
    GuestTrap,
    HostFunction,
    LinkError,
    ProcExit,
    engine,
    native_module,
)
from wasmsched.wasm.epoch import python_ticks

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

WAT = f"""
(module
  (import "h" "add" (func $add (param i32 i32) (result i32)))
  (import "h" "boom" (func $boom))
  (import "h" "wide" (func $wide (param i32 i64 i32) (result i64)))
  (import "h" "exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "seven") (result i32) i32.const 7)
  (func (export "i32min") (result i32) i32.const {INT32_MIN})
  (func (export "i32max") (result i32) i32.const {INT32_MAX})
  (func (export "i64min") (result i64) i64.const {INT64_MIN})
  (func (export "i64max") (result i64) i64.const {INT64_MAX})
  (func (export "i64neg") (result i64) i64.const -5)
  (func (export "void"))
  (func (export "add") (result i32) (call $add (i32.const 1) (i32.const 2)))
  (func (export "addneg") (result i32) (call $add (i32.const -1) (i32.const 0)))
  (func (export "wide") (result i64)
    (call $wide (i32.const 3) (i64.const -2) (i32.const 4)))
  (func (export "boom") (result i32) (call $boom) i32.const 0)
  (func (export "exit") (result i32) (call $exit (i32.const 3)) i32.const 0)
  (func (export "unreachable") (result i32) unreachable)
  (func (export "divzero") (result i32) (i32.div_s (i32.const 1) (i32.const 0)))
  (func (export "oob") (result i32) (i32.load (i32.const 70000)))
  (func (export "loop") (result i32) (loop $l (br $l)) i32.const 0)
  (func (export "grow") (result i32) (memory.grow (i32.const 64)))
  (func $rec (export "stack") (result i32) (call $rec))
)
"""

RESULTS = {
    "seven": "i32",
    "i32min": "i32",
    "i32max": "i32",
    "i64min": "i64",
    "i64max": "i64",
    "i64neg": "i64",
    "void": None,
    "add": "i32",
    "addneg": "i32",
    "wide": "i64",
    "unreachable": "i32",
    "divzero": "i32",
    "oob": "i32",
    "stack": "i32",
}


class Boom(Exception):
    pass


def _boom() -> None:
    raise Boom("kaboom")


def _exit(code: int) -> None:
    raise ProcExit(code)


def host_functions() -> dict[tuple[str, str], HostFunction]:
    return {
        ("h", "add"): HostFunction(("i32", "i32"), ("i32",), lambda a, b: a + b + 40),
        ("h", "boom"): HostFunction((), (), _boom),
        ("h", "wide"): HostFunction(
            ("i32", "i64", "i32"), ("i64",), lambda a, b, c: (a * 100 + c) * 2**40 + b
        ),
        ("h", "exit"): HostFunction(("i32",), (), _exit),
    }


@pytest.fixture(scope="module")
def module() -> wasmtime.Module:
    return wasmtime.Module(engine(), WAT)


@pytest.fixture
def fast(module: wasmtime.Module) -> FastInstance:
    inst = FastInstance(module, host_functions(), memory_limit=8 << 20, timeout_ms=100)
    yield inst
    inst.close()


def public_instance(module: wasmtime.Module) -> tuple[wasmtime.Store, wasmtime.Instance]:
    """The same module through wasmtime's public API, with equivalent host functions."""
    store = wasmtime.Store(engine())
    store.set_epoch_deadline(10**9)
    i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()

    def add(a: int, b: int) -> int:
        return a + b + 40

    def wide(a: int, b: int, c: int) -> int:
        return (a * 100 + c) * 2**40 + b

    funcs = [
        wasmtime.Func(store, wasmtime.FuncType([i32, i32], [i32]), add),
        wasmtime.Func(store, wasmtime.FuncType([], []), _boom),
        wasmtime.Func(store, wasmtime.FuncType([i32, i64, i32], [i64]), wide),
        wasmtime.Func(store, wasmtime.FuncType([i32], []), _exit),
    ]
    return store, wasmtime.Instance(store, module, funcs)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_fast_call_matches_public_api(
    module: wasmtime.Module, fast: FastInstance, name: str
) -> None:
    store, instance = public_instance(module)
    func = instance.exports(store)[name]
    try:
        expected: object = func(store)
    except wasmtime.Trap as trap:
        expected = ("trap", trap.message, trap.trap_code)
    call = fast.caller(name, RESULTS[name])
    try:
        got: object = call()
    except GuestTrap as trap:
        code = None if trap.trap_code is None else wasmtime.TrapCode(trap.trap_code)
        got = ("trap", trap.message, code)
    if RESULTS[name] is None:
        assert expected is None and got == 0
    else:
        assert got == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("i32min", INT32_MIN),
        ("i32max", INT32_MAX),
        ("i64min", INT64_MIN),
        ("i64max", INT64_MAX),
        ("i64neg", -5),
        ("add", 43),
        ("addneg", 39),  # the host sees u32 0xffffffff; the result is truncated to i32
        ("wide", (3 * 100 + 4) * 2**40 - 2),
    ],
)
def test_results_round_trip(fast: FastInstance, name: str, value: int) -> None:
    assert fast.caller(name, RESULTS[name])() == value


def test_host_exception_becomes_trap_with_cause(
    module: wasmtime.Module, fast: FastInstance
) -> None:
    with pytest.raises(GuestTrap) as info:
        fast.caller("boom", "i32")()
    assert "host function h.boom failed: kaboom" in info.value.message
    assert isinstance(info.value.__cause__, Boom)
    # The public API fails the same call with the Python exception itself.
    store, instance = public_instance(module)
    with pytest.raises(Boom):
        instance.exports(store)["boom"](store)
    # The instance stays usable and no exception lingers for the next call.
    assert fast.caller("seven", "i32")() == 7


def test_proc_exit_reports_exit_code(fast: FastInstance) -> None:
    with pytest.raises(GuestTrap) as info:
        fast.caller("exit", "i32")()
    assert info.value.exit_code == 3
    assert "exit status 3" in info.value.message


def test_deadline_interrupts_infinite_loop(module: wasmtime.Module) -> None:
    inst = FastInstance(module, host_functions(), memory_limit=1 << 20, timeout_ms=50)
    start = time.perf_counter()
    with pytest.raises(GuestTrap) as info:
        inst.caller("loop", "i32")()
    elapsed = time.perf_counter() - start
    assert info.value.interrupted
    assert "deadline of 50 ms exceeded" in info.value.message
    assert 0.04 < elapsed < 1.0
    # A new call gets a fresh deadline.
    assert inst.caller("seven", "i32")() == 7
    inst.close()


def test_deadline_is_armed_once_per_epoch_tick(
    module: wasmtime.Module, monkeypatch: pytest.MonkeyPatch
) -> None:
    armed: list[int] = []
    real = _fastpath._set_deadline

    def counting(ctx: object, ticks: object) -> None:
        armed.append(python_ticks[0])
        real(ctx, ticks)

    monkeypatch.setattr(_fastpath, "_set_deadline", counting)
    inst = FastInstance(module, host_functions(), memory_limit=1 << 20, timeout_ms=100)
    seven = inst.caller("seven", "i32")
    armed.clear()
    first = _ticks()
    for _ in range(3000):
        assert seven() == 7
    ticks = _ticks() - first
    # At most one re-arm per epoch tick (plus the first call), never one per call.
    assert 1 <= len(armed) <= ticks + 1
    if inst._native is None:  # each re-arm of the ctypes path follows a Python tick
        assert len(set(armed)) == len(armed)
    inst.close()


def _ticks() -> int:
    """Epoch ticks so far: the Python ticker's and the native watchdog's."""
    native = native_module()
    return python_ticks[0] + (native.watchdog_ticks() if native is not None else 0)


@pytest.mark.parametrize("idle", [0.0, 0.12])
def test_deadline_after_idle_is_fresh(module: wasmtime.Module, idle: float) -> None:
    """An instance idle for longer than its timeout neither traps at once (its old deadline
    has passed) nor escapes the deadline: the call re-arms it."""
    inst = FastInstance(module, host_functions(), memory_limit=1 << 20, timeout_ms=30)
    assert inst.caller("seven", "i32")() == 7
    time.sleep(idle)
    assert inst.caller("seven", "i32")() == 7
    start = time.perf_counter()
    with pytest.raises(GuestTrap) as info:
        inst.caller("loop", "i32")()
    assert info.value.interrupted
    assert 0.029 < time.perf_counter() - start < 1.0  # never before the timeout
    assert inst.caller("seven", "i32")() == 7  # the passed deadline is re-armed
    inst.close()


def test_memory_cap_makes_grow_fail(module: wasmtime.Module) -> None:
    capped = FastInstance(module, host_functions(), memory_limit=2 << 20, timeout_ms=100)
    assert capped.caller("grow", "i32")() == -1  # 64 more pages would exceed 2 MiB
    roomy = FastInstance(module, host_functions(), memory_limit=8 << 20, timeout_ms=100)
    assert roomy.caller("grow", "i32")() == 1
    capped.close()
    roomy.close()


def test_memory_read_write_and_bounds(fast: FastInstance) -> None:
    assert fast.write(100, b"hello")
    assert fast.read(100, 5) == b"hello"
    assert fast.read(65530, 6) == bytes(6)
    assert fast.read(65531, 6) is None
    assert not fast.write(65534, b"abc")
    assert fast.read(5, 0) == b""
    assert fast.fill(100, 0, 5) and fast.read(100, 5) == bytes(5)


def test_memory_base_is_stable_when_memory_grows(fast: FastInstance) -> None:
    base = fast.memory_base()
    fast.write(10, b"x")
    assert fast.caller("grow", "i32")() == 1
    assert fast.memory_size() == 65 * 65536
    assert fast.memory_base() == base
    # Beyond the old size now works: the size is re-read on demand.
    assert fast.write(65 * 65536 - 3, b"end")
    assert fast.read(65 * 65536 - 3, 3) == b"end"
    assert fast.read(10, 1) == b"x"


def test_calls_after_close_raise_instead_of_crashing(module: wasmtime.Module) -> None:
    inst = FastInstance(module, host_functions(), memory_limit=1 << 20, timeout_ms=100)
    call = inst.caller("seven", "i32")
    inst.close()
    with pytest.raises(GuestTrap, match="closed"):
        call()
    assert inst.closed and inst.read(0, 4) is None


def test_unknown_import_is_a_link_error(module: wasmtime.Module) -> None:
    partial = host_functions()
    del partial[("h", "wide")]
    with pytest.raises(LinkError, match=r"h\.wide"):
        FastInstance(module, partial, memory_limit=1 << 20, timeout_ms=100)


def test_instantiation_beyond_memory_cap_fails() -> None:
    big = wasmtime.Module(engine(), '(module (memory (export "memory") 100))')
    with pytest.raises(GuestTrap):
        FastInstance(big, {}, memory_limit=1 << 20, timeout_ms=100)


def test_no_import_call_is_fast(fast: FastInstance) -> None:
    call = fast.caller("seven", "i32")
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(2000):
            call()
        best = min(best, (time.perf_counter() - start) / 2000)
    assert best < 3e-6, f"{best * 1e6:.2f} us per call"
