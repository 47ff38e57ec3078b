"""DynamicResources with claims against the real kube-scheduler v1.37.2 (the 1.37 reference
binary, which decodes resource.k8s.io/v1 objects into its fake clientset): random small
clusters, every pod's result and node the same. Ties between equally scored nodes are
broken towards wasmsched's choice (``--prefer``), as the differential suite does; an Error's
message names the first node kube's parallel Filter happened to fail, so only the result
of an Error is compared."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from wasmsched.api.manifests import load_manifests
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / ".cache" / "reference" / "wasmsched-reference-1.37"
V137 = KubernetesVersion(1, 37)

pytestmark = pytest.mark.skipif(
    not BINARY.exists(), reason="the 1.37 reference is not built (scripts/build-reference)"
)

Outcomes = dict[str, tuple[str, str | None, str]]


def _node_slices(r: random.Random, i: int, devs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Node i's slices: plain, partitionable (the devices share a counter set in a second
    slice of the pool) or with consumable capacity (devices allowing several shares)."""
    kind = r.random()
    count, driver = 1, "gpu.example.com"
    out: list[dict[str, Any]] = []
    if kind < 0.3:
        for d in devs:
            memory = r.choice(["20Gi", "40Gi"])
            d["consumesCounters"] = [
                {"counterSet": "mem", "counters": {"memory": {"value": memory}}}
            ]
        count = 2
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"n{i}-counters"},
                "spec": {
                    "driver": driver,
                    "nodeName": f"n{i}",
                    "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 2},
                    "sharedCounters": [{"name": "mem", "counters": {"memory": {"value": "60Gi"}}}],
                },
            }
        )
    elif kind < 0.5:
        for d in devs:
            d["allowMultipleAllocations"] = True
            d["capacity"] = {"memory": {"value": "40Gi"}}
    else:
        driver = r.choice(["gpu.example.com", "gpu.example.com", "other.example.com"])
    out.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"n{i}-gpu"},
            "spec": {
                "driver": driver,
                "nodeName": f"n{i}",
                "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": count},
                "devices": devs,
            },
        }
    )
    return out


def cluster(seed: int) -> list[dict[str, Any]]:
    """A random small DRA cluster: per-node and shared slices, two classes, direct
    claims (API defaults written out: the reference applies none) with selectors,
    firstAvailable, All mode, tolerations, matchAttribute constraints, partitionable
    devices and consumable capacity."""
    r = random.Random(seed)
    docs: list[dict[str, Any]] = []
    nn = r.randint(2, 4)
    for i in range(nn):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"n{i}",
                    "labels": {"kubernetes.io/hostname": f"n{i}", "zone": r.choice("ab")},
                },
                "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
            }
        )
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    )
    docs.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "any"},
            "spec": {},
        }
    )
    for i in range(nn):
        if r.random() < 0.2:
            continue
        devs: list[dict[str, Any]] = []
        for d in range(r.randint(1, 4)):
            dev = {
                "name": f"gpu-{d}",
                "attributes": {
                    "model": {"string": r.choice(["a100", "h100"])},
                    "numa": {"int": r.randint(0, 1)},
                },
            }
            if r.random() < 0.15:
                dev["taints"] = [
                    {"key": "bad", "effect": r.choice(["NoSchedule", "NoExecute", "None"])}
                ]
            devs.append(dev)
        docs.extend(_node_slices(r, i, devs))
    if r.random() < 0.5:
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": "net"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeSelector": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a"]}
                                ]
                            }
                        ]
                    },
                    "pool": {"name": "net", "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": f"net-{k}",
                            "attributes": {"model": {"string": "a100"}, "numa": {"int": 0}},
                        }
                        for k in range(r.randint(1, 3))
                    ],
                },
            }
        )

    def exact(r: random.Random) -> dict[str, Any]:
        e = {
            "deviceClassName": r.choice(["gpu", "gpu", "any"]),
            "allocationMode": "ExactCount",
            "count": r.randint(1, 2),
        }
        if r.random() < 0.1:
            e = {"deviceClassName": "gpu", "allocationMode": "All"}
        if r.random() < 0.4:
            e["selectors"] = [
                {
                    "cel": {
                        "expression": f'device.attributes["gpu.example.com"].model == "{r.choice(["a100", "h100"])}"'
                    }
                }
            ]
        if r.random() < 0.2:
            e["tolerations"] = [{"key": "bad", "operator": "Exists"}]
        if r.random() < 0.3 and e.get("allocationMode") == "ExactCount":
            e["capacity"] = {"requests": {"memory": r.choice(["10Gi", "20Gi", "30Gi"])}}
        return e

    for p in range(r.randint(2, 8)):
        reqs: list[dict[str, Any]] = []
        for q in range(r.randint(1, 2)):
            if r.random() < 0.25:
                subs: list[dict[str, Any]] = []
                for s in range(r.randint(2, 3)):
                    e = exact(r)
                    e["name"] = f"s{s}"
                    subs.append(e)
                reqs.append({"name": f"r{q}", "firstAvailable": subs})
            else:
                reqs.append({"name": f"r{q}", "exactly": exact(r)})
        devices: dict[str, Any] = {"requests": reqs}
        if len(reqs) > 1 and r.random() < 0.3:
            devices["constraints"] = [{"matchAttribute": "gpu.example.com/numa"}]
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"c{p}", "namespace": "default"},
                "spec": {"devices": devices},
            }
        )
        pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{p}", "namespace": "default"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {"requests": {"cpu": str(r.randint(1, 4))}},
                    }
                ],
                "resourceClaims": [{"name": "x", "resourceClaimName": f"c{p}"}],
            },
        }
        if r.random() < 0.3:
            pod["spec"]["priority"] = r.randint(0, 100)
        docs.append(pod)
    return docs


