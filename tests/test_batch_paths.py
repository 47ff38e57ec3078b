"""The plugins' vectorized forms (framework/node_search: each plugin in its best form)
against the per-node path on random clusters: the same seed must give every pod the same node, the same
result and the same message, and explain mode must record the same scores."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sched_support import assert_columns_equal
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.config.loader import parse_config
from wasmsched.config.models import SchedulerConfig
from wasmsched.framework.runtime import Framework
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.host_selection import select_host_index
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.simulation import Simulation

IMAGES = ["registry.k8s.io/pause:3.9", "nginx:1.25", "busybox:1.36"]
TAINT_KEYS = ["a", "b"]


@st.composite
def nodes(draw: st.DrawFn, i: int) -> dict[str, Any]:
    cpu = draw(st.sampled_from(["0", "1", "2", "3500m", "4"]))
    memory = draw(st.sampled_from(["0", "1Gi", "3Gi", "8Gi"]))
    taints = [
        {
            "key": k,
            "value": "x",
            "effect": draw(st.sampled_from(["PreferNoSchedule", "NoSchedule"])),
        }
        for k in TAINT_KEYS
        if draw(st.booleans())
    ]
    images = [
        {"names": [img], "sizeBytes": draw(st.integers(0, 2_000_000_000))}
        for img in IMAGES
        if draw(st.booleans())
    ]
    resources = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i}",
            "labels": {"kubernetes.io/hostname": f"node-{i}", "zone": f"z{i % 3}"},
        },
        "spec": {"taints": taints, "unschedulable": draw(st.integers(0, 9)) == 0},
        "status": {"capacity": resources, "allocatable": resources, "images": images},
    }


@st.composite
def pods(draw: st.DrawFn, i: int) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if draw(st.booleans()):
        requests["cpu"] = draw(st.sampled_from(["50m", "100m", "500m", "1"]))
    if draw(st.booleans()):
        requests["memory"] = draw(st.sampled_from(["100Mi", "500Mi", "1Gi"]))
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": draw(st.sampled_from(IMAGES)),
                "resources": {"requests": requests},
            }
        ],
        "tolerations": [
            {"key": k, "operator": "Exists"} for k in TAINT_KEYS if draw(st.booleans())
        ],
    }
    if draw(st.integers(0, 4)) == 0:
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": draw(st.integers(1, 100)),
                        "preference": {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["z1"]}
                            ]
                        },
                    }
                ]
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": "default", "labels": {"app": "x"}},
        "spec": spec,
    }


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 25))
    return [draw(nodes(i)) for i in range(n)], [draw(pods(i)) for i in range(m)]


@pytest.fixture
def per_node() -> Iterator[None]:
    Framework.use_batch = False
    try:
        yield
    finally:
        Framework.use_batch = True


def record(c: Any) -> tuple[Any, ...]:
    """An explain record's Filter order, per-node Filter verdicts and Score rows."""
    rows = [
        (node, plugin, None if st is None else (st.code, tuple(st.reasons)))
        for node, plugin, st in c.filter_rows
    ]
    return (c.filter_order, rows, c.score_rows)


def run(
    node_docs: list[dict[str, Any]],
    pod_docs: list[dict[str, Any]],
    batch: bool,
    seed: int,
    explain: bool = False,
) -> list[tuple[str, str, str | None, str, list[Any]]]:
    cluster = ClusterObjects(
        nodes=[Node(d) for d in node_docs], pods=[Pod(d) for d in pod_docs], others=[]
    )
    Framework.use_batch = batch
    try:
        sim = Simulation(cluster, default_config(), in_tree_registry(), seed=seed, explain=explain)
        result = sim.run()
        sim.close()
    finally:
        Framework.use_batch = True
    # Explain records: every plugin's raw and normalized score of every node, per attempt.
    return [
        (o.pod.name, o.result, o.node, o.message, [record(c) for c in o.cycles])
        for o in result.outcomes
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 3), st.booleans())
def test_batch_and_per_node_paths_place_every_pod_alike(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]]], seed: int, explain: bool
) -> None:
    node_docs, pod_docs = cluster
    batch = run(node_docs, pod_docs, True, seed, explain)
    assert batch == run(node_docs, pod_docs, False, seed, explain)


def test_batch_path_is_taken_and_per_node_path_can_be_forced(per_node: None) -> None:
    # The switch is real: with it off, no plugin's columnar form is asked; with it on, the
    # columnar Filter and Score forms are.
    from wasmsched.plugins.node_resources_fit import NodeResourcesFit as Fit

    called: list[str] = []

    def spy(name: str) -> Any:
        original = getattr(Fit, name)

        def wrapper(self: Fit, *args: Any) -> Any:
            called.append(name)
            return original(self, *args)

        return wrapper

    node_docs = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"}},
        }
        for i in range(3)
    ]
    pod_docs = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
    ]
    with pytest.MonkeyPatch.context() as mp:
        for name in ("score_columns", "filter_columns"):
            mp.setattr(Fit, name, spy(name))
        run(node_docs, pod_docs, False, 0)
        assert called == []
        run(node_docs, pod_docs, True, 0)
        assert sorted(set(called)) == ["filter_columns", "score_columns"]


# --- the columnar path (framework/columns) against the per-node path, larger clusters ------

GPU = "example.com/gpu"
ZONES = ["z0", "z1", "z2"]
DISKS = ["ssd", "hdd"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _random_node(rng: random.Random, i: int) -> dict[str, Any]:
    alloc = {
        "cpu": rng.choice(["0", "1", "2", "4", "3500m"]),
        "memory": rng.choice(["0", "1Gi", "4Gi", "16Gi"]),
        "pods": str(rng.choice([2, 5, 110])),
    }
    if rng.random() < 0.3:
        alloc[GPU] = str(rng.randint(0, 4))
    if rng.random() < 0.3:
        alloc["ephemeral-storage"] = rng.choice(["0", "1Gi", "10Gi"])
    taints = [
        {"key": k, "value": "x", "effect": rng.choice(EFFECTS)}
        for k in TAINT_KEYS
        if rng.random() < 0.15
    ]
    images = [
        {"names": [img], "sizeBytes": rng.randint(0, 1_500_000_000)}
        for img in IMAGES
        if rng.random() < 0.4
    ]
    labels = {"kubernetes.io/hostname": f"node-{i}", "zone": rng.choice(ZONES)}
    if rng.random() < 0.5:
        labels["disk"] = rng.choice(DISKS)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-{i}", "labels": labels},
        "spec": {"taints": taints, "unschedulable": rng.random() < 0.05},
        "status": {"capacity": alloc, "allocatable": alloc, "images": images},
    }


def _random_pod(rng: random.Random, i: int, node: str | None) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if rng.random() < 0.7:
        requests["cpu"] = rng.choice(["50m", "100m", "500m", "1", "3"])
    if rng.random() < 0.7:
        requests["memory"] = rng.choice(["100Mi", "500Mi", "2Gi"])
    if rng.random() < 0.15:
        requests[GPU] = str(rng.randint(1, 2))
    if rng.random() < 0.1:
        requests["ephemeral-storage"] = rng.choice(["100Mi", "5Gi"])
    container: dict[str, Any] = {
        "name": "c",
        "image": rng.choice(IMAGES),
        "resources": {"requests": requests, "limits": dict(requests)} if requests else {},
    }
    if rng.random() < 0.15:
        container["ports"] = [{"containerPort": 80, "hostPort": rng.choice([8080, 9090])}]
    spec: dict[str, Any] = {"containers": [container]}
    if rng.random() < 0.2:
        spec["initContainers"] = [{"name": "init", "image": rng.choice(IMAGES)}]
    spec["tolerations"] = [
        {"key": k, "operator": "Exists"} for k in TAINT_KEYS if rng.random() < 0.4
    ]
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"zone": rng.choice(ZONES)}
    affinity: dict[str, Any] = {}
    if rng.random() < 0.2:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {
                            "key": "disk",
                            "operator": rng.choice(["In", "NotIn", "Exists"]),
                            **(
                                {"values": [rng.choice(DISKS)]}
                                if rng.random() < 0.9
                                else {"values": []}
                            ),
                        }
                    ]
                }
            ]
        }
        term = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        if term[0]["matchExpressions"][0]["operator"] == "Exists":
            term[0]["matchExpressions"][0].pop("values")
    if rng.random() < 0.3:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": rng.randint(1, 100),
                "preference": {
                    "matchExpressions": [{"key": "zone", "operator": "In", "values": [z]}]
                },
            }
            for z in rng.sample(ZONES, rng.randint(1, 2))
        ]
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": "default"},
        "spec": spec,
    }


def random_cluster(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """More than 100 nodes (so that the Filter search samples and stops early), some pods
    already bound (host ports and requests in use), and pending pods touching every plugin
    the columnar forms cover."""
    rng = random.Random(seed)
    n = rng.randint(101, 150)
    node_docs = [_random_node(rng, i) for i in range(n)]
    bound = [_random_pod(rng, i, f"node-{rng.randrange(n)}") for i in range(rng.randint(0, 40))]
    pending = [_random_pod(rng, len(bound) + i, None) for i in range(rng.randint(20, 60))]
    return node_docs, bound + pending


APPS = ["web", "api", "db"]


def _affine(rng: random.Random, pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` with an app label and, for some, inter-pod (anti-)affinity terms on hostname
    or zone, required or preferred."""
    pod["metadata"]["labels"] = {"app": rng.choice(APPS)}
    terms: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.25:
            term = {
                "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                "topologyKey": rng.choice(["kubernetes.io/hostname", "zone"]),
            }
            if rng.random() < 0.3:
                terms[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            else:
                terms[kind] = {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": rng.randint(1, 100), "podAffinityTerm": term}
                    ]
                }
    if terms:
        pod["spec"].setdefault("affinity", {}).update(terms)
    return pod


def large_cluster(seed: int, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``n`` random nodes, most running a DaemonSet-like pod with a host port, bound pods
    with app labels and inter-pod (anti-)affinity, and pending pods of every kind, a few of
    them of high priority on a cluster left full enough that they preempt (their
    nominations then count on their nodes while the others are scheduled)."""
    rng = random.Random(seed)
    node_docs = [_random_node(rng, i) for i in range(n)]
    bound: list[dict[str, Any]] = []
    for i in range(n):
        if rng.random() < 0.8:
            daemon = _random_pod(rng, len(bound), f"node-{i}")
            container = daemon["spec"]["containers"][0]
            container["ports"] = [{"containerPort": 1, "hostPort": 9100}]
            container["resources"] = {"requests": {"cpu": "1"}}
            bound.append(daemon)
    for _ in range(n // 2):
        bound.append(_affine(rng, _random_pod(rng, len(bound), f"node-{rng.randrange(n)}")))
    pending = [_affine(rng, _random_pod(rng, len(bound) + i, None)) for i in range(40)]
    for pod in pending[1::5]:
        # Fits no node (at most 4 CPUs, most of them running a 1-CPU pod): preempts.
        pod["spec"] = {
            "containers": [
                {"name": "c", "image": IMAGES[0], "resources": {"requests": {"cpu": "4"}}}
            ],
            "priority": 1000,
        }
    return node_docs, bound + pending


@pytest.mark.parametrize("n", [500, 5000])
def test_columnar_and_per_node_paths_agree_on_large_clusters(n: int) -> None:
    # As below, at the scheduler_perf sizes: host ports on most nodes, taints, images,
    # inter-pod (anti-)affinity and preemption with nominated pods.
    node_docs, pod_docs = large_cluster(n, n)
    config = default_config()
    columnar = run_with(node_docs, pod_docs, True, 0, config)
    assert columnar == run_with(node_docs, pod_docs, False, 0, config)


STRATEGIES = [
    None,
    {
        "type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 2}, {"name": GPU, "weight": 3}],
    },
    {
        "type": "RequestedToCapacityRatio",
        "resources": [
            {"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 1},
            {"name": "ephemeral-storage", "weight": 2},
        ],
        "requestedToCapacityRatio": {
            "shape": [
                {"utilization": 0, "score": 10},
                {"utilization": 60, "score": 3},
                {"utilization": 100, "score": 0},
            ]
        },
    },
    {
        "type": "LeastAllocated",
        "resources": [{"name": "memory", "weight": 3}, {"name": GPU, "weight": 1}],
    },
]


def strategy_config(index: int) -> SchedulerConfig:
    """The default profile, with NodeResourcesFit's strategy ``STRATEGIES[index]`` and
    BalancedAllocation over three resources for the non-default ones."""
    strategy = STRATEGIES[index]
    if strategy is None:
        return default_config()
    plugin_config = [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}},
        {
            "name": "NodeResourcesBalancedAllocation",
            "args": {
                "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU, "weight": 1}]
            },
        },
    ]
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"pluginConfig": plugin_config}],
    }
    return parse_config(data, "<test>", Path("."), default_registry())


def run_with(
    node_docs: list[dict[str, Any]],
    pod_docs: list[dict[str, Any]],
    batch: bool,
    seed: int,
    config: SchedulerConfig,
) -> tuple[list[tuple[str, str, str | None, str]], float]:
    cluster = ClusterObjects(
        nodes=[Node(d) for d in node_docs], pods=[Pod(d) for d in pod_docs], others=[]
    )
    Framework.use_batch = batch
    try:
        sim = Simulation(cluster, config, in_tree_registry(), seed=seed)
        result = sim.run()
        assert sim.scheduler is not None
        after = sim.scheduler.rng.random()
        sim.close()
    finally:
        Framework.use_batch = True
    return [(o.pod.name, o.result, o.node, o.message) for o in result.outcomes], after


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(0, len(STRATEGIES) - 1), st.integers(0, 3))
def test_columnar_and_per_node_paths_agree_on_sampled_clusters(
    cluster_seed: int, strategy: int, seed: int
) -> None:
    # Every pod gets the same node and the same message, and the tie-break generator ends in
    # the same state: the columnar search, scores and select_host drew exactly alike.
    node_docs, pod_docs = random_cluster(cluster_seed)
    config = strategy_config(strategy)
    columnar = run_with(node_docs, pod_docs, True, seed, config)
    assert columnar == run_with(node_docs, pod_docs, False, seed, config)


def select_host(totals: list[tuple[str, int]], rng: random.Random) -> str:
    """selectHost as kube-scheduler writes it (pkg/scheduler/schedule_one.go): the highest
    total; ties broken by reservoir sampling with the seeded generator."""
    best, best_total = totals[0]
    count = 1
    for name, total in totals[1:]:
        if total > best_total:
            best, best_total = name, total
            count = 1
        elif total == best_total:
            count += 1
            if rng.randrange(count) == 0:
                best = name
    return best


def test_select_host_index_draws_as_select_host() -> None:
    # Random totals with many ties (the reservoir's draws): the same index, and the generator
    # left in the same state, as the per-node select_host.
    for trial in range(400):
        gen = random.Random(trial)
        values = [gen.randint(0, gen.choice([1, 2, 5, 100])) for _ in range(gen.randint(1, 400))]
        if trial % 3 == 0:
            values.sort()
        a, b = random.Random(trial), random.Random(trial)
        name = select_host([(f"n{i}", v) for i, v in enumerate(values)], a)
        index = select_host_index(np.array(values, dtype=np.int64), b)
        assert name == f"n{index}"
        assert a.random() == b.random()


@pytest.mark.parametrize("memory", ["64Pi", "100Ei"])
def test_quantities_too_large_for_int64_columns_fall_back_alike(memory: str) -> None:
    # 64Pi passes the int64 range but not the columns' safe limit (2**55); 100Ei does not fit
    # int64 at all: either way the columns are switched off and the result is the per-node one.
    node_docs, pod_docs = random_cluster(7)
    node_docs[3]["status"]["allocatable"]["memory"] = memory
    node_docs[3]["status"]["capacity"]["memory"] = memory
    config = strategy_config(0)
    assert run_with(node_docs, pod_docs, True, 0, config) == run_with(
        node_docs, pod_docs, False, 0, config
    )
    cluster = ClusterObjects(nodes=[Node(d) for d in node_docs], pods=[], others=[])
    sim = Simulation(cluster, config, in_tree_registry(), seed=0)
    sim.run()
    assert sim.scheduler is not None
    columns = sim.scheduler.cache.snapshot().columns
    assert columns is not None and not columns.usable
    sim.close()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_columns_follow_the_cache_incrementally(seed: int) -> None:
    # Pods assumed, forgotten, bound, removed and nodes updated between snapshots: every
    # column (extended resources included) equals columns built afresh from the NodeInfos.
    from wasmsched.cluster.cache import Cache

    rng = random.Random(seed)
    node_docs, pod_docs = random_cluster(seed)
    node_docs = node_docs[:20]
    cache = Cache()
    for doc in node_docs:
        cache.add_node(Node(doc))
    columns = cache.snapshot().columns
    assert columns is not None
    columns.scalar(GPU)  # built now, kept up to date from here on
    placed: list[Pod] = []
    for step in range(60):
        action = rng.random()
        if action < 0.4 or not placed:
            pod = Pod(pod_docs[step % len(pod_docs)])
            pod = Pod({**pod.manifest, "metadata": {"name": f"p{step}", "namespace": "d"}})
            placed.append(cache.assume_pod(pod, rng.choice(node_docs)["metadata"]["name"]))
        elif action < 0.55:
            cache.forget_pod(placed.pop(rng.randrange(len(placed))))
        elif action < 0.7:
            cache.add_pod(placed[rng.randrange(len(placed))])  # the binding confirmed
        elif action < 0.85:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        else:
            doc = dict(rng.choice(node_docs))
            taints = [{"key": rng.choice(TAINT_KEYS), "value": "x", "effect": "NoSchedule"}]
            doc["spec"] = {
                **doc["spec"],
                "unschedulable": rng.random() < 0.5,
                "taints": taints if rng.random() < 0.5 else [],
            }
            labels = {**doc["metadata"]["labels"], "disk": rng.choice(DISKS)}
            doc["metadata"] = {**doc["metadata"], "labels": labels}
            cache.update_node(Node(doc))  # the same zone: the rows are re-read in place
        snap = cache.snapshot()
        assert snap.columns is columns  # not rebuilt: the node set did not change
        assert_fresh(columns, snap.node_infos)


def assert_fresh(columns: Any, node_infos: list[Any]) -> None:
    """Every column (extended resources included) equals columns built afresh."""
    from wasmsched.framework.columns import NodeColumns

    fresh = NodeColumns(node_infos)
    assert list(columns.infos) == list(fresh.infos)
    assert_columns_equal(columns, fresh, (GPU,))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_columns_of_a_new_node_set_carry_the_last_ones_rows(seed: int) -> None:
    # Nodes added, removed, re-added and moved to another zone between snapshots, pods
    # placed and removed meanwhile: the new node set's columns equal columns built afresh,
    # and only the nodes the last columns did not hold are read.
    from wasmsched.cluster.cache import Cache
    from wasmsched.framework import columns as columns_module

    rng = random.Random(seed)
    node_docs, pod_docs = random_cluster(seed)
    for doc in node_docs:
        doc["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(ZONES)
    cache = Cache()
    present = node_docs[:30]
    for doc in present:
        cache.add_node(Node(doc))
    cache.snapshot().columns.scalar(GPU)  # type: ignore[union-attr]
    spare = node_docs[30:60]
    placed: list[Pod] = []
    read: list[str] = []
    original = columns_module._row_values

    def spy(ni: Any) -> Any:
        read.append(ni.name)
        return original(ni)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columns_module, "_row_values", spy)
        for step in range(40):
            added: set[str] = set()
            for _ in range(rng.randint(1, 3)):
                action = rng.random()
                if action < 0.3 and spare:
                    doc = spare.pop(rng.randrange(len(spare)))
                    cache.add_node(Node(doc))
                    present.append(doc)
                    added.add(doc["metadata"]["name"])
                elif action < 0.5 and len(present) > 1:
                    doc = present.pop(rng.randrange(len(present)))
                    cache.remove_node(doc["metadata"]["name"])
                    added.discard(doc["metadata"]["name"])
                    spare.append(doc)
                elif action < 0.65:
                    doc = dict(rng.choice(present))
                    labels = {
                        **doc["metadata"]["labels"],
                        "topology.kubernetes.io/zone": rng.choice(ZONES),
                    }
                    doc["metadata"] = {**doc["metadata"], "labels": labels}
                    taints = [{"key": "a", "value": "x", "effect": "NoSchedule"}]
                    doc["spec"] = {**doc["spec"], "taints": taints if rng.random() < 0.5 else []}
                    cache.update_node(Node(doc))
                elif action < 0.85 or not placed:
                    pod = Pod(pod_docs[step % len(pod_docs)])
                    pod = Pod({**pod.manifest, "metadata": {"name": f"p{step}", "namespace": "d"}})
                    target = rng.choice(present)["metadata"]["name"]
                    placed.append(cache.assume_pod(pod, target))
                else:
                    cache.remove_pod(placed.pop(rng.randrange(len(placed))))
            read.clear()
            snap = cache.snapshot()
            assert snap.columns is not None
            assert added <= set(read)
            assert len(read) <= len(added) + 3  # the new nodes, and the rows changed since
            assert_fresh(snap.columns, snap.node_infos)


def test_plugins_offer_a_per_node_form_and_at_most_one_over_rows() -> None:
    # framework/node_search runs each plugin in its best form: the per-node one, or the
    # vectorized one over node rows (filter_columns/score_columns); no third form over a
    # list of NodeInfos is left to keep in step with the other two.
    from wasmsched.wasm import WasmPlugin

    cluster = ClusterObjects(nodes=[Node(_random_node(random.Random(0), 0))], pods=[], others=[])
    sim = Simulation(cluster, default_config(), in_tree_registry(), seed=0)
    sim.run()
    assert sim.scheduler is not None
    fwk = sim.scheduler.frameworks["default-scheduler"]
    classes = {type(p) for p in fwk.all_plugins} | {WasmPlugin}
    assert len(classes) > 10
    for cls in classes:
        assert not hasattr(cls, "filter_batch"), cls
        assert not hasattr(cls, "score_batch"), cls
    sim.close()


def nominated_cluster(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``n`` 4-CPU nodes each running a 1-CPU pod; 3.5-CPU pods of priority 1000 fit no
    node and preempt, and while they are nominated the 2-CPU pods pending beside them would
    prefer the nodes their victims left empty, where the nominated pods must still count."""
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    node_docs = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
            "status": {"capacity": alloc, "allocatable": alloc},
        }
        for i in range(n)
    ]

    def pod(name: str, cpu: str, node: str | None = None, priority: int = 0) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "containers": [
                {"name": "c", "image": IMAGES[0], "resources": {"requests": {"cpu": cpu}}}
            ],
            "priority": priority,
        }
        if node is not None:
            spec["nodeName"] = node
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "d"},
            "spec": spec,
        }

    bound = [pod(f"low-{i}", "1", f"node-{i}") for i in range(n)]
    high = [pod(f"high-{i}", "3500m", priority=1000) for i in range(8)]
    pending = [pod(f"mid-{i}", "2") for i in range(40)]
    return node_docs, bound + high + pending


@pytest.mark.parametrize("n", [500, 5000])
def test_columnar_filter_keeps_nominated_pods_on_their_nodes(n: int) -> None:
    # The vectorized Filter runs while pods are nominated: only the nominated nodes go node
    # by node (their nominated pods looked up), and every pod gets the node the per-node
    # search gives it.
    from wasmsched.queue.nominator import Nominator

    node_docs, pod_docs = nominated_cluster(n)
    config = default_config()
    looked_up: list[str] = []
    original = Nominator.pods_for_node

    def spy(self: Nominator, node_name: str) -> Any:
        looked_up.append(node_name)
        return original(self, node_name)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Nominator, "pods_for_node", spy)
        columnar = run_with(node_docs, pod_docs, True, 0, config)
        counted = len(looked_up)
        per_node = run_with(node_docs, pod_docs, False, 0, config)
    assert columnar == per_node
    assert counted < (len(looked_up) - counted) / 5
    placed = {name: node for name, _, node, _ in columnar[0]}
    assert all(placed[f"high-{i}"] for i in range(8))


@pytest.mark.parametrize("seed", [3, 11])
def test_sampled_cycles_take_the_columnar_forms_and_count_each_node(seed: int) -> None:
    # A cycle sampled for plugin metrics keeps the vectorized Filter and Score forms, and
    # reports each of their calls as kube-scheduler's runFilterPlugin/runScorePlugin would:
    # one observation per node by its status, as many as the per-node path makes (fewer
    # than 100 nodes: every node is filtered on both paths).
    from wasmsched.plugins.node_resources_fit import NodeResourcesFit as Fit

    node_docs, pod_docs = random_cluster(seed)
    node_docs = node_docs[:90]
    names = {d["metadata"]["name"] for d in node_docs}
    pod_docs = [p for p in pod_docs if p["spec"].get("nodeName") in names | {None}]
    per_node_filter: list[int] = []
    original = Fit.filter

    def spy(self: Fit, *args: Any) -> Any:
        per_node_filter.append(1)
        return original(self, *args)

    def observed(batch: bool) -> tuple[Any, dict[tuple[str, str, str], int]]:
        calls: dict[tuple[str, str, str], int] = {}

        def observer(point: str, plugin: str, code: str, seconds: float) -> None:
            assert seconds >= 0
            calls[point, plugin, code] = calls.get((point, plugin, code), 0) + 1

        class ObserveAll:
            def attempt_started(self, fwk: Any, info: Any) -> Any:
                return observer

            def attempt_ended(self, fwk: Any, pod: Any, outcome: Any) -> None:
                return None

        cluster = ClusterObjects(
            nodes=[Node(d) for d in node_docs], pods=[Pod(d) for d in pod_docs], others=[]
        )
        Framework.use_batch = batch
        try:
            sim = Simulation(cluster, default_config(), in_tree_registry(), seed=0)
            assert sim.scheduler is not None
            sim.scheduler.attempts = ObserveAll()
            result = sim.run()
            sim.close()
        finally:
            Framework.use_batch = True
        return [(o.pod.name, o.result, o.node, o.message) for o in result.outcomes], calls

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Fit, "filter", spy)
        columnar, columnar_calls = observed(True)
        assert per_node_filter == []  # the vectorized form answered every node
        per_node, per_node_calls = observed(False)
    assert per_node_filter
    assert columnar == per_node
    assert columnar_calls == per_node_calls
    assert ("Filter", "NodeResourcesFit", "Unschedulable") in columnar_calls
    assert ("ScoreExtensionNormalize", "TaintToleration", "Success") in columnar_calls
