"""DefaultPreemption: eligibility, victim selection, dry run, candidate choice and messages
(cases after default_preemption_test.go), on a real framework with in-tree filters."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_snapshot

from wasmsched.api.objects import Node, Pod
from wasmsched.framework import interfaces as fi
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import (
    MODE_OVERRIDE,
    NodeToStatus,
    NominatingInfo,
    PostFilterResult,
)
from wasmsched.framework.node_info import NodeInfo, PodInfo
from wasmsched.framework.runtime import Framework
from wasmsched.framework.status import Code, Status
from wasmsched.plugins import (
    default_binder,
    default_preemption,
    node_affinity,
    node_resources_fit,
    queue_sort,
    taint_toleration,
)
from wasmsched.plugins.default_preemption import DefaultPreemption
from wasmsched.plugins.preemption import pod_disruption_budgets

T0 = "2024-01-01T00:00:00Z"
T1 = "2024-01-01T00:00:01Z"


def pod(
    name: str,
    priority: int = 0,
    cpu: str = "1",
    node: str = "",
    *,
    labels: Mapping[str, str] | None = None,
    start: str | None = None,
    policy: str | None = None,
    nominated: str = "",
    deleting: bool = False,
    disruption_target: bool = False,
    node_selector: Mapping[str, str] | None = None,
) -> Pod:
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node:
        spec["nodeName"] = node
    if policy:
        spec["preemptionPolicy"] = policy
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": dict(labels or {})}
    if deleting:
        meta["deletionTimestamp"] = T0
    status: dict[str, Any] = {}
    if start:
        status["startTime"] = start
    if nominated:
        status["nominatedNodeName"] = nominated
    if disruption_target:
        status["conditions"] = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        ]
    return Pod({"kind": "Pod", "metadata": meta, "spec": spec, "status": status})


def node(name: str, cpu: str = "4", labels: Mapping[str, str] | None = None) -> Node:
    return make_node(name, allocatable={"cpu": cpu, "memory": "8Gi"}, labels=labels)


class WaitingPod:
    def __init__(self) -> None:
        self.rejected: list[tuple[str, str]] = []

    def reject(self, plugin: str, message: str) -> None:
        self.rejected.append((plugin, message))


class Handle(FakeHandle):
    """The SchedulerHandle runners preemption uses, over a fixed snapshot."""

    def __init__(
        self,
        nodes: Sequence[Node],
        pods: Sequence[Pod],
        objects: Mapping[str, list[Mapping[str, Any]]] | None = None,
        nominated: Mapping[str, list[Pod]] | None = None,
    ) -> None:
        super().__init__(make_snapshot(nodes, pods))
        self._objects = dict(objects or {})
        self.nominated = {n: [PodInfo(p) for p in ps] for n, ps in (nominated or {}).items()}
        self.deleted: list[tuple[str, str]] = []
        self.nominations: list[tuple[str, str]] = []
        self.waiting: dict[str, WaitingPod] = {}
        filters = [
            taint_toleration.new({}, self),
            node_affinity.new({}, self),
            node_resources_fit.new({}, self),
        ]
        points: dict[str, list[tuple[Any, int]]] = {
            fi.QUEUE_SORT: [(queue_sort.new({}, self), 0)],
            fi.BIND: [(default_binder.new({}, self), 0)],
        }
        for plugin in filters:
            for point in (fi.PRE_FILTER, fi.FILTER):
                if fi.implements(plugin, point):
                    points.setdefault(point, []).append((plugin, 0))
        self.fwk = Framework("default-scheduler", points)

    def framework_for(self, pod: Pod) -> Framework:
        return self.fwk

    def run_filter_plugins_with_nominated_pods(
        self, fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        nominated = [
            pi
            for pi in self.nominated.get(node_info.name, [])
            if pi.pod.uid != pod.uid and pi.pod.priority >= pod.priority
        ]
        if nominated:
            state_with, info_with = state.clone(), node_info.clone()
            for pi in nominated:
                info_with.add_pod_info(pi)
                fwk.run_pre_filter_extension_add_pod(state_with, pod, pi, info_with)
            status = fwk.run_filter_plugins(state_with, pod, info_with)
            if status is not None:
                return status
        return fwk.run_filter_plugins(state, pod, node_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.nominated.get(node_name, []))

    def delete_pod(self, pod: Pod, reason: str) -> None:
        self.deleted.append((pod.name, reason))

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        self.nominations.append((pod.name, node_name))

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return list(self._objects.get(kind, []))

    def extenders(self) -> list[Any]:
        return []

    def get_waiting_pod(self, uid: str) -> Any:
        return self.waiting.get(uid)


def plugin(handle: Handle, **args: int) -> DefaultPreemption:
    return default_preemption.new(
        {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100, **args}, handle
    )


def cycle(handle: Handle, preemptor: Pod) -> tuple[CycleState, NodeToStatus]:
    """PreFilter and Filter on every node, as the scheduling cycle before PostFilter."""
    state = CycleState()
    nodes = handle.snapshot().list()
    _, status, _ = handle.fwk.run_pre_filter_plugins(state, preemptor, nodes)
    nts = NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    if status is not None:
        nts.absent_nodes_status = status
        return state, nts
    for ni in nodes:
        s = handle.run_filter_plugins_with_nominated_pods(handle.fwk, state, preemptor, ni)
        assert s is not None, f"{preemptor.name} fits {ni.name}: nothing to preempt"
        nts.set(ni.name, s)
    return state, nts


def preempt(
    handle: Handle, preemptor: Pod, **args: int
) -> tuple[PostFilterResult | None, Status | None]:
    state, nts = cycle(handle, preemptor)
    return plugin(handle, **args).post_filter(state, preemptor, nts)


def nominated(name: str) -> PostFilterResult:
    return PostFilterResult(NominatingInfo(name, MODE_OVERRIDE))


PDB_APP_A = {
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "pdb", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "a"}}},
    "status": {"disruptionsAllowed": 0},
}

# (name, nodes, pods, preemptor, objects, chosen node, victims deleted)
PREEMPT_CASES: list[tuple[str, list[Node], list[Pod], Pod, dict[str, Any], str, list[str]]] = [
    (
        "a pod that fits on both nodes when lower priority pods are preempted: min priority wins",
        [node("n1"), node("n2")],
        [pod("low1", 10, "3", "n1"), pod("low2", 5, "3", "n2")],
        pod("p", 100, "2"),
        {},
        "n2",
        ["low2"],
    ),
    (
        "medium priority pod is preempted, but lower priority one stays as it is small",
        [node("n1")],
        [pod("low", 10, "1", "n1"), pod("mid", 50, "3", "n1")],
        pod("p", 100, "3"),
        {},
        "n1",
        ["mid"],
    ),
    (
        "mixed priority pods are preempted",
        [node("n1")],
        [
            pod("low", 10, "1", "n1"),
            pod("mid1", 50, "1", "n1", start=T0),
            pod("high", 200, "1", "n1"),
            pod("mid2", 50, "1", "n1", start=T1),
        ],
        pod("p", 100, "2"),
        {},
        "n1",
        ["mid2", "low"],
    ),
    (
        "equal priorities: the later started pod is the victim",
        [node("n1")],
        [pod("late", 50, "2", "n1", start=T1), pod("early", 50, "2", "n1", start=T0)],
        pod("p", 100, "2"),
        {},
        "n1",
        ["late"],
    ),
    (
        "a node whose victims violate no PDB is preferred to a lower-priority one",
        [node("n1"), node("n2")],
        [pod("guarded", 1, "3", "n1", labels={"app": "a"}), pod("free", 50, "3", "n2")],
        pod("p", 100, "2"),
        {"PodDisruptionBudget": [PDB_APP_A]},
        "n2",
        ["free"],
    ),
    (
        "PDB-violating victims are reprieved first",
        [node("n1")],
        [pod("guarded", 10, "2", "n1", labels={"app": "a"}), pod("other", 20, "2", "n1")],
        pod("p", 100, "2"),
        {"PodDisruptionBudget": [PDB_APP_A]},
        "n1",
        ["other"],
    ),
    (
        "only a PDB-violating candidate exists: it is taken",
        [node("n1")],
        [pod("guarded", 10, "3", "n1", labels={"app": "a"})],
        pod("p", 100, "2"),
        {"PodDisruptionBudget": [PDB_APP_A]},
        "n1",
        ["guarded"],
    ),
]


@pytest.mark.parametrize(
    ("nodes", "pods", "preemptor", "objects", "want_node", "want_victims"),
    [c[1:] for c in PREEMPT_CASES],
    ids=[c[0] for c in PREEMPT_CASES],
)
def test_preempt(
    nodes: list[Node],
    pods: list[Pod],
    preemptor: Pod,
    objects: dict[str, Any],
    want_node: str,
    want_victims: list[str],
) -> None:
    handle = Handle(nodes, pods, objects)
    result, status = preempt(handle, preemptor)
    assert status is None
    assert result == nominated(want_node)
    assert handle.deleted == [(v, "default/p") for v in want_victims]


# (name, nodes, pods, preemptor, message)
NO_CANDIDATE_CASES = [
    (
        "a pod that does not fit on any node",
        [node("n1"), node("n2")],
        [pod("low", 0, "1", "n1")],
        pod("p", 100, "5"),
        "preemption: 0/2 nodes are available: 1 Insufficient cpu, "
        "1 No preemption victims found for incoming pod.",
    ),
    (
        "other pods running are higher priority, no preemption would happen",
        [node("n1"), node("n2")],
        [pod("h1", 200, "3", "n1"), pod("h2", 200, "3", "n2")],
        pod("p", 100, "2"),
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
    ),
    (
        "unresolvable nodes are not helped by preemption",
        [node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"})],
        [pod("h1", 200, "3", "n1"), pod("low", 0, "3", "n2")],
        pod("p", 100, "2", node_selector={"zone": "a"}),
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.",
    ),
]


@pytest.mark.parametrize(
    ("nodes", "pods", "preemptor", "message"),
    [c[1:] for c in NO_CANDIDATE_CASES],
    ids=[c[0] for c in NO_CANDIDATE_CASES],
)
def test_no_candidate_clears_nomination_and_explains(
    nodes: list[Node], pods: list[Pod], preemptor: Pod, message: str
) -> None:
    handle = Handle(nodes, pods)
    result, status = preempt(handle, preemptor)
    assert result == nominated("")
    assert status == Status(Code.UNSCHEDULABLE, message)
    assert handle.deleted == []


def test_no_potential_node_at_all() -> None:
    handle = Handle([node("n1")], [])
    preemptor = pod("p", 100, "1")
    nts = NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x"))
    result, status = plugin(handle).post_filter(CycleState(), preemptor, nts)
    assert result == nominated("")
    assert status == Status(
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    )


# (name, preemptor, node pods, nominated node status, eligible, reason)
ELIGIBLE_CASES = [
    ("pod without nominated node", pod("p", 100), [], None, True, ""),
    (
        "pod with nominated node",
        pod("p", 100, nominated="n1"),
        [],
        Status(Code.UNSCHEDULABLE),
        True,
        "",
    ),
    (
        "pod with nominated node, but without nominated node status",
        pod("p", 100, nominated="n1"),
        [],
        None,
        True,
        "",
    ),
    (
        "Pod with 'PreemptNever' preemption policy",
        pod("p", 100, policy="Never"),
        [],
        None,
        False,
        "not eligible due to preemptionPolicy=Never.",
    ),
    (
        "preemption victim pod terminating, as indicated by the DisruptionTarget condition",
        pod("p", 100, nominated="n1"),
        [pod("v", 10, node="n1", deleting=True, disruption_target=True)],
        Status(Code.UNSCHEDULABLE),
        False,
        "not eligible due to a terminating pod on the nominated node.",
    ),
    (
        "non-victim pods terminating",
        pod("p", 100, nominated="n1"),
        [pod("v", 10, node="n1", deleting=True)],
        Status(Code.UNSCHEDULABLE),
        True,
        "",
    ),
    (
        "terminating pod of higher priority does not count",
        pod("p", 100, nominated="n1"),
        [pod("v", 200, node="n1", deleting=True, disruption_target=True)],
        Status(Code.UNSCHEDULABLE),
        True,
        "",
    ),
    (
        "nominated node unresolvable: preempt again",
        pod("p", 100, nominated="n1"),
        [pod("v", 10, node="n1", deleting=True, disruption_target=True)],
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        True,
        "",
    ),
    (
        "the nominated node is gone",
        pod("p", 100, nominated="gone"),
        [],
        Status(Code.UNSCHEDULABLE),
        True,
        "",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "pods", "nominated_status", "eligible", "reason"),
    [c[1:] for c in ELIGIBLE_CASES],
    ids=[c[0] for c in ELIGIBLE_CASES],
)
def test_pod_eligible_to_preempt_others(
    preemptor: Pod,
    pods: list[Pod],
    nominated_status: Status | None,
    eligible: bool,
    reason: str,
) -> None:
    pl = plugin(Handle([node("n1")], pods))
    assert pl.pod_eligible_to_preempt_others(preemptor, nominated_status) == (eligible, reason)


def test_not_eligible_message_is_prefixed() -> None:
    handle = Handle([node("n1")], [pod("low", 0, "4", "n1")])
    result, status = preempt(handle, pod("p", 100, "1", policy="Never"))
    assert result is None
    assert status == Status(
        Code.UNSCHEDULABLE, "preemption: not eligible due to preemptionPolicy=Never."
    )


@pytest.mark.parametrize(
    ("num_nodes", "percentage", "absolute", "want"),
    [
        (0, 10, 100, 0),
        (50, 50, 100, 50),
        (1000, 10, 100, 100),
        (1000, 40, 100, 400),
        (1000, 0, 10, 10),
        (10, 100, 0, 10),
        (10, 1, 1, 1),
    ],
)
def test_calculate_num_candidates(
    num_nodes: int, percentage: int, absolute: int, want: int
) -> None:
    pl = plugin(
        Handle([], []), minCandidateNodesPercentage=percentage, minCandidateNodesAbsolute=absolute
    )
    assert pl.calculate_num_candidates(num_nodes) == want


def test_offset_is_deterministic_and_in_range() -> None:
    pl = plugin(Handle([], []))
    p = pod("p", 100)
    offsets = {pl.get_offset_and_num_candidates(p, 7)[0] for _ in range(5)}
    assert len(offsets) == 1 and 0 <= offsets.pop() < 7
    assert pl.get_offset_and_num_candidates(p, 7)[1] == 7


def _dry_run(
    nodes: list[Node], pods: list[Pod], objects: dict[str, Any], offset: int, num: int
) -> list[tuple[str, list[str], int]]:
    handle = Handle(nodes, pods, objects)
    preemptor = pod("p", 100, "2")
    state, _ = cycle(handle, preemptor)
    pl = plugin(handle)
    candidates, _, errors = pl.evaluator.dry_run_preemption(
        handle.fwk,
        state,
        preemptor,
        handle.snapshot().list(),
        pod_disruption_budgets(objects.get("PodDisruptionBudget", [])),
        offset,
        num,
    )
    assert errors == []
    return [(c.name, [v.name for v in c.victims], c.num_pdb_violations) for c in candidates]


FOUR = [node("n1"), node("n2"), node("n3"), node("n4")]
LOW_ON_EACH = [pod(f"low{i}", 10, "3", f"n{i}") for i in range(1, 5)]


def test_dry_run_limits_candidates_from_offset_with_wrap_around() -> None:
    assert _dry_run(FOUR, LOW_ON_EACH, {}, 3, 2) == [
        ("n4", ["low4"], 0),
        ("n1", ["low1"], 0),
    ]


def test_dry_run_looks_past_num_candidates_until_a_non_violating_node() -> None:
    guarded = [pod(f"g{i}", 10, "3", f"n{i}", labels={"app": "a"}) for i in (1, 2)]
    pods = [*guarded, pod("free", 10, "3", "n3")]
    got = _dry_run(FOUR[:3], pods, {"PodDisruptionBudget": [PDB_APP_A]}, 0, 1)
    # n2's violating candidate is dropped: the list of violating ones is full.
    assert got == [("n3", ["free"], 0), ("n1", ["g1"], 1)]


def test_prepare_candidate_evicts_and_clears_lower_nominations() -> None:
    waiting_victim = pod("waiting", 5, "1", "n1")
    pods = [
        pod("v1", 10, "1", "n1"),
        waiting_victim,
        pod("gone", 10, "1", "n1", deleting=True),
        pod("v2", 10, "1", "n1"),
    ]
    nominated_pods = {"n1": [pod("lower", 50), pod("higher", 200)]}
    handle = Handle([node("n1")], pods, nominated=nominated_pods)
    handle.waiting[waiting_victim.uid] = wp = WaitingPod()
    # The higher-priority nominated pod keeps 1 cpu: every lower pod goes.
    result, status = preempt(handle, pod("p", 100, "3"))
    assert (result, status) == (nominated("n1"), None)
    assert sorted(handle.deleted) == [("v1", "default/p"), ("v2", "default/p")]
    assert wp.rejected == [("DefaultPreemption", "preempted")]
    assert handle.nominations == [("lower", "")]


def test_higher_priority_nominated_pods_count_against_the_node() -> None:
    # A nominated pod of higher priority keeps its room: evicting the low pod is not enough.
    handle = Handle(
        [node("n1")], [pod("low", 10, "2", "n1")], nominated={"n1": [pod("nom", 500, "2")]}
    )
    result, status = preempt(handle, pod("p", 100, "3"))
    assert result == nominated("")
    assert status == Status(
        Code.UNSCHEDULABLE, "preemption: 0/1 nodes are available: 1 Insufficient cpu."
    )


def test_new_defaults_and_events() -> None:
    pl = default_preemption.new({}, Handle([], []))
    assert (pl.min_candidate_nodes_percentage, pl.min_candidate_nodes_absolute) == (10, 100)
    assert pl.events_to_register() == []
    assert fi.implements(pl, fi.POST_FILTER)
    assert not fi.implements(pl, fi.FILTER)


# --- the dry run's fast path for nodes without potential victims ---------------------------

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _without_victimless(pl: DefaultPreemption) -> None:
    pl.victimless_status = None  # type: ignore[assignment,method-assign]
    pl.victimless_statuses = None  # type: ignore[assignment,method-assign]


def _post_filter_both_ways(
    nodes: list[Node],
    pods: list[Pod],
    preemptor: Pod,
    slow: Callable[[DefaultPreemption], None] = _without_victimless,
    nominated_pods: Mapping[str, list[Pod]] | None = None,
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The dry run over every node (from offset 1, 2 candidates) and post_filter, with the
    plugin's fast paths and without (``slow`` turns them off), each on a fresh handle."""
    outcomes = []
    for fast in (True, False):
        handle = Handle(nodes, pods, nominated=nominated_pods)
        state = CycleState()
        all_nodes = handle.snapshot().list()
        _, status, _ = handle.fwk.run_pre_filter_plugins(state, preemptor, all_nodes)
        assume(status is None)
        nts = NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        for ni in all_nodes:
            s = handle.run_filter_plugins_with_nominated_pods(handle.fwk, state, preemptor, ni)
            assume(s is not None)  # PostFilter runs only when no node fits
            assert s is not None
            nts.set(ni.name, s)
        pl = plugin(handle)
        if not fast:
            slow(pl)
        candidates, statuses, errors = pl.evaluator.dry_run_preemption(
            handle.fwk, state, preemptor, all_nodes, [], 1, 2
        )
        dry = [(c.name, [v.name for v in c.victims], c.num_pdb_violations) for c in candidates]
        # The statuses are reported only without candidates.
        reported = None if candidates else (dict(statuses.explicit()), errors)
        result, status = pl.post_filter(state, preemptor, nts)
        outcomes.append(
            (
                dry,
                reported,
                result,
                None if status is None else (status.code, status.message),
                list(handle.deleted),
                [(n.name, sorted(p.pod.name for p in n.pods)) for n in all_nodes],
            )
        )
    return outcomes[0], outcomes[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    st.lists(st.sampled_from(["2", "4"]), min_size=1, max_size=5),
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from([0, 10, 100]), st.sampled_from(["1", "2"])),
        max_size=10,
    ),
    st.sampled_from([0, 10, 100]),
    st.sampled_from(["1", "2", "3"]),
)
def test_victimless_fast_path_matches_the_full_dry_run(
    cpus: list[str], placed: list[tuple[int, int, str]], priority: int, cpu: str
) -> None:
    nodes = [node(f"n{i}", c) for i, c in enumerate(cpus)]
    pods = [
        pod(f"r{j}", prio, req, f"n{i % len(nodes)}", start=T0)
        for j, (i, prio, req) in enumerate(placed)
    ]
    fast, slow = _post_filter_both_ways(nodes, pods, pod("p", priority, cpu))
    assert fast == slow


