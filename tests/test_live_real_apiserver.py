"""``wasmsched run`` against a real kube-apiserver, v1.33.4 and v1.37.2, and etcd
(tests/kube_apiserver.py): every test runs against both servers, the scheduler scheduling
as the server's release.

The scheduler runs as a process, authenticated as its ServiceAccount with a TokenRequest
token and authorised by deploy/rbac.yaml only. What the API server double cannot show:
the real binding subresource, admission (priority, taints), RBAC, TLS, leases,
a restarted server, and history compacted away under a watch (410 Gone).
"""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import live_support
import varied_objects
from kube_apiserver import LEASE, VERSIONS, Cluster, Scheduler, require, start_cluster
from live_support import node, wait
from reference_support import REFERENCES, Case, run_cases
from wasmsched.api.manifests import load_manifests
from wasmsched.api.objects import Pod
from wasmsched.api.protobuf import decode as protobuf
from wasmsched.api.protobuf.decode import decode_watch_frames
from wasmsched.cli import app
from wasmsched.framework.interfaces import Event, ObjectReference
from wasmsched.live import ApiClient, load_kube_config
from wasmsched.live import client as client_module
from wasmsched.live.client import (
    JSON,
    PROTOBUF,
    RESOURCES,
    ApiError,
    accepts_protobuf,
    is_protobuf,
    sends_protobuf,
)
from wasmsched.live.writer import Dispatcher, LiveWriter, now_rfc3339, post_binding

