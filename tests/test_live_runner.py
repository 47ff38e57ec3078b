"""The live scheduler end to end: a real HTTP client against the API server double."""

from __future__ import annotations

import collections
import gc
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apiserver import ApiServerDouble
from live_support import config, node, placements, pod, running, wait
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.live.runner import LIVE_SWITCH_INTERVAL
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[1]
NODENUMBER = ROOT / "examples" / "nodenumber" / "nodenumber.wat"

FAST_BACKOFF = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
"""

WASM = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: NodeNumber
        weight: 5
  pluginConfig:
  - name: NodeNumber
    args:
      guestURL: file://{NODENUMBER}
"""


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble(bookmark_interval=0.5)
    server.start()
    yield server
    server.stop()


def successful_bindings(srv: ApiServerDouble) -> collections.Counter[str]:
    return collections.Counter(b["name"] for b in srv.bindings if b["code"] == 201)


def binding_codes(srv: ApiServerDouble, name: str) -> list[int]:
    """HTTP codes of every binding POST for a pod, injected faults included."""
    return [
        code
        for method, target, code in srv.requests
        if method == "POST" and target.split("?")[0].endswith(f"/pods/{name}/binding")
    ]


def mixed_cluster(srv: ApiServerDouble) -> None:
    zones = ["zone-a", "zone-b", "zone-c"]
    for i in range(6):
        srv.create(
            node(
                f"node-{i}",
                cpu=str(2 + i % 3),
                memory=f"{4 + 2 * (i % 2)}Gi",
                labels={
                    "topology.kubernetes.io/zone": zones[i % 3],
                    "disk": "ssd" if i % 2 else "hdd",
                },
            )
        )
    srv.create(pod("running-0", cpu="1", nodeName="node-0"))
    for i in range(14):
        spec: dict[str, Any] = {}
        if i % 4 == 0:
            spec["nodeSelector"] = {"disk": "ssd"}
        if i % 5 == 0:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ]
        srv.create(pod(f"web-{i:02d}", cpu=f"{100 + 50 * (i % 4)}m", memory="256Mi", **spec))


def simulate(srv: ApiServerDouble, cfg_text: str, seed: int) -> dict[str, str]:
    """Where the simulator places the server's pending pods, from the same objects."""
    cluster = ClusterObjects(
        nodes=[Node(m) for m in srv.list("Node")], pods=[Pod(m) for m in srv.list("Pod")]
    )
    sim = Simulation(cluster, config(cfg_text), in_tree_registry(), seed=seed)
    try:
        result = sim.run()
    finally:
        sim.close()
    return {o.pod.name: o.node for o in result.outcomes if o.node}


@pytest.mark.parametrize(
    ("cfg_text", "seed"), [("", 0), ("", 7), (WASM, 3)], ids=["default-0", "default-7", "wasm-3"]
)
def test_pods_are_bound_where_the_simulator_places_them(
    srv: ApiServerDouble, cfg_text: str, seed: int
) -> None:
    mixed_cluster(srv)
    expected = simulate(srv, cfg_text, seed)
    assert len(expected) == 14
    with running(srv, config(cfg_text), seed=seed):
        wait(lambda: len(placements(srv)) == 15, what="all pods bound")
    got = placements(srv)
    del got["running-0"]
    assert got == expected
    assert set(successful_bindings(srv).values()) == {1}
    scheduled = [e for e in srv.events if e.get("reason") == "Scheduled"]
    assert len(scheduled) == 14
    assert scheduled[0]["note"].startswith("Successfully assigned default/web-")


def test_other_schedulers_terminal_and_deleted_pods_are_left_alone(srv: ApiServerDouble) -> None:
    srv.create(node("node-0", cpu="1"))
    # A finished pod holds nothing: the field selector leaves it out of the cache.
    done = pod("done-0", cpu="1", nodeName="node-0")
    done["status"] = {"phase": "Succeeded"}
    srv.create(done)
    srv.create(pod("other-0", scheduler="other-scheduler"))
    srv.create(pod("fits-0", cpu="1"))
    with running(srv) as runner:
        wait(lambda: "fits-0" in placements(srv), what="fits-0 bound")
        time.sleep(0.3)
        assert "other-0" not in placements(srv)
        assert set(runner.scheduler.cache.pod_node.values()) == {"node-0"}
        assert len(runner.scheduler.cache.pod_node) == 1


