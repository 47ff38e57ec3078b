"""What the scheduling benchmarks share: the scheduler_perf node and pod shapes, the
clock that times wasmsched from its first scheduling cycle, and the reference
(kube-scheduler v1.33.4, or v1.37.2 with ``binary=REFERENCES["1.37"]``, in process on a
fake clientset, reference/, built by scripts/build-reference) run on the same cluster.

The house rule for speed: kube-scheduler runs at its default configuration, parallelism 16,
in the same run as wasmsched. Parallelism 1 exists for the differential suite's exactness
(with node sampling, which nodes a parallel Filter pass processed is racy, so placements at
16 may differ from ours); ``run_reference(..., parallelism=1, prefer=...)`` is only for an
optional, separately labelled placement check, never for a pods/s figure.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / ".cache" / "reference" / "wasmsched-reference"
# The reference of each release (scripts/build-reference --kubernetes-version all).
REFERENCES = {"1.33": REFERENCE, "1.37": REFERENCE.with_name("wasmsched-reference-1.37")}
REFERENCE_NOTE = "kube-scheduler reference not built (scripts/build-reference): no ratio"
# kube-scheduler's default parallelism (pkg/scheduler/apis/config/v1: SetDefaults_
# KubeSchedulerConfiguration): every speed comparison runs the reference at it.
KUBE_PARALLELISM = 16


def node_manifest(
    name: str,
    labels: Mapping[str, str] | None = None,
    capacity: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
    images: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Ready node with the hostname label scheduler_perf's node preparer adds
    (node_util.go: PrepareNodes); allocatable is capacity, as the API server defaults it."""
    resources = dict(capacity or {"cpu": "4", "memory": "32Gi", "pods": "110"})
    status: dict[str, Any] = {
        "capacity": resources,
        "allocatable": dict(resources),
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    if images:
        status["images"] = images
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": dict(spec or {}),
        "status": status,
    }


def make_node(i: int) -> Node:
    """scheduler_perf's node-default (4 CPU, 32Gi, 110 pods), in zones zone-0..2."""
    return Node(node_manifest(f"node-{i}", {"topology.kubernetes.io/zone": f"zone-{i % 3}"}))


def container(
    requests: Mapping[str, str] | None = None,
    limits: Mapping[str, str] | None = None,
    image: str = "registry.k8s.io/pause:3.10",
    ports: list[dict[str, Any]] | None = None,
    name: str = "pause",
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image}
    if requests or limits:
        c["resources"] = {
            **({"requests": dict(requests)} if requests else {}),
            **({"limits": dict(limits)} if limits else {}),
        }
    if ports:
        c["ports"] = ports
    return c


# pod-default.yaml's container: 100m / 500Mi requested and limited, containerPort 80.
DEFAULT_REQUESTS = {"cpu": "100m", "memory": "500Mi"}


def pod_manifest(
    name: str,
    namespace: str = "default",
    spec: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    node: str = "",
) -> dict[str, Any]:
    """A pod of pod-default.yaml's shape, ``spec`` merged over it, bound to ``node`` if given."""
    full: dict[str, Any] = {
        "containers": [
            container(DEFAULT_REQUESTS, DEFAULT_REQUESTS, ports=[{"containerPort": 80}])
        ],
        **(spec or {}),
    }
    if node:
        full["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": full,
    }


def make_pod(
    i: int, extra_spec: dict[str, Any] | None = None, labels: dict[str, str] | None = None
) -> Pod:
    return Pod(pod_manifest(f"pod-{i}", "sched-0", extra_spec, labels))


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def write_cluster(path: Path, manifests: Iterable[Mapping[str, Any]]) -> None:
    """JSON documents in a YAML stream (tests/reference_support.py: Case.write): fast to
    write at 20,000 pods, and no YAML 1.1 scalar read one way by PyYAML and another by Go."""
    with path.open("w") as out:
        for m in manifests:
            out.write("---\n")
            out.write(json.dumps(m))
            out.write("\n")


def cluster_manifests(cluster: ClusterObjects) -> list[Mapping[str, Any]]:
    return [
        *(n.manifest for n in cluster.nodes),
        *(p.manifest for p in cluster.pods),
        *cluster.others,
    ]


