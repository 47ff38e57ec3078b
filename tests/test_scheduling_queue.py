"""The scheduling queue: ordering, backoff, the unschedulable pool, hints, in-flight events."""

from __future__ import annotations

from typing import Any

import pytest

from sched_support import pod
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    ASSIGNED_POD_ADD,
    NODE,
    NODE_ADD,
    POD,
    RESOURCE_CLAIM,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.queue.scheduling_queue import SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class FakeFramework:
    """What the queue needs of a profile: QueueSort, PreEnqueue, EventsToRegister."""

    def __init__(self, events: list[tuple[str, Any]] | None = None, gate: Any = None) -> None:
        self._events = events or []
        self.gate = gate
        self.queue_sort = self  # the queue orders by the QueueSort plugin's less

    def less(self, a: Any, b: Any) -> bool:
        if a.pod.priority != b.pod.priority:
            return bool(a.pod.priority > b.pod.priority)
        return bool((a.timestamp, a.seq) < (b.timestamp, b.seq))

    def run_pre_enqueue_plugins(self, p: Any) -> Status | None:
        return self.gate(p) if self.gate else None

    def events_to_register(self) -> list[tuple[str, Any]]:
        return self._events


def make_queue(
    fwk: FakeFramework | None = None,
    backoff_by_unschedulable_count: bool = False,
    pop_from_backoff: bool = False,
) -> tuple[SchedulingQueue, Clock]:
    clock = Clock()
    q = SchedulingQueue(
        clock,
        {"default-scheduler": fwk or FakeFramework()},  # type: ignore[dict-item]
        backoff_by_unschedulable_count=backoff_by_unschedulable_count,
        pop_from_backoff=pop_from_backoff,
    )
    return q, clock


def test_active_queue_pops_by_priority_then_arrival() -> None:
    q, _ = make_queue()
    for name, prio in [("a", 1), ("b", 10), ("c", 1), ("d", 10)]:
        q.add(pod(name, priority=prio))
    order = []
    while (info := q.pop()) is not None:
        order.append(info.pod.name)
    assert order == ["b", "d", "a", "c"]


@pytest.mark.parametrize(
    ("attempts", "expected"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)]
)
def test_backoff_doubles_up_to_the_maximum(attempts: int, expected: float) -> None:
    q, _ = make_queue()
    q.add(pod("p"))
    info = q.pop()
    assert info is not None
    info.attempts = attempts
    assert q.backoff_duration(info) == expected


# Each attempt fails with an error (no plugin to blame, "E") or a plugin's rejection ("U");
# the backoff after the last one: 1.33 doubles per attempt, 1.34+ per rejection, or per
# consecutive error once the last attempt was an error.
@pytest.mark.parametrize(
    ("attempts", "backoff_133", "backoff_134"),
    [
        ("U", 1.0, 1.0),
        ("UUU", 4.0, 4.0),
        ("EEU", 4.0, 1.0),
        ("EEEU", 8.0, 1.0),
        ("UUE", 4.0, 1.0),
        ("UUEE", 8.0, 2.0),
        ("UEU", 4.0, 2.0),
        ("UUUUUU", 10.0, 10.0),
    ],
)
@pytest.mark.parametrize("by_count", [False, True])
def test_backoff_after_rejections_and_errors(
    attempts: str, backoff_133: float, backoff_134: float, by_count: bool
) -> None:
    queue, clock = make_queue(backoff_by_unschedulable_count=by_count)
    queue.add(pod("p"))
    for outcome in attempts:
        clock.t += 100.0  # every backoff is over: the pod is back in activeQ
        queue.flush_backoff_completed()
        info = queue.pop()
        assert info is not None
        info.unschedulable_plugins = {"NodeResourcesFit"} if outcome == "U" else set()
        queue.add_unschedulable(info)
        if outcome == "U":
            queue.on_event(UNSCHEDULABLE_TIMEOUT)  # out of the pool, into backoffQ
    expiry = queue.next_backoff_expiry()
    assert expiry is not None
    assert expiry - clock.t == (backoff_134 if by_count else backoff_133)


def fail(q: SchedulingQueue, plugin: str | None) -> Any:
    info = q.pop()
    assert info is not None
    info.unschedulable_plugins = {plugin} if plugin else set()
    return info, q.add_unschedulable(info)


def test_error_without_plugin_goes_to_backoff_and_flushes_after_it() -> None:
    q, clock = make_queue()
    q.add(pod("p"))
    _, where = fail(q, None)
    assert where == "backoff"
    assert q.next_backoff_expiry() == 1.0
    clock.t = 0.5
    assert q.flush_backoff_completed() == 0
    clock.t = 1.0
    assert q.flush_backoff_completed() == 1
    assert q.pop() is not None


def test_rejected_pod_waits_in_the_pool_until_a_matching_event() -> None:
    registered = [("Fit", ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)))]
    q, clock = make_queue(FakeFramework(registered))
    q.add(pod("p"))
    _, where = fail(q, "Fit")
    assert where == "unschedulable"
    assert q.on_event(ClusterEvent(POD, ActionType.DELETE)) == 0  # not registered
    clock.t = 5.0  # past the 1 s backoff
    assert q.on_event(NODE_ADD) == 1
    assert q.pop() is not None


def test_queueing_hint_can_skip_the_event() -> None:
    calls: list[Any] = []

    def hint(p: Any, old: Any, new: Any) -> QueueingHint:
        calls.append(new)
        return QueueingHint.QUEUE if new == "good" else QueueingHint.QUEUE_SKIP

    registered = [("Fit", ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD), hint))]
    q, _clock = make_queue(FakeFramework(registered))
    q.add(pod("p"))
    fail(q, "Fit")
    assert q.on_event(NODE_ADD, None, "bad") == 0
    assert q.on_event(NODE_ADD, None, "good") == 1
    assert calls == ["bad", "good"]