def test_victimless_status_only_for_nodes_without_lower_priority_pods() -> None:
    handle = Handle([node("n1"), node("n2")], [pod("a", 100, "1", "n1"), pod("b", 5, "1", "n2")])
    pl = plugin(handle)
    n1, n2 = handle.snapshot().list()
    got = pl.victimless_status(pod("p", 10), n1)
    assert got == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, default_preemption.NO_VICTIMS)
    assert pl.victimless_status(pod("p", 10), n2) is None
    assert pl.victimless_status(pod("p", 5), n2) is not None  # equal priority: no victim
    assert pl.victimless_statuses(pod("p", 10), [n1, n2, n1]) is None
    assert pl.victimless_statuses(pod("p", 10), [n1, n1]) == [got, got]
    assert pl.victimless_statuses(pod("p", 5), [n1, n2]) == [got, got]


def test_victimless_status_follows_the_node_as_pods_come_and_go() -> None:
    handle = Handle([node("n1")], [pod("a", 100, "1", "n1")])
    pl = plugin(handle)
    (n1,) = handle.snapshot().list()
    assert pl.victimless_status(pod("p", 10), n1) is not None
    low = pod("low", 0, "1", "n1")
    n1.add_pod(low)  # the node changed: the cached lowest priority is stale
    assert pl.victimless_status(pod("p", 10), n1) is None
    n1.remove_pod(low)
    assert pl.victimless_status(pod("p", 10), n1) is not None
    other = NodeInfo(node("n1"))  # a node re-created under the same name
    other.add_pod(low)
    assert pl.victimless_status(pod("p", 10), other) is None


