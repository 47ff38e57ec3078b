"""The report of one run (``simulate`` or ``replay``), built from its JSON output.

The input is the document that ``--output json`` prints, so a report can be made again
later from a saved result. Charts appear where the run has the data for them: a replay
has a time series and waiting times, a plain simulation has neither.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from wasmsched.api.quantity import QuantityError, parse_quantity
from wasmsched.report._page import Section, Table, key_values, render_page

# Above this many nodes, per-node utilization is a heat map instead of grouped bars.
HEATMAP_NODES = 40
TOP_WAITING = 20
TOP_UNSCHEDULABLE = 50

# "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint {a: b}."
# (pkg/scheduler/framework/types.go: FitError.Error).
_FIT_ERROR = re.compile(r"^\d+/\d+ nodes are available: (?P<reasons>.*?)(?:\. preemption:.*)?\.?$")
_REASON = re.compile(r"^(?P<count>\d+) (?P<reason>.+)$")


def _layout(fig: go.Figure, *, x: str, y: str, height: int = 380) -> go.Figure:
    fig.update_layout(
        height=height,
        margin={"l": 60, "r": 20, "t": 30, "b": 60},
        xaxis_title=x,
        yaxis_title=y,
        legend={"orientation": "h", "y": -0.25},
        template="plotly_white",
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def _pod_key(pod: Mapping[str, Any]) -> str:
    return f"{pod.get('namespace', '')}/{pod.get('name', '')}"


def results_section(pods: Sequence[Mapping[str, Any]]) -> Section:
    """How many pods ended with each result."""
    counts = Counter(str(p.get("result", "")) for p in pods)
    names = sorted(counts, key=lambda r: (-counts[r], r))
    fig = go.Figure(go.Bar(x=names, y=[counts[n] for n in names], marker_color="#3e7cb1"))
    return Section("results", "Pods by result", _layout(fig, x="result", y="pods", height=320))


def utilization_section(nodes: Sequence[Mapping[str, Any]]) -> Section | None:
    """Requested over allocatable per node and resource; a heat map for large clusters."""
    if not nodes:
        return None
    resources = sorted(
        {r for n in nodes for r, v in (n.get("allocatable") or {}).items() if _number(v) > 0}
    )
    if not resources:
        return None
    names = [str(n.get("name", "")) for n in nodes]
    ratios = {
        r: [_ratio(n.get("requested", {}).get(r), n.get("allocatable", {}).get(r)) for n in nodes]
        for r in resources
    }
    if len(nodes) > HEATMAP_NODES:
        fig = go.Figure(
            go.Heatmap(
                z=[ratios[r] for r in resources],
                x=names,
                y=resources,
                zmin=0,
                zmax=1,
                colorscale="Blues",
                colorbar={"title": "requested / allocatable"},
            )
        )
        _layout(fig, x="node", y="resource", height=max(260, 60 * len(resources) + 140))
        fig.update_xaxes(showticklabels=len(nodes) <= 200)
        note = f"{len(nodes)} nodes, one column each."
    else:
        fig = go.Figure([go.Bar(name=r, x=names, y=ratios[r]) for r in resources])
        fig.update_layout(barmode="group")
        _layout(fig, x="node", y="requested / allocatable")
        fig.update_yaxes(range=[0, max(1.0, *(max(v) for v in ratios.values()))])
        note = ""
    pods = Table(
        ("node", "pods", *resources),
        [
            (names[i], n.get("pods", 0), *(round(ratios[r][i], 3) for r in resources))
            for i, n in enumerate(nodes)
        ][:TOP_UNSCHEDULABLE],
        note="first 50 nodes" if len(nodes) > TOP_UNSCHEDULABLE else "",
    )
    return Section("utilization", "Utilization per node", fig, [pods], note)


def reasons_section(pods: Sequence[Mapping[str, Any]]) -> Section | None:
    """Why pods stayed unschedulable: nodes rejected per plugin, or per FitError reason."""
    failed = [p for p in pods if p.get("result") == "Unschedulable"]
    if not failed:
        return None
    by_plugin: Counter[str] = Counter()
    by_reason: Counter[str] = Counter()
    for pod in failed:
        rejected = pod.get("rejectedBy")
        if isinstance(rejected, Mapping):
            for plugin, count in rejected.items():
                by_plugin[str(plugin)] += int(count)
        for reason, count in fit_error_reasons(str(pod.get("message", ""))):
            by_reason[reason] += count
    counts, label = (by_plugin, "plugin") if by_plugin else (by_reason, "reason")
    if not counts:
        counts = Counter(str(p.get("message", ""))[:80] or "(no message)" for p in failed)
        label, unit = "message", "pods"
    else:
        unit = "node rejections (summed over pods)"
    names = sorted(counts, key=lambda k: (counts[k], k))
    fig = go.Figure(
        go.Bar(x=[counts[n] for n in names], y=names, orientation="h", marker_color="#c75146")
    )
    _layout(fig, x=unit, y=label, height=max(260, 28 * len(names) + 120))
    table = Table(
        ("pod", "message"),
        [(_pod_key(p), p.get("message", "")) for p in failed[:TOP_UNSCHEDULABLE]],
        note=f"{len(failed)} unschedulable pods" + (", first 50 shown" if len(failed) > 50 else ""),
    )
    return Section("unschedulable", f"Unschedulable pods by {label}", fig, [table])


def fit_error_reasons(message: str) -> list[tuple[str, int]]:
    """The ``N reason`` items of a FitError message, in order; empty when it is not one."""
    match = _FIT_ERROR.match(message.strip())
    if match is None:
        return []
    out: list[tuple[str, int]] = []
    for item in match.group("reasons").split(", "):
        m = _REASON.match(item.strip())
        if m is not None:
            out.append((m.group("reason").rstrip("."), int(m.group("count"))))
    return out


def series_sections(series: Sequence[Mapping[str, Any]]) -> list[Section]:
    """Allocation, fragmentation and pod counts over simulated time."""
    if not series:
        return []
    t = [float(s.get("t", 0.0)) for s in series]
    sections: list[Section] = []
    for key, title, y in (
        ("allocated", "Allocation over time", "requested / allocatable"),
        ("fragmentation", "Fragmentation over time", "share of free capacity"),
    ):
        resources = sorted({r for s in series for r in (s.get(key) or {})})
        if not resources:
            continue
        fig = go.Figure(
            [
                go.Scatter(
                    x=t,
                    y=[(s.get(key) or {}).get(r) for s in series],
                    name=r,
                    mode="lines",
                    line_shape="hv",
                )
                for r in resources
            ]
        )
        _layout(fig, x="simulated seconds", y=y)
        sections.append(Section(f"{key}-over-time", title, fig))
    counts = [k for k in ("pending", "running", "completed", "failed") if k in series[0]]
    if counts:
        fig = go.Figure(
            [
                go.Scatter(x=t, y=[s.get(k) for s in series], name=k, mode="lines", line_shape="hv")
                for k in counts
            ]
        )
        _layout(fig, x="simulated seconds", y="pods")
        sections.append(Section("pods-over-time", "Pods over time", fig))
    return sections


def device_sections(devices: Mapping[str, Any] | None) -> list[Section]:
    """Devices allocated per DeviceClass over the run and, where devices offer consumable
    capacity, the share of it allocated; nothing for a run without DeviceClasses."""
    classes: Sequence[Mapping[str, Any]] = (devices or {}).get("classes") or []
    series: Sequence[Mapping[str, Any]] = (devices or {}).get("series") or []
    if not classes or not series:
        return []
    timed = any(float(s.get("t", 0.0)) > 0 for s in series)
    x = [float(s.get("t", 0.0)) if timed else int(s.get("cycle", 0)) for s in series]
    x_title = "simulated seconds" if timed else "scheduling cycle"
    names = [str(c.get("name", "")) for c in classes]
    fig = go.Figure(
        [
            go.Scatter(
                x=x,
                y=[(s.get("allocated") or {}).get(name, 0) for s in series],
                name=name,
                mode="lines+markers",
                line_shape="hv",
            )
            for name in names
        ]
    )
    _layout(fig, x=x_title, y="allocated devices")
    last = series[-1].get("allocated") or {}
    table = Table(
        ("device class", "devices", "allocated at the end", "peak allocated"),
        [
            (
                name,
                c.get("devices", 0),
                last.get(name, 0),
                max((s.get("allocated") or {}).get(name, 0) for s in series),
            )
            for name, c in zip(names, classes, strict=True)
        ],
    )
    sections = [Section("devices", "Devices allocated per DeviceClass", fig, [table])]
    shares = sorted(
        {
            (name, capacity)
            for s in series
            for name, by_capacity in (s.get("capacityShare") or {}).items()
            for capacity in by_capacity
        }
    )
    if shares:
        fig = go.Figure(
            [
                go.Scatter(
                    x=x,
                    y=[
                        ((s.get("capacityShare") or {}).get(name) or {}).get(capacity, 0.0)
                        for s in series
                    ],
                    name=f"{name} {capacity}",
                    mode="lines+markers",
                    line_shape="hv",
                )
                for name, capacity in shares
            ]
        )
        _layout(fig, x=x_title, y="allocated / capacity")
        fig.update_layout(showlegend=True)  # plotly hides a lone trace's name
        fig.update_yaxes(range=[0, 1.05])
        final = series[-1].get("capacityShare") or {}
        totals = {str(c.get("name", "")): c.get("capacity") or {} for c in classes}
        table = Table(
            ("device class", "capacity", "total", "allocated share at the end"),
            [
                (
                    name,
                    capacity,
                    str(totals.get(name, {}).get(capacity, "")),
                    (final.get(name) or {}).get(capacity, 0.0),
                )
                for name, capacity in shares
            ],
            note="Shareable devices (allowMultipleAllocations) only.",
        )
        sections.append(
            Section(
                "device-capacity", "Consumable capacity allocated per DeviceClass", fig, [table]
            )
        )
    return sections


def waiting_sections(pods: Sequence[Mapping[str, Any]]) -> list[Section]:
    """The queueing-delay distribution and the pods that waited longest."""
    waited = [p for p in pods if isinstance(p.get("waitSeconds"), int | float)]
    if not waited:
        return []
    fig = go.Figure(go.Histogram(x=[p["waitSeconds"] for p in waited], nbinsx=50))
    _layout(fig, x="seconds from creation to bind", y="pods")
    worst = sorted(waited, key=lambda p: -float(p["waitSeconds"]))[:TOP_WAITING]
    table = Table(
        ("pod", "wait (s)", "node", "result"),
        [(_pod_key(p), p["waitSeconds"], p.get("node") or "", p.get("result", "")) for p in worst],
    )
    return [
        Section("queueing-delay", "Queueing delay", fig),
        Section("top-waiting", f"Top {len(worst)} waiting pods", None, [table]),
    ]


def simulation_report(result: Mapping[str, Any], *, title: str = "wasmsched simulate") -> str:
    """One self-contained HTML page for a run's JSON output (simulate or replay)."""
    pods: Sequence[Mapping[str, Any]] = result.get("pods") or []
    summary: Mapping[str, Any] = result.get("summary") or {}
    sections: list[Section] = [
        Section("summary", "Summary", None, [key_values(summary)]),
        results_section(pods),
    ]
    sections.extend(series_sections(result.get("series") or []))
    sections.extend(waiting_sections(pods))
    sections.extend(device_sections(result.get("devices")))
    for section in (utilization_section(result.get("nodes") or []), reasons_section(pods)):
        if section is not None:
            sections.append(section)
    subtitle = f"{len(pods)} pods"
    if "nodes" in summary:
        subtitle += f" on {summary['nodes']} nodes"
    return render_page(title, subtitle, sections)


def _number(value: object) -> float:
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(parse_quantity(str(value)))
    except QuantityError:
        return 0.0


def _ratio(requested: object, allocatable: object) -> float:
    total = _number(allocatable)
    return _number(requested) / total if total > 0 else 0.0
