"""``wasmsched snapshot``: what it strips, and snapshot -> simulate == live scheduling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from apiserver import ApiServerDouble
from live_support import api_for, node, placements, pod, running, wait
from wasmsched.cli import app
from wasmsched.live.snapshot import clean

cli = CliRunner()


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble()
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (
            {"name": "a", "resourceVersion": "7", "managedFields": [{}], "generation": 2},
            {"name": "a"},
        ),
        (
            {
                "name": "a",
                "uid": "u",
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            },
            {"name": "a", "uid": "u"},
        ),
        (
            {
                "name": "a",
                "annotations": {
                    "keep": "me",
                    "kubectl.kubernetes.io/last-applied-configuration": "",
                },
            },
            {"name": "a", "annotations": {"keep": "me"}},
        ),
    ],
)
def test_clean_strips_server_bookkeeping(
    metadata: dict[str, Any], expected: dict[str, Any]
) -> None:
    out = clean({"metadata": metadata, "apiVersion": "v1", "kind": "Pod", "spec": {"x": 1}})
    assert out == {"apiVersion": "v1", "kind": "Pod", "metadata": expected, "spec": {"x": 1}}


def cluster(srv: ApiServerDouble) -> None:
    for i in range(4):
        n = node(f"node-{i}", cpu=str(2 + i), labels={"topology.kubernetes.io/zone": f"z{i % 2}"})
        n["metadata"]["managedFields"] = [{"manager": "kubelet", "operation": "Update"}]
        srv.create(n)
    srv.create(pod("db-0", cpu="1500m", nodeName="node-0"))
    finished = pod("job-0", cpu="3", nodeName="node-1")
    finished["status"] = {"phase": "Succeeded"}
    srv.create(finished)
    srv.create(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    )
    srv.create(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
        }
    )
    for i in range(8):
        p = pod(f"web-{i}", cpu=f"{250 * (1 + i % 3)}m")
        if i % 3 == 0:
            p["spec"]["priority"] = 1000
            p["spec"]["priorityClassName"] = "high"
        srv.create(p)


def test_snapshot_then_simulate_places_pods_as_the_live_scheduler(
    srv: ApiServerDouble, tmp_path: Path
) -> None:
    cluster(srv)
    kubeconfig = srv.kubeconfig(tmp_path / "kubeconfig")
    result = cli.invoke(app, ["snapshot", "--kubeconfig", str(kubeconfig)])
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.stdout))
    kinds = {d["kind"] for d in docs}
    assert {"Node", "Pod", "PriorityClass", "PodDisruptionBudget", "Namespace"} <= kinds
    assert all("managedFields" not in d["metadata"] for d in docs)
    assert all("resourceVersion" not in d["metadata"] for d in docs)
    assert "job-0" not in {d["metadata"]["name"] for d in docs if d["kind"] == "Pod"}
    snap = tmp_path / "cluster.yaml"
    snap.write_text(result.stdout)

    sim = cli.invoke(app, ["simulate", "--cluster", str(snap), "-o", "json", "--seed", "5"])
    assert sim.exit_code == 0, sim.output
    pods = json.loads(sim.stdout)["pods"]  # every pod; the pending ones are compared
    simulated = {p["name"]: p["node"] for p in pods if p["wasPending"]}
    assert len(simulated) == 8 and all(simulated.values())

    with running(srv, seed=5):
        wait(lambda: len(placements(srv)) == 10, what="all bound")
    live = placements(srv)
    assert {name: live[name] for name in simulated} == simulated


def test_snapshot_skips_kinds_the_server_refuses(srv: ApiServerDouble) -> None:
    from wasmsched.live import snapshot

    srv.create(node("node-0"))
    srv.faults.fail_next("GET", "poddisruptionbudgets", status=403)
    objects = snapshot(api_for(srv))
    assert "PodDisruptionBudget" not in {o["kind"] for o in objects}
    assert "Node" in {o["kind"] for o in objects}


def test_snapshot_of_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    server = ApiServerDouble()
    server.start()
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
    server.stop()
    result = cli.invoke(app, ["snapshot", "--kubeconfig", str(kubeconfig)])
    assert result.exit_code == 2
    assert result.stderr.startswith("wasmsched: error: http://127.0.0.1:")
    assert result.stderr.count("\n") == 1


def test_snapshot_records_the_server_version_first(srv: ApiServerDouble) -> None:
    from wasmsched.live import snapshot

    srv.create(node("node-0"))
    objects = snapshot(api_for(srv))
    assert objects[0] == {
        "apiVersion": "wasmsched.io/v1",
        "kind": "Snapshot",
        "metadata": {},
        "serverVersion": "v1.33.0-apiserver-double",
    }
    srv.faults.fail_next("GET", "^/version$", status=403)
    assert "Snapshot" not in {o["kind"] for o in snapshot(api_for(srv))}