# --- the dry run's Fit bound: hopeless nodes and reprieves decided by NodeResourcesFit -------


def _without_fit_bound(pl: DefaultPreemption) -> None:
    pl.hopeless = None  # type: ignore[assignment,method-assign]
    pl._fit_bound = lambda *_: None  # type: ignore[method-assign]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    st.lists(st.sampled_from(["2", "4"]), min_size=1, max_size=5),
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from([0, 5, 100]), st.sampled_from(["1", "2"])),
        max_size=10,
    ),
    st.lists(st.tuples(st.integers(0, 4), st.sampled_from([5, 10, 100])), max_size=3),
    st.sampled_from([10, 100]),
    st.sampled_from(["1", "2", "3"]),
    st.booleans(),
)
def test_fit_bound_matches_the_full_dry_run(
    cpus: list[str],
    placed: list[tuple[int, int, str]],
    nominations: list[tuple[int, int]],
    priority: int,
    cpu: str,
    taint_first: bool,
) -> None:
    nodes = [node(f"n{i}", c) for i, c in enumerate(cpus)]
    pods = [
        pod(f"r{j}", prio, req, f"n{i % len(nodes)}", start=f"2024-01-01T00:00:0{j % 10}Z")
        for j, (i, prio, req) in enumerate(placed)
    ]
    nominated_pods: dict[str, list[Pod]] = {}
    for k, (i, prio) in enumerate(nominations):
        name = f"n{i % len(nodes)}"
        nominated_pods.setdefault(name, []).append(pod(f"nom{k}", prio, "1", nominated=name))
    if taint_first:
        tainted = {"key": "k", "effect": "NoSchedule"}
        nodes[0] = make_node("n0", allocatable={"cpu": cpus[0], "memory": "8Gi"}, taints=[tainted])
    preemptor = pod("p", priority, cpu)
    fast, slow = _post_filter_both_ways(nodes, pods, preemptor, _without_fit_bound, nominated_pods)
    assert fast == slow


