"""Rendering a simulation's result for people: rich tables (its JSON document is
wasmsched.sim.document's).

Every piece of data (pod, node and plugin names, plugin and guest messages) reaches rich
as a ``Text`` object or escaped, never as markup: a message such as
``waiting for scheduling gates: [example.com/wait]`` must print as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from wasmsched.cli.choices import Only
from wasmsched.framework.records import CycleRecord
from wasmsched.scheduler import PodOutcome
from wasmsched.sim.document import format_amount
from wasmsched.sim.result import NodeUsage, PodResult, SimulationResult

_RESULT_STYLE = {
    "Scheduled": "green",
    "Unschedulable": "yellow",
    "Error": "red",
    "Preempted": "magenta",
    "Skipped": "dim",
    "Succeeded": "dim",
    "Failed": "dim",
}
# Beyond this many nodes, explain shows Filter verdicts grouped and the best-scored nodes;
# the full per-node record goes to --explain-output.
EXPLAIN_FULL_NODES = 20
EXPLAIN_TOP_NODES = 10


def selected(results: Iterable[PodResult], only: Only) -> list[PodResult]:
    """The pods ``--only`` keeps: pending ones (default), those left without a node, all."""
    if only is Only.all:
        return list(results)
    if only is Only.unschedulable:
        return [r for r in results if r.was_pending and r.result in ("Unschedulable", "Error")]
    return [r for r in results if r.was_pending]


def _result_text(result: str) -> Text:
    return Text(result, style=_RESULT_STYLE.get(result, ""))


def print_table(
    console: Console, result: SimulationResult, only: Only = Only.pending, nodes: bool = True
) -> None:
    """The pods ``only`` selects, the per-node utilization, then the summary lines."""
    title = "Pods" if only is Only.pending else f"Pods ({only.value})"
    table = Table(title=title, title_justify="left")
    for column in ("NAMESPACE", "NAME", "RESULT", "NODE", "MESSAGE"):
        table.add_column(column, overflow="fold")
    for r in selected(result.pods, only):
        message = r.message
        if r.nominated_node and r.result != "Preempted":
            message = f"{message} (nominated: {r.nominated_node})".strip()
        table.add_row(
            Text(r.pod.namespace),
            Text(r.pod.name),
            _result_text(r.result),
            Text(r.node or ""),
            Text(message),
        )
    console.print(table)
    if nodes and result.node_usage:
        print_nodes(console, result.node_usage)
    s = result.summary()
    line = (
        f"{s['scheduled']} scheduled, {s['unschedulable']} unschedulable, {s['error']} error "
        f"of {s['pods']} pods on {s['nodes']} nodes; {s['schedulingCycles']} scheduling "
        f"cycles, {s['simulatedSeconds']} s simulated, {s['wallSeconds']} s wall"
    )
    others = [
        f"{s[key]} {key}"
        for key in ("running", "preempted", "skipped", "succeeded", "failed")
        if s.get(key)
    ]
    if others:
        line += f" ({', '.join(others)}; {s['totalPods']} pods in all)"
    console.print(Text(line))
    for p in result.preemptions:
        if p.preemptor:
            console.print(Text(f"preempted {p.victim} on {p.node} for {p.preemptor}"))
    if result.other_scheduler_pods:
        names = ", ".join(
            f"{p.namespace}/{p.name} ({p.scheduler_name})" for p in result.other_scheduler_pods
        )
        console.print(Text(f"left to other schedulers: {names}"))
    for profile, plugins in result.skipped_plugins.items():
        console.print(
            Text(
                f"profile {profile}: default plugins not implemented yet, skipped: "
                f"{', '.join(plugins)}",
                style="dim",
            )
        )
    if result.stopped_early:
        console.print(Text(result.stopped_early, style="red"))


def _utilization(node: NodeUsage, resource: str) -> str:
    requested = node.requested.get(resource, 0)
    allocatable = node.allocatable.get(resource, 0)
    text = f"{format_amount(resource, requested)}/{format_amount(resource, allocatable)}"
    if allocatable > 0:
        text += f" ({100 * requested // allocatable}%)"
    return text


def print_nodes(console: Console, nodes: Sequence[NodeUsage]) -> None:
    """Requested / allocatable per resource and the pod count of every node."""
    resources: list[str] = []
    for n in nodes:
        for name, amount in n.allocatable.items():
            if name not in resources and name != "pods" and (amount or n.requested.get(name)):
                resources.append(name)
    table = Table(title="Nodes (requested/allocatable)", title_justify="left")
    table.add_column("NODE", overflow="fold")
    table.add_column("PODS")
    for name in resources:
        table.add_column(name.upper(), overflow="fold")
    for n in nodes:
        table.add_row(
            Text(n.name),
            Text(_utilization(n, "pods")),
            *(Text(_utilization(n, r)) for r in resources),
        )
    console.print(table)


def print_explain(
    console: Console,
    result: SimulationResult,
    only: Only = Only.pending,
    explain_pods: frozenset[str] | None = None,
) -> None:
    """Each explained pod's attempts, then the table."""
    for pod_result in result.pods:
        if pod_result.outcome is None:
            continue
        if explain_pods is not None and pod_result.pod.key not in explain_pods:
            continue
        _explain_pod(console, pod_result, pod_result.outcome)
    print_table(console, result, only)


