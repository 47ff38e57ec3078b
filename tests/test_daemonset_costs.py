"""The fixed per-pod costs of SchedulingDaemonset's cycle, third pass (issue 25, item 2):
what a DaemonSet pod's cycle and binding no longer compute. Each test counts calls (a spy
or the profiler's call events) and checks the answer is the one of the path it replaces."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from functools import cmp_to_key
from types import FrameType, MappingProxyType
from typing import Any

import pytest

from sched_support import count_calls, node, placements_under, pod
from wasmsched.api import objects
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, ObjectError, Pod
from wasmsched.api.pod_spec import PodContainers, PodNodeAffinity
from wasmsched.api.quantity import FieldError, expect_mapping
from wasmsched.config import default_config
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.runtime import Framework
from wasmsched.framework.types import QueuedPodInfo
from wasmsched.plugins import (
    node_affinity,
    node_declared_features,
    node_resources_fit,
    volume_restrictions,
)
from wasmsched.plugins.dynamic_resources import plugin as dra_plugin
from wasmsched.plugins.inter_pod_affinity import terms
from wasmsched.plugins.queue_sort import PrioritySort
from wasmsched.queue.scheduling_queue import SchedulingQueue
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.simulation import Simulation

V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))

_PIN = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n-1"]}]}
            ]
        }
    }
}


def _placements(nodes: list[Node], pods: list[Pod]) -> dict[str, str | None]:
    return placements_under(nodes, pods, default_config(V137))


class _Handle:
    """A handle with the 1.37 features (what the plugins read of it here)."""

    features = V137


def _calls_during(read: Callable[[], object]) -> list[str]:
    """The Python functions called while ``read`` runs (the profiler's call events)."""
    called: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        read()
    finally:
        sys.setprofile(None)
    return called[1:]  # the lambda itself


@pytest.mark.parametrize(
    "affinity",
    [
        _PIN,
        {**_PIN, "podAffinity": None},
        {**_PIN, "podAntiAffinity": None, "podAffinity": None},
    ],
)
def test_node_affinity_alone_has_no_pod_affinity_terms_and_no_content_key(
    monkeypatch: pytest.MonkeyPatch, affinity: dict[str, Any]
) -> None:
    # A DaemonSet pod's affinity is its node pin: InterPodAffinity's PreFilter reads no
    # terms, as parse_pod_affinity_terms says, without a JSON of the affinity for the key.
    keys = count_calls(monkeypatch, terms, "_terms_key")
    p = pod("ds-0", affinity=affinity)
    assert terms.pod_affinity_terms(p) is terms.parse_pod_affinity_terms(p)
    assert keys[0] == 0
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}
    with_terms = pod("ds-1", affinity={**_PIN, **anti})
    terms.pod_affinity_terms(with_terms)
    assert keys[0] == 1


def test_pod_affinity_sections_that_are_not_mappings_still_report_their_error() -> None:
    p = pod("bad", affinity={**_PIN, "podAffinity": ["x"]})
    assert terms.pod_affinity_terms(p).error.startswith("spec.affinity.podAffinity: expected a")


def _pop_all(queue: SchedulingQueue) -> list[str]:
    popped = []
    while (info := queue.pop()) is not None:
        popped.append(info.pod.name)
    return popped