SCHEDULER = "wasmsched"
CONFIG = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 1
profiles:
- schedulerName: {SCHEDULER}
"""
NO_ELECTION = ("--no-leader-elect",)
# Short enough for a test: a standby takes over 4 s after the leader's last renewal.
FAST_ELECTION = (
    "--leader-elect",
    "--leader-elect-lease-duration", "4s",
    "--leader-elect-renew-deadline", "3s",
    "--leader-elect-retry-period", "500ms",
)  # fmt: skip
Window = tuple[tuple[datetime, datetime], ...]
cli = CliRunner()


@pytest.fixture(scope="module", params=VERSIONS, ids=[f"kube-{v}" for v in VERSIONS])
def kube(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """One API server per release for the whole module. Skipped without its binaries,
    except in CI (``CI`` set), which must run this suite."""
    version = str(request.param)
    require(version)
    cluster = start_cluster(version=version)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def cluster(kube: Cluster) -> Iterator[Cluster]:
    yield kube
    kube.reset()


def pod(name: str, cpu: str = "100m", scheduler: str = SCHEDULER, **spec: Any) -> dict[str, Any]:
    """live_support's pod for this scheduler's profile, without a token volume."""
    return live_support.pod(name, cpu=cpu, memory="64Mi", scheduler=scheduler,
                            automountServiceAccountToken=False, **spec)  # fmt: skip


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), None)


def scheduled_events(cluster: Cluster) -> collections.Counter[str]:
    """Scheduled events per pod name."""
    return collections.Counter(
        e["regarding"]["name"] for e in cluster.events() if e.get("reason") == "Scheduled"
    )


def assert_clean(*schedulers: Scheduler, allowed: Window = ()) -> None:
    """No call was refused (403), but in ``allowed``, and nothing failed with a traceback."""
    for s in schedulers:
        refused = s.forbidden(allowed)
        assert refused == [], f"{s.name} was refused:\n" + "\n".join(refused)
        assert "Traceback" not in s.output(), f"{s.name}:\n{s.tail(60)}"


def test_binds_pods_and_reports_failures_as_its_service_account(cluster: Cluster) -> None:
    assert cluster.scheduler_kubeconfig is not None
    me = ApiClient(load_kube_config(cluster.scheduler_kubeconfig))
    try:
        review = me.request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        )
    finally:
        me.close()
    user = review["status"]["userInfo"]["username"]
    assert user == "system:serviceaccount:kube-system:wasmsched"

    for i in range(2):
        created = cluster.add_node(node(f"node-{i}", cpu="2"))
        assert not created["spec"].get("taints")
    for i in range(6):
        cluster.create(pod(f"web-{i}", cpu="500m"))
    cluster.create(pod("big-0", cpu="8"))
    cluster.create(pod("other-0", scheduler="default-scheduler"))
    sched = cluster.scheduler(CONFIG, *NO_ELECTION)

    webs = {f"web-{i}" for i in range(6)}
    wait(lambda: webs <= set(cluster.placements()), 30, "the web pods bound")
    wait(
        lambda: condition(cluster.pod("big-0"), "PodScheduled") is not None, 15, "big-0's condition"
    )
    wait(lambda: len(scheduled_events(cluster)) == 6, 15, "the Scheduled events")
    wait(
        lambda: any(e["reason"] == "FailedScheduling" for e in cluster.events()),
        15,
        "the FailedScheduling event",
    )
    time.sleep(1)  # anything more would show now

    placed = cluster.placements()
    assert set(placed) == webs
    assert collections.Counter(placed.values()) == {"node-0": 3, "node-1": 3}
    for name in webs:
        # The binding subresource (pkg/registry/core/pod/storage: assignPod) sets it.
        cond = condition(cluster.pod(name), "PodScheduled")
        assert cond is not None and cond["status"] == "True"
    big = condition(cluster.pod("big-0"), "PodScheduled")
    assert big is not None
    assert (big["status"], big["reason"]) == ("False", "Unschedulable")
    assert big["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert condition(cluster.pod("other-0"), "PodScheduled") is None

    events = cluster.events()
    assert scheduled_events(cluster) == {name: 1 for name in webs}
    for e in events:
        if e["reason"] == "Scheduled":
            name = e["regarding"]["name"]
            assert e["note"] == f"Successfully assigned default/{name} to {placed[name]}"
    failed = [e for e in events if e["reason"] == "FailedScheduling"]
    assert failed and {e["regarding"]["name"] for e in failed} == {"big-0"}
    assert failed[0]["type"] == "Warning"
    assert sorted(sched.bound()) == sorted(f"default/{n}" for n in webs)
    assert_clean(sched)
    assert sched.stop() == 0


def test_preemption_evicts_the_victim_and_binds_the_preemptor(cluster: Cluster) -> None:
    for name, value in (("test-low", 10), ("test-high", 1000)):
        cluster.create(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
            exist_ok=True,
        )
    cluster.add_node(node("node-0", cpu="2"))
    cluster.create(pod("low-0", cpu="2", nodeName="node-0", priorityClassName="test-low"))
    # The Priority admission plugin resolves the class into spec.priority.
    cluster.create(pod("high-0", cpu="2", priorityClassName="test-high"))
    high = cluster.pod("high-0")
    assert high is not None and high["spec"]["priority"] == 1000
    sched = cluster.scheduler(CONFIG, *NO_ELECTION)

    def victim_terminating() -> bool:
        low = cluster.pod("low-0")
        return low is not None and bool(low["metadata"].get("deletionTimestamp"))

    wait(victim_terminating, 30, "the victim's graceful deletion")
    low = cluster.pod("low-0")
    target = condition(low, "DisruptionTarget")
    assert target is not None and target["reason"] == "PreemptionByScheduler"
    wait(
        lambda: (
            (cluster.pod("high-0") or {}).get("status", {}).get("nominatedNodeName") == "node-0"
        ),
        15,
        "nominatedNodeName",
    )
    # Without a kubelet the victim stays Terminating, and the preemptor waits for it.
    time.sleep(1.5)
    assert "high-0" not in cluster.placements()
    assert cluster.finish_deletions() == ["low-0"]
    wait(lambda: cluster.placements() == {"high-0": "node-0"}, 20, "the preemptor bound")
    wait(lambda: scheduled_events(cluster) == {"high-0": 1}, 10, "the Scheduled event")
    reasons = collections.Counter(e["reason"] for e in cluster.events())
    assert reasons["Preempted"] == 1
    assert reasons["Scheduled"] == 1
    assert_clean(sched)
    assert sched.stop() == 0


def test_snapshot_then_simulate_places_pods_as_the_live_scheduler(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The objects as the real server keeps them (admission's defaults, tolerations,
    priorities) give the simulator the live scheduler's placements."""
    zones = ["zone-a", "zone-b"]
    for i in range(4):
        n = node(f"node-{i}", cpu=str(2 + i % 3))
        n["metadata"]["labels"]["topology.kubernetes.io/zone"] = zones[i % 2]
        cluster.add_node(n)
    cluster.create(pod("db-0", cpu="1500m", nodeName="node-0"))
    for i in range(10):
        spec: dict[str, Any] = {}
        if i % 3 == 0:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ]
        cluster.create(pod(f"web-{i}", cpu=f"{250 * (1 + i % 3)}m", **spec))
    assert cluster.scheduler_kubeconfig is not None
    result = cli.invoke(app, ["snapshot", "--kubeconfig", str(cluster.scheduler_kubeconfig)])
    assert result.exit_code == 0, result.output
    snap = tmp_path / "cluster.yaml"
    snap.write_text(result.stdout)
    pods = [d for d in yaml.safe_load_all(result.stdout) if d and d["kind"] == "Pod"]
    # What admission added is in the snapshot: the simulator sees the pods as stored.
    assert all(p["spec"]["priority"] == 0 for p in pods)
    assert all(
        {t["key"] for t in p["spec"]["tolerations"]}
        >= {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}
        for p in pods
    )
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG)
    sim = cli.invoke(
        app,
        ["simulate", "--cluster", str(snap), "--config", str(cfg), "-o", "json", "--seed", "5"],
    )
    assert sim.exit_code == 0, sim.output
    simulated = {p["name"]: p["node"] for p in json.loads(sim.stdout)["pods"] if p["wasPending"]}
    assert len(simulated) == 10 and all(simulated.values())

    sched = cluster.scheduler(CONFIG, *NO_ELECTION, "--seed", "5")
    wait(lambda: len(cluster.placements()) == 11, 30, "every pod bound")
    live = cluster.placements()
    assert {name: live[name] for name in simulated} == simulated
    assert_clean(sched)
    assert sched.stop() == 0


