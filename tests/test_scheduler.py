"""The scheduling and binding cycles, with fake plugins (the framework names no plugin)."""

from __future__ import annotations

from typing import Any

import pytest

from sched_support import config, node, placements, pod, registry, simulate
from wasmsched.framework.interfaces import NodeScore, PreFilterResult
from wasmsched.framework.status import Code, Status


class NodeSet:
    """PreFilter that allows a fixed set of nodes (or Skips), with a Filter that counts."""

    def __init__(self, name: str, nodes: set[str] | None, skip: bool = False) -> None:
        self.name = name
        self.nodes = nodes
        self.skip = skip
        self.filtered: list[str] = []

    def pre_filter(
        self, state: Any, p: Any, nodes: Any
    ) -> tuple[PreFilterResult | None, Status | None]:
        if self.skip:
            return None, Status(Code.SKIP)
        return PreFilterResult(self.nodes), None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: Any, p: Any, node_info: Any) -> Status | None:
        self.filtered.append(node_info.name)
        return None


class FixedScore:
    def __init__(self, name: str, scores: dict[str, int], normalize: Any = None) -> None:
        self.name = name
        self.scores = scores
        self.normalize = normalize

    def score(self, state: Any, p: Any, node_info: Any) -> tuple[int, Status | None]:
        return self.scores.get(node_info.name, 0), None

    def score_extensions(self) -> Any:
        return self if self.normalize else None

    def normalize_score(self, state: Any, p: Any, scores: list[NodeScore]) -> Status | None:
        return self.normalize(scores)  # type: ignore[no-any-return]


class Rejecting:
    """Filter returning a given status on given nodes."""

    def __init__(self, name: str, bad: dict[str, Status]) -> None:
        self.name = name
        self.bad = bad

    def filter(self, state: Any, p: Any, node_info: Any) -> Status | None:
        return self.bad.get(node_info.name)


def run(
    plugins: dict[str, Any],
    nodes: list[Any],
    pods: list[Any],
    weights: dict[str, int] | None = None,
    **kw: Any,
):
    def factory(plugin: Any) -> Any:
        return lambda args, handle: plugin

    reg = registry(**{name: factory(plugin) for name, plugin in plugins.items()})
    names = [(n, (weights or {}).get(n, 1)) for n in plugins]
    cfg = config(names, reg.names(), kw.pop("extra", None))
    return simulate(nodes, pods, reg, cfg, **kw)


def test_prefilter_results_are_intersected() -> None:
    a = NodeSet("A", {"n1", "n2"})
    b = NodeSet("B", {"n2", "n3"})
    result, _ = run({"A": a, "B": b}, [node("n1"), node("n2"), node("n3")], [pod("p")])
    assert placements(result) == {"p": "n2"}
    assert a.filtered == ["n2"]


def test_empty_prefilter_intersection_is_unresolvable_with_kube_scheduler_message() -> None:
    a = NodeSet("A", {"n1"})
    b = NodeSet("B", {"n2"})
    result, _ = run({"A": a, "B": b}, [node("n1"), node("n2")], [pod("p")])
    (o,) = result.outcomes
    assert o.result == "Unschedulable"
    assert (
        o.message
        == "0/2 nodes are available: node(s) didn't satisfy plugin(s) [A B] simultaneously."
    )


def test_prefilter_skip_skips_the_same_plugins_filter() -> None:
    a = NodeSet("A", None, skip=True)
    result, _ = run({"A": a}, [node("n1")], [pod("p")])
    assert placements(result) == {"p": "n1"}
    assert a.filtered == []


def test_filter_rejections_build_the_fit_error_histogram() -> None:
    r = Rejecting(
        "R",
        {
            "n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
            "n2": Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {a: b}"
            ),
            "n3": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
        },
    )
    result, _ = run({"R": r}, [node("n1"), node("n2"), node("n3")], [pod("p")])
    (o,) = result.outcomes
    assert (o.result, o.node) == ("Unschedulable", None)
    assert o.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {a: b}, 2 Insufficient cpu."
    )


def test_filter_error_aborts_the_cycle() -> None:
    r = Rejecting("R", {"n1": Status(Code.ERROR, "boom")})
    result, _ = run({"R": r}, [node("n1"), node("n2")], [pod("p")], extra={})
    (o,) = result.outcomes
    assert o.result == "Error"
    assert o.message == "running 'R' filter plugin: boom"


