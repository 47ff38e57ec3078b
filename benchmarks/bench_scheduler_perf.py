"""kube-scheduler's scheduler_perf workloads, wasmsched beside kube-scheduler in the same run.

    python benchmarks/bench_scheduler_perf.py                          # every workload, 500 and 5000 nodes
    python benchmarks/bench_scheduler_perf.py --workload TopologySpreading --nodes 500
    python benchmarks/bench_scheduler_perf.py --quick                  # 100 nodes, a smoke run
    python benchmarks/bench_scheduler_perf.py --no-reference           # wasmsched only
    python benchmarks/bench_scheduler_perf.py --placements             # also the placement check
    python benchmarks/bench_scheduler_perf.py --kubernetes-version 1.37  # both sides at v1.37
    python benchmarks/bench_scheduler_perf.py --workload SchedulingWithResourceClaimTemplate --nodes 1000

The workloads (perf_workloads.py, perf_production.py, perf_dra.py) follow v1.33.4's
test/integration/scheduler_perf performance-config.yaml files and their templates (the DRA
shape v1.37.2's dra/performance-config.yaml), plus a production-shaped cluster of our own. Init pods are bound up front; the measured pods are
pending at the first cycle. Each row gives the measured pods' rate for both schedulers:

- wasmsched (in process, default profile, seed 0): measured pods bound from the end of the
  first scheduling cycle to the last binding (loading the cluster is not timed);
- kube-scheduler v1.33.4 (reference/, in process on a fake clientset, --bind-wait 0) at
  its default configuration, parallelism 16: measured pods / its wall seconds from its
  first cycle to its last activity.

``--kubernetes-version 1.33|1.37`` runs both sides at that release (our default profile of
it, and its reference). Without it a row runs at the release its shape needs (the DRA
shape: 1.37, both sides), and the other rows as before: ours at the default release, the
reference v1.33.4.

ratio = ours / kube. Every pod's result is checked on both sides (measured pods
Scheduled, and Unschedulable's large pods and the gated pods left unscheduled); a
mismatch on our side stops the run, on the reference's side it is printed in place of
the ratio. Rows the reference cannot express (timed churn) are ours only, with the
reason. A benchmark measures: nothing here asserts a speed.

At parallelism 16 kube-scheduler's node sampling is racy, so its placements may differ
from ours; this compares throughput, not placements. ``--placements`` adds a separate,
labelled check: the reference again at parallelism 1 (the differential suite's setting),
its ties broken towards our choices, and the count of pods placed alike. Its time is not
a speed figure.

Simulated time: wasmsched's clock skips waits (backoff, the unschedulable flush), while
kube-scheduler really waits; this matters for PreemptionBasic, whose preemptors are
retried after a backoff of about a second.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_support import (
    KUBE_PARALLELISM,
    REFERENCE,
    REFERENCE_NOTE,
    REFERENCES,
    ROOT,
    CycleClock,
    load_average,
    run_reference,
)
from perf_dra import scheduling_with_resource_claim_template
from perf_production import production
from perf_workloads import SCHEDULED, SCHEDULER_PERF, Workload

from wasmsched import ClusterObjects, Simulation
from wasmsched.config import SchedulerConfig, default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import parse_kubernetes_version
from wasmsched.replay.engine import Replay

WORKLOADS: dict[str, Callable[[int], Workload]] = {
    **SCHEDULER_PERF,
    "Production": production,
    "SchedulingWithResourceClaimTemplate": scheduling_with_resource_claim_template,
}
QUICK_NODES = [100]
DEFAULT_NODES = [500, 5000]
# The reference of each --kubernetes-version.
REFERENCE_VERSIONS = {"1.33": "v1.33.4", "1.37": "v1.37.2"}
# A replayed pod that is bound and still running at the end.
REPLAY_RUNNING = "Running"


@dataclass
class Row:
    workload: str
    nodes: int
    measured: int
    ours: float
    kube: float | None = None
    note: str = ""
    placements: str = ""

    @property
    def ratio(self) -> str:
        return f"{self.ours / self.kube:.2f}x" if self.kube else "-"


class WorkloadError(Exception):
    """A pod of the workload did not end as the workload expects."""


def _check(w: Workload, results: dict[str, str], who: str, scheduled: str = SCHEDULED) -> None:
    wrong = [(k, results.get(k)) for k in w.measured if results.get(k) != scheduled]
    wrong += [(k, results.get(k)) for k, want in w.expect.items() if results.get(k) != want]
    if wrong:
        shown = ", ".join(f"{k}: {r}" for k, r in wrong[:3])
        raise WorkloadError(f"{who}: {len(wrong)} pods not as expected ({shown})")


def config_for(release: str) -> SchedulerConfig:
    """The default profile of ``release`` ("" = the default release)."""
    if not release:
        return default_config()
    return default_config(SchedulerFeatures.of(parse_kubernetes_version(release)))


def _check_devices(w: Workload, claims: Iterable[Mapping[str, Any]]) -> None:
    """Each measured pod's claims allocated, and no device held by two claims (results
    with admin access or a share of a device left out)."""
    held: set[tuple[str, str, str]] = set()
    reserved = 0
    for claim in claims:
        status = claim.get("status") or {}
        allocation = status.get("allocation")
        if allocation is None:
            continue
        reserved += len(status.get("reservedFor") or [])
        for r in allocation["devices"]["results"]:
            if r.get("adminAccess") or r.get("shareID"):
                continue
            device = (r["driver"], r["pool"], r["device"])
            if device in held:
                raise WorkloadError(f"wasmsched: device {'/'.join(device)} allocated twice")
            held.add(device)
    measured = set(w.measured)
    wanted = sum(len(p.resource_claims) for p in w.pending if p.key in measured)
    if reserved < wanted:
        raise WorkloadError(f"wasmsched: {reserved} claims reserved for pods, {wanted} expected")


def run_ours(w: Workload, release: str = "") -> tuple[float, dict[str, str]]:
    """(measured pods bound per second, each pod's node) of one simulation."""
    if w.events:
        return _run_replay(w, release)
    cluster = ClusterObjects(nodes=w.nodes, pods=[*w.running, *w.pending], others=w.others)
    clock = CycleClock(cpu=False)
    sim = Simulation(cluster, config_for(release), in_tree_registry(), seed=0)
    try:
        result = sim.run(clock)
    finally:
        sim.close()
    _check(w, {o.pod.key: o.result for o in result.outcomes}, "wasmsched")
    _check_devices(w, sim.store.resource_claims.values())
    nodes = {o.pod.key: o.node for o in result.outcomes if o.node}
    return clock.bound_rate(), nodes


def _run_replay(w: Workload, release: str) -> tuple[float, dict[str, str]]:
    """A workload with timed changes, through the trace replay (wasmsched replay's engine):
    measured pods / wall seconds from the end of the first cycle to the end of the run."""
    cluster = ClusterObjects(nodes=w.nodes, pods=[*w.running, *w.pending], others=w.others)
    marks: list[float] = []
    replay = Replay(cluster, w.events, config_for(release), in_tree_registry(), seed=0)
    result = replay.run(lambda now, end, events: marks.append(time.perf_counter()))
    replay.sim.close()
    _check(w, {p.pod.key: p.result for p in result.pods}, "wasmsched", REPLAY_RUNNING)
    wall = marks[-1] - marks[0]
    return len(w.measured) / wall, {p.pod.key: p.node for p in result.pods if p.node}


def reference_binary(release: str) -> Path:
    """The reference of ``release`` ("" = v1.33.4, as before the flag)."""
    return REFERENCES[release] if release else REFERENCE


def run_kube(w: Workload, release: str = "") -> float:
    """kube-scheduler at parallelism 16: measured pods / its wall seconds."""
    report = run_reference(w.manifests, KUBE_PARALLELISM, binary=reference_binary(release))
    _check(w, {f"{p['namespace']}/{p['name']}": p["result"] for p in report["pods"]}, "kube")
    return len(w.measured) / float(report["summary"]["wallSeconds"])


def placement_check(w: Workload, ours: dict[str, str], release: str = "") -> str:
    """The reference at parallelism 1, ties broken towards our nodes: pending pods placed
    alike (on the same node, or on none by both)."""
    report = run_reference(w.manifests, 1, prefer=ours, binary=reference_binary(release))
    pods = report["pods"]
    same = sum(1 for p in pods if ours.get(f"{p['namespace']}/{p['name']}") == p["node"])
    return f"{same}/{len(pods)} placed alike at parallelism 1"


def run_row(name: str, nodes: int, reference: bool, placements: bool, release: str = "") -> Row:
    """One workload at one size. ``release`` ("" = unchosen) runs both sides at that
    release; unchosen, a shape that needs a release runs at it."""
    w = WORKLOADS[name](nodes)
    if w.release and release and release != w.release:
        return Row(name, nodes, len(w.measured), 0.0, note=f"skipped: needs {w.release}")
    release = release or w.release
    ours, placed = run_ours(w, release)
    row = Row(name, nodes, len(w.measured), ours, note=w.note)
    if reference and not reference_binary(release).is_file():
        row.note = f"{REFERENCE_NOTE} ({release or '1.33'}); {w.note}"
    elif reference and w.reference_note:
        row.note = f"ours only: {w.reference_note}; {w.note}"
    elif reference:
        try:
            row.kube = run_kube(w, release)
        except WorkloadError as err:
            row.note = f"{err}; {w.note}"
        except subprocess.CalledProcessError as err:
            row.note = f"kube: the reference failed ({_failure(err)}); {w.note}"
        if placements:
            row.placements = placement_check(w, placed, release)
    return row


def _failure(err: subprocess.CalledProcessError) -> str:
    """The line of the reference's stderr that says what went wrong: a Go panic or fatal
    error if there is one (the stack trace follows it), else its last line."""
    lines = [line.strip() for line in (err.stderr or "").splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("panic:", "fatal error:")):
            return line
    return lines[-1] if lines else str(err)


def _commit() -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() + (" (src modified)" if dirty.stdout.strip() else "")


HEADER = f"{'workload':<36} {'nodes':>5} {'measured':>8} {'ours pods/s':>11} {'kube pods/s':>11} {'ratio':>6}  notes"


def print_row(row: Row) -> None:
    kube = f"{row.kube:.1f}" if row.kube else "-"
    notes = "; ".join(x for x in (row.note, row.placements) if x)
    print(
        f"{row.workload:<36} {row.nodes:>5} {row.measured:>8} {row.ours:>11.1f} {kube:>11} "
        f"{row.ratio:>6}  {notes}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="all", help="a name, or all: " + ", ".join(WORKLOADS))
    parser.add_argument("--nodes", default="", help="node counts, comma-separated (500,5000)")
    parser.add_argument("--quick", action="store_true", help="100 nodes: a smoke run")
    parser.add_argument("--no-reference", action="store_true", help="skip kube-scheduler")
    parser.add_argument(
        "--kubernetes-version",
        default="",
        choices=["", *REFERENCES],
        help="run both sides at this release (default: a shape's own release, else ours at "
        "the default release beside the v1.33.4 reference)",
    )
    parser.add_argument(
        "--placements",
        action="store_true",
        help="also run the reference at parallelism 1 and count the pods placed alike",
    )
    args = parser.parse_args()
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    for name in names:
        if name not in WORKLOADS:
            parser.error(
                f"--workload: unknown workload {name!r} (one of: all, {', '.join(WORKLOADS)})"
            )
    if args.nodes:
        try:
            sizes = [int(x) for x in args.nodes.split(",")]
        except ValueError:
            parser.error(f"--nodes: not a list of integers: {args.nodes!r}")
    else:
        sizes = QUICK_NODES if args.quick else DEFAULT_NODES
    reference = not args.no_reference
    release = args.kubernetes_version
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# {stamp}, commit {_commit()}, load average {load_average()}")
    if reference:
        which = (
            REFERENCE_VERSIONS[release]
            if release
            else "v1.33.4 (a shape's own release where it needs one)"
        )
        print(f"# kube-scheduler {which} in process, parallelism {KUBE_PARALLELISM}, same run")
    print(HEADER, flush=True)
    for nodes in sizes:
        for name in names:
            print_row(run_row(name, nodes, reference, args.placements, release))
    print(f"# done, load average {load_average()}")


if __name__ == "__main__":
    sys.exit(main())
