"""Extended resources backed by DeviceClasses (DRAExtendedResource) in whole simulations,
and against the real kube-scheduler v1.37.2 (the 1.37 reference binary, whose fake API
server names a created claim from its generateName with a counter): random small clusters
mixing device-plugin nodes and DRA devices, pods asking for the class's extended
resource or its implicit name from containers, init containers and sidecars; every pod's
result and node the same, and for each pod its status.extendedResourceClaimStatus and the
claim it names (requests, allocated devices, reservedFor), but for the five generated
characters of the claim's name."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_dra_reference import BINARY, reference_pods
from wasmsched.api.manifests import load_manifests
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.simulation import Simulation

V135 = KubernetesVersion(1, 35)
V137 = KubernetesVersion(1, 37)
GPU = "example.com/gpu"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu"

Outcome = tuple[str, str | None, str, Any]


def _node(i: int, gpus: int | None) -> dict[str, Any]:
    allocatable = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    if gpus is not None:
        allocatable[GPU] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
        "status": {"allocatable": allocatable},
    }


def _slice(i: int, devices: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"n{i}-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": f"n{i}",
            "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": f"gpu-{d}", "attributes": {"model": {"string": ["a100", "h100"][d % 2]}}}
                for d in range(devices)
            ],
        },
    }


def _class(name: str, model: str | None, extended: str | None, created: str) -> dict[str, Any]:
    expression = 'device.driver == "gpu.example.com"'
    if model:
        expression += f' && device.attributes["gpu.example.com"].model == "{model}"'
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": spec,
    }


def _container(r: random.Random, name: str, sidecar: bool = False) -> dict[str, Any]:
    requests = {"cpu": str(r.randint(1, 2))}
    for resource in (GPU, IMPLICIT):
        if r.random() < (0.6 if resource == GPU else 0.25):
            requests[resource] = str(r.randint(1, 2))
    c: dict[str, Any] = {
        "name": name,
        "image": "i",
        # Extended resources: requests equal limits (the API server's validation).
        "resources": {
            "requests": requests,
            "limits": {k: v for k, v in requests.items() if k != "cpu"},
        },
    }
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def cluster(seed: int) -> list[dict[str, Any]]:
    """Nodes with the resource from a device plugin (some of it held by a bound
    lower-priority pod), or DRA devices, or neither; the class "gpu" names the resource,
    sometimes with a newer class "gpu-h100" naming it too (it then backs it, with its own
    selector); pods of 1 to 4 containers, some with priorities or a claim of their own.
    (A node with both the device plugin's resource and DRA devices is left out: there a
    pod with a claim of its own fails PreBind in kube, "nil or empty request mappings",
    and what follows depends on kube's timing; see docs/dra.md.)"""
    r = random.Random(seed)
    docs: list[dict[str, Any]] = []
    nn = r.randint(2, 4)
    for i in range(nn):
        kind = r.random()
        docs.append(_node(i, r.randint(0, 2) if kind < 0.3 else None))
        if kind >= 0.3 and kind < 0.9:
            docs.append(_slice(i, r.randint(1, 4)))
    docs.append(_class("gpu", None, GPU, "2026-01-01T00:00:00Z"))
    if r.random() < 0.3:
        docs.append(_class("gpu-h100", "h100", GPU, "2026-02-01T00:00:00Z"))
    for node in [d for d in docs if d["kind"] == "Node"]:
        if GPU in node["status"]["allocatable"] and r.random() < 0.5:
            # A lower-priority pod holding the device plugin's resource: a victim.
            name = node["metadata"]["name"]
            bound = _container(r, "c")
            bound["resources"] = {"requests": {"cpu": "1", GPU: "1"}, "limits": {GPU: "1"}}
            docs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"bound-{name}", "namespace": "default"},
                    "spec": {"nodeName": name, "priority": 0, "containers": [bound]},
                }
            )
    for p in range(r.randint(2, 7)):
        spec: dict[str, Any] = {
            "containers": [_container(r, f"c{k}") for k in range(r.randint(1, 2))]
        }
        if r.random() < 0.4:
            spec["initContainers"] = [
                _container(r, f"i{k}", sidecar=r.random() < 0.3) for k in range(r.randint(1, 2))
            ]
        if r.random() < 0.4:
            spec["priority"] = r.randint(1, 100)
        if r.random() < 0.25:
            # A claim of its own beside the extended resources: allocated together.
            docs.append(_user_claim(f"p{p}-claim"))
            spec["resourceClaims"] = [{"name": "x", "resourceClaimName": f"p{p}-claim"}]
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{p}", "namespace": "default"},
                "spec": spec,
            }
        )
    return docs


