"""The workloads of kube-scheduler's scheduler_perf (v1.33.4,
test/integration/scheduler_perf/{misc,affinity,topology_spreading}/performance-config.yaml
and the templates they name), built as clusters, plus a production-shaped cluster of our own.

Each builder takes the node count and returns a ``Workload``: nodes, pods already bound
(scheduler_perf's init pods: bound up front, round robin, rather than scheduled first),
pods pending at the start (the measured pods, and what else the shape needs), and timed
changes for the shapes that scheduler_perf drives with its ``churn`` op. Counts follow the
upstream workload of that size where there is one (500Nodes / 5000Nodes), and are stated
in ``note`` where they do not.

Where the shape needs something the reference cannot express (it schedules a fixed set of
pods on a fake clientset; it has no timed events), ``reference_note`` says why, and the
benchmark prints that row as ours only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench_support import container, namespace, node_manifest, pod_manifest

from wasmsched.api.objects import Node, Pod
from wasmsched.replay.trace import AddNode, CreateObject, DeleteNode, DeletePod, TraceEvent

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
SCHED_NAMESPACES = ["sched-1", "sched-0"]


@dataclass
class Workload:
    name: str
    nodes: list[Node]
    running: list[Pod]  # bound before the first cycle
    pending: list[Pod]  # pending at the first cycle
    measured: list[str]  # namespace/name of the pods whose scheduling is timed
    expect: dict[str, str] = field(default_factory=dict)  # other pending pods' results
    others: list[dict[str, Any]] = field(default_factory=list)
    events: list[TraceEvent] = field(default_factory=list)  # timed changes (ours only)
    reference_note: str = ""  # why kube-scheduler cannot run this shape ("" = it can)
    release: str = ""  # the Kubernetes release the shape needs ("" = any)
    note: str = ""

    @property
    def manifests(self) -> list[dict[str, Any]]:
        return [
            *(dict(n.manifest) for n in self.nodes),
            *(dict(p.manifest) for p in self.running),
            *(dict(p.manifest) for p in self.pending),
            *self.others,
        ]


def _nodes(count: int, labels: Callable[[int], dict[str, str]] | None = None) -> list[Node]:
    """node-default.yaml: 4 CPU, 32Gi, 110 pods; labelNodePrepareStrategy's label if any."""
    return [
        Node(node_manifest(f"scheduler-perf-{i}", labels(i) if labels else None))
        for i in range(count)
    ]


def _pods(
    prefix: str,
    count: int,
    spec: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    ns: str = "default",
    nodes: list[Node] | None = None,
    start: int = 0,
) -> list[Pod]:
    """``count`` pods of one template; with ``nodes``, bound round robin."""
    return [
        Pod(
            pod_manifest(
                f"{prefix}-{start + i}",
                ns,
                spec,
                labels,
                node=nodes[(start + i) % len(nodes)].name if nodes else "",
            )
        )
        for i in range(count)
    ]


def _keys(pods: list[Pod]) -> list[str]:
    return [p.key for p in pods]


def _sizes(nodes: int, small: tuple[int, int], large: tuple[int, int]) -> tuple[int, int]:
    """(init pods, measured pods): upstream's 500Nodes values up to 500 nodes (scaled down
    with the node count below it, for the smoke sizes), its 5000Nodes values above."""
    if nodes >= 5000:
        return large
    if nodes >= 500:
        return small
    return max(1, small[0] * nodes // 500), max(1, small[1] * nodes // 500)


def _affinity_spec(kind: str, topology_key: str, color: str, preferred: bool) -> dict[str, Any]:
    term = {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": topology_key,
        "namespaces": SCHED_NAMESPACES,
    }
    if preferred:
        rule: dict[str, Any] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"podAffinityTerm": term, "weight": 1}
            ]
        }
    else:
        rule = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    return {"affinity": {kind: rule}}


def scheduling_basic(n: int) -> Workload:
    init, measured = _sizes(n, (500, 1000), (1000, 1000))
    nodes = _nodes(n)
    pending = _pods("pod", measured, start=init)
    return Workload(
        "SchedulingBasic", nodes, _pods("pod", init, nodes=nodes), pending, _keys(pending)
    )


# name: (affinity kind, topology key, the template's color, preferred, 500Nodes sizes,
# 5000Nodes sizes, name prefix); SchedulingPodAffinity's nodes are all in zone1
# (labelNodePrepareStrategy).
INTER_POD: dict[str, tuple[str, str, str, bool, tuple[int, int], tuple[int, int], str]] = {
    "SchedulingPodAntiAffinity": (
        "podAntiAffinity",
        HOSTNAME,
        "green",
        False,
        (100, 400),
        (1000, 1000),
        "anti-affinity",
    ),
    "SchedulingPodAffinity": (
        "podAffinity",
        ZONE,
        "blue",
        False,
        (500, 1000),
        (5000, 1000),
        "affinity",
    ),
    "SchedulingPreferredPodAffinity": (
        "podAffinity",
        HOSTNAME,
        "red",
        True,
        (500, 1000),
        (5000, 1000),
        "preferred-affinity",
    ),
    # v1.33.4's config names pod-with-preferred-pod-affinity.yaml for this workload (a
    # slip: it repeats the one above); this runs the anti-affinity template its name
    # promises, pod-with-preferred-pod-anti-affinity.yaml.
    "SchedulingPreferredPodAntiAffinity": (
        "podAntiAffinity",
        HOSTNAME,
        "yellow",
        True,
        (500, 1000),
        (5000, 1000),
        "preferred-anti-affinity",
    ),
}


