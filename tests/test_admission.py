"""Admission at load (PriorityClass -> spec.priority, RuntimeClass -> spec.overhead) and the preemption report."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.admission import resolve_priorities
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.simulation import Simulation


def pod(name: str, node: str = "", cpu: str = "1", **spec: Any) -> Pod:
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
        **spec,
    }
    if node:
        body["nodeName"] = node
    return Pod({"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": body})


def priority_class(
    name: str, value: int, default: bool = False, policy: str | None = None
) -> dict[str, Any]:
    m: dict[str, Any] = {"kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    if default:
        m["globalDefault"] = True
    if policy:
        m["preemptionPolicy"] = policy
    return m


CLASSES = [
    priority_class("high", 1000, policy="Never"),
    priority_class("std", 100, default=True),
    priority_class("other-default", 50, default=True),
]

# (name, pod spec, want priority, want class name, want preemptionPolicy)
CASES = [
    ("class value", {"priorityClassName": "high"}, 1000, "high", "Never"),
    (
        "explicit policy wins",
        {"priorityClassName": "high", "preemptionPolicy": "x"},
        1000,
        "high",
        "x",
    ),
    ("highest global default", {}, 100, "std", None),
    (
        "system class",
        {"priorityClassName": "system-node-critical"},
        2000001000,
        "system-node-critical",
        None,
    ),
    ("explicit priority kept", {"priority": 7}, 7, "", None),
    ("unknown class left alone", {"priorityClassName": "nope"}, 0, "nope", None),
]


@pytest.mark.parametrize(
    ("spec", "priority", "class_name", "policy"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_resolve_priorities(
    spec: dict[str, Any], priority: int, class_name: str, policy: str | None
) -> None:
    (got,) = resolve_priorities([pod("p", **spec)], CLASSES)
    assert got.priority == priority
    assert got.priority_class_name == class_name
    assert got.spec.get("preemptionPolicy") == policy


def test_no_class_no_default_keeps_the_pod() -> None:
    p = pod("p")
    assert resolve_priorities([p], [])[0] is p


def node(name: str, cpu: str = "2") -> Node:
    return Node(
        {
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "110"}},
        }
    )


@pytest.mark.parametrize(
    ("minor", "nominated"),
    # From 1.35 the API server clears nominatedNodeName when it binds the pod
    # (ClearingNominatedNodeNameAfterBinding; pkg/registry/core/pod/storage/storage.go).
    [(33, "n1"), (37, None)],
)
def test_preemption_end_to_end_through_the_simulator(minor: int, nominated: str | None) -> None:
    cluster = ClusterObjects(
        nodes=[node("n1")],
        pods=[pod("victim", "n1", "2", priority=1), pod("preemptor", "", "1", priority=100)],
        others=[],
    )
    features = SchedulerFeatures.of(KubernetesVersion(1, minor))
    sim = Simulation(cluster, default_config(features), in_tree_registry(), seed=0)
    try:
        result = sim.run()
    finally:
        sim.close()
    (outcome,) = result.outcomes
    assert (outcome.result, outcome.node, outcome.nominated_node) == ("Scheduled", "n1", nominated)
    assert [(p.victim, p.node, p.preemptor) for p in result.preemptions] == [
        ("default/victim", "n1", "default/preemptor")
    ]
    notes = [e.note for e in result.events if e.reason == "Preempted"]
    assert notes == ["Preempted by pod default/preemptor on node n1"]
    # The first attempt failed and nominated the node; the retry bound the pod there.
    failed = [e.note for e in result.events if e.reason == "FailedScheduling"]
    assert failed == ["0/1 nodes are available: 1 Insufficient cpu."]
    assert "victim" not in {p.name for p in sim.store.pods.values()}


RUNTIME_CLASSES = [
    {
        "kind": "RuntimeClass",
        "metadata": {"name": "kata"},
        "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
    },
    {"kind": "RuntimeClass", "metadata": {"name": "runc"}, "handler": "runc"},
]


@pytest.mark.parametrize(
    ("spec", "expected_cpu"),
    [
        ({"runtimeClassName": "kata"}, 1250),  # 1 cpu + 250m overhead
        ({"runtimeClassName": "runc"}, 1000),  # no overhead declared
        ({"runtimeClassName": "missing"}, 1000),
        ({}, 1000),
        ({"runtimeClassName": "kata", "overhead": {"cpu": "10m"}}, 1010),  # admitted already
    ],
)
def test_runtime_class_overhead(spec: dict[str, Any], expected_cpu: int) -> None:
    from wasmsched.api.admission import admit_pods

    (got,) = admit_pods([pod("p", **spec)], RUNTIME_CLASSES)
    assert got.requests.milli_cpu == expected_cpu


def test_runtime_class_overhead_decides_fit_in_the_simulator() -> None:
    node = Node(
        {
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "1200m", "memory": "4Gi", "pods": "10"}},
        }
    )
    cluster = ClusterObjects(
        nodes=[node],
        pods=[pod("plain"), pod("sandboxed", runtimeClassName="kata")],
        others=RUNTIME_CLASSES,
    )
    sim = Simulation(cluster, default_config(), in_tree_registry())
    result = sim.run()
    sim.close()
    by_name = {o.pod.name: o for o in result.outcomes}
    assert by_name["plain"].node == "n1"
    assert by_name["sandboxed"].result == "Unschedulable"
    assert "Insufficient cpu" in by_name["sandboxed"].message