def _user_claim(name: str) -> dict[str, Any]:
    request = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": request}]}},
    }


def _claim_view(claim: dict[str, Any] | None, status: dict[str, Any]) -> dict[str, Any]:
    """What both sides must agree on: the generated name without its five characters,
    the claim's requests, allocated devices, reservation and mappings."""
    name = str(status.get("resourceClaimName") or "")
    out: dict[str, Any] = {
        "name": name[:-5],
        "requestMappings": status.get("requestMappings"),
    }
    if claim is not None:
        meta = claim.get("metadata") or {}
        allocation = (claim.get("status") or {}).get("allocation") or {}
        out["claim"] = {
            "generateName": meta.get("generateName"),
            "annotations": meta.get("annotations"),
            "finalizers": meta.get("finalizers"),
            "owner": [(o.get("name"), o.get("controller")) for o in meta.get("ownerReferences")],
            "requests": (claim.get("spec") or {}).get("devices", {}).get("requests"),
            "devices": (allocation.get("devices") or {}).get("results"),
            "nodeSelector": allocation.get("nodeSelector"),
            "reservedFor": [
                (x.get("resource"), x.get("name"))
                for x in (claim.get("status") or {}).get("reservedFor") or ()
            ],
        }
    return out


def ours(path: Path, version: KubernetesVersion = V137) -> dict[str, Outcome]:
    sim = Simulation(
        load_manifests(path, kubernetes_version=version),
        default_config(SchedulerFeatures.of(version)),
        in_tree_registry(),
    )
    try:
        result = sim.run()
    finally:
        sim.close()
    claims = sim.store.resource_claims
    out: dict[str, Outcome] = {}
    for o in result.outcomes:
        current = sim.store.pods.get(o.pod.uid)
        status = (current.status if current else {}).get("extendedResourceClaimStatus")
        view = None
        if status:
            claim = claims.get(f"default/{status['resourceClaimName']}")
            view = _claim_view(dict(claim) if claim else None, status)
        out[o.pod.name] = (o.result, o.node, o.message, view)
    return out


def reference(path: Path, prefer: dict[str, Outcome]) -> dict[str, Outcome]:
    pods = reference_pods(path, {name: o[1] for name, o in prefer.items()})
    out: dict[str, Outcome] = {}
    for p in pods:
        extended = p.get("extendedResourceClaim")
        view = _claim_view(extended.get("claim"), extended["status"]) if extended else None
        out[p["name"]] = (p["result"], p["node"], p["message"], view)
    return out


def _write(tmp_path: Path, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_the_claim_and_the_pod_status_are_written(tmp_path: Path) -> None:
    docs = [
        _node(0, None),
        _node(1, None),
        _slice(1, 2),
        _class("gpu", None, GPU, "2026-01-01T00:00:00Z"),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {"requests": {GPU: "2"}, "limits": {GPU: "2"}},
                    }
                ]
            },
        },
    ]
    got = ours(_write(tmp_path, docs))
    result, node, _, view = got["p"]
    assert (result, node) == ("Scheduled", "n1")
    assert view == {
        "name": "p-extended-resources-",
        "requestMappings": [
            {"containerName": "c", "resourceName": GPU, "requestName": "container-0-request-0"}
        ],
        "claim": {
            "generateName": "p-extended-resources-",
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "finalizers": ["resource.kubernetes.io/delete-protection"],
            "owner": [("p", True)],
            "requests": [
                {
                    "name": "container-0-request-0",
                    "exactly": {
                        "deviceClassName": "gpu",
                        "allocationMode": "ExactCount",
                        "count": 2,
                    },
                }
            ],
            "devices": [
                {
                    "request": "container-0-request-0",
                    "driver": "gpu.example.com",
                    "pool": "n1",
                    "device": f"gpu-{d}",
                }
                for d in range(2)
            ],
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
            "reservedFor": [("pods", "p")],
        },
    }


