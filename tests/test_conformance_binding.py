"""Conformance: Reserve/Unreserve, Permit, PreBind, Bind, PostBind (upstream's
scheduler/plugin/plugin_test.go), with our reproductions of upstream's reserve, permit and bind
test guests and the
``*_from_global`` / ``panic_on_*`` guests. Unreserve and PostBind have no status: a failing
guest call is logged (``WasmPlugin.logs``) as "failed unreserve" / "failed postbind"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from wasm_support import (
    INT32_MAX,
    INT32_MIN,
    UINT32_MAX,
    Plugins,
    from_global,
    make_pod,
    new_state,
    plugins_fixture,
    pod_small,
)
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status

EXTREMES = [INT32_MIN, -1, 2, 7, INT32_MAX]


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def assert_panic(status: Status | None, export: str) -> None:
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith(f"wasm: {export} error: panic!\n"), status.message


def failures(plugin: Any, what: str) -> list[str]:
    """Texts of the plugin's logs about failed ``what`` calls."""
    return [r.text for r in plugin.logs if f"failed {what}" in r.text]


def to_binding(plugin: Any, state: CycleState, node: str = "good-node") -> None:
    """A pod's cycle up to Permit, which hands the pod to its binding cycle."""
    assert plugin.pre_filter(state, pod_small(), [])[1] is None
    if hasattr(plugin, "permit") and "permit" in plugin.extension_points:
        plugin.permit(state, pod_small(), node)


# --- item 15: Reserve / Unreserve ---------------------------------------------------------


def test_reserve_then_unreserve(plugins: Plugins) -> None:
    plugin = plugins.load("reserve")
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    assert plugin.reserve(state, pod_small(), "good") is None
    plugin.unreserve(state, pod_small(), "good")
    assert failures(plugin, "unreserve") == []


def test_reserve_error(plugins: Plugins) -> None:
    plugin = plugins.load("reserve")
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    assert plugin.reserve(state, pod_small(), "bad") == Status(Code.ERROR, "name is bad")


def test_unreserve_without_reservation_is_logged(plugins: Plugins) -> None:
    """The guest panics when asked to unreserve what it did not reserve in this cycle; the
    failure is logged, not raised."""
    plugin = plugins.load("reserve")
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    assert plugin.reserve(state, pod_small(), "good") is None
    plugin.unreserve(state, pod_small(), "other")
    (failure,) = failures(plugin, "unreserve")
    assert "wasm: unreserve error: panic: unreserve failed\n" in failure


@pytest.mark.parametrize("code", EXTREMES)
def test_reserve_status_from_global(plugins: Plugins, code: int) -> None:
    plugin = plugins.load(from_global("reserve", status_code=code))
    status = plugin.reserve(new_state(), pod_small(), "good-node")
    assert status is not None and status.code == code


@pytest.mark.parametrize(("flag", "logged"), [(0, 0), (1, 1)])
def test_unreserve_trap_is_logged(plugins: Plugins, flag: int, logged: int) -> None:
    plugin = plugins.load(from_global("reserve", flag=flag))
    plugin.unreserve(new_state(), pod_small(), "good-node")
    found = failures(plugin, "unreserve")
    assert len(found) == logged
    if logged:
        assert "wasm: unreserve error: " in found[0]


def test_reserve_panic(plugins: Plugins) -> None:
    status = plugins.load("panic_on_reserve").reserve(new_state(), pod_small(), "good-node")
    assert_panic(status, "reserve")


# --- item 16: Permit ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "status", "timeout"),
    [
        ("good", None, 0.0),
        ("bad", Status(Code.ERROR, "name is bad"), None),
        ("wait", Status(Code.WAIT, "name is wait"), 10.0),
    ],
)
def test_permit(plugins: Plugins, node: str, status: Status | None, timeout: float | None) -> None:
    plugin = plugins.load("permit")
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    got_status, got_timeout = plugin.permit(state, pod_small(), node)
    assert got_status == status
    if timeout is not None:
        assert got_timeout == pytest.approx(timeout)


@pytest.mark.parametrize("code", EXTREMES)
def test_permit_status_from_global(plugins: Plugins, code: int) -> None:
    plugin = plugins.load(from_global("permit", status_code=code))
    status, _ = plugin.permit(new_state(), pod_small(), "good-node")
    assert status is not None and status.code == code


