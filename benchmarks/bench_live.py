"""Live-mode throughput and latency: beside kube-scheduler on a real kube-apiserver, and
against the API server double (tests/apiserver).

Against the double, the same cluster as bench_scheduling.py's SchedulingBasic (500 nodes of 4 CPU, pods of
100m/500Mi, default plugins), scheduled by ``wasmsched run``'s LiveRunner over real HTTP:

* ``upfront``: every pod exists before the scheduler starts; pods/s from the first to the
  last binding, against the simulator's pods/s on the same cluster (the ratio is the
  issue's target: >= 70% with the double answering at once);
* ``steady``: pods created at a steady rate; creation-to-bind latency p50/p99;
* each with the double answering at once and 200 ms late (``--latency``).

The double runs in this process (its threads share the interpreter with the scheduler),
so the live numbers are a lower bound of what a separate API server allows.

    python benchmarks/bench_live.py                 # all cases
    python benchmarks/bench_live.py --quick         # 100 nodes, fewer pods
    python benchmarks/bench_live.py --real-only     # only the real kube-apiserver cases
    python benchmarks/bench_live.py --real-only --wasmsched-src ../before/src  # a change

The first cases run ``wasmsched run`` and the kube-scheduler binary side by side, each
as a process against a fresh real kube-apiserver (v1.33.4, or v1.37.2 with
``--kubernetes-version 1.37``) with etcd on loopback (the live suite's fixture,
tests/kube_apiserver.py; built by ``scripts/build-apiserver --kube-scheduler``; skipped
with the reason when not built), both as the cluster admin, with the same
KubeSchedulerConfiguration at each clientConnection qps/burst of ``--limits`` (default
10000/10000, then kube's 50/100): 500 nodes, 2000 pods pending before the scheduler starts,
binds/s from the first to the last binding that a pod watch sees; then 400 pods created at
40/s while it runs, creation-to-bind latency p50/p99 as the watch sees it.

Side by side on the 2-core machine under load (load average 8-15; kube-scheduler's own rate
moved from 85 to 151 binds/s between runs, so compare within a run). "before" is the
live mode as it was (one HTTP connection pool shared by every thread, events taking the
bindings' tokens, plugin durations observed on the scheduling thread):

| qps/burst  | scheduler      | before: binds/s, p50/p99 ms     | after: binds/s, p50/p99 ms     |
|------------|----------------|---------------------------------|--------------------------------|
| 10000      | kube-scheduler | 150.9, 8.9 / 121                | 84.6, 7.9 / 75                 |
| 10000      | wasmsched      | 114.8 (0.76x), 170 / 784        | 94.5 (1.12x), 12.8 / 347       |
| 50/100     | kube-scheduler | 52.6, 6.7 / 194                 | 52.4, 8.4 / 93                 |
| 50/100     | wasmsched      | 38.5 (0.73x), 1319 / 4892       | 52.4 (1.00x), 14.8 / 258       |

A second run after (pod updates keep what was parsed, ``Pod.updated``): at 10000 kube 68.2
binds/s (8.5 / 223 ms), wasmsched 122.7 (1.80x; 15.1 / 258 ms); at 50/100 kube 52.5
(5.9 / 87 ms), wasmsched 52.6 (1.00x; 8.0 / 322 ms). Against kube-apiserver 1.37 at 10000:
kube 39.4 (11.6 / 309 ms), wasmsched 75.2 (1.91x; 24.2 / 474 ms).

Against the API server double (in this process), measured on the 2-core development machine under load (load average 7-14; the simulator
itself ran at 124-212 pods/s across runs, so compare within one run), 500 nodes; "before"
is the live mode as it was (4 workers, 1 event worker), with the double as it was for the
instant cases and with TCP_NODELAY for the 200 ms ones:

| case                         | before             | after                      |
|------------------------------|--------------------|----------------------------|
| upfront, instant (1000 pods) | 62-71 pods/s, 0.3x | 133-152 pods/s, 0.9-1.2x   |
| upfront, 200 ms              | 18 pods/s          | 102-120 pods/s             |
| steady 40/s, instant, p50/99 | 33 / 628 ms        | 4 / 96-187 ms              |
| steady 40/s, 200 ms, p50/99  | 7.3 s / 15.3 s     | 206 / 427-541 ms           |

Where the difference went: a scheduled pod costs two writes (the binding and its
Scheduled event; the status patch is written only for failures), and every answer of the
double waited ~40 ms for a delayed ACK, so 4 workers and 1 event worker capped bindings and
events (half the events were still queued when the run ended). With TCP_NODELAY in the
double, 64 binding and 16 event workers and a connection pool as large, what is left is
the scheduling thread sharing the interpreter with the double and the HTTP client.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_scheduling import make_node, make_pod, run_case  # noqa: E402

from apiserver import ApiServerDouble  # noqa: E402
from wasmsched.config import default_config  # noqa: E402
from wasmsched.live import ApiClient, LiveRunner, RunOptions, load_kube_config  # noqa: E402
from wasmsched.live.client import RESOURCES, ApiError  # noqa: E402
from wasmsched.plugins.registry import in_tree_registry  # noqa: E402


def _pod(i: int) -> dict[str, Any]:
    manifest = dict(make_pod(i).manifest)
    manifest["metadata"] = {"name": f"pod-{i}", "namespace": "default"}
    return manifest


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def run_live(
    nodes: int, pods: int, *, latency: float, rate: float | None, workers: int | None = None
) -> dict[str, Any]:
    srv = ApiServerDouble(bookmark_interval=5.0)
    srv.start()
    for i in range(nodes):
        srv.create(dict(make_node(i).manifest))
    created: dict[str, float] = {}
    if rate is None:
        for i in range(pods):
            srv.create(_pod(i))
            created[f"pod-{i}"] = time.monotonic()
    if latency:
        srv.faults.delay(r".", latency)
    api = ApiClient(load_kube_config(srv.kubeconfig(Path(tempfile.mkdtemp()) / "kubeconfig")))
    opts = RunOptions(leader_elect=False, port=None)
    if workers is not None:
        opts.api_workers = workers
    runner = LiveRunner(api, default_config(), in_tree_registry(), opts)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    runner.ready.wait(120)
    start = time.monotonic()
    if rate is not None:
        for i in range(pods):
            time.sleep(max(0.0, start + i / rate - time.monotonic()))
            srv.create(_pod(i))
            created[f"pod-{i}"] = time.monotonic()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        ok = [b for b in list(srv.bindings) if b["code"] == 201]
        if len(ok) >= pods:
            break
        time.sleep(0.05)
    runner.stop()
    thread.join(30)
    api.close()
    srv.stop()
    ok = [b for b in srv.bindings if b["code"] == 201]
    if len(ok) != pods:
        raise SystemExit(f"expected {pods} bindings, got {len(ok)}")
    first, last = min(b["at"] for b in ok), max(b["at"] for b in ok)
    lat = [b["at"] - created[b["name"]] for b in ok]
    out: dict[str, Any] = {
        "nodes": nodes,
        "pods": pods,
        "latency_ms": latency * 1000,
        "mode": "upfront" if rate is None else f"steady {rate:g}/s",
        "pods_per_second": round(pods / max(last - first, 1e-9), 1),
        "bind_p50_ms": round(_percentile(lat, 0.5) * 1000, 1),
        "bind_p99_ms": round(_percentile(lat, 0.99) * 1000, 1),
        "writes": {
            k: sum(1 for m, t, _ in srv.requests if m == k[0] and k[1] in t)
            for k in (("POST", "/binding"), ("PATCH", "/status"), ("POST", "/events"))
        },
        "dropped_events": runner.dispatcher.dropped_events,
    }
    out["writes"] = {f"{m} {p}": n for (m, p), n in out["writes"].items()}
    return out


KUBE_SCHEDULERS = {
    "1.33": ROOT / ".cache" / "bin" / "kube-scheduler",
    "1.37": ROOT / ".cache" / "bin" / "kube-scheduler-1.37",
}
# Creation-to-bind latency: pods created at this rate, below either scheduler's
# throughput at 50 qps, while the scheduler runs.
STEADY_RATE = 40.0
STEADY_PODS = 400


class BindWatch:
    """A watch on every pod (as the admin) that notes when each pod is first seen bound:
    the moment a watcher of the cluster sees the binding, for either scheduler."""

    def __init__(self, api: ApiClient) -> None:
        self.api = api
        self.bound: dict[str, float] = {}
        self._stop = threading.Event()
        _, rv = api.list(RESOURCES["Pod"], 500)
        self._rv = rv
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # A loaded server's watch cache may lag the list's revision ("Too large resource
        # version", an ERROR event that ends the stream): watch again from the last seen.
        with contextlib.suppress(ApiError):  # the server stopping under it
            self._watch()

    def _watch(self) -> None:
        while not self._stop.is_set():
            params = {"watch": "true", "resourceVersion": self._rv, "timeoutSeconds": "3600"}
            with self.api.stream("/api/v1/pods", params, read_timeout=3700) as resp:
                for line in resp.iter_lines():
                    if self._stop.is_set():
                        return
                    if not line:
                        continue
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        break
                    meta = obj.get("metadata") or {}
                    self._rv = meta.get("resourceVersion") or self._rv
                    name = meta.get("name")
                    if (obj.get("spec") or {}).get("nodeName") and name not in self.bound:
                        self.bound[name] = time.monotonic()
            time.sleep(0.2)

    def wait(
        self,
        names: list[str],
        timeout: float,
        first_bound: Callable[[ApiClient], None] | None = None,
    ) -> bool:
        """Whether every pod of ``names`` is bound within ``timeout``; ``first_bound`` is
        called (within 10 ms) once the first binding is seen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if first_bound is not None and self.bound:
                first_bound(self.api)
                first_bound = None
            if all(n in self.bound for n in names):
                return True
            if not self._thread.is_alive():
                raise SystemExit("the pod watch ended")
            time.sleep(0.01 if first_bound is not None else 0.05)
        return False

    def stop(self) -> None:
        self._stop.set()


