"""wasm/host.py and wasm/wasi.py: every host import's byte format, driven by small WAT guests
through WasmPlugin (upstream's scheduler/plugin/host.go)."""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import wasmtime

from wasm_support import FakeHandle, make_node, make_pod, node_info
from wasmsched.framework.interfaces import NodeScore, NodeToStatus, PreFilterResult
from wasmsched.framework.node_info import PodInfo
from wasmsched.framework.status import Status
from wasmsched.framework.types import ClusterEvent
from wasmsched.wasm import WasmError, WasmPlugin, WasmPluginConfig
from wasmsched.wasm.encoding import image_states_json, node_list_proto, node_proto, pod_proto
from wasmsched.wasm.host import klog_text

POD = make_pod(node_name="n1")
TARGET = make_pod("target-pod", uid="target-uid")
WAITING = make_pod("waiting", uid="w1", node_name="n2")
BUF = 1024  # where guests read into
_ids = count()


@pytest.fixture
def load(tmp_path: Path) -> Iterator[Callable[..., WasmPlugin]]:
    """Builds a WasmPlugin from WAT text; closes them all afterwards."""
    plugins: list[WasmPlugin] = []

    def build(wat: str, handle: Any = None, **config: Any) -> WasmPlugin:
        path = tmp_path / f"g{next(_ids)}.wasm"
        path.write_bytes(wasmtime.wat2wasm(wat))
        cfg = WasmPluginConfig(guest_url=path.as_uri(), cache_dir=tmp_path / "cache", **config)
        plugin = WasmPlugin("test", cfg, handle if handle is not None else FakeHandle())
        plugins.append(plugin)
        return plugin

    yield build
    for plugin in plugins:
        plugin.close()


def inst(plugin: WasmPlugin) -> Any:
    (guest,) = plugin.pool.instances()
    return guest.inst


def set_args(plugin: WasmPlugin, *values: int) -> None:
    assert inst(plugin).write(0, struct.pack(f"<{len(values)}I", *values))


def code_of(result: Any) -> int:
    status = result[1] if isinstance(result, tuple) else result
    return 0 if status is None else int(status.code)


def call_import_wat(module: str, name: str, nparams: int, export: str, result: str = "i32") -> str:
    """A guest whose ``export`` calls ``module.name`` with i32 args loaded from memory[0..]
    and returns the import's result as the status code."""
    params = " ".join(["i32"] * nparams)
    args = " ".join(f"(i32.load (i32.const {4 * i}))" for i in range(nparams))
    call = f"(call $f {args})"
    body = call if result == "i32" else f"(i64.extend_i32_u {call})"
    extra = ""
    if export == "normalizescore":
        extra = '(func (export "score") (result i64) i64.const 0)'
    return f"""(module
      (import "{module}" "{name}" (func $f (param {params}) (result i32)))
      (memory (export "memory") 2)
      (func (export "{export}") (result {result}) {body})
      {extra})"""


# --- getters: the buffer/limit protocol ---------------------------------------------------


def _statuses() -> NodeToStatus:
    statuses = NodeToStatus(Status(3, "absent"))
    statuses.set("b", Status(2, "no"))
    statuses.set("a", Status(3, "never"))
    return statuses


GETTERS: list[tuple[str, str, str, Callable[[WasmPlugin], Any], Callable[[], bytes]]] = [
    (
        "currentPod",
        "filter",
        "i32",
        lambda p: p.filter(None, POD, node_info("n1")),
        lambda: pod_proto(POD),
    ),
    (
        "currentNodeName",
        "filter",
        "i32",
        lambda p: p.filter(None, POD, node_info("node-7")),
        lambda: b"node-7",
    ),
    (
        "get_config",
        "filter",
        "i32",
        lambda p: p.filter(None, POD, node_info("n1")),
        lambda: "cfg ✓".encode(),
    ),
    (
        "targetPod",
        "addpod",
        "i32",
        lambda p: p.add_pod(None, POD, PodInfo(TARGET), node_info("n1")),
        lambda: pod_proto(TARGET),
    ),
    (
        "filteredNodeList",
        "prescore",
        "i32",
        lambda p: p.pre_score(None, POD, [node_info("b"), node_info("a")]),
        lambda: b'["b","a"]',
    ),
    (
        "nodeToStatusMap",
        "postfilter",
        "i64",
        lambda p: p.post_filter(None, POD, _statuses()),
        lambda: b'{"a":3,"b":2}',
    ),
    (
        "nodeScoreList",
        "normalizescore",
        "i32",
        lambda p: p.normalize_score(None, POD, [NodeScore("b", 5), NodeScore("a", 70)]),
        lambda: b'{"a":70,"b":5}',
    ),
]