def reference_command(
    binary: Path, cluster: Path, parallelism: int = KUBE_PARALLELISM, timeout: float = 900.0
) -> list[str]:
    """The reference's command line on a cluster file."""
    return [
        str(binary),
        "--cluster",
        str(cluster),
        "--timeout",
        f"{int(timeout)}s",
        "--parallelism",
        str(parallelism),
        # --bind-wait 0: the differential suite's wait for in-flight bindings before
        # each pop (reference/run.go) serializes kube-scheduler's binding goroutines;
        # a throughput run lets them overlap, as scheduler_perf does.
        "--bind-wait",
        "0",
    ]


def run_reference(
    manifests: Iterable[Mapping[str, Any]],
    parallelism: int = KUBE_PARALLELISM,
    prefer: Mapping[str, str] | None = None,
    timeout: float = 900.0,
    binary: Path = REFERENCE,
) -> dict[str, Any]:
    """kube-scheduler v1.33.4 on a cluster: its report (pods, summary with wallSeconds from
    its first cycle to its last activity). ``prefer`` (namespace/name -> node) breaks its
    ties towards wasmsched's choices; for the placement check only."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.yaml"
        write_cluster(path, manifests)
        command = reference_command(binary, path, parallelism, timeout)
        if prefer is not None:
            (Path(tmp) / "prefer.json").write_text(json.dumps(dict(prefer)))
            command += ["--prefer", str(Path(tmp) / "prefer.json")]
        out = subprocess.run(command, check=True, capture_output=True, text=True)
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def reference_pods_per_second(
    cluster: ClusterObjects, pods: int, binary: Path = REFERENCE
) -> float | None:
    """kube-scheduler's pods/s at parallelism 16 on the same cluster (from its first cycle
    to its last binding), or None when the reference is not built."""
    if not binary.is_file():
        return None
    summary = run_reference(cluster_manifests(cluster), binary=binary)["summary"]
    if summary["scheduled"] != pods:
        raise SystemExit(f"reference: expected {pods} scheduled, got {summary}")
    return float(summary["podsPerSecond"])


class CycleClock:
    """Wall and CPU time at the first and the last scheduling cycle (the simulation's
    progress callback runs after each): pods/s with the startup (loading the nodes and
    pods into the cache and the queue) subtracted, as the issue-11 table measures it.

    ``bound`` keeps the time the scheduled count last grew: a workload whose pending pods
    include unschedulable ones is timed to its last binding, not to the retries the
    simulated clock runs afterwards (the reference's clock also stops at its last
    activity before the leftover flush). With ``cpu`` False it reads no CPU clock (a
    process-wide CPU clock costs microseconds per call in a process with threads, charged
    to the cycles being timed)."""

    def __init__(self, cpu: bool = True) -> None:
        self.cpu = cpu
        self.first: tuple[float, float] | None = None
        self.last: tuple[float, float] = (0.0, 0.0)
        self.cycles = 0
        self.scheduled_first = 0
        self.scheduled_last = 0
        self.bound = 0.0

    def __call__(self, scheduled: int, total: int) -> None:
        now = (time.perf_counter(), time.process_time() if self.cpu else 0.0)
        if self.first is None:
            self.first, self.scheduled_first, self.bound = now, scheduled, now[0]
        if scheduled > self.scheduled_last:
            self.scheduled_last, self.bound = scheduled, now[0]
        self.last = now
        self.cycles += 1

    def rates(self) -> tuple[float, float]:
        """(pods/s of wall time, pods per CPU second) from the first cycle to the last."""
        assert self.first is not None
        wall = self.last[0] - self.first[0]
        cpu = self.last[1] - self.first[1]
        n = self.cycles - 1
        return n / wall if wall > 0 else float("inf"), n / cpu if cpu > 0 else float("inf")

    def bound_rate(self) -> float:
        """Pods bound per second, from the end of the first cycle to the last binding."""
        assert self.first is not None
        wall = self.bound - self.first[0]
        n = self.scheduled_last - self.scheduled_first
        return n / wall if wall > 0 else float("inf")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"
