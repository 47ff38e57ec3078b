"""The scheduling and binding cycles, with fake plugins (the framework names no plugin)."""

from __future__ import annotations

from typing import Any

import pytest

from sched_support import FEATURES_1_33, config, node, placements, pod, registry, simulate
from wasmsched.api.manifests import ClusterObjects
from wasmsched.config import default_config
from wasmsched.framework.interfaces import NodeScore, PreFilterResult
from wasmsched.framework.runtime import BindingPending
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.simulation import Simulation


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
    # Go's %q (framework.go: RunFilterPlugins): "running \"R\" filter plugin: boom".
    assert o.message == 'running "R" filter plugin: boom'


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
        from wasmsched.framework.types import POD, ActionType, ClusterEvent, ClusterEventWithHint

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
    # 200 nodes at 10 % is 20, raised to the minimum of 100 feasible nodes to find.
    # As kube-scheduler's findNodesThatPassFilters, the search stops when it finds the
    # 101st feasible node (checked, then dropped), and the next start advances by the
    # 100 kept (findNodesThatFitPod: len(feasibleNodes) + NodeToStatus.Len()).
    assert len(counter.calls) == 202
    assert counter.calls[0] == "n000"
    assert counter.calls[100] == "n100"  # the first pod's one node too many
    assert counter.calls[101] == "n100"  # the second pod starts after the 100 kept
    assert counter.calls[-1] == "n000"  # ... and wraps around: 100..199, then n000


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
    from wasmsched.sim.simulation import Simulation

    running = pod("running", node_name="n1")
    sim = Simulation(ClusterObjects([node("n1")], [running, pod("waiting")], []), cfg, reg, seed)
    sim.at(100.0, lambda: sim.store.delete_pod(running, ""))
    result = sim.run()
    (o,) = result.outcomes
    assert (o.result, o.node) == ("Scheduled", "n1")
    assert result.simulated_seconds >= 100.0


# --- public seams: plugin observer, attempt hooks, asynchronous binding, failure rule ---------


def build(
    plugins: dict[str, Any], nodes: list[Any], pods: list[Any], first_binder: str | None = None
) -> Simulation:
    """A simulation of fake plugins, not run yet (the tests drive or watch its scheduler)."""
    reg = registry(**{name: (lambda args, handle, p=p: p) for name, p in plugins.items()})
    cfg = config(list(plugins), reg.names())
    if first_binder is not None:
        from wasmsched.config import PluginRef

        cfg.profiles[0].plugins["bind"].enabled.insert(0, PluginRef(first_binder, None))
    return Simulation(ClusterObjects(nodes=nodes, pods=pods, others=[]), cfg, reg)


class Boom:
    name = "Boom"

    def filter(self, state: Any, p: Any, node_info: Any) -> Status | None:
        if node_info.name == "n1":
            raise RuntimeError("boom")
        return None


class ObserveAll:
    """An AttemptObserver that hands the same plugin observer to every attempt."""

    def __init__(self, observer: Any) -> None:
        self.observer = observer
        self.ended: list[tuple[str, str]] = []

    def attempt_started(self, fwk: Any, info: Any) -> Any:
        return self.observer

    def attempt_ended(self, fwk: Any, p: Any, outcome: Any) -> None:
        self.ended.append((p.name, outcome.result))


def test_observer_sees_every_plugin_call_and_changes_nothing() -> None:
    nodes = [node(f"n{i}", cpu="2") for i in range(4)]
    pods = [pod(f"p{i}", cpu="500m") for i in range(6)] + [pod("big", cpu="4")]

    def run_default(observer: Any) -> dict[str, str | None]:
        sim = Simulation(
            ClusterObjects(nodes=nodes, pods=pods, others=[]),
            default_config(FEATURES_1_33),
            in_tree_registry(),
        )
        sim.scheduler.attempts = ObserveAll(observer)
        try:
            return placements(sim.run())
        finally:
            sim.close()

    calls: list[tuple[str, str, str]] = []
    observed = run_default(lambda point, plugin, code, s: calls.append((point, plugin, code)))
    assert observed == run_default(None)
    points = {c[0] for c in calls}
    assert {"PreFilter", "Filter", "PostFilter", "PreScore", "Score", "Reserve", "Bind"} <= points
    assert ("Filter", "NodeResourcesFit", "Unschedulable") in calls
    assert ("Bind", "DefaultBinder", "Success") in calls
    assert ("PostFilter", "DefaultPreemption", "Unschedulable") in calls