def test_snapshot_of_newer_fields_loads_as_the_servers_release(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Nodes with ``status.declaredFeatures`` (NodeDeclaredFeatures) and pods with pod-level
    ``spec.resources`` (PodLevelResources): a 1.37 server keeps both, and its snapshot loads
    as 1.37's objects; a 1.33 server drops both (its gates are off or absent) and its
    snapshot loads as 1.33's. Either way, ``wasmsched run`` schedules as the server's
    release and binds the pods."""
    newer = cluster.version == "1.37"
    declared = ["GuaranteedQoSPodCPUResize", "SidecarContainers"]
    for i in range(2):
        n = node(f"node-{i}", cpu="2")
        n["status"]["declaredFeatures"] = declared
        cluster.add_node(n)
    for i in range(3):
        cluster.create(pod(f"web-{i}", resources={"requests": {"cpu": "600m", "memory": "128Mi"}}))
    assert cluster.scheduler_kubeconfig is not None
    result = cli.invoke(app, ["snapshot", "--kubeconfig", str(cluster.scheduler_kubeconfig)])
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert docs[0]["kind"] == "Snapshot"
    assert docs[0]["serverVersion"] == ("v1.37.2" if newer else "v1.33.4")
    nodes = [d for d in docs if d["kind"] == "Node"]
    pods = [d for d in docs if d["kind"] == "Pod"]
    assert [n["status"].get("declaredFeatures") for n in nodes] == [declared if newer else None] * 2
    assert [p["spec"].get("resources") for p in pods] == [
        {"requests": {"cpu": "600m", "memory": "128Mi"}} if newer else None
    ] * 3
    snap = tmp_path / "cluster.yaml"
    snap.write_text(result.stdout)
    loaded = load_manifests(snap)
    assert str(loaded.kubernetes_version) == cluster.version
    assert len(loaded.nodes) == 2 and len(loaded.pods) == 3

    sched = cluster.scheduler(CONFIG, *NO_ELECTION)
    wait(lambda: len(cluster.placements()) == 3, 30, "every pod bound")
    assert f"scheduling as kube-scheduler release={cluster.version}" in sched.messages()
    assert_clean(sched)
    assert sched.stop() == 0


def test_snapshot_schedules_as_the_servers_kube_scheduler(cluster: Cluster, tmp_path: Path) -> None:
    """A snapshot of the real server, scheduled by ``simulate`` (reading it as the server's
    release, from the snapshot's ``serverVersion``) and by the reference kube-scheduler of
    that release (reference/, v1.33.4 or v1.37.2) on the same file: every pending pod
    lands alike. On the 1.37 server the objects carry what only the newer release has:
    nodes' ``declaredFeatures``, pod-level resources, a pod that declares a feature."""
    ref = REFERENCES[cluster.version]
    if not ref.built():
        pytest.skip(ref.not_built)
    newer = cluster.version == "1.37"
    zones = ["zone-a", "zone-b", "zone-c"]
    for i in range(6):
        n = node(
            f"node-{i}", cpu=str(2 + i % 3), labels={"topology.kubernetes.io/zone": zones[i % 3]}
        )
        if i == 5:
            n["spec"] = {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}
        if newer and i % 2 == 0:
            n["status"]["declaredFeatures"] = ["GuaranteedQoSPodCPUResize"]
        cluster.add_node(n)
    cluster.create(pod("db-0", cpu="1500m", nodeName="node-0"))
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    away_from_db = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 50,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "db"}},
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }
            ]
        }
    }
    for i in range(9):
        spec: dict[str, Any] = {"topologySpreadConstraints": [spread]} if i % 3 == 0 else {}
        if i % 3 == 1:
            spec["affinity"] = away_from_db
        cluster.create(pod(f"web-{i}", cpu=f"{250 * (1 + i % 3)}m", **spec))
    gpu = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
    cluster.create(pod("batch-0", cpu="1", tolerations=[gpu]))
    if newer:
        # Pod-level resources (PodLevelResources, on in 1.37): the pod's own request wins.
        cluster.create(pod("batch-1", resources={"requests": {"cpu": "1200m", "memory": "256Mi"}}))
    assert cluster.scheduler_kubeconfig is not None
    result = cli.invoke(app, ["snapshot", "--kubeconfig", str(cluster.scheduler_kubeconfig)])
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert docs[0]["serverVersion"].startswith(f"v{cluster.version}.")

    snap = tmp_path / "cluster.yaml"
    snap.write_text(result.stdout)
    sim = cli.invoke(
        app, ["simulate", "--cluster", str(snap), "--config", str(_config(tmp_path)), "-o", "json"]
    )
    assert sim.exit_code == 0, sim.output
    simulated = json.loads(sim.stdout)
    assert simulated["summary"]["kubernetesVersion"] == cluster.version
    pending = 11 if newer else 10
    assert sum(1 for p in simulated["pods"] if p["wasPending"] and p["node"]) == pending

    config = yaml.safe_load(CONFIG)
    [outcome] = run_cases([Case("snapshot", docs, config)], tmp_path / "cases", ref=ref)
    assert len(outcome.ours.pods) == pending
    assert outcome.diffs == []
    # The reference placed what simulate placed (run_cases runs wasmsched as the library).
    assert {k: v.node for k, v in outcome.ref.pods.items()} == {
        f"default/{p['name']}": p["node"] for p in simulated["pods"] if p["wasPending"]
    }


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    return path