class _CountingClones:
    """Counts NodeInfo.clone and the Filter runs while patched in."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, handle: Handle) -> None:
        self.clones = 0
        self.filters = 0
        clone = NodeInfo.clone
        run = handle.fwk.run_filter_plugins

        def counting_clone(ni: NodeInfo) -> NodeInfo:
            self.clones += 1
            return clone(ni)

        def counting_run(state: CycleState, p: Pod, ni: NodeInfo) -> Status | None:
            self.filters += 1
            return run(state, p, ni)

        monkeypatch.setattr(NodeInfo, "clone", counting_clone)
        monkeypatch.setattr(handle.fwk, "run_filter_plugins", counting_run)


def test_hopeless_nodes_are_neither_cloned_nor_filtered(monkeypatch: pytest.MonkeyPatch) -> None:
    # n0..n8 hold a high-priority pod of 3 CPU and a low one of 1: with the low one gone
    # the preemptor (2 CPU) still does not fit. Only n9, with two low pods, can help.
    nodes = [node(f"n{i}") for i in range(10)]
    pods = [pod(f"high{i}", 100, "3", f"n{i}") for i in range(9)]
    pods += [pod(f"low{i}", 0, "1", f"n{i}") for i in range(9)]
    pods += [pod("low9a", 0, "2", "n9", start=T0), pod("low9b", 0, "2", "n9", start=T1)]
    handle = Handle(nodes, pods)
    preemptor = pod("p", 10, "2")
    state, nts = cycle(handle, preemptor)
    counts = _CountingClones(monkeypatch, handle)
    pl = plugin(handle)
    pl.candidates_by_sums = None  # type: ignore[assignment,method-assign]  # node by node
    result, status = pl.post_filter(state, preemptor, nts)
    assert (result, status) == (nominated("n9"), None)
    assert handle.deleted == [("low9b", "default/p")]
    # n9 alone: its clone, then the Filter after removing both low pods and for low9a's
    # return (low9b's return is rejected by Fit's arithmetic alone).
    assert (counts.clones, counts.filters) == (1, 2)
    # The dry run by sums clones nothing and runs no Filter.
    counts = _CountingClones(monkeypatch, handle)
    handle.deleted.clear()
    result, status = plugin(handle).post_filter(state, preemptor, nts)
    assert (result, status) == (nominated("n9"), None)
    assert handle.deleted == [("low9b", "default/p")]
    assert (counts.clones, counts.filters) == (0, 0)


def test_hopeless_nodes_get_their_statuses_when_no_node_helps() -> None:
    nodes = [node("n0"), node("n1")]
    pods = [pod("high0", 100, "3", "n0"), pod("low0", 0, "1", "n0")]
    pods += [pod("high1", 100, "4", "n1")]
    handle = Handle(nodes, pods)
    preemptor = pod("p", 10, "2")
    state, _ = cycle(handle, preemptor)
    pl = plugin(handle)
    candidates, statuses, errors = pl.evaluator.dry_run_preemption(
        handle.fwk, state, preemptor, handle.snapshot().list(), [], 0, 2
    )
    assert candidates == [] and errors == []
    assert statuses.explicit() == {
        "n0": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
        "n1": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, default_preemption.NO_VICTIMS),
    }


# --- the dry run by sums: outcomes kept per node across preemptions -------------------------


def _candidates(
    handle: Handle, pl: DefaultPreemption, preemptor: Pod
) -> list[tuple[str, list[str]]]:
    state, _ = cycle(handle, preemptor)
    candidates, _, _ = pl.evaluator.dry_run_preemption(
        handle.fwk, state, preemptor, handle.snapshot().list(), [], 0, 2
    )
    return [(c.name, [v.name for v in c.victims]) for c in candidates]


def test_outcomes_kept_by_sums_follow_the_nominated_pods() -> None:
    handle = Handle(
        [node("n0"), node("n1")], [pod("low0", 0, "2", "n0"), pod("low1", 0, "2", "n1")]
    )
    pl = plugin(handle)
    preemptor = pod("p", 10, "3")
    assert _candidates(handle, pl, preemptor) == [("n0", ["low0"]), ("n1", ["low1"])]
    # A pod of higher priority nominated to n0 keeps 2 CPU there: n0 no longer helps,
    # though the node itself did not change.
    handle.nominated["n0"] = [PodInfo(pod("nom", 100, "2", nominated="n0"))]
    assert _candidates(handle, pl, preemptor) == [("n1", ["low1"])]
    assert _candidates(handle, plugin(handle), preemptor) == [("n1", ["low1"])]


def test_outcomes_kept_by_sums_follow_the_preemptor() -> None:
    handle = Handle([node("n0")], [pod("a", 0, "2", "n0"), pod("b", 7, "2", "n0")])
    pl = plugin(handle)
    assert _candidates(handle, pl, pod("p10", 10, "3")) == [("n0", ["b", "a"])]
    # Of lower priority than b, the same request does not fit with a alone gone.
    assert _candidates(handle, pl, pod("p5", 5, "3")) == []
    # The same priority and a smaller request: b stays; then the larger one again.
    assert _candidates(handle, pl, pod("q10", 10, "2")) == [("n0", ["a"])]
    assert _candidates(handle, pl, pod("r10", 10, "3")) == [("n0", ["b", "a"])]


def _pick_by_stages(candidates: Sequence[Any]) -> str:
    """pickOneNodeForPreemption as preemption.go writes it: each score function keeps the
    candidates with its highest score, the next one runs only on ties, then the first."""
    from wasmsched.plugins.preemption import pod_start_time

    def earliest(victims: Sequence[Pod]) -> float:
        top = max(p.priority for p in victims)
        return min(pod_start_time(p) for p in victims if p.priority == top)

    scores: list[Callable[[Any], float]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + 2**31 for p in c.victims),
        lambda c: -len(c.victims),
        lambda c: earliest(c.victims),
    ]
    remaining = list(candidates)
    for score in scores:
        best = max(score(c) for c in remaining)
        remaining = [c for c in remaining if score(c) == best]
        if len(remaining) == 1:
            break
    return str(remaining[0].name)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),
            st.lists(
                st.tuples(st.sampled_from([-5, 0, 3, 7]), st.sampled_from([None, 0, 1, 2])),
                min_size=1,
                max_size=4,
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_pick_one_node_for_preemption_follows_the_criteria_in_order(
    shapes: list[tuple[int, list[tuple[int, int | None]]]],
) -> None:
    from wasmsched.plugins.preemption import Candidate, importance_key, pick_one_node_for_preemption

    candidates = []
    for i, (violations, victims) in enumerate(shapes):
        pods = [
            pod(f"v{i}-{j}", prio, start=None if s is None else f"2024-01-01T00:00:0{s}Z")
            for j, (prio, s) in enumerate(victims)
        ]
        pods.sort(key=importance_key)
        candidates.append(Candidate(f"n{i}", pods, violations))
    assert pick_one_node_for_preemption(candidates) == _pick_by_stages(candidates)
