"""``wasmsched snapshot`` exports the DRA objects: simulate of the snapshot makes and
allocates the same claims as simulate of the cluster the snapshot was taken from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from apiserver import ApiServerDouble
from live_support import api_for, node, pod
from wasmsched.cli import app
from wasmsched.live import snapshot

cli = CliRunner()
DRIVER = "gpu.example.com"
DRA = "resource.k8s.io/v1"


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def gpu_slice(node_name: str, gpus: int, shared: bool = False) -> dict[str, Any]:
    """A node's GPUs: gpu-0 an A10, the others T4s; ``shared``: each with 1000 milli of
    consumable capacity and allowMultipleAllocations."""
    devices: list[dict[str, Any]] = []
    for i in range(gpus):
        model = {"string": "T4" if i else "A10"}
        device: dict[str, Any] = {
            "name": f"gpu-{i}",
            "attributes": {"model": model, "index": {"int": i}},
        }
        if shared:
            device["allowMultipleAllocations"] = True
            device["capacity"] = {"milli": {"value": "1000"}}
        devices.append(device)
    return {
        "apiVersion": DRA,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-gpus"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node_name,
            "devices": devices,
        },
    }


def claim_spec(selector: str = "") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}


def claim_template(name: str, selector: str = "") -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": claim_spec(selector)},
    }


def claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": claim_spec(),
    }


def allocation(node_name: str, device: str) -> dict[str, Any]:
    return {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": node_name, "device": device}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        },
    }


def claiming_pod(
    name: str, *, template: str = "", claim_name: str = "", **spec: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": "gpu"}
    if template:
        entry["resourceClaimTemplateName"] = template
    else:
        entry["resourceClaimName"] = claim_name
    p = pod(name, resourceClaims=[entry], **spec)
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return p


def dra_cluster() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """2 nodes x 3 GPUs (gpu-0 an A10, the others T4s); a running pod holding n0's A10
    through a direct claim; pending: a pod from a template asking for an A10, three pods
    from a template (any GPU), and one using a direct claim. Returns the objects, and the
    running pod's claim status (written once its uid is known)."""
    objects = [
        node("n0"),
        node("n1"),
        device_class(),
        gpu_slice("n0", 3),
        gpu_slice("n1", 3),
        claim_template("any-gpu"),
        claim_template("a10", f'device.attributes["{DRIVER}"].model == "A10"'),
        claim("held"),
        claim("shared"),
        claiming_pod("busy-0", claim_name="held", nodeName="n0"),
        claiming_pod("a10-0", template="a10"),
        *(claiming_pod(f"web-{i}", template="any-gpu") for i in range(3)),
        claiming_pod("shared-0", claim_name="shared"),
    ]
    status = {
        "allocation": allocation("n0", "gpu-0"),
        "reservedFor": [{"resource": "pods", "name": "busy-0", "uid": "UID"}],
    }
    return objects, status


def simulate(path: Path) -> tuple[dict[str, str | None], dict[str, Any]]:
    """Placements and the claims' allocations (by name, template claims by pod and entry)."""
    result = cli.invoke(app, ["simulate", "--cluster", str(path), "-o", "json", "--seed", "3"])
    assert result.exit_code == 0, result.output
    placed = {p["name"]: p["node"] for p in json.loads(result.stdout)["pods"]}
    from wasmsched.api.manifests import load_manifests
    from wasmsched.config import default_config
    from wasmsched.plugins.registry import in_tree_registry
    from wasmsched.release.features import SchedulerFeatures
    from wasmsched.sim.simulation import Simulation

    cluster = load_manifests(path)
    features = SchedulerFeatures.of(cluster.kubernetes_version)
    sim = Simulation(cluster, default_config(features), in_tree_registry(), seed=3)
    try:
        sim.run()
    finally:
        sim.close()
    claims = {
        key: [
            (r["pool"], r["device"])
            for r in (c.get("status") or {})
            .get("allocation", {})
            .get("devices", {})
            .get("results", [])
        ]
        for key, c in sim.store.resource_claims.items()
    }
    return placed, claims


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble()
    server.git_version = "v1.37.2"
    server.start()
    yield server
    server.stop()


def test_snapshot_exports_dra_objects_and_simulate_reproduces_claims(
    srv: ApiServerDouble, tmp_path: Path
) -> None:
    objects, status = dra_cluster()
    for o in objects:
        created = srv.create(o)
        if o["metadata"]["name"] == "busy-0":
            status["reservedFor"][0]["uid"] = created["metadata"]["uid"]
    held = srv.get("ResourceClaim", "default", "held")
    srv.update({**held, "status": status})

    result = cli.invoke(app, ["snapshot", "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc"))])
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    kinds = [d["kind"] for d in docs]
    for kind, count in [
        ("DeviceClass", 1),
        ("ResourceSlice", 2),
        ("ResourceClaimTemplate", 2),
        ("ResourceClaim", 2),
    ]:
        assert kinds.count(kind) == count, kind
    (snap_held,) = [
        d for d in docs if d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "held"
    ]
    assert snap_held["status"] == status  # the allocation and its consumer
    assert "resourceVersion" not in snap_held["metadata"]
    snap = tmp_path / "snapshot.yaml"
    snap.write_text(result.stdout)

    # The same cluster as a file, the way a user writes it, with the server's pod uids (the
    # claims made from templates are named after them) and the pods in the snapshot's order
    # (simulate queues them in file order).
    uids = {d["metadata"]["name"]: d["metadata"]["uid"] for d in docs if d["kind"] == "Pod"}
    written: list[dict[str, Any]] = []
    for o in objects:
        if o["kind"] == "Pod":
            o = {**o, "metadata": {**o["metadata"], "uid": uids[o["metadata"]["name"]]}}
        elif o["metadata"]["name"] == "held":
            o = {**o, "status": status}
        written.append(o)
    written.sort(
        key=lambda o: (o["kind"] == "Pod", o["metadata"]["name"] if o["kind"] == "Pod" else "")
    )
    direct = tmp_path / "cluster.yaml"
    version = {"apiVersion": "wasmsched.io/v1", "kind": "Snapshot", "metadata": {}}
    direct.write_text(yaml.safe_dump_all([{**version, "serverVersion": "v1.37.2"}, *written]))

    from_snapshot = simulate(snap)
    assert from_snapshot == simulate(direct)
    placed, claims = from_snapshot
    assert all(placed.values()), placed
    # n0's A10 is held by busy-0: the pod asking for an A10 gets n1's.
    assert placed["a10-0"] == "n1"
    assert claims["default/held"] == [("n0", "gpu-0")]
    allocated = sorted(d for devices in claims.values() for d in devices)
    assert len(allocated) == len(set(allocated)) == 6  # every GPU, each once
    made = [k for k in claims if k.startswith("default/web-")]
    assert len(made) == 3  # one claim per pod from the template, as the controller names them


def test_snapshot_of_a_server_without_dra_leaves_the_kinds_out(srv: ApiServerDouble) -> None:
    srv.create(node("n0"))
    srv.create(device_class())
    srv.create(gpu_slice("n0", 1))
    srv.faults.fail_next("GET", "resourceslices", status=404)
    kinds = {o["kind"] for o in snapshot(api_for(srv))}
    assert "ResourceSlice" not in kinds and {"Node", "DeviceClass"} <= kinds
