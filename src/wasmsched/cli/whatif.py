"""Commands: capacity (how much more fits), diff (what a configuration change changes)
and sweep (many runs, locally or on Ray)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
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

EXIT_CHANGED = 3
_T = TypeVar("_T")


class Order(StrEnum):
    sequential = "sequential"
    round_robin = "round-robin"


def _templates(paths: list[Path], replicas: list[int]) -> list[Any]:
    from wasmsched.config.loader import load_yaml
    from wasmsched.whatif.capacity import CapacityError, template_from_manifest

    if replicas and len(replicas) != len(paths):
        raise CapacityError(
            f"--replicas: give one per --pod ({len(paths)} templates, {len(replicas)} counts)"
        )
    out = []
    for i, path in enumerate(paths):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise CapacityError(f"{path}: {e.strerror or e}") from None
        doc = load_yaml(text, str(path))
        if not isinstance(doc, dict):
            raise CapacityError(f"{path}: expected one Pod or workload manifest")
        template = template_from_manifest(doc, str(path))
        if replicas:
            if replicas[i] < 0:
                raise CapacityError(f"--replicas: must be >= 0, got {replicas[i]}")
            template.replicas = replicas[i]
        out.append(template)
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        raise CapacityError(f"--pod: two templates are named the same: {names}")
    return out


@app.command()
def capacity(
    cluster: Annotated[
        Path, typer.Option("--cluster", metavar="PATH", help="Nodes and running pods (YAML).")
    ],
    pod: Annotated[
        list[Path],
        typer.Option(
            "--pod", metavar="FILE", help="A Pod or workload manifest to copy (repeatable)."
        ),
    ],
    replicas: Annotated[
        list[int] | None,
        typer.Option(
            "--replicas",
            metavar="N",
            help="Desired copies, one per --pod (default: as many as fit).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", metavar="FILE", help="A KubeSchedulerConfiguration file."),
    ] = None,
    max_copies: Annotated[
        int | None,
        typer.Option(
            "--max", metavar="N", help="Stop each template after this many copies.", min=0
        ),
    ] = None,
    order: Annotated[
        Order, typer.Option("--order", metavar="sequential|round-robin")
    ] = Order.sequential,
    allow_preemption: Annotated[
        bool, typer.Option("--allow-preemption", help="Let copies preempt lower-priority pods.")
    ] = False,
    seed: Annotated[int, typer.Option("--seed", metavar="N")] = 0,
    output: OutputOption = OutputFormat.table,
    kubernetes_version: KubernetesVersionOption = None,
    feature_gates: FeatureGatesOption = "",
) -> None:
    """How many copies of each pod template still fit on the cluster, and where."""
    from wasmsched.api.manifests import load_manifests
    from wasmsched.config import load_config_or_default
    from wasmsched.release.features import SchedulerFeatures
    from wasmsched.scheduler.registry import default_registry
    from wasmsched.whatif.capacity import Capacity

    try:
        registry = default_registry()
        templates = _templates(pod, replicas or [])
        objects = load_manifests(
            cluster, kubernetes_version=requested_kubernetes_version(kubernetes_version)
        )
        features = SchedulerFeatures.of(objects.kubernetes_version, feature_gates)
        sched_config = load_config_or_default(config, registry, features)
        result = Capacity(
            objects,
            templates,
            sched_config,
            registry,
            order="round-robin" if order is Order.round_robin else "sequential",
            max_copies=max_copies,
            allow_preemption=allow_preemption,
            seed=seed,
        ).run()
    except WasmschedError as err:
        _fail(str(err))
    if output is OutputFormat.json:
        typer.echo(json.dumps(result, indent=2))
        return
    console = Console()
    table = Table(title="Capacity")
    if replicas:
        # Do the desired counts fit? "fits" answers that question.
        for column in ("template", "copies", "desired", "fits", "stopped because"):
            table.add_column(column)
        for t in result["templates"]:
            table.add_row(
                escape(t["name"]),
                str(t["replicas"]),
                str(t["desired"]),
                "yes" if t["fits"] else "no",
                escape(t["stopReason"] or ""),
            )
    else:
        # How many more fit? Each template ran until a copy did not fit (or --max): the
        # count is the answer, and the copy that did not fit says why no more do.
        for column in ("template", "copies that fit", "stopped because"):
            table.add_column(column)
        for t in result["templates"]:
            why = t["stopReason"] or f"--max {max_copies} reached"
            table.add_row(escape(t["name"]), str(t["replicas"]), escape(why))
    console.print(table)
    nodes = result["summary"]["nodes"]
    if nodes:
        console.print("copies per node: " + escape(", ".join(f"{k} {v}" for k, v in nodes.items())))


@app.command()
def diff(
    cluster: Annotated[
        Path, typer.Option("--cluster", metavar="PATH", help="Nodes and pods (YAML).")
    ],
    config: Annotated[
        list[Path] | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="KubeSchedulerConfiguration files: A, then B (one: both sides; none: the "
            "default configuration).",
        ),
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option("--trace", metavar="FILE", help="Replay this trace under both instead."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="N")] = 0,
    output: OutputOption = OutputFormat.table,
    report: ReportOption = None,
    fail_on_change: Annotated[
        bool, typer.Option("--fail-on-change", help="Exit 3 when any pod's node or result changed.")
    ] = False,
    kubernetes_version: Annotated[
        list[str] | None,
        typer.Option(
            "--kubernetes-version",
            metavar="VERSION",
            help="The release each side models, 1.33 to 1.37: A, then B (one: both sides; "
            "default: the cluster's recorded server version, else the newest).",
        ),
    ] = None,
    feature_gates: Annotated[
        list[str] | None,
        typer.Option(
            "--feature-gates",
            metavar="GATES",
            help="kube-scheduler's --feature-gates: A, then B (one: both sides).",
        ),
    ] = None,
) -> None:
    """Run the same cluster (or trace) under two configurations, or two Kubernetes versions,
    and show what changed."""
    from wasmsched.whatif.diff import diff_runs
    from wasmsched.whatif.execute import run_document

    configs: list[Path | None] = list(config or [])
    versions = list(kubernetes_version or [])
    gates = list(feature_gates or [])
    for option, values in (
        ("--config", configs),
        ("--kubernetes-version", versions),
        ("--feature-gates", gates),
    ):
        if len(values) > 2:
            _fail(f"{option}: give at most two values (A and B), got {len(values)}")
    if len(configs) < 2 and len(versions) < 2 and len(gates) < 2:
        _fail(
            "give two --config files, two --kubernetes-version values or two --feature-gates "
            "values (A and B) to compare"
        )
    configs = _sides(configs, None)
    try:
        version_sides = [requested_kubernetes_version(v) for v in _sides(versions, None)]
    except WasmschedError as err:
        _fail(str(err))
    gate_sides = _sides(gates, "")
    labels = _labels(configs, _sides(versions, None), gate_sides)
    traces = [trace] if trace is not None else None
    try:
        a, b = (
            run_document(
                cluster,
                configs[side],
                trace=traces,
                seed=seed,
                kubernetes_version=version_sides[side],
                feature_gates=gate_sides[side],
            )
            for side in (0, 1)
        )
    except WasmschedError as err:
        _fail(str(err))
    result = diff_runs(a, b)
    if report is not None:
        from wasmsched.report import diff_report

        _write_report(report, diff_report(result, a, b, labels=labels))
    if output is OutputFormat.json:
        typer.echo(json.dumps(result, indent=2))
    else:
        _print_diff(Console(), result, *labels)
    if fail_on_change and result["changed"]:
        raise typer.Exit(EXIT_CHANGED)


def _sides(values: Sequence[_T], default: _T) -> list[_T]:
    """A and B from zero, one (both sides) or two values."""
    if not values:
        return [default, default]
    return list(values) * 2 if len(values) == 1 else list(values)


def _labels(
    configs: Sequence[Path | None], versions: Sequence[str | None], gates: Sequence[str]
) -> tuple[str, str]:
    """Each side's name in tables and reports: what differs between them."""
    names: list[list[str]] = [[], []]
    for values in (
        [c.name if c is not None else "default" for c in configs],
        [v or "" for v in versions],
        gates,
    ):
        if values[0] != values[1]:
            for side in (0, 1):
                names[side].append(values[side] or "default")
    a, b = (" ".join(n) for n in names)
    return (a, b) if a != b else (f"A {a}", f"B {b}")


