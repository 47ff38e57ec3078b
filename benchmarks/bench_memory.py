"""Peak memory on a large production-shaped cluster, wasmsched beside kube-scheduler (issue 25,
item 4: 15,000 nodes, 150,000 running pods, 50,000 pending, peak RSS below 4 GB).

    python benchmarks/bench_memory.py                       # 15000 nodes, 150000 running, 50000 pending
    python benchmarks/bench_memory.py --schedule 2000       # load everything, schedule 2000 pods
    python benchmarks/bench_memory.py --nodes 1500 --running 15000 --pending 5000 --no-reference
    python benchmarks/bench_memory.py --tracemalloc 25      # ours only: the 25 largest allocation sites

The cluster is perf_production.py's, scaled (``production(nodes, pending, running)``),
written once as one JSON v1 List by a child process of its own (a YAML stream of 200,000
documents would measure PyYAML). Then, one after the other
(never at the same time: each may take gigabytes), in fresh processes on that file:

- wasmsched: ``load_manifests`` (what ``wasmsched simulate --cluster`` reads), then a
  Simulation of the default profile (default release) that schedules the pending pods
  (``--schedule N``: stops after N scheduling cycles, every pending pod loaded and queued);
  the child reports its VmHWM (/proc/self/status) after loading the file, after the first
  cycle (the cluster in the cache and every pod in the queue) and at the end;
- kube-scheduler (reference/, ``.cache/reference/wasmsched-reference-1.37`` or
  ``--kubernetes-version 1.33``'s) in process on a fake clientset, parallelism 16, on the
  same file: every pending pod created and queued before its first cycle, then scheduling
  for at most ``--reference-seconds`` (default: until done).

Each side's peak is the child's ``ru_maxrss`` from ``os.wait4`` (the kernel's high-water mark of
its resident set), so both are measured the same way; wasmsched's phases come from VmHWM.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_support import (
    KUBE_PARALLELISM,
    REFERENCE_NOTE,
    REFERENCES,
    ROOT,
    load_average,
    reference_command,
)

GB = 1e9


def _hwm() -> int:
    """This process's peak resident set in bytes (VmHWM)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def write(path: Path, nodes: int, running: int, pending: int) -> None:
    """The child that builds the workload and writes it (its memory is not measured)."""
    from perf_production import production

    w = production(nodes, pending=pending, running=running)
    with path.open("w") as out:
        json.dump({"apiVersion": "v1", "kind": "List", "items": w.manifests}, out)
    print(json.dumps({"nodes": len(w.nodes), "running": len(w.running), "pending": len(w.pending)}))


class _Enough(Exception):
    """Raised from the progress callback: the requested number of cycles ran."""


def ours(path: Path, schedule: int, top: int) -> None:
    """The wasmsched child: load, schedule, report VmHWM at each phase as JSON."""
    if top:
        import tracemalloc

        tracemalloc.start(1)
    from wasmsched import Simulation
    from wasmsched.api.manifests import load_manifests
    from wasmsched.config import default_config
    from wasmsched.plugins.registry import in_tree_registry

    phases: dict[str, Any] = {"start": _hwm()}
    t0 = time.perf_counter()
    cluster = load_manifests(path)
    phases["loaded"] = _hwm()
    phases["load_seconds"] = round(time.perf_counter() - t0, 1)
    sim = Simulation(cluster, default_config(), in_tree_registry(), seed=0)
    cycles = 0
    first: list[float] = []

    def progress(scheduled: int, total: int) -> None:
        nonlocal cycles
        cycles += 1
        if not first:
            first.append(time.perf_counter())
            phases["first_cycle"] = _hwm()
            phases["setup_seconds"] = round(first[0] - t0, 1)
        if cycles % 5000 == 0:  # progress, on the benchmark's standard error
            print(
                f"  wasmsched: {cycles} cycles, {scheduled} scheduled, VmHWM {_hwm() / GB:.2f} GB,"
                f" {time.perf_counter() - first[0]:.0f} s",
                file=sys.stderr,
                flush=True,
            )
        if schedule and cycles >= schedule:
            phases["scheduled"] = scheduled
            raise _Enough

    try:
        result = sim.run(progress)
        phases["scheduled"] = sum(1 for o in result.outcomes if o.node)
    except _Enough:
        pass
    phases["cycles"] = cycles
    phases["schedule_seconds"] = round(time.perf_counter() - (first[0] if first else t0), 1)
    phases["end"] = _hwm()
    if top:
        import tracemalloc

        snapshot = tracemalloc.take_snapshot()
        stats = snapshot.statistics("lineno")
        phases["traced"] = sum(s.size for s in stats)
        phases["top"] = [f"{s.size / 1e6:8.1f} MB {s.count:9d} {s.traceback}" for s in stats[:top]]
    sim.close()
    print(json.dumps(phases))