@pytest.mark.parametrize(
    ("name", "export", "result", "run", "expected"), GETTERS, ids=[g[0] for g in GETTERS]
)
def test_getter_buffer_limit_protocol(
    load: Callable[..., WasmPlugin],
    name: str,
    export: str,
    result: str,
    run: Callable[[WasmPlugin], Any],
    expected: Callable[[], bytes],
) -> None:
    plugin = load(
        call_import_wat("k8s.io/scheduler", name, 2, export, result), guest_config="cfg ✓"
    )
    want = expected()
    size = len(want)
    for limit in (0, size - 1):  # too small: the length is returned, nothing written
        set_args(plugin, BUF, limit)
        assert code_of(run(plugin)) == size
        assert inst(plugin).read(BUF, size) == bytes(size)
    for limit in (size, size + 100):
        set_args(plugin, BUF, limit)
        assert code_of(run(plugin)) == size
        assert inst(plugin).read(BUF, size + 1) == want + b"\0"


@pytest.mark.parametrize(
    ("name", "export", "run", "expected"),
    [
        ("get_config", "filter", lambda p: p.filter(None, POD, node_info("n1")), 0),
        ("filteredNodeList", "prescore", lambda p: p.pre_score(None, POD, []), 2),  # []
        ("nodeToStatusMap", "postfilter", lambda p: p.post_filter(None, POD, NodeToStatus()), 2),
    ],
)
def test_empty_values(
    load: Callable[..., WasmPlugin], name: str, export: str, run: Callable[..., Any], expected: int
) -> None:
    result = "i64" if export == "postfilter" else "i32"
    plugin = load(call_import_wat("k8s.io/scheduler", name, 2, export, result))
    set_args(plugin, BUF, 100)
    assert code_of(run(plugin)) == expected


def test_second_read_in_one_call_sees_the_same_bytes(load: Callable[..., WasmPlugin]) -> None:
    wat = """(module
      (import "k8s.io/scheduler" "filteredNodeList" (func $f (param i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "prescore") (result i32)
        (local $n i32)
        (local.set $n (call $f (i32.const 1024) (i32.const 0)))
        (call $f (i32.const 1024) (local.get $n))))"""
    plugin = load(wat)
    nodes = [node_info(f"node-{i}") for i in range(3)]
    want = b'["node-0","node-1","node-2"]'
    assert code_of(plugin.pre_score(None, POD, nodes)) == len(want)
    assert inst(plugin).read(BUF, len(want)) == want


def _write_name(plugin: WasmPlugin, name: bytes, limit: int) -> None:
    inst(plugin).write(512, name)
    set_args(plugin, 512, len(name), BUF, limit)


def test_api_node_and_node_list(load: Callable[..., WasmPlugin]) -> None:
    handle = FakeHandle([make_node("n1"), make_node("n2")])
    plugin = load(call_import_wat("k8s.io/api", "node", 4, "filter"), handle)
    want = node_proto(handle.snapshot().get("n2").node)
    _write_name(plugin, b"n2", 4096)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == len(want)
    assert inst(plugin).read(BUF, len(want)) == want
    _write_name(plugin, b"nope", 4096)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == 0

    plugin = load(call_import_wat("k8s.io/api", "nodeList", 2, "filter"), handle)
    want = node_list_proto(handle.snapshot())
    set_args(plugin, BUF, 8192)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == len(want)
    assert inst(plugin).read(BUF, len(want)) == want
    assert want.count(b"\x12") >= 2 and node_proto(handle.snapshot().get("n1").node) in want


