"""deploy/: the ConfigMap's configuration loads, and RBAC grants exactly what is used."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from apiserver import ApiServerDouble
from live_support import (
    api_for,
    claiming_pod,
    config,
    device_class,
    dra_config,
    make_runner,
    node,
    placements,
    pod,
    resource_claim,
    resource_slice,
    wait,
)
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import load_config
from wasmsched.live import LeaseConfig, snapshot
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.simulation import Simulation

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


def test_configmap_config_loads_and_runs_its_wasm_plugin(tmp_path: Path) -> None:
    (cm,) = documents("configmap.yaml")
    for key, text in cm["data"].items():
        (tmp_path / key).write_text(text)
    registry = default_registry()
    cfg = load_config(tmp_path / "config.yaml", registry)
    assert [p.scheduler_name for p in cfg.profiles] == ["wasmsched"]
    assert cfg.profiles[0].plugin_kinds.get("NodeNumber") == "wasm"
    nodes = [Node(node(f"node-{i}")) for i in range(3)]
    pods = [Pod(pod("web-2", scheduler="wasmsched"))]
    sim = Simulation(ClusterObjects(nodes=nodes, pods=pods), cfg, registry)
    try:
        (outcome,) = sim.run().outcomes
    finally:
        sim.close()
    assert outcome.node == "node-2"  # NodeNumber: same last character


def test_deployment_runs_the_second_scheduler_with_its_config() -> None:
    (deployment, *_) = documents("deployment.yaml")
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["args"][:2] == ["run", "--config=/etc/wasmsched/config.yaml"]
    assert spec["serviceAccountName"] == "wasmsched"
    assert spec["volumes"][0]["configMap"]["name"] == "wasmsched-config"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"


Rule = tuple[str, str, str]  # (apiGroup, resource[/subresource], verb)


def granted() -> set[Rule]:
    out: set[Rule] = set()
    for doc in documents("rbac.yaml"):
        if doc["kind"] not in ("ClusterRole", "Role"):
            continue
        for rule in doc["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        out.add((group, resource, verb))
    return out


def used(method: str, target: str) -> Rule:
    """The RBAC (group, resource, verb) of one request, as the authorizer computes it."""
    url = urlsplit(target)
    parts = url.path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = parts[1], parts[3:]
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    resource = rest[0]
    named = len(rest) > 1
    if len(rest) > 2:
        resource = f"{resource}/{rest[2]}"
    watch = parse_qs(url.query).get("watch") == ["true"]
    verb = {
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete",
    }.get(method, "watch" if watch else "get" if named else "list")
    return (group, resource, verb)


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble()
    server.start()
    yield server
    server.stop()


def test_rbac_grants_exactly_the_verbs_used(srv: ApiServerDouble) -> None:
    srv.create(node("node-0", cpu="2"))
    low = pod("low-0", cpu="2", nodeName="node-0")
    srv.create(low)
    high = pod("high-0", cpu="2")
    high["spec"]["priority"] = 100
    srv.create(high)
    srv.create(pod("huge-0", cpu="64"))
    lease = LeaseConfig(lease_duration=1.5, renew_deadline=1.0, retry_period=0.1)
    cfg = config(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n"
    )
    r = make_runner(srv, cfg, leader_elect=True, lease=lease).start()
    try:
        wait(lambda: placements(srv).get("high-0") == "node-0", what="preemption and binding")
        time.sleep(0.3)
    finally:
        r.stop()
    # DynamicResources' claim writes: a conflict (the claim read again), a failed binding
    # (Unreserve's patch), then the allocation; for a pod's extended resource backed by
    # the class, the special claim created, deleted after a failed binding, created again.
    gpus = device_class()
    gpus["spec"]["extendedResourceName"] = "example.com/gpu"
    srv.create(gpus)
    srv.create(resource_slice("node-0", devices=2))
    srv.create(resource_claim("claim-0"))
    srv.create(claiming_pod("train-0", claim="claim-0", cpu="0"))
    extended = pod("train-x", cpu="0")
    resources = extended["spec"]["containers"][0]["resources"]
    resources["requests"]["example.com/gpu"] = "1"
    resources["limits"] = {"example.com/gpu": "1"}
    srv.create(extended)
    srv.faults.fail_next("PUT", r"/resourceclaims/claim-0/status$", status=409)
    srv.faults.fail_next("POST", r"/pods/train-0/binding$", status=500)
    srv.faults.fail_next("POST", r"/pods/train-x/binding$", status=500)
    dra = make_runner(srv, dra_config()).start()
    try:
        wait(
            lambda: placements(srv).get("train-0") == placements(srv).get("train-x") == "node-0",
            what="the claims' pods bound",
        )
    finally:
        dra.stop()
    snapshot(api_for(srv))  # `wasmsched snapshot` as this account
    # /version is a non-resource URL every account may get (system:public-info-viewer).
    rules = {used(m, t) for m, t, _ in srv.requests if urlsplit(t).path != "/version"}
    assert rules <= granted()
    assert granted() - rules == {
        # Core v1 events are the fallback for servers without events.k8s.io.
        ("", "events", "create"),
        # Synthetic: kube-apiserver 1.36+ checks them on the claim's status writes.
        ("resource.k8s.io", "resourceclaims/binding", "update"),
        ("resource.k8s.io", "resourceclaims/binding", "patch"),
    }
