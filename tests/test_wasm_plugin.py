"""wasm/plugin.py and wasm/pool.py: result decoding, extension points, failure isolation and
limits, and the instance pool lifecycle."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import wasmtime

from wasm_support import FakeHandle, make_node, make_pod, node_info
from wasmsched.framework import interfaces as fw
from wasmsched.framework.interfaces import NodeScore, NodeToStatus, implements
from wasmsched.framework.node_info import PodInfo
from wasmsched.framework.status import Code, Status
from wasmsched.wasm import WasmError, WasmPlugin, WasmPluginConfig, wasm_plugin_factory
from wasmsched.wasm.plugin import apply_normalized_scores

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
POD = make_pod(node_name="n1")
POD2 = make_pod("pod-2", uid="uid-2")
N1 = node_info("n1")
_ids = count()


@pytest.fixture
def load(tmp_path: Path) -> Iterator[Callable[..., WasmPlugin]]:
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


def module(*funcs: str, imports: str = "", extra: str = "") -> str:
    return f'(module {imports} (memory (export "memory") 1) {extra} {" ".join(funcs)})'


def const(name: str, result: str | None, value: int = 0) -> str:
    if result is None:
        return f'(func (export "{name}"))'
    return f'(func (export "{name}") (result {result}) {result}.const {value})'


def i64(high: int, low: int) -> int:
    return ((high & 0xFFFFFFFF) << 32) | (low & 0xFFFFFFFF)


# --- result decoding --------------------------------------------------------------------------

STATUS_EXPORTS: list[tuple[str, list[str], Callable[[WasmPlugin], Status | None]]] = [
    ("prefilter", [], lambda p: p.pre_filter(None, POD, [])[1]),
    ("filter", [], lambda p: p.filter(None, POD, N1)),
    ("addpod", [], lambda p: p.add_pod(None, POD, PodInfo(POD2), N1)),
    ("removepod", [], lambda p: p.remove_pod(None, POD, PodInfo(POD2), N1)),
    ("prescore", [], lambda p: p.pre_score(None, POD, [N1])),
    ("normalizescore", ["score"], lambda p: p.normalize_score(None, POD, [NodeScore("n1", 1)])),
    ("reserve", [], lambda p: p.reserve(None, POD, "n1")),
    ("prebind", [], lambda p: p.pre_bind(None, POD, "n1")),
    ("bind", [], lambda p: p.bind(None, POD, "n1")),
]


@pytest.mark.parametrize("code", [INT32_MIN, -1, 1, 2, 5, 6, 1234, INT32_MAX])
@pytest.mark.parametrize(
    ("export", "companions", "run"), STATUS_EXPORTS, ids=[e[0] for e in STATUS_EXPORTS]
)
def test_status_codes_round_trip(
    load: Callable[..., WasmPlugin],
    export: str,
    companions: list[str],
    run: Callable[[WasmPlugin], Status | None],
    code: int,
) -> None:
    plugin = load(module(const(export, "i32", code), *(const(c, "i64") for c in companions)))
    assert run(plugin) == Status(code)


@pytest.mark.parametrize("export", [e[0] for e in STATUS_EXPORTS])
def test_zero_status_is_success(load: Callable[..., WasmPlugin], export: str) -> None:
    entry = next(e for e in STATUS_EXPORTS if e[0] == export)
    plugin = load(module(const(export, "i32", 0), *(const(c, "i64") for c in entry[1])))
    assert entry[2](plugin) is None


@pytest.mark.parametrize(
    ("score", "code"),
    [(0, 0), (INT32_MIN, 0), (INT32_MAX, 0), (0, INT32_MIN), (0, INT32_MAX), (-1, -1)],
)
def test_score_packs_score_high_status_low(
    load: Callable[..., WasmPlugin], score: int, code: int
) -> None:
    plugin = load(module(f'(func (export "score") (result i64) i64.const {i64(score, code)})'))
    assert plugin.score(None, POD, N1) == (score, None if code == 0 else Status(code))


@pytest.mark.parametrize(
    ("mode", "code"), [(1, 0), (INT32_MIN, 3), (INT32_MAX, INT32_MIN), (0, INT32_MAX)]
)
def test_postfilter_packs_mode_high_status_low(
    load: Callable[..., WasmPlugin], mode: int, code: int
) -> None:
    plugin = load(module(f'(func (export "postfilter") (result i64) i64.const {i64(mode, code)})'))
    result, status = plugin.post_filter(None, POD, NodeToStatus())
    assert status == (None if code == 0 else Status(code))
    assert result is not None and result.nominating_info == fw.NominatingInfo("", mode)


@pytest.mark.parametrize(
    ("code", "ms"), [(0, 0), (4, 10_000), (INT32_MIN, 0), (INT32_MAX, 0xFFFFFFFF), (1, 0x80000000)]
)
def test_permit_packs_status_high_timeout_low_unsigned(
    load: Callable[..., WasmPlugin], code: int, ms: int
) -> None:
    plugin = load(module(f'(func (export "permit") (result i64) i64.const {i64(code, ms)})'))
    status, timeout = plugin.permit(None, POD, "n1")
    assert status == (None if code == 0 else Status(code))
    assert timeout == ms / 1000


# --- extension points -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exports", "points"),
    [
        ([("filter", "i32")], {fw.FILTER}),
        ([("prescore", "i32"), ("score", "i64")], {fw.PRE_SCORE, fw.SCORE}),
        ([("prescore", "i32")], {fw.PRE_SCORE}),
        ([("reserve", "i32"), ("permit", "i64")], {fw.RESERVE, fw.PERMIT}),
        (
            [("filter", "i32"), ("reserve", "i32"), ("permit", "i64")],
            {fw.FILTER, fw.RESERVE, fw.PERMIT},
        ),
        ([("prefilter", "i32")], {fw.PRE_FILTER}),
        ([("bind", "i32"), ("postbind", None)], {fw.BIND, fw.POST_BIND}),
    ],
)
def test_serves_exactly_the_exported_points(
    load: Callable[..., WasmPlugin], exports: list[tuple[str, str | None]], points: set[str]
) -> None:
    plugin = load(module(*(const(n, r) for n, r in exports)))
    assert plugin.extension_points == frozenset(points)
    for point in fw.POINT_METHODS:
        assert implements(plugin, point) == (point in points)


def test_extensions_exist_only_when_exported(load: Callable[..., WasmPlugin]) -> None:
    bare = load(module(const("filter", "i32"), const("score", "i64")))
    assert bare.pre_filter_extensions() is None and bare.score_extensions() is None
    assert bare.pre_filter(None, POD, []) == (None, None)  # no guest call
    full = load(
        module(const("addpod", "i32", 3), const("score", "i64"), const("normalizescore", "i32"))
    )
    assert full.pre_filter_extensions() is full and full.score_extensions() is full
    assert fw.PRE_FILTER in full.extension_points
    # the missing half of addpod/removepod is a no-op
    assert full.add_pod(None, POD, PodInfo(POD2), N1) == Status(3)
    assert full.remove_pod(None, POD, PodInfo(POD2), N1) is None


def test_default_events_without_enqueue(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(module(const("filter", "i32")))
    assert [e.event.resource for e in plugin.events_to_register()][:2] == ["Pod", "Node"]


@pytest.mark.parametrize(
    ("wat", "problem"),
    [
        ("(module)", "wasm: guest doesn't export memory[memory]"),
        (module(), "wasm: guest does not export any plugin functions"),
        (
            module(const("addpod", None)),
            "wasm: guest exports the wrong signature for func[addpod]. should be () -> (i32)",
        ),
        (
            module(const("normalizescore", "i32")),
            "wasm: guest exports normalizescore without score; NormalizeScore is only called for "
            "Score plugins",
        ),
    ],
)
def test_load_problems(load: Callable[..., WasmPlugin], wat: str, problem: str) -> None:
    with pytest.raises(WasmError) as info:
        load(wat)
    assert info.value.problem == problem
    assert info.value.url is not None and info.value.url in str(info.value)


def test_bad_url_and_bad_binary(tmp_path: Path) -> None:
    missing = (tmp_path / "missing.wasm").as_uri()
    with pytest.raises(WasmError) as info:
        WasmPlugin("x", WasmPluginConfig(guest_url=missing), FakeHandle())
    # upstream's text in problem; str() is "guestURL <url>: open <path>: <reason>"
    assert info.value.problem.startswith(f"wasm: error reading guestURL {missing}: open ")
    assert str(info.value) == (
        f"guestURL {missing}: open {tmp_path / 'missing.wasm'}: no such file or directory"
    )
    junk = tmp_path / "junk.wasm"
    junk.write_bytes(b"junk")
    with pytest.raises(WasmError, match="wasm: error compiling guest"):
        WasmPlugin("x", WasmPluginConfig(guest_url=junk.as_uri(), cache_dir=tmp_path), FakeHandle())


def test_factory(tmp_path: Path) -> None:
    path = tmp_path / "f.wasm"
    path.write_bytes(wasmtime.wat2wasm(module(const("filter", "i32", 2))))
    plugin = wasm_plugin_factory("mine")({"guestURL": path.as_uri()}, FakeHandle())
    assert isinstance(plugin, WasmPlugin) and plugin.name == "mine"
    assert plugin.filter(None, POD, N1) == Status(2)
    plugin.close()
    with pytest.raises(WasmError, match="guestURL is required"):
        wasm_plugin_factory("mine")({}, FakeHandle())


# --- failures and limits ----------------------------------------------------------------------


def test_trap_fails_the_call_and_replaces_the_instance(load: Callable[..., WasmPlugin]) -> None:
    wat = module(
        '(func (export "filter") (result i32) (if (i32.load (i32.const 0)) (then unreachable)) '
        "(i32.store (i32.const 0) (i32.const 1)) i32.const 0)"
    )
    plugin = load(wat)
    assert plugin.filter(None, POD, N1) is None  # arms the trap in this instance
    first = plugin.pool.scheduled
    status = plugin.filter(None, POD, N1)
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("wasm: filter error: error while executing")
    assert "unreachable" in status.message
    assert first is not None and first.dead and first.inst.closed
    assert plugin.filter(None, POD, N1) is None  # a fresh instance
    assert plugin.pool.scheduled is not first


def test_infinite_loop_fails_within_the_deadline(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(
        module('(func (export "filter") (result i32) (loop $l (br $l)) i32.const 0)'),
        call_timeout_ms=50,
    )
    start = time.perf_counter()
    status = plugin.filter(None, POD, N1)
    assert time.perf_counter() - start < 1.0
    assert status is not None and status.code == Code.ERROR
    assert "interrupt" in status.message and "deadline of 50 ms exceeded" in status.message


def test_memory_cap(load: Callable[..., WasmPlugin]) -> None:
    grow = '(func (export "filter") (result i32) (if (i32.eq (memory.grow (i32.const 64)) (i32.const -1)) (then unreachable)) i32.const 0)'
    status = load(module(grow), memory_limit_mib=4).filter(None, POD, N1)
    assert status is not None and status.code == Code.ERROR and "unreachable" in status.message
    assert load(module(grow), memory_limit_mib=8).filter(None, POD, N1) is None
    with pytest.raises(WasmError, match="wasm: instantiate error"):
        load(
            '(module (memory (export "memory") 200) (func (export "filter") (result i32) i32.const 0))',
            memory_limit_mib=4,
        )


def test_host_function_error_is_an_error_status(load: Callable[..., WasmPlugin]) -> None:
    imports = '(import "k8s.io/api" "nodeList" (func $list (param i32 i32) (result i32)))'

    class Broken(FakeHandle):
        def snapshot(self) -> Any:
            raise RuntimeError("lister down")

    plugin = load(
        module(
            '(func (export "filter") (result i32) (call $list (i32.const 0) (i32.const 0)))',
            imports=imports,
        ),
        Broken(),
    )
    status = plugin.filter(None, POD, N1)
    assert status is not None and status.code == Code.ERROR
    assert "host function k8s.io/api.nodeList failed: lister down" in status.message


def test_enqueue_trap_logs_and_uses_default_events(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(module('(func (export "enqueue") unreachable)', const("filter", "i32")))
    events = plugin.events_to_register()
    assert [e.event.resource for e in events][:2] == ["Pod", "Node"]
    assert [r.message for r in plugin.logs] == ["failed enqueue"]
    assert plugin.logs[0].kvs[0][1].startswith("wasm: enqueue error: ")


@pytest.mark.parametrize(
    ("export", "run"),
    [
        ("unreserve", lambda p: p.unreserve(None, POD, "n1")),
        ("postbind", lambda p: p.post_bind(None, POD, "n1")),
    ],
)
def test_unreserve_and_postbind_traps_are_logged(
    load: Callable[..., WasmPlugin], export: str, run: Callable[[WasmPlugin], None]
) -> None:
    plugin = load(module(f'(func (export "{export}") unreachable)', const("reserve", "i32")))
    assert run(plugin) is None
    (record,) = plugin.logs
    assert record.severity == 2 and record.message == f"failed {export}"
    assert record.text.startswith(f'"failed {export}" err=<\n\twasm: {export} error: ')


# --- NormalizeScore ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problem", "after"),
    [
        (b'{"b":1,"a":2}', None, [2, 1]),
        (b"null", None, [10, 20]),
        (b'{"a":1}', "normalized score list has no score for node 'b'", [10, 20]),
        (b'{"a":1,"b":2,"c":3}', "normalized score for unknown node 'c'", [10, 20]),
        (b'{"a":1.5,"b":2}', "normalized score of node 'a' is not an integer: 1.5", [10, 20]),
        (b'{"a":true,"b":2}', "normalized score of node 'a' is not an integer: True", [10, 20]),
        (b"[1,2]", "normalized score list must be a JSON object, got list", [10, 20]),
        (b"{bad", "invalid normalized score list", [10, 20]),
    ],
)
def test_normalized_scores_apply_by_name(raw: bytes, problem: str | None, after: list[int]) -> None:
    scores = [NodeScore("a", 10), NodeScore("b", 20)]
    result = apply_normalized_scores(raw, scores)
    if problem is None:
        assert result is None
    else:
        assert result is not None and result.startswith(problem)
    assert [s.score for s in scores] == after


def test_normalize_score_error_status_names_the_node(load: Callable[..., WasmPlugin]) -> None:
    imports = (
        '(import "k8s.io/scheduler" "result.normalized_score_list" (func $set (param i32 i32)))'
    )
    plugin = load(
        module(
            const("score", "i64"),
            '(func (export "normalizescore") (result i32) (call $set (i32.const 100) (i32.const 8)) i32.const 0)',
            imports=imports,
            extra='(data (i32.const 100) "{\\"x\\":50}")',
        )
    )
    status = plugin.normalize_score(None, POD, [NodeScore("n1", 1)])
    assert status == Status(
        Code.ERROR, "wasm: normalizescore error: normalized score for unknown node 'x'"
    )


# --- the instance pool ------------------------------------------------------------------------

ALL_BINDING = [
    const("prefilter", "i32"),
    const("filter", "i32"),
    const("reserve", "i32"),
    const("unreserve", None),
    const("permit", "i64"),
    const("prebind", "i32"),
    const("bind", "i32"),
    const("postbind", None),
]


def test_binding_phase_runs_on_the_scheduling_instance(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(module(*ALL_BINDING))
    pool = plugin.pool
    plugin.pre_filter(None, POD, [])
    plugin.filter(None, POD, N1)
    scheduling = pool.scheduled
    assert scheduling is not None and pool.scheduled_uid == POD.uid
    plugin.reserve(None, POD, "n1")
    assert pool.binding == {POD.uid: scheduling} and pool.scheduled is None
    # the next pod's cycle gets another instance while POD binds
    plugin.pre_filter(None, POD2, [])
    assert pool.scheduled is not scheduling and pool.created == 2
    for step in (plugin.permit, plugin.pre_bind, plugin.bind):
        step(None, POD, "n1")
        assert pool.binding[POD.uid] is scheduling
    plugin.post_bind(None, POD, "n1")
    assert POD.uid not in pool.binding and list(pool.free) == [scheduling]


@pytest.mark.parametrize("terminal", ["unreserve", "forget_pod"])
def test_instances_are_released_on_failure_paths(
    load: Callable[..., WasmPlugin], terminal: str
) -> None:
    plugin = load(module(*ALL_BINDING))
    pool = plugin.pool
    plugin.pre_filter(None, POD, [])
    plugin.reserve(None, POD, "n1")
    guest = pool.binding[POD.uid]
    if terminal == "unreserve":
        plugin.unreserve(None, POD, "n1")
    else:
        plugin.forget_pod(POD.uid)
    assert pool.binding == {} and list(pool.free) == [guest]
    plugin.pre_filter(None, POD2, [])
    assert pool.scheduled is guest and pool.created == 1  # reused


def test_sequential_cycles_reuse_the_scheduling_instance(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(module(const("prefilter", "i32"), const("filter", "i32", 2)))
    plugin.pre_filter(None, POD, [])
    first = plugin.pool.scheduled
    plugin.filter(None, POD, N1)
    plugin.pre_filter(None, POD2, [])
    plugin.filter(None, POD2, N1)
    assert plugin.pool.scheduled is first and plugin.pool.created == 1


def test_instance_released_after_last_binding_export_without_unreserve(
    load: Callable[..., WasmPlugin],
) -> None:
    plugin = load(module(const("prefilter", "i32"), const("permit", "i64")))
    pool = plugin.pool
    plugin.pre_filter(None, POD, [])
    guest = pool.scheduled
    plugin.permit(None, POD, "n1")  # upstream leaks the instance here
    assert pool.binding == {} and list(pool.free) == [guest]


def test_reserve_without_unreserve_and_unreserve_alone(load: Callable[..., WasmPlugin]) -> None:
    only_reserve = load(module(const("reserve", "i32", 1)))
    assert only_reserve.reserve(None, POD, "n1") == Status(1)
    assert only_reserve.unreserve(None, POD, "n1") is None
    only_unreserve = load(module(const("prefilter", "i32"), const("unreserve", None)))
    only_unreserve.pre_filter(None, POD, [])
    guest = only_unreserve.pool.scheduled
    assert only_unreserve.reserve(None, POD, "n1") is None  # moves the instance, no call
    assert only_unreserve.pool.binding == {POD.uid: guest}
    only_unreserve.unreserve(None, POD, "n1")
    assert only_unreserve.pool.binding == {}


def test_binding_without_reserve_or_permit_parks_the_previous_instance(
    load: Callable[..., WasmPlugin],
) -> None:
    plugin = load(module(const("prefilter", "i32"), const("bind", "i32")))
    pool = plugin.pool
    plugin.pre_filter(None, POD, [])
    first = pool.scheduled
    plugin.pre_filter(None, POD2, [])  # POD's binding cycle has not started yet
    assert pool.binding == {POD.uid: first} and pool.scheduled is not first
    plugin.bind(None, POD, "n1")
    assert pool.binding == {} and first in pool.free


def test_binding_map_is_bounded(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(
        module(const("prefilter", "i32"), const("reserve", "i32"), const("unreserve", None))
    )
    plugin.pool.max_binding = 3
    for i in range(6):
        pod = make_pod(f"p{i}", uid=f"u{i}")
        plugin.pre_filter(None, pod, [])
        plugin.reserve(None, pod, "n1")
    assert list(plugin.pool.binding) == ["u3", "u4", "u5"]
    assert plugin.pool.created == 4


def test_trapped_binding_instance_is_replaced(load: Callable[..., WasmPlugin]) -> None:
    plugin = load(
        module(
            const("prefilter", "i32"),
            const("reserve", "i32"),
            '(func (export "permit") (result i64) unreachable)',
            const("bind", "i32", 0),
            const("unreserve", None),
        )
    )
    plugin.pre_filter(None, POD, [])
    plugin.reserve(None, POD, "n1")
    first = plugin.pool.binding[POD.uid]
    status, _ = plugin.permit(None, POD, "n1")
    assert status is not None and status.code == Code.ERROR
    assert first.dead and POD.uid not in plugin.pool.binding
    assert plugin.bind(None, POD, "n1") is None  # runs on a fresh instance
    assert plugin.pool.binding[POD.uid] is not first


def test_failed_lazy_instantiation_fails_only_that_call(load: Callable[..., WasmPlugin]) -> None:
    class Flaky(FakeHandle):
        calls = 0

        def snapshot(self) -> Any:
            Flaky.calls += 1
            if Flaky.calls == 2:
                raise RuntimeError("snapshot unavailable")
            return super().snapshot()

    imports = '(import "k8s.io/api" "nodeList" (func $list (param i32 i32) (result i32)))'
    start = '(func (export "_start") (drop (call $list (i32.const 0) (i32.const 0))))'
    plugin = load(
        module(
            const("prefilter", "i32"),
            const("reserve", "i32"),
            const("unreserve", None),
            start,
            imports=imports,
        ),
        Flaky([make_node("n1")]),
    )
    plugin.pre_filter(None, POD, [])
    plugin.reserve(None, POD, "n1")
    _, status = plugin.pre_filter(None, POD2, [])  # needs a second instance: _start fails
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("wasm: instantiate error: ")
    assert "snapshot unavailable" in status.message
    assert not plugin.pool.binding[POD.uid].dead  # the other instance is untouched
    assert plugin.pre_filter(None, POD2, []) == (None, None)  # the next attempt works


NAME_BYTE = "(drop (call $name (i32.const 100) (i32.const 64))) (i32.load8_u (i32.const 101))"


@pytest.mark.parametrize("export", ["filter", "score"])
def test_concurrent_calls_are_serialised(load: Callable[..., WasmPlugin], export: str) -> None:
    imports = (
        '(import "k8s.io/scheduler" "currentNodeName" (func $name (param i32 i32) (result i32)))'
    )
    # returns the node name's last byte after a read; racing calls would mix names up
    plugin = load(
        module(
            f'(func (export "filter") (result i32) {NAME_BYTE})',
            f'(func (export "score") (result i64) (i64.extend_i32_u {NAME_BYTE}))',
            imports=imports,
        )
    )
    errors: list[str] = []

    def call(ni: Any) -> Status | None:
        if export == "score":
            _, status = plugin.score(None, POD, ni)
            return status
        return plugin.filter(None, POD, ni)

    def worker(digit: int) -> None:
        ni = node_info(f"n{digit}")
        for _ in range(300):
            status = call(ni)
            if status is None or status.code != ord(str(digit)):
                errors.append(f"{digit}: {status}")

    threads = [threading.Thread(target=worker, args=(d,)) for d in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert plugin.pool.created == 1


def test_prefilter_of_the_serving_pod_still_releases_a_stale_binding(
    load: Callable[..., WasmPlugin],
) -> None:
    # A binding-phase call racing with the pod's next cycle can leave both slots set; the
    # PreFilter shortcut (same pod as the scheduling instance) must not skip the release.
    plugin = load(module(*ALL_BINDING))
    pool = plugin.pool
    plugin.pre_filter(None, POD, [])
    scheduling = pool.scheduled
    pool.prime()
    stale = pool.free.pop()
    pool.binding[POD.uid] = stale
    assert plugin.pre_filter(None, POD, []) == (None, None)
    assert pool.binding == {} and pool.scheduled is scheduling and stale in pool.free
    plugin.reserve(None, POD, "n1")
    assert pool.binding == {POD.uid: scheduling}


def test_new_cycle_of_a_pod_releases_its_stale_binding_instance(
    load: Callable[..., WasmPlugin],
) -> None:
    plugin = load(module(*ALL_BINDING))
    pool = plugin.pool
    plugin.pre_filter(None, POD, [])
    plugin.reserve(None, POD, "n1")  # the cycle stops here: no Unreserve, no binding
    stale = pool.binding[POD.uid]
    plugin.pre_filter(None, POD, [])  # the pod's next cycle
    assert pool.binding == {} and pool.scheduled is stale and pool.created == 1
    plugin.reserve(None, POD, "n1")
    assert pool.binding == {POD.uid: stale}
