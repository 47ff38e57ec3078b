"""DynamicResources keeps Filter's allocation per node across cycles while the allocator's
inputs are equal (answers.py: NodeAnswers). Whole simulations with it and
without it end alike: every pod's result, node and message, and every claim's allocation;
with extended resources backed by a DeviceClass too (the special claim made per node), and
explained cycles ask the allocator on every node."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_dra_extended_reference import GPU
from test_dra_extended_reference import _class as extended_class
from test_dra_extended_reference import _node as extended_node
from test_dra_extended_reference import _slice as extended_slice
from test_dra_extended_reference import cluster as extended_cluster
from test_dra_reference import V137, cluster
from wasmsched.api.manifests import ClusterObjects, load_manifests
from wasmsched.config import default_config
from wasmsched.plugins.dynamic_resources import plugin as dra_plugin
from wasmsched.plugins.dynamic_resources.allocator import Allocator
from wasmsched.plugins.dynamic_resources.allocator import _Run as allocator_run
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.sim.simulation import Simulation

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

Ending = tuple[dict[str, tuple[str, str | None, str]], dict[str, Any]]


def _run(objects: ClusterObjects) -> Ending:
    sim = Simulation(objects, default_config(SchedulerFeatures.of(V137)), in_tree_registry())
    try:
        result = sim.run()
    finally:
        sim.close()
    pods = {o.pod.key: (o.result, o.node, o.message) for o in result.outcomes}
    claims = {
        k: (c.get("status") or {}).get("allocation") for k, c in sim.store.resource_claims.items()
    }
    return pods, claims


def _kept_and_not(objects: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Ending, Ending]:
    kept = _run(objects())
    with monkeypatch.context() as m:
        m.setattr(dra_plugin, "allocator_inputs", lambda *args: None)
        fresh = _run(objects())
    return kept, fresh


@pytest.mark.parametrize("seed", range(25))
def test_random_dra_clusters_end_alike_with_answers_kept(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(cluster(seed)))
    kept, fresh = _kept_and_not(lambda: load_manifests(path, kubernetes_version=V137), monkeypatch)
    assert kept == fresh


@pytest.fixture
def perf_dra() -> Iterator[Any]:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import perf_dra

        yield perf_dra
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_claims_from_one_template_end_alike_with_answers_kept(
    perf_dra: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scheduler_perf's DRA shape with more pods than devices: 4 nodes of 8 devices, 40
    pods with a claim each from one template; the answers kept across pods are the ones a
    fresh allocation gives, and the 8 pods too many stay pending."""

    def objects() -> ClusterObjects:
        w = perf_dra.scheduling_with_resource_claim_template(8)
        nodes = w.nodes[:4]
        others = [
            o
            for o in w.others
            if o["kind"] != "ResourceSlice" or o["spec"]["nodeName"] in {n.name for n in nodes}
        ]
        return ClusterObjects(nodes=nodes, pods=w.pending, others=others)

    kept, fresh = _kept_and_not(objects, monkeypatch)
    assert kept == fresh
    results = [r for r, _, _ in kept[0].values()]
    assert results.count("Scheduled") == 32


@pytest.mark.parametrize("seed", range(12))
def test_extended_resource_clusters_end_alike_with_answers_kept(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Extended resources backed by a DeviceClass: the special claim's requests are made
    per node (and per pod), so a kept answer must be one for the same requests."""
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(extended_cluster(seed)))
    kept, fresh = _kept_and_not(lambda: load_manifests(path, kubernetes_version=V137), monkeypatch)
    assert kept == fresh


def test_a_special_claim_is_not_answered_for_another_pods_requests(tmp_path: Path) -> None:
    """Two pods asking for the DeviceClass's extended resource on a node with one device:
    the first (higher priority) asks for two and fails, the second asks for one; the
    answer kept for the first (no devices) is not the second's (its special claim made
    for the node has other requests)."""
    docs: list[dict[str, Any]] = [
        extended_node(0, None),
        extended_slice(0, 1),
        extended_class("gpu", None, GPU, "2026-01-01T00:00:00Z"),
    ]
    for name, count, priority in (("big", 2, 10), ("small", 1, 0)):
        resources = {"requests": {GPU: str(count)}, "limits": {GPU: str(count)}}
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "priority": priority,
                    "containers": [{"name": "c", "image": "i", "resources": resources}],
                },
            }
        )
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    pods, _ = _run(load_manifests(path, kubernetes_version=V137))
    assert pods["default/big"][0] == "Unschedulable"
    assert pods["default/small"][:2] == ("Scheduled", "n0")


def test_an_explained_cycle_asks_the_allocator_on_every_node(
    perf_dra: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--explain records the allocator's verdicts device by device beside a fresh answer:
    in explained cycles no answer kept from an earlier pod stands in (4 nodes, 8 pods from
    one template, all explained: 8 x 4 allocations)."""
    w = perf_dra.scheduling_with_resource_claim_template(8)
    nodes = w.nodes[:4]
    others = [
        o
        for o in w.others
        if o["kind"] != "ResourceSlice" or o["spec"]["nodeName"] in {n.name for n in nodes}
    ]
    calls: list[str] = []
    allocate = Allocator.allocate

    def counted(self: Allocator, node: Any, claims: Any) -> Any:
        calls.append(node.name)
        return allocate(self, node, claims)

    monkeypatch.setattr(Allocator, "allocate", counted)
    sim = Simulation(
        ClusterObjects(nodes=nodes, pods=w.pending[:8], others=others),
        default_config(SchedulerFeatures.of(V137)),
        in_tree_registry(),
        explain=True,
    )
    try:
        result = sim.run()
    finally:
        sim.close()
    assert [o.result for o in result.outcomes] == ["Scheduled"] * 8
    assert len(calls) == 8 * 4
    assert all(c.devices for o in result.pods for c in o.outcome.cycles)


def _openb_claim_writes(scale: float, tmp_path: Path) -> list[Any]:
    """Every claim write of the openb-shaped dense trace under --gpu-model dra (GPU shares
    of many sizes, each size a template of its own, taking turns)."""
    from test_replay_dra import _bench_replay, replay

    bench = _bench_replay()
    nodes, pods = bench.write_trace(tmp_path, "dense", 1, bench.DAY, 48 * 3600.0, 0.33, scale)
    run, log, _ = replay(nodes, pods)
    try:
        run.run()
    finally:
        run.sim.close()
    return log.writes


def test_answers_with_shares_are_kept_per_template_and_renamed_per_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answers that hold shares of a device name them after the claim (share IDs), and a
    trace's pods come from many templates in turn: an answer is kept per node for each
    template, and given to the next claim of that template with the share IDs the
    allocator would have made for it. Every claim write (devices, shares and their IDs)
    equals a run that asks the allocator on every node, with far fewer allocations."""
    runs: list[int] = []
    run = allocator_run.run

    def counted(self: Any) -> Any:
        runs.append(1)
        return run(self)

    monkeypatch.setattr(allocator_run, "run", counted)
    kept = _openb_claim_writes(0.02, tmp_path / "kept")
    kept_runs = len(runs)
    runs.clear()
    with monkeypatch.context() as m:
        m.setattr(dra_plugin, "allocator_inputs", lambda *args: None)
        fresh = _openb_claim_writes(0.02, tmp_path / "fresh")
    assert kept == fresh
    shares = {r["shareID"] for w in kept if w.results for r in w.results if "shareID" in r}
    assert len(shares) > 50
    assert kept_runs * 4 < len(runs)
