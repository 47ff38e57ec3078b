"""The scheduling machinery of kube-scheduler 1.34-1.37 (issue 23): host selection, the
nominated node around binding, backoff, preemption messages, opportunistic batching.

Each case builds the release's features explicitly; the expected outcomes are read from
the Go code (k8s.io/kubernetes@v1.37.2 pkg/scheduler) and were confirmed with the v1.37.2
reference (.cache/reference/wasmsched-reference-1.37) where it can show them.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sched_support import node, pod
from wasmsched.api.manifests import ClusterObjects, load_manifests
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config, parse_config
from wasmsched.framework import batching
from wasmsched.framework.sorted_nodes import ScoredNodeHeap, heap_top_index
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.result import SimulationResult
from wasmsched.sim.simulation import Simulation

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V134 = SchedulerFeatures.of(KubernetesVersion(1, 34))
V135 = SchedulerFeatures.of(KubernetesVersion(1, 35))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def run(
    features: SchedulerFeatures,
    nodes: list[Node],
    pods: list[Pod],
    others: list[dict[str, Any]] | None = None,
    seed: int = 0,
) -> SimulationResult:
    cluster = ClusterObjects(nodes=nodes, pods=pods, others=others or [])
    sim = Simulation(cluster, default_config(features), seed=seed)
    try:
        return sim.run()
    finally:
        sim.close()


def pending(result: SimulationResult) -> dict[str, tuple[str, str | None]]:
    return {r.pod.name: (r.result, r.node) for r in result.pods if r.was_pending}


# --- host selection (framework/sorted_nodes.go, since 1.35) --------------------------------

# Pop orders printed by Go's container/heap (heap.Init, then heap.Pop until empty) with
# sorted_nodes.go's Less, all Randomizers 0: index into the feasible order.
GO_POP_ORDERS = [
    ([5, 5, 5, 5, 5, 5, 5], [0, 6, 5, 4, 3, 2, 1]),
    ([1, 3, 3, 2, 3, 3, 1, 3], [1, 7, 4, 5, 2, 3, 0, 6]),
    ([0, 0, 7, 0, 7, 7, 0, 0, 7, 0], [8, 4, 2, 5, 6, 3, 0, 1, 7, 9]),
    ([2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2], [0, 10, 8, 4, 2, 6, 5, 9, 1, 7, 3]),
]


@pytest.mark.parametrize(("totals", "order"), GO_POP_ORDERS)
def test_scored_node_heap_pops_as_go_container_heap(totals: list[int], order: list[int]) -> None:
    heap = ScoredNodeHeap([(t, 0, str(i)) for i, t in enumerate(totals)])
    assert [int(heap.pop()[2]) for _ in totals] == order
    assert heap_top_index(np.array(totals, np.int64)) == order[0]


def test_heap_top_index_is_the_heaps_first_pop() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        n = rng.randint(1, 40)
        totals = [rng.randint(0, 3) for _ in range(n)]
        randomizers = [rng.randint(0, 2) for _ in range(n)] if rng.random() < 0.5 else None
        heap = ScoredNodeHeap(
            [(totals[i], randomizers[i] if randomizers else 0, str(i)) for i in range(n)]
        )
        given = None if randomizers is None else np.array(randomizers, np.int64)
        assert heap_top_index(np.array(totals, np.int64), given) == int(heap.pop()[2])


def _four_best_of_ten() -> tuple[list[Node], list[Pod]]:
    """Ten equal nodes; all but node-2, -4, -5 and -8 carry a pod, so those four tie for
    the best score, at feasible positions 2, 4, 5, 8."""
    nodes = [node(f"node-{i}", labels={"kubernetes.io/hostname": f"node-{i}"}) for i in range(10)]
    load = [
        pod(f"load-{i}", cpu="1", memory="2Gi", node_name=f"node-{i}")
        for i in range(10)
        if i not in (2, 4, 5, 8)
    ]
    return nodes, [*load, pod("web", cpu="500m", memory="1Gi")]


def test_137_takes_the_heap_top_among_equal_nodes_whatever_the_seed() -> None:
    # heap.Init over positions [.., 2, .., 4, 5, .., .., 8, ..] leaves position 8 on top
    # (confirmed: the 1.37 reference at --parallelism 1 binds web to node-8).
    nodes, pods = _four_best_of_ten()
    for seed in range(6):
        assert pending(run(V137, nodes, pods, seed=seed))["web"] == ("Scheduled", "node-8")


def test_133_and_134_break_the_same_tie_at_random() -> None:
    nodes, pods = _four_best_of_ten()
    for features in (V133, V134):
        chosen = {pending(run(features, nodes, pods, seed=s))["web"][1] for s in range(12)}
        assert len(chosen) > 1
        assert chosen <= {"node-2", "node-4", "node-5", "node-8"}


# --- nominatedNodeName around binding (1.35+) ----------------------------------------------


def nominated(result: SimulationResult) -> dict[str, str | None]:
    return {r.pod.name: r.nominated_node for r in result.pods if r.was_pending}


def _preemption() -> tuple[list[Node], list[Pod]]:
    """urgent (priority 1000) preempts low on the one node, then binds there."""
    return [node("node-a", cpu="1")], [
        pod("low", cpu="800m", node_name="node-a", priority=0),
        pod("urgent", cpu="800m", priority=1000),
    ]


@pytest.mark.parametrize(
    ("features", "after_binding"),
    [
        (V133, "node-a"),
        (V134, "node-a"),
        # pods/binding clears status.nominatedNodeName (storage.go: setPodNodeAndMetadata).
        (V135, None),
        (V137, None),
        (
            SchedulerFeatures.of(
                KubernetesVersion(1, 37), "ClearingNominatedNodeNameAfterBinding=false"
            ),
            "node-a",
        ),
    ],
)
def test_binding_clears_the_nomination_since_135(
    features: SchedulerFeatures, after_binding: str | None
) -> None:
    result = run(features, *_preemption())
    assert pending(result)["urgent"] == ("Scheduled", "node-a")
    assert [p.victim for p in result.preemptions] == ["default/low"]
    assert nominated(result)["urgent"] == after_binding


SCENARIOS = Path(__file__).parent / "scenarios"


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        (V133, {"app-big": None, "app-small": None, "reader": None}),
        (V137, {"app-big": None, "app-small": None, "reader": None}),
        # The binding cycle nominates the chosen node when VolumeBinding's PreBindPreFlight
        # has claims to bind; the reader's claim is bound by then (Skip): not nominated.
        (
            SchedulerFeatures.of(
                KubernetesVersion(1, 37), "ClearingNominatedNodeNameAfterBinding=false"
            ),
            {"app-big": "node-b", "app-small": "node-a", "reader": None},
        ),
        (
            SchedulerFeatures.of(
                KubernetesVersion(1, 37),
                "ClearingNominatedNodeNameAfterBinding=false,NominatedNodeNameForExpectation=false",
            ),
            {"app-big": None, "app-small": None, "reader": None},
        ),
    ],
)
def test_binding_cycle_nominates_the_node_when_prebind_has_work(
    features: SchedulerFeatures, expected: dict[str, str | None]
) -> None:
    cluster = load_manifests(SCENARIOS / "volume_binding_wait_for_first_consumer.yaml")
    sim = Simulation(cluster, default_config(features))
    try:
        result = sim.run()
    finally:
        sim.close()
    assert pending(result)["app-big"] == ("Scheduled", "node-b")
    got = nominated(result)
    assert {name: got[name] for name in expected} == expected


# --- backoff (backend/queue/backoff_queue.go: getBackoffTime, since 1.34) ------------------


def test_the_scheduler_backs_off_by_rejections_since_134() -> None:
    for features, expected in ((V133, False), (V134, True), (V137, True)):
        sim = Simulation(ClusterObjects(nodes=[], pods=[], others=[]), default_config(features))
        try:
            assert sim.scheduler.queue.backoff_by_unschedulable_count is expected
        finally:
            sim.close()


# --- opportunistic batching (framework/runtime/batch.go, 1.35+) ----------------------------

NO_SPREAD = {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}
LIST_SPREAD: dict[str, Any] = {}


def config_with(features: SchedulerFeatures, plugins: dict[str, Any] | None = None) -> Any:
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if plugins is LIST_SPREAD:
        # PodTopologySpread without default constraints: it signs pods without their own.
        args = {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}
        profile["pluginConfig"] = [args]
    elif plugins is not None:
        profile["plugins"] = plugins
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
    return parse_config(data, "test.yaml", Path("."), set(default_registry().names()), features)


def run_config(
    config: Any, nodes: list[Node], pods: list[Pod], registry: Any = None
) -> tuple[SimulationResult, Simulation]:
    sim = Simulation(ClusterObjects(nodes=nodes, pods=pods, others=[]), config, registry)
    try:
        return sim.run(), sim
    finally:
        sim.close()


def _four_of_four() -> tuple[list[Node], list[Pod]]:
    nodes = [node(f"node-{i}", labels={"kubernetes.io/hostname": f"node-{i}"}) for i in range(4)]
    return nodes, [pod(f"web-{i}", cpu="500m", memory="1Gi") for i in range(4)]


@pytest.mark.parametrize(
    ("features", "placements", "batched"),
    [
        # web-0 scores all four (equal): the heap's top, node-0. web-1 takes the hint: node-0
        # rescored (lower now) and put back into the kept heap [3, 1, 2], whose top is node-3;
        # it is only filtered, not scored. And so on.
        (V137, ["node-0", "node-3", "node-1", "node-2"], 3),
        # Without batching every pod scores every node: heap.Init over the feasible order.
        (
            SchedulerFeatures.of(KubernetesVersion(1, 37), "OpportunisticBatching=false"),
            ["node-0", "node-1", "node-3", "node-2"],
            None,
        ),
    ],
)
def test_batched_pods_take_the_kept_heaps_top(
    features: SchedulerFeatures, placements: list[str], batched: int | None
) -> None:
    # Confirmed: the 1.37 reference (--parallelism 1), with and without the gate.
    result, sim = run_config(config_with(features, NO_SPREAD), *_four_of_four())
    assert [pending(result)[f"web-{i}"][1] for i in range(4)] == placements
    fwk = sim.scheduler.frameworks["default-scheduler"]
    assert (fwk.batch.batched_pods if fwk.batch is not None else None) == batched


def test_the_default_profile_never_batches() -> None:
    # PodTopologySpread's system default constraints make it refuse every pod.
    on, sim = run_config(config_with(V137), *_four_of_four())
    off, _ = run_config(
        config_with(SchedulerFeatures.of(KubernetesVersion(1, 37), "OpportunisticBatching=false")),
        *_four_of_four(),
    )
    batch = sim.scheduler.frameworks["default-scheduler"].batch
    assert batch is not None
    assert batch.batched_pods == 0
    assert pending(on) == pending(off)


class _Unsigned:
    """An out-of-tree Filter plugin that predates SignPlugin (as a wasm guest does)."""

    name = "Unsigned"

    def filter(self, state: Any, pod: Pod, node_info: Any) -> None:
        return None


def test_a_plugin_that_cannot_sign_turns_batching_off() -> None:
    registry = default_registry()
    registry.register("Unsigned", lambda args, handle: _Unsigned())
    plugins = {
        "multiPoint": {
            "enabled": [{"name": "Unsigned"}],
            "disabled": [{"name": "PodTopologySpread"}],
        }
    }
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }
    config = parse_config(data, "test.yaml", Path("."), set(registry.names()), V137)
    result, sim = run_config(config, *_four_of_four(), registry=registry)
    assert sim.scheduler.frameworks["default-scheduler"].batch is None
    assert [pending(result)[f"web-{i}"][1] for i in range(4)] == [
        "node-0",
        "node-1",
        "node-3",
        "node-2",
    ]


def _signature(pod_: Pod, plugins: dict[str, Any] | None = NO_SPREAD) -> bytes | None:
    sim = Simulation(ClusterObjects(nodes=[], pods=[], others=[]), config_with(V137, plugins))
    try:
        batch = sim.scheduler.frameworks["default-scheduler"].batch
        assert batch is not None
        return batch.sign(pod_)
    finally:
        sim.close()


def _with(name: str = "p", **spec: Any) -> Pod:
    labels = spec.pop("labels", None)
    made = pod(name, **spec)
    if labels is not None:
        made.manifest["metadata"]["labels"] = labels
    return Pod(made.manifest)


def _volume(name: str, **source: Any) -> dict[str, Any]:
    return {"name": name, **source}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        # The name does not count; configMap and secret volumes do not either (VolumesSigner).
        (_with("a"), _with("b"), True),
        (
            _with(volumes=[_volume("cm", configMap={"name": "x"})]),
            _with(volumes=[_volume("s", secret={"secretName": "y"})]),
            True,
        ),
        (_with(), _with(volumes=[_volume("scratch", emptyDir={})]), False),
        # Requests, labels (InterPodAffinity), tolerations, node selector count.
        (_with(cpu="100m"), _with(cpu="200m"), False),
        (_with(labels={"app": "a"}), _with(labels={"app": "b"}), False),
        (
            _with(tolerations=[{"key": "a", "operator": "Exists"}, {"key": "b", "value": "1"}]),
            _with(tolerations=[{"key": "b", "value": "1"}, {"key": "a", "operator": "Exists"}]),
            True,
        ),
        (_with(nodeSelector={"zone": "a"}), _with(nodeSelector={"zone": "b"}), False),
        # Images are normalized: "img" is "img:latest".
        (
            _with(),
            _with(
                containers=[
                    {
                        "name": "c",
                        "image": "img:latest",
                        "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                    }
                ]
            ),
            True,
        ),
    ],
)
def test_signatures(a: Pod, b: Pod, same: bool) -> None:
    sa, sb = _signature(a), _signature(b)
    assert sa is not None and sb is not None
    assert (sa == sb) is same


@pytest.mark.parametrize(
    ("made", "plugins"),
    [
        (
            _with(
                topologySpreadConstraints=[
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            ),
            LIST_SPREAD,
        ),
        (_with(), None),  # the system default constraints
        (
            _with(
                affinity={
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {}}
                        ]
                    }
                }
            ),
            NO_SPREAD,
        ),
    ],
)
def test_pods_that_are_not_signed(made: Pod, plugins: dict[str, Any] | None) -> None:
    assert _signature(made, plugins) is None


def test_spread_without_default_constraints_signs_pods_without_constraints() -> None:
    assert _signature(_with(), LIST_SPREAD) is not None


def test_a_batch_older_than_500ms_gives_no_hint() -> None:
    sim = Simulation(ClusterObjects(nodes=[], pods=[], others=[]), config_with(V137, NO_SPREAD))
    batch = sim.scheduler.frameworks["default-scheduler"].batch
    sim.close()
    assert batch is not None
    p = _with()
    signature = batch.sign(p)
    kept = ScoredNodeHeap([(10, 0, "node-b")])
    batch.store_results(signature, "", "node-a", kept, {"node-b": {}}, cycle=1, now=100.0)
    # Past maxBatchAge the state is not even looked at (no snapshot, no filter).
    assert batch.node_hint(None, p, lambda: signature, 2, 100.6, None) == ""  # type: ignore[arg-type]
    # The cycle must follow at once, and a nominated pod gets no hint.
    assert batch.node_hint(None, p, lambda: signature, 3, 100.1, None) == ""  # type: ignore[arg-type]
    nominated = p.with_nominated_node_name("node-b")
    assert batch.node_hint(None, nominated, lambda: signature, 2, 100.1, None) == ""  # type: ignore[arg-type]


class _PairAtPermit:
    """Permit: the first pod waits until a second one arrives, then both go."""

    name = "PairAtPermit"

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def permit(self, state: Any, p: Pod, node_name: str) -> tuple[Any, float]:
        from wasmsched.framework.status import Code, Status

        waiting: list[Any] = []
        self.handle.iterate_waiting_pods(waiting.append)
        if waiting:
            for wp in waiting:
                wp.allow(self.name)
            return None, 0.0
        return Status(Code.WAIT), 30.0


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        (V133, {"first": None, "second": None}),
        # The first pod waits at Permit: its binding cycle nominates its node first; the
        # second one does not wait and has nothing to PreBind.
        (
            SchedulerFeatures.of(
                KubernetesVersion(1, 37), "ClearingNominatedNodeNameAfterBinding=false"
            ),
            {"first": "node-a", "second": None},
        ),
        (V137, {"first": None, "second": None}),  # cleared at binding
    ],
)
def test_a_pod_waiting_at_permit_is_nominated_first(
    features: SchedulerFeatures, expected: dict[str, str | None]
) -> None:
    registry = default_registry()
    registry.register("PairAtPermit", lambda args, handle: _PairAtPermit(handle))
    plugins = {"multiPoint": {"enabled": [{"name": "PairAtPermit"}]}}
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }
    config = parse_config(data, "test.yaml", Path("."), set(registry.names()), features)
    nodes = [node("node-a", labels={"kubernetes.io/hostname": "node-a"})]
    result, _ = run_config(config, nodes, [pod("first"), pod("second")], registry=registry)
    assert pending(result) == {"first": ("Scheduled", "node-a"), "second": ("Scheduled", "node-a")}
    assert nominated(result) == expected


def test_the_volume_plugins_sign_a_pods_volumes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone all sign with
    # VolumesSigner, and every pod has a volume (admission's service-account token).
    calls: list[str] = []
    sign_volumes = batching._volumes_signature

    def spy(p: Pod) -> list[str]:
        calls.append(p.name)
        return sign_volumes(p)

    monkeypatch.setattr(batching, "_volumes_signature", spy)
    token = {"name": "kube-api-access-x1y2z", "projected": {"sources": []}}
    signed = _signature(_with(volumes=[token]))
    assert signed is not None and b"projected" in signed
    assert calls == ["p"]