def test_the_active_queue_orders_by_prioritysorts_key_without_calling_less(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The heap compares PrioritySort's sort keys (tuples, in C), not its Less through
    # Framework.less (about ten comparisons per pop); the order is Less's.
    def not_called(self: object, a: Any, b: Any) -> bool:
        raise AssertionError("less")

    monkeypatch.setattr(Framework, "less", not_called)
    monkeypatch.setattr(PrioritySort, "less", not_called)
    sim = Simulation(ClusterObjects(nodes=[node("n-1")], pods=[], others=[]), default_config(V137))
    queue: SchedulingQueue = sim.scheduler.queue
    for i, priority in enumerate([1, 5, 3, 5, 0, 9, 3]):
        queue.add(pod(f"p-{i}", priority=priority))
    assert _pop_all(queue) == ["p-5", "p-1", "p-3", "p-2", "p-6", "p-0", "p-4"]
    sim.close()


def test_prioritysorts_key_orders_as_its_less() -> None:
    rng = random.Random(7)
    infos = [
        QueuedPodInfo(pod(f"p-{i}", priority=rng.choice([0, 1, 5])), rng.choice([0.0, 1.5]), i)
        for i in range(200)
    ]
    plugin = PrioritySort()
    by_less = sorted(
        infos, key=cmp_to_key(lambda a, b: -1 if plugin.less(a, b) else int(plugin.less(b, a)))
    )
    assert sorted(infos, key=plugin.sort_key) == by_less


class _ByPriority:
    """A QueueSort plugin without a sort key: PrioritySort's Less alone."""

    name = "ByPriority"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return PrioritySort().less(a, b)


@pytest.mark.parametrize("keyed", [True, False])
def test_an_updated_pod_is_ordered_by_its_new_fields_as_less_reads_them(keyed: bool) -> None:
    # update() replaces a queued pod without re-heapifying (as before the keys): the heap's
    # later comparisons read the new pod, as the key rebuilt for it says; a plugin without
    # a key is asked through its less.
    sim = Simulation(ClusterObjects(nodes=[node("n-1")], pods=[], others=[]), default_config(V137))
    if not keyed:
        next(iter(sim.scheduler.frameworks.values())).queue_sort = _ByPriority()
    queue = SchedulingQueue(sim.scheduler.queue.now, sim.scheduler.frameworks)
    for name, priority in [("x", 5), ("a", 1), ("y", 2)]:
        queue.add(pod(name, priority=priority))
    queue.update(pod("a", priority=1), pod("a", priority=9))
    assert _pop_all(queue) == ["x", "a", "y"]
    sim.close()


def test_an_event_with_no_unschedulable_pod_matches_no_registrations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every binding's AssignedPodAdd goes to MoveAllToActiveOrBackoffQueue; with no pod in
    # the unschedulable pool there is nothing to look up, compare or move.
    looked_up = count_calls(monkeypatch, SchedulingQueue, "_interested_in")
    placed = _placements([node(f"n-{i}") for i in range(4)], [pod(f"p-{i}") for i in range(12)])
    assert all(placed.values())
    assert looked_up[0] == 0
    stuck = _placements([node("n-1")], [pod("big", cpu="64"), pod("small")])
    assert stuck == {"big": None, "small": "n-1"}
    assert looked_up[0] > 0


def test_a_parsed_property_is_read_without_a_context_manager() -> None:
    # The FieldError -> ObjectError conversion is a try in the descriptor: a property's
    # first read is the descriptor, the property and its field check (a with block per
    # property added two calls at every first read of every pod).
    p = pod("p", priority=7)
    assert p.spec
    called = _calls_during(lambda: p.priority)
    assert called == ["__get__", "priority", "expect_int"]
    assert p.priority == 7


@pytest.mark.parametrize(
    ("spec", "attribute", "message"),
    [
        (
            {"priority": "high"},
            "priority",
            'spec.priority: expected an integer, got string: "high"',
        ),
        (
            {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1x"}}}]},
            "requests",
            'spec.containers[0].resources.requests.cpu: invalid quantity "1x"',
        ),
        ({"nodeName": 3}, "node_name", "spec.nodeName: expected a string, got number: 3"),
    ],
)
def test_parsed_properties_report_their_field(
    spec: dict[str, Any], attribute: str, message: str
) -> None:
    p = Pod({"kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    with pytest.raises(ObjectError) as info:
        getattr(p, attribute)
    assert str(info.value) == message
    assert info.value.__suppress_context__


def test_mappings_that_are_not_dicts_are_still_mappings() -> None:
    proxy = MappingProxyType({"a": 1})
    assert expect_mapping(proxy, "x") is proxy
    with pytest.raises(FieldError, match="expected a mapping, got list"):
        expect_mapping([1], "x")
    manifest = MappingProxyType({"kind": "Pod", "metadata": {"name": "p"}})
    assert Pod(manifest).name == "p"
    with pytest.raises(ObjectError, match="must be a mapping, got list"):
        Pod([])  # type: ignore[arg-type]


def test_plugins_with_nothing_to_do_for_a_plain_pod_return_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A DaemonSet pod has no volume, no claim and no extended resource: VolumeRestrictions
    # Skips before parsing disks, DynamicResources' PreFilter makes no lookup for a special
    # claim and its PreBind waits for no device. A pod with a volume still parses its disks.
    disks = count_calls(monkeypatch, volume_restrictions, "pod_disks")
    extended = count_calls(monkeypatch, dra_plugin, "pre_filter_extended")
    devices = count_calls(monkeypatch, dra_plugin, "wait_for_devices")
    pods = [pod(f"ds-{i}", affinity=_PIN) for i in range(5)]
    placed = _placements([node(f"n-{i}") for i in range(3)], pods)
    assert set(placed.values()) == {"n-1"}
    assert disks == [0] and extended == [0] and devices == [0]
    volume = {"name": "v", "gcePersistentDisk": {"pdName": "d"}}
    assert _placements([node("n-1")], [pod("with-volume", volumes=[volume])]) == {
        "with-volume": "n-1"
    }
    assert disks[0] > 0
    gpu = Pod(
        {
            "kind": "Pod",
            "metadata": {"name": "gpu"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"x.io/gpu": "1"}}}]},
        }
    )
    assert _placements([node("n-1")], [gpu]) == {"gpu": None}
    assert extended[0] > 0


