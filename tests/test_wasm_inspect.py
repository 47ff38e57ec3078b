"""wasm/inspect.py: what `wasmsched inspect` reports about a guest."""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from wasmsched.wasm import InspectReport, WasmError, WasmPluginConfig, inspect_wasm

GOOD = """(module
  (import "k8s.io/scheduler" "currentPod" (func (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "score") (result i64) i64.const 0)
  (func (export "prescore") (result i32) i32.const 0)
  (func (export "_start")))"""


def test_enqueue_gives_enqueue_extensions() -> None:
    wat = """(module (memory (export "memory") 1)
      (func (export "enqueue"))
      (func (export "filter") (result i32) i32.const 0))"""
    report = inspect_wasm(wasmtime.wat2wasm(wat))
    assert ("enqueue", "() -> ()") in report.exports
    assert report.extension_points == ["enqueueExtensions", "filter"]
    assert "extension points: enqueueExtensions, filter" in report.to_text()
    assert report.to_dict()["extensionPoints"] == ["enqueueExtensions", "filter"]


def test_report_of_a_loadable_guest(tmp_path: Path) -> None:
    path = tmp_path / "good.wasm"
    path.write_bytes(wasmtime.wat2wasm(GOOD))
    report = inspect_wasm(path)
    assert report.loadable and report.problems == []
    assert report.extension_points == ["preScore", "score"]
    assert report.exports == [
        ("memory", "memory"),
        ("score", "() -> (i64)"),
        ("prescore", "() -> (i32)"),
        ("_start", "() -> ()"),
    ]
    assert report.imports == [
        ("k8s.io/scheduler", "currentPod", "(i32, i32) -> (i32)"),
        ("wasi_snapshot_preview1", "fd_write", "(i32, i32, i32, i32) -> (i32)"),
    ]
    assert report.size == path.stat().st_size and len(report.sha256) == 64
    text = report.to_text()
    assert "extension points: preScore, score" in text
    assert "  k8s.io/scheduler.currentPod (i32, i32) -> (i32)" in text
    assert "loadable: yes" in text
    data = report.to_dict()
    assert data["loadable"] is True and data["extensionPoints"] == ["preScore", "score"]
    assert data["imports"][0] == {
        "module": "k8s.io/scheduler",
        "name": "currentPod",
        "signature": "(i32, i32) -> (i32)",
    }
    assert inspect_wasm(path.as_uri()).sha256 == report.sha256


@pytest.mark.parametrize(
    ("wat", "problem"),
    [
        (
            '(module (memory (export "memory") 1))',
            "wasm: guest does not export any plugin functions",
        ),
        (
            '(module (import "env" "f" (func)) (memory (export "memory") 1) '
            '(func (export "filter") (result i32) i32.const 0))',
            "wasm: guest imports unknown host function env.f",
        ),
        (
            '(module (memory (export "memory") 1) (func (export "_start") unreachable) '
            '(func (export "filter") (result i32) i32.const 0))',
            "failed to create a guest pool: wasm: instantiate error: ",
        ),
    ],
)
def test_report_of_an_unloadable_guest(wat: str, problem: str) -> None:
    report = inspect_wasm(wasmtime.wat2wasm(wat))
    assert not report.loadable
    assert report.problems[0].startswith(problem)
    assert "loadable: no" in report.to_text() and "problem: " + problem in report.to_text()


def test_start_is_not_run_without_instantiate() -> None:
    wat = (
        '(module (memory (export "memory") 1) (func (export "_start") unreachable) '
        '(func (export "filter") (result i32) i32.const 0))'
    )
    assert inspect_wasm(wasmtime.wat2wasm(wat), instantiate=False).loadable


def test_config_is_used_for_instantiation() -> None:
    wat = """(module
      (import "k8s.io/scheduler" "get_config" (func $cfg (param i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "_start") (if (call $cfg (i32.const 0) (i32.const 64)) (then unreachable)))
      (func (export "filter") (result i32) i32.const 0))"""
    binary = wasmtime.wat2wasm(wat)
    assert inspect_wasm(binary).loadable
    config = WasmPluginConfig(guest_url="x", guest_config="boom")
    assert not inspect_wasm(binary, config=config).loadable


def test_not_wasm_and_missing_file(tmp_path: Path) -> None:
    report = inspect_wasm(b"not wasm")
    assert isinstance(report, InspectReport) and not report.loadable
    assert report.problems[0].startswith("wasm: error compiling guest")
    with pytest.raises(WasmError, match=r"missing\.wasm"):
        inspect_wasm(tmp_path / "missing.wasm")