def _scheduler_config(path: Path, kubeconfig: Path, qps: float, burst: int) -> Path:
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: false}\n"
        f"clientConnection: {{kubeconfig: {kubeconfig}, qps: {qps}, burst: {burst}}}\n"
        "profiles: [{schedulerName: default-scheduler}]\n"
    )
    return path


def _scheduler_argv(
    which: str,
    version: str,
    config: Path,
    trace: Path | None = None,
    profile: str | None = None,
) -> list[str]:
    if which == "kube-scheduler":
        # No serving port: nothing reads its /metrics here.
        return [str(KUBE_SCHEDULERS[version]), f"--config={config}", "--secure-port=0"]
    # --trace-pods: the same command under live_trace.py, which times each pod's stages;
    # --profile-threads: under live_profile.py, which profiles each thread's CPU.
    python = [sys.executable, "-m", "wasmsched"]
    if trace is not None:
        python = [sys.executable, str(ROOT / "benchmarks" / "live_trace.py"), str(trace)]
    elif profile is not None:
        python = [sys.executable, str(ROOT / "benchmarks" / "live_profile.py"), profile]
    return [*python, "run", "--config", str(config),
            "--no-leader-elect", "--port", "0", *WASMSCHED_ARGS]  # fmt: skip


# --wasmsched-args: more `wasmsched run` flags (e.g. --api-workers 16), to compare settings.
WASMSCHED_ARGS: list[str] = []

