"""DefaultPreemption's dry run by sums (plugins/default_preemption.py: candidates_by_sums,
kept node by node across preemptions) against the node-by-node dry run, on random clusters
with preemption: the same seed must give every pod the same outcome, the same events and
the same victims, whether the sums path is taken or not. And the nominated nodes of the
columnar Filter, filtered on NodeInfo.with_pods (framework/nominated.py)."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.framework import node_search, nominated
from wasmsched.framework.node_info import NodeInfo
from wasmsched.plugins import default_preemption
from wasmsched.plugins.default_preemption import DefaultPreemption
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.simulation import Simulation

GPU = "example.com/gpu"
ZONES = ["z0", "z1", "z2"]
APPS = ["web", "api", "db"]


def _node(rng: random.Random, i: int) -> dict[str, Any]:
    alloc = {
        "cpu": rng.choice(["2", "4", "4", "3500m"]),
        "memory": rng.choice(["4Gi", "8Gi"]),
        "pods": str(rng.choice([4, 6, 110])),
    }
    if rng.random() < 0.2:
        alloc[GPU] = str(rng.randint(0, 2))
    if rng.random() < 0.2:
        alloc["ephemeral-storage"] = rng.choice(["1Gi", "10Gi"])
    taints = [{"key": "t", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.1 else []
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i}",
            "labels": {"kubernetes.io/hostname": f"node-{i}", "zone": rng.choice(ZONES)},
        },
        "spec": {"taints": taints, "unschedulable": rng.random() < 0.05},
        "status": {"capacity": alloc, "allocatable": alloc},
    }


def _pod(
    rng: random.Random, name: str, node: str | None, priority: int, special: bool
) -> dict[str, Any]:
    requests = {"cpu": rng.choice(["500m", "900m", "1", "2", "3"])}
    if rng.random() < 0.5:
        requests["memory"] = rng.choice(["100Mi", "1Gi", "3Gi"])
    if rng.random() < 0.1:
        requests[GPU] = "1"
    if rng.random() < 0.05:
        requests["ephemeral-storage"] = rng.choice(["500Mi", "5Gi"])
    container: dict[str, Any] = {"name": "c", "image": "i", "resources": {"requests": requests}}
    spec: dict[str, Any] = {"containers": [container], "priority": priority}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
    if rng.random() < 0.15:
        spec["nodeSelector"] = {"zone": rng.choice(ZONES)}
    if special and rng.random() < 0.2:
        # NodePorts or InterPodAffinity active: the dry run goes node by node.
        if rng.random() < 0.5:
            container["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        else:
            term = {
                "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                "topologyKey": "kubernetes.io/hostname",
            }
            spec["affinity"] = {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            }
    if node is not None:
        spec["nodeName"] = node
    status: dict[str, Any] = {}
    if node is not None and rng.random() < 0.8:
        status["startTime"] = f"2024-01-01T00:00:{rng.randint(0, 5):02d}Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": rng.choice(APPS)}},
        "spec": spec,
        "status": status,
    }


def _uniform_nodes(count: int) -> list[dict[str, Any]]:
    """``count`` nodes of 4 CPUs and 8Gi, node-0 to node-<count-1>."""
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i}"},
            "status": {"capacity": alloc, "allocatable": alloc},
        }
        for i in range(count)
    ]


def _millis(cpu: str) -> int:
    return int(cpu[:-1]) if cpu.endswith("m") else int(cpu) * 1000


def preemption_cluster(
    seed: int, n: int, pdbs: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``n`` nodes mostly full of pods of priorities 0 to 10, pending pods of higher priorities that must preempt (a few with host ports or
    required anti-affinity), lower ones pending beside them while they are nominated, and
    PodDisruptionBudgets over the apps when ``pdbs``."""
    rng = random.Random(seed)
    node_docs = [_node(rng, i) for i in range(n)]
    bound = []
    for i, doc in enumerate(node_docs):
        # Filled to three quarters of its CPU at least (five pods at most).
        room = _millis(doc["status"]["allocatable"]["cpu"])
        used = count = 0
        while used * 4 < room * 3 and count < 5:
            count += 1
            pod = _pod(rng, f"low-{len(bound)}", f"node-{i}", rng.choice([0, 5, 10]), False)
            used += _millis(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"])
            bound.append(pod)
    pending = [
        _pod(rng, f"pend-{k}", None, rng.choice([0, 7, 100, 100, 1000]), True)
        for k in range(max(60, n // 10))
    ]
    others = []
    if pdbs:
        others = [
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": app}}},
                "status": {"disruptionsAllowed": rng.randint(0, 3)},
            }
            for app in APPS[:2]
        ]
    return node_docs, bound + pending, others


def simulate(
    docs: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]], seed: int
) -> tuple[list[Any], list[Any], list[Any]]:
    node_docs, pod_docs, others = docs
    cluster = ClusterObjects(
        nodes=[Node(d) for d in node_docs], pods=[Pod(d) for d in pod_docs], others=others
    )
    sim = Simulation(cluster, default_config(), in_tree_registry(), seed=seed)
    result = sim.run()
    sim.close()
    outcomes = [(o.pod.name, o.result, o.node, o.message) for o in result.outcomes]
    return outcomes, [repr(e) for e in result.events], [repr(p) for p in result.preemptions]