def inter_pod_affinity(name: str, n: int) -> Workload:
    """The pod-with-(preferred-)pod-(anti-)affinity templates: init pods in sched-0, bound
    round robin, measured pods in sched-1 (createNamespaces prefix sched)."""
    kind, key, color, preferred, small, large, prefix = INTER_POD[name]
    init, measured = _sizes(n, small, large)
    spec = _affinity_spec(kind, key, color, preferred)
    nodes = _nodes(n, (lambda i: {ZONE: "zone1"}) if name == "SchedulingPodAffinity" else None)
    labels = {"color": color}
    running = _pods(prefix, init, spec, labels, "sched-0", nodes)
    pending = _pods(prefix, measured, spec, labels, "sched-1", start=init)
    note = ""
    if name == "SchedulingPreferredPodAntiAffinity":
        note = "template pod-with-preferred-pod-anti-affinity (upstream's config repeats the "
        note += "affinity one)"
    return Workload(
        name,
        nodes,
        running,
        pending,
        _keys(pending),
        others=[namespace(ns) for ns in SCHED_NAMESPACES],
        note=note,
    )


def scheduling_node_affinity(n: int) -> Workload:
    init, measured = _sizes(n, (500, 1000), (5000, 1000))
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}
                            ]
                        }
                    ]
                }
            }
        }
    }
    nodes = _nodes(n, lambda i: {ZONE: "zone1"})
    pending = _pods("node-affinity", measured, spec, start=init)
    return Workload(
        "SchedulingNodeAffinity",
        nodes,
        _pods("node-affinity", init, spec, nodes=nodes),
        pending,
        _keys(pending),
    )


def _spreading(name: str, n: int, when: str) -> Workload:
    init, measured = _sizes(n, (1000, 1000), (5000, 2000))
    moons = ["moon-1", "moon-2", "moon-3"]
    nodes = _nodes(n, lambda i: {ZONE: moons[i % 3]})
    spec = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 5,
                "topologyKey": ZONE,
                "whenUnsatisfiable": when,
                "labelSelector": {"matchLabels": {"color": "blue"}},
            }
        ]
    }
    pending = _pods("spreading-pod", measured, spec, {"color": "blue"})
    return Workload(name, nodes, _pods("pod", init, nodes=nodes), pending, _keys(pending))


def topology_spreading(n: int) -> Workload:
    return _spreading("TopologySpreading", n, "DoNotSchedule")


def preferred_topology_spreading(n: int) -> Workload:
    return _spreading("PreferredTopologySpreading", n, "ScheduleAnyway")


def _resource_container(cpu: str) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": "500Mi"}
    return container(requests, requests, ports=[{"containerPort": 80}])


def preemption_basic(n: int) -> Workload:
    """pod-low-priority (900m) x4 per node, then pod-high-priority (3 CPU, priority 10): each
    measured pod preempts three of a node's four pods."""
    measured = n if n < 5000 else 1000
    nodes = _nodes(n)
    low = {"terminationGracePeriodSeconds": 0, "containers": [_resource_container("900m")]}
    high = {"priority": 10, "containers": [_resource_container("3000m")]}
    pending = _pods("pod-high-priority", measured, high)
    return Workload(
        "PreemptionBasic",
        nodes,
        _pods("pod", 4 * n, low, nodes=nodes),
        pending,
        _keys(pending),
        note="upstream measures 1000Nodes (4000 init, 1000 measured); here 4 init pods per "
        "node and min(nodes, 1000) measured",
    )


def _large_cpu_pod(name: str, ns: str = "default") -> Pod:
    """pod-high-priority-large-cpu: 9 CPU on 4-CPU nodes, priority 10: never fits, and its
    preemption finds nothing to evict."""
    requests = {"cpu": "9", "memory": "500Mi"}
    spec = {"priority": 10, "containers": [container(requests, ports=[{"containerPort": 80}])]}
    return Pod(pod_manifest(name, ns, spec))