def test_observer_reports_a_raising_plugin_as_error_and_can_be_cleared() -> None:
    sim = build({"Boom": Boom()}, [node("n1")], [pod("p")])
    calls: list[tuple[str, str, str]] = []

    def observer(point: str, plugin: str, code: str, seconds: float) -> None:
        assert seconds >= 0.0
        calls.append((point, plugin, code))

    attempts = ObserveAll(observer)
    sim.scheduler.attempts = attempts
    result = sim.run()
    assert calls == [("Filter", "Boom", "Error")]
    assert result.outcomes[0].result == "Error"
    assert attempts.ended == [("p", "Error")]
    attempts.observer = None
    calls.clear()
    sim.store.add_node(node("n2"))
    sim.run()
    assert calls == []


class AsyncBinder:
    """Bind that starts a binding and answers BindingPending; the test finishes it."""

    name = "AsyncBinder"

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []
        self.log: list[str] = []

    def bind(self, state: Any, p: Any, node_name: str) -> Status | None:
        self.started.append((p.uid, node_name))
        return BindingPending()

    def reserve(self, state: Any, p: Any, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: Any, p: Any, node_name: str) -> None:
        self.log.append(f"unreserve {p.name}")

    def post_bind(self, state: Any, p: Any, node_name: str) -> None:
        self.log.append(f"postbind {p.name}")


def async_sim() -> tuple[Simulation, AsyncBinder, str]:
    binder = AsyncBinder()
    sim = build({"AsyncBinder": binder}, [node("n1")], [pod("p")], first_binder="AsyncBinder")
    sim.run()
    ((uid, host),) = binder.started
    assert host == "n1"
    sched = sim.scheduler
    assert sched.binding_in_flight(uid) and sched.binds_in_flight == 1
    assert sched.cache.is_assumed(uid)
    assert sched.outcomes[uid].result == "Pending"
    return sim, binder, uid


def events_of(sim: Simulation, reason: str) -> list[str]:
    return [e.note for e in sim.store.events if e.reason == reason]


def test_async_binding_completes_with_post_bind_and_the_scheduled_event() -> None:
    sim, binder, uid = async_sim()
    sched = sim.scheduler
    assert not sched.complete_binding(uid, "elsewhere", None)  # not this binding

    def bind_meanwhile() -> None:  # what the binding did, during a scheduler step
        sim.store.bind(sim.store.pods[uid], "n1")
        assert sched.cache.is_assumed(uid)  # its watch event is not delivered yet

    sim.store.deliver_after(bind_meanwhile)  # delivered when the step ends
    assert sched.complete_binding(uid, "n1", None)
    assert not sched.binding_in_flight(uid)
    assert binder.log == ["postbind p"]
    assert sched.outcomes[uid].result == "Scheduled"
    assert events_of(sim, "Scheduled") == ["Successfully assigned default/p to n1"]
    assert not sched.cache.is_assumed(uid) and sched.cache.pod_node[uid] == "n1"
    assert not sched.complete_binding(uid, "n1", None)  # only once


def test_async_binding_conflict_forgets_the_pod_and_writes_nothing() -> None:
    sim, binder, uid = async_sim()
    sched = sim.scheduler
    assert sched.complete_binding(uid, "n1", Status(Code.ERROR, "409"), conflict=True)
    assert binder.log == ["unreserve p"]
    assert uid not in sched.cache.pod_node
    assert len(sched.queue) == 0  # not requeued: the watch tells the truth
    assert sched.outcomes[uid].result == "Error"
    assert events_of(sim, "FailedScheduling") == [] and sim.store.conditions == {}