def _explain_pod(console: Console, pod_result: PodResult, outcome: PodOutcome) -> None:
    pod = pod_result.pod
    head = Text.assemble((f"{pod.namespace}/{pod.name}", "bold"), f": {pod_result.result}")
    if pod_result.node:
        head.append(f" on {pod_result.node}")
    console.rule(head)
    if pod_result.message:
        console.print(Text(pod_result.message))
    for attempt, record in enumerate(outcome.cycles, 1):
        if len(outcome.cycles) > 1:
            console.print(Text(f"attempt {attempt}", style="dim"))
        _explain_cycle(console, record)


def _verdicts_line(label: str, verdicts: dict[str, str]) -> Text:
    return Text(f"{label}: " + ", ".join(f"{p}={v}" for p, v in verdicts.items()))


def _explain_cycle(console: Console, record: CycleRecord) -> None:
    if record.pre_filter:
        console.print(_verdicts_line("PreFilter", record.pre_filter))
    filters = record.filter
    if filters:
        if len(filters) <= EXPLAIN_FULL_NODES:
            _filter_table(console, filters)
        else:
            _filter_groups(console, filters)
    if record.devices:
        _devices_text(console, record.devices, record.selected_node)
    if record.post_filter:
        console.print(_verdicts_line("PostFilter", record.post_filter))
    if record.nominated_node:
        console.print(Text(f"nominated node: {record.nominated_node}"))
    if record.victims:
        console.print(Text(f"victims: {', '.join(record.victims)}"))
    scores = record.score
    if scores:
        _score_table(console, scores, record.selected_node)
    for label, verdicts in (
        ("Reserve", record.reserve),
        ("Permit", record.permit),
        ("Bind", record.bind),
    ):
        if verdicts:
            console.print(_verdicts_line(label, verdicts))
    if record.selected_node:
        console.print(Text.assemble("selected node: ", (record.selected_node, "bold")))


def _columns(rows: Iterable[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for row in rows:
        for name in row:
            if name not in names:
                names.append(name)
    return names


def _fits(console: Console, table: Table) -> bool:
    """Whether ``table`` fits the console unsqueezed: rich would otherwise fold every cell
    into a narrow column and cut off the last ones ("NodeNumb…")."""
    unbounded = console.options.update_width(1 << 16)  # rich clamps to the width given
    return Measurement.get(console, unbounded, table).maximum <= console.width


def _filter_table(console: Console, filters: dict[str, dict[str, str]]) -> None:
    plugins = _columns(filters.values())
    table = Table(title="Filter", title_justify="left")
    table.add_column("NODE", overflow="fold", no_wrap=False)
    for name in plugins:
        table.add_column(escape(name), overflow="fold")
    for node, verdicts in filters.items():
        table.add_row(Text(node), *(_cell(verdicts.get(p)) for p in plugins))
    if _fits(console, table):
        console.print(table)
        return
    # Too wide: per node, the plugins that passed on one line, each rejection on its own.
    text = Text("Filter", style="italic")
    for node, verdicts in filters.items():
        text.append(f"\n{node}", "bold")
        passed = [p for p, v in verdicts.items() if v == "passed"]
        if passed:
            text.append("\n  passed: ", "green").append(", ".join(passed))
        for plugin, verdict in verdicts.items():
            if verdict != "passed":
                text.append(f"\n  {plugin}: ").append(verdict, "red")
    console.print(text)


def _filter_groups(console: Console, filters: dict[str, dict[str, str]]) -> None:
    """Nodes grouped by outcome: how many passed, and per rejection which nodes."""
    groups: dict[tuple[str, str], list[str]] = {}
    passed = 0
    for node, verdicts in filters.items():
        rejection = next(((p, v) for p, v in verdicts.items() if v != "passed"), None)
        if rejection is None:
            passed += 1
        else:
            groups.setdefault(rejection, []).append(node)
    console.print(Text(f"Filter: {passed} of {len(filters)} evaluated nodes passed", "bold"))
    for (plugin, verdict), nodes in sorted(groups.items(), key=lambda g: -len(g[1])):
        shown = ", ".join(nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
        console.print(Text(f"  {plugin}: {verdict}: {len(nodes)} nodes ({shown})"))


def _score_table(
    console: Console, scores: dict[str, dict[str, list[int]]], chosen: str | None
) -> None:
    plugins = _columns(scores.values())
    totals = {node: sum(v[2] for v in ps.values()) for node, ps in scores.items()}
    nodes = list(scores)
    title = "Score (raw / normalized / weighted)"
    if len(nodes) > EXPLAIN_FULL_NODES:
        best = sorted(nodes, key=lambda n: -totals[n])[:EXPLAIN_TOP_NODES]
        if chosen in scores and chosen not in best:
            best.append(chosen)
        title += f", best {len(best)} of {len(nodes)} nodes"
        nodes = best
        # Plain aligned text: a rich Table per attempt costs more than the attempt itself.
        _score_text(console, title, plugins, [(n, scores[n], totals[n]) for n in nodes], chosen)
        return
    table = Table(title=title, title_justify="left")
    table.add_column("NODE", overflow="fold", no_wrap=False)
    for name in plugins:
        table.add_column(escape(name))
    table.add_column("TOTAL")
    for node in nodes:
        node_scores = scores[node]
        mark = " *" if node == chosen else ""
        table.add_row(
            Text(node + mark),
            *(
                "/".join(str(x) for x in node_scores[p]) if p in node_scores else "-"
                for p in plugins
            ),
            str(totals[node]),
        )
    if _fits(console, table):
        console.print(table)
        return
    # Too wide: per node, its total and one line per plugin.
    width = max(len(p) for p in plugins)
    text = Text(title, style="italic")
    for node in nodes:
        mark = " *" if node == chosen else ""
        text.append(f"\n{node}{mark}", "bold").append(f"  total {totals[node]}")
        for plugin in plugins:
            value = scores[node].get(plugin)
            shown = "/".join(str(x) for x in value) if value is not None else "-"
            text.append(f"\n  {plugin.ljust(width)}  {shown}")
    console.print(text)


def _score_text(
    console: Console,
    title: str,
    plugins: list[str],
    rows: list[tuple[str, dict[str, list[int]], int]],
    chosen: str | None,
) -> None:
    header = ["NODE", *plugins, "TOTAL"]
    body = [
        [
            node + (" *" if node == chosen else ""),
            *("/".join(str(x) for x in ps[p]) if p in ps else "-" for p in plugins),
            str(total),
        ]
        for node, ps, total in rows
    ]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in body]
    text = Text(title + "\n", style="italic")
    text.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)), "bold")
    text.append("\n" + "\n".join(line.rstrip() for line in lines))
    console.print(text, soft_wrap=True)


