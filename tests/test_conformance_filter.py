"""Conformance: PreFilter, Filter, PostFilter, AddPod/RemovePod (upstream's
scheduler/plugin/plugin_test.go), with our reproduction of upstream's filter test guest and the
``*_from_global`` / ``panic_on_*`` guests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from wasm_support import (
    INT32_MAX,
    INT32_MIN,
    FakeHandle,
    Plugins,
    from_global,
    make_node,
    make_pod,
    new_state,
    node_info,
    plugins_fixture,
    pod_small,
)
from wasmsched.framework.interfaces import MODE_NOOP, MODE_OVERRIDE, NodeToStatus
from wasmsched.framework.node_info import PodInfo
from wasmsched.framework.status import Code, Status

EXTREMES = [INT32_MIN, -1, 2, 7, INT32_MAX]


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def assert_panic(status: Status | None, export: str) -> None:
    """Upstream's message: "wasm: <export> error: <guest output>\\n<runtime error>"."""
    assert status is not None
    assert status.code == Code.ERROR
    prefix = f"wasm: {export} error: panic!\n"
    assert status.message.startswith(prefix), status.message
    assert len(status.message) > len(prefix)  # the runtime's trap description follows


# --- item 9: PreFilter --------------------------------------------------------------------


def test_prefilter_node_names(plugins: Plugins) -> None:
    plugin = plugins.load("filter", args=["test", "preFilter"])
    result, status = plugin.pre_filter(new_state(), pod_small(), [])
    assert status is None
    assert result is not None and result.node_names == {"good-node"}


def test_prefilter_without_node_name_allows_all(plugins: Plugins) -> None:
    plugin = plugins.load("filter", args=["test", "preFilter"])
    assert plugin.pre_filter(new_state(), make_pod(), []) == (None, None)


@pytest.mark.parametrize("code", EXTREMES)
def test_prefilter_status_from_global(plugins: Plugins, code: int) -> None:
    plugin = plugins.load(from_global("prefilter", status_code=code))
    result, status = plugin.pre_filter(new_state(), pod_small(), [])
    assert result is None
    assert status is not None and status.code == code and status.message == ""


def test_prefilter_success_from_global(plugins: Plugins) -> None:
    plugin = plugins.load(from_global("prefilter", status_code=0))
    assert plugin.pre_filter(new_state(), pod_small(), []) == (None, None)


def test_prefilter_panic(plugins: Plugins) -> None:
    _, status = plugins.load("panic_on_prefilter").pre_filter(new_state(), pod_small(), [])
    assert_panic(status, "prefilter")


def test_prefilter_panic_without_output(plugins: Plugins) -> None:
    """panic_on_get_config with no config writes nothing: no guest-output part."""
    _, status = plugins.load("panic_on_get_config").pre_filter(new_state(), pod_small(), [])
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("wasm: prefilter error: ")
    assert not status.message.startswith("wasm: prefilter error: \n")


def test_guest_config_reaches_guest(plugins: Plugins) -> None:
    """The guest copies its config to stdout before trapping (upstream's
    scheduler/plugin/plugin_test.go)."""
    plugin = plugins.load("panic_on_get_config", guest_config="hello")
    _, status = plugin.pre_filter(new_state(), pod_small(), [])
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("wasm: prefilter error: hello\n")


def test_guest_config_bytes_preserved(plugins: Plugins) -> None:
    config = '{"k": "fóo"}\u00e9'
    plugin = plugins.load("panic_on_get_config", guest_config=config)
    _, status = plugin.pre_filter(new_state(), pod_small(), [])
    assert status is not None
    assert status.message.startswith(f"wasm: prefilter error: {config}\n")


# --- item 10: Filter ----------------------------------------------------------------------


@pytest.fixture
def filter_handle() -> FakeHandle:
    return FakeHandle([make_node("good-node"), make_node("bad-node")])


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ("good-node", None),
        ("bad-node", Status(Code.UNSCHEDULABLE, "good-node != bad-node")),
    ],
)
def test_filter(
    plugins: Plugins, filter_handle: FakeHandle, node: str, expected: Status | None
) -> None:
    plugin = plugins.load("filter", args=["test", "filter"], handle=filter_handle)
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    assert plugin.filter(state, pod_small(), node_info(node)) == expected


def test_filter_pod_without_node_name(plugins: Plugins, filter_handle: FakeHandle) -> None:
    plugin = plugins.load("filter", args=["test", "filter"], handle=filter_handle)
    state = new_state()
    plugin.pre_filter(state, make_pod(), [])
    assert plugin.filter(state, make_pod(), node_info("bad-node")) is None


def test_filter_node_missing_from_snapshot(plugins: Plugins) -> None:
    """k8s.io/api.node of an unknown name gives no bytes: the guest sees an empty Node."""
    plugin = plugins.load("filter", args=["test", "filter"], handle=FakeHandle())
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    status = plugin.filter(state, pod_small(), node_info("elsewhere"))
    assert status == Status(Code.UNSCHEDULABLE, "good-node != ")


