"""wasmsched.wasm.nodes: WasmPlugin.filter_columns / score_columns against the per-node forms,
on both call paths (compiled and ctypes), differentially (hypothesis): the same statuses,
scores, guest calls, logs and instance fate, with the per-node loops' stop rules.

The guest (guests/wat/per_node.wat) acts by the last digit of each node name, so a list
of digits is a script of rejections, reasons, logs, errors and traps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wasm_support import Plugins, make_pod, new_state, node_info
from wasmsched.framework.columns import NodeColumns, NodeRows, verdicts
from wasmsched.framework.status import Code, Status
from wasmsched.wasm._fastpath import NATIVE_ENV, native_available

PATHS = [
    "ctypes",
    pytest.param(
        "native",
        marks=pytest.mark.skipif(not native_available(), reason="the extension was not built"),
    ),
]


@pytest.fixture(params=PATHS)
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[Any, Any]]:
    """Two plugins of the per_node guest on the path asked for: (batch, per node)."""
    mp = pytest.MonkeyPatch()
    mp.setenv(NATIVE_ENV, "1" if request.param == "native" else "0")
    plugins = Plugins()
    try:
        batch = plugins.load("per_node", log_severity=0)
        single = plugins.load("per_node", log_severity=0)
        yield batch, single
    finally:
        plugins.close()
        mp.undo()


def _key(status: Status | None) -> tuple[int, str] | None:
    return None if status is None else (status.code, status.message)


def _passes(status: Status | None) -> Status | None:
    """A Filter status as the node search reads it: a success passes, whatever its message
    (the vectorized form's 0)."""
    return None if status is not None and status.code == Code.SUCCESS else status


def _ends(status: Status | None) -> bool:
    return status is not None and status.code != Code.SUCCESS and not status.is_rejected()


def _calls(plugin: Any) -> int | None:
    """The guest's call counter, None when the last call discarded its instance."""
    guest = plugin.pool.scheduled
    if guest is None or guest.dead:
        return None
    count: int = guest.inst.caller("calls", "i32")()
    return count


def _logs(plugin: Any) -> list[tuple[int, str]]:
    return [(r.severity, r.text) for r in plugin.logs]


def _rows(nodes: list[Any]) -> NodeRows:
    return NodeRows(NodeColumns(nodes), np.arange(len(nodes), dtype=np.intp))


def filter_batch(plugin: Any, state: Any, pod: Any, nodes: list[Any]) -> list[Status | None]:
    """The plugin's Filter of the nodes as the node search runs it (framework/node_search):
    the vectorized form, else (the ctypes path) the per-node form up to the first error;
    every status in order, the error repeated for the nodes after it (not filtered)."""
    answer = plugin.filter_columns(state, pod, _rows(nodes))
    if answer is None:
        out: list[Status | None] = []
        for ni in nodes:
            out.append(_passes(plugin.filter(state, pod, ni)))
            if _ends(out[-1]):
                break
    else:
        codes, table = answer
        out = [table[c - 1] if c else None for c in codes.tolist()]
        for i, status in enumerate(out):
            if _ends(status):
                del out[i + 1 :]
                break
    return out + [out[-1]] * (len(nodes) - len(out)) if out else out


def score_batch(plugin: Any, state: Any, pod: Any, nodes: list[Any]) -> tuple[list[int], Any]:
    """The plugin's Score of the nodes as the node search runs it: every score, or the
    first failure's status."""
    got = plugin.score_columns(state, pod, _rows(nodes))
    if isinstance(got, Status):
        return [], got
    if got is not None:
        return got.tolist(), None
    values = []
    for ni in nodes:
        value, status = plugin.score(state, pod, ni)
        if status is not None and status.code != Code.SUCCESS:
            return [], status
        values.append(value)
    return values, None


digits = st.lists(st.integers(0, 9), max_size=40)
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(script=digits, uid=st.sampled_from(["uid-a", "uid-b"]))
def test_filter_batch_equals_per_node(pair: tuple[Any, Any], script: list[int], uid: str) -> None:
    batch, single = pair
    nodes = [node_info(f"n{i}-{d}") for i, d in enumerate(script)]
    pod = make_pod(uid=uid)
    before = (_calls(batch), _calls(single))
    got = filter_batch(batch, new_state(), pod, nodes)
    want: list[Status | None] = []
    for ni in nodes:
        want.append(single.filter(new_state(), pod, ni))
        if _ends(want[-1]):
            break  # kube-scheduler's search ends at the first error
    assert len(got) == len(nodes)
    assert [_key(s) for s in got[: len(want)]] == [_key(_passes(s)) for s in want]
    if want and _ends(want[-1]):
        assert all(s is got[len(want) - 1] for s in got[len(want) :])
    assert _logs(batch) == _logs(single)
    after = (_calls(batch), _calls(single))
    assert after[0] == after[1]
    if after[0] is not None and before[0] is not None and before == (before[0], before[0]):
        assert after[0] - before[0] == len(want) or after[0] == len(want)


@SETTINGS
@given(script=digits, uid=st.sampled_from(["uid-a", "uid-b"]))
def test_score_batch_equals_per_node(pair: tuple[Any, Any], script: list[int], uid: str) -> None:
    batch, single = pair
    nodes = [node_info(f"n{i}-{d}") for i, d in enumerate(script)]
    pod = make_pod(uid=uid)
    values, status = score_batch(batch, new_state(), pod, nodes)
    want_values: list[int] = []
    want_status: Status | None = None
    for ni in nodes:
        value, s = single.score(new_state(), pod, ni)
        if s is not None and s.code != Code.SUCCESS:
            want_status = s
            break
        want_values.append(value)
    if want_status is None:
        assert (values, status) == (want_values, None)
    else:
        assert values == []
        assert _key(status) == _key(want_status)
    assert _logs(batch) == _logs(single)
    assert _calls(batch) == _calls(single)


@pytest.mark.parametrize(
    ("script", "want"),
    [
        ([0, 1, 2], [None, (2, ""), (3, "no fit")]),
        ([9, 7], [None, (6, "")]),  # a success passes, whatever its message
        ([0, 4, 0, 0], [None, (1, ""), (1, ""), (1, "")]),  # after an error: repeated
        ([8, 0], [(5, ""), (5, "")]),
    ],
)
def test_filter_batch_table(pair: tuple[Any, Any], script: list[int], want: list[Any]) -> None:
    batch, _ = pair
    nodes = [node_info(f"n{i}-{d}") for i, d in enumerate(script)]
    got = filter_batch(batch, new_state(), make_pod(), nodes)
    assert [_key(s) for s in got] == want
    assert _calls(batch) == min(
        len(script), 1 + next((i for i, d in enumerate(script) if d in (4, 8)), len(script) - 1)
    )


def test_filter_batch_trap_fails_that_node_and_discards_the_instance(
    pair: tuple[Any, Any],
) -> None:
    batch, _ = pair
    nodes = [node_info(n) for n in ("a-0", "b-5", "c-0")]
    got = filter_batch(batch, new_state(), make_pod(), nodes)
    assert got[0] is None
    assert got[1] is not None and got[1].code == Code.ERROR
    assert got[1].message.startswith("wasm: filter error:")
    assert got[2] is got[1]
    assert _calls(batch) is None  # the trapped instance is gone
    # the next cycle gets a fresh instance, which counts from zero
    assert filter_batch(batch, new_state(), make_pod(uid="next"), [node_info("d-0")]) == [None]
    assert _calls(batch) == 1


def test_score_batch_values(pair: tuple[Any, Any]) -> None:
    batch, _ = pair
    nodes = [node_info(n) for n in ("a-0", "bb-1", "c-2", "d-6", "e-7")]
    assert score_batch(batch, new_state(), make_pod(), nodes) == ([3, 20, 30, -3, 10], None)
    assert _logs(batch) == [(0, "called"), (0, '"called" node="e-7"')]


def test_batch_path_is_the_compiled_loop_when_built(pair: tuple[Any, Any]) -> None:
    batch, _ = pair
    filter_batch(batch, new_state(), make_pod(), [node_info("a-0")])
    guest = batch.pool.scheduled
    compiled = native_available() and guest.inst._native is not None
    assert (guest.filter_each is not None) == compiled
    assert (guest.score_each is not None) == compiled


# --- in the framework: the batch Filter search against the per-node one --------------------


def _simulate(config: Path, nodes: list[str], pods: int, batch: bool) -> tuple[Any, ...]:
    from wasmsched.api.manifests import ClusterObjects
    from wasmsched.config import load_config
    from wasmsched.framework.runtime import Framework
    from wasmsched.scheduler import registry as registry_module
    from wasmsched.sim.simulation import Simulation

    cluster = ClusterObjects(
        nodes=[_node(name) for name in nodes],
        pods=[
            make_pod(name=f"p{i}", uid=f"uid-{i}", containers=_containers()) for i in range(pods)
        ],
        others=[],
    )
    registry = registry_module.default_registry()
    Framework.use_batch = batch
    try:
        sim = Simulation(cluster, load_config(config, registry), registry, seed=7)
        result = sim.run()
        fwk = sim.scheduler.frameworks["default-scheduler"]
        wasm = next(p for p in fwk.all_plugins if p.name == "PerNode")
        logs = _logs(wasm)
        calls = _calls(wasm)  # every Filter and Score call the guest saw
        sim.close()
    finally:
        Framework.use_batch = True
    outcomes = [(o.pod.name, o.node, o.result, o.message) for o in result.pods if o.was_pending]
    return outcomes, logs, calls


def _containers() -> list[dict[str, Any]]:
    return [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]


def _node(name: str) -> Any:
    from wasmsched.api.objects import Node

    capacity = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"capacity": capacity, "allocatable": capacity},
        }
    )


CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: PerNode
  pluginConfig:
  - name: PerNode
    args:
      guestURL: {url}
"""


@settings(max_examples=12, deadline=None)
@given(
    script=st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 3, 6, 7, 9]), min_size=100, max_size=160),
    error_at=st.none() | st.integers(0, 159),
    pods=st.integers(1, 12),
)
def test_batch_search_places_and_logs_as_per_node(
    script: list[int], error_at: int | None, pods: int
) -> None:
    """Over 100 nodes the search stops early (numFeasibleNodesToFind): the wasm plugin's
    batch Filter must see exactly the nodes the per-node search shows it (its logs name
    them), and every pod lands on the same node with the same message."""
    import tempfile

    from guests_build import guest

    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(CONFIG.format(url=guest("per_node").as_uri()))
        if error_at is not None:
            script[error_at % len(script)] = 4  # a Filter error: the cycle ends there
        nodes = [f"n{i:03d}-{d}" for i, d in enumerate(script)]
        assert _simulate(config, nodes, pods, True) == _simulate(config, nodes, pods, False)


@pytest.mark.skipif(not native_available(), reason="the extension was not built")
@pytest.mark.parametrize("name", ["per_node", "prescore_score_only"])
def test_compiled_loop_never_falls_back_to_per_node_calls(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the compiled path the batch forms call the guest from C: the per-node methods
    are not used, whichever exports the guest has (a Score-only guest included)."""
    monkeypatch.setenv(NATIVE_ENV, "1")
    plugins = Plugins()
    try:
        plugin = plugins.load(name)

        def per_node(*args: Any) -> Any:
            raise AssertionError("per-node form called")

        monkeypatch.setattr(plugin, "score", per_node)
        monkeypatch.setattr(plugin, "filter", per_node)
        nodes = [node_info(f"n{i}-0") for i in range(3)]
        values, status = score_batch(plugin, new_state(), make_pod(), nodes)
        assert status is None and len(values) == 3
        if "filter" in plugin.exports:
            assert filter_batch(plugin, new_state(), make_pod(), nodes) == [None] * 3
    finally:
        plugins.close()