# The stages live_trace.py times: (stage, the stage it is timed from, what lies between).
TRACE_STAGES = [
    ("line", "created", "creation to the watch line read"),
    ("emit", "line", "decoding the watch event"),
    ("apply", "emit", "the inbox: waiting for the scheduling thread"),
    ("added", "apply", "parsing, validating, queueing the pod"),
    ("cycle", "added", "the queue: waiting for the pod's cycle"),
    ("submit", "cycle", "the scheduling cycle up to the binding handed off"),
    ("post", "submit", "binding job queued to its POST sent"),
    ("posted", "post", "the binding POST"),
    ("bound", "posted", "POST answered to the watch seeing it bound"),
    ("cycle_end", "cycle", "the whole attempt, binding included (wall)"),
]


def trace_breakdown(
    trace: Path, created: dict[str, float], bound: dict[str, float]
) -> dict[str, Any]:
    """Per stage, p50/p99/max milliseconds over the traced pods; the cycles' CPU time,
    sampled (plugin metrics) and not; the garbage collections over 10 ms meanwhile."""
    data = json.loads(trace.read_text())
    rows: dict[str, list[float]] = {stage: [] for stage, _, _ in TRACE_STAGES}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    post_cpu: list[float] = []
    for name, born in created.items():
        stages = {**data["pods"].get(name, {}), "created": born, "bound": bound[name]}
        for stage, since, _ in TRACE_STAGES:
            if stage in stages and since in stages:
                rows[stage].append((stages[stage] - stages[since]) * 1000)
        if "post_cpu" in stages:
            post_cpu.append(stages["post_cpu"] * 1000)
        if "cpu" in stages and "submit" in stages:
            cpu[bool(stages.get("sampled"))].append(stages["cpu"] * 1000)
    first, last = min(created.values()), max(bound.values())
    pauses = [(round(d * 1000, 1), g) for t, d, g in data["gc"] if first <= t <= last and d > 0.01]

    def stats(values: list[float]) -> str:
        return (
            f"{_percentile(values, 0.5):.1f} / {_percentile(values, 0.99):.1f} / "
            f"{max(values, default=float('nan')):.1f} ms"
        )

    return {
        "stages p50/p99/max": {f"{s}: {what}": stats(rows[s]) for s, _, what in TRACE_STAGES},
        "cycle CPU, sampled": f"{len(cpu[True])} cycles, {stats(cpu[True])}",
        "cycle CPU, not sampled": f"{len(cpu[False])} cycles, {stats(cpu[False])}",
        "binding POST, the worker's CPU": stats(post_cpu),
        "gc pauses > 10 ms (ms, generation)": pauses,
    }


