"""Conformance: PreScore, Score, NormalizeScore (upstream's scheduler/plugin/plugin_test.go),
with our
reproduction of upstream's score test guest and the ``*_from_global`` / ``panic_on_*``
guests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from wasm_support import (
    INT32_MAX,
    INT32_MIN,
    Plugins,
    from_global,
    new_state,
    node_info,
    plugins_fixture,
    pod_small,
)
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.status import Code, Status

EXTREMES = [INT32_MIN, -1, 2, 7, INT32_MAX]


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def assert_panic(status: Status | None, export: str) -> None:
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith(f"wasm: {export} error: panic!\n"), status.message


# --- item 12: PreScore --------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 2])
def test_prescore_sees_filtered_nodes(plugins: Plugins, count: int) -> None:
    """The guest answers with the number of filtered nodes as its status code."""
    plugin = plugins.load("score", args=["test", "preScore"])
    nodes = [node_info(f"node-{i}") for i in range(count)]
    status = plugin.pre_score(new_state(), pod_small(), nodes)
    assert (0 if status is None else status.code) == count


@pytest.mark.parametrize("code", EXTREMES)
def test_prescore_status_from_global(plugins: Plugins, code: int) -> None:
    plugin = plugins.load(from_global("prescore", status_code=code))
    status = plugin.pre_score(new_state(), pod_small(), [node_info("good-node")])
    assert status is not None and status.code == code


def test_prescore_panic(plugins: Plugins) -> None:
    status = plugins.load("panic_on_prescore").pre_score(new_state(), pod_small(), [])
    assert_panic(status, "prescore")


def test_prescore_only_guest(plugins: Plugins) -> None:
    """Upstream refuses prescore without score; our host serves PreScore alone."""
    plugin = plugins.load("prescore_without_score")
    assert plugin.pre_score(new_state(), pod_small(), [node_info("a")]) is None


def test_prescore_and_score_without_prefilter(plugins: Plugins) -> None:
    plugin = plugins.load("prescore_score_only")
    state = new_state()
    assert plugin.pre_filter(state, pod_small(), []) == (None, None)
    assert plugin.pre_score(state, pod_small(), [node_info("a")]) is None
    assert plugin.score(state, pod_small(), node_info("a")) == (7, None)


# --- item 13: Score -----------------------------------------------------------------------


@pytest.mark.parametrize(("node", "expected"), [("good-node", 100), ("bad-node", 0)])
def test_score(plugins: Plugins, node: str, expected: int) -> None:
    plugin = plugins.load("score", args=["test", "score"])
    state = new_state()
    plugin.pre_filter(state, pod_small(), [])
    assert plugin.score(state, pod_small(), node_info(node)) == (expected, None)


@pytest.mark.parametrize("score", EXTREMES)
def test_score_value_from_global(plugins: Plugins, score: int) -> None:
    plugin = plugins.load(from_global("score", score=score))
    assert plugin.score(new_state(), pod_small(), node_info("good-node")) == (score, None)


@pytest.mark.parametrize("code", EXTREMES)
def test_score_status_from_global(plugins: Plugins, code: int) -> None:
    plugin = plugins.load(from_global("score", status_code=code))
    score, status = plugin.score(new_state(), pod_small(), node_info("good-node"))
    assert score == 0
    assert status is not None and status.code == code


def test_score_and_status_from_global(plugins: Plugins) -> None:
    plugin = plugins.load(from_global("score", score=INT32_MIN, status_code=INT32_MAX))
    score, status = plugin.score(new_state(), pod_small(), node_info("good-node"))
    assert score == INT32_MIN
    assert status is not None and status.code == INT32_MAX


def test_score_panic(plugins: Plugins) -> None:
    _, status = plugins.load("panic_on_score").score(new_state(), pod_small(), node_info("n"))
    assert_panic(status, "score")


# --- item 14: NormalizeScore ----------------------------------------------------------------


def test_normalize_score(plugins: Plugins) -> None:
    plugin = plugins.load("score", args=["test", "scoreExtensions"])
    extensions = plugin.score_extensions()
    assert extensions is not None
    scores = [NodeScore("good-node", 100)]
    assert extensions.normalize_score(new_state(), pod_small(), scores) is None
    assert scores == [NodeScore("good-node", 10000)]


def test_normalize_score_keeps_node_order(plugins: Plugins) -> None:
    """Upstream copies the guest's map back in random order (upstream's
    scheduler/plugin/host.go: k8sSchedulerResultNormalizedScoreListFn); scores
    must land on their own nodes."""
    plugin = plugins.load("score", args=["test", "scoreExtensions"])
    extensions = plugin.score_extensions()
    assert extensions is not None
    names = [f"node-{i}" for i in range(12)]
    scores = [NodeScore(name, i) for i, name in enumerate(names)]
    assert extensions.normalize_score(new_state(), pod_small(), scores) is None
    assert scores == [NodeScore(name, i * 100) for i, name in enumerate(names)]


def test_normalize_score_null_keeps_scores(plugins: Plugins) -> None:
    """noop mode answers a null map: scores are unchanged."""
    extensions = plugins.load("score").score_extensions()
    assert extensions is not None
    scores = [NodeScore("a", 1), NodeScore("b", 2)]
    assert extensions.normalize_score(new_state(), pod_small(), scores) is None
    assert scores == [NodeScore("a", 1), NodeScore("b", 2)]


@pytest.mark.parametrize("code", EXTREMES)
def test_normalize_score_status_from_global(plugins: Plugins, code: int) -> None:
    extensions = plugins.load(from_global("scoreextensions", status_code=code)).score_extensions()
    assert extensions is not None
    status = extensions.normalize_score(new_state(), pod_small(), [NodeScore("good-node", 1)])
    assert status is not None and status.code == code


def test_normalize_score_panic(plugins: Plugins) -> None:
    extensions = plugins.load("panic_on_scoreextensions").score_extensions()
    assert extensions is not None
    status = extensions.normalize_score(new_state(), pod_small(), [NodeScore("n", 1)])
    assert_panic(status, "normalizescore")


def test_no_score_extensions_without_export(plugins: Plugins) -> None:
    assert plugins.load(from_global("score")).score_extensions() is None