def test_weighted_scores_choose_the_node() -> None:
    s1 = FixedScore("S1", {"n1": 10, "n2": 0})
    s2 = FixedScore("S2", {"n1": 0, "n2": 6})
    result, _ = run({"S1": s1, "S2": s2}, [node("n1"), node("n2")], [pod("p")], weights={"S2": 2})
    assert placements(result) == {"p": "n2"}  # 12 > 10


def test_normalize_score_out_of_range_is_an_error() -> None:
    def double(scores: list[NodeScore]) -> None:
        for s in scores:
            s.score *= 200

    s = FixedScore("S", {"n1": 1, "n2": 0}, normalize=double)
    result, _ = run({"S": s}, [node("n1"), node("n2")], [pod("p")])
    (o,) = result.outcomes
    assert o.result == "Error"
    assert "plugin 'S' returns an invalid score 200" in o.message


def test_explain_records_raw_normalized_and_weighted_scores() -> None:
    def halve(scores: list[NodeScore]) -> None:
        for s in scores:
            s.score //= 2

    s = FixedScore("S", {"n1": 80, "n2": 40}, normalize=halve)
    result, _ = run({"S": s}, [node("n1"), node("n2")], [pod("p")], weights={"S": 3}, explain=True)
    record = result.outcomes[0].cycles[0]
    assert record.score == {"n1": {"S": [80, 40, 120]}, "n2": {"S": [40, 20, 60]}}
    assert record.selected_node == "n1"


def test_ties_are_broken_by_the_seed_deterministically() -> None:
    nodes = [node(f"n{i}") for i in range(8)]
    s = FixedScore("S", {})

    def placed(seed: int) -> dict[str, str | None]:
        result, _ = run({"S": s}, nodes, [pod(f"p{i}") for i in range(20)], seed=seed)
        return placements(result)

    assert placed(1) == placed(1)
    assert placed(1) != placed(2)
    assert len(set(placed(3).values())) > 1


class Reserver:
    def __init__(self, name: str, log: list[str], fail: bool = False) -> None:
        self.name = name
        self.log = log
        self.fail = fail

    def reserve(self, state: Any, p: Any, node_name: str) -> Status | None:
        self.log.append(f"reserve {self.name}")
        return Status(Code.UNSCHEDULABLE, "no room") if self.fail else None

    def unreserve(self, state: Any, p: Any, node_name: str) -> None:
        self.log.append(f"unreserve {self.name}")


def test_reserve_failure_unreserves_every_plugin_in_reverse_order() -> None:
    log: list[str] = []
    plugins = {
        "R1": Reserver("R1", log),
        "R2": Reserver("R2", log, fail=True),
        "R3": Reserver("R3", log),
    }
    result, _ = run(plugins, [node("n1")], [pod("p")])
    assert log[:5] == ["reserve R1", "reserve R2", "unreserve R3", "unreserve R2", "unreserve R1"]
    (o,) = result.outcomes
    assert o.result == "Unschedulable"
    assert o.message == "0/1 nodes are available: 1 no room."


class Gang:
    """Permit: wait until `size` pods wait, then allow them all (coscheduling-style)."""

    name = "Gang"

    def __init__(self, handle: Any, size: int, timeout: float) -> None:
        self.handle = handle
        self.size = size
        self.timeout = timeout

    def permit(self, state: Any, p: Any, node_name: str) -> tuple[Status | None, float]:
        waiting: list[Any] = []
        self.handle.iterate_waiting_pods(waiting.append)
        if len(waiting) + 1 >= self.size:
            for wp in waiting:
                wp.allow(self.name)
            return None, 0.0
        return Status(Code.WAIT), self.timeout

    def events_to_register(self) -> list[Any]:
        from wasmsched.queue.events import POD, ActionType, ClusterEvent, ClusterEventWithHint

        return [ClusterEventWithHint(ClusterEvent(POD, ActionType.ADD))]


