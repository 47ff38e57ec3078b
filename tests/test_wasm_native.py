"""wasmsched.wasm._native (the compiled call path) against the ctypes path of _fastpath:
the same guests give the same results, errors and traps on both; the whole wasm and
conformance suites also run once more on the path this run does not use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import wasmtime

from wasmsched.wasm._fastpath import (
    NATIVE_ENV,
    FastInstance,
    GuestTrap,
    HostFunction,
    engine,
    native_available,
)
from wasmsched.wasm.host import CallContext, LogRecord, PluginEnv, k8s_functions

ROOT = Path(__file__).resolve().parent.parent
PATHS = [
    "ctypes",
    pytest.param(
        "native",
        marks=pytest.mark.skipif(
            not native_available(), reason="the compiled extension was not built"
        ),
    ),
]

WAT = """
(module
  (import "k8s.io/scheduler" "currentNodeName" (func $name (param i32 i32) (result i32)))
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (import "k8s.io/klog" "logs" (func $logs (param i32 i32 i32 i32 i32)))
  (import "test" "wide" (func $wide (param i64 i32) (result i64)))
  (import "test" "boom" (func $boom))
  (memory (export "memory") 1)
  (data (i32.const 1024) "hello\\n")
  (data (i32.const 1100) "k\\00v\\00odd\\00")
  (global $sev (mut i32) (i32.const 0))
  (func (export "name_at_0") (result i32) (call $name (i32.const 0) (i32.const 64)))
  (func (export "name_small") (result i32) (call $name (i32.const 0) (i32.const 3)))
  (func (export "name_oob") (result i32) (call $name (i32.const 65534) (i32.const 64)))
  (func (export "log_info") (call $log (i32.const 0) (i32.const 1024) (i32.const 6)))
  (func (export "log_error") (call $log (i32.const 2) (i32.const 1024) (i32.const 6)))
  (func (export "log_negative") (call $log (i32.const -1) (i32.const 1024) (i32.const 6)))
  (func (export "logs_error")
    (call $logs (i32.const 2) (i32.const 1024) (i32.const 5) (i32.const 1100) (i32.const 10)))
  (func (export "wide") (result i64) (call $wide (i64.const -5) (i32.const -1)))
  (func (export "boom") (call $boom))
  (func (export "neg") (result i32) (i32.const -7))
  (func (export "neg64") (result i64) (i64.const -8589934592))
)
"""


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(NATIVE_ENV, "1" if request.param == "native" else "0")
    return str(request.param)


class Boom(Exception):
    pass


def _instance(severity: int = 1) -> tuple[FastInstance, CallContext, list[Any]]:
    logs: list[Any] = []
    ctx = CallContext(PluginEnv("native-test", None, "", severity, [], logs))
    seen: list[Any] = []

    def wide(a: int, b: int) -> int:
        seen.append((a, b))
        return a + 1

    def boom() -> None:
        raise Boom("kaboom")

    host = dict(k8s_functions(ctx))
    host[("test", "wide")] = HostFunction(("i64", "i32"), ("i64",), wide)
    host[("test", "boom")] = HostFunction((), (), boom)
    inst = FastInstance(wasmtime.Module(engine(), WAT), host, memory_limit=1 << 20, timeout_ms=5000)
    ctx.inst = inst
    return inst, ctx, seen


def test_path_is_the_one_asked_for(path: str) -> None:
    inst, _, _ = _instance()
    assert (inst._native is not None) == (path == "native")
    inst.close()


@pytest.mark.parametrize(
    ("export", "node", "result", "written"),
    [
        ("name_at_0", "node-a", 6, b"node-a"),
        ("name_at_0", "", 0, b"\0" * 6),
        ("name_small", "node-a", 6, b"\0" * 6),  # too long for the limit: nothing written
        ("name_at_0", "nöde", 5, "nöde".encode()),
    ],
)
def test_current_node_name(path: str, export: str, node: str, result: int, written: bytes) -> None:
    inst, ctx, _ = _instance()
    ctx.node_name = node
    assert inst.caller(export, "i32")() == result
    assert inst.read(0, len(written)) == written
    inst.close()


def test_current_node_name_out_of_bounds_traps(path: str) -> None:
    inst, ctx, _ = _instance()
    ctx.node_name = "node-a"
    with pytest.raises(GuestTrap) as info:
        inst.caller("name_oob", "i32")()
    assert "host function k8s.io/scheduler.currentNodeName failed: out of memory" in str(info.value)
    # the instance stays usable
    assert inst.caller("name_at_0", "i32")() == 6
    inst.close()


@pytest.mark.parametrize(
    ("severity", "export", "expected"),
    [
        (1, "log_info", []),  # below the configured severity: dropped
        (1, "log_negative", []),  # -1 is signed, below 1
        (1, "log_error", [LogRecord(2, "hello")]),
        (0, "log_info", [LogRecord(0, "hello")]),
        (
            1,
            "logs_error",
            [LogRecord(2, "hello", (("k", "v"), ("odd", "(MISSING)")), structured=True)],
        ),
    ],
)
def test_klog_gate(path: str, severity: int, export: str, expected: list[LogRecord]) -> None:
    inst, ctx, _ = _instance(severity)
    inst.caller(export, None)()
    assert ctx.env.logs == expected
    inst.close()


def test_i64_arguments_and_results(path: str) -> None:
    inst, _, seen = _instance()
    assert inst.caller("wide", "i64")() == -4
    assert seen == [(2**64 - 5, 2**32 - 1)]  # arguments as unsigned ints, as documented
    assert inst.caller("neg", "i32")() == -7
    assert inst.caller("neg64", "i64")() == -8589934592
    inst.close()


def test_host_exception_is_the_trap_cause(path: str) -> None:
    inst, _, _ = _instance()
    boom = inst.caller("boom", None)
    with pytest.raises(GuestTrap) as info:
        boom()
    assert isinstance(info.value.__cause__, Boom)
    assert "host function test.boom failed: kaboom" in str(info.value)
    inst.close()
    with pytest.raises(GuestTrap, match="closed"):
        boom()  # a caller made before close raises instead of touching freed memory


@pytest.mark.parametrize(
    ("data", "kvs"),
    [
        (b"plain\n", None),
        (b"plain", None),
        (b"caf\xc3\xa9\n", None),
        (b"bad \xff", None),
        (b"msg", b"a\x00b\x00"),
        (b"msg", b"a\x00\x00b\x00c\x00tail"),
        (b"msg", b"k\x00v\xc3\xa9\x00"),
        (b"msg", b"tail-only"),
    ],
)
def test_log_record_lazy_equals_eager(data: bytes, kvs: bytes | None) -> None:
    lazy = LogRecord.from_guest(2, data, kvs)
    text = data.decode("utf-8", "replace")
    if kvs is None:
        eager = LogRecord(2, text[:-1] if text.endswith("\n") else text)
    else:
        items = [p.decode("utf-8", "replace") for p in kvs.split(b"\0")[:-1] if p]
        if len(items) % 2:
            items.append("(MISSING)")
        eager = LogRecord(
            2, text, tuple(zip(items[::2], items[1::2], strict=True)), structured=True
        )
    assert lazy.size == eager.size
    assert lazy == eager
    assert lazy.text == eager.text


@pytest.mark.skipif(
    not native_available() or os.environ.get(NATIVE_ENV) == "0",
    reason="runs once, from the run on the compiled path",
)
def test_suites_pass_on_the_ctypes_path() -> None:
    """The wasm and conformance suites, again with the compiled path switched off."""
    files = sorted(
        str(p.relative_to(ROOT))
        for pattern in ("test_wasm_*.py", "test_conformance_*.py")
        for p in (ROOT / "tests").glob(pattern)
    )
    env = dict(os.environ, **{NATIVE_ENV: "0"})
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# --- the compiled klog case (native/_native.c: log_fast) against the Python functions ------

LOG_WAT = """
(module
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (import "k8s.io/klog" "logs" (func $logs (param i32 i32 i32 i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "hello\\n")
  (data (i32.const 1100) "k\\00v\\00odd\\00tail")
  (data (i32.const 1200) "caf\\c3\\a9")
  (data (i32.const 1300) "\\00\\00x\\00")
  (func (export "plain") (call $log (i32.const 0) (i32.const 1024) (i32.const 6)))
  (func (export "warn") (call $log (i32.const 1) (i32.const 1024) (i32.const 5)))
  (func (export "debug") (call $log (i32.const -1) (i32.const 1024) (i32.const 6)))
  (func (export "big_severity") (call $log (i32.const 7) (i32.const 1024) (i32.const 6)))
  (func (export "kvs")
    (call $logs (i32.const 2) (i32.const 1024) (i32.const 5) (i32.const 1100) (i32.const 14)))
  (func (export "kvs_empty_parts")
    (call $logs (i32.const 0) (i32.const 1024) (i32.const 5) (i32.const 1300) (i32.const 4)))
  (func (export "no_kvs")
    (call $logs (i32.const 0) (i32.const 1024) (i32.const 6) (i32.const 1100) (i32.const 0)))
  (func (export "non_ascii") (call $log (i32.const 0) (i32.const 1200) (i32.const 5)))
  (func (export "unreadable") (call $log (i32.const 0) (i32.const 65530) (i32.const 100)))
  (func (export "too_big") (call $log (i32.const 0) (i32.const 0) (i32.const 65537)))
  (func (export "twice")
    (call $log (i32.const 0) (i32.const 1024) (i32.const 6))
    (call $logs (i32.const 0) (i32.const 1024) (i32.const 5) (i32.const 1100) (i32.const 4)))
)
"""
LOG_EXPORTS = (
    "plain",
    "warn",
    "debug",
    "big_severity",
    "kvs",
    "kvs_empty_parts",
    "no_kvs",
    "non_ascii",
    "unreadable",
    "too_big",
    "twice",
)


class _Pod:
    def __init__(self, uid: str) -> None:
        self.uid = uid


def _log_run(
    path: str,
    severity: int,
    script: list[tuple[str, str | None]],
    levels: dict[int, str] | None = None,
) -> list[Any]:
    """Runs ``(export, pod uid)`` calls on ``path`` (one Pod object per uid, so a pod comes
    back as the same object, as in a scheduling cycle), setting the logger's level to
    ``levels[i]`` before call ``i``; what each call leaves behind."""
    import logging

    os.environ[NATIVE_ENV] = "1" if path == "native" else "0"
    try:
        logs: list[Any] = []
        ctx = CallContext(PluginEnv("native-logs", None, "", severity, [], logs))
        inst = FastInstance(
            wasmtime.Module(engine(), LOG_WAT),
            k8s_functions(ctx),
            memory_limit=1 << 20,
            timeout_ms=5000,
        )
    finally:
        del os.environ[NATIVE_ENV]
    ctx.inst = inst
    assert (inst._native is not None) == (path == "native")
    shown: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: shown.append(f"{record.levelname} {record.getMessage()}")  # type: ignore[method-assign]
    logger = logging.getLogger("wasmsched.wasm.native-logs")
    logger.addHandler(handler)
    seen: list[Any] = []
    pods: dict[str, _Pod] = {}
    old_level = logger.level
    try:
        for i, (export, uid) in enumerate(script):
            if levels and i in levels:
                logger.setLevel(levels[i])
            ctx.pod = None if uid is None else pods.setdefault(uid, _Pod(uid))
            try:
                inst.caller(export, None)()
                trap = None
            except GuestTrap as exc:
                trap = exc.message
            seen.append(
                (
                    export,
                    trap,
                    [(r.severity, r.text, r.size, r.structured) for r in logs],
                    bool(ctx.dirty),
                    ctx.used,
                    ctx.cycle_used,
                    ctx.cycle_uid,
                    list(shown),
                )
            )
            ctx.reset_results()
    finally:
        logger.setLevel(old_level)
        logger.removeHandler(handler)
        inst.close()
    return seen


@pytest.mark.skipif(not native_available(), reason="the compiled extension was not built")
@pytest.mark.parametrize("severity", [0, 1, 3])
@pytest.mark.parametrize("level", ["NOTSET", "WARNING", "CRITICAL"])
def test_klog_records_alike_on_both_paths(severity: int, level: str) -> None:
    """Every case of log/logs (severities, key/values, non-ASCII, unreadable, over budget,
    a new cycle, several records in a call) leaves the same records, sizes, charges and
    shown lines on the compiled path as through the Python functions, whatever the
    logger's level (the C side consults the level cache, Python decides)."""
    import logging

    logger = logging.getLogger("wasmsched.wasm.native-logs")
    old = logger.level
    logger.setLevel(level)
    try:
        uids = ["a", "a", None, "b", "b"]
        script = [(e, uids[i % len(uids)]) for i, e in enumerate(LOG_EXPORTS * 2)]
        assert _log_run("native", severity, script) == _log_run("ctypes", severity, script)
    finally:
        logger.setLevel(old)


@pytest.mark.skipif(not native_available(), reason="the compiled extension was not built")
def test_klog_level_changes_are_seen_at_once() -> None:
    """The compiled path remembers the logger's level cache between records: a level set
    between two calls still decides the very next record (setLevel clears that cache in
    place), as on the Python path."""
    script = [("twice", "a"), ("plain", "a"), ("kvs", "b"), ("twice", "b"), ("plain", "a")]
    levels = {0: "CRITICAL", 1: "DEBUG", 2: "CRITICAL", 3: "INFO", 4: "ERROR"}
    native = _log_run("native", 0, script, levels)
    assert native == _log_run("ctypes", 0, script, levels)
    shown_after = [len(step[-1]) for step in native]
    # shown: nothing at CRITICAL, call 1's record at DEBUG, call 3's two at INFO, not
    # call 4's INFO record at ERROR
    assert shown_after == [0, 1, 1, 3, 3]


@pytest.mark.skipif(not native_available(), reason="the compiled extension was not built")
def test_klog_retention_alike_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """The retention limits trim the same records on both paths."""
    from wasmsched.wasm import budget
    from wasmsched.wasm._fastpath import configure_native_logs

    limits = (budget.LOG_RECORD_BYTES, budget.CALL_BYTES, budget.CYCLE_BYTES)
    retained = (budget.RETAINED_LOGS, budget.RETAINED_LOG_BYTES)
    monkeypatch.setattr(budget, "RETAINED_LOGS", 5)
    monkeypatch.setattr(budget, "RETAINED_LOG_BYTES", 40)
    configure_native_logs(LogRecord, CallContext, PluginEnv, (*limits, 5, 40))
    try:
        script = [("twice", "a"), ("plain", "a"), ("kvs", "a")] * 4
        native = _log_run("native", 0, script)
        assert native == _log_run("ctypes", 0, script)
        assert "log records dropped" in native[-1][2][0][1]
    finally:
        configure_native_logs(LogRecord, CallContext, PluginEnv, (*limits, *retained))


_SPIN_WAT = """
(module
  (import "test" "spin" (func $spin))
  (func (export "spin") (local $i i32)
    ;; the loop's back edge checks the epoch deadline after each host call
    (loop $again
      (call $spin)
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 32)))))
)
"""


@pytest.mark.parametrize("share", [0.7, 3.0])
def test_host_time_counts_once_against_the_deadline(path: str, share: float) -> None:
    """A compiled call keeps the GIL and the native watchdog ticks for it; Python host code
    inside the call lets the Python ticker run too (kept running for the ctypes path's
    instances: one is made first), which must then leave the engine's epoch alone: a call
    whose host work takes 0.7 of its deadline succeeds (with both ticking, anything over
    half would fail; 0.7 leaves a loaded machine room for the rest of the call), one that
    takes three deadlines fails on the deadline."""
    import time

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(NATIVE_ENV, "0")
        ticked = FastInstance(wasmtime.Module(engine(), "(module)"), {}, memory_limit=1 << 20,
                              timeout_ms=10)  # fmt: skip

    timeout_ms = 200
    spin_s = timeout_ms / 1000 * share / 32

    def spin() -> None:
        end = time.monotonic() + spin_s
        while time.monotonic() < end:  # Python bytecode: the ticker thread gets the GIL
            pass

    host = {("test", "spin"): HostFunction((), (), spin)}
    inst = FastInstance(
        wasmtime.Module(engine(), _SPIN_WAT), host, memory_limit=1 << 20, timeout_ms=timeout_ms
    )
    try:
        call = inst.caller("spin", None)
        if share < 1:
            for _ in range(3):
                call()
        else:
            with pytest.raises(GuestTrap, match="deadline of 200 ms exceeded"):
                call()
    finally:
        inst.close()
        ticked.close()


def test_log_records_are_not_gc_objects() -> None:
    """With the extension, LogRecord is not a GC class (each GC allocation counts towards
    the next collection); its instances still release what they hold, pickle, copy and
    compare as before."""
    import copy
    import gc
    import pickle

    if not native_available():
        pytest.skip("the compiled extension was not built")
    message = "".join(["held by one record only ", str(id(object()))])
    before = sys.getrefcount(message)
    record = LogRecord(1, message, (("k", "v"),), structured=True)
    assert sys.getrefcount(message) == before + 1
    assert not gc.is_tracked(record)
    assert not type(record).__flags__ & (1 << 14)  # Py_TPFLAGS_HAVE_GC
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record and copy.copy(record).text == record.text
    del record
    assert sys.getrefcount(message) == before

    counts = gc.get_count()[0]
    guest = [LogRecord.from_guest(0, b"msg", b"k\x00v\x00") for _ in range(50)]
    assert gc.get_count()[0] <= counts + 5  # the list, not the records
    assert all(r.text == '"msg" k="v"' for r in guest)