def test_node_image_states(load: Callable[..., WasmPlugin]) -> None:
    image = (["test-image:v1", "test-image@sha256:abc"], 100_000_000)
    handle = FakeHandle([make_node("n1", [image]), make_node("n2", [image]), make_node("n3")])
    plugin = load(call_import_wat("k8s.io/scheduler", "nodeImageStates", 4, "filter"), handle)
    want = image_states_json(handle.snapshot().get("n1"))
    parsed = json.loads(want)
    assert parsed["test-image:v1"] == {
        "Size": 100_000_000,
        "NumNodes": 2,
        "Nodes": {"n1": {}, "n2": {}},
    }
    assert want.startswith(b'{"test-image:v1":{"Size":100000000,"NumNodes":2,"Nodes":')
    _write_name(plugin, b"n1", 4096)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == len(want)
    assert inst(plugin).read(BUF, len(want)) == want
    _write_name(plugin, b"n3", 4096)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == 2  # {}
    _write_name(plugin, b"unknown", 4096)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == 4  # null
    assert inst(plugin).read(BUF, 4) == b"null"


def test_node_name_out_of_bounds_traps(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(call_import_wat("k8s.io/api", "node", 4, "filter"), FakeHandle([make_node("n1")]))
    set_args(plugin, 200_000, 2, BUF, 100)
    status = plugin.filter(None, POD, node_info("n1"))
    assert status is not None and status.code == 1
    assert "out of memory reading nodeName" in status.message


# --- result setters -------------------------------------------------------------------------


def setter_wat(name: str, export: str, result: str = "i32", data: bytes = b"") -> str:
    """``export`` calls result.<name>(mem[0], mem[4]) and returns mem[8] (i32) or mem[8..16]."""
    ret = "(i32.load (i32.const 8))" if result == "i32" else "(i64.load (i32.const 8))"
    if result is None:
        ret = ""
    escaped = "".join(f"\\{b:02x}" for b in data)
    extra = ""
    if export == "normalizescore":
        extra = '(func (export "score") (result i64) i64.const 0)'
    result_decl = f"(result {result})" if result else ""
    return f"""(module
      (import "k8s.io/scheduler" "{name}" (func $f (param i32 i32)))
      (memory (export "memory") 1)
      (data (i32.const 1024) "{escaped}")
      (func (export "{export}") {result_decl}
        (call $f (i32.load (i32.const 0)) (i32.load (i32.const 4))) {ret})
      {extra})"""


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (2, b"hello", Status(2, "hello")),
        (0, b"kept", Status(0, "kept")),
        (0, b"", None),
        (-(2**31), "fóo".encode(), Status(-(2**31), "fóo")),
    ],
)
def test_status_reason(
    load: Callable[..., WasmPlugin], code: int, reason: bytes, expected: Status | None
) -> None:
    plugin = load(setter_wat("result.status_reason", "filter", data=reason))
    set_args(plugin, BUF, len(reason), code & 0xFFFFFFFF)
    status = plugin.filter(None, POD, node_info("n1"))
    assert status == expected
    # The reason belongs to one call only.
    set_args(plugin, BUF, 0, 0)
    assert plugin.filter(None, POD, node_info("n1")) in (None, Status(0))


def test_status_reason_out_of_bounds(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(setter_wat("result.status_reason", "filter"))
    set_args(plugin, 70_000, 10, 1)
    assert plugin.filter(None, POD, node_info("n1")) == Status(
        1, "BUG: out of memory reading message"
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\0two\0", PreFilterResult({"a", "two"})),
        (b"", None),
        (b"a\0\0b", PreFilterResult({"a"})),
    ],
)
def test_node_names(
    load: Callable[..., WasmPlugin], data: bytes, expected: PreFilterResult | None
) -> None:
    plugin = load(setter_wat("result.node_names", "prefilter", data=data))
    set_args(plugin, BUF, len(data), 0)
    result, status = plugin.pre_filter(None, POD, [])
    assert status is None
    if expected is None:
        assert result is None
    else:
        assert result is not None and result.node_names == expected.node_names


