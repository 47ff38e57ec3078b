"""Leader election on a Lease: client-go's rules, then two live replicas."""

from __future__ import annotations

import collections
import time
from typing import Any

import pytest

from apiserver import ApiServerDouble
from live_support import api_for, make_runner, node, placements, pod, wait
from wasmsched.live import LeaderElector, LeaseConfig

LEASE = LeaseConfig(
    namespace="kube-system", name="wasmsched", lease_duration=15, renew_deadline=10, retry_period=2
)
SHORT = LeaseConfig(
    namespace="kube-system",
    name="wasmsched",
    lease_duration=1.5,
    renew_deadline=1.0,
    retry_period=0.1,
)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble()
    server.start()
    yield server
    server.stop()


def spec(srv: ApiServerDouble) -> dict[str, Any]:
    lease = srv.get("Lease", "kube-system", "wasmsched")
    assert lease is not None
    return lease["spec"]


def elector(srv: ApiServerDouble, identity: str, clock: Clock) -> LeaderElector:
    return LeaderElector(api_for(srv), LEASE, identity, clock=clock)


def test_first_candidate_creates_the_lease(srv: ApiServerDouble) -> None:
    clock = Clock()
    a = elector(srv, "a", clock)
    assert a.try_acquire_or_renew()
    assert a.is_leader()
    s = spec(srv)
    assert s["holderIdentity"] == "a"
    assert s["leaseDurationSeconds"] == 15
    assert s["leaseTransitions"] == 0
    assert s["acquireTime"] == s["renewTime"]


def test_a_held_lease_is_taken_only_after_it_went_unrenewed_for_its_duration(
    srv: ApiServerDouble,
) -> None:
    clock = Clock()
    a, b = elector(srv, "a", clock), elector(srv, "b", clock)
    assert a.try_acquire_or_renew()
    acquired = spec(srv)["acquireTime"]
    assert not b.try_acquire_or_renew()
    clock.t += 10
    assert a.try_acquire_or_renew()  # a renews: same acquireTime, new renewTime
    assert spec(srv)["acquireTime"] == acquired
    assert not b.try_acquire_or_renew()  # b sees the renewal now (its own clock counts)
    clock.t += 14
    assert not b.try_acquire_or_renew()
    assert not b.is_leader()
    clock.t += 1.5
    assert not a.is_leader()  # past renew_deadline without a renewal: a stops by itself
    assert b.try_acquire_or_renew()
    s = spec(srv)
    assert (s["holderIdentity"], s["leaseTransitions"]) == ("b", 1)
    assert s["acquireTime"] != acquired


def test_concurrent_update_loses_on_resource_version(srv: ApiServerDouble) -> None:
    clock = Clock()
    a, b = elector(srv, "a", clock), elector(srv, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # b observes the record
    clock.t += 20
    # a's lease expired for b; a renews between b's read and b's write: b gets 409.
    original = b.api.request

    def racing(method: str, path: str, **kw: Any) -> dict[str, Any]:
        if method == "PUT":
            a.try_acquire_or_renew()
        return original(method, path, **kw)

    b.api.request = racing  # type: ignore[method-assign]
    assert not b.try_acquire_or_renew()
    assert spec(srv)["holderIdentity"] == "a"
    assert any(r[0] == "PUT" and r[2] == 409 for r in srv.requests)


def test_release_clears_the_holder_so_another_takes_over_at_once(srv: ApiServerDouble) -> None:
    clock = Clock()
    a, b = elector(srv, "a", clock), elector(srv, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release()
    s = spec(srv)
    assert s.get("holderIdentity") in (None, "")
    assert s["leaseDurationSeconds"] == 1
    assert not a.is_leader()
    assert b.try_acquire_or_renew()
    assert spec(srv)["leaseTransitions"] == 1


def test_healthz_watchdog_fails_a_leader_long_overdue(srv: ApiServerDouble) -> None:
    clock = Clock()
    a = elector(srv, "a", clock)
    assert a.healthy  # not leading: nothing to watch
    assert a.try_acquire_or_renew()
    clock.t += LEASE.lease_duration + 19
    assert a.healthy and not a.is_leader()
    clock.t += 2
    assert not a.healthy


@pytest.mark.parametrize(("duration", "deadline", "retry"), [(10, 10, 2), (15, 2, 2), (15, 10, 0)])
def test_inconsistent_timings_are_refused(duration: float, deadline: float, retry: float) -> None:
    with pytest.raises(ValueError):
        LeaseConfig(lease_duration=duration, renew_deadline=deadline, retry_period=retry).validate()


def test_two_replicas_bind_every_pod_exactly_once(srv: ApiServerDouble) -> None:
    for i in range(3):
        srv.create(node(f"node-{i}"))
    replicas = [
        make_runner(srv, leader_elect=True, lease=SHORT, identity=name).start()
        for name in ("replica-a", "replica-b")
    ]
    try:
        for i in range(10):
            srv.create(pod(f"web-{i:02d}"))
        wait(lambda: len(placements(srv)) == 10, what="first batch bound")
        leaders = [r for r in replicas if r.runner.leading.is_set()]
        assert len(leaders) == 1
        leader, standby = leaders[0], next(r for r in replicas if r is not leaders[0])
        assert standby.runner.scheduler.cycles == 0
        # The leader stops (SIGTERM): it releases the lease and the standby takes over
        # without waiting for the lease to expire.
        started = time.monotonic()
        assert leader.stop() == 0
        wait(lambda: standby.runner.leading.is_set(), timeout=5, what="standby leading")
        assert time.monotonic() - started < SHORT.lease_duration + 1
        for i in range(10, 16):
            srv.create(pod(f"web-{i:02d}"))
        wait(lambda: len(placements(srv)) == 16, what="second batch bound")
        time.sleep(0.2)
    finally:
        for r in replicas:
            if r.thread.is_alive():
                r.stop()
    counts = collections.Counter(b["name"] for b in srv.bindings if b["code"] == 201)
    assert len(counts) == 16 and set(counts.values()) == {1}
    lease = spec(srv)
    assert lease["leaseTransitions"] == 1
    assert lease.get("holderIdentity") in (None, "")  # the last one released it too


def test_a_leader_that_cannot_renew_stops_scheduling(srv: ApiServerDouble) -> None:
    srv.create(node("node-0"))
    replica = make_runner(srv, leader_elect=True, lease=SHORT, identity="replica-a").start()
    try:
        wait(lambda: replica.runner.leading.is_set(), what="leading")
        srv.faults.fail_next("*", r"/leases", status=500, count=1000)
        lost_at = time.monotonic()
        replica.thread.join(5)
        assert not replica.thread.is_alive()
        assert replica.code == 1  # kube-scheduler exits when it loses the lease
        assert time.monotonic() - lost_at < SHORT.renew_deadline + 1.5
        assert not replica.runner.is_leader()
        srv.create(pod("late-0"))
        time.sleep(0.3)
        assert placements(srv) == {}
    finally:
        if replica.thread.is_alive():
            replica.stop()