def _cell(verdict: str | None) -> Text:
    if verdict is None:
        return Text("-", style="dim")
    if verdict == "passed":
        return Text("passed", style="green")
    return Text(verdict, style="red")


def _devices_text(
    console: Console, devices: dict[str, list[dict[str, Any]]], chosen: str | None
) -> None:
    """Per node, each claim request's devices grouped by verdict (DynamicResources);
    nodes where the pod's claims were all allocated and usable have no entries."""
    nodes = [node for node, entries in devices.items() if entries]
    if not nodes:
        return
    if len(nodes) > EXPLAIN_FULL_NODES:
        shown = nodes[:EXPLAIN_TOP_NODES]
        if chosen in devices and chosen not in shown:
            shown.append(chosen)
    else:
        shown = nodes
    text = Text("Devices (DynamicResources)", style="italic")
    for node in shown:
        text.append(f"\n{node}" + (" *" if node == chosen else ""), "bold")
        for entry in devices[node]:
            _device_entry(text, entry)
    if len(shown) < len(nodes):
        text.append(f"\n{len(nodes) - len(shown)} more nodes: see --explain-output", "dim")
    console.print(text)


def _device_entry(text: Text, entry: dict[str, Any]) -> None:
    claim = entry.get("claim")
    if "request" not in entry:  # the claim (or the allocator) failed as a whole
        head = f"claim {claim}: " if claim else ""
        text.append(f"\n  {head}").append(str(entry.get("error", "")), "red")
        return
    needs = entry["needs"]
    wants = "all matching devices" if needs == "all" else f"{needs} device" + "s" * (needs != 1)
    text.append(f"\n  claim {claim}, request {entry['request']} ")
    text.append(f"(class {entry['deviceClass']}, needs {wants}): ")
    allocated = entry.get("allocated")
    if allocated:
        text.append("allocated " + ", ".join(allocated), "green")
    elif allocated is not None:
        text.append("not used (another alternative was allocated)", "dim")
    else:
        text.append(f"{entry['matching']} matching", "red" if not entry["matching"] else "")
    groups: dict[str, list[str]] = {}
    for pool in entry.get("pools", ()):
        groups.setdefault(f"pool {pool['result']}", []).append(pool["pool"])
    for device in entry["devices"]:
        if device["result"] != "allocated":
            groups.setdefault(device["result"], []).append(device["device"])
    for verdict, names in groups.items():
        listed = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        style = "green" if verdict == "matches" else "red"
        text.append("\n    ").append(verdict, style).append(f": {listed}")
