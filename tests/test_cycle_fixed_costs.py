"""The fixed per-pod costs of a scheduling cycle (issue 25, item 2): what a cycle does not do
when kube-scheduler does not do it either. Each test counts calls with a spy and checks the
placements are those of the path it replaces."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from sched_support import count_calls, node, placements_under, pod
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.framework import batching, diagnosis, node_search
from wasmsched.framework.batching import OpportunisticBatch
from wasmsched.framework.runtime import Framework
from wasmsched.framework.types import ClusterEvent
from wasmsched.plugins import node_affinity, node_declared_features
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def _nodes(n: int) -> list[Node]:
    return [node(f"node-{i}") for i in range(n)]


def _daemon_pod(i: int, target: str, cpu: str = "100m") -> Pod:
    """A DaemonSet pod: required node affinity on metadata.name (the DaemonSet
    controller's pin), which NodeAffinity's PreFilter turns into one node name."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [target]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]
    }}}  # fmt: skip
    return pod(f"ds-{i}", cpu=cpu, affinity=affinity)


def _placements(nodes: list[Node], pods: list[Pod]) -> dict[str, str | None]:
    return placements_under(nodes, pods, default_config(V137))


def test_a_daemonset_pods_named_node_is_filtered_node_by_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # kube filters only the node NodeAffinity's PreFilterResult names; a vectorized form
    # over one row costs more than the per-node calls, so none is asked.
    nodes = _nodes(64)
    pods = [_daemon_pod(i, f"node-{i * 7 % 64}") for i in range(20)]
    asked: list[str] = []
    original = Framework.__init__

    def spy_forms(self: Framework, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        for name, form in list(self.filter_columns.items()):

            def counted(*a: Any, _form: Any = form, _name: str = name) -> Any:
                asked.append(_name)
                return _form(*a)

            self.filter_columns[name] = counted

    monkeypatch.setattr(Framework, "__init__", spy_forms)
    placed = _placements(nodes, pods)
    assert asked == []
    assert placed == {f"ds-{i}": f"node-{i * 7 % 64}" for i in range(20)}


def test_daemonset_placements_match_the_per_node_path(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = _nodes(64)
    pods = [_daemon_pod(i, f"node-{i % 5}") for i in range(30)]  # some do not fit: 4 CPUs
    columnar = _placements(nodes, pods)
    monkeypatch.setattr(Framework, "use_batch", False)
    assert _placements(nodes, pods) == columnar


def test_a_pod_with_one_feasible_node_is_not_signed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Opportunistic batching (1.35+) keeps nothing after a cycle with one feasible node, so
    # the pod's signature is never read; a pod with several feasible nodes is signed.
    signed: list[str] = []
    original = OpportunisticBatch.sign

    def spy(self: OpportunisticBatch, p: Pod) -> Any:
        signed.append(p.name)
        return original(self, p)

    monkeypatch.setattr(OpportunisticBatch, "sign", spy)
    nodes = _nodes(64)
    pods = [_daemon_pod(i, f"node-{i}") for i in range(10)] + [pod("free")]
    placed = _placements(nodes, pods)
    assert signed == ["free"]
    assert placed["free"] is not None


def test_an_event_is_matched_once_per_profile_entry_not_once_per_pod(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # MoveAllToActiveOrBackoffQueue at every binding: which registered events an incoming
    # event matches does not depend on the pod, so it is worked out once per kind of event.
    calls = count_calls(monkeypatch, ClusterEvent, "matches")
    nodes = _nodes(4)
    stuck = [pod(f"big-{i}", cpu="8") for i in range(40)]  # fit nowhere: unschedulable
    small = [pod(f"small-{i}") for i in range(20)]
    placed = _placements(nodes, [*stuck, *small])
    assert all(placed[f"small-{i}"] for i in range(20))
    assert not any(placed[f"big-{i}"] for i in range(40))
    # 20 bindings x 40 unschedulable pods would be 800 matchings per registered event.
    assert calls[0] < 200


def test_gated_pods_are_not_looked_at_per_event(monkeypatch: pytest.MonkeyPatch) -> None:
    # Gated pods leave the pool only through their own updates: each event compares itself
    # with ForceActivate once, not once per gated pod.
    compared = count_calls(monkeypatch, ClusterEvent, "__eq__")
    nodes = _nodes(4)
    gated = [pod(f"gated-{i}", schedulingGates=[{"name": "wait"}]) for i in range(30)]
    free = [pod(f"free-{i}") for i in range(10)]
    placed = _placements(nodes, [*gated, *free])
    # 10 bindings x 30 gated pods would be 300 comparisons.
    assert compared[0] < 60
    assert all(placed[f"free-{i}"] for i in range(10))
    assert not any(placed[f"gated-{i}"] for i in range(30))


def test_a_placed_pod_is_not_signed_for_the_failure_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    # The failure memo's signature (JSON of the pod) is read only to recall a failure
    # remembered for the cluster state, or to remember one: placed pods are never signed.
    signed: list[str] = []
    original = diagnosis._pod_signature

    def spy(fwk: Framework, p: Pod) -> str | None:
        signed.append(p.name)
        return original(fwk, p)

    monkeypatch.setattr(diagnosis, "_pod_signature", spy)
    nodes = _nodes(4)
    stuck = [pod(f"big-{i}", cpu="8") for i in range(3)]  # fit nowhere
    small = [pod(f"small-{i}") for i in range(20)]
    placed = _placements(nodes, [*small, *stuck])
    assert all(placed[f"small-{i}"] for i in range(20))
    assert not any(placed[f"big-{i}"] for i in range(3))
    assert signed and all(name.startswith("big-") for name in signed)


def test_node_features_are_inferred_once_per_distinct_pod_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # NodeDeclaredFeatures' PreFilter (1.35+) infers a pod's required features from what its
    # containers say; pods that say the same thing require the same features.
    inferred = [0]
    counted = []
    for name, infer, max_version in node_declared_features._FEATURES:

        def spy(p: Any, _infer: Any = infer) -> bool:
            inferred[0] += 1
            return bool(_infer(p))

        counted.append((name, spy, max_version))
    monkeypatch.setattr(node_declared_features, "_FEATURES", tuple(counted))
    nodes = _nodes(8)
    placed = _placements(nodes, [pod(f"p-{i}") for i in range(30)])
    assert all(placed.values())
    # 30 pods x 9 features would be 270 inferences.
    assert inferred[0] <= len(counted)


def test_a_search_without_rows_goes_node_by_node_without_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A DaemonSet pod's one named node has no rows: it is filtered in a plain loop, not
    # through the chunks' arrays, with the placements of the per-node path.
    chunked = [0]
    original = node_search._filter_chunks

    def spy(*args: Any) -> Any:
        chunked[0] += 1
        return original(*args)

    monkeypatch.setattr(node_search, "_filter_chunks", spy)
    nodes = _nodes(64)
    pods = [_daemon_pod(i, f"node-{i % 8}", cpu="1") for i in range(40)]  # 4 fit a node
    placed = _placements(nodes, pods)
    assert chunked[0] == 0
    monkeypatch.setattr(Framework, "use_batch", False)
    monkeypatch.setattr(node_search, "_filter_chunks", original)
    assert _placements(nodes, pods) == placed
    assert sum(1 for n in placed.values() if n) == 32


def test_node_affinity_columns_are_keyed_by_the_parsed_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # NodeAffinity's vectorized Filter and Score keep each node's answer per distinct
    # selector; the key is the parsed selector PreFilter and PreScore keep, which the pods
    # of one template share, not a JSON of the pod's terms made again in every cycle.
    encoded = [0]
    original = node_affinity.json.dumps

    def spy(*args: Any, **kwargs: Any) -> str:
        if sys._getframe(1).f_globals["__name__"] == node_affinity.__name__:
            encoded[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(node_affinity.json, "dumps", spy)
    expression = {"key": "zone", "operator": "In", "values": ["a", "b"]}
    required = {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}
    preferred = [{"weight": 5, "preference": {"matchExpressions": [expression]}}]
    affinity = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": required,
        "preferredDuringSchedulingIgnoredDuringExecution": preferred,
    }}  # fmt: skip
    nodes = [node(f"node-{i}", labels={"zone": "abc"[i % 3]}) for i in range(12)]
    pods = [pod(f"p-{i}", affinity=affinity) for i in range(30)]
    placed = _placements(nodes, pods)
    assert encoded[0] == 0
    zone = {n.name: n.labels["zone"] for n in nodes}
    assert {zone[n] for n in placed.values() if n} == {"a", "b"}
    assert all(placed.values())
    monkeypatch.setattr(Framework, "use_batch", False)
    assert _placements(nodes, pods) == placed


def test_a_node_affinity_is_signed_once_per_distinct_content(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Opportunistic batching (1.35+) signs every pod that has several feasible nodes;
    # NodeAffinity's fragment (canonical JSON of each term) is made once per distinct
    # node affinity, not once per pod.
    made = [0]
    original = batching._term

    def spy(term: Any) -> Any:
        made[0] += 1
        return original(term)

    monkeypatch.setattr(batching, "_term", spy)
    monkeypatch.setattr(batching, "_NODE_AFFINITY_SIGNATURES", {}, raising=False)
    expression = {"key": "zone", "operator": "In", "values": ["a", "b"]}
    required = {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    nodes = [node(f"node-{i}", labels={"zone": "abc"[i % 3]}) for i in range(12)]
    pods = [pod(f"q-{i}", affinity=json.loads(json.dumps(affinity))) for i in range(30)]
    placed = _placements(nodes, pods)
    assert all(placed.values())
    assert made[0] == 1
