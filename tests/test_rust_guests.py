"""The Rust guest SDK's example plugins (sdk/rust/examples), built with
scripts/build_rust_guests.py and run through our wasm host."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import wasmtime

from wasm_support import (
    FakeHandle,
    Plugins,
    make_node,
    make_pod,
    new_state,
    node_info,
    node_real,
    plugins_fixture,
    pod_real,
    pod_small,
)
from wasmsched.api.objects import Node
from wasmsched.framework.interfaces import MODE_NOOP, MODE_OVERRIDE, NodeScore, NodeToStatus
from wasmsched.framework.node_info import NodeInfo, PodInfo
from wasmsched.framework.status import Code, Status

ROOT = Path(__file__).resolve().parent.parent

# Every function the upstream Go host provides (abi.md section 1): a guest importing only
# these runs there too.
UPSTREAM_IMPORTS = {
    "k8s.io/api": {"node", "nodeList"},
    "k8s.io/klog": {"log", "logs", "severity"},
    "k8s.io/scheduler": {
        "get_config", "currentPod", "targetPod", "currentNodeName", "filteredNodeList",
        "nodeToStatusMap", "nodeScoreList", "nodeImageStates", "result.status_reason",
        "result.node_names", "result.nominated_node_name", "result.cluster_events",
        "result.normalized_score_list", "handle.eventrecorder.eventf",
        "handle.reject_waiting_pod", "handle.get_waiting_pod",
    },
    "wasi_snapshot_preview1": None,  # the whole of WASI preview 1
}  # fmt: skip

EXPECTED_EXPORTS = {
    "nodenumber": {"enqueue", "prefilter", "prescore", "score"},
    "advanced": {"enqueue", "prefilter", "prescore", "score"},
    "imagelocality": {"prefilter", "score"},
    "filter_label": {"enqueue", "filter"},
    "noop": {"enqueue", "prefilter", "filter", "score"},
    "test": {"enqueue", "prefilter", "filter", "score"},
    "all_hooks": {
        "enqueue",
        "prefilter",
        "filter",
        "postfilter",
        "addpod",
        "removepod",
        "prescore",
        "score",
        "normalizescore",
        "reserve",
        "unreserve",
        "permit",
        "prebind",
        "bind",
        "postbind",
    },
}


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_rust_guests", ROOT / "scripts" / "build_rust_guests.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def rust_guests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    rustc = os.environ.get("RUSTC") or "/usr/bin/rustc"
    if not Path(rustc).is_file():
        pytest.skip(
            f"no Rust toolchain: {rustc} is missing (Debian: rustc, libstd-rust-dev-wasm32)"
        )
    built: dict[str, Path] = _builder().build(tmp_path_factory.mktemp("rust-guests"))
    return built


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


@pytest.fixture
def load(plugins: Plugins, rust_guests: dict[str, Path]) -> Any:
    def _load(name: str, **kwargs: Any) -> Any:
        return plugins.load(rust_guests[name], **kwargs)

    return _load


def log_texts(plugin: Any) -> list[str]:
    return [r.text for r in plugin.logs]


# --- the wasm binaries ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED_EXPORTS))
def test_exports_are_exactly_the_registered_hooks(
    rust_guests: dict[str, Path], load: Any, name: str
) -> None:
    module = wasmtime.Module.from_file(wasmtime.Engine(), str(rust_guests[name]))
    funcs = {e.name for e in module.exports if isinstance(e.type, wasmtime.FuncType)}
    assert funcs == EXPECTED_EXPORTS[name] | {"_start"}
    assert "memory" in {e.name for e in module.exports}
    config = '{"requiredLabel": "disktype"}' if name == "filter_label" else ""
    assert load(name, guest_config=config).exports >= EXPECTED_EXPORTS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_EXPORTS))
def test_imports_exist_in_the_upstream_host(rust_guests: dict[str, Path], name: str) -> None:
    module = wasmtime.Module.from_file(wasmtime.Engine(), str(rust_guests[name]))
    for imp in module.imports:
        assert imp.module in UPSTREAM_IMPORTS, imp.module
        allowed = UPSTREAM_IMPORTS[imp.module]
        assert allowed is None or imp.name in allowed, f"{imp.module}.{imp.name}"


@pytest.mark.parametrize("name", sorted(EXPECTED_EXPORTS))
def test_binaries_are_small(rust_guests: dict[str, Path], name: str) -> None:
    """Upstream's TinyGo examples are about 1 MB; ours stay well below."""
    assert rust_guests[name].stat().st_size < 300_000