def test_nominated_node_name_and_mode(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(
        setter_wat("result.nominated_node_name", "postfilter", "i64", b"good-node"),
        FakeHandle([make_node("good-node")]),
    )
    set_args(plugin, BUF, 9, 3, 1)  # low word status 3, high word mode 1
    result, status = plugin.post_filter(None, POD, NodeToStatus())
    assert status == Status(3)
    assert result is not None and result.nominating_info is not None
    assert (result.nominating_info.nominated_node_name, result.nominating_info.mode) == (
        "good-node",
        1,
    )


def test_cluster_events(load: Callable[..., WasmPlugin]) -> None:
    data = bytes([1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0])
    plugin = load(setter_wat("result.cluster_events", "enqueue", None, data))
    set_args(plugin, BUF, len(data))
    events = [e.event for e in plugin.events_to_register()]
    assert events == [ClusterEvent("Node", 1), ClusterEvent("PersistentVolume", 2)]
    assert all(e.hint is None for e in plugin.events_to_register())


def test_normalized_score_list(load: Callable[..., WasmPlugin]) -> None:
    data = b'{"b":10000,"a":0}'
    plugin = load(setter_wat("result.normalized_score_list", "normalizescore", data=data))
    set_args(plugin, BUF, len(data), 0)
    scores = [NodeScore("a", 7), NodeScore("b", 100)]
    assert plugin.normalize_score(None, POD, scores) is None
    assert scores == [NodeScore("a", 0), NodeScore("b", 10000)]


# --- handle functions -------------------------------------------------------------------------


def handle_wat(name: str, export: str = "filter") -> str:
    return f"""(module
      (import "k8s.io/scheduler" "{name}" (func $f (param i32 i32 i32 i32)))
      (memory (export "memory") 1)
      (func (export "{export}") (result i32)
        (call $f (i32.load (i32.const 0)) (i32.load (i32.const 4))
                 (i32.load (i32.const 8)) (i32.load (i32.const 12)))
        i32.const 0))"""


def test_eventf_records_event(load: Callable[..., WasmPlugin]) -> None:
    handle = FakeHandle()
    wat = """(module
      (import "k8s.io/scheduler" "handle.eventrecorder.eventf" (func $f (param i32 i32)))
      (memory (export "memory") 1)
      (func (export "prescore") (result i32)
        (call $f (i32.load (i32.const 0)) (i32.load (i32.const 4))) i32.const 0))"""
    plugin = load(wat, handle)
    message = {
        "RegardingReference": {
            "Kind": "Pod",
            "APIVersion": "v1",
            "Name": "good-pod",
            "Namespace": "test",
            "UID": "u1",
            "ResourceVersion": "",
        },
        "RelatedReference": {
            "Kind": "",
            "APIVersion": "",
            "Name": "",
            "Namespace": "",
            "UID": "",
            "ResourceVersion": "",
        },
        "Eventtype": "PreScore",
        "Reason": "not match lastNumber",
        "Action": "Skip",
        "Note": "100% literal %s",
    }
    raw = json.dumps(message).encode()
    inst(plugin).write(BUF, raw)
    set_args(plugin, BUF, len(raw))
    assert plugin.pre_score(None, POD, []) is None
    (event,) = handle.events
    assert event.regarding.name == "good-pod" and event.regarding.uid == "u1"
    assert event.related is None
    assert (event.type, event.reason, event.action, event.note) == (
        "PreScore",
        "not match lastNumber",
        "Skip",
        "100% literal %s",
    )
    assert event.time == handle.clock
    assert handle.event_texts() == ["good-pod PreScore not match lastNumber Skip 100% literal %s"]

    inst(plugin).write(BUF, b"{not json")
    set_args(plugin, BUF, 9)
    status = plugin.pre_score(None, POD, [])
    assert status is not None and status.code == 1 and "eventf" in status.message


@pytest.mark.parametrize(
    ("uid", "limit", "expected"),
    [
        (b"w1", 8, struct.pack("<Q", 1)),
        (b"other", 8, struct.pack("<Q", 0)),
        (b"w1", 7, b"\xaa" * 8),  # the limit is respected
    ],
)
def test_reject_waiting_pod(
    load: Callable[..., WasmPlugin], uid: bytes, limit: int, expected: bytes
) -> None:
    handle = FakeHandle(waiting=[WAITING])
    plugin = load(handle_wat("handle.reject_waiting_pod"), handle)
    inst(plugin).write(512, uid)
    inst(plugin).write(BUF, b"\xaa" * 8)
    set_args(plugin, 512, len(uid), BUF, limit)
    assert plugin.filter(None, POD, node_info("n1")) is None
    assert handle.rejected_uids == [uid.decode()]
    assert inst(plugin).read(BUF, 8) == expected


def test_get_waiting_pod(load: Callable[..., WasmPlugin]) -> None:
    handle = FakeHandle(waiting=[WAITING])
    plugin = load(handle_wat("handle.get_waiting_pod"), handle)
    want = pod_proto(WAITING)
    mem = inst(plugin)

    def call(uid: bytes, limit: int) -> bytes:
        mem.write(512, uid)
        mem.write(BUF, b"\xaa" * (len(want) + 64))
        set_args(plugin, 512, len(uid), BUF, limit)
        assert plugin.filter(None, POD, node_info("n1")) is None
        return mem.read(BUF, len(want) + 64)

    assert call(b"none", 64)[:9] == bytes(8) + b"\xaa"
    assert call(b"none", 4)[:8] == b"\xaa" * 8
    got = call(b"w1", len(want) + 32)
    assert got[: len(want)] == want
    assert got[len(want) : len(want) + 32] == bytes(32)  # zeroed up to the limit
    assert got[len(want) + 32 :] == b"\xaa" * 32
    assert call(b"w1", 16)[:9] == b"\xff\xff\xff\xff" + struct.pack("<I", len(want)) + b"\xaa"
    assert handle.get_waiting_uids == ["none", "none", "w1", "w1"]


# --- klog ---------------------------------------------------------------------------------------

KLOG_WAT = """(module
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (import "k8s.io/klog" "logs" (func $logs (param i32 i32 i32 i32 i32)))
  (import "k8s.io/klog" "severity" (func $sev (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "hello\\n")
  (data (i32.const 1100) "err\\00unhandled\\00pod\\00ns/p\\00")
  (func (export "filter") (result i32)
    (call $log (i32.load (i32.const 0)) (i32.const 1024) (i32.const 6))
    (call $logs (i32.load (i32.const 0)) (i32.const 1024) (i32.const 5)
                (i32.const 1100) (i32.load (i32.const 4)))
    (call $sev)))"""


@pytest.mark.parametrize(
    ("configured", "severity", "emitted"),
    [(0, 0, True), (0, 2, True), (2, 1, False), (2, 2, True), (3, 2, False), (1, 3, True)],
)
def test_klog_severity_rule(
    load: Callable[..., WasmPlugin], configured: int, severity: int, emitted: bool
) -> None:
    plugin = load(KLOG_WAT, log_severity=configured)
    set_args(plugin, severity, 14)  # kvs: err=unhandled (14 bytes)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == configured
    if emitted:
        assert [r.text for r in plugin.logs] == ["hello", '"hello" err="unhandled"']
        assert {r.severity for r in plugin.logs} == {severity}
    else:
        assert plugin.logs == []


def test_klog_routes_to_python_logging(
    load: Callable[..., WasmPlugin], caplog: pytest.LogCaptureFixture
) -> None:
    plugin = load(KLOG_WAT)
    set_args(plugin, 2, 25)
    with caplog.at_level(logging.INFO, logger="wasmsched.wasm.test"):
        plugin.filter(None, POD, node_info("n1"))
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.ERROR, "hello"),
        (logging.ERROR, '"hello" err="unhandled" pod="ns/p"'),
    ]