def _print_diff(console: Console, result: dict[str, Any], name_a: str, name_b: str) -> None:
    changed = result["changed"]
    if changed:
        table = Table(title=f"{len(changed)} pods changed")
        for column in ("pod", f"{name_a}", f"{name_b}"):
            table.add_column(escape(column))
        for c in changed:
            table.add_row(
                escape(f"{c['namespace']}/{c['name']}"),
                escape(f"{c['a']['node'] or '-'} ({c['a']['result']})"),
                escape(f"{c['b']['node'] or '-'} ({c['b']['result']})"),
            )
        console.print(table)
    else:
        console.print("No pod changed node or result.")
    summary = result["summary"]
    deltas = Table(title="Summary")
    for column in ("metric", name_a, name_b, "delta"):
        deltas.add_column(escape(column))
    for key in sorted(set(summary["a"]) | set(summary["b"])):
        deltas.add_row(
            escape(key),
            escape(str(summary["a"].get(key, ""))),
            escape(str(summary["b"].get(key, ""))),
            escape(str(summary["delta"].get(key, ""))),
        )
    console.print(deltas)


@app.command()
def sweep(
    cluster: Annotated[
        Path, typer.Option("--cluster", metavar="PATH", help="Nodes and pods (YAML).")
    ],
    config: Annotated[
        list[Path],
        typer.Option("--config", metavar="FILE", help="A KubeSchedulerConfiguration (repeatable)."),
    ],
    trace: Annotated[
        list[Path] | None,
        typer.Option("--trace", metavar="FILE", help="A trace to replay (repeatable)."),
    ] = None,
    seeds: Annotated[
        str, typer.Option("--seeds", metavar="SEEDS", help="Seeds: N, N-M or a list.")
    ] = "0",
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", metavar="N", help="Local worker processes (default: CPUs).", min=1
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Run on Ray: 'auto' (or a local cluster) or a head address.",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Folder for per-run results (resumable).")
    ] = Path("sweep-results"),
    output: OutputOption = OutputFormat.table,
    report: ReportOption = None,
    kubernetes_version: KubernetesVersionOption = None,
    feature_gates: FeatureGatesOption = "",
) -> None:
    """Run every (configuration, trace, seed) combination and aggregate per configuration."""
    from wasmsched.release.features import SchedulerFeatures
    from wasmsched.release.version import DEFAULT_KUBERNETES_VERSION
    from wasmsched.whatif.runs import config_bundle, file_bundle
    from wasmsched.whatif.sweep import aggregate, parse_seeds, plan, run_sweep

    try:
        seed_list = parse_seeds(seeds)
        # Refuse a bad version or gate here, with one line, not in every worker.
        version = requested_kubernetes_version(kubernetes_version)
        SchedulerFeatures.of(version or DEFAULT_KUBERNETES_VERSION, feature_gates)
        configs = [(str(c), config_bundle(c)) for c in config]
        traces = [file_bundle(t) for t in trace] if trace else [None]
        specs = plan(
            configs,
            file_bundle(cluster),
            traces,
            seed_list,
            str(version) if version is not None else None,
            feature_gates,
        )
        records = run_sweep(
            specs,
            out,
            workers=workers or os.cpu_count() or 1,
            ray_address=ray,
        )
    except WasmschedError as err:
        _fail(str(err))
    summary = aggregate(records)
    if report is not None:
        from wasmsched.report import sweep_report

        _write_report(report, sweep_report(records))
    if output is OutputFormat.json:
        typer.echo(json.dumps({"runs": records, "aggregate": summary}, indent=2))
        return
    console = Console()
    for name, metrics in summary.items():
        table = Table(title=escape(name))
        for column in ("metric", "mean", "stdev", "min", "max", "n"):
            table.add_column(column)
        for key, stats in metrics.items():
            table.add_row(
                escape(key), *(str(stats[c]) for c in ("mean", "stdev", "min", "max", "n"))
            )
        console.print(table)
    print(f"{len(records)} runs; per-run results in {out}", file=sys.stderr)