# --- nodenumber / advanced ------------------------------------------------------------------

HAPPY = make_pod("happy8-meta", namespace="", uid="happy-uid", node_name="happy8")
GLAD = [make_node("glad9"), make_node("glad8")]


def run_nodenumber(plugin: Any, pod: Any) -> dict[str, int]:
    """One cycle: PreFilter, PreScore, then Score on each GLAD node."""
    state = new_state()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    infos = [NodeInfo(n) for n in GLAD]
    assert plugin.pre_score(state, pod, infos) is None
    scores = {}
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is None
        scores[info.name] = score
    return scores


@pytest.mark.parametrize(
    ("pod", "config", "expected", "event"),
    [
        (make_pod("happy8"), "", {"glad9": 0, "glad8": 10}, "match lastNumber Continue"),
        (make_pod("happy8"), '{"reverse": true}', {"glad9": 10, "glad8": 0}, "match lastNumber Continue"),
        (make_pod("happy9"), '{"reverse": false}', {"glad9": 10, "glad8": 0}, "match lastNumber Continue"),
        # The pod name has no trailing digit: every node matches.
        (HAPPY, "", {"glad9": 10, "glad8": 10}, "not match lastNumber Skip"),
        (HAPPY, '{"reverse": true}', {"glad9": 0, "glad8": 0}, "not match lastNumber Skip"),
    ],
)  # fmt: skip
def test_nodenumber_scores_by_pod_name(
    load: Any, pod: Any, config: str, expected: dict[str, int], event: str
) -> None:
    handle = FakeHandle(GLAD)
    plugin = load("nodenumber", handle=handle, guest_config=config)
    assert run_nodenumber(plugin, pod) == expected
    assert handle.event_texts() == [f"{pod.name} PreScore {event} "]
    applied = ["NodeNumberArgs is successfully applied"] if config else []
    namespace = pod.metadata.get("namespace", "")  # as encoded, without API defaulting
    ref = f"{namespace}/{pod.name}" if namespace else pod.name
    assert log_texts(plugin) == [
        *applied,
        f'"execute PreScore on NodeNumber plugin" pod="{ref}"',
        f'"execute Score on NodeNumber plugin" pod="{ref}"',
        f'"execute Score on NodeNumber plugin" pod="{ref}"',
    ]


def test_nodenumber_state_is_reset_at_each_prefilter(load: Any) -> None:
    """The digit stored by one cycle's PreScore does not leak into the next cycle."""
    plugin = load("nodenumber", handle=FakeHandle(GLAD))
    assert run_nodenumber(plugin, make_pod("happy8")) == {"glad9": 0, "glad8": 10}
    assert run_nodenumber(plugin, make_pod("happy", uid="other")) == {"glad9": 10, "glad8": 10}
    assert run_nodenumber(plugin, make_pod("happy9", uid="third")) == {"glad9": 10, "glad8": 0}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("", {"glad9": 0, "glad8": 10}),
        ('{"reverse": false}', {"glad9": 0, "glad8": 10}),
        ('{"reverse": true}', {"glad9": 10, "glad8": 0}),
    ],
)
def test_advanced_matches_upstream_e2e(load: Any, config: str, expected: dict[str, int]) -> None:
    """abi.md section 8 item 25: the digit comes from spec.nodeName."""
    handle = FakeHandle(GLAD)
    plugin = load("advanced", handle=handle, guest_config=config)
    assert run_nodenumber(plugin, HAPPY) == expected
    assert handle.event_texts() == ["happy8-meta PreScore match lastNumber Continue "]
    applied = ["NodeNumberArgs is successfully applied"] if config else []
    assert log_texts(plugin) == [
        *applied,
        '"execute PreScore on NodeNumber plugin" pod="happy8-meta"',
        '"execute Score on NodeNumber plugin" pod="happy8-meta"',
        '"execute Score on NodeNumber plugin" pod="happy8-meta"',
    ]


def test_advanced_skips_without_filtered_nodes(load: Any) -> None:
    plugin = load("advanced", handle=FakeHandle(GLAD))
    state = new_state()
    plugin.pre_filter(state, HAPPY, [])
    assert plugin.pre_score(state, HAPPY, []) == Status(Code.SKIP, "")


