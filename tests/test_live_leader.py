"""Leader election on a Lease: client-go's rules, then two live replicas."""

from __future__ import annotations

import collections
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from apiserver import ApiServerDouble
from live_support import (
    ManualClock,
    api_for,
    make_runner,
    node,
    placements,
    pod,
    replica_command,
    replica_env,
    stop_replicas,
    wait,
)
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


def elector(srv: ApiServerDouble, identity: str, clock: ManualClock) -> LeaderElector:
    return LeaderElector(api_for(srv), LEASE, identity, clock=clock)


def test_first_candidate_creates_the_lease(srv: ApiServerDouble) -> None:
    clock = ManualClock()
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
    clock = ManualClock()
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
    clock = ManualClock()
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
    clock = ManualClock()
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
    clock = ManualClock()
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


def test_the_term_goes_up_on_acquisition_and_after_a_lapsed_renewal(srv: ApiServerDouble) -> None:
    clock = ManualClock()
    a = elector(srv, "a", clock)
    assert a.term == 0
    assert a.try_acquire_or_renew()
    assert a.term == 1
    clock.t += LEASE.renew_deadline - 1
    assert a.try_acquire_or_renew()
    assert a.term == 1  # renewed in time: the same term
    clock.t += LEASE.renew_deadline + 0.1
    assert not a.is_leader()  # past the renew deadline by its own clock
    assert a.try_acquire_or_renew()  # nobody took the lease: renewed, but a new term
    assert a.term == 2 and a.is_leader()


def _lease_holder(srv: ApiServerDouble) -> str:
    lease = srv.get("Lease", "kube-system", "wasmsched")
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


def _ok_bindings(srv: ApiServerDouble, agent: str | None = None) -> list[dict[str, Any]]:
    return [
        b
        for b in list(srv.bindings)
        if b["code"] == 201 and (agent is None or b["userAgent"] == agent)
    ]


@pytest.mark.parametrize("past_the_lease", [True, False], ids=["deposed", "still-leading"])
def test_a_paused_leader_sends_nothing_once_deposed(
    srv: ApiServerDouble, tmp_path: Path, past_the_lease: bool
) -> None:
    # SIGSTOP of a leading replica with bindings queued (lease 4 s, renew deadline 3 s).
    # Past the lease, a standby takes over; the resumed replica must send no binding (it sent
    # bindings 3.3 s after the new leader began, for the very pods the new leader bound,
    # refused only by the API server's 409) and exit. Within the renew deadline, it goes on
    # leading and the standby binds nothing. Either way every pod is bound exactly once.
    n_pods = 60
    for i in range(4):
        srv.create(node(f"node-{i}", cpu="64", memory="256Gi"))
    # Bindings queue up on the workers: 8 of them, 250 ms a binding.
    srv.faults.delay(r"/binding$", 0.25, method="POST")
    kubeconfig = srv.kubeconfig(tmp_path / "kubeconfig")
    a_agent, b_agent = "wasmsched (replica-a)", "wasmsched (replica-b)"
    procs: dict[str, subprocess.Popen[bytes]] = {}
    logs = {name: open(tmp_path / f"{name}.log", "wb") for name in ("a", "b")}  # noqa: SIM115
    try:
        procs["a"] = subprocess.Popen(
            replica_command(kubeconfig, "replica-a", api_workers=8),
            stdout=logs["a"],
            stderr=subprocess.STDOUT,
            env=replica_env(),
        )
        wait(lambda: _lease_holder(srv) == "replica-a", 60, "replica-a leading")
        procs["b"] = subprocess.Popen(
            replica_command(kubeconfig, "replica-b", api_workers=8),
            stdout=logs["b"],
            stderr=subprocess.STDOUT,
            env=replica_env(),
        )
        wait(lambda: b_agent in srv.user_agents, 60, "replica-b up")
        for i in range(n_pods):
            srv.create(pod(f"web-{i}"))
        wait(lambda: len(_ok_bindings(srv, a_agent)) >= 5, 60, "replica-a binding")
        procs["a"].send_signal(signal.SIGSTOP)
        paused = time.monotonic()
        if past_the_lease:
            wait(lambda: _lease_holder(srv) == "replica-b", 60, "replica-b taking over")
            wait(lambda: len(_ok_bindings(srv, b_agent)) >= 5, 60, "replica-b binding")
        else:
            # Sleeping is the scenario here: a pause shorter than the renew deadline.
            time.sleep(max(0.0, 1.5 - (time.monotonic() - paused)))
        procs["a"].send_signal(signal.SIGCONT)
        resumed = time.monotonic()
        wait(lambda: len(placements(srv)) == n_pods, 90, "every pod bound")
        if past_the_lease:
            assert procs["a"].wait(60) == 1  # it noticed the lost lease and left
    finally:
        stop_replicas(procs.values(), logs.values())
    ok = _ok_bindings(srv)
    assert sorted(b["name"] for b in ok) == sorted(f"web-{i}" for i in range(n_pods))
    # A request already past the last check (the HTTP client's, just before it writes) when
    # SIGSTOP landed is in flight: it goes out the moment the process runs again, as bytes
    # already in a socket buffer would. Nothing may be checked and sent after that.
    # On a loaded machine the resumed process takes a while to get CPU time and flush
    # them (0.14 s seen under CI load); the bug this guards against sent bindings
    # seconds after resuming (3.3 s), decided under the lost lease.
    in_flight = 0.5
    late = [
        b
        for b in srv.bindings
        if b["userAgent"] == a_agent
        and b["received"] > resumed + (in_flight if past_the_lease else 0)
    ]
    output = {name: (tmp_path / f"{name}.log").read_text() for name in logs}
    assert not any("Traceback" in text for text in output.values()), output
    if past_the_lease:
        assert late == [], [
            (b["name"], b["code"], round(b["received"] - resumed, 3), round(resumed - paused, 3))
            for b in late
        ]
        assert _ok_bindings(srv, b_agent)
    else:
        assert _lease_holder(srv) in ("replica-a", "")  # released on stop, never taken
        assert _ok_bindings(srv, b_agent) == []
        assert late  # it went on binding after the short pause