@SETTINGS
@given(script=digits, uid=st.sampled_from(["uid-a", "uid-b", "uid-c"]))
def test_compiled_per_node_calls_equal_the_python_methods(
    pair: tuple[Any, Any], script: list[int], uid: str
) -> None:
    """``plugin.filter``/``plugin.score`` (compiled forms on the compiled path, see
    nodes.install_compiled_calls) answer as the Python methods of WasmPlugin, call by call:
    statuses, scores, logs, guest calls and traps."""
    from wasmsched.wasm import WasmPlugin

    compiled, python = pair
    pod = make_pod(uid=uid)
    for i, d in enumerate(script):
        ni = node_info(f"n{i}-{d}")
        got = compiled.filter(new_state(), pod, ni)
        want = WasmPlugin.filter(python, new_state(), pod, ni)
        assert _key(got) == _key(want)
        got_value, got_status = compiled.score(new_state(), pod, ni)
        want_value, want_status = WasmPlugin.score(python, new_state(), pod, ni)
        assert (got_value, _key(got_status)) == (want_value, _key(want_status))
        assert _calls(compiled) == _calls(python)
    assert _logs(compiled) == _logs(python)


@pytest.mark.parametrize("native", [True, False])
def test_compiled_forms_installed_on_the_compiled_path_only(
    native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if native and not native_available():
        pytest.skip("the extension was not built")
    monkeypatch.setenv(NATIVE_ENV, "1" if native else "0")
    plugins = Plugins()
    try:
        plugin = plugins.load("per_node")
        assert (type(plugin.filter).__name__ == "Hot") == native
        assert (type(plugin.score).__name__ == "Hot") == native
        assert plugin.filter(new_state(), make_pod(), node_info("a-1")).code == Code.UNSCHEDULABLE
    finally:
        plugins.close()


class _ErrorsOnE:
    """A Python Filter plugin with a vectorized form: Error on nodes whose name ends in "e"."""

    name = "ErrorsOnE"

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return Status(Code.ERROR, "e node") if node_info.name.endswith("e") else None

    def filter_columns(self, state: Any, pod: Any, rows: NodeRows) -> Any:
        return verdicts(
            len(rows), ((i, self.filter(state, pod, ni)) for i, ni in enumerate(rows.infos()))
        )


CONFIG_WITH_ERRORS = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: ErrorsOnE
      - name: PerNode
  pluginConfig:
  - name: PerNode
    args:
      guestURL: {url}
"""


@settings(max_examples=8, deadline=None)
@given(
    script=st.lists(st.sampled_from([0, 0, 1, 3, 3, 6]), min_size=100, max_size=140),
    error_at=st.integers(0, 139),
)
def test_no_filter_sees_nodes_after_an_earlier_plugins_error(
    script: list[int], error_at: int
) -> None:
    """framework/node_search: the plugin-by-plugin Filter drops the nodes after an error from
    the later plugins, so the wasm plugin (filtered after ErrorsOnE) logs the same nodes as in
    the per-node search, which ends at the error."""
    import tempfile

    from guests_build import guest
    from wasmsched.scheduler import registry as registry_module

    names = [f"n{i:03d}-{d}" for i, d in enumerate(script)]
    names[error_at % len(names)] += "e"
    original = registry_module.default_registry

    def with_errors() -> Any:
        reg = original()
        reg.register("ErrorsOnE", lambda args, handle: _ErrorsOnE())
        return reg

    registry_module.default_registry = with_errors  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "config.yaml"
            config.write_text(CONFIG_WITH_ERRORS.format(url=guest("per_node").as_uri()))
            batch = _simulate(config, names, 3, True)
            assert batch == _simulate(config, names, 3, False)
    finally:
        registry_module.default_registry = original  # type: ignore[assignment]


def test_search_stops_calling_the_wasm_filter_at_the_stop_node() -> None:
    """150 nodes, a rejection every 5th of the first 101: the search needs 100 feasible
    nodes and stops at the 101st (filtered, not kept). Nodes 0-100 give 80 passes, so it
    goes on to node 121: 122 Filter calls, then 100 Score calls. The batch search's later
    chunks must end there too, not run the guest over a longer tail."""
    import tempfile

    from guests_build import guest

    script = [1 if i % 5 == 0 and i < 101 else 0 for i in range(150)]
    nodes = [f"n{i:03d}-{d}" for i, d in enumerate(script)]
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(CONFIG.format(url=guest("per_node").as_uri()))
        batch = _simulate(config, nodes, 1, True)
        assert batch == _simulate(config, nodes, 1, False)
    assert batch[2] == 122 + 100


_BUSY_WAT = """
(module
  (memory (export "memory") 1)
  (func (export "filter") (result i32)
    (local $i i32)
    (loop $again
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const %d))))
    i32.const 0)
  (func (export "score") (result i64) (i64.const 0))
)
"""
_LOOP_WAT = """
(module
  (memory (export "memory") 1)
  (func (export "filter") (result i32) (loop $l (br $l)) i32.const 0)
  (func (export "score") (result i64) (i64.const 0))
)
"""


@pytest.mark.parametrize("path", PATHS)
def test_batch_deadline_is_per_call(path: str, tmp_path: Path) -> None:
    """The compiled loop keeps the GIL across its calls (the native watchdog advances the
    epoch meanwhile): a guest that never returns still fails at its deadline, and calls
    that each fit their deadline all succeed however long the batch takes in all."""
    import time

    mp = pytest.MonkeyPatch()
    mp.setenv(NATIVE_ENV, "1" if path == "native" else "0")
    plugins = Plugins()
    try:
        loop = tmp_path / "loop.wat"
        loop.write_text(_LOOP_WAT)
        stuck = plugins.load(loop, call_timeout_ms=100)
        start = time.monotonic()
        got = filter_batch(stuck, new_state(), make_pod(), [node_info("a-0"), node_info("a-1")])
        assert time.monotonic() - start < 2.0
        assert got[0] is not None and got[0].code == Code.ERROR
        assert "deadline of 100 ms exceeded" in got[0].message

        busy = tmp_path / "busy.wat"
        busy.write_text(_BUSY_WAT % 20_000_000)
        probe = plugins.load(busy, call_timeout_ms=60_000)
        start = time.monotonic()
        assert probe.filter(new_state(), make_pod(), node_info("p-0")) is None
        one = time.monotonic() - start
        timeout_ms = max(50, int(one * 4000))
        nodes = [node_info(f"b-{i}") for i in range(int(timeout_ms / 1000 / one * 2.5) + 2)]
        plugin = plugins.load(busy, call_timeout_ms=timeout_ms)
        start = time.monotonic()
        assert filter_batch(plugin, new_state(), make_pod(), nodes) == [None] * len(nodes)
        assert time.monotonic() - start > timeout_ms / 1000  # longer than one deadline
    finally:
        plugins.close()
        mp.undo()
