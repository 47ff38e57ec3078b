"""The ``devices`` entry of simulate's JSON document: devices allocated per DeviceClass
over the run (sim/devices.py), present only for a cluster with DeviceClasses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wasmsched.api.manifests import ClusterObjects, load_manifests
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.document import document
from wasmsched.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[1]
V137 = KubernetesVersion(1, 37)


def _run(cluster: ClusterObjects) -> dict[str, Any]:
    sim = Simulation(cluster, default_config(SchedulerFeatures.of(V137)), in_tree_registry())
    try:
        return document(sim.run())
    finally:
        sim.close()


def test_devices_per_class_are_sampled_at_each_allocation() -> None:
    cluster = load_manifests(
        ROOT / "tests" / "fixtures" / "dra-report.yaml", kubernetes_version=V137
    )
    doc = _run(cluster)
    devices = doc["devices"]
    assert devices["classes"] == [
        {"name": "gpu", "devices": 4},
        {"name": "shared-gpu", "devices": 2, "capacity": {"memory": "16Gi"}},
    ]
    series = devices["series"]
    assert [s["cycle"] for s in series] == [0, 1, 2, 3, 4, 5, 6]
    assert series[-1] == {
        "cycle": 6,
        "t": 0.0,
        "allocated": {"gpu": 3, "shared-gpu": 2},
        "capacityShare": {"shared-gpu": {"memory": 0.75}},
    }
    assert list(doc) == ["pods", "nodes", "devices", "summary"]


def test_no_devices_entry_without_device_classes(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {containers: [{name: c, image: i}]}
"""
    )
    doc = _run(load_manifests(path, kubernetes_version=V137))
    assert doc["pods"][0]["result"] == "Scheduled" and "devices" not in doc