def test_simulate_json_carries_the_claim_and_the_status(tmp_path: Path) -> None:
    docs = [_node(0, None), _slice(0, 1), _class("gpu", None, GPU, "2026-01-01T00:00:00Z")]
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [
                    {"name": "c", "image": "i", "resources": {"requests": {IMPLICIT: "1"}}}
                ]
            },
        }
    )
    path = _write(tmp_path, docs)
    run = subprocess.run(
        [sys.executable, "-m", "wasmsched", "simulate", "--cluster", str(path), "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    (pod,) = json.loads(run.stdout)["pods"]
    extended = pod["extendedResourceClaim"]
    name = extended["status"]["resourceClaimName"]
    assert extended["status"]["requestMappings"] == [
        {"containerName": "c", "resourceName": IMPLICIT, "requestName": "container-0-request-0"}
    ]
    assert extended["claim"]["metadata"]["name"] == name
    assert name.startswith("p-extended-resources-")
    assert extended["claim"]["status"]["reservedFor"][0]["name"] == "p"


def test_before_the_gate_the_resource_is_the_nodes_only(tmp_path: Path) -> None:
    """1.35: DRAExtendedResource is alpha (off): NodeResourcesFit checks the resource."""
    docs = [_node(0, None), _slice(0, 2), _class("gpu", None, GPU, "2026-01-01T00:00:00Z")]
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [_container(random.Random(3), "c")]},
        }
    )
    docs[-1]["spec"]["containers"][0]["resources"] = {"requests": {GPU: "1"}, "limits": {GPU: "1"}}
    result, node, message, view = ours(_write(tmp_path, docs), V135)["p"]
    assert (result, node, view) == ("Unschedulable", None, None)
    assert f"Insufficient {GPU}" in message


@pytest.mark.skipif(
    not BINARY.exists(), reason="the 1.37 reference is not built (scripts/build-reference)"
)
@pytest.mark.parametrize("seed", range(200, 212))
def test_same_as_kube_scheduler_1_37(seed: int, tmp_path: Path) -> None:
    path = _write(tmp_path, cluster(seed))
    got = ours(path)
    assert got == reference(path, got)


@pytest.mark.skipif(
    not BINARY.exists(), reason="the 1.37 reference is not built (scripts/build-reference)"
)
def test_a_claim_left_from_an_earlier_cycle_is_replaced(tmp_path: Path) -> None:
    """A special claim the pod already owns (made by a cycle whose binding failed): Filter
    rejects every node, PostFilter deletes it, the next attempt makes a new one."""
    docs = [_node(1, None), _slice(1, 2), _class("gpu", None, GPU, "2026-01-01T00:00:00Z")]
    old = _user_claim("p-extended-resources-old00")
    old["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    old["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p-uid", "controller": True}
    ]
    pod = _container(random.Random(1), "c")
    pod["resources"] = {"requests": {GPU: "1"}, "limits": {GPU: "1"}}
    docs += [
        old,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "uid": "p-uid"},
            "spec": {"containers": [pod]},
        },
    ]
    path = _write(tmp_path, docs)
    got = ours(path)
    result, node, _, view = got["p"]
    assert (result, node) == ("Scheduled", "n1")
    assert view is not None and view["claim"]["generateName"] == "p-extended-resources-"
    assert got == reference(path, got)
