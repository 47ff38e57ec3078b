"""Properties of whole simulations over random small clusters (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.simulation import Simulation

REGISTRY = in_tree_registry()

nodes_st = st.lists(
    st.tuples(
        st.integers(1, 8),  # cpu cores
        st.integers(1, 16),  # memory GiB
        st.integers(1, 6),  # max pods
        st.booleans(),  # tainted
        st.booleans(),  # unschedulable
        st.sampled_from(["a", "b"]),  # zone
    ),
    min_size=1,
    max_size=6,
)
pods_st = st.lists(
    st.tuples(
        st.integers(0, 3000),  # milli cpu
        st.integers(0, 4096),  # memory MiB
        st.booleans(),  # tolerates the taint
        st.integers(0, 3),  # priority
        st.sampled_from([None, "a", "b"]),  # zone selector
        st.integers(0, 6),  # index of a node it already runs on (>= nodes: pending)
        st.sampled_from(["", "Pending", "Running", "Succeeded", "Failed"]),  # status.phase
        st.booleans(),  # gated (spec.schedulingGates)
    ),
    min_size=1,
    max_size=14,
)


def build(nodes: list[Any], pods: list[Any], gates: bool = True) -> ClusterObjects:
    node_objs = []
    for i, (cpu, mem, max_pods, tainted, unschedulable, zone) in enumerate(nodes):
        spec: dict[str, Any] = {"unschedulable": unschedulable}
        if tainted:
            spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        node_objs.append(
            Node(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": f"n{i}",
                        "labels": {
                            "topology.kubernetes.io/zone": zone,
                            "kubernetes.io/hostname": f"n{i}",
                        },
                    },
                    "spec": spec,
                    "status": {
                        "allocatable": {
                            "cpu": str(cpu),
                            "memory": f"{mem}Gi",
                            "pods": str(max_pods),
                        }
                    },
                }
            )
        )
    pod_objs = []
    for i, (cpu, mem, tolerates, prio, zone, where, phase, gated) in enumerate(pods):
        if gated and not gates and where >= len(nodes):
            continue
        spec = {
            "priority": prio,
            "containers": [
                {
                    "name": "c",
                    "image": "img",
                    "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}},
                }
            ],
        }
        if tolerates:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        if zone:
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": zone}
        if where < len(nodes):
            spec["nodeName"] = f"n{where}"
        elif gated:
            spec["schedulingGates"] = [{"name": "example.com/wait"}]
        manifest: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}"},
            "spec": spec,
        }
        if phase:
            manifest["status"] = {"phase": phase}
        pod_objs.append(Pod(manifest))
    return ClusterObjects(nodes=node_objs, pods=pod_objs, others=[])


def run(cluster: ClusterObjects, seed: int) -> tuple[Any, Simulation]:
    sim = Simulation(cluster, default_config(), REGISTRY, seed=seed)
    result = sim.run()
    sim.close()
    return result, sim


TERMINATED = ("Succeeded", "Failed")
PENDING_RESULTS = ("Scheduled", "Unschedulable", "Preempted")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=nodes_st, pods=pods_st, seed=st.integers(0, 2**16))
def test_every_pod_reported_once_no_node_overcommitted_settles_and_deterministic(
    nodes: list[Any], pods: list[Any], seed: int
) -> None:
    cluster = build(nodes, pods)
    result, sim = run(cluster, seed)
    # every pod of the cluster appears exactly once, in input order, with a result
    assert [r.pod.name for r in result.pods] == [p.name for p in cluster.pods]
    for pod, report in zip(cluster.pods, result.pods, strict=True):
        if pod.is_terminal:
            assert (report.result, report.node) == (pod.phase, pod.node_name or None)
        elif pod.node_name:
            assert report.result in ("Running", "Preempted") and report.node == pod.node_name
        elif pod.scheduling_gates:
            assert report.result == "Unschedulable" and report.node is None
            assert report.message == "waiting for scheduling gates: [example.com/wait]"
        else:
            assert report.was_pending and report.result in PENDING_RESULTS, report
            if report.result == "Unschedulable":
                assert report.node is None and report.message.startswith("0/")
            else:
                assert report.node is not None
    # nothing stays assumed; the cache holds exactly the live bound pods
    assert not sim.scheduler.cache.assumed
    bound = [r for r in result.pods if r.result in ("Running", "Scheduled")]
    for info in sim.scheduler.cache.nodes.values():
        here = [r for r in bound if r.node == info.name]
        assert sorted(p.pod.name for p in info.pods) == sorted(r.pod.name for r in here)
        if not any(r.was_pending for r in here):
            continue  # pre-existing pods may overcommit; the scheduler adds none to such nodes
        # over-commit counted from the reports, terminated pods holding nothing
        alloc = info.allocatable
        assert sum(r.pod.requests.milli_cpu for r in here) <= alloc.milli_cpu
        assert sum(r.pod.requests.memory for r in here) <= alloc.memory
        assert len(here) <= alloc.allowed_pod_number
    # settling: each pending pod is tried once, then again only after a cluster change
    changes = 1 + sum(1 for r in result.pods if r.result in ("Scheduled", "Preempted"))
    pending = sum(1 for r in result.pods if r.was_pending)
    assert not result.stopped_early
    assert result.cycles <= pending * changes
    # gated pods cost no cycle and change no placement
    ungated, _ = run(build(nodes, pods, gates=False), seed)
    assert ungated.cycles == result.cycles
    assert {r.pod.name: (r.result, r.node) for r in ungated.pods} == {
        r.pod.name: (r.result, r.node) for r in result.pods if not r.pod.scheduling_gates
    }
    # the same seed gives the same result
    again, _ = run(build(nodes, pods), seed)
    assert [(r.pod.name, r.result, r.node, r.message) for r in again.pods] == [
        (r.pod.name, r.result, r.node, r.message) for r in result.pods
    ]


workloads_st = st.lists(
    st.tuples(
        st.sampled_from(["Deployment", "StatefulSet", "DaemonSet", "Job"]),
        st.integers(0, 4),  # replicas / parallelism
        st.integers(0, 1500),  # milli cpu of the template
        st.sampled_from(["OrderedReady", "Parallel"]),  # StatefulSet pod management
    ),
    max_size=3,
)


def workload(i: int, kind: str, count: int, cpu: int, policy: str) -> dict[str, Any]:
    name = f"w{i}"
    template = {
        "metadata": {"labels": {"app": name}},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": f"{cpu}m"}}}
            ],
            **({"restartPolicy": "Never"} if kind == "Job" else {}),
        },
    }
    spec: dict[str, Any] = {"template": template}
    if kind == "Job":
        spec["parallelism"] = count
    else:
        spec["selector"] = {"matchLabels": {"app": name}}
    if kind in ("Deployment", "StatefulSet"):
        spec["replicas"] = count
    if kind == "StatefulSet":
        spec["serviceName"] = name
        spec["podManagementPolicy"] = policy
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=nodes_st, pods=pods_st, workloads=workloads_st, seed=st.integers(0, 2**16))
def test_workload_controllers_with_phases_and_gates(
    nodes: list[Any], pods: list[Any], workloads: list[Any], seed: int
) -> None:
    base = build(nodes, pods)
    others = [workload(i, *w) for i, w in enumerate(workloads)]
    cluster = ClusterObjects(nodes=base.nodes, pods=base.pods, others=others)
    result, sim = run(cluster, seed)
    keys = [r.pod.key for r in result.pods]
    assert len(keys) == len(set(keys))  # every pod once
    assert keys[: len(base.pods)] == [p.key for p in base.pods]
    assert not result.stopped_early and not sim.scheduler.cache.assumed
    made = result.pods[len(base.pods) :]
    for i, (kind, count, _cpu, policy) in enumerate(workloads):
        mine = [r for r in made if r.pod.labels.get("app") == f"w{i}"]
        if kind in ("Deployment", "Job"):
            assert len(mine) == count
        elif kind == "DaemonSet":
            assert len(mine) <= len(base.nodes)
        else:
            ordinals = sorted(int(r.pod.name.rsplit("-", 1)[1]) for r in mine)
            if policy == "Parallel":
                assert ordinals == list(range(count))
            else:  # OrderedReady: the next pod only once the one before it runs
                assert ordinals == list(range(len(ordinals))) and len(ordinals) <= count
                placed = [r for r in sorted(mine, key=lambda r: r.pod.name) if r.node]
                assert len(placed) >= len(ordinals) - 1
        for r in mine:
            assert r.result in PENDING_RESULTS
    # no node over-committed by what this run placed
    for info in sim.scheduler.cache.nodes.values():
        here = [
            r for r in result.pods if r.node == info.name and r.result in ("Running", "Scheduled")
        ]
        if any(r.was_pending for r in here):
            assert sum(r.pod.requests.milli_cpu for r in here) <= info.allocatable.milli_cpu
    again, _ = run(cluster, seed)
    assert [(r.pod.key, r.result, r.node) for r in again.pods] == [
        (r.pod.key, r.result, r.node) for r in result.pods
    ]
