"""wasm/budget.py and its use by the host: the deadline counts host time, store limits
cover memory, tables and instances, the per-call and per-cycle byte budgets, and the
bounded retention of a plugin's logs and events."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import wasmtime
from hypothesis import given, settings
from hypothesis import strategies as st

from wasm_support import FakeHandle, make_pod, new_state, node_info
from wasmsched.framework.interfaces import Event, ObjectReference
from wasmsched.framework.status import Code
from wasmsched.wasm import WasmPlugin, WasmPluginConfig, budget
from wasmsched.wasm._fastpath import FastInstance, GuestTrap, HostFunction, engine
from wasmsched.wasm.budget import HostBudgetError
from wasmsched.wasm.host import CallContext, LogRecord, PluginEnv

SLOW_HOST = """
(module
  (import "h" "slow" (func $slow))
  (memory (export "memory") 1)
  (func (export "f") (result i32) (call $slow) (i32.const 0))
)
"""


def test_host_time_counts_against_the_deadline() -> None:
    """A call whose host function overran its deadline fails, though the guest returns 0."""
    module = wasmtime.Module(engine(), SLOW_HOST)
    host = {("h", "slow"): HostFunction((), (), lambda: time.sleep(0.08))}
    inst = FastInstance(module, host, memory_limit=1 << 20, timeout_ms=20)
    try:
        with pytest.raises(GuestTrap) as trap:
            inst.caller("f", "i32")()
        assert trap.value.interrupted
        assert "host function h.slow failed: deadline of 20 ms exceeded" in trap.value.message
        # within the deadline the same call succeeds
        fast = FastInstance(
            module,
            {("h", "slow"): HostFunction((), (), lambda: None)},
            memory_limit=1 << 20,
            timeout_ms=20,
        )
        assert fast.caller("f", "i32")() == 0
        fast.close()
    finally:
        inst.close()


def test_store_limits_share_the_total() -> None:
    limits = budget.store_limits(256 << 20)
    assert limits["memories"] == 1 and limits["instances"] == 1
    assert limits["tables"] == budget.MAX_TABLES
    total = limits["memory_size"] + limits["tables"] * limits["table_elements"] * 8
    assert total == 256 << 20


@pytest.mark.parametrize(
    ("wat", "problem"),
    [
        ("(module (table 300000 funcref))", "table"),  # over 1 MiB/16 of slots
        (
            "(module (table 1 funcref) (table 1 funcref) (table 1 funcref) (table 1 funcref)"
            " (table 1 funcref))",
            "table count too high",
        ),
        ("(module (memory 1) (memory 1))", "memory count too high"),
        ("(module (memory 17))", "memory"),  # over 1 MiB - 1/16
    ],
)
def test_store_limits_refuse_instantiation(wat: str, problem: str) -> None:
    module = wasmtime.Module(engine(), wat)
    with pytest.raises(GuestTrap) as err:
        FastInstance(module, {}, memory_limit=1 << 20, timeout_ms=100).close()
    assert problem in str(err.value)


def _ctx() -> CallContext:
    return CallContext(PluginEnv("p", FakeHandle(), "", 0, [], []))


def test_charge_checks_the_import_limit_before_counting() -> None:
    ctx = _ctx()
    with pytest.raises(
        HostBudgetError, match="reason: 11 bytes exceed the limit of 10 bytes per call"
    ):
        ctx.charge("reason", 11, 10)
    assert ctx.used == 0 and not ctx.dirty
    ctx.charge("reason", 10, 10)
    assert ctx.used == 10 and ctx.dirty


def test_call_budget_resets_after_each_call_and_cycle_budget_per_pod() -> None:
    ctx = _ctx()
    ctx.pod = make_pod("a", uid="uid-a")
    step = budget.CALL_BYTES
    for _ in range(budget.CYCLE_BYTES // step):
        ctx.charge("x", step, step)
        with pytest.raises(HostBudgetError, match="host bytes read in this call"):
            ctx.charge("x", 1, step)
        ctx.reset_results()
    # the cycle of pod "a" is spent; a new pod starts a new cycle
    with pytest.raises(HostBudgetError, match="host bytes read in this cycle"):
        ctx.charge("x", 1, step)
    ctx.pod = make_pod("b", uid="uid-b")
    ctx.charge("x", 1, step)


def test_log_retention_bounds_count_and_bytes_with_a_dropped_line() -> None:
    logs: list[LogRecord] = []
    env = PluginEnv("p", None, "", 0, [], logs)
    for i in range(budget.RETAINED_LOGS + 10):
        env.emit(LogRecord(0, f"m{i}"))
    assert len(logs) <= budget.RETAINED_LOGS
    assert logs[0].message.startswith(f"wasm: {env.logs_dropped} log records dropped")
    assert logs[-1].message == f"m{budget.RETAINED_LOGS + 9}"
    # bytes: a few huge records are dropped too
    big = "x" * (budget.RETAINED_LOG_BYTES // 3)
    for _ in range(4):
        env.emit(LogRecord(0, big))
    assert sum(r.size for r in logs[1:]) <= budget.RETAINED_LOG_BYTES
    assert env.log_bytes == sum(r.size for r in logs[1:])


def test_event_retention_per_plugin() -> None:
    handle = FakeHandle()
    logs: list[LogRecord] = []
    env = PluginEnv("p", handle, "", 0, [], logs)
    event = Event(
        time=0.0,
        regarding=ObjectReference(),
        related=None,
        type="Normal",
        reason="R",
        action="",
        note="",
    )
    env.record_events([(event, 10)] * (budget.RETAINED_EVENTS + 5))
    assert len(handle.events) == budget.RETAINED_EVENTS
    assert env.events_dropped == 5
    env.close()
    assert logs[-1].message == "wasm: 5 events dropped"


def test_event_retention_per_simulation(monkeypatch: pytest.MonkeyPatch) -> None:
    """All wasm plugins sharing a handle share one event budget."""
    monkeypatch.setattr(budget, "RETAINED_EVENTS_PER_SIMULATION", 7)
    handle = FakeHandle()
    first = PluginEnv("a", handle, "", 0, [], [])
    second = PluginEnv("b", handle, "", 0, [], [])
    event = Event(
        time=0.0,
        regarding=ObjectReference(),
        related=None,
        type="Normal",
        reason="R",
        action="",
        note="",
    )
    first.record_events([(event, 1)] * 5)
    second.record_events([(event, 1)] * 5)
    assert len(handle.events) == 7
    assert (first.events_dropped, second.events_dropped) == (0, 3)
    other = FakeHandle()  # another simulation has its own budget
    PluginEnv("c", other, "", 0, [], []).record_events([(event, 1)] * 5)
    assert len(other.events) == 5


NODE_LOOKUP = """
(module
  (import "k8s.io/api" "node" (func $node (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1025)
  (func (export "filter") (result i32)
    (drop (call $node (i32.const 0) (i32.const 0x4000000) (i32.const 0) (i32.const 0)))
    (i32.const 0))
)
"""


def test_node_lookup_with_a_huge_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "lookup.wasm"
    path.write_bytes(wasmtime.wat2wasm(NODE_LOOKUP))
    plugin = WasmPlugin("p", WasmPluginConfig(guest_url=path.as_uri()), FakeHandle())
    try:
        status = plugin.filter(new_state(), make_pod(), node_info("n"))
    finally:
        plugin.close()
    assert status is not None and status.code == Code.ERROR
    assert "k8s.io/api.node failed: node name: 67108864 bytes exceed the limit of 1024" in (
        status.message
    )


def test_forget_pod_starts_a_fresh_cycle_budget(tmp_path: Path) -> None:
    path = tmp_path / "lookup.wasm"
    path.write_bytes(wasmtime.wat2wasm(NODE_LOOKUP.replace("0x4000000", "1")))
    plugin = WasmPlugin("p", WasmPluginConfig(guest_url=path.as_uri()), FakeHandle())
    try:
        pod = make_pod(uid="uid-1")
        assert plugin.filter(new_state(), pod, node_info("n")) is None
        guest = plugin.pool.scheduled
        assert guest is not None
        guest.ctx.cycle_uid, guest.ctx.cycle_used = "uid-1", budget.CYCLE_BYTES
        plugin.forget_pod("uid-1")
        assert guest.ctx.cycle_uid is None  # the next charge for uid-1 starts from zero
    finally:
        plugin.close()


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(0, 30), max_size=60))
def test_log_trimming_drops_the_oldest_until_both_halves_hold(sizes: list[int]) -> None:
    """PluginEnv._trim_logs, against the rule it implements: when a limit is passed, the
    oldest records go until at most half of each limit is kept (the marker aside)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(budget, "RETAINED_LOGS", 8)
        mp.setattr(budget, "RETAINED_LOG_BYTES", 100)
        logs: list[LogRecord] = []
        env = PluginEnv("p", None, "", 0, [], logs)
        model: list[str] = []
        marker = 0  # the "records dropped" line, once there is one: it counts as a record
        for i, size in enumerate(sizes):
            text = f"{i:02d}" + "x" * size
            env.emit(LogRecord(0, text))
            model.append(text)
            if len(model) + marker > 8 or sum(len(t) for t in model) > 100:
                while model and (len(model) > 4 or sum(len(t) for t in model) > 50):
                    model.pop(0)
                marker = 1
        kept = [r.message for r in logs if not r.message.startswith("wasm: ")]
        assert kept == model
        assert env.log_bytes == sum(r.size for r in logs if not r.message.startswith("wasm: "))