@pytest.mark.parametrize("severity", [1, 3])
def test_log_severity_silences_info(load: Any, severity: int) -> None:
    plugin = load("nodenumber", handle=FakeHandle(GLAD), guest_config="{}", log_severity=severity)
    run_nodenumber(plugin, HAPPY)
    assert log_texts(plugin) == []


@pytest.mark.parametrize("name", ["nodenumber", "advanced"])
def test_nodenumber_enqueue(load: Any, name: str) -> None:
    (event,) = load(name).events_to_register()
    assert (event.event.resource, event.event.action) == ("Node", 1)


@pytest.mark.parametrize("name", ["nodenumber", "advanced"])
def test_bad_config_fails_plugin_creation(load: Any, name: str) -> None:
    from wasmsched.wasm import WasmError

    with pytest.raises(WasmError) as err:
        load(name, guest_config="{not json")
    assert "panic: decode arg into NodeNumberArgs" in err.value.problem


# --- imagelocality --------------------------------------------------------------------------

MB100 = 100_000_000
IMAGE_NODES = [
    make_node("no-image-node1", [(["other-image:v1"], MB100), (["other-image:v2"], MB100)]),
    *(
        make_node(name, [([f"test-image:v{i}"], MB100) for i in (1, 2, 3)])
        for name in ("image-node1", "image-node2")
    ),
]


@pytest.mark.parametrize(
    ("node", "expected"), [("no-image-node1", 0), ("image-node1", 4), ("image-node2", 4)]
)
def test_imagelocality(load: Any, node: str, expected: int) -> None:
    """abi.md section 8 item 26."""
    handle = FakeHandle(IMAGE_NODES)
    plugin = load("imagelocality", handle=handle)
    pod = make_pod("image-pod", containers=[{"name": "c", "image": "test-image:v1"}])
    state = new_state()
    plugin.pre_filter(state, pod, [])
    info = handle.snapshot().get(node)
    assert info is not None
    assert plugin.score(state, pod, info) == (expected, None)


def test_imagelocality_untagged_image_and_init_containers(load: Any) -> None:
    nodes = [make_node("n1", [(["big:latest"], 600 * 2**20)]), make_node("n2")]
    plugin = load("imagelocality", handle=FakeHandle(nodes))
    state = new_state()
    pod = make_pod("p", containers=[{"name": "c", "image": "big"}])
    plugin.pre_filter(state, pod, [])
    # 600 MiB on 1 of 2 nodes = 300 MiB: 100 * (300 - 23) / (1000 - 23) = 28
    assert plugin.score(state, pod, NodeInfo(nodes[0])) == (28, None)
    # An init container doubles the threshold: 100 * (300 - 23) / (2000 - 23) = 14
    pod2 = make_pod(
        "p2",
        uid="p2",
        containers=[{"name": "c", "image": "big"}],
        initContainers=[{"name": "i", "image": "small:1"}],
    )
    plugin.pre_filter(state, pod2, [])
    assert plugin.score(state, pod2, NodeInfo(nodes[0])) == (14, None)


def test_imagelocality_no_nodes(load: Any) -> None:
    plugin = load("imagelocality", handle=FakeHandle())
    pod = make_pod("p", containers=[{"name": "c", "image": "test-image:v1"}])
    state = new_state()
    plugin.pre_filter(state, pod, [])
    assert plugin.score(state, pod, node_info("gone")) == (
        0,
        Status(Code.ERROR, "failed to list nodes"),
    )


# --- filter_label ---------------------------------------------------------------------------


def labelled(name: str, **labels: str) -> Node:
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})


LABEL_NODES = [
    labelled("fast", disktype="ssd"),
    labelled("slow", disktype="hdd"),
    labelled("bare"),
]


@pytest.mark.parametrize(
    ("config", "node", "expected"),
    [
        ('{"requiredLabel": "disktype", "value": "ssd"}', "fast", None),
        (
            '{"requiredLabel": "disktype", "value": "ssd"}',
            "slow",
            Status(Code.UNSCHEDULABLE, 'node "slow" has label disktype=hdd, want ssd'),
        ),
        (
            '{"requiredLabel": "disktype", "value": "ssd"}',
            "bare",
            Status(Code.UNSCHEDULABLE, 'node "bare" does not have label disktype=ssd'),
        ),
        ('{"requiredLabel": "disktype"}', "slow", None),
        (
            '{"requiredLabel": "disktype"}',
            "bare",
            Status(Code.UNSCHEDULABLE, 'node "bare" does not have label disktype'),
        ),
    ],
)
def test_filter_label(load: Any, config: str, node: str, expected: Status | None) -> None:
    handle = FakeHandle(LABEL_NODES)
    plugin = load("filter_label", handle=handle, guest_config=config)
    info = handle.snapshot().get(node)
    assert info is not None
    assert plugin.filter(new_state(), pod_small(), info) == expected


