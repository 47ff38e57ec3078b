"""Commands: replay (a workload trace on the simulated clock) and import (public trace
formats to our JSON-lines trace)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from wasmsched.cli.app import (
    FeatureGatesOption,
    KubernetesVersionOption,
    OutputFormat,
    OutputOption,
    ReportOption,
    _fail,
    _write_report,
    app,
)
from wasmsched.errors import WasmschedError
from wasmsched.release.version import requested_kubernetes_version

import_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Convert a public trace format to wasmsched's JSON-lines trace (on stdout).",
)
app.add_typer(import_app, name="import")

TOP_WAITING = 10


class GpuShare(StrEnum):
    whole = "whole"
    milli = "milli"


class GpuModel(StrEnum):
    extended = "extended"
    dra = "dra"


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[float, float, int], None]]:
    """Simulated time and events per second, shown once a replay has lasted a second."""
    console = Console(stderr=True)
    started = time.monotonic()
    progress: Progress | None = None
    task = None

    def update(now: float, end: float, events: int) -> None:
        nonlocal progress, task
        if not enabled or time.monotonic() - started < 1.0:
            return
        if progress is None:
            progress = Progress(
                TextColumn("replaying"),
                BarColumn(),
                TextColumn("{task.fields[now]} / {task.fields[end]} simulated s"),
                TextColumn("{task.fields[rate]} events/s"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            progress.start()
            task = progress.add_task("trace", total=max(end, 1.0), now="0", end="0", rate="0")
        assert task is not None
        rate = events / max(time.monotonic() - started, 1e-9)
        progress.update(
            task, completed=min(now, end), now=f"{now:,.0f}", end=f"{end:,.0f}", rate=f"{rate:,.0f}"
        )

    try:
        yield update
    finally:
        if progress is not None:
            progress.stop()


@app.command()
def replay(
    trace: Annotated[
        list[Path],
        typer.Option(
            "--trace",
            metavar="FILE",
            help="JSON lines, annotated manifests, or Alibaba's two openb CSVs (repeatable).",
        ),
    ],
    cluster: Annotated[
        Path | None,
        typer.Option(
            "--cluster",
            metavar="PATH",
            help="Nodes and pods at time 0 (optional when the trace has nodes).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", metavar="FILE", help="A KubeSchedulerConfiguration file."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed of the tie-breaking.")] = 0,
    until: Annotated[
        float | None,
        typer.Option(
            "--until", metavar="SECONDS", help="Stop at this many simulated seconds.", min=0
        ),
    ] = None,
    output: OutputOption = OutputFormat.table,
    report: ReportOption = None,
    gpu_share: Annotated[
        GpuShare,
        typer.Option(
            "--gpu-share", metavar="whole|milli", help="Alibaba traces: whole GPUs or milli-GPUs."
        ),
    ] = GpuShare.whole,
    gpu_model: Annotated[
        GpuModel,
        typer.Option(
            "--gpu-model",
            metavar="extended|dra",
            help="Alibaba traces: GPUs as extended resources (per --gpu-share) or DRA devices.",
        ),
    ] = GpuModel.extended,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    kubernetes_version: KubernetesVersionOption = None,
    feature_gates: FeatureGatesOption = "",
) -> None:
    """Replay a workload trace: arrivals, run times, deletions and node changes over time."""
    from wasmsched.api.manifests import ClusterObjects, load_manifests
    from wasmsched.config import load_config_or_default
    from wasmsched.release.features import SchedulerFeatures
    from wasmsched.release.version import DEFAULT_KUBERNETES_VERSION
    from wasmsched.replay.engine import Replay
    from wasmsched.replay.sources import read_trace
    from wasmsched.scheduler.registry import default_registry

    registry = default_registry()
    try:
        requested = requested_kubernetes_version(kubernetes_version)
        events, standing = read_trace(trace, gpu_share.value, gpu_model.value)
        start = (
            load_manifests(cluster, kubernetes_version=requested)
            if cluster is not None
            else ClusterObjects(kubernetes_version=requested or DEFAULT_KUBERNETES_VERSION)
        )
        start.nodes.extend(standing.nodes)
        start.pods.extend(standing.pods)
        start.others.extend(standing.others)
        features = SchedulerFeatures.of(start.kubernetes_version, feature_gates)
        if gpu_model is GpuModel.dra and not features.dynamic_resource_allocation:
            _fail(
                f"--gpu-model dra: Kubernetes {features.version} does not allocate devices "
                "(DynamicResourceAllocation is off; resource.k8s.io/v1 is served from 1.34)"
            )
        sched_config = load_config_or_default(config, registry, features)
        run = Replay(start, events, sched_config, registry, seed=seed, until=until)
    except WasmschedError as err:
        _fail(str(err))
    try:
        with _progress(progress and output is OutputFormat.table and sys.stderr.isatty()) as update:
            result = run.run(update)
    except WasmschedError as err:
        _fail(str(err))
    finally:
        run.sim.close()
    data = result.to_json()
    if report is not None:
        from wasmsched.report import simulation_report

        _write_report(report, simulation_report(data, title="wasmsched replay"))
    if output is OutputFormat.json:
        typer.echo(json.dumps(data))
        return
    _print_table(Console(), data)


def _print_table(console: Console, data: dict[str, Any]) -> None:
    summary = data["summary"]
    table = Table(title="Replay summary", show_header=False)
    waits = summary["waitSeconds"]
    rows = [
        ("pods", summary["pods"]),
        ("results", ", ".join(f"{k} {v}" for k, v in summary["results"].items())),
        ("nodes", summary["nodes"]),
        ("preemptions", summary["preemptions"]),
        ("wait p50 / p90 / p99 (s)", f"{waits['p50']} / {waits['p90']} / {waits['p99']}"),
        (
            "peak allocation",
            ", ".join(f"{k} {v:.0%}" for k, v in summary["peakAllocation"].items()),
        ),
        ("simulated seconds", summary["simulatedSeconds"]),
        ("wall seconds", summary["wallSeconds"]),
    ]
    for key, value in rows:
        table.add_row(escape(str(key)), escape(str(value)))
    console.print(table)
    waited = [p for p in data["pods"] if p["waitSeconds"] is not None]
    worst = sorted(waited, key=lambda p: -p["waitSeconds"])[:TOP_WAITING]
    if worst:
        top = Table(title=f"Top {len(worst)} waiting pods")
        for column in ("pod", "wait (s)", "node", "result"):
            top.add_column(column)
        for p in worst:
            top.add_row(
                escape(f"{p['namespace']}/{p['name']}"),
                f"{p['waitSeconds']:.1f}",
                escape(p["node"] or ""),
                escape(p["result"]),
            )
        console.print(top)
    failed = [p for p in data["pods"] if p["result"] in ("Unschedulable", "Error")]
    if failed:
        console.print(f"{len(failed)} pods were still unschedulable at the end, e.g.:")
        for p in failed[:5]:
            console.print(f"  {escape(p['namespace'] + '/' + p['name'])}: {escape(p['message'])}")


@import_app.command("alibaba-gpu")
def import_alibaba(
    nodes: Annotated[
        Path, typer.Option("--nodes", metavar="FILE.csv", help="openb_node_list*.csv")
    ],
    pods: Annotated[Path, typer.Option("--pods", metavar="FILE.csv", help="openb_pod_list*.csv")],
    gpu_share: Annotated[
        GpuShare, typer.Option("--gpu-share", metavar="whole|milli")
    ] = GpuShare.whole,
) -> None:
    """Alibaba cluster-trace-gpu-v2023 (openb) node and pod lists as a JSON-lines trace."""
    from wasmsched.replay.alibaba import import_alibaba_gpu, to_jsonl_records

    try:
        # The Literal by comparison: mypy versions differ on what a StrEnum's .value is.
        share: Literal["whole", "milli"] = "milli" if gpu_share is GpuShare.milli else "whole"
        events = import_alibaba_gpu(nodes, pods, gpu_share=share)
    except WasmschedError as err:
        _fail(str(err))
    out = sys.stdout
    for record in to_jsonl_records(events):
        out.write(json.dumps(record, separators=(",", ":")) + "\n")
