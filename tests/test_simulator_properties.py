"""Properties of whole simulations over random small clusters (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator import Simulation

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
    ),
    min_size=1,
    max_size=14,
)


def build(nodes: list[Any], pods: list[Any]) -> ClusterObjects:
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
    for i, (cpu, mem, tolerates, prio, zone, where) in enumerate(pods):
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
        pod_objs.append(
            Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": spec})
        )
    return ClusterObjects(nodes=node_objs, pods=pod_objs, others=[])


def run(cluster: ClusterObjects, seed: int) -> tuple[Any, Simulation]:
    sim = Simulation(cluster, default_config(), REGISTRY, seed=seed)
    result = sim.run()
    sim.close()
    return result, sim


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=nodes_st, pods=pods_st, seed=st.integers(0, 2**16))
def test_no_pod_lost_no_node_overcommitted_and_deterministic(
    nodes: list[Any], pods: list[Any], seed: int
) -> None:
    cluster = build(nodes, pods)
    result, sim = run(cluster, seed)
    pending = [p for p in cluster.pods if not p.node_name]
    # every pending pod ends Scheduled, or Unschedulable with a reason; none is lost
    assert sorted(o.pod.name for o in result.outcomes) == sorted(p.name for p in pending)
    for o in result.outcomes:
        assert o.result in ("Scheduled", "Unschedulable"), (o.result, o.message)
        if o.result == "Scheduled":
            assert o.node is not None
        else:
            assert o.node is None and o.message.startswith("0/")
    # nothing stays assumed; nodes hold what the store says, never more than allocatable
    assert not sim.scheduler.cache.assumed
    store_pods = list(sim.store.pods.values())
    for info in sim.scheduler.cache.nodes.values():
        placed = [p for p in store_pods if p.node_name == info.name]
        assert len(info.pods) == len(placed)
        new = [o.pod.uid for o in result.outcomes if o.node == info.name]
        if not new:
            continue  # pre-existing pods may overcommit; the scheduler adds none to such nodes
        alloc = info.allocatable
        assert info.requested.milli_cpu <= alloc.milli_cpu
        assert info.requested.memory <= alloc.memory
        assert len(info.pods) <= alloc.allowed_pod_number
    # the same seed gives the same result
    again, _ = run(build(nodes, pods), seed)
    assert [(o.pod.name, o.result, o.node, o.message) for o in again.outcomes] == [
        (o.pod.name, o.result, o.node, o.message) for o in result.outcomes
    ]