def test_filter_label_unknown_node_is_an_error(load: Any) -> None:
    plugin = load("filter_label", handle=FakeHandle(), guest_config='{"requiredLabel": "x"}')
    assert plugin.filter(new_state(), pod_small(), node_info("ghost")) == Status(
        Code.ERROR, 'node "ghost" not found'
    )


@pytest.mark.parametrize("config", ["", "{}", '{"requiredLabel": 3}', "nope"])
def test_filter_label_needs_a_rule(load: Any, config: str) -> None:
    from wasmsched.wasm import WasmError

    with pytest.raises(WasmError) as err:
        load("filter_label", guest_config=config)
    assert "panic: filter_label:" in err.value.problem
    assert "requiredLabel" in err.value.problem


def test_filter_label_requeues_on_node_add_and_label_change(load: Any) -> None:
    (event,) = load("filter_label", guest_config='{"requiredLabel": "x"}').events_to_register()
    assert (event.event.resource, int(event.event.action)) == ("Node", 1 | 8)


# --- noop and test (benchmark guests) -------------------------------------------------------


def test_noop(load: Any) -> None:
    from wasmsched.wasm.abi import default_events

    plugin = load("noop", handle=FakeHandle([node_real()]))
    state = new_state()
    pod = pod_real()
    events = plugin.events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (e.event.resource, e.event.action) for e in default_events()
    ]
    assert plugin.pre_filter(state, pod, []) == (None, None)
    info = NodeInfo(node_real())
    assert plugin.filter(state, pod, info) is None
    assert plugin.score(state, pod, info) == (0, None)


@pytest.mark.parametrize("pod_fn", [pod_small, pod_real])
def test_test_guest_walks_real_objects(load: Any, pod_fn: Any) -> None:
    """Score = the pod's containers (init + regular) + the node's images."""
    node = node_real()
    plugin = load("test", handle=FakeHandle([node]))
    state = new_state()
    pod = pod_fn()
    info = NodeInfo(node)
    for _ in range(2):  # two cycles on the same instance
        assert plugin.pre_filter(state, pod, []) == (None, None)
        assert plugin.filter(state, pod, info) is None
        containers = len(pod.spec.get("containers", [])) + len(pod.spec.get("initContainers", []))
        assert plugin.score(state, pod, info) == (containers + 2, None)


def test_test_guest_reports_unknown_node(load: Any) -> None:
    plugin = load("test", handle=FakeHandle())
    status = plugin.filter(new_state(), pod_small(), node_info("ghost"))
    assert status == Status(Code.ERROR, 'node "ghost" not found')


# --- all_hooks: every extension point through the host --------------------------------------

CYCLE_NODES = [make_node("n1"), make_node("n2")]


def full_cycle(plugin: Any, pod: Any) -> None:
    """Every hook of one scheduling and binding cycle, checking each result; the guest
    panics if PreFilter's cycle state does not reach a later hook."""
    state = new_state()
    result, status = plugin.pre_filter(state, pod, [])
    assert status is None and result is not None and result.node_names == {"n1"}
    infos = [NodeInfo(n) for n in CYCLE_NODES]
    assert plugin.filter(state, pod, infos[0]) is None
    assert plugin.filter(state, pod, infos[1]) == Status(Code.UNSCHEDULABLE, "n1 != n2")
    statuses = NodeToStatus()
    statuses.set("n1", Status(Code.SUCCESS))
    result, status = plugin.post_filter(state, pod, statuses)
    assert status is None and result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == "n1"
    assert result.nominating_info.mode == MODE_OVERRIDE
    assert plugin.pre_score(state, pod, infos) == Status(2, "")
    assert [plugin.score(state, pod, i) for i in infos] == [(100, None), (0, None)]
    scores = [NodeScore("n2", 0), NodeScore("n1", 1)]
    assert plugin.normalize_score(state, pod, scores) is None
    assert [(s.name, s.score) for s in scores] == [("n2", 0), ("n1", 100)]
    assert plugin.reserve(state, pod, "n1") is None
    assert plugin.permit(state, pod, "n1") == (None, 0.0)
    assert plugin.pre_bind(state, pod, "n1") is None
    assert plugin.bind(state, pod, "n1") is None
    plugin.post_bind(state, pod, "n1")


