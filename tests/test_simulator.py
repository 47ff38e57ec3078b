"""The simulator's run and its report: terminated pods, settling, every pod reported."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.document import node_entry, pod_entry
from wasmsched.sim.result import SimulationResult
from wasmsched.sim.simulation import Simulation

REGISTRY = in_tree_registry()


def node(name: str, cpu: str = "2", pods: str = "10", zone: str = "") -> Node:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": pods}},
        }
    )


def pod(
    name: str,
    cpu: str = "0",
    *,
    node_name: str = "",
    phase: str = "",
    gates: tuple[str, ...] = (),
    priority: int = 0,
    scheduler: str = "",
) -> Pod:
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if scheduler:
        spec["schedulerName"] = scheduler
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if phase:
        manifest["status"] = {"phase": phase}
    return Pod(manifest)


def simulate(nodes: list[Node], pods: list[Pod], seed: int = 0) -> SimulationResult:
    sim = Simulation(
        ClusterObjects(nodes=nodes, pods=pods, others=[]), default_config(), REGISTRY, seed=seed
    )
    try:
        return sim.run()
    finally:
        sim.close()


def results(result: SimulationResult) -> dict[str, tuple[str, str | None]]:
    return {r.pod.name: (r.result, r.node) for r in result.pods}


@pytest.mark.parametrize(
    ("phase", "old_result", "new_result"),
    [
        ("Succeeded", "Succeeded", ("Scheduled", "n1")),
        ("Failed", "Failed", ("Scheduled", "n1")),
        ("Running", "Running", ("Unschedulable", None)),
        ("", "Running", ("Unschedulable", None)),
    ],
)
def test_terminated_pods_hold_no_capacity_and_are_reported(
    phase: str, old_result: str, new_result: tuple[str, str | None]
) -> None:
    result = simulate(
        [node("n1", cpu="2")], [pod("old", "2", node_name="n1", phase=phase), pod("new", "2")]
    )
    assert results(result) == {"old": (old_result, "n1"), "new": new_result}
    old = pod_entry(result.pods[0])
    assert old["result"] == old_result and old["node"] == "n1" and old["wasPending"] is False


def test_unbound_terminated_pod_is_not_scheduled() -> None:
    result = simulate([node("n1")], [pod("finished", "1", phase="Failed")])
    assert results(result) == {"finished": ("Failed", None)}
    assert result.outcomes == [] and result.cycles == 0
    assert result.summary()["failed"] == 1


def test_gated_pod_and_pod_that_cannot_fit_settle_in_one_cycle() -> None:
    result = simulate(
        [node("n1", cpu="2")], [pod("gated", gates=("example.com/wait",)), pod("big", "4")]
    )
    assert result.cycles == 1
    assert result.simulated_seconds == 0.0
    assert not result.stopped_early
    by_name = {r.pod.name: r for r in result.pods}
    assert by_name["gated"].result == "Unschedulable"
    assert by_name["gated"].message == "waiting for scheduling gates: [example.com/wait]"
    assert by_name["big"].result == "Unschedulable"
    assert by_name["big"].outcome is not None and by_name["big"].outcome.attempts == 1


def test_gated_pod_does_not_multiply_cycles_on_a_larger_cluster() -> None:
    nodes = [node(f"n{i}", cpu="2", zone="ab"[i % 2]) for i in range(20)]
    pods = [pod(f"fits-{i}", "1500m") for i in range(25)] + [pod("huge", "3")]
    plain = simulate(nodes, pods)
    gated = simulate(nodes, [*pods, pod("gated", gates=("example.com/wait",))])
    assert plain.cycles == gated.cycles
    assert plain.simulated_seconds == gated.simulated_seconds
    assert results(plain) == {k: v for k, v in results(gated).items() if k != "gated"}
    # 20 pods fit, 5 + huge cannot: each pending pod is tried, and retried only after a
    # change it has not seen (the bindings after its first attempt).
    assert sum(1 for r in gated.pods if r.result == "Scheduled") == 20
    assert gated.cycles <= 2 * len(pods)
    assert not gated.stopped_early


def test_preempted_pods_are_reported_with_their_preemptor() -> None:
    # "low" runs on the only node; "high" needs its CPU: low is deleted, high takes n1.
    result = simulate(
        [node("n1", cpu="2")], [pod("low", "2", node_name="n1"), pod("high", "2", priority=10)]
    )
    by_name = {r.pod.name: r for r in result.pods}
    assert (by_name["low"].result, by_name["low"].node) == ("Preempted", "n1")
    assert by_name["low"].preempted_by == "default/high"
    assert by_name["low"].was_pending is False
    assert "preempted by default/high on n1" in by_name["low"].message
    assert (by_name["high"].result, by_name["high"].node) == ("Scheduled", "n1")
    assert pod_entry(by_name["low"])["preemptedBy"] == "default/high"
    assert result.summary()["preempted"] == 1


def test_pod_scheduled_early_then_preempted_is_reported_preempted() -> None:
    nodes = [node("n1", cpu="2")]
    sim = Simulation(
        ClusterObjects(nodes=nodes, pods=[pod("early", "2")], others=[]), default_config(), REGISTRY
    )
    late = pod("late", "2", priority=100)
    sim.at(60.0, lambda: sim.store.add_pod(late))
    try:
        result = sim.run()
    finally:
        sim.close()
    by_name = {o.pod.name: o for o in result.outcomes}
    assert by_name["early"].result == "Preempted"
    assert by_name["early"].preempted_by == "default/late"
    (early,) = [r for r in result.pods if r.pod.name == "early"]
    assert (early.result, early.node, early.was_pending) == ("Preempted", "n1", True)
    assert [(r.pod.name, r.result) for r in result.pods] == [
        ("early", "Preempted"),
        ("late", "Scheduled"),
    ]


@pytest.mark.parametrize(
    ("extra", "result_name", "message"),
    [
        (
            {"spec": {"schedulerName": "other-scheduler"}},
            "Skipped",
            'schedulerName "other-scheduler" has no profile here: left to that scheduler',
        ),
        (
            {"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}},
            "Skipped",
            "being deleted (metadata.deletionTimestamp is set)",
        ),
    ],
)
def test_pods_this_simulation_does_not_schedule_are_skipped(
    extra: dict[str, Any], result_name: str, message: str
) -> None:
    base = pod("p", "1").manifest
    manifest = {
        **base,
        "metadata": {**base["metadata"], **extra.get("metadata", {})},
        "spec": {**base["spec"], **extra.get("spec", {})},
    }
    result = simulate([node("n1")], [Pod(manifest), pod("ours", "1")])
    by_name = {r.pod.name: r for r in result.pods}
    assert (by_name["p"].result, by_name["p"].node, by_name["p"].message) == (
        result_name,
        None,
        message,
    )
    assert by_name["ours"].result == "Scheduled"
    assert result.summary()["skipped"] == 1


def test_node_usage_counts_bound_pods_only() -> None:
    result = simulate(
        [node("n1", cpu="4"), node("n2", cpu="2")],
        [
            pod("running", "1500m", node_name="n1"),
            pod("done", "2", node_name="n1", phase="Succeeded"),
            pod("new", "2"),
            pod("gated", "1", gates=("g",)),
        ],
    )
    nodes = {n.name: n for n in result.node_usage}
    placed = {r.pod.name: r.node for r in result.pods if r.result in ("Running", "Scheduled")}
    for name, report in nodes.items():
        on_it = [p for p, n in placed.items() if n == name]
        assert report.pods == len(on_it) == report.requested["pods"]
    cpu = {name: n.requested["cpu"] for name, n in nodes.items()}
    assert sum(cpu.values()) == 3500  # running + new; done and gated hold nothing
    assert nodes["n1"].allocatable["cpu"] == 4000
    assert node_entry(nodes["n1"])["allocatable"]["memory"] == "4Gi"


def test_a_simulation_without_a_registry_uses_the_default_one() -> None:
    # As simulate(registry=None) does: None is the in-tree registry, not an AttributeError.
    cluster = ClusterObjects(nodes=[node("n1")], pods=[pod("p", "1")], others=[])
    for sim in (
        Simulation(cluster, default_config(), None),
        Simulation(cluster, default_config(), registry=None),
    ):
        try:
            result = sim.run()
        finally:
            sim.close()
        assert results(result) == {"p": ("Scheduled", "n1")}


def test_a_driver_reads_the_cluster_and_the_outcomes_through_the_simulation() -> None:
    sim = Simulation(
        ClusterObjects(nodes=[node("n1")], pods=[pod("p", "1"), pod("big", "4")], others=[]),
        default_config(),
        REGISTRY,
    )
    seen: dict[str, Any] = {}

    def look() -> None:
        p = next(x for x in sim.pods() if x.name == "p")
        seen.update(
            now=sim.now(),
            node=sim.pod(p.uid).node_name,  # type: ignore[union-attr]
            nodes=[n.name for n in sim.nodes()],
            n1=sim.node("n1") is not None,
            big=sim.outcome(next(x.uid for x in sim.pods() if x.name == "big")).result,  # type: ignore[union-attr]
        )

    sim.at(10.0, look)
    try:
        sim.run()
    finally:
        sim.close()
    assert seen == {"now": 10.0, "node": "n1", "nodes": ["n1"], "n1": True, "big": "Unschedulable"}


def test_a_replica_set_replaces_a_pod_deleted_during_the_run() -> None:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "rs-uid"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template},
    }
    sim = Simulation(ClusterObjects(nodes=[node("n1")], pods=[], others=[rs]), default_config())
    sim.at(10.0, lambda: sim.store.remove_pod(next(iter(sim.pods())).uid))
    try:
        result = sim.run()
    finally:
        sim.close()
    # The first pod was deleted by the API (not preempted): its replacement is scheduled.
    (running,) = sim.pods()
    first, replacement = result.pods
    assert first.pod.uid != running.uid and replacement.pod.uid == running.uid
    assert replacement.pod.name.startswith("web-") and replacement.pod.name != first.pod.name
    assert (replacement.result, replacement.node) == ("Scheduled", "n1")


def test_the_loaded_cluster_is_out_of_the_collectors_sight_while_pods_are_scheduled() -> None:
    """A full collection would walk the whole loaded cluster again and again mid-run: it is
    frozen (gc.freeze) while the pods are scheduled, and handed back when the run ends."""
    import gc

    cluster = ClusterObjects(nodes=[node("n1"), node("n2")], pods=[pod("a"), pod("b")])
    during: list[int] = []
    sim = Simulation(cluster, default_config(), in_tree_registry(), seed=0)
    sim.run(lambda done, total: during.append(gc.get_freeze_count()))
    assert during and during[0] > 0  # the first pod bound
    assert gc.get_freeze_count() == 0

    # A caller that froze objects of its own keeps them frozen, and its count unchanged.
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        sim = Simulation(cluster, default_config(), in_tree_registry(), seed=0)
        sim.run()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
