"""DynamicResources keeps Filter's allocation per node across cycles while the allocator's
inputs are equal (plugin.py: DynamicResources._allocate). Whole simulations with it and
without it end alike: every pod's result, node and message, and every claim's allocation."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_dra_reference import V137, cluster
from wasmsched.api.manifests import ClusterObjects, load_manifests
from wasmsched.config import default_config
from wasmsched.plugins.dynamic_resources import plugin as dra_plugin
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