@pytest.mark.parametrize("timeout_ms", [1, 1500, 2**31, UINT32_MAX])
def test_permit_timeout_is_unsigned_ms(plugins: Plugins, timeout_ms: int) -> None:
    plugin = plugins.load(from_global("permit", status_code=Code.WAIT, timeout=timeout_ms))
    status, timeout = plugin.permit(new_state(), pod_small(), "good-node")
    assert status is not None and status.code == Code.WAIT
    assert timeout == pytest.approx(timeout_ms / 1000)


def test_permit_panic(plugins: Plugins) -> None:
    status, _ = plugins.load("panic_on_permit").permit(new_state(), pod_small(), "good-node")
    assert_panic(status, "permit")


def test_reserve_and_permit_only(plugins: Plugins) -> None:
    """Upstream refuses Reserve+Permit (its mask table); our host serves both."""
    plugin = plugins.load("reserve_permit")
    state = new_state()
    assert plugin.reserve(state, pod_small(), "n") is None
    status, timeout = plugin.permit(state, pod_small(), "n")
    assert status is not None and status.code == Code.WAIT
    assert timeout == pytest.approx(1.5)
    plugin.unreserve(state, pod_small(), "n")
    assert failures(plugin, "unreserve") == []


# --- item 17: PreBind / Bind --------------------------------------------------------------


@pytest.mark.parametrize(("method", "mode"), [("pre_bind", "preBind"), ("bind", "bind")])
@pytest.mark.parametrize(
    ("node", "expected"), [("good", None), ("bad", Status(Code.ERROR, "name is bad"))]
)
def test_prebind_bind(
    plugins: Plugins, method: str, mode: str, node: str, expected: Status | None
) -> None:
    plugin = plugins.load("bind", args=["test", mode])
    state = new_state()
    to_binding(plugin, state)
    assert getattr(plugin, method)(state, pod_small(), node) == expected


@pytest.mark.parametrize(("name", "method"), [("prebind", "pre_bind"), ("bind", "bind")])
@pytest.mark.parametrize("code", EXTREMES)
def test_prebind_bind_status_from_global(
    plugins: Plugins, name: str, method: str, code: int
) -> None:
    plugin = plugins.load(from_global(name, status_code=code))
    status = getattr(plugin, method)(new_state(), pod_small(), "good-node")
    assert status is not None and status.code == code


@pytest.mark.parametrize(("name", "method"), [("prebind", "pre_bind"), ("bind", "bind")])
def test_prebind_bind_panic(plugins: Plugins, name: str, method: str) -> None:
    status = getattr(plugins.load(f"panic_on_{name}"), method)(new_state(), pod_small(), "n")
    assert_panic(status, name)


def test_binding_of_other_pods_between_cycles(plugins: Plugins) -> None:
    """A plugin without Permit: binding pod A after pod B's cycle began still works."""
    plugin = plugins.load("bind", args=["test", "bind"])
    state_a, state_b = new_state(), new_state()
    plugin.pre_filter(state_a, pod_small(), [])
    plugin.pre_filter(state_b, make_pod("other", uid="other-uid"), [])
    assert plugin.pre_bind(state_a, pod_small(), "good") is None
    assert plugin.bind(state_a, pod_small(), "bad") == Status(Code.ERROR, "name is bad")
    plugin.post_bind(state_a, pod_small(), "good")
    assert plugin.bind(state_b, make_pod("other", uid="other-uid"), "good") is None


# --- item 18: PostBind --------------------------------------------------------------------


@pytest.mark.parametrize(("node", "logged"), [("good", False), ("bad", True)])
def test_postbind(plugins: Plugins, node: str, logged: bool) -> None:
    plugin = plugins.load("bind", args=["test", "postBind"])
    state = new_state()
    to_binding(plugin, state)
    plugin.post_bind(state, pod_small(), node)
    found = failures(plugin, "postbind")
    assert len(found) == logged
    if logged:
        assert "wasm: postbind error: panic: name is bad\n" in found[0]


@pytest.mark.parametrize(("flag", "logged"), [(0, 0), (1, 1)])
def test_postbind_trap_is_logged(plugins: Plugins, flag: int, logged: int) -> None:
    plugin = plugins.load(from_global("postbind", flag=flag))
    plugin.post_bind(new_state(), pod_small(), "good-node")
    assert len(failures(plugin, "postbind")) == logged


def test_postbind_panic(plugins: Plugins) -> None:
    plugin = plugins.load("panic_on_postbind")
    plugin.post_bind(new_state(), pod_small(), "good-node")
    (failure,) = failures(plugin, "postbind")
    assert "wasm: postbind error: panic!\n" in failure