def test_all_hooks_full_cycles_keep_state_per_cycle(load: Any) -> None:
    plugin = load("all_hooks", handle=FakeHandle(CYCLE_NODES))
    for i in range(2):
        full_cycle(plugin, make_pod(f"p{i}", uid=f"uid-{i}", node_name="n1"))
    trail = (
        "prefilter,filter,filter,postfilter,prescore,score,score,normalizescore,reserve,"
        "permit,prebind,bind,postbind"
    )
    assert log_texts(plugin) == [f'"postbind" node="n1" trail="{trail}"'] * 2


def test_all_hooks_real_pod_needs_a_bigger_buffer(load: Any) -> None:
    """The real pod is larger than the SDK's first 2 KiB buffer (the retry path)."""
    pod = pod_real()
    plugin = load("all_hooks", handle=FakeHandle([node_real()]))
    state = new_state()
    plugin.pre_filter(state, pod, [])
    assert plugin.filter(state, pod, NodeInfo(node_real())) is None


def test_all_hooks_postfilter_without_success(load: Any) -> None:
    plugin = load("all_hooks")
    pod = make_pod(node_name="good-node")
    state = new_state()
    plugin.pre_filter(state, pod, [])
    statuses = NodeToStatus()
    statuses.set("good-node", Status(Code.UNSCHEDULABLE))
    result, status = plugin.post_filter(state, pod, statuses)
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "good-node is unschedulable")
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.mode == MODE_NOOP


@pytest.mark.parametrize("hook", ["add_pod", "remove_pod"])
def test_all_hooks_prefilter_extensions(load: Any, hook: str) -> None:
    plugin = load("all_hooks")
    pod = pod_small()
    state = new_state()
    plugin.pre_filter(state, pod, [])
    call = getattr(plugin, hook)
    target = PodInfo(make_pod("bad-pod", uid="bad-uid"))
    assert call(state, pod, target, node_info("good")) is None
    assert call(state, pod, target, node_info("bad")) == Status(
        Code.ERROR, "Node name is bad and PodInfo name is bad-pod"
    )


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ("wait", (Status(Code.WAIT, "name is wait"), 10.0)),
        ("bad", (Status(Code.ERROR, "name is bad"), 0.0)),
    ],
)
def test_all_hooks_permit(load: Any, node: str, expected: tuple[Status, float]) -> None:
    plugin = load("all_hooks")
    pod = pod_small()
    state = new_state()
    plugin.pre_filter(state, pod, [])
    assert plugin.permit(state, pod, node) == expected


def test_all_hooks_score_error_and_enqueue(load: Any) -> None:
    plugin = load("all_hooks")
    pod = pod_small()
    state = new_state()
    plugin.pre_filter(state, pod, [])
    assert plugin.score(state, pod, node_info("err")) == (0, Status(Code.ERROR, "score failed"))
    events = [(e.event.resource, int(e.event.action)) for e in plugin.events_to_register()]
    assert events == [("Node", 1), ("PersistentVolume", 2)]


def test_all_hooks_hook_without_prefilter_state_fails_cleanly(load: Any) -> None:
    """A fresh instance never saw PreFilter: the guest's panic becomes an Error status."""
    plugin = load("all_hooks")
    status = plugin.filter(new_state(), pod_small(), node_info("good-node"))
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("wasm: filter error: panic: filter: cycle state lost")


def test_all_hooks_waiting_pods(load: Any) -> None:
    waiting = pod_real()
    handle = FakeHandle(waiting=[waiting])
    plugin = load("all_hooks", handle=handle)
    state = new_state()
    for pod, expected in [
        (waiting, Status(Code.SUCCESS, f"waiting pod {waiting.name}")),
        (pod_small(), Status(Code.ERROR, f"No waiting pod found for UID: {pod_small().uid}")),
    ]:
        plugin.pre_filter(state, pod, [])
        assert plugin.filter(state, pod, node_info("waiting")) == expected
    assert handle.get_waiting_uids == [waiting.uid, pod_small().uid]
    for pod, expected in [
        (waiting, Status(Code.SKIP, f"UID is {waiting.uid}")),
        (pod_small(), None),
    ]:
        plugin.pre_filter(state, pod, [])
        assert plugin.filter(state, pod, node_info("reject")) == expected
    assert handle.rejected_uids == [waiting.uid, pod_small().uid]
