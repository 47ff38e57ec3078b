"""The wasm rows of issue 11, side by side: the compiled path (``native``), the ctypes path
(``ctypes``, ``WASMSCHED_WASM_NATIVE=0``), wasmtime's public Python API (``public``) and,
when Go is installed, upstream's Go host call path over wazero (``wazero``: our harness in
benchmarks/wazero, built on first use from the Go module proxy into .cache/bin), measured
in one run (bench_wasm_plugin.py prints them first). Where the wazero column has a value,
the PASS/FAIL line compares against it rather than against the fixed figure.

Rows:

* export call: one noop export through the bare instance caller;
* host callback: one ``currentNodeName`` from a guest loop (loop minus empty loop);
* Filter / Score per call: ``WasmPlugin.filter`` / ``score`` of the noop-wat guest, as
  upstream's BenchmarkPluginFilter/Score time ``Filter``/``Score`` (tight loop, status
  checked once before);
* Filter+Score per node, 500-node cycle, direct: the per-node methods over 500 nodes, and
  with the vectorized forms the framework uses (``filter_columns``, ``score_columns``
  over node rows, looped in C);
* Filter+Score per node added to a scheduling cycle: SchedulingBasic (500 nodes, the
  default profile) with the noop-wat plugin added, minus without, per pod, divided by the
  nodes scored per pod (numFeasibleNodesToFind: 230);
* nodenumber pods/s ratio: the default profile plus our Rust SDK's nodenumber guest
  (examples/rust, logs on every Score) against the default profile alone;
* decoding guest cycle: PreFilter + Filter + Score of the ``test`` guest (walks every
  protobuf field of the pod and the node) on the real pod/node.

Simulations alternate between the variants and keep each one's best run. Every time is the
process's CPU time (``time.process_time``), not wall time: on a machine shared with other
work it is the time our code ran, which wall time is not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import wasmtime

_clock = time.process_time

ROOT = Path(__file__).resolve().parent.parent
PATHS = ("ctypes", "native")
CYCLE_NODES = 500
SCORED_NODES = 230  # numFeasibleNodesToFind(500): 46 %
LOOP = 1000
NODENUMBER = ROOT / "examples" / "rust" / "build" / "nodenumber.wasm"
I32 = wasmtime.ValType.i32()

# A guest exporting a no-op filter and a loop calling currentNodeName ``n`` times (the
# guest's view: buf 0, limit 64), so the per-callback cost is (loop - empty loop) / n.
BOUNDARY_WAT = """
(module
  (import "k8s.io/scheduler" "currentNodeName" (func $name (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $n (mut i32) (i32.const 1000))
  (func (export "filter") (result i32) i32.const 0)
  (func (export "names") (result i32)
    (local $i i32) (local $sum i32)
    (loop $again
      (local.set $sum (i32.add (local.get $sum) (call $name (i32.const 0) (i32.const 64))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (global.get $n))))
    local.get $sum)
  (func (export "empty") (result i32)
    (local $i i32) (local $sum i32)
    (loop $again
      (local.set $sum (i32.add (local.get $sum) (i32.const 8)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (global.get $n))))
    local.get $sum)
)
"""

# measure -> (target, unit, upstream's Go host where it publishes one)
TARGETS: dict[str, tuple[float, str, str]] = {
    "host callback (currentNodeName)": (0.3, "µs", ""),
    "Filter per call (noop-wat, WasmPlugin.filter)": (0.35, "µs", "Go host 185-352 ns"),
    "Score per call (noop-wat, WasmPlugin.score)": (0.35, "µs", "Go host 192 ns"),
    "Filter+Score per node added to a 500-node cycle": (1.0, "µs", "Go host 0.84 µs"),
    "nodenumber added: pods/s ratio to the default profile": (0.5, "ratio", ""),
    "decoding guest (test): PreFilter+Filter+Score, real": (89.0, "µs", "TinyGo guest 89 µs"),
}


WAZERO_SRC = ROOT / "benchmarks" / "wazero"
WAZERO_BIN = ROOT / ".cache" / "bin" / "wazero-boundary"
# our rows -> the wazero harness's keys (benchmarks/wazero/main.go)
WAZERO_ROWS = {
    "export call (noop filter)": "export_ns",
    "Filter per call (noop-wat, WasmPlugin.filter)": "filter_ns",
    "Score per call (noop-wat, WasmPlugin.score)": "score_ns",
}


def _wazero_harness() -> Path | None:
    """The Go host harness, (re)built when its sources are newer; None without Go."""
    go = shutil.which("go")
    sources = [WAZERO_SRC / "main.go", WAZERO_SRC / "go.mod", WAZERO_SRC / "go.sum"]
    if WAZERO_BIN.is_file() and all(
        WAZERO_BIN.stat().st_mtime >= f.stat().st_mtime for f in sources
    ):
        return WAZERO_BIN
    if go is None:
        return None
    WAZERO_BIN.parent.mkdir(parents=True, exist_ok=True)
    built = subprocess.run(
        [go, "build", "-trimpath", "-o", str(WAZERO_BIN), "."],
        cwd=WAZERO_SRC,
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        print(f"(wazero harness not built: {built.stderr.strip()[-300:]})")
        return None
    return WAZERO_BIN


def _wazero_rows(guests: Path, budget: float) -> dict[str, float]:
    """Microseconds per call through wazero for the WAZERO_ROWS, {} when not available."""
    harness = _wazero_harness()
    if harness is None:
        return {}
    calls = max(20_000, int(budget * 2_000_000))
    run = subprocess.run(
        [str(harness), "-wasm", str(guests / "noop_wat.wasm"), "-n", str(calls)],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        print(f"(wazero harness failed: {run.stderr.strip()[-300:]})")
        return {}
    ns = json.loads(run.stdout)
    return {row: ns[key] / 1000 for row, key in WAZERO_ROWS.items()}


def with_path(path: str, make: Callable[[], Any]) -> Any:
    """Runs ``make`` with new instances on ``path`` (the choice is read at instantiation)."""
    from wasmsched.wasm._fastpath import NATIVE_ENV

    old = os.environ.get(NATIVE_ENV)
    os.environ[NATIVE_ENV] = "1" if path == "native" else "0"
    try:
        return make()
    finally:
        if old is None:
            del os.environ[NATIVE_ENV]
        else:
            os.environ[NATIVE_ENV] = old


def _best(op: Callable[[], None], budget: float, repeats: int = 3) -> float:
    """Best seconds per ``op`` over ``repeats`` runs of about ``budget`` seconds."""
    op()
    n = 1
    while True:
        start = _clock()
        for _ in range(n):
            op()
        elapsed = _clock() - start
        if elapsed >= budget / 10 or n >= 1 << 22:
            break
        n *= 4
    n = max(1, int(n * budget / max(elapsed, 1e-9)))
    best = float("inf")
    for _ in range(repeats):
        start = _clock()
        for _ in range(n):
            op()
        best = min(best, (_clock() - start) / n)
    return best


def _per_call(fn: Callable[..., Any], args: tuple[Any, ...], budget: float) -> float:
    """Microseconds per ``fn(*args)`` in a tight loop of 1000 calls."""
    a, b, c = args

    def thousand() -> None:
        for _ in range(1000):
            fn(a, b, c)

    return _best(thousand, budget) * 1e3


def _boundary_instance(path: str, node_name: str) -> Any:
    from wasmsched.wasm._fastpath import FastInstance, engine
    from wasmsched.wasm.host import CallContext, PluginEnv, k8s_functions

    ctx = CallContext(PluginEnv("bench", None, "", 3, [], []))
    module = wasmtime.Module(engine(), BOUNDARY_WAT)
    host = {k: v for k, v in k8s_functions(ctx).items() if k[1] == "currentNodeName"}
    inst = with_path(
        path, lambda: FastInstance(module, host, memory_limit=1 << 20, timeout_ms=10_000)
    )
    ctx.inst = inst
    ctx.node_name = node_name
    return inst


def _public_boundary(node_name: bytes, budget: float) -> tuple[float, float]:
    store = wasmtime.Store()
    module = wasmtime.Module(store.engine, BOUNDARY_WAT)
    linker = wasmtime.Linker(store.engine)
    holder: list[Any] = []

    def current_node_name(buf: int, limit: int) -> int:
        if 0 < len(node_name) <= limit:
            holder[0].write(store, node_name, buf)
        return len(node_name)

    ty = wasmtime.FuncType([I32, I32], [I32])
    linker.define_func("k8s.io/scheduler", "currentNodeName", ty, current_node_name)
    exports = linker.instantiate(store, module).exports(store)
    holder.append(exports["memory"])
    filter_, names, empty = exports["filter"], exports["names"], exports["empty"]
    call = _best(lambda: filter_(store), budget) * 1e6
    per = (_best(lambda: names(store), budget) - _best(lambda: empty(store), budget)) * 1e6
    return call, per / LOOP


def _nodes(node: Any, count: int) -> list[Any]:
    from wasmsched.framework.node_info import NodeInfo

    infos = []
    for i in range(count):
        manifest = json.loads(json.dumps(node.manifest))
        manifest["metadata"]["name"] = f"node-{i:04d}"
        infos.append(NodeInfo(type(node)(manifest)))
    return infos


def _plugin_rows(path: str, guests: Path, handle: Any, budget: float) -> dict[str, float]:
    """The per-call and direct-cycle rows of one path."""
    import numpy as np
    from bench_wasm_plugin import params  # type: ignore[import-not-found]

    from wasmsched.framework.columns import NodeColumns, NodeRows
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.wasm import WasmPlugin, WasmPluginConfig

    out: dict[str, float] = {}
    inst = _boundary_instance(path, "node-0001")
    call, names, empty = (
        inst.caller("filter", "i32"),
        inst.caller("names", "i32"),
        inst.caller("empty", "i32"),
    )
    out["export call (noop filter)"] = _best(call, budget) * 1e6
    out["host callback (currentNodeName)"] = (
        (_best(names, budget) - _best(empty, budget)) * 1e6 / LOOP
    )
    inst.close()

    pod, node = params()["small"]
    url = (guests / "noop_wat.wasm").as_uri()
    plugin = with_path(
        path, lambda: WasmPlugin("noop-wat", WasmPluginConfig(guest_url=url), handle)
    )
    state, info = CycleState(), NodeInfo(node)
    assert plugin.filter(state, pod, info) is None and plugin.score(state, pod, info)[1] is None
    out["Filter per call (noop-wat, WasmPlugin.filter)"] = _per_call(
        plugin.filter, (state, pod, info), budget
    )
    out["Score per call (noop-wat, WasmPlugin.score)"] = _per_call(
        plugin.score, (state, pod, info), budget
    )
    infos = _nodes(node, CYCLE_NODES)
    rows = NodeRows(NodeColumns(infos), np.arange(len(infos), dtype=np.intp))

    def per_node() -> None:
        filter_, score = plugin.filter, plugin.score
        for ni in infos:
            filter_(state, pod, ni)
            score(state, pod, ni)

    def batch() -> None:
        plugin.filter_columns(state, pod, rows)
        plugin.score_columns(state, pod, rows)

    out["Filter+Score per node, 500 nodes, per-node calls"] = (
        _best(per_node, budget) * 1e6 / CYCLE_NODES
    )
    if hasattr(plugin, "filter_columns"):  # absent before the vectorized forms (to compare)
        per = _best(batch, budget) * 1e6 / CYCLE_NODES
        out["Filter+Score per node, 500 nodes, vectorized forms"] = per
    plugin.close()

    pod, node = params()["real"]
    url = (guests / "test.wasm").as_uri()
    plugin = with_path(path, lambda: WasmPlugin("test", WasmPluginConfig(guest_url=url), handle))
    info, nodes = NodeInfo(node), [NodeInfo(node)]

    def decode_cycle() -> None:
        plugin.pre_filter(state, pod, nodes)
        plugin.filter(state, pod, info)
        plugin.score(state, pod, info)

    out["decoding guest (test): PreFilter+Filter+Score, real"] = _best(decode_cycle, budget) * 1e6
    plugin.close()
    return out


def _simulations(guests: Path, pods: int, rounds: int) -> dict[str, dict[str, float | None]]:
    """pods/s of SchedulingBasic at 500 nodes: default, + noop-wat, + nodenumber, per path."""
    from bench_scheduling import make_node, make_pod  # type: ignore[import-not-found]

    from wasmsched.api.manifests import ClusterObjects
    from wasmsched.config import default_config, load_config
    from wasmsched.scheduler.registry import default_registry
    from wasmsched.sim.simulation import Simulation

    cluster = ClusterObjects(
        nodes=[make_node(i) for i in range(CYCLE_NODES)],
        pods=[make_pod(i) for i in range(pods)],
        others=[],
    )
    registry = default_registry()
    tmp = Path(tempfile.mkdtemp(prefix="wasmsched-bench-"))
    configs: dict[str, Any] = {"default": default_config()}
    guests_of = {"noop-wat": guests / "noop_wat.wasm"}
    if NODENUMBER.is_file():
        guests_of["nodenumber"] = NODENUMBER
    for label, wasm in guests_of.items():
        path = tmp / f"{label}.yaml"
        path.write_text(_CONFIG.format(url=wasm.as_uri()))
        configs[label] = load_config(path, registry)
    best: dict[str, dict[str, float | None]] = {}
    for round_ in range(rounds + 1):  # round 0 warms up (imports, caches) and is dropped
        for label, config in configs.items():
            for path_name in PATHS if label != "default" else ("native",):

                def run(config: Any = config, label: str = label) -> float:
                    sim = Simulation(cluster, config, registry, seed=0)
                    started = _clock()
                    result = sim.run()
                    wall = _clock() - started
                    sim.close()
                    if result.counts()["Scheduled"] != pods:
                        raise SystemExit(f"{label}: expected {pods} scheduled")
                    return pods / wall

                rate = with_path(path_name, run)
                if not round_:
                    continue
                row = best.setdefault(label, {})
                row[path_name] = max(rate, row.get(path_name) or 0.0)
    return best


_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Wasm
  pluginConfig:
  - name: Wasm
    args:
      guestURL: {url}
"""


def run_table(
    guests: Path, budget: float, handle: Any, pods: int, rounds: int
) -> list[dict[str, Any]]:
    """The rows: measure, ctypes, native, public (None where it does not apply)."""
    from wasmsched.wasm._fastpath import native_available

    public_call, public_cb = _public_boundary(b"node-0001", budget)
    cols: dict[str, dict[str, float | None]] = {}
    for path in PATHS:
        if path == "native" and not native_available():
            continue
        for measure, value in _plugin_rows(path, guests, handle, budget).items():
            cols.setdefault(measure, {})[path] = value
    cols["export call (noop filter)"]["public"] = public_call
    cols["host callback (currentNodeName)"]["public"] = public_cb
    for measure, value in _wazero_rows(guests, budget).items():
        cols[measure]["wazero"] = value
    sims = _simulations(guests, pods, rounds)
    default = sims["default"]["native"] or 0.0
    added: dict[str, float | None] = {}
    for path, rate in sims["noop-wat"].items():
        added[path] = None if rate is None else (1 / rate - 1 / default) * 1e6 / SCORED_NODES
    cols["Filter+Score per node added to a 500-node cycle"] = added
    cols["default profile, 500 nodes: pods/s"] = {"native": default}
    if "nodenumber" in sims:
        cols["nodenumber added: pods/s ratio to the default profile"] = {
            path: None if rate is None else rate / default
            for path, rate in sims["nodenumber"].items()
        }
    return [
        {"measure": m, **{k: v.get(k) for k in ("ctypes", "native", "public", "wazero")}}
        for m, v in cols.items()
    ]


def print_table(rows: list[dict[str, Any]]) -> None:
    def cell(v: float | None) -> str:
        return f"{v:>9.3f}" if v is not None else f"{'-':>9}"

    print(
        f"{'issue 11, wasm rows':<54} {'ctypes':>9} {'native':>9} {'public':>9} {'wazero':>9}"
        f" {'ctypes/native':>14} {'native/wazero':>14}"
    )
    for row in rows:
        c, n, w = row["ctypes"], row["native"], row.get("wazero")
        ratio = f"{c / n:>13.2f}x" if c and n and "ratio" not in row["measure"] else f"{'-':>14}"
        versus = f"{n / w:>13.2f}x" if n and w else f"{'-':>14}"
        print(
            f"{row['measure']:<54} {cell(c)} {cell(n)} {cell(row['public'])} {cell(w)} {ratio}"
            f" {versus}"
        )
    if not NODENUMBER.is_file():
        print(
            f"(no {NODENUMBER.relative_to(ROOT)}: scripts/build_rust_guests.py --out examples/rust/build)"
        )
    for row in rows:
        target = TARGETS.get(row["measure"])
        best = row["native"] if row["native"] is not None else row["ctypes"]
        if target is None or best is None:
            continue
        limit, unit, upstream = target
        if row.get("wazero"):  # measured side by side in this run: that is the target
            limit, upstream = row["wazero"], "Go host call path over wazero, this run"
        ok = best >= limit if unit == "ratio" else best <= limit
        sign = ">=" if unit == "ratio" else "<="
        note = f" (upstream: {upstream})" if upstream else ""
        shown = f"{best:.3f}" if unit == "ratio" else f"{best:.3f} µs"
        bound = f"{limit:.3f}" if unit != "ratio" else f"{limit}"
        print(
            f"{'PASS' if ok else 'FAIL'} {row['measure']}: {shown} {sign} {bound}{'' if unit == 'ratio' else ' µs'}{note}"
        )