def lease_holder(cluster: Cluster) -> str:
    lease = cluster.request("GET", LEASE)
    return str(lease.get("spec", {}).get("holderIdentity") or "")


def acquired(s: Scheduler) -> bool:
    return any(m.startswith("successfully acquired lease") for m in s.messages())


def test_standby_takes_over_when_the_leader_is_killed(cluster: Cluster) -> None:
    for i in range(3):
        cluster.add_node(node(f"node-{i}"))
    first = cluster.scheduler(CONFIG, *FAST_ELECTION)
    second = cluster.scheduler(CONFIG, *FAST_ELECTION)
    wait(lambda: acquired(first) or acquired(second), 30, "a leader")
    leader, standby = (first, second) if acquired(first) else (second, first)
    holder = lease_holder(cluster)
    assert holder
    for i in range(6):
        cluster.create(pod(f"a-{i}"))
    wait(lambda: len(cluster.placements()) == 6, 30, "the first pods bound")
    # The leader has heard the 201s and posted the events before it dies.
    wait(lambda: len(leader.bound()) == 6, 10, "the leader's bound log lines")
    wait(lambda: len(scheduled_events(cluster)) == 6, 10, "the first Scheduled events")
    assert not acquired(standby)
    assert standby.bound() == []

    leader.kill()  # SIGKILL: no release, the standby must wait for the lease to expire
    killed = time.monotonic()
    for i in range(6):
        cluster.create(pod(f"b-{i}"))
    wait(lambda: acquired(standby), 30, "the standby taking the lease")
    took = time.monotonic() - killed
    wait(lambda: len(cluster.placements()) == 12, 30, "the second pods bound")
    wait(lambda: len(scheduled_events(cluster)) == 12, 10, "every Scheduled event")
    wait(lambda: len(standby.bound()) == 6, 10, "the standby's bound log lines")

    assert took >= 3.0, f"the lease was taken {took:.1f}s after the leader died"
    lease = cluster.request("GET", LEASE)
    assert lease["spec"]["holderIdentity"] not in ("", holder)
    assert lease["spec"]["leaseTransitions"] >= 1
    assert sorted(leader.bound()) == sorted(f"default/a-{i}" for i in range(6))
    assert sorted(standby.bound()) == sorted(f"default/b-{i}" for i in range(6))
    assert set(scheduled_events(cluster).values()) == {1}
    assert len(scheduled_events(cluster)) == 12
    assert_clean(leader, standby)
    assert standby.stop() == 0
    assert lease_holder(cluster) == ""  # released on SIGTERM


RACED = 48


