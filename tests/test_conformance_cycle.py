"""Conformance: guest instances follow scheduling and binding cycles (upstream's
scheduler/plugin/plugin_test.go), checked by our reproduction of upstream's cyclestate
guest, which panics whenever its guest-side cycle state is incoherent."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

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
)
from wasmsched.api.objects import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore, NodeToStatus
from wasmsched.framework.node_info import NodeInfo, PodInfo
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    PERSISTENT_VOLUME,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
)


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def no_failures(plugin: Any) -> None:
    failed = [r.text for r in plugin.logs if "failed " in r.text]
    assert failed == []


def scheduling_cycle(
    plugin: Any, state: CycleState, pod: Pod, node: NodeInfo, *, unreserve: bool = False
) -> None:
    """Every scheduling-cycle hook once, in framework order, up to Permit; all must pass.
    ``unreserve`` adds Unreserve before Permit, as upstream's e2e ``RunAll`` does."""
    _, status = plugin.pre_filter(state, pod, [node])
    assert status is None, status
    extensions = plugin.pre_filter_extensions()
    assert extensions is not None
    other = PodInfo(make_pod("other", uid="other-uid"))
    assert extensions.add_pod(state, pod, other, node) is None
    assert extensions.remove_pod(state, pod, other, node) is None
    assert plugin.filter(state, pod, node) is None
    statuses = NodeToStatus()
    statuses.set(node.name, Status(Code.UNSCHEDULABLE))
    assert plugin.post_filter(state, pod, statuses)[1] is None
    assert plugin.pre_score(state, pod, [node]) is None
    assert plugin.score(state, pod, node) == (0, None)
    score_ext = plugin.score_extensions()
    assert score_ext is not None
    scores = [NodeScore(node.name, 0)]
    assert score_ext.normalize_score(state, pod, scores) is None
    assert plugin.reserve(state, pod, node.name) is None
    if unreserve:
        plugin.unreserve(state, pod, node.name)
    assert plugin.permit(state, pod, node.name)[0] is None


def binding_cycle(plugin: Any, state: CycleState, pod: Pod, node: str) -> None:
    assert plugin.pre_bind(state, pod, node) is None
    assert plugin.bind(state, pod, node) is None
    plugin.post_bind(state, pod, node)


# --- item 24: cycle-state coherence ---------------------------------------------------------


def test_two_full_cycles_real_objects(plugins: Plugins) -> None:
    """upstream's e2e TestCycleStateCoherence: RunAll twice with PodReal / NodeReal."""
    node = node_real()
    plugin = plugins.load("cyclestate", handle=FakeHandle([node]))
    plugin.events_to_register()
    for _ in range(2):
        state = new_state()
        pod = pod_real()
        scheduling_cycle(plugin, state, pod, NodeInfo(node), unreserve=True)
        binding_cycle(plugin, state, pod, node.name)
    no_failures(plugin)


def test_guest_detects_missing_prefilter(plugins: Plugins) -> None:
    """The guest really checks: Filter without a cycle started by PreFilter fails."""
    plugin = plugins.load("cyclestate")
    status = plugin.filter(new_state(), pod_real(), node_info("n"))
    assert status is not None and status.code == Code.ERROR
    assert "panic: didn't cache pod from pre-filter\n" in status.message


def test_guest_detects_skipped_hook(plugins: Plugins) -> None:
    """Score without PreScore in the cycle: the guest reports the lost state."""
    plugin = plugins.load("cyclestate")
    state, pod, node = new_state(), pod_real(), node_info("n")
    plugin.pre_filter(state, pod, [node])
    assert plugin.filter(state, pod, node) is None
    _, status = plugin.score(state, pod, node)
    assert status is not None
    assert "panic: didn't propagate score state from pre-score\n" in status.message


# --- item 7: instances through the plugin ----------------------------------------------------


def test_interleaved_binding_cycles(plugins: Plugins) -> None:
    """Pod 1 waits in its binding cycle while pod 2 is scheduled: each binding cycle must
    see its own pod and state (upstream's pool test, plus binding pod 1 late)."""
    plugin = plugins.load("cyclestate")
    node = node_info("node-1")
    pod1 = make_pod("pod-1", uid="uid-1")
    pod2 = make_pod("pod-2", uid="uid-2")
    state1, state2 = new_state(), new_state()
    scheduling_cycle(plugin, state1, pod1, node)
    scheduling_cycle(plugin, state2, pod2, node)
    binding_cycle(plugin, state2, pod2, "node-1")
    binding_cycle(plugin, state1, pod1, "node-1")
    # A third pod's cycle still works after both bindings finished.
    scheduling_cycle(plugin, new_state(), make_pod("pod-3", uid="uid-3"), node)
    no_failures(plugin)