def test_klog_text_multiline_values() -> None:
    assert klog_text("failed unreserve", (("err", "a\nb\n\nc"),)) == (
        '"failed unreserve" err=<\n\ta\n\tb\n\t\n\tc\n >'
    )


# --- WASI -----------------------------------------------------------------------------------------


def wasi_wat(imports: str, body: str, data: str = "", start: str = "") -> str:
    return f"""(module
      {imports}
      (memory (export "memory") 1)
      {data}
      {start}
      (func (export "filter") (result i32) {body}))"""


FD_WRITE = '(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))'
PANIC_DATA = (
    '(data (i32.const 100) "panic!\\n") (data (i32.const 200) "\\64\\00\\00\\00\\07\\00\\00\\00")'
)


@pytest.mark.parametrize("fd", [1, 2])
def test_fd_write_is_captured_into_the_error(load: Callable[..., WasmPlugin], fd: int) -> None:
    body = f"(drop (call $fd_write (i32.const {fd}) (i32.const 200) (i32.const 1) (i32.const 300))) unreachable"
    plugin = load(wasi_wat(FD_WRITE, body, PANIC_DATA))
    status = plugin.filter(None, POD, node_info("n1"))
    assert status is not None and status.code == 1
    assert status.message.startswith("wasm: filter error: panic!\n\n")
    assert "unreachable" in status.message