def test_two_schedulers_without_election_never_bind_a_pod_twice(cluster: Cluster) -> None:
    """Misconfigured replicas race for the same pods: the binding subresource refuses the
    second binding (409, pkg/registry/core/pod/storage: setPodHostAndAnnotations) and the
    loser forgets the pod instead of retrying."""
    for i in range(3):
        cluster.add_node(node(f"node-{i}"))
    first = cluster.scheduler(CONFIG, *NO_ELECTION)
    second = cluster.scheduler(CONFIG, *NO_ELECTION)
    for s in (first, second):
        wait(lambda s=s: any(m.startswith("informers synced") for m in s.messages()), 30, "sync")
    # Both see the pods at the same moment: they pop them in the same order. Enough pods
    # that the two overlap even when one resumes some milliseconds after the other (each
    # binds a pod in about a millisecond: with 12, under load, one sometimes bound them
    # all before the other started).
    with first.paused(), second.paused():
        for i in range(RACED):
            cluster.create(pod(f"web-{i:02d}"))
    wait(lambda: len(cluster.placements()) == RACED, 30, "every pod bound")
    wait(lambda: len(first.bound()) + len(second.bound()) == RACED, 10, "the bound log lines")
    wait(lambda: len(scheduled_events(cluster)) == RACED, 10, "the Scheduled events")
    time.sleep(1)  # a late second binding would show now

    bound = first.bound() + second.bound()
    assert sorted(bound) == sorted(f"default/web-{i:02d}" for i in range(RACED))
    assert set(scheduled_events(cluster).values()) == {1}
    refused = [m for s in (first, second) for m in s.messages() if m.startswith("binding refused")]
    conflicts = sum(s.metric("wasmsched_binding_conflicts_total") for s in (first, second))
    # Popping the same pods in the same order, they collide (5 of 12 in a measured run).
    assert refused, "the two schedulers never raced for a pod"
    assert conflicts == len(refused)
    for m in refused:
        assert "409 Conflict" in m and "is already assigned to node" in m, m
    assert_clean(first, second)
    assert first.stop() == 0
    assert second.stop() == 0


def test_api_server_restart_mid_run(cluster: Cluster) -> None:
    for i in range(2):
        cluster.add_node(node(f"node-{i}"))
    # A lease longer than the restart: the leader keeps it across the outage.
    sched = cluster.scheduler(
        CONFIG,
        "--leader-elect",
        "--leader-elect-lease-duration", "90s",
        "--leader-elect-renew-deadline", "60s",
        "--leader-elect-retry-period", "1s",
    )  # fmt: skip
    for i in range(4):
        cluster.create(pod(f"a-{i}"))
    wait(lambda: len(cluster.placements()) == 4, 30, "the first pods bound")
    # Events are best effort: one in flight when the server goes away is dropped.
    wait(lambda: len(scheduled_events(cluster)) == 4, 10, "the first Scheduled events")
    holder = lease_holder(cluster)

    down = datetime.now(UTC)
    cluster.stop_apiserver()
    time.sleep(1)
    assert sched.alive
    cluster.start_apiserver()
    ready = datetime.now(UTC)
    for i in range(4):
        cluster.create(pod(f"b-{i}"))
    wait(lambda: len(cluster.placements()) == 8, 60, "the pods made after the restart bound")

    assert sched.alive, sched.tail()
    assert lease_holder(cluster) == holder
    wait(lambda: len(scheduled_events(cluster)) == 8, 10, "every Scheduled event")
    wait(lambda: len(sched.bound()) == 8, 10, "the bound log lines")
    bound = sched.bound()
    assert len(set(bound)) == 8
    assert set(scheduled_events(cluster).values()) == {1}
    # A kube-apiserver serves before its RBAC caches are filled: until /readyz says ok, the
    # ServiceAccount's calls may be refused. They are retried; none is refused after that.
    assert_clean(sched, allowed=((down, ready),))
    assert sched.stop() == 0


@pytest.mark.parametrize(
    "watch_cache",
    [True, False],
    ids=["watch-cache-too-old", "etcd-compacted"],
)
def test_expired_watch_makes_the_informer_relist(cluster: Cluster, watch_cache: bool) -> None:
    """A pod watch that cannot resume: 410 Gone from the watch cache or from etcd.

    With its watch cache (the default) a restarted kube-apiserver serves watches only from
    the revision it started at; restarted without one (``--watch-cache-sizes=pods#0``) it
    sends watches to etcd, which refuses a compacted revision.
    """
    try:
        expired_watch_relists(cluster, None if watch_cache else ["--watch-cache-sizes=pods#0"])
    finally:
        if not watch_cache:
            cluster.reset()
            cluster.restart_apiserver([])


