"""--explain for DynamicResources: per node and claim request, each device's verdict (the
allocator's reason for leaving it out) or the devices allocated, in text and JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from wasmsched.api.manifests import load_manifests
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "examples" / "dra" / "explain.yaml"
V137 = KubernetesVersion(1, 37)


def _explained(pods: frozenset[str] | None, path: Path = CLUSTER) -> dict[str, Any]:
    cluster = load_manifests(path, kubernetes_version=V137)
    sim = Simulation(
        cluster,
        default_config(SchedulerFeatures.of(V137)),
        in_tree_registry(),
        explain=True,
        explain_pods=pods,
    )
    try:
        result = sim.run()
    finally:
        sim.close()
    return {r.pod.name: r for r in result.pods}


def _verdicts(entry: dict[str, Any]) -> dict[str, str]:
    return {d["device"].rsplit("/", 1)[1]: d["result"] for d in entry["devices"]}


def test_each_device_says_why_it_was_left_out() -> None:
    pods = _explained(frozenset({"default/first", "default/second", "default/big"}))
    first = pods["first"].outcome.cycles[-1].devices["n1"]
    (entry,) = first
    # The first h100 that passes every check is taken; the search stops there.
    assert entry["allocated"] == ["gpu.example.com/n1/gpu-2"]
    assert entry["needs"] == 1 and entry["deviceClass"] == "gpu"
    assert _verdicts(entry)["gpu-2"] == "allocated"
    assert _verdicts(entry)["gpu-1"] == "taint: example.com/broken=fan:NoSchedule is not tolerated"

    (entry,) = pods["second"].outcome.cycles[-1].devices["n1"]
    holder = pods["first"].pod.resource_claim_statuses["gpu"]
    assert "allocated" not in entry and entry["matching"] == 0
    assert _verdicts(entry) == {
        "gpu-0": 'selector false: request selector #0: device.attributes["gpu.example.com"]'
        '.model == "h100"',
        "gpu-1": "taint: example.com/broken=fan:NoSchedule is not tolerated",
        "gpu-2": f"in use: allocated to default/{holder}",
        "gpu-3": "counter exhausted: gpu-3-memory/memory needs 20Gi, 10Gi left",
        "gpu-4": 'selector false: request selector #0: device.attributes["gpu.example.com"]'
        '.model == "h100"',
    }
    (entry,) = pods["big"].outcome.cycles[-1].devices["n1"]
    assert _verdicts(entry)["gpu-4"] == "capacity: memory needs 16Gi, 8Gi of 8Gi free"


def test_pods_without_claims_and_unexplained_pods_carry_no_devices() -> None:
    pods = _explained(frozenset({"default/second"}))
    assert pods["first"].outcome is not None and pods["first"].outcome.cycles == []
    record = pods["second"].outcome.cycles[-1]
    assert "devices" in record.to_dict()
    assert "devices" not in type(record)().to_dict()


def _simulate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wasmsched", "simulate", "--cluster", str(CLUSTER), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_json_and_text_forms() -> None:
    out = _simulate("--explain", "--explain-pod", "default/second", "--output", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    second = next(p for p in doc["pods"] if p["name"] == "second")
    (entry,) = second["cycles"][-1]["devices"]["n1"]
    assert entry["request"] == "gpu" and entry["matching"] == 0
    assert [d["device"] for d in entry["devices"]] == [
        f"gpu.example.com/n1/gpu-{i}" for i in range(5)
    ]
    first = next(p for p in doc["pods"] if p["name"] == "first")
    assert "cycles" not in first  # not explained

    out = _simulate("--explain", "--explain-pod", "default/second")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Devices (DynamicResources)" in text
    assert "request gpu (class gpu, needs 1 device): 0 matching" in text
    assert (
        "counter exhausted: gpu-3-memory/memory needs 20Gi, 10Gi left: gpu.example.com/n1/gpu-3"
        in text
    )
    assert "selector false: request selector #0: " in text
    assert "gpu.example.com/n1/gpu-0, gpu.example.com/n1/gpu-4" in text


def test_a_claim_allocated_elsewhere_and_a_pool_being_updated() -> None:
    pods = _explained(None, ROOT / "tests" / "fixtures" / "dra-explain-pinned.yaml")
    first, second = pods["pinned-pod"].outcome.cycles
    # n1 has too little cpu (NodeResourcesFit, before DynamicResources); on n2 the claim
    # allocated for n1 cannot be used, so PostFilter deallocates it.
    assert first.devices == {
        "n2": [
            {"claim": "default/pinned", "error": "allocated earlier, not available on this node"}
        ]
    }
    (entry,) = second.devices["n2"]
    assert entry["pools"] == [
        {"pool": "gpu.example.com/n2", "result": "being updated: not all its slices"}
    ]
    assert entry["devices"] == [] and entry["matching"] == 0 and "allocated" not in entry


def test_prioritized_alternatives_and_a_device_taken_by_another_request() -> None:
    path = ROOT / "tests" / "fixtures" / "dra-explain-prioritized.yaml"
    entries = _explained(None, path)["p"].outcome.cycles[-1].devices["n1"]
    by_request = {e["request"]: e for e in entries}
    assert list(by_request) == ["gpu/b", "gpu/any", "second"]
    assert by_request["gpu/b"]["allocated"] == ["gpu.example.com/n1/b"]
    assert _verdicts(by_request["gpu/b"]) == {
        "a": 'selector false: request selector #0: device.attributes["gpu.example.com"].model'
        ' == "b"',
        "b": "allocated",
    }
    # The alternative not chosen: its devices are judged for it alone; a device a later
    # request got ("second" took a) did not stand in the way of an earlier one.
    assert by_request["gpu/any"]["allocated"] == []
    assert _verdicts(by_request["gpu/any"]) == {"a": "matches", "b": "matches"}
    assert by_request["second"]["allocated"] == ["gpu.example.com/n1/a"]
    assert _verdicts(by_request["second"]) == {
        "a": "allocated",
        "b": "in use: allocated to default/c, request gpu/b of this pod",
    }
