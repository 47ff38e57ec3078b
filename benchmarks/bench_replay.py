"""Trace replay at the size of Alibaba's openb GPU trace (cluster-trace-gpu-v2023).

Generates seeded CSVs with the columns of ``openb_node_list_all_node.csv`` and
``openb_pod_list_default.csv`` at the full size (1,523 nodes, 8,152 pods) and replays them
with ``wasmsched replay`` (default profile) in a subprocess, reporting wall time, trace
events per second, scheduling cycles and the child's peak RSS.

    python benchmarks/bench_replay.py                     # sparse and dense
    python benchmarks/bench_replay.py --variant dense     # one variant
    python benchmarks/bench_replay.py --write-only DIR    # only write the CSVs
    python benchmarks/bench_replay.py --python PATH       # another venv's interpreter
    python benchmarks/bench_replay.py --json FILE         # keep the replay JSON
    python benchmarks/bench_replay.py --gpu-model dra     # GPUs as DRA devices and claims

Shapes follow the public trace (the cluster-trace-gpu-v2023 README and the published
CSVs): the node mix by CPU / memory / GPU count / model (CPU-only nodes, 8-GPU G2 and G3,
2-GPU T4, P100, V100M16, V100M32, two A10 nodes), pods as the trace's recurring request
shapes (mostly one GPU, a share of them GPU-sharing with ``gpu_milli`` < 1000, some
CPU-only, a few 2/4/8-GPU tasks), QoS classes LS / BE / Burstable / Guaranteed, phases
Running / Failed / Succeeded / Pending (a Pending pod has no scheduled_time), a few pods
running from the trace's start to its end, and run times heavy-tailed (log-normal).

- ``sparse``: arrival times as in the trace: a few long-running pods over the first
  ~115 days, then the rest over ~34 days with a daily cycle; ~149 days in all.
- ``dense``: the same pods arriving within one day (``--window``), each running a
  log-normal time with a mean of 6 h (``--mean-run``): GPUs saturate, hundreds of pods
  wait, every deletion requeues them (kube-scheduler's NodeResourcesFit queueing hint,
  isSchedulableAfterPodEvent, answers Queue for a deleted scheduled pod).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NODES = 1523
PODS = 8152
DAY = 86400.0
TRACE_END = 12_902_960.0  # the last deletion time of openb_pod_list_default.csv

# (count, cpu_milli, memory_mib, gpus, model): the openb node mix (1,523 nodes, ~6,200 GPUs).
NODE_MIX: list[tuple[int, int, int, int, str]] = [
    (130, 32000, 262144, 0, ""),
    (70, 96000, 524288, 0, ""),
    (30, 96000, 393216, 0, ""),
    (22, 64000, 524288, 0, ""),
    (40, 104000, 524288, 0, ""),
    (33, 32000, 131072, 0, ""),
    (12, 32000, 65536, 0, ""),
    (14, 64000, 262144, 0, ""),
    (4, 104000, 786432, 0, ""),
    (6, 64000, 131072, 0, ""),
    (560, 96000, 393216, 8, "G2"),
    (36, 128000, 786432, 8, "G3"),
    (320, 104000, 524288, 2, "T4"),
    (16, 96000, 393216, 4, "T4"),
    (110, 16000, 122880, 2, "P100"),
    (22, 64000, 262144, 2, "P100"),
    (4, 8000, 61440, 1, "P100"),
    (32, 32000, 131072, 4, "V100M16"),
    (20, 8000, 32768, 1, "V100M16"),
    (8, 64000, 262144, 8, "V100M16"),
    (22, 96000, 786432, 8, "V100M32"),
    (10, 48000, 376832, 4, "V100M32"),
    (2, 128000, 1048576, 1, "A10"),
]

# (weight, cpu_milli, memory_mib, num_gpu, gpu_milli choices, qos weights LS/BE/Burstable/
# Guaranteed): the trace's recurring request shapes.
POD_SHAPES: list[
    tuple[float, int, int, int, tuple[int, ...], tuple[float, float, float, float]]
] = [
    (14, 3152, 5600, 1, (1000, 1000, 810, 590), (0, 1, 0, 0)),
    (10, 8000, 30517, 1, (470, 320, 220, 650, 230), (0.1, 0.9, 0, 0)),
    (8, 4000, 15258, 1, (220, 320, 160, 110, 50), (0.1, 0.9, 0, 0)),
    (4, 4000, 22888, 1, (320, 480, 220, 160), (0, 1, 0, 0)),
    (9, 11908, 47104, 1, (470, 650, 1000), (0.85, 0.15, 0, 0)),
    (7, 11400, 48128, 1, (1000,), (1, 0, 0, 0)),
    (6, 16000, 32768, 1, (1000,), (0.95, 0, 0.05, 0)),
    (5, 12000, 24576, 1, (1000,), (0.7, 0, 0.2, 0.1)),
    (4, 12000, 16384, 1, (1000,), (1, 0, 0, 0)),
    (4, 18708, 64512, 1, (1000,), (1, 0, 0, 0)),
    (4, 6000, 12288, 1, (460,), (1, 0, 0, 0)),
    (2, 9810, 41560, 1, (1000,), (1, 0, 0, 0)),
    (2, 15200, 80896, 1, (1000,), (1, 0, 0, 0)),
    (2, 4000, 24576, 1, (1000,), (1, 0, 0, 0)),
    (2, 8000, 16384, 1, (1000,), (1, 0, 0, 0)),
    (6, 8000, 30517, 0, (0,), (0, 1, 0, 0)),
    (3, 32000, 49152, 0, (0,), (0, 1, 0, 0)),
    (2, 12500, 57344, 0, (0,), (1, 0, 0, 0)),
    (1, 16000, 31250, 0, (0,), (1, 0, 0, 0)),
    (1.0, 6000, 65536, 2, (1000,), (1, 0, 0, 0)),
    (0.6, 32200, 132096, 4, (1000,), (1, 0, 0, 0)),
    (0.5, 88000, 327680, 8, (1000,), (0, 0, 1, 0)),
    (0.4, 64000, 262144, 8, (1000,), (1, 0, 0, 0)),
]
DENSE_SIGMA = 1.0
QOS = ("LS", "BE", "Burstable", "Guaranteed")
GPU_SPECS = ("V100M16|V100M32", "G2", "T4", "G2|G3", "P100|T4")


def node_rows(rng: random.Random, scale: float = 1.0) -> list[dict[str, Any]]:
    """The node list, shuffled as the trace interleaves node types."""
    kinds = [k for count, *k in NODE_MIX for _ in range(count)]
    assert len(kinds) == NODES, len(kinds)
    rng.shuffle(kinds)
    kinds = kinds[: round(NODES * scale)]
    return [
        {"sn": f"openb-node-{i:04d}", "cpu_milli": c, "memory_mib": m, "gpu": g, "model": model}
        for i, (c, m, g, model) in enumerate(kinds)
    ]


def _run_time(rng: random.Random, mean: float | None, sigma: float = 1.8) -> float:
    # Log-normal run times: most minutes to hours, a tail of days. With a mean, mu is
    # chosen so that E[X] = exp(mu + sigma^2 / 2) = mean.
    mu = math.log(900.0) if mean is None else math.log(mean) - sigma * sigma / 2
    return max(1.0, round(rng.lognormvariate(mu, sigma)))


def _arrival_sparse(rng: random.Random) -> float:
    # ~34 days of arrivals before the trace's end, denser in the daytime.
    start = TRACE_END - 34 * DAY
    while True:
        t = rng.uniform(start, TRACE_END - 3600)
        hour = (t % DAY) / 3600
        if rng.random() < 0.35 + 0.65 * math.sin(math.pi * hour / 24) ** 2:
            return t


def pod_rows(
    rng: random.Random,
    variant: str,
    window: float,
    mean_run: float,
    gpuspec: float,
    scale: float = 1.0,
) -> list[dict[str, Any]]:
    """The pod list, sorted by creation time as the trace is."""
    weights = [s[0] for s in POD_SHAPES]
    rows: list[dict[str, Any]] = []
    for _ in range(round(PODS * scale)):
        _, cpu, mem, num_gpu, millis, qos_w = rng.choices(POD_SHAPES, weights)[0]
        gpu_milli = rng.choice(millis)
        qos = rng.choices(QOS, qos_w)[0]
        long_running = rng.random() < 0.005
        if variant == "sparse":
            created = rng.uniform(0, TRACE_END - 34 * DAY) if long_running else _arrival_sparse(rng)
            run = TRACE_END - created if long_running else _run_time(rng, None)
        else:
            created = rng.uniform(0, window)
            run = _run_time(rng, mean_run, DENSE_SIGMA)
        created = float(round(created))
        phase = rng.choices(("Running", "Failed", "Succeeded", "Pending"), (60, 25, 8, 7))[0]
        if phase == "Pending" and not long_running:  # never scheduled in the trace
            scheduled: float | None = None
            deleted = created + max(5.0, round(rng.lognormvariate(math.log(120), 1.2)))
        else:
            scheduled = created + (0.0 if rng.random() < 0.6 else round(rng.expovariate(1 / 40)))
            deleted = min(scheduled + run, TRACE_END) if variant == "sparse" else scheduled + run
        spec = rng.choice(GPU_SPECS) if num_gpu and rng.random() < gpuspec else ""
        rows.append(
            {
                "cpu_milli": cpu,
                "memory_mib": mem,
                "num_gpu": num_gpu,
                "gpu_milli": gpu_milli,
                "gpu_spec": spec,
                "qos": qos,
                "pod_phase": phase,
                "creation_time": int(created),
                "deletion_time": int(deleted),
                "scheduled_time": "" if scheduled is None else int(scheduled),
            }
        )
    rows.sort(key=lambda r: r["creation_time"])
    return [{"name": f"openb-pod-{i:04d}", **r} for i, r in enumerate(rows)]


def write_trace(
    out: Path,
    variant: str,
    seed: int,
    window: float,
    mean_run: float,
    gpuspec: float,
    scale: float = 1.0,
) -> tuple[Path, Path]:
    """Writes the two CSVs of one variant; returns (node list, pod list)."""
    rng = random.Random(f"{variant}-{seed}")
    out.mkdir(parents=True, exist_ok=True)
    nodes = out / f"openb_node_list_{variant}.csv"
    pods = out / f"openb_pod_list_{variant}.csv"
    for path, rows in (
        (nodes, node_rows(rng, scale)),
        (pods, pod_rows(rng, variant, window, mean_run, gpuspec, scale)),
    ):
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return nodes, pods


def run_replay(
    python: str, nodes: Path, pods: Path, out_json: Path, gpu_model: str = "extended"
) -> dict[str, Any]:
    """Runs ``wasmsched replay --output json`` in a child; wall time and the child's peak RSS."""
    cmd = [python, "-m", "wasmsched", "replay", "--trace", str(nodes), "--trace", str(pods)]
    cmd += ["--output", "json", "--gpu-model", gpu_model]
    started = time.perf_counter()
    with out_json.open("wb") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"replay failed ({proc.returncode}): {err[-2000:]}")
    summary = json.loads(out_json.read_text())["summary"]
    return {
        "wall": wall,
        "rss_mb": usage.ru_maxrss / 1024,  # Linux: kilobytes
        "cpu": usage.ru_utime + usage.ru_stime,
        "summary": summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=("sparse", "dense", "all"), default="all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--window", type=float, default=DAY, help="dense: arrival window (s)")
    parser.add_argument(
        "--mean-run", type=float, default=48 * 3600.0, help="dense: mean run time (s)"
    )
    parser.add_argument(
        "--gpuspec", type=float, default=0.0, help="share of GPU pods with a gpu_spec"
    )
    parser.add_argument(
        "--scale", type=float, default=1.0, help="nodes and pods times this (to profile)"
    )
    parser.add_argument(
        "--gpu-model",
        choices=("extended", "dra"),
        default="extended",
        help="GPUs as extended resources (whole GPUs) or as DRA devices and claims",
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter with wasmsched")
    parser.add_argument("--write-only", type=Path, help="write the CSVs there and stop")
    parser.add_argument("--json", type=Path, help="keep each replay's JSON as FILE.<variant>")
    args = parser.parse_args()
    variants = ["sparse", "dense"] if args.variant == "all" else [args.variant]
    with tempfile.TemporaryDirectory() as tmp:
        out = args.write_only or Path(tmp)
        rows = []
        for variant in variants:
            nodes, pods = write_trace(
                out, variant, args.seed, args.window, args.mean_run, args.gpuspec, args.scale
            )
            if args.write_only:
                print(nodes, pods)
                continue
            target = (
                args.json.with_suffix(f".{variant}.json") if args.json else Path(tmp) / "r.json"
            )
            r = run_replay(args.python, nodes, pods, target, args.gpu_model)
            s = r["summary"]
            rows.append((variant, r, s))
            print(
                f"{variant}: wall {r['wall']:.1f} s (replay loop {s['wallSeconds']:.1f} s, "
                f"CPU {r['cpu']:.1f} s), "
                f"peak RSS {r['rss_mb']:.0f} MB, {s['events']} events "
                f"({s['events'] / r['wall']:.0f}/s), {s['schedulingCycles']} cycles, "
                f"results {s['results']}, preemptions {s['preemptions']}, "
                f"wait p50/p90/p99 {s['waitSeconds']['p50']}/{s['waitSeconds']['p90']}/"
                f"{s['waitSeconds']['p99']} s, peak {s['peakAllocation']}",
                flush=True,
            )
        if rows:
            print()
            print("| trace | wall s | CPU s | peak RSS MB | events | events/s | cycles | target |")
            print("|---|---|---|---|---|---|---|---|")
            for variant, r, s in rows:
                ok = "PASS" if r["wall"] < 60 else "FAIL"
                print(
                    f"| {variant} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['rss_mb']:.0f} | "
                    f"{s['events']} | "
                    f"{s['events'] / r['wall']:.0f} | {s['schedulingCycles']} | < 60 s {ok} |"
                )


if __name__ == "__main__":
    main()