def test_async_binding_error_takes_the_binding_failure_path() -> None:
    sim, binder, uid = async_sim()
    sched = sim.scheduler
    assert sched.complete_binding(uid, "n1", Status(Code.ERROR, "boom"))
    assert binder.log == ["unreserve p"]
    assert uid not in sched.cache.pod_node
    assert len(sched.queue) == 1  # back off and retry
    message = "running Bind plugin 'AsyncBinder': boom"
    assert sched.outcomes[uid].message == message
    assert events_of(sim, "FailedScheduling") == [message]
    assert sim.store.conditions[uid] == ("SchedulerError", message)


class NotC:
    name = "NotC"

    def filter(self, state: Any, p: Any, node_info: Any) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "not c") if p.name == "c" else None


def test_attempt_observer_pairs_up_and_scopes_the_plugin_observer() -> None:
    pods = [pod("a"), pod("b", priority=10), pod("c")]
    sim = build({"NotC": NotC()}, [node("n1")], pods)
    sched = sim.scheduler
    starts: list[str] = []
    ends: list[tuple[str, str]] = []
    seen: list[tuple[str, str]] = []
    current: list[str] = []

    def observer(point: str, plugin: str, code: str, seconds: float) -> None:
        seen.append((current[-1], point))

    class Attempts:
        def attempt_started(self, f: Any, info: Any) -> Any:
            starts.append(info.pod.name)
            current.append(info.pod.name)
            return observer if info.pod.name == "b" else None

        def attempt_ended(self, f: Any, p: Any, outcome: Any) -> None:
            ends.append((p.name, outcome.result))

    sched.attempts = Attempts()
    result = sim.run()
    # Only b's attempt was observed, through both of its cycles: the observer is per attempt.
    assert {name for name, _ in seen} == {"b"}
    assert ("b", "Filter") in seen and ("b", "Bind") in seen
    assert sorted(starts) == sorted(name for name, _ in ends)
    assert ("b", "Scheduled") in ends and ("c", "Unschedulable") in ends
    assert starts[0] == "b" and [p for _, p in seen].count("Bind") == 1
    assert {o.pod.name: o.result for o in result.outcomes}["b"] == "Scheduled"


class BindsThenFails:
    """A binder whose binding lands although it reports an error (a timed-out answer)."""

    name = "BindsThenFails"

    def __init__(self) -> None:
        self.handle: Any = None

    def bind(self, state: Any, p: Any, node_name: str) -> Status | None:
        self.handle.binder().bind(p, node_name)
        return Status(Code.ERROR, "timeout")


def test_failed_pod_that_is_bound_or_gone_is_not_requeued() -> None:
    binder = BindsThenFails()
    sim = build({"BindsThenFails": binder}, [node("n1")], [pod("p")], "BindsThenFails")
    binder.handle = sim.scheduler.handle
    result = sim.run()
    (o,) = result.outcomes
    assert o.result == "Error"
    assert sim.store.pods[o.pod.uid].node_name == "n1"
    assert len(sim.scheduler.queue) == 0
    assert events_of(sim, "FailedScheduling") == [] and sim.store.conditions == {}


def test_pod_deleted_while_waiting_at_permit_is_not_requeued() -> None:
    reg = registry(Gang=lambda args, handle: Gang(handle, 2, 30.0))
    cfg = config(["Gang"], reg.names())
    sim = Simulation(ClusterObjects(nodes=[node("n1")], pods=[pod("p")], others=[]), cfg, reg)
    sim.at(5.0, lambda: sim.store.delete_pod(next(iter(sim.store.pods.values())), ""))
    result = sim.run()
    (o,) = result.outcomes
    assert o.result == "Unschedulable"  # rejected at Permit by the deletion, not the timeout
    assert "pod deleted" in o.message
    assert result.simulated_seconds == 5.0
    assert not sim.scheduler.cache.assumed and not sim.scheduler.cache.nodes["n1"].pods
    assert len(sim.scheduler.queue) == 0
    assert events_of(sim, "FailedScheduling") == [] and sim.store.conditions == {}