def test_failed_scheduling_writes_condition_and_event(srv: ApiServerDouble) -> None:
    srv.create(node("node-0", cpu="1"))
    srv.create(node("node-1", cpu="1"))
    srv.create(pod("big-0", cpu="2"))

    def condition() -> dict[str, Any] | None:
        obj = srv.get("Pod", "default", "big-0") or {}
        return next(
            (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"),
            None,
        )

    with running(srv):
        wait(lambda: condition() is not None, what="PodScheduled condition")
        wait(lambda: any(e.get("reason") == "FailedScheduling" for e in srv.events), what="event")
    cond = condition()
    assert cond is not None
    message = "0/2 nodes are available: 2 Insufficient cpu."
    assert cond["status"] == "False"
    assert cond["reason"] == "Unschedulable"
    assert cond["message"].startswith(message)
    event = next(e for e in srv.events if e.get("reason") == "FailedScheduling")
    assert event["type"] == "Warning"
    assert event["regarding"]["name"] == "big-0"
    assert event.get("note", "").startswith(message)


def test_preemption_deletes_the_victim_and_nominates(srv: ApiServerDouble) -> None:
    srv.create(node("node-0", cpu="2"))
    low = pod("low-0", cpu="2", nodeName="node-0")
    low["spec"]["priority"] = 0
    srv.create(low)
    high = pod("high-0", cpu="2")
    high["spec"]["priority"] = 1000
    srv.create(high)
    with running(srv, config(FAST_BACKOFF)):
        wait(lambda: srv.get("Pod", "default", "low-0") is None, what="victim deleted")
        wait(lambda: placements(srv).get("high-0") == "node-0", what="preemptor bound")
    reasons = [e.get("reason") for e in srv.events]
    assert "Preempted" in reasons
    nominated = [
        r for r in srv.requests if r[0] == "PATCH" and "high-0/status" in r[1] and r[2] == 200
    ]
    assert nominated, "nominatedNodeName was never written"


def test_binding_conflict_is_forgotten_not_retried(srv: ApiServerDouble) -> None:
    srv.create(node("node-0", cpu="2"))
    srv.create(pod("web-0", cpu="1"))
    srv.faults.fail_next("POST", r"/pods/web-0/binding$", status=409)
    with running(srv, config(FAST_BACKOFF)) as runner:
        wait(lambda: runner.scheduler.bind_conflicts == 1, what="the conflict")
        time.sleep(1.5)  # longer than the backoff: a retry would have happened
        assert binding_codes(srv, "web-0") == [409]
        sched = runner.scheduler
        uid = srv.get("Pod", "default", "web-0")["metadata"]["uid"]
        assert uid not in sched.cache.pod_node  # the assumed pod was forgotten
        # The conflict meant someone else bound it: the watch brings that binding in.
        bound = srv.get("Pod", "default", "web-0")
        bound["spec"]["nodeName"] = "node-0"
        srv.update(bound)
        wait(lambda: sched.cache.pod_node.get(uid) == "node-0", what="watched binding")
        assert not sched.cache.is_assumed(uid)


def test_api_errors_are_retried_with_backoff(srv: ApiServerDouble) -> None:
    srv.create(node("node-0"))
    for i in range(3):
        srv.create(pod(f"web-{i}"))
    # The pod list fails a few times before the informers sync, then bindings fail.
    srv.faults.fail_next("GET", r"^/api/v1/pods$", status=500, count=3, watch=False)
    srv.faults.fail_next("POST", r"/pods/web-1/binding$", status=500, count=2)
    with running(srv, config(FAST_BACKOFF)):
        wait(lambda: len(placements(srv)) == 3, timeout=15, what="catching up")
    assert binding_codes(srv, "web-1") == [500, 500, 201]
    failed_lists = [r for r in srv.requests if r[0] == "GET" and r[2] == 500]
    assert len(failed_lists) == 3
    # A SchedulerError was reported in between.
    assert any(
        e.get("reason") == "FailedScheduling" and "DefaultBinder" in e.get("note", "")
        for e in srv.events
    )


def test_dropped_watch_loses_no_pod_and_binds_none_twice(srv: ApiServerDouble) -> None:
    for i in range(3):
        srv.create(node(f"node-{i}"))
    srv.faults.drop_watch("pods", after_events=3, count=3)
    with running(srv) as runner:
        for i in range(12):
            srv.create(pod(f"web-{i:02d}"))
            time.sleep(0.02)
        wait(lambda: len(placements(srv)) == 12, what="all pods bound")
        time.sleep(0.3)
        counts = successful_bindings(srv)
        assert len(counts) == 12 and set(counts.values()) == {1}
        assert not any(b["code"] != 201 for b in srv.bindings)
        assert runner.informers["Pod"].watches >= 4
        sched = runner.scheduler
        wait(lambda: not sched.cache.assumed, what="every binding confirmed by the watch")
        assert len(sched.cache.pod_node) == 12


def test_expired_resource_version_relists_and_syncs_the_difference(srv: ApiServerDouble) -> None:
    srv.create(node("node-0"))
    srv.create(pod("gone-0", cpu="1", nodeName="node-0"))
    with running(srv) as runner:
        sched = runner.scheduler
        informer = runner.informers["Pod"]
        gone_uid = srv.get("Pod", "default", "gone-0")["metadata"]["uid"]
        wait(lambda: gone_uid in sched.cache.pod_node, what="initial sync")
        # Keep the pod watch away while the cluster changes and history is compacted.
        srv.faults.fail_next("GET", r"^/api/v1/pods$", status=503, count=2, watch=True)
        srv.faults.drop_watch("pods")
        wait(lambda: informer.watches >= 2, what="the watch reconnecting")
        srv.delete("Pod", "default", "gone-0")
        srv.create(pod("new-0"))
        srv.faults.expire_resource_versions()
        wait(lambda: "new-0" in placements(srv), what="new pod bound after the relist")
        wait(lambda: gone_uid not in sched.cache.pod_node, what="synthetic delete")
        # Only a 410 Gone (here an ERROR event on the resumed watch) makes it list again.
        assert informer.relists == 2


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminated_pods_hold_no_capacity(srv: ApiServerDouble, phase: str) -> None:
    # kube-scheduler's pod informer leaves out finished pods (pkg/scheduler/eventhandlers.go:
    # addAllEventHandlers, assigned pods filtered by phase); a pod that finishes leaves the cache.
    srv.create(node("node-0", cpu="2"))
    done = pod("done", cpu="2")
    done["spec"]["nodeName"] = "node-0"
    done["status"] = {"phase": phase}
    srv.create(done)  # finished before the scheduler started
    running_pod = pod("busy", cpu="2")
    running_pod["spec"]["nodeName"] = "node-0"
    running_pod["status"] = {"phase": "Running"}
    srv.create(running_pod)
    srv.create(pod("web-0", cpu="2"))
    with running(srv, config(FAST_BACKOFF)) as runner:
        wait(lambda: runner.scheduler.outcomes.get(_uid(srv, "web-0")) is not None, 30, "a try")
        assert "web-0" not in placements(srv)  # busy holds the node
        busy = srv.get("Pod", "default", "busy")
        busy["status"]["phase"] = phase
        srv.update(busy)
        wait(lambda: placements(srv).get("web-0") == "node-0", 30, "web-0 bound once busy ended")
    assert {p for p in placements(srv)} == {"done", "busy", "web-0"}


def _uid(srv: ApiServerDouble, name: str) -> str:
    return str(srv.get("Pod", "default", name)["metadata"]["uid"])


@pytest.fixture
def gc_unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_runner_freezes_after_the_informers_sync(
    srv: ApiServerDouble, gc_unfrozen: None
) -> None:
    srv.create(node("n1"))
    srv.create(pod("p1"))
    with running(srv) as runner:
        wait(runner.ready.is_set, what="informers synced")
        assert runner.collector is not None
        wait(lambda: runner.collector is not None and runner.collector.freezes >= 1)
        assert gc.get_freeze_count() > 0
        wait(lambda: any(b["code"] == 201 for b in srv.bindings), what="p1 bound")
    assert gc.get_freeze_count() == 0  # unfrozen at shutdown


def test_io_threads_wait_at_most_a_millisecond_for_the_scheduling_thread(
    srv: ApiServerDouble,
) -> None:
    # The switch interval is the interpreter's: 1 ms while the loop runs (the informers'
    # and API workers' turn comes that soon behind a cycle), as it was once it stops.
    srv.create(node("n1"))
    srv.create(pod("p1"))
    before = sys.getswitchinterval()
    with running(srv) as runner:
        wait(lambda: any(b["code"] == 201 for b in srv.bindings), what="p1 bound")
        assert runner.ready.is_set()
        assert sys.getswitchinterval() == pytest.approx(LIVE_SWITCH_INTERVAL) == 0.001
    assert sys.getswitchinterval() == before


def test_no_freeze_when_turned_off(srv: ApiServerDouble, gc_unfrozen: None) -> None:
    srv.create(node("n1"))
    with running(srv, freeze_garbage=False) as runner:
        wait(runner.ready.is_set, what="informers synced")
        assert runner.collector is None
        assert gc.get_freeze_count() == 0


def test_new_pods_are_parsed_on_the_informer_thread(
    srv: ApiServerDouble, caplog: pytest.LogCaptureFixture
) -> None:
    # The scheduling thread only queues a new pod: the Pod informer's thread parsed and
    # validated it; an invalid one is still ignored, with the same warning.
    import threading

    srv.create(node("n1"))
    srv.create(pod("web-0"))
    bad = pod("bad-0")
    bad["spec"]["priority"] = "high"
    srv.create(bad)
    first: dict[str, str] = {}
    original = Pod.validate

    def spy(self: Pod) -> None:
        first.setdefault(self.name, threading.current_thread().name)
        original(self)

    with pytest.MonkeyPatch.context() as mp, caplog.at_level("WARNING", "wasmsched.live"):
        mp.setattr(Pod, "validate", spy)
        with running(srv):
            wait(lambda: placements(srv) == {"web-0": "n1"}, what="web-0 bound")
            srv.create(pod("web-1"))
            wait(lambda: len(placements(srv)) == 2, what="web-1 bound")
    assert first == {"web-0": "informer-Pod", "bad-0": "informer-Pod", "web-1": "informer-Pod"}
    warnings = [r.getMessage() for r in caplog.records if "invalid pod" in r.getMessage()]
    assert len(warnings) == 1 and "pod=default/bad-0" in warnings[0]
    assert "spec.priority" in warnings[0]