def ours(path: Path) -> Outcomes:
    cluster_objects = load_manifests(path, kubernetes_version=V137)
    sim = Simulation(
        cluster_objects, default_config(SchedulerFeatures.of(V137)), in_tree_registry()
    )
    try:
        result = sim.run()
    finally:
        sim.close()
    return {o.pod.name: (o.result, o.node, o.message) for o in result.outcomes}


def reference_pods(path: Path, prefer: dict[str, str | None]) -> list[dict[str, Any]]:
    """The 1.37 reference's report of every pod of the cluster at ``path``; ``prefer``
    (pod name -> wasmsched's node) breaks ties between equally scored nodes."""
    prefer_file = path.with_suffix(".prefer.json")
    prefer_file.write_text(
        json.dumps({f"default/{name}": node for name, node in prefer.items() if node})
    )
    out = subprocess.run(
        [str(BINARY), "--cluster", str(path), "--prefer", str(prefer_file)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    pods: list[dict[str, Any]] = json.loads(out.stdout)["pods"]
    return pods


def reference(path: Path, prefer: Outcomes) -> Outcomes:
    pods = reference_pods(path, {name: o[1] for name, o in prefer.items()})
    return {p["name"]: (p["result"], p["node"], p["message"]) for p in pods}


def _comparable(outcomes: Outcomes) -> Outcomes:
    return {k: (r, n, "" if r == "Error" else m) for k, (r, n, m) in outcomes.items()}


@pytest.mark.parametrize("seed", range(100, 108))
def test_same_results_as_kube_scheduler_1_37(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(cluster(seed)))
    got = ours(path)
    assert _comparable(got) == _comparable(reference(path, got))


def test_a_pod_that_keeps_erroring_lets_the_run_settle(tmp_path: Path) -> None:
    """A pod whose attempts end in an error (here a CEL runtime error: the device has no
    attribute in the selector's domain) is retried from the backoff queue for as long as
    it fails. The reference still settles once a retry met the same cluster
    (reference/run.go: onlyRepeatingErrors) instead of running into its --timeout."""
    docs = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n0", "labels": {"kubernetes.io/hostname": "n0"}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
        },
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n0-gpu"},
            "spec": {
                "driver": "other.example.com",
                "nodeName": "n0",
                "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c0", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "r0",
                            "exactly": {
                                "deviceClassName": "any",
                                "allocationMode": "ExactCount",
                                "count": 1,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": 'device.attributes["gpu.example.com"]'
                                            '.model == "a100"'
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p0", "namespace": "default"},
            "spec": {
                "containers": [
                    {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}
                ],
                "resourceClaims": [{"name": "x", "resourceClaimName": "c0"}],
            },
        },
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    assert ours(path)["p0"][0] == "Error"
    out = subprocess.run(
        [str(BINARY), "--cluster", str(path), "--timeout", "20s"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(out.stdout)
    assert [(p["name"], p["result"]) for p in report["pods"]] == [("p0", "Error")]
    assert report["summary"]["stoppedEarly"] is None
