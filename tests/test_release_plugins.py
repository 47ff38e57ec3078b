"""The in-tree plugins' v1.34-v1.37 behaviour seen through a whole scheduler run.

The plugin tests (tests/plugins) check each plugin's answers; these check what a release's
change does to placements and messages once the framework and preemption act on them.
The 1.33 plugin list runs with each release's features, so the plugins alone differ.
"""

from __future__ import annotations

import dataclasses

from sched_support import node, pod
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.result import SimulationResult
from wasmsched.sim.simulation import Simulation

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def simulate(features: SchedulerFeatures, nodes: list[Node], pods: list[Pod]) -> SimulationResult:
    config = dataclasses.replace(default_config(V133), features=features)
    sim = Simulation(ClusterObjects(nodes=nodes, pods=pods, others=[]), config, in_tree_registry())
    try:
        return sim.run()
    finally:
        sim.close()


def outcome(result: SimulationResult, name: str) -> tuple[str, str | None, str]:
    r = next(r for r in result.pods if r.pod.name == name)
    return r.result, r.node, r.message


def test_preemption_skips_nodes_where_the_request_exceeds_allocatable() -> None:
    # fit.go (v1.37.2) fitsRequest: 3 cpu > 2 allocatable is Unresolvable, so
    # preemption.go: nodesWherePreemptionMightHelp leaves both nodes out and the
    # PostFilter message counts them as "not helpful"; 1.33 tried them (n1 still short of
    # cpu without its victim, n2 without victims). Both messages as the v1.33.4 and v1.37.2
    # references print them.
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    pods = [
        pod("low", cpu="1", node_name="n1", priority=0),
        pod("big", cpu="3", priority=100),
    ]
    old = outcome(simulate(V133, nodes, pods), "big")
    new = outcome(simulate(V137, nodes, pods), "big")
    assert old == (
        "Unschedulable",
        None,
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "1 Insufficient cpu, 1 No preemption victims found for incoming pod.",
    )
    assert new == (
        "Unschedulable",
        None,
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.",
    )


def _ports_pod(name: str, port: int, sidecar: bool, node_name: str = "") -> Pod:
    ports = [{"containerPort": port, "hostPort": port}]
    spec: dict[str, object] = {"containers": [{"name": "c", "image": "img"}]}
    if sidecar:
        spec["initContainers"] = [
            {"name": "s", "image": "img", "restartPolicy": "Always", "ports": ports}
        ]
    else:
        spec["containers"] = [{"name": "c", "image": "img", "ports": ports}]
    if node_name:
        spec["nodeName"] = node_name
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def test_sidecar_host_ports_count_since_1_34() -> None:
    # util.GetHostPorts (v1.37.2) counts sidecar ports for the incoming pod and the pods on
    # the node; v1.33.4 counted spec.containers alone. Outcomes as both references give them.
    nodes = [node("n1", cpu="2")]
    pods = [
        _ports_pod("side", 80, sidecar=True, node_name="n1"),
        _ports_pod("want80", 80, sidecar=False),
        _ports_pod("sidecar81", 81, sidecar=True),
        _ports_pod("want81", 81, sidecar=False),
    ]
    old = simulate(V133, nodes, pods)
    new = simulate(V137, nodes, pods)
    names = ("want80", "sidecar81", "want81")
    assert [outcome(old, n)[:2] for n in names] == [("Scheduled", "n1")] * 3
    refused = (
        "Unschedulable",
        None,
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
        "ports. preemption: 0/1 nodes are available: 1 No preemption victims found for "
        "incoming pod.",
    )
    assert [outcome(new, n) for n in names] == [refused, ("Scheduled", "n1", ""), refused]


def _manifest_pod(name: str, spec: dict[str, object]) -> Pod:
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def _container(**requests: str) -> dict[str, object]:
    return {"name": "c", "image": "img", "resources": {"requests": dict(requests)}}


def test_pod_level_resources_since_1_34() -> None:
    # PodLevelResources (on from 1.34): the pod-level requests replace the containers'
    # aggregate in Fit, the scores and the placed pods' sums (component-helpers
    # resource.PodRequests). Placements and messages as the v1.33.4 and v1.37.2 references
    # give them.
    nodes = [node("n1", cpu="4", memory="8Gi"), node("n2", cpu="4", memory="8Gi")]
    pods = [
        _manifest_pod(
            "placed",
            {
                "resources": {"requests": {"cpu": "3"}},
                "containers": [_container(cpu="100m", memory="1Gi")],
                "nodeName": "n1",
            },
        ),
        _manifest_pod("p1", {"containers": [_container(cpu="1500m", memory="1Gi")]}),
        _manifest_pod(
            "p2",
            {
                "resources": {"requests": {"cpu": "5", "memory": "1Gi"}},
                "containers": [_container(cpu="100m")],
            },
        ),
        _manifest_pod(
            "p3",
            {
                "resources": {"requests": {"memory": "6Gi"}},
                "containers": [_container(cpu="200m"), {"name": "d", "image": "img"}],
            },
        ),
        _manifest_pod("p4", {"containers": [_container(cpu="100m", memory="1500Mi")]}),
        _manifest_pod(
            "p5",
            {
                "resources": {"requests": {"cpu": "1"}},
                "containers": [{"name": "c", "image": "img"}],
            },
        ),
    ]
    names = ("p1", "p2", "p3", "p4", "p5")
    old = simulate(V133, nodes, pods)
    assert [outcome(old, n)[1] for n in names] == ["n2", "n1", "n1", "n1", "n2"]
    new = simulate(V137, nodes, pods)
    assert [outcome(new, n)[1] for n in names] == ["n2", None, "n1", "n2", "n2"]
    assert outcome(new, "p2")[2] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )
