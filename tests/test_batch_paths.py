"""The framework's batch plugin forms (framework/runtime: run_score_plugins) against the
per-node path on random clusters: the same seed must give every pod the same node, the same
result and the same message, and explain mode must record the same scores."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.framework.runtime import Framework
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator import Simulation

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
    # The switch is real: with it off, no plugin's batch form is asked.
    called: list[int] = []
    from wasmsched.plugins.node_resources_fit import NodeResourcesFit as Fit

    original = Fit.score_columns

    def spy(self: Fit, *args: Any) -> Any:
        called.append(1)
        return original(self, *args)

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
        mp.setattr(Fit, "score_columns", spy)
        run(node_docs, pod_docs, False, 0)
        assert called == []
        run(node_docs, pod_docs, True, 0)
        assert called