def _child(command: list[str]) -> tuple[str, float, int]:
    """Run a child to its end (its standard error passed through): (stdout, wall seconds,
    peak RSS bytes from os.wait4)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(command, stdout=out, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(command[:3])}...: exit {proc.returncode}")
        out.seek(0)
        return out.read(), wall, usage.ru_maxrss * 1024


def _self(*args: str) -> list[str]:
    return ["nice", "-n", "10", sys.executable, str(Path(__file__).resolve()), *args]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--nodes", type=int, default=15000)
    ap.add_argument("--running", type=int, default=150000)
    ap.add_argument("--pending", type=int, default=50000)
    ap.add_argument("--schedule", type=int, default=0, help="stop ours after N cycles (0: all)")
    ap.add_argument("--reference-seconds", type=int, default=0, help="kube's time limit (0: none)")
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--no-ours", action="store_true")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="N")
    ap.add_argument("--kubernetes-version", choices=sorted(REFERENCES), default="1.37")
    ap.add_argument("--cluster", type=Path, help="reuse (or keep) the cluster file here")
    ap.add_argument("--child", choices=["write", "ours"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "write":
        write(args.cluster, args.nodes, args.running, args.pending)
        return
    if args.child == "ours":
        ours(args.cluster, args.schedule, args.tracemalloc)
        return

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {commit}, load {load_average()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = args.cluster or Path(tmp) / "cluster.json"
        if not path.exists():
            sizes = ["--nodes", str(args.nodes), "--running", str(args.running)]
            out, wall, _ = _child(
                _self(
                    "--child",
                    "write",
                    "--cluster",
                    str(path),
                    *sizes,
                    "--pending",
                    str(args.pending),
                )
            )
            print(
                f"cluster {json.loads(out)} written in {wall:.0f} s: {path.stat().st_size / 1e6:.0f} MB"
            )
        if not args.no_ours:
            command = _self(
                "--child", "ours", "--cluster", str(path), "--schedule", str(args.schedule)
            )
            out, wall, peak = _child([*command, "--tracemalloc", str(args.tracemalloc)])
            phases = json.loads(out)
            print(
                f"wasmsched: peak RSS {peak / GB:.2f} GB (wait4), VmHWM after loading the file"
                f" {phases['loaded'] / GB:.2f} GB ({phases['load_seconds']} s), at the first cycle"
                f" {phases['first_cycle'] / GB:.2f} GB ({phases['setup_seconds']} s), at the end"
                f" {phases['end'] / GB:.2f} GB; {phases['scheduled']} pods scheduled in"
                f" {phases['cycles']} cycles, {phases['schedule_seconds']} s; wall {wall:.0f} s"
            )
            for line in phases.get("top", []):
                print("   ", line)
            if "traced" in phases:
                print(f"    traced by tracemalloc: {phases['traced'] / GB:.2f} GB")
        binary = REFERENCES[args.kubernetes_version]
        if args.no_reference:
            pass
        elif not binary.is_file():
            print(REFERENCE_NOTE)
        else:
            limit = args.reference_seconds or 24 * 3600
            command = reference_command(binary, path, KUBE_PARALLELISM, limit)
            out, wall, peak = _child(["nice", "-n", "10", *command])
            report = json.loads(out)
            summary = report["summary"]
            print(
                f"kube-scheduler {args.kubernetes_version}: peak RSS {peak / GB:.2f} GB (wait4);"
                f" {summary.get('scheduled')} pods scheduled, {summary.get('wallSeconds')} s from"
                f" its first cycle{', ' + summary['stopped'] if summary.get('stopped') else ''};"
                f" wall {wall:.0f} s"
            )
    print(f"load at the end: {load_average()}")


if __name__ == "__main__":
    main()