def both_ways(
    docs: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]], seed: int
) -> tuple[Any, Any, int]:
    """The simulation with the dry run by sums, how many dry runs took it, and the
    simulation with it off."""
    taken = 0
    original = DefaultPreemption.candidates_by_sums

    def counting(self: DefaultPreemption, *args: Any) -> Any:
        nonlocal taken
        found = original(self, *args)
        taken += bool(found)
        return found

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(DefaultPreemption, "candidates_by_sums", counting)
        fast = simulate(docs, seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(DefaultPreemption, "candidates_by_sums", None)
        slow = simulate(docs, seed)
    return fast, slow, taken


@pytest.mark.parametrize(("seed", "n", "pdbs"), [(1, 30, False), (2, 30, True), (3, 60, True)])
def test_dry_run_by_sums_matches_node_by_node_on_small_clusters(
    seed: int, n: int, pdbs: bool
) -> None:
    fast, slow, taken = both_ways(preemption_cluster(seed, n, pdbs), seed)
    assert fast == slow
    assert taken > 0
    assert fast[2]  # some pods were preempted


@pytest.mark.parametrize("n", [500, 5000])
def test_dry_run_by_sums_matches_node_by_node_at_scheduler_perf_sizes(n: int) -> None:
    docs = preemption_cluster(n, n, True)
    node_docs, pod_docs, others = docs
    # Fewer pending pods at 5000 nodes: the node-by-node dry run visits hundreds of
    # nodes per preemption.
    pending = [d for d in pod_docs if "nodeName" not in d["spec"]][:60]
    docs = (node_docs, [d for d in pod_docs if "nodeName" in d["spec"]] + pending, others)
    fast, slow, taken = both_ways(docs, 0)
    assert fast == slow
    assert taken > 0


def test_outcomes_are_kept_until_the_node_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The second identical preemption recomputes only the node the first one touched
    # (its victims evicted, the preemptor nominated there).
    computed: list[str] = []
    original = default_preemption._victims_by_sums

    def spy(bound: Any, node_info: NodeInfo, *args: Any) -> Any:
        computed.append(node_info.name)
        return original(bound, node_info, *args)

    monkeypatch.setattr(default_preemption, "_victims_by_sums", spy)
    node_docs = _uniform_nodes(20)
    rng = random.Random(0)
    low = []
    for i in range(20):
        for k in range(4):
            doc = _pod(rng, f"low-{i}-{k}", f"node-{i}", 0, False)
            doc["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "900m"}}
            low.append(doc)
    high = []
    for k in range(2):
        doc = _pod(rng, f"high-{k}", None, 10, False)
        doc["spec"] = {
            "priority": 10,
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "3"}}}],
        }
        high.append(doc)
    fast, slow, _ = both_ways((node_docs, low + high, []), 0)
    assert fast == slow
    # The first preemption computes every node; the second only the node whose pods the
    # first one evicted, where it is nominated.
    placed = {name: node for name, _, node, _ in fast[0]}
    assert sorted(computed[:20]) == sorted(f"node-{i}" for i in range(20))
    assert computed[20:] == [placed["high-0"]]


# --- nominated nodes in the columnar Filter (framework/nominated.py: nominated_filter) ------


def test_with_pods_sums_as_clone_then_add_pod_info() -> None:
    from wasmsched.framework.node_info import PodInfo

    rng = random.Random(5)
    node = Node(_node(rng, 0))
    info = NodeInfo(node)
    for k in range(3):
        info.add_pod(Pod(_pod(rng, f"on-{k}", "node-0", 0, False)))
    added = [PodInfo(Pod(_pod(rng, f"nom-{k}", None, 100, False))) for k in range(2)]
    full = info.clone()
    for pi in added:
        full.add_pod_info(pi)
    light = info.with_pods(added)
    assert [p.pod.name for p in light.pods] == [p.pod.name for p in full.pods]
    assert light.requested == full.requested
    assert (light.non_zero_cpu, light.non_zero_memory) == (full.non_zero_cpu, full.non_zero_memory)
    assert light.allocatable is full.allocatable and light.node is full.node
    # The node itself is left as it was.
    assert len(info.pods) == 3 and info.requested != light.requested


def _full_nominated_filter(fwk: Any, state: Any, pod: Any) -> Any:
    return functools.partial(nominated.run_filter_plugins_with_pods, fwk, state, pod)


def test_nominated_nodes_are_filtered_without_clones(monkeypatch: pytest.MonkeyPatch) -> None:
    # PreemptionBasic's shape: while the preemptors are nominated, each cycle filters
    # their nodes with them added, on NodeInfo.with_pods, and the dry run goes by sums:
    # no NodeInfo is cloned, and every pod lands where the node-by-node paths put it.
    clones = 0
    clone = NodeInfo.clone

    def counting(self: NodeInfo) -> NodeInfo:
        nonlocal clones
        clones += 1
        return clone(self)

    node_docs = _uniform_nodes(150)

    def pod(name: str, cpu: str, priority: int, node: str | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "priority": priority,
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
        }
        if node is not None:
            spec["nodeName"] = node
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}

    low = [pod(f"low-{i}-{k}", "900m", 0, f"node-{i}") for i in range(150) for k in range(4)]
    high = [pod(f"high-{k}", "3", 10) for k in range(30)]
    docs = (node_docs, low + high, [])
    with monkeypatch.context() as mp:
        mp.setattr(NodeInfo, "clone", counting)
        fast = simulate(docs, 0)
    assert clones == 0
    assert sum(o[1] == "Scheduled" for o in fast[0]) == 30
    with monkeypatch.context() as mp:
        mp.setattr(DefaultPreemption, "candidates_by_sums", None)
        # The full RunFilterPluginsWithNominatedPods: cloned node and state, AddPod.
        mp.setattr(node_search, "nominated_filter", _full_nominated_filter)
        mp.setattr(NodeInfo, "clone", counting)
        assert simulate(docs, 0) == fast
    assert clones > 0