def test_filter_noop_mode_reads_everything(plugins: Plugins, filter_handle: FakeHandle) -> None:
    plugin = plugins.load("filter", handle=filter_handle)
    state = new_state()
    assert plugin.pre_filter(state, pod_small(), []) == (None, None)
    assert plugin.filter(state, pod_small(), node_info("bad-node")) is None
    assert plugin.post_filter(state, pod_small(), NodeToStatus())[1] is None


@pytest.mark.parametrize("code", EXTREMES)
def test_filter_status_from_global(plugins: Plugins, code: int) -> None:
    plugin = plugins.load(from_global("filter", status_code=code))
    status = plugin.filter(new_state(), pod_small(), node_info("good-node"))
    assert status is not None and status.code == code


def test_filter_panic(plugins: Plugins) -> None:
    status = plugins.load("panic_on_filter").filter(new_state(), pod_small(), node_info("n"))
    assert_panic(status, "filter")


# --- item 11: PostFilter ------------------------------------------------------------------


def _statuses(code: int) -> NodeToStatus:
    statuses = NodeToStatus()
    statuses.set("good-node", Status(code))
    return statuses


def test_postfilter_nominates(plugins: Plugins) -> None:
    handle = FakeHandle([make_node("good-node")])  # nominations must name a node it knows
    plugin = plugins.load("filter", args=["test", "postFilter"], handle=handle)
    result, status = plugin.post_filter(new_state(), pod_small(), _statuses(Code.SUCCESS))
    assert status is None
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == "good-node"
    assert result.nominating_info.mode == MODE_OVERRIDE


def test_postfilter_unschedulable(plugins: Plugins) -> None:
    plugin = plugins.load("filter", args=["test", "postFilter"])
    result, status = plugin.post_filter(new_state(), pod_small(), _statuses(Code.UNSCHEDULABLE))
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "good-node is unschedulable")
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == "good-node"
    assert result.nominating_info.mode == MODE_NOOP


@pytest.mark.parametrize("code", EXTREMES)
def test_postfilter_status_from_global(plugins: Plugins, code: int) -> None:
    plugin = plugins.load(from_global("postfilter", status_code=code))
    result, status = plugin.post_filter(new_state(), pod_small(), NodeToStatus())
    assert status is not None and status.code == code
    # as upstream: the (empty) nominating info is returned with any status
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.nominated_node_name == ""
    assert result.nominating_info.mode == MODE_NOOP


@pytest.mark.parametrize("mode", [INT32_MIN, MODE_OVERRIDE, INT32_MAX])
def test_postfilter_mode_from_global(plugins: Plugins, mode: int) -> None:
    plugin = plugins.load(from_global("postfilter", nominating_mode=mode))
    result, status = plugin.post_filter(new_state(), pod_small(), NodeToStatus())
    assert status is None
    assert result is not None and result.nominating_info is not None
    assert result.nominating_info.mode == mode
    assert result.nominating_info.nominated_node_name == ""


def test_postfilter_panic(plugins: Plugins) -> None:
    _, status = plugins.load("panic_on_postfilter").post_filter(
        new_state(), pod_small(), NodeToStatus()
    )
    assert_panic(status, "postfilter")


# --- item 19: AddPod / RemovePod ------------------------------------------------------------


@pytest.mark.parametrize("method", ["add_pod", "remove_pod"])
@pytest.mark.parametrize(
    ("target", "node", "expected"),
    [
        ("good-pod", "good-node", None),
        ("bad-pod", "bad", Status(Code.ERROR, "Node name is bad and PodInfo name is bad-pod")),
    ],
)
def test_prefilter_extensions(
    plugins: Plugins, method: str, target: str, node: str, expected: Status | None
) -> None:
    plugin = plugins.load("filter", args=["test", "preFilterExtensions"])
    extensions = plugin.pre_filter_extensions()
    assert extensions is not None
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    target_info = PodInfo(make_pod(name=target, uid=f"{target}-uid"))
    call = getattr(extensions, method)
    assert call(state, pod_small(), target_info, node_info(node)) == expected


@pytest.mark.parametrize("method", ["add_pod", "remove_pod"])
@pytest.mark.parametrize("code", EXTREMES)
def test_prefilter_extensions_from_global(plugins: Plugins, method: str, code: int) -> None:
    plugin = plugins.load(from_global("prefilterextensions", status_code=code))
    extensions = plugin.pre_filter_extensions()
    assert extensions is not None
    call = getattr(extensions, method)
    status = call(new_state(), pod_small(), PodInfo(make_pod("other")), node_info("good-node"))
    assert status is not None and status.code == code


@pytest.mark.parametrize(("method", "export"), [("add_pod", "addpod"), ("remove_pod", "removepod")])
def test_prefilter_extensions_panic(plugins: Plugins, method: str, export: str) -> None:
    extensions = plugins.load("panic_on_prefilterextensions").pre_filter_extensions()
    assert extensions is not None
    call = getattr(extensions, method)
    status = call(new_state(), pod_small(), PodInfo(make_pod("other")), node_info("good-node"))
    assert_panic(status, export)


def test_no_prefilter_extensions_without_exports(plugins: Plugins) -> None:
    assert plugins.load("filter_from_global").pre_filter_extensions() is None