def expired_watch_relists(cluster: Cluster, restart_flags: list[str] | None) -> None:
    """The pod watch breaks while the scheduler is paused; the server restarts with
    ``restart_flags`` added (None: the same flags)."""
    cluster.add_node(node("node-0", cpu="2"))
    cluster.create(pod("gone-0", cpu="1", nodeName="node-0"))
    cluster.create(pod("keep-0", cpu="500m", nodeName="node-0"))
    sched = cluster.scheduler(CONFIG, *NO_ELECTION)
    wait(lambda: any(m.startswith("informers synced") for m in sched.messages()), 30, "sync")
    lists = sched.metric("wasmsched_informer_relists_total", 'kind="Pod"')
    assert lists == 1  # the first list

    # While the scheduler is frozen: writes it does not watch move the revision on, its
    # watches break (the server restarts), a pod goes and one comes, and etcd forgets every
    # revision up to now. The pod watch cannot resume from where it was.
    with sched.paused():
        for i in range(3):
            cluster.create(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}},
                exist_ok=True,
            )
        cluster.restart_apiserver(restart_flags)
        cluster.delete_pod("gone-0")
        # Fits only once gone-0's cpu is free: the relist must deliver the delete.
        cluster.create(pod("new-0", cpu="1"))
        cluster.etcd.compact()
    wait(lambda: "new-0" in cluster.placements(), 60, "new-0 bound after the relist")

    assert cluster.placements() == {"keep-0": "node-0", "new-0": "node-0"}
    assert sched.metric("wasmsched_informer_relists_total", 'kind="Pod"') == lists + 1
    assert "resource version expired, relisting kind=Pod" in sched.messages()
    if protobuf.AVAILABLE:  # the default contentType: the lists and watches were protobuf
        assert "reading pods and nodes as protobuf" in sched.messages()
    assert sched.bound() == ["default/new-0"]
    assert_clean(sched)
    assert sched.stop() == 0


_DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim")