def _create(cluster: Any, names: list[str], threads: int = 8) -> dict[str, float]:
    """Creates the pods from ``threads`` threads; when each creation was answered."""
    created: dict[str, float] = {}

    def one(name: str) -> None:
        body = _pod(int(name.split("-")[1]))
        cluster.create(body)
        created[name] = time.monotonic()

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, names))
    return created


def _metrics(api: ApiClient) -> str:
    """The API server's /metrics, as text."""
    with api.stream("/metrics", {}, read_timeout=30) as resp:
        return str(resp.read().decode())


def _binding_histogram(api: ApiClient) -> dict[str, float]:
    """The API server's own duration histogram of binding POSTs (its /metrics:
    apiserver_request_duration_seconds, cumulative: upper bound -> count, "sum" -> s)."""
    text = _metrics(api)
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_duration_seconds") or (
            'subresource="binding"' not in line or 'verb="POST"' not in line
        ):
            continue
        value = float(line.rsplit(" ", 1)[1])
        if "_bucket{" in line:
            out[line.split('le="')[1].split('"')[0]] = value
        elif "_sum{" in line:
            out["sum"] = value
    return out


def _cpu_seconds(pid: int) -> float:
    """A process's user+system CPU seconds so far (/proc/PID/stat, clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _request_counts(api: ApiClient) -> dict[str, float]:
    """The API server's apiserver_request_total, summed by verb, resource and subresource
    (every code and scope together)."""
    text = _metrics(api)
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(
            part.split("=", 1) for part in line[line.index("{") + 1 : line.rindex("}")].split(",")
        )
        key = " ".join(
            labels.get(k, '""').strip('"') for k in ("verb", "resource", "subresource")
        ).strip()
        out[key] = out.get(key, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


class CpuSampler:
    """Where the machine's two cores went between the first and the last binding: each
    process's CPU milliseconds per pod bound in that window, and the API server's
    requests per pod (its apiserver_request_total, read at the first binding and after
    the last)."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.first: tuple[dict[str, float], dict[str, float]] | None = None

    def read(self) -> dict[str, float]:
        return {k: _cpu_seconds(pid) for k, pid in self.pids.items()}

    def mark(self, api: ApiClient) -> None:
        """Called by the watch when it sees the first binding."""
        self.first = (self.read(), _request_counts(api))

    def per_pod(self, pods: int, requests: dict[str, float]) -> dict[str, Any]:
        after = self.read()
        if self.first is None:
            return {}
        cpu_before, req_before = self.first
        cpu = {k: round((after[k] - cpu_before[k]) * 1000 / pods, 2) for k in after}
        per_pod = {
            k: round((v - req_before.get(k, 0.0)) / pods, 2)
            for k, v in sorted(requests.items())
            if v - req_before.get(k, 0.0) >= pods / 100
        }
        return {"cpu_ms_per_pod": cpu, "requests_per_pod": per_pod}