def test_the_fit_state_is_built_once_per_requests_object(monkeypatch: pytest.MonkeyPatch) -> None:
    # NodeResourcesFit's PreFilter state (read-only) depends on the pod's requests alone,
    # which the pods of one template share: one PodRequest for them all.
    built = count_calls(monkeypatch, node_resources_fit.PodRequest, "__init__")
    pods = [pod(f"ds-{i}", affinity=_PIN) for i in range(20)]
    assert set(_placements([node(f"n-{i}") for i in range(3)], pods).values()) == {"n-1"}
    assert built == [1]
    big = [pod(f"big-{i}", cpu="3") for i in range(3)]  # one fits each node
    placed = _placements([node(f"n-{i}") for i in range(2)], big)
    assert sorted(n for n in placed.values() if n) == ["n-0", "n-1"]
    assert built == [2]


def test_node_features_are_kept_on_the_containers_part(monkeypatch: pytest.MonkeyPatch) -> None:
    # NodeDeclaredFeatures (1.35+) infers from the containers' part of the spec alone:
    # the pods of one template read their inputs once, the part keeps the answer.
    monkeypatch.setattr(PodContainers, "_shared", {})  # parts kept by earlier tests
    read = count_calls(monkeypatch, node_declared_features.PodFeatureInputs, "of")
    pods = [pod(f"ds-{i}", affinity=_PIN) for i in range(20)]
    assert set(_placements([node(f"n-{i}") for i in range(3)], pods).values()) == {"n-1"}
    assert read == [1]
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}
    restarting = pod("restarting", containers=[{"name": "c", "restartPolicyRules": [rule]}])
    assert _placements([node("n-1")], [restarting]) == {"restarting": None}  # no node declares it
    assert read == [2]
    bad = pod("bad", containers=[{"name": "c", "restartPolicyRules": "x"}])
    with pytest.raises(ObjectError, match=r"^spec.containers\[0\].restartPolicyRules: expected"):
        node_declared_features.NodeDeclaredFeatures(_Handle()).pre_filter(CycleState(), bad, [])
    assert read == [3]


def test_copies_of_a_pod_are_not_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Binding copies the pod twice (assumed, then the API server's bound pod): a copy of a
    # checked manifest keeps its kind and is a dict; a newer version from outside is checked.
    checked = count_calls(monkeypatch, objects, "_check_manifest")
    p = pod("p", affinity=_PIN)
    assert checked == [1]
    bound = p.with_node_name("n-1").with_nominated_node_name("")
    assert checked == [1] and bound.node_name == "n-1" and bound.manifest["kind"] == "Pod"
    newer = {**bound.manifest, "status": {"phase": "Running"}}
    assert bound.updated(newer).phase == "Running"
    assert checked == [2]


def test_node_affinity_prefilters_a_template_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The pods of a template share their parsed required affinity; NodeAffinity's
    # PreFilter state and PreFilterResult (read-only) are made once for them.
    monkeypatch.setattr(PodNodeAffinity, "_shared", {})
    built = count_calls(monkeypatch, node_affinity._PreFilterState, "__init__")
    pods = [pod(f"ds-{i}", affinity=_PIN) for i in range(20)]
    assert set(_placements([node(f"n-{i}") for i in range(3)], pods).values()) == {"n-1"}
    assert built == [1]
    field = [
        {"key": "metadata.name", "operator": "In", "values": ["n-0"]},
        {"key": "metadata.name", "operator": "In", "values": ["n-1"]},
    ]
    required = {"nodeSelectorTerms": [{"matchFields": field}]}
    conflict = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    plugin = node_affinity.NodeAffinity(None, None)
    for name in ("c-0", "c-1"):
        result, status = plugin.pre_filter(CycleState(), pod(name, affinity=conflict), [])
        assert result is None and status is not None
        assert (status.code, status.message) == (3, node_affinity.ERR_REASON_CONFLICT)
    assert built == [2]