def test_snapshot_exports_dra_objects_and_simulate_allocates_as_recorded(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A 1.37 server's DeviceClasses, ResourceSlices, ResourceClaimTemplates and
    ResourceClaims (one allocated to a running pod) are in the snapshot taken as the
    scheduler's ServiceAccount (deploy/rbac.yaml lets it list them), and simulate of the
    snapshot gives every pending pod a device the running pod does not hold. A 1.33
    server has no resource.k8s.io/v1: the kinds are left out."""
    from test_snapshot_dra import dra_cluster, simulate

    assert cluster.scheduler_kubeconfig is not None
    snapshot_args = ["snapshot", "--kubeconfig", str(cluster.scheduler_kubeconfig)]
    if cluster.version == "1.33":
        cluster.add_node(node("n0"))
        result = cli.invoke(app, snapshot_args)
        assert result.exit_code == 0, result.output
        kinds = {d["kind"] for d in yaml.safe_load_all(result.stdout) if d}
        assert "Node" in kinds and not kinds & set(_DRA_KINDS)
        return
    objects, status = dra_cluster()
    made: list[str] = []
    try:
        for o in objects:
            if o["kind"] == "Node":
                cluster.add_node(o)
                continue
            if o["kind"] == "Pod":
                o["spec"]["automountServiceAccountToken"] = False
            created = cluster.create(o)
            if o["kind"] in _DRA_KINDS:
                name = created["metadata"]["name"]
                made.append(f"{cluster.collection(o)}/{name}")
            if o["kind"] == "Pod" and o["metadata"]["name"] == "busy-0":
                status["reservedFor"][0]["uid"] = created["metadata"]["uid"]
        held_path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/held"
        held = cluster.request("GET", held_path)
        cluster.request("PUT", f"{held_path}/status", {**held, "status": status})

        result = cli.invoke(app, snapshot_args)
        assert result.exit_code == 0, result.output
        docs = [d for d in yaml.safe_load_all(result.stdout) if d]
        assert docs[0]["serverVersion"].startswith("v1.37.")
        kinds = [d["kind"] for d in docs]
        counts = {k: kinds.count(k) for k in _DRA_KINDS}
        assert counts == {
            "DeviceClass": 1,
            "ResourceSlice": 2,
            "ResourceClaimTemplate": 2,
            "ResourceClaim": 2,
        }
        (snap_held,) = [
            d for d in docs if d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "held"
        ]
        assert snap_held["status"]["reservedFor"] == status["reservedFor"]
        snap = tmp_path / "snapshot.yaml"
        snap.write_text(result.stdout)
        placed, claims = simulate(snap)
        assert all(placed.values()), placed
        assert placed["a10-0"] == "n1"  # n0's A10 is held by busy-0
        assert claims["default/held"] == [("n0", "gpu-0")]
        allocated = sorted(d for devices in claims.values() for d in devices)
        assert len(allocated) == len(set(allocated)) == 6
    finally:
        for path in reversed(made):
            cluster.request("DELETE", path)


# --- protobuf (clientConnection.contentType) ------------------------------------------------


def _by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {i["metadata"]["name"]: i for i in items}


def _watch_events(api: ApiClient, path: str, rv: str, accept: str) -> list[dict[str, Any]]:
    """Every event of a watch from ``rv`` that the server ends after a second."""
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
    events: list[dict[str, Any]] = []
    with api.stream(path, params, read_timeout=30, accept=accept) as resp:
        if is_protobuf(resp):
            decode_watch_frames(resp.iter_bytes(), events.append, api.omitzero)
        else:
            events = [json.loads(line) for line in resp.iter_lines() if line]
    return events


def test_protobuf_answers_decode_as_their_json(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gets, lists and a watch of varied pods and nodes, answered in protobuf, decode to
    the dicts the same objects' JSON gives; an error answer too."""
    if not protobuf.AVAILABLE:
        pytest.skip("the protobuf decoder is not built")
    cluster.add_node(varied_objects.full_node("node-a"))
    cluster.add_node(node("node-b"))
    cluster.create(varied_objects.full_pod("full-0"))
    cluster.request(
        "PATCH",
        "/api/v1/namespaces/default/pods/full-0/status",
        {"status": varied_objects.full_pod_status(varied_objects.full_pod("full-0"))},
        content_type="application/merge-patch+json",
    )
    cluster.create(pod("plain-0", nodeName="node-b"))
    cluster.create(pod("gated-0", schedulingGates=[{"name": "example.com/hold"}]))
    assert cluster.admin is not None and cluster.admin_kubeconfig is not None
    as_json = cluster.admin
    api = ApiClient(load_kube_config(cluster.admin_kubeconfig), accept_protobuf=True)
    api.omitzero = cluster.version != "1.33"
    decoded = []
    real_decode = protobuf.decode
    monkeypatch.setattr(
        protobuf,
        "decode",
        lambda data, omitzero=True: decoded.append(1) or real_decode(data, omitzero),
    )
    try:
        for resource in (RESOURCES["Pod"], RESOURCES["Node"]):
            items, rv = api.list(resource, page_size=1)
            assert _by_name(items) == _by_name(as_json.list(resource)[0])
            for name in _by_name(items):
                path = resource.object_path("default", name)
                assert api.request("GET", path, accept=api.accept(resource)) == as_json.request(
                    "GET", path
                )
                cluster.request(
                    "PATCH",
                    path,
                    {"metadata": {"labels": {"touched": "yes"}}},
                    content_type="application/merge-patch+json",
                )
            path = resource.collection_path
            via_protobuf = _watch_events(api, path, rv, api.accept(resource))
            assert [e["type"] for e in via_protobuf] == ["MODIFIED"] * len(items)
            assert via_protobuf == _watch_events(as_json, path, rv, "application/json")
        with pytest.raises(ApiError) as err:
            api.request(
                "GET", "/api/v1/namespaces/default/pods/none", accept=api.accept(RESOURCES["Pod"])
            )
        assert (err.value.status, err.value.reason) == (404, "NotFound")
        assert err.value.message == 'pods "none" not found'
    finally:
        api.close()
    assert len(decoded) > 4  # the pages, the gets and the error came as protobuf


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/vnd.kubernetes.protobuf"]
)
def test_schedules_with_either_content_type(cluster: Cluster, content_type: str) -> None:
    """clientConnection.contentType: protobuf (the default) reads pods and nodes as
    protobuf when the decoder is built and writes bindings and events as protobuf;
    application/json keeps all the traffic JSON."""
    for i in range(2):
        cluster.add_node(node(f"node-{i}", cpu="2"))
    for i in range(3):
        cluster.create(pod(f"web-{i}", cpu="500m"))
    config = f"{CONFIG}clientConnection:\n  contentType: {content_type}\n"
    sched = cluster.scheduler(config, *NO_ELECTION)
    webs = {f"web-{i}" for i in range(3)}
    wait(lambda: webs <= set(cluster.placements()), 30, "the web pods bound")
    cluster.create(pod("web-3", cpu="500m"))  # seen by the watch, not the list
    wait(lambda: "web-3" in cluster.placements(), 30, "web-3 bound")
    wire = "protobuf" if protobuf.AVAILABLE and "protobuf" in content_type else "json"
    assert f"reading pods and nodes as {wire}" in sched.messages()
    writes = "protobuf" if "protobuf" in content_type else "json"
    assert f"writing bindings and events as {writes}" in sched.messages()
    assert sorted(sched.bound()) == sorted(f"default/web-{i}" for i in range(4))
    assert_clean(sched)
    assert sched.stop() == 0