def test_unreserve_after_permit_sees_its_cycle(plugins: Plugins) -> None:
    """Unreserve of pod 1 (rejected while waiting) after pod 2 was scheduled must still see
    pod 1's filter state; then pod 2 binds normally."""
    plugin = plugins.load("cyclestate")
    node = node_info("node-1")
    pod1 = make_pod("pod-1", uid="uid-1")
    pod2 = make_pod("pod-2", uid="uid-2")
    state1, state2 = new_state(), new_state()
    scheduling_cycle(plugin, state1, pod1, node)
    scheduling_cycle(plugin, state2, pod2, node)
    plugin.unreserve(state1, pod1, "node-1")
    binding_cycle(plugin, state2, pod2, "node-1")
    no_failures(plugin)


def test_forget_pod_then_new_cycle(plugins: Plugins) -> None:
    """A pod that leaves without Unreserve or PostBind (e.g. deleted while waiting) is
    forgotten; the next pods still get coherent instances."""
    plugin = plugins.load("cyclestate")
    node = node_info("node-1")
    pod1 = make_pod("pod-1", uid="uid-1")
    scheduling_cycle(plugin, new_state(), pod1, node)
    plugin.forget_pod(pod1.uid)
    for i in range(2, 5):
        pod = make_pod(f"pod-{i}", uid=f"uid-{i}")
        state = new_state()
        scheduling_cycle(plugin, state, pod, node)
        binding_cycle(plugin, state, pod, "node-1")
    no_failures(plugin)


def test_new_cycle_of_same_pod_after_reserve(plugins: Plugins) -> None:
    """PreFilter starts a new cycle for its pod, as the guest SDK assumes: binding-phase
    calls of the new cycle must see the new cycle's state, even when the previous cycle
    stopped after Reserve without Unreserve."""
    plugin = plugins.load("cyclestate")
    node = node_info("node-1")
    pod = make_pod("pod-1", uid="uid-1")
    state = new_state()
    assert plugin.pre_filter(state, pod, [node])[1] is None
    assert plugin.reserve(state, pod, "node-1") is None  # the cycle goes no further
    state = new_state()
    scheduling_cycle(plugin, state, pod, node)
    binding_cycle(plugin, state, pod, "node-1")
    no_failures(plugin)


def test_parallel_filter_and_score(plugins: Plugins) -> None:
    """The framework runs Filter and Score for many nodes on parallel threads: every call
    must run in the pod's cycle and get its own node's answer."""
    nodes = [make_node(f"node-{i}") for i in range(24)] + [make_node("good-node")]
    handle = FakeHandle(nodes)
    infos = handle.snapshot().list()
    pod = make_pod(node_name="good-node")
    cycle = plugins.load("cyclestate", handle=handle)
    filters = plugins.load("filter", args=["test", "filter"], handle=handle)
    state = new_state()
    assert cycle.pre_filter(state, pod, infos)[1] is None
    assert filters.pre_filter(state, pod, infos)[1] is None
    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(lambda ni: cycle.filter(state, pod, ni), infos)) == {None}
        answers = pool.map(lambda ni: filters.filter(state, pod, ni), infos)
        got = dict(zip(infos, answers, strict=True))
        assert cycle.pre_score(state, pod, infos) is None
        scores = set(pool.map(lambda ni: cycle.score(state, pod, ni), infos))
    assert scores == {(0, None)}
    for info, status in got.items():
        expected = None if info.name == "good-node" else f"good-node != {info.name}"
        assert (None if status is None else status.message) == expected


# --- item 8: EventsToRegister ---------------------------------------------------------------


def _event(resource: str, action: int) -> ClusterEventWithHint:
    return ClusterEventWithHint(ClusterEvent(resource, action))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["test", "1"], [_event(PERSISTENT_VOLUME, ActionType.DELETE)]),
        (
            ["test", "2"],
            [_event(NODE, ActionType.ADD), _event(PERSISTENT_VOLUME, ActionType.DELETE)],
        ),
    ],
)
def test_events_to_register(
    plugins: Plugins, args: list[str], expected: list[ClusterEventWithHint]
) -> None:
    assert plugins.load("cyclestate", args=args).events_to_register() == expected


@pytest.mark.parametrize("args", [[], ["test", "0"]])
def test_events_to_register_defaults(plugins: Plugins, args: list[str]) -> None:
    """No events from the guest: upstream's default list, with the framework's All."""
    events = plugins.load("cyclestate", args=args).events_to_register()
    assert [e.event.resource for e in events] == [
        "Pod",
        "Node",
        "storage.k8s.io/CSINode",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "storage.k8s.io/StorageClass",
    ]
    assert {e.event.action for e in events} == {ActionType.ALL}


def test_events_to_register_without_enqueue(plugins: Plugins) -> None:
    events = plugins.load("filter").events_to_register()
    assert len(events) == 6


def test_events_to_register_enqueue_panic(plugins: Plugins) -> None:
    """Upstream's host panics (a scheduler crash); ours logs and uses the defaults."""
    plugin = plugins.load("panic_on_enqueue")
    assert len(plugin.events_to_register()) == 6
    assert any("wasm: enqueue error: panic!\n" in r.text for r in plugin.logs)
