"""Builders for framework and scheduler tests: manifests, fake plugins, a config."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import DEFAULT_PLUGINS, SchedulerConfig, parse_config
from wasmsched.framework.columns import NodeColumns
from wasmsched.framework.interfaces import Registry
from wasmsched.framework.status import Status
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.result import NodeUsage, PodResult, SimulationResult
from wasmsched.sim.simulation import Simulation


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **extra: Any) -> Node:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": extra.pop("labels", {})},
        "spec": extra.pop("spec", {}),
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }
    return Node(manifest)


def pod(
    name: str,
    cpu: str = "100m",
    memory: str = "100Mi",
    namespace: str = "default",
    node_name: str = "",
    priority: int | None = None,
    scheduler_name: str | None = None,
    **spec: Any,
) -> Pod:
    body: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
        ],
        **spec,
    }
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    if scheduler_name is not None:
        body["schedulerName"] = scheduler_name
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": body,
        }
    )


class PrioritySort:
    name = "PrioritySort"

    def less(self, a: Any, b: Any) -> bool:
        if a.pod.priority != b.pod.priority:
            return bool(a.pod.priority > b.pod.priority)
        return bool((a.timestamp, a.seq) < (b.timestamp, b.seq))


class Binder:
    name = "DefaultBinder"

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def bind(self, state: Any, pod: Pod, node_name: str) -> Status | None:
        result: Status | None = self.handle.binder().bind(pod, node_name)
        return result


def registry(**plugins: Callable[[dict[str, Any], Any], Any]) -> Registry:
    reg = Registry()
    reg.register("PrioritySort", lambda args, handle: PrioritySort())
    reg.register("DefaultBinder", lambda args, handle: Binder(handle))
    for name, factory in plugins.items():
        reg.register(name, factory)
    return reg


FEATURES_1_33 = SchedulerFeatures.of(KubernetesVersion(1, 33))


def config(
    plugins: Iterable[str | tuple[str, int]],
    known: Iterable[str],
    extra: dict[str, Any] | None = None,
) -> SchedulerConfig:
    enabled = [
        {"name": p} if isinstance(p, str) else {"name": p[0], "weight": p[1]} for p in plugins
    ]
    data: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, *enabled],
                        "disabled": [{"name": "*"}],
                    }
                },
            }
        ],
        **(extra or {}),
    }
    # These framework tests follow kube-scheduler v1.33.4 (tests/test_cycle_137.py: 1.37).
    return parse_config(data, "test.yaml", Path("."), set(known), FEATURES_1_33)


def default_profile_config(
    extenders: Iterable[dict[str, Any]] = (),
    plugin_config: list[dict[str, Any]] | None = None,
    disabled: list[str] | None = None,
) -> SchedulerConfig:
    """One profile with the default plugins (less ``disabled``), its ``pluginConfig``, and
    the ``extenders``, as loaded from "test.yaml"."""
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    if disabled:
        profile["plugins"] = {"multiPoint": {"disabled": [{"name": n} for n in disabled]}}
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
        "extenders": list(extenders),
    }
    return parse_config(
        data, "test.yaml", Path("."), {p.name for p in DEFAULT_PLUGINS}, FEATURES_1_33
    )


def simulate(
    nodes: list[Node],
    pods: list[Pod],
    reg: Registry,
    cfg: SchedulerConfig,
    seed: int = 0,
    explain: bool = False,
) -> tuple[SimulationResult, Simulation]:
    sim = Simulation(ClusterObjects(nodes=nodes, pods=pods, others=[]), cfg, reg, seed, explain)
    result = sim.run()
    sim.close()
    return result, sim


def placements(result: SimulationResult) -> dict[str, str | None]:
    return {o.pod.name: o.node for o in result.outcomes}


def placements_under(
    nodes: list[Node], pods: list[Pod], cfg: SchedulerConfig
) -> dict[str, str | None]:
    """pod name -> node (None: not scheduled) of a simulation with the in-tree plugins."""
    sim = Simulation(ClusterObjects(nodes=nodes, pods=pods, others=[]), cfg)
    try:
        result = sim.run()
    finally:
        sim.close()
    return {r.pod.name: r.node for r in result.pods}


def count_calls(monkeypatch: Any, owner: object, name: str) -> list[int]:
    """Counts the calls of ``owner.name`` (a module's function, a class's method or
    constructor) in the returned list's one item, for as long as ``monkeypatch`` lasts."""
    calls = [0]
    original = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def result_of(pods: list[PodResult], nodes: list[NodeUsage], **fields: Any) -> SimulationResult:
    """A SimulationResult of these pods and nodes, for the renderers of a result."""
    return SimulationResult(
        **{
            "outcomes": [r.outcome for r in pods if r.outcome is not None],
            "other_scheduler_pods": [],
            "events": [],
            "preemptions": [],
            "simulated_seconds": 0.0,
            "wall_seconds": 0.0,
            "cycles": 1,
            "nodes": len(nodes),
            "skipped_plugins": {},
            "pods": pods,
            "node_usage": nodes,
            **fields,
        }
    )


# The per-node columns NodeColumns keeps (framework/columns.py), named here so that a test
# compares each of them, not only those the code under test lists.
COLUMN_FIELDS = (
    "alloc_cpu",
    "alloc_memory",
    "alloc_ephemeral",
    "alloc_pods",
    "req_cpu",
    "req_memory",
    "req_ephemeral",
    "non_zero_cpu",
    "non_zero_memory",
    "pod_count",
    "free_cpu",
    "free_memory",
    "free_ephemeral",
    "free_pods",
    "unschedulable",
    "tainted",
    "uses_ports",
)


def assert_columns_equal(
    got: NodeColumns, want: NodeColumns, resources: Iterable[str] = ()
) -> None:
    """``got`` (columns carried over) equals ``want`` (built afresh): rows, every column,
    the taint and host-port classes up to their numbering, and the ``resources`` columns."""
    assert got.names.tolist() == want.names.tolist()
    assert got.row_of == want.row_of and got.usable == want.usable
    assert got.size == want.size and np.array_equal(got.all_rows, want.all_rows)
    for name in COLUMN_FIELDS:
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    # Rows share a taint (host port) class exactly when they have equal taints (ports).
    for classes in ("taint_classes", "port_classes"):
        kept, new = getattr(got, classes).ids, getattr(want, classes).ids
        assert np.array_equal(kept == 0, new == 0), classes
        assert np.array_equal(kept[:, None] == kept, new[:, None] == new), classes
    for resource in resources:
        for a, b in zip(got.scalar(resource), want.scalar(resource), strict=True):
            assert np.array_equal(a, b), resource
