"""Rendering simulation results: JSON for machines, rich tables for people."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from wasmsched.framework.runtime import CycleRecord
from wasmsched.scheduler import PodOutcome
from wasmsched.simulator import SimulationResult, report_to_dict

_RESULT_STYLE = {"Scheduled": "green", "Unschedulable": "yellow", "Error": "red"}


def result_to_json(result: SimulationResult, explain: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "pods": [report_to_dict(r, explain) for r in result.pods],
        "summary": result.summary(),
    }
    if explain:
        data["events"] = [
            {
                "time": e.time,
                "object": f"{e.regarding.namespace}/{e.regarding.name}"
                if e.regarding.namespace
                else e.regarding.name,
                "type": e.type,
                "reason": e.reason,
                "action": e.action,
                "note": e.note,
            }
            for e in result.events
        ]
    return data


def print_table(console: Console, result: SimulationResult) -> None:
    table = Table(title="Pods", title_justify="left")
    for column in ("NAMESPACE", "NAME", "RESULT", "NODE", "MESSAGE"):
        table.add_column(column, overflow="fold")
    for o in result.pods:
        style = _RESULT_STYLE.get(o.result, "")
        message = o.message
        if o.nominated_node:
            message = f"{message} (nominated: {o.nominated_node})".strip()
        table.add_row(
            o.pod.namespace,
            o.pod.name,
            f"[{style}]{o.result}[/{style}]" if style else o.result,
            o.node or "",
            message,
        )
    console.print(table)
    s = result.summary()
    line = (
        f"{s['scheduled']} scheduled, {s['unschedulable']} unschedulable, {s['error']} error "
        f"of {s['pods']} pods on {s['nodes']} nodes; {s['schedulingCycles']} scheduling cycles, "
        f"{s['simulatedSeconds']} s simulated, {s['wallSeconds']} s wall"
    )
    console.print(line)
    for p in result.preemptions:
        console.print(f"preempted {p.victim} on {p.node} for {p.preemptor}")
    if result.other_scheduler_pods:
        names = ", ".join(
            f"{p.namespace}/{p.name} ({p.scheduler_name})" for p in result.other_scheduler_pods
        )
        console.print(f"left to other schedulers: {names}")
    for profile, plugins in result.skipped_plugins.items():
        console.print(
            f"[dim]profile {profile}: default plugins not implemented yet, skipped: "
            f"{', '.join(plugins)}[/dim]"
        )
    if result.stopped_early:
        console.print(f"[red]{result.stopped_early}[/red]")


def print_explain(console: Console, result: SimulationResult) -> None:
    for outcome in result.outcomes:
        _explain_pod(console, outcome)
    print_table(console, result)


def _explain_pod(console: Console, outcome: PodOutcome) -> None:
    pod = outcome.pod
    head = f"[bold]{pod.namespace}/{pod.name}[/bold]: {outcome.result}"
    if outcome.node:
        head += f" on {outcome.node}"
    console.rule(head)
    if outcome.message:
        console.print(outcome.message)
    if not outcome.cycles:
        return
    for attempt, record in enumerate(outcome.cycles, 1):
        if len(outcome.cycles) > 1:
            console.print(f"[dim]attempt {attempt}[/dim]")
        _explain_cycle(console, record)


def _explain_cycle(console: Console, record: CycleRecord) -> None:
    if record.pre_filter:
        console.print("PreFilter: " + ", ".join(f"{p}={v}" for p, v in record.pre_filter.items()))
    if record.filter:
        plugins: list[str] = []
        for verdicts in record.filter.values():
            for name in verdicts:
                if name not in plugins:
                    plugins.append(name)
        table = Table(title="Filter", title_justify="left")
        table.add_column("NODE", overflow="fold", no_wrap=False)
        for name in plugins:
            table.add_column(name, overflow="fold")
        for node, verdicts in record.filter.items():
            table.add_row(node, *(_cell(verdicts.get(p)) for p in plugins))
        console.print(table)
    if record.post_filter:
        console.print("PostFilter: " + ", ".join(f"{p}={v}" for p, v in record.post_filter.items()))
    if record.score:
        plugins = []
        for scores in record.score.values():
            for name in scores:
                if name not in plugins:
                    plugins.append(name)
        table = Table(title="Score (raw / normalized / weighted)", title_justify="left")
        table.add_column("NODE", overflow="fold", no_wrap=False)
        for name in plugins:
            table.add_column(name)
        table.add_column("TOTAL")
        for node, scores in record.score.items():
            total = sum(v[2] for v in scores.values())
            mark = " *" if node == record.selected_node else ""
            table.add_row(
                node + mark,
                *("/".join(str(x) for x in scores[p]) if p in scores else "-" for p in plugins),
                str(total),
            )
        console.print(table)
    for label, verdicts in (
        ("Reserve", record.reserve),
        ("Permit", record.permit),
        ("Bind", record.bind),
    ):
        if verdicts:
            console.print(f"{label}: " + ", ".join(f"{p}={v}" for p, v in verdicts.items()))
    if record.selected_node:
        console.print(f"selected node: [bold]{record.selected_node}[/bold]")


def _cell(verdict: str | None) -> str:
    if verdict is None:
        return "[dim]-[/dim]"
    if verdict == "passed":
        return "[green]passed[/green]"
    return f"[red]{verdict}[/red]"
