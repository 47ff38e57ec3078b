"""The fault-injection soak, bounded: replicas in their own processes against the double.

Watch drops, 500s on bindings, expired resource versions (410), a replica restart, kill -9
of the leader and a paused leader (SIGSTOP past its lease, then SIGCONT), while pods keep
arriving. Invariants: every pod bound exactly once, no node over-committed, no traceback.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import IO, Any

from apiserver import ApiServerDouble
from live_support import (
    node,
    placements,
    pod,
    replica_command,
    replica_env,
    stop_replicas,
    wait,
)
from wasmsched.api.objects import Pod


def _holder(srv: ApiServerDouble) -> str:
    lease = srv.get("Lease", "kube-system", "wasmsched")
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


def test_soak_every_pod_bound_once_no_node_overcommitted(tmp_path: Path) -> None:
    srv = ApiServerDouble(bookmark_interval=0.5)
    srv.start()
    kubeconfig = srv.kubeconfig(tmp_path / "kubeconfig")
    procs: dict[str, subprocess.Popen[bytes]] = {}
    logs: dict[str, IO[bytes]] = {}

    def start(name: str) -> None:
        logs[name] = open(tmp_path / f"{name}.log", "wb")  # noqa: SIM115
        procs[name] = subprocess.Popen(
            replica_command(kubeconfig, name),
            stdout=logs[name],
            stderr=subprocess.STDOUT,
            env=replica_env(),
        )

    def batch(first: int, count: int) -> None:
        for i in range(first, first + count):
            srv.create(pod(f"web-{i}", cpu="300m"))

    try:
        for i in range(8):
            srv.create(node(f"node-{i}", cpu="4", memory="64Gi"))
        start("a")
        wait(lambda: _holder(srv) == "a", 60, "a leading")
        start("b")
        wait(lambda: "wasmsched (b)" in srv.user_agents, 60, "b up")
        # Drops, 500s and 410s while the first batch is scheduled.
        srv.faults.drop_watch("Pod", after_events=3, count=2)
        srv.faults.fail_next("POST", r"/binding$", status=500, count=5)
        batch(0, 30)
        wait(lambda: len(placements(srv)) >= 10, 60, "first bindings")
        srv.faults.expire_resource_versions()
        srv.faults.drop_watch("Node", count=1)
        wait(lambda: len(placements(srv)) == 30, 60, "first batch bound")
        # kill -9 of the leader; a restarted replica joins.
        procs["a"].kill()
        procs["a"].wait(30)
        start("c")
        batch(30, 30)
        wait(lambda: _holder(srv) in ("b", "c"), 60, "a new leader after kill -9")
        wait(lambda: len(placements(srv)) == 60, 60, "second batch bound")
        # The leader paused past its lease; pods keep coming meanwhile.
        leader = _holder(srv)
        other = "c" if leader == "b" else "b"
        procs[leader].send_signal(signal.SIGSTOP)
        batch(60, 30)
        wait(lambda: _holder(srv) == other, 60, f"{other} taking over from the paused {leader}")
        procs[leader].send_signal(signal.SIGCONT)
        wait(lambda: len(placements(srv)) == 90, 60, "third batch bound")
        assert procs[leader].wait(60) == 1  # the deposed leader left
    finally:
        stop_replicas(procs.values(), logs.values())
        bindings = list(srv.bindings)
        pods = [Pod(m) for m in srv.list("Pod")]
        nodes = {n["metadata"]["name"]: n for n in srv.list("Node")}
        srv.stop()
    ok: dict[str, int] = {}
    for b in bindings:
        if b["code"] == 201:
            ok[b["name"]] = ok.get(b["name"], 0) + 1
    assert ok == {f"web-{i}": 1 for i in range(90)}
    used: dict[str, int] = {}
    for p in pods:
        assert p.node_name, p.key
        used[p.node_name] = used.get(p.node_name, 0) + 300
    for name, millis in used.items():
        assert millis <= _millicores(nodes[name]), (name, millis)
    output = {name: (tmp_path / f"{name}.log").read_text() for name in logs}
    assert not any("Traceback" in text for text in output.values()), output


def _millicores(n: dict[str, Any]) -> int:
    cpu = str(n["status"]["allocatable"]["cpu"])
    return int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)
