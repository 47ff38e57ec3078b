"""``capacity`` with DRA: copies of a pod whose claim comes from a ResourceClaimTemplate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_snapshot_dra import DRIVER, device_class, gpu_slice
from test_whatif import node, pod, wasmsched, write


def template(name: str, count: int = 1, milli: str = "") -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": count}
    if milli:
        exactly["capacity"] = {"requests": {"milli": milli}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }


def gpu_pod(name: str, claim_template: str, cpu: str = "100m") -> dict[str, Any]:
    p = pod(
        name, cpu=cpu, resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": claim_template}]
    )
    p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return p


def capacity(tmp: Path, cluster: Path, *templates: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    args = ["capacity", "--cluster", str(cluster), "--output", "json"]
    for i, t in enumerate(templates):
        args += ["--pod", str(write(tmp / f"template-{i}.yaml", t))]
    out = wasmsched(*args, cwd=tmp)
    return out.returncode, json.loads(out.stdout) if out.returncode == 0 else {"stderr": out.stderr}


def test_a_claim_of_one_gpu_fits_once_per_gpu(tmp_path: Path) -> None:
    """3 nodes x 2 GPUs, a claim of 1 GPU per copy: 6 copies, 2 a node; the 7th finds no
    device (its claim, made from the template like the others, cannot be allocated)."""
    cluster = write(
        tmp_path / "cluster.yaml",
        *(node(f"n{i}") for i in range(3)),
        *(gpu_slice(f"n{i}", 2) for i in range(3)),
        device_class(),
        template("one-gpu"),
    )
    code, result = capacity(tmp_path, cluster, gpu_pod("trainer", "one-gpu"))
    assert code == 0, result
    (t,) = result["templates"]
    assert t["replicas"] == 6 and t["fits"] is False
    assert t["nodes"] == {"n0": 2, "n1": 2, "n2": 2}
    assert t["stopReason"] == ("0/3 nodes are available: 3 cannot allocate all claims.")


def test_claims_of_two_gpus_and_shares(tmp_path: Path) -> None:
    """A copy asking for 2 GPUs fits on a node with 2 free GPUs only; 300-milli shares of
    shared GPUs fit 3 to a GPU (the CPU is ample): hand-counted answers."""
    cluster = write(
        tmp_path / "cluster.yaml",
        node("n0"),
        node("n1"),
        gpu_slice("n0", 3),
        gpu_slice("n1", 2),
        device_class(),
        template("two-gpus", count=2),
    )
    code, result = capacity(tmp_path, cluster, gpu_pod("pair", "two-gpus"))
    assert code == 0, result
    (t,) = result["templates"]
    assert (t["replicas"], t["nodes"]) == (2, {"n0": 1, "n1": 1})  # n0's third GPU is alone

    shared = write(
        tmp_path / "shared.yaml",
        node("n0", cpu="64"),
        gpu_slice("n0", 2, shared=True),
        device_class(),
        template("slice", milli="300"),
    )
    code, result = capacity(tmp_path, shared, gpu_pod("slice", "slice"))
    assert code == 0, result
    assert result["templates"][0]["replicas"] == 6  # floor(1000 / 300) per GPU, 2 GPUs


def test_running_pods_claims_count(tmp_path: Path) -> None:
    """A running pod's allocated claim holds its device: one GPU of the six is taken."""
    running = gpu_pod("busy", "one-gpu")
    running["spec"]["nodeName"] = "n0"
    running["status"] = {
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "busy-gpu"}]
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "busy-gpu", "namespace": "default"},
        "spec": template("x")["spec"]["spec"],
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": "n0", "device": "gpu-0"}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n0"]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": "busy", "uid": "busy-uid"}],
        },
    }
    running["metadata"]["uid"] = "busy-uid"
    cluster = write(
        tmp_path / "cluster.yaml",
        *(node(f"n{i}") for i in range(3)),
        *(gpu_slice(f"n{i}", 2) for i in range(3)),
        device_class(),
        template("one-gpu"),
        claim,
        running,
    )
    code, result = capacity(tmp_path, cluster, gpu_pod("trainer", "one-gpu"))
    assert code == 0, result
    assert result["templates"][0]["replicas"] == 5
    assert result["templates"][0]["nodes"]["n0"] == 1


def test_a_missing_claim_template_is_one_line(tmp_path: Path) -> None:
    cluster = write(tmp_path / "cluster.yaml", node("n0"), gpu_slice("n0", 1), device_class())
    code, result = capacity(tmp_path, cluster, gpu_pod("trainer", "nope"))
    assert code == 2
    err = result["stderr"]
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (
        "template-0.yaml: spec.resourceClaims[0].resourceClaimTemplateName: "
        "ResourceClaimTemplate default/nope is not in the cluster"
    ) in err