def test_protobuf_writes_bind_and_record_as_json_does(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With contentType protobuf (kube-scheduler's default) the binding and the Event go as
    protobuf bodies: the pod ends bound, each Event reads back (as JSON) with exactly the
    fields the JSON path's twin has (managedFields' fieldsV1 included), its eventTime to the
    microsecond, and a refused binding's protobuf Status reads as the JSON one does."""
    assert cluster.admin_kubeconfig is not None
    cluster.add_node(node("node-0"))
    sent: list[tuple[str, str, str]] = []
    request = ApiClient.request

    def spy(self: ApiClient, method: str, path: str, **kw: Any) -> dict[str, Any]:
        sent.append((method, path, kw.get("content_type", JSON)))
        return request(self, method, path, **kw)

    monkeypatch.setattr(ApiClient, "request", spy)
    error_bodies: list[bool] = []  # whether each error answer was protobuf
    error_from = client_module._error_from
    monkeypatch.setattr(
        client_module,
        "_error_from",
        lambda code, body, pb=False: error_bodies.append(pb) or error_from(code, body, pb),
    )
    refusals: dict[str, str] = {}
    pods = {name: Pod(cluster.create(pod(name))) for name in ("web-json", "web-pb")}
    # Both clients record the same two events about the protobuf-bound pod.
    regarding = ObjectReference("Pod", "v1", "web-pb", "default", pods["web-pb"].uid)
    for content_type, name in ((JSON, "web-json"), (PROTOBUF, "web-pb")):
        target = pods[name]
        api = ApiClient(
            load_kube_config(cluster.admin_kubeconfig),
            accept_protobuf=accepts_protobuf(content_type),
            send_protobuf=sends_protobuf(content_type),
        )
        dispatcher = Dispatcher(workers=1)
        writer = LiveWriter(api, dispatcher, {}.get)
        try:
            assert post_binding(api, target, "node-0").ok
            refused = post_binding(api, target, "node-0")
            assert refused.conflict
            refusals[content_type] = refused.message.replace(name, "<pod>")
            for related in (None, ObjectReference("Node", "v1", "node-0")):
                writer.record_event(
                    Event(0.0, regarding, related, "Normal", "Scheduled", "Binding", "assigned")
                )
            assert dispatcher.drain(10)
        finally:
            dispatcher.close()
            api.close()
    assert cluster.placements() == {"web-json": "node-0", "web-pb": "node-0"}
    assert refusals[JSON] == refusals[PROTOBUF]
    assert error_bodies == [False, protobuf.AVAILABLE]  # the server's Status, as accepted
    assert refusals[PROTOBUF].startswith("409 Conflict: Operation cannot be fulfilled on pods/")
    writes = collections.Counter(
        (path, ctype)
        for method, path, ctype in sent
        if method == "POST" and path.endswith(("/binding", "/events"))
    )
    assert writes == {
        ("/api/v1/namespaces/default/pods/web-json/binding", JSON): 2,
        ("/api/v1/namespaces/default/pods/web-pb/binding", PROTOBUF): 2,
        ("/apis/events.k8s.io/v1/namespaces/default/events", JSON): 2,
        ("/apis/events.k8s.io/v1/namespaces/default/events", PROTOBUF): 2,
    }
    events = [e for e in cluster.events() if e["reason"] == "Scheduled"]
    assert len(events) == 4

    def comparable(event: dict[str, Any]) -> dict[str, Any]:
        """The event without what differs between two creations: name, uid, times."""
        recorded = int(event["metadata"]["name"].rsplit(".", 1)[1], 16)
        assert event["eventTime"] == now_rfc3339(micro=True, at_ns=recorded)
        meta = dict(event["metadata"])
        for key in ("name", "uid", "resourceVersion", "creationTimestamp"):
            meta.pop(key)
        meta["managedFields"] = [
            {k: v for k, v in entry.items() if k != "time"} for entry in meta["managedFields"]
        ]
        rest = {k: v for k, v in event.items() if k not in ("metadata", "eventTime")}
        return {"metadata": meta, **rest}

    by_related = collections.defaultdict(list)
    for event in events:
        by_related["related" in event].append(comparable(event))
    for twins in by_related.values():
        assert len(twins) == 2 and twins[0] == twins[1]
