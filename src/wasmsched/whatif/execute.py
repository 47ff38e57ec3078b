"""Running one simulation or replay from files and returning its JSON document: the one
path that ``diff``, ``sweep`` and their workers share, so that a run gives the same
result whichever process executes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wasmsched.api.manifests import ClusterObjects, load_manifests
from wasmsched.config import load_config_or_default
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import (
    DEFAULT_KUBERNETES_VERSION,
    KubernetesVersion,
    requested_kubernetes_version,
)
from wasmsched.replay.engine import Replay
from wasmsched.replay.sources import read_trace
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.document import document
from wasmsched.sim.simulation import Simulation
from wasmsched.whatif.diff import placement_metrics, summary_metrics
from wasmsched.whatif.runs import RunSpec, placements_digest


def run_document(
    cluster: Path | None,
    config: Path | None,
    *,
    trace: list[Path] | None = None,
    seed: int = 0,
    gpu_share: str = "whole",
    kubernetes_version: KubernetesVersion | None = None,
    feature_gates: str = "",
) -> dict[str, Any]:
    """``simulate --output json`` (or ``replay`` with a trace) plus final placement
    metrics (allocation per resource, pods per zone), modelling ``kubernetes_version``
    (default: the cluster's recorded server version, else DEFAULT_KUBERNETES_VERSION)."""
    registry = default_registry()
    objects = (
        load_manifests(cluster, kubernetes_version=kubernetes_version)
        if cluster is not None
        else ClusterObjects(kubernetes_version=kubernetes_version or DEFAULT_KUBERNETES_VERSION)
    )
    features = SchedulerFeatures.of(objects.kubernetes_version, feature_gates)
    sched_config = load_config_or_default(config, registry, features)
    if trace:
        events, standing = read_trace(trace, gpu_share)
        objects.nodes.extend(standing.nodes)
        objects.pods.extend(standing.pods)
        objects.others.extend(standing.others)
        run = Replay(objects, events, sched_config, registry, seed=seed)
        try:
            doc = run.run().to_json()
        finally:
            run.sim.close()
        sim = run.sim
    else:
        sim = Simulation(objects, sched_config, registry, seed=seed)
        try:
            result = sim.run()
        finally:
            sim.close()
        doc = document(result)  # simulate --output json without explain
    doc["metrics"] = placement_metrics(sim.nodes(), sim.pods())
    return doc


def execute(spec: RunSpec) -> dict[str, Any]:
    """Runs one sweep run from its shipped files; the record of ``runs.jsonl``."""
    cluster = spec.cluster.materialize() if spec.cluster is not None else None
    config = spec.config.materialize() if spec.config is not None else None
    trace = [spec.trace.materialize()] if spec.trace is not None else None
    version = requested_kubernetes_version(spec.kubernetes_version)
    doc = run_document(
        cluster,
        config,
        trace=trace,
        seed=spec.seed,
        kubernetes_version=version,
        feature_gates=spec.feature_gates,
    )
    return record(spec, doc)


def record(spec: RunSpec, doc: dict[str, Any]) -> dict[str, Any]:
    """The per-run line: identity, comparable summary, and a digest of every placement."""
    return {
        "id": spec.id,
        "config": spec.config_name,
        "trace": spec.trace.name if spec.trace is not None else None,
        "seed": spec.seed,
        "summary": summary_metrics(doc),
        "placements": placements_digest(doc),
    }