def test_output_is_cleared_after_each_call(load: Callable[..., WasmPlugin]) -> None:
    body = """(drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 300)))
              (if (i32.load (i32.const 0)) (then unreachable)) (i32.load (i32.const 300))"""
    plugin = load(wasi_wat(FD_WRITE, body, PANIC_DATA))
    set_args(plugin, 0)
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == 7  # nwritten
    set_args(plugin, 1)
    status = plugin.filter(None, POD, node_info("n1"))
    assert status is not None and status.message.count("panic!") == 1


def test_fd_write_to_other_fds_is_ebadf(load: Callable[..., WasmPlugin]) -> None:
    body = "(call $fd_write (i32.const 3) (i32.const 200) (i32.const 1) (i32.const 300))"
    plugin = load(wasi_wat(FD_WRITE, body, PANIC_DATA))
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == 8


def test_args(load: Callable[..., WasmPlugin]) -> None:
    imports = """
      (import "wasi_snapshot_preview1" "args_sizes_get" (func $sizes (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "args_get" (func $get (param i32 i32) (result i32)))"""
    body = """(drop (call $sizes (i32.const 0) (i32.const 4)))
              (drop (call $get (i32.const 16) (i32.const 64))) i32.const 0"""
    plugin = load(wasi_wat(imports, body), args=["test", "filter"])
    plugin.filter(None, POD, node_info("n1"))
    mem = inst(plugin)
    assert struct.unpack("<II", mem.read(0, 8)) == (2, 12)
    assert struct.unpack("<II", mem.read(16, 8)) == (64, 69)
    assert mem.read(64, 12) == b"test\0filter\0"


def test_clock_random_environ(load: Callable[..., WasmPlugin]) -> None:
    imports = """
      (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
      (import "wasi_snapshot_preview1" "random_get" (func $rand (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "environ_sizes_get" (func $env (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "clock_time_get" (func $bad (param i32 i64 i32) (result i32)))"""
    body = """(drop (call $clock (i32.const 0) (i64.const 0) (i32.const 0)))
              (drop (call $clock (i32.const 0) (i64.const 0) (i32.const 8)))
              (drop (call $clock (i32.const 1) (i64.const 0) (i32.const 16)))
              (drop (call $rand (i32.const 32) (i32.const 16)))
              (drop (call $env (i32.const 48) (i32.const 52)))
              (call $bad (i32.const 9) (i64.const 0) (i32.const 60))"""
    first = load(wasi_wat(imports, body))
    second = load(wasi_wat(imports, body))
    assert code_of(first.filter(None, POD, node_info("n1"))) == 28  # EINVAL for clock 9
    second.filter(None, POD, node_info("n1"))
    mem = inst(first)
    base = 1_640_995_200 * 10**9
    assert struct.unpack("<QQQ", mem.read(0, 24)) == (base + 10**6, base + 2 * 10**6, 10**6)
    noise = mem.read(32, 16)
    assert noise != bytes(16) and noise == inst(second).read(32, 16)  # deterministic
    assert mem.read(48, 8) == bytes(8)