def test_progress_reports_bound_pods_of_the_total() -> None:
    from wasmsched.api.manifests import ClusterObjects as Objects
    from wasmsched.sim.simulation import Simulation as Sim

    reg = registry(Fit=lambda args, handle: OnePodPerNode())
    cfg = config(["Fit"], reg.names())
    sim = Sim(Objects([node("n1"), node("n2")], [pod(f"p{i}") for i in range(3)], []), cfg, reg)
    calls: list[tuple[int, int]] = []
    sim.run(lambda done, total: calls.append((done, total)))
    assert calls[0] == (1, 3)
    assert calls[-1] == (2, 3)  # one pod stays unschedulable
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


class DeliveryOrder:
    """Bind plugin that writes the binding and reports what the handlers saw meanwhile."""

    name = "DeliveryOrder"

    def __init__(self) -> None:
        self.handle: Any = None
        self.assumed_after_write: list[bool] = []

    def bind(self, state: Any, p: Any, node_name: str) -> Status | None:
        status = self.handle.binder().bind(p, node_name)
        self.assumed_after_write.append(self.handle._scheduler.cache.is_assumed(p.uid))
        return status


def test_store_writes_reach_the_event_handlers_between_cycles() -> None:
    binder = DeliveryOrder()
    sim = build({"DeliveryOrder": binder}, [node("n1")], [pod("a"), pod("b")], "DeliveryOrder")
    binder.handle = sim.scheduler.handle
    result = sim.run()
    # Inside Bind the pod is still only assumed: the store's update is queued, and the
    # simulation hands it to on_pod_update after the cycle (it is confirmed by the end).
    assert binder.assumed_after_write == [True, True]
    assert {o.pod.name: o.result for o in result.outcomes} == {"a": "Scheduled", "b": "Scheduled"}
    assert not any(sim.scheduler.cache.is_assumed(o.pod.uid) for o in result.outcomes)


class WaitForA:
    """Permit: pod "a" waits (and times out); the others pass."""

    name = "WaitForA"

    def reserve(self, state: Any, p: Any, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: Any, p: Any, node_name: str) -> None:
        return None

    def permit(self, state: Any, p: Any, node_name: str) -> tuple[Status | None, float]:
        return (Status(Code.WAIT), 5.0) if p.name == "a" else (None, 0.0)


def test_a_waiting_pods_binding_cycle_keeps_its_attempts_observer() -> None:
    sim = build({"WaitForA": WaitForA()}, [node("n1")], [pod("a", priority=10), pod("b")])
    started: list[str] = []
    seen: list[tuple[str, str, str]] = []  # (point, plugin, attempt started last)

    def observer(point: str, plugin: str, code: str, seconds: float) -> None:
        seen.append((point, plugin, started[-1]))

    class OnlyA:
        def attempt_started(self, f: Any, info: Any) -> Any:
            started.append(info.pod.name)
            return observer if info.pod.name == "a" else None

        def attempt_ended(self, f: Any, p: Any, outcome: Any) -> None:
            return None

    sim.scheduler.attempts = OnlyA()
    sim.run()
    assert started[:2] == ["a", "b"]
    # a's Permit timed out after b's attempt began; its Unreserve is still reported to
    # a's observer (the state carries it), and none of b's calls are.
    assert ("Unreserve", "WaitForA", "b") in seen
    assert all(point != "Permit" or last == "a" for point, _, last in seen)
    assert ("Bind", "DefaultBinder", "b") not in seen