def _events_written(api: ApiClient, want: int, timeout: float = 20.0) -> str:
    """The Events POSTed once every pod is bound, waiting up to ``timeout`` for queued ones
    (one Scheduled event a pod: fewer means dropped or never sent)."""
    deadline = time.monotonic() + timeout
    while True:
        posted = int(_request_counts(api).get("POST events", 0.0))
        if posted >= want or time.monotonic() >= deadline:
            return f"{posted} of {want}"
        time.sleep(0.5)


def _server_side(before: dict[str, float], after: dict[str, float]) -> str:
    """Mean, p50 and p99 (as histogram bucket bounds) of the bindings between two scrapes."""
    delta = {k: v - before.get(k, 0.0) for k, v in after.items()}
    count = delta.get("+Inf", 0.0)
    if not count:
        return "no bindings"
    bounds = sorted((float(k), n) for k, n in delta.items() if k not in ("sum", "+Inf"))

    def quantile(q: float) -> str:
        for bound, n in bounds:
            if n >= q * count:
                return f"<= {bound * 1000:g} ms"
        return "> the last bucket"

    mean = delta["sum"] / count * 1000
    return f"{int(count)} bindings, mean {mean:.1f} ms, p50 {quantile(0.5)}, p99 {quantile(0.99)}"


def run_real(
    which: str,
    nodes: int,
    pods: int,
    *,
    qps: float,
    burst: int,
    version: str = "1.33",
    src: Path = ROOT / "src",
    trace: Path | None = None,
    profile: Path | None = None,
) -> dict[str, Any]:
    """``which`` (kube-scheduler or wasmsched) against a fresh real kube-apiserver of
    ``version`` with etcd (tests/kube_apiserver.py), as the cluster admin, with the same
    KubeSchedulerConfiguration (no leader election, clientConnection ``qps``/``burst``):

    * throughput: ``pods`` pending pods created before the scheduler starts; binds/s from
      the first to the last binding that a pod watch sees;
    * latency: then, with the scheduler running, STEADY_PODS pods created at STEADY_RATE
      a second; creation (the POST's answer) to the binding that the watch sees, p50/p99;
      and the API server's own time for those binding POSTs (its /metrics).
    """
    from kube_apiserver import Process, missing, start_cluster

    mode = f"{which}, real kube-apiserver {version}, qps {qps:g}/burst {burst}"
    reason = missing(version)
    if reason is None and which == "kube-scheduler" and not KUBE_SCHEDULERS[version].is_file():
        reason = (
            f"{KUBE_SCHEDULERS[version].relative_to(ROOT)} is not built (scripts/build-apiserver "
            f"--kube-scheduler --kubernetes-version {version})"
        )
    if reason is not None:
        return {"mode": mode, "skipped": reason}
    cluster = start_cluster(version=version)
    proc = None
    try:
        for i in range(nodes):
            n = dict(make_node(i).manifest)
            n["status"] = {k: v for k, v in n["status"].items() if k != "conditions"}
            cluster.add_node(n)
        upfront = [f"pod-{i}" for i in range(pods)]
        _create(cluster, upfront)
        assert cluster.admin is not None
        watch = BindWatch(cluster.admin)
        config = _scheduler_config(
            cluster.work / "bench-config.yaml", cluster.admin_kubeconfig, qps, burst
        )
        env = {**os.environ, "PYTHONPATH": str(src)}
        trace = trace if which == "wasmsched" else None
        profiled = f"{profile}-{qps:g}" if profile is not None and which == "wasmsched" else None
        argv = _scheduler_argv(which, version, config, trace, profiled)
        proc = Process(which, argv, cluster.work / "s.log", env)
        pids = {"kube-apiserver": cluster.apiserver.pid, "etcd": cluster.etcd.pid}
        started = time.monotonic()
        proc.start()
        pids["scheduler"] = proc.pid
        cpu = CpuSampler(pids)
        if not watch.wait(upfront, 900, first_bound=cpu.mark):
            raise SystemExit(f"{mode}: {len(watch.bound)} of {pods} bound\n{proc.tail()}")
        accounting = cpu.per_pod(pods - 1, _request_counts(cluster.admin))
        times = sorted(watch.bound[n] for n in upfront)
        steady = [f"pod-{pods + i}" for i in range(STEADY_PODS)]
        histogram = _binding_histogram(cluster.admin)
        created: dict[str, float] = {}
        t0 = time.monotonic()
        for i, name in enumerate(steady):
            time.sleep(max(0.0, t0 + i / STEADY_RATE - time.monotonic()))
            created.update(_create(cluster, [name], threads=1))
        if not watch.wait(steady, 300):
            raise SystemExit(f"{mode}: the steady pods were not all bound\n{proc.tail()}")
        latency = [watch.bound[n] - created[n] for n in steady]
        server = _server_side(histogram, _binding_histogram(cluster.admin))
        events = _events_written(cluster.admin, pods + STEADY_PODS)
        watch.stop()
    finally:
        if proc is not None:
            proc.stop()
        cluster.close()
    extra: dict[str, Any] = {}
    if trace is not None:
        extra["trace"] = trace_breakdown(trace, created, {n: watch.bound[n] for n in steady})
    return {
        "mode": mode,
        "nodes": nodes,
        "pods": pods,
        "binds_per_second": round((pods - 1) / max(times[-1] - times[0], 1e-9), 1),
        "start_to_last_bind_s": round(times[-1] - started, 2),
        "steady": f"{STEADY_PODS} pods at {STEADY_RATE:g}/s",
        "latency_p50_ms": round(_percentile(latency, 0.5) * 1000, 1),
        "latency_p99_ms": round(_percentile(latency, 0.99) * 1000, 1),
        "steady bindings, API server side": server,
        "upfront, per pod (first to last bind)": accounting,
        "events_written": events,
        **extra,
    }