def test_stdio_stat_and_no_preopens(load: Callable[..., WasmPlugin]) -> None:
    imports = """
      (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $stat (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_prestat_get" (func $pre (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_close" (func $close (param i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_seek" (func $seek (param i32 i64 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "path_open"
        (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "sched_yield" (func $yield (result i32)))"""
    body = """(i32.store (i32.const 100) (call $stat (i32.const 1) (i32.const 0)))
              (i32.store (i32.const 104) (call $pre (i32.const 3) (i32.const 200)))
              (i32.store (i32.const 108) (call $close (i32.const 7)))
              (i32.store (i32.const 112) (call $seek (i32.const 1) (i64.const 0) (i32.const 0) (i32.const 200)))
              (i32.store (i32.const 116) (call $open (i32.const 3) (i32.const 0) (i32.const 0)
                 (i32.const 0) (i32.const 0) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 0)))
              (call $yield)"""
    plugin = load(wasi_wat(imports, body))
    assert plugin.filter(None, POD, node_info("n1")) is None
    mem = inst(plugin)
    assert mem.read(0, 1) == b"\x02"  # character device
    assert struct.unpack("<Q", mem.read(8, 8))[0] & (1 << 2) == 0  # no seek right
    assert struct.unpack("<5I", mem.read(100, 20)) == (0, 8, 8, 70, 8)


def test_poll_oneoff_returns_immediately(load: Callable[..., WasmPlugin]) -> None:
    imports = '(import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))'
    body = """(i64.store (i32.const 0) (i64.const 77))
              (i64.store (i32.const 24) (i64.const 3600000000000))
              (drop (call $poll (i32.const 0) (i32.const 100) (i32.const 1) (i32.const 200)))
              (i32.load (i32.const 200))"""
    plugin = load(wasi_wat(imports, body))
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == 1
    assert struct.unpack("<Q", inst(plugin).read(100, 8))[0] == 77


PROC_EXIT = '(import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))'


def test_proc_exit_zero_in_start_means_initialised(load: Callable[..., WasmPlugin]) -> None:
    start = '(global $ready (mut i32) (i32.const 0)) (func (export "_start") (global.set $ready (i32.const 5)) (call $exit (i32.const 0)))'
    plugin = load(wasi_wat(PROC_EXIT, "global.get $ready", start=start))
    assert code_of(plugin.filter(None, POD, node_info("n1"))) == 5


def test_proc_exit_nonzero_in_start_fails_loading(load: Callable[..., WasmPlugin]) -> None:
    start = '(func (export "_start") (call $exit (i32.const 2)))'
    with pytest.raises(WasmError) as info:
        load(wasi_wat(PROC_EXIT, "i32.const 0", start=start))
    assert info.value.problem.startswith("failed to create a guest pool: wasm: instantiate error: ")
    assert "exit status 2" in info.value.problem


def test_start_output_decorates_instantiate_error(load: Callable[..., WasmPlugin]) -> None:
    start = '(func (export "_start") (drop (call $fd_write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 300))) unreachable)'
    with pytest.raises(WasmError) as info:
        load(wasi_wat(FD_WRITE, "i32.const 0", PANIC_DATA, start))
    assert info.value.problem.startswith(
        "failed to create a guest pool: wasm: instantiate error: panic!\n\n"
    )


@pytest.mark.parametrize(
    ("imports", "problem"),
    [
        (
            '(import "wasi_snapshot_preview1" "made_up" (func (param i32) (result i32)))',
            "wasm: guest imports unknown host function wasi_snapshot_preview1.made_up",
        ),
        ('(import "env" "abort" (func))', "wasm: guest imports unknown host function env.abort"),
        (
            '(import "k8s.io/api" "node" (func (param i32 i32) (result i32)))',
            "wasm: guest imports k8s.io/api.node with signature (i32, i32) -> (i32), "
            "but the host provides (i32, i32, i32, i32) -> (i32)",
        ),
        (
            '(import "k8s.io/klog" "severity" (global i32))',
            "wasm: guest imports k8s.io/klog.severity as a global, but the host provides a function",
        ),
    ],
)
def test_unknown_or_mistyped_imports_fail_to_load(
    load: Callable[..., WasmPlugin], imports: str, problem: str
) -> None:
    with pytest.raises(WasmError) as info:
        load(wasi_wat(imports, "i32.const 0"))
    assert info.value.problem == problem