def test_a_failing_hint_queues_the_pod() -> None:
    def hint(p: Any, old: Any, new: Any) -> QueueingHint:
        raise RuntimeError("bug")

    registered = [("Fit", ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD), hint))]
    q, _ = make_queue(FakeFramework(registered))
    q.add(pod("p"))
    fail(q, "Fit")
    assert q.on_event(NODE_ADD) == 1


def test_event_during_the_cycle_is_not_lost() -> None:
    registered = [("Fit", ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)))]
    q, _clock = make_queue(FakeFramework(registered))
    q.add(pod("p"))
    info = q.pop()
    assert info is not None
    q.on_event(NODE_ADD)  # arrives while "p" is being scheduled
    info.unschedulable_plugins = {"Fit"}
    # requeued (after its backoff) rather than parked until the next event
    assert q.add_unschedulable(info) == "backoff"


@pytest.mark.parametrize("pop_from_backoff", [True, False])
def test_empty_active_queue_pops_rejected_pods_from_backoff(pop_from_backoff: bool) -> None:
    """SchedulerPopFromBackoffQ (active_queue.go: unlockedPop): with activeQ empty, Pop
    takes backoffQ's head, by backoff expiry aligned to the second, then priority
    (backoff_queue.go: lessBackoffCompletedWithPriority); never an errored pod
    (podErrorBackoffQ). Without the gate, Pop waits for the backoff flush."""
    registered = [("Fit", ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)))]
    q, clock = make_queue(FakeFramework(registered), pop_from_backoff=pop_from_backoff)
    for name, prio in [("low", 1), ("high", 10), ("again", 100), ("broken", 1000)]:
        q.add(pod(name, priority=prio))
    fail(q, None)  # broken: an error, into podErrorBackoffQ
    again = q.pop()
    assert again is not None
    again.attempts = 2  # its second attempt: a 2 s backoff (1.33)
    again.unschedulable_plugins = {"Fit"}
    q.on_event(NODE_ADD)  # in flight: each rejected pod goes to backoffQ
    assert q.add_unschedulable(again) == "backoff"
    clock.t = 0.25
    for _ in range(2):
        info = q.pop()
        assert info is not None
        info.unschedulable_plugins = {"Fit"}
        q.on_event(NODE_ADD)
        assert q.add_unschedulable(info) == "backoff"
    assert q.active_len() == 0 and len(q.backoff_infos()) == 4
    q.add(pod("new"))
    popped = [info.pod.name for info in iter(q.pop, None)]
    if pop_from_backoff:
        # high and low's expiries, 1.25 s, share a window: priority orders them.
        assert popped == ["new", "high", "low", "again"]
        assert [info.pod.name for info in q.backoff_infos()] == ["broken"]
    else:
        assert popped == ["new"]


def test_pending_plugin_queues_immediately_without_backoff() -> None:
    registered = [("Gate", ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)))]
    q, _ = make_queue(FakeFramework(registered))
    q.add(pod("p"))
    info = q.pop()
    assert info is not None
    info.pending_plugins = {"Gate"}
    assert q.add_unschedulable(info) == "unschedulable"
    q.on_event(NODE_ADD)
    assert q.active_len() == 1  # no backoff for Pending


def test_pre_enqueue_gates_until_the_pod_is_updated() -> None:
    def gate(p: Any) -> Status | None:
        if p.scheduling_gates:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated", plugin="SchedulingGates")
        return None

    q, _ = make_queue(FakeFramework(gate=gate))
    gated = pod("p", schedulingGates=[{"name": "example.com/wait"}])
    q.add(gated)
    assert q.pop() is None
    assert q.on_event(ASSIGNED_POD_ADD) == 0  # gated pods ignore cluster events
    q.update(gated, pod("p"))
    assert q.pop() is not None


def test_a_pod_gated_by_another_plugin_hears_that_plugins_events() -> None:
    # movePodsToActiveOrBackoffQueue: only SchedulingGates' pods skip cluster events; a pod
    # DynamicResources holds back until its claim exists moves when the claim is added.
    claims: set[str] = set()

    def gate(p: Any) -> Status | None:
        if p.name in claims:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no claim", plugin="DynamicResources")

    claim_added = ClusterEvent(RESOURCE_CLAIM, ActionType.ADD)
    registered = [("DynamicResources", ClusterEventWithHint(claim_added))]
    q, _ = make_queue(FakeFramework(registered, gate=gate))
    q.add(pod("p"))
    assert q.pop() is None
    assert q.on_event(NODE_ADD) == 0  # not an event of the gating plugin
    assert q.on_event(claim_added) == 0  # PreEnqueue still says no: the pod stays gated
    claims.add("p")
    assert q.on_event(claim_added) == 1
    assert q.pop() is not None


def test_leftover_flush_moves_pods_after_five_minutes() -> None:
    q, clock = make_queue(FakeFramework([("Fit", None)]))
    q.add(pod("p"))
    fail(q, "Fit")
    clock.t = 300.0
    assert q.flush_unschedulable_leftover() == 0  # strictly longer than 5 minutes
    clock.t = 330.0
    assert q.flush_unschedulable_leftover() == 1
    assert q.pop() is not None


def test_deleted_pod_leaves_every_queue() -> None:
    q, _ = make_queue()
    p = pod("p")
    q.add(p)
    q.delete(p)
    assert q.pop() is None
    assert len(q) == 0