def run_gang(size: int, pods: int, timeout: float = 30.0):
    reg = registry(Gang=lambda args, handle: Gang(handle, size, timeout))
    cfg = config(["Gang"], reg.names())
    return simulate([node("n1"), node("n2")], [pod(f"p{i}") for i in range(pods)], reg, cfg)


def test_permit_wait_then_allow_binds_the_waiting_pods() -> None:
    result, _sim = run_gang(size=3, pods=3)
    assert {o.result for o in result.outcomes} == {"Scheduled"}
    assert result.simulated_seconds == 0.0  # nothing had to time out


def test_permit_wait_times_out_on_the_simulated_clock() -> None:
    result, sim = run_gang(size=3, pods=2, timeout=30.0)
    assert [o.result for o in result.outcomes] == ["Unschedulable", "Unschedulable"]
    assert (
        "rejected due to timeout after waiting 30.0s at plugin Gang" in result.outcomes[0].message
    )
    assert result.simulated_seconds == 30.0
    assert not result.stopped_early
    # nothing stays assumed on the nodes
    assert all(not ni.pods for ni in sim.scheduler.cache.nodes.values())


class SkipBinder:
    name = "SkipBinder"

    def bind(self, state: Any, p: Any, node_name: str) -> Status | None:
        return Status(Code.SKIP)


def test_bind_skip_falls_through_to_the_next_binder() -> None:
    reg = registry(SkipBinder=lambda args, handle: SkipBinder())
    data_cfg = config([], reg.names())
    prof = data_cfg.profiles[0]
    # SkipBinder first, then the default binder
    from wasmsched.config import PluginRef

    prof.plugins["bind"].enabled.insert(0, PluginRef("SkipBinder", None))
    result, _ = simulate([node("n1")], [pod("p")], reg, data_cfg)
    assert placements(result) == {"p": "n1"}


class Counter:
    name = "Counter"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def filter(self, state: Any, p: Any, node_info: Any) -> Status | None:
        self.calls.append(node_info.name)
        return None

    def score(self, state: Any, p: Any, node_info: Any) -> tuple[int, Status | None]:
        return 0, None

    def score_extensions(self) -> None:
        return None


def test_node_sampling_and_round_robin_start() -> None:
    counter = Counter()
    nodes = [node(f"n{i:03d}") for i in range(200)]
    _result, _ = run(
        {"Counter": counter},
        nodes,
        [pod("a"), pod("b")],
        extra={"percentageOfNodesToScore": 10},
    )
    # 200 nodes at 10 % is 20, raised to the minimum of 100 feasible nodes to find
    assert len(counter.calls) == 200
    assert counter.calls[0] == "n000"
    assert counter.calls[100] == "n100"  # the second pod starts where the first stopped


def test_pods_of_other_schedulers_are_left_alone() -> None:
    result, _ = run({}, [node("n1")], [pod("mine"), pod("theirs", scheduler_name="other")])
    assert placements(result) == {"mine": "n1"}
    assert [p.name for p in result.other_scheduler_pods] == ["theirs"]


def test_priority_orders_the_queue() -> None:
    # one slot: the high priority pod, queued second, gets it
    result, _ = run(
        {"Fit": OnePodPerNode()},
        [node("n1")],
        [pod("low", priority=1), pod("high", priority=100)],
    )
    assert placements(result) == {"low": None, "high": "n1"}


class OnePodPerNode:
    name = "Fit"

    def filter(self, state: Any, p: Any, node_info: Any) -> Status | None:
        if node_info.pods:
            return Status(Code.UNSCHEDULABLE, "node is taken")
        return None


@pytest.mark.parametrize("seed", [0, 1])
def test_pod_deleted_frees_room_and_requeues_unschedulable_pod(seed: int) -> None:
    reg = registry(Fit=lambda args, handle: OnePodPerNode())
    cfg = config(["Fit"], reg.names())
    from wasmsched.api.manifests import ClusterObjects
    from wasmsched.simulator import Simulation

    running = pod("running", node_name="n1")
    sim = Simulation(ClusterObjects([node("n1")], [running, pod("waiting")], []), cfg, reg, seed)
    sim.at(100.0, lambda: sim.store.delete_pod(running, ""))
    result = sim.run()
    (o,) = result.outcomes
    assert (o.result, o.node) == ("Scheduled", "n1")
    assert result.simulated_seconds >= 100.0
