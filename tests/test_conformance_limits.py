"""Conformance: failure isolation (upstream's scheduler/plugin/plugin_test.go). A guest that loops,
exhausts its memory or traps fails that one call with an Error status, within the
configured deadline, and the plugin keeps answering later calls."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from wasm_support import (
    FakeHandle,
    Plugins,
    make_node,
    new_state,
    node_info,
    plugins_fixture,
    pod_small,
)
from wasmsched.framework.status import Code


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def test_infinite_loop_hits_deadline(plugins: Plugins) -> None:
    plugin = plugins.load("infinite_loop", call_timeout_ms=200)
    start = time.monotonic()
    status = plugin.filter(new_state(), pod_small(), node_info("n"))
    elapsed = time.monotonic() - start
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("wasm: filter error: ")
    assert 0.15 < elapsed < 2.0
    # the scheduler carries on: the next call answers (on a healthy instance)
    assert plugin.score(new_state(), pod_small(), node_info("n")) == (0, None)
    start = time.monotonic()
    status = plugin.filter(new_state(), pod_small(), node_info("n"))
    assert status is not None and status.code == Code.ERROR
    assert time.monotonic() - start < 2.0


def test_memory_hog_hits_limit(plugins: Plugins) -> None:
    plugin = plugins.load("memory_hog", memory_limit_mib=64)
    status = plugin.filter(new_state(), pod_small(), node_info("n"))
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("wasm: filter error: ")
    assert plugin.score(new_state(), pod_small(), node_info("n")) == (0, None)


def test_trap_then_normal_calls(plugins: Plugins) -> None:
    """After a guest panic, the same plugin serves the following cycles correctly."""
    handle = FakeHandle([make_node("good-node"), make_node("bad-node")])
    plugin = plugins.load("cyclestate", handle=handle)
    status = plugin.filter(new_state(), pod_small(), node_info("good-node"))  # no PreFilter
    assert status is not None and status.code == Code.ERROR
    for _ in range(3):
        state = new_state()
        assert plugin.pre_filter(state, pod_small(), [])[1] is None
        assert plugin.filter(state, pod_small(), node_info("good-node")) is None