def run_side_by_side(
    nodes: int,
    pods: int,
    limits: list[tuple[float, int]],
    version: str,
    src: Path,
    trace: Path | None = None,
    want_kube: bool = True,
    profile: Path | None = None,
    repeat: int = 1,
) -> list[dict[str, Any]]:
    """kube-scheduler, then wasmsched (imported from ``src``), at each (qps, burst);
    wasmsched's ratio to kube's. With ``repeat`` > 1 each pair runs that many times, one
    pair after the other, and a summary line gives the median of the pairs' ratios: on a
    shared 2-core machine one pair moves by 30% from run to run."""
    rows = []
    for qps, burst in [pair for pair in limits for _ in range(repeat)]:
        kube: dict[str, Any] = {"skipped": "--no-kube"}
        if want_kube:
            kube = run_real("kube-scheduler", nodes, pods, qps=qps, burst=burst, version=version)
            print(json.dumps(kube), flush=True)
        ours = run_real(
            "wasmsched",
            nodes,
            pods,
            qps=qps,
            burst=burst,
            version=version,
            src=src,
            trace=trace,
            profile=profile,
        )
        if "skipped" not in kube and "skipped" not in ours:
            ours["vs_kube_scheduler"] = round(
                ours["binds_per_second"] / kube["binds_per_second"], 2
            )
        print(json.dumps(ours, indent=1 if trace else None), flush=True)
        rows += [kube, ours]
    if repeat > 1:
        for qps, burst in limits:
            ratios = sorted(
                r["vs_kube_scheduler"]
                for r in rows
                if "vs_kube_scheduler" in r and r["mode"].endswith(f"qps {qps:g}/burst {burst}")
            )
            if ratios:
                summary = {
                    "limits": f"{qps:g}/{burst}",
                    "pairs": len(ratios),
                    "ratios": ratios,
                    "median_vs_kube_scheduler": ratios[len(ratios) // 2]
                    if len(ratios) % 2
                    else round((ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2, 2),
                }
                print(json.dumps(summary), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", type=int, default=None, help="api_workers (default: 64)")
    parser.add_argument(
        "--real-only", action="store_true", help="only the real kube-apiserver cases"
    )
    parser.add_argument(
        "--limits",
        default="10000/10000,50/100",
        help="clientConnection qps/burst pairs of the real cases (default 10000/10000,50/100)",
    )
    parser.add_argument("--kubernetes-version", default="1.33", choices=sorted(KUBE_SCHEDULERS))
    parser.add_argument(
        "--wasmsched-src",
        type=Path,
        default=ROOT / "src",
        help="the sources `wasmsched run` imports in the real cases (to compare a change)",
    )
    parser.add_argument(
        "--trace-pods",
        type=Path,
        metavar="FILE",
        help="debug run: wasmsched under live_trace.py, each stage's latency (written to FILE)",
    )
    parser.add_argument(
        "--profile-threads",
        type=Path,
        metavar="PREFIX",
        help="debug run: wasmsched under live_profile.py, each thread's CPU profile "
        "(PREFIX-<qps>.txt and .prof files)",
    )
    parser.add_argument("--no-kube", action="store_true", help="wasmsched alone")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each real pair N times and print the median ratio (default 1)",
    )
    parser.add_argument(
        "--wasmsched-args",
        default="",
        metavar="FLAGS",
        help="more `wasmsched run` flags in the real cases, e.g. '--api-workers 16'",
    )
    args = parser.parse_args()
    WASMSCHED_ARGS.extend(args.wasmsched_args.split())
    logging.basicConfig(level=logging.WARNING)
    nodes, pods = (100, 200) if args.quick else (500, 1000)
    limits = [(float(q), int(b)) for q, b in (p.split("/") for p in args.limits.split(","))]
    run_side_by_side(
        nodes,
        2 * pods,
        limits,
        args.kubernetes_version,
        args.wasmsched_src,
        args.trace_pods,
        not args.no_kube,
        args.profile_threads,
        args.repeat,
    )
    if args.real_only:
        return
    sim = run_case(nodes, pods)
    print(json.dumps({"simulator": sim}))
    for latency in (0.0, 0.2):
        up = run_live(nodes, pods, latency=latency, rate=None, workers=args.workers)
        up["vs_simulator"] = round(up["pods_per_second"] / sim["pods_per_second"], 2)
        print(json.dumps(up))
        steady = run_live(nodes, pods // 2, latency=latency, rate=40.0, workers=args.workers)
        print(json.dumps(steady))


if __name__ == "__main__":
    main()