def unschedulable(n: int) -> Workload:
    init, measured = _sizes(n, (10, 1000), (100, 1000))
    nodes = _nodes(n)
    # Upstream creates one every 200 ms while the measured pods are scheduled (a churn op);
    # the reference schedules a fixed set of pods, so here both schedulers get them pending
    # from the start: 1 per 20 measured pods (5/s over a measurement at ~100 pods/s).
    # Priority 10 sorts them first; each fails its Filter and its preemption dry run, and
    # nothing the measured pods do requeues them.
    large = [_large_cpu_pod(f"pod-h-{i}") for i in range(max(1, measured // 20))]
    pending = _pods("pod", measured, start=init)
    return Workload(
        "Unschedulable",
        nodes,
        _pods("pod", init, nodes=nodes),
        [*large, *pending],
        _keys(pending),
        expect={p.key: UNSCHEDULABLE for p in large},
        note=f"{len(large)} large-cpu pods pending from the start instead of one per 200 ms",
    )


def scheduling_with_mixed_churn(n: int) -> Workload:
    """churn mode recreate, every second: a node (pods: 0), a pod-high-priority-large-cpu
    and a Service created, the next second deleted. Measured pods arrive at 100 per
    simulated second, so that the churn interleaves with them (nothing sleeps in the
    simulator: pods all created at time 0 would be scheduled before the first tick)."""
    _, measured = _sizes(n, (0, 1000), (0, 2000))
    rate = 100.0
    events: list[TraceEvent] = []
    pending = _pods("pod", measured)
    for i, pod in enumerate(pending):
        events.append(CreateObject(i / rate, pod.manifest))
    # An even number of ticks: the last one deletes what the one before created.
    ticks = 2 * (int(measured / rate) // 2 + 1)
    for tick in range(ticks):
        if tick % 2 == 0:
            churn_node = node_manifest(f"node-churn-{tick}", capacity={"pods": "0"})
            events.append(CreateObject(tick + 0.5, _large_cpu_pod(f"pod-h-{tick}").manifest))
            events.append(AddNode(tick + 0.5, churn_node))
        else:
            events.append(DeletePod(tick + 0.5, f"default/pod-h-{tick - 1}"))
            events.append(DeleteNode(tick + 0.5, f"node-churn-{tick - 1}"))
    return Workload(
        "SchedulingWithMixedChurn",
        _nodes(n),
        [],
        [],
        _keys(pending),
        events=events,
        reference_note="timed churn (objects created and deleted every second while pods "
        "are scheduled): the reference schedules a fixed set of pods, with no timed events",
        note="Service churn left out (no v1.33 default plugin watches Services); pods "
        "arrive at 100 per simulated second",
    )


def scheduling_daemonset(n: int) -> Workload:
    """One node scheduler-perf-node (90000 pods) and n node-default nodes; daemonset pods
    with a required matchFields metadata.name affinity to the one node."""
    _, measured = _sizes(n, (0, 1000), (0, 1000))
    named = Node(
        node_manifest(
            "scheduler-perf-node", capacity={"cpu": "4", "memory": "32Gi", "pods": "90000"}
        )
    )
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {
                                    "key": "metadata.name",
                                    "operator": "In",
                                    "values": ["scheduler-perf-node"],
                                }
                            ]
                        }
                    ]
                }
            }
        },
        "containers": [container()],
    }
    pending = _pods("daemonset", measured, spec)
    return Workload(
        "SchedulingDaemonset",
        [named, *_nodes(n)],
        [],
        pending,
        _keys(pending),
        note=f"upstream measures 15000Nodes / 30000 pods; here {n} + 1 nodes, {measured} pods",
    )


def scheduling_gated_pods(n: int) -> Workload:
    """SchedulingGatedPodsWithPodAffinityImpactForThroughput: gated pods with a required
    pod affinity to app=scheduler-perf stay gated while pods with that label (each binding
    an AssignedPodAdd event the queue must process) are scheduled."""
    _, measured = _sizes(n, (0, 1000), (0, 1000))
    gated_spec = {
        "schedulingGates": [{"name": "scheduling-gate-1"}],
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "scheduler-perf"}},
                        "topologyKey": HOSTNAME,
                    }
                ]
            }
        },
        "containers": [container()],
    }
    labels = {"app": "scheduler-perf"}
    gated = _pods("gated-pod", max(1, measured // 2), gated_spec, labels)
    pending = _pods("pod", measured, {"containers": [container()]}, labels)
    return Workload(
        "SchedulingGatedPods",
        _nodes(n),
        [],
        [*gated, *pending],
        _keys(pending),
        expect={p.key: UNSCHEDULABLE for p in gated},
        note="upstream: 1 node, 10000 gated + 20000 measured; here n nodes, "
        f"{len(gated)} gated + {measured} measured",
    )


SCHEDULER_PERF: dict[str, Callable[[int], Workload]] = {
    "SchedulingBasic": scheduling_basic,
    **{name: functools.partial(inter_pod_affinity, name) for name in INTER_POD},
    "SchedulingNodeAffinity": scheduling_node_affinity,
    "TopologySpreading": topology_spreading,
    "PreferredTopologySpreading": preferred_topology_spreading,
    "PreemptionBasic": preemption_basic,
    "Unschedulable": unschedulable,
    "SchedulingWithMixedChurn": scheduling_with_mixed_churn,
    "SchedulingDaemonset": scheduling_daemonset,
    "SchedulingGatedPods": scheduling_gated_pods,
}
