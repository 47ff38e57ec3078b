"""Reports that compare runs: two configurations side by side (``diff``), and the spread
of each summary metric per configuration over many runs (``sweep``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from wasmsched.report._page import Section, Table, render_page

MAX_CHANGED_ROWS = 200


def _placements_per_node(run: Mapping[str, Any]) -> Counter[str]:
    return Counter(
        str(p["node"])
        for p in run.get("pods") or []
        if p.get("node") and p.get("result") in ("Scheduled", "Running")
    )


def diff_report(
    diff: Mapping[str, Any],
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    *,
    labels: tuple[str, str] = ("A", "B"),
    title: str = "wasmsched diff",
) -> str:
    """Two runs of the same cluster side by side: pods per node, changed pods, deltas."""
    per_a, per_b = _placements_per_node(a), _placements_per_node(b)
    nodes = sorted(set(per_a) | set(per_b))
    fig = go.Figure(
        [
            go.Bar(name=labels[0], x=nodes, y=[per_a[n] for n in nodes]),
            go.Bar(name=labels[1], x=nodes, y=[per_b[n] for n in nodes]),
        ]
    )
    fig.update_layout(
        barmode="group",
        height=380,
        template="plotly_white",
        xaxis_title="node",
        yaxis_title="pods placed",
        margin={"l": 60, "r": 20, "t": 30, "b": 60},
    )
    changed: Sequence[Mapping[str, Any]] = diff.get("changed") or []
    rows = [
        (
            f"{c.get('namespace', '')}/{c.get('name', '')}",
            (c.get("a") or {}).get("node") or "",
            (c.get("a") or {}).get("result", ""),
            (c.get("b") or {}).get("node") or "",
            (c.get("b") or {}).get("result", ""),
        )
        for c in changed[:MAX_CHANGED_ROWS]
    ]
    changed_table = Table(
        (
            "pod",
            f"{labels[0]} node",
            f"{labels[0]} result",
            f"{labels[1]} node",
            f"{labels[1]} result",
        ),
        rows,
        note=f"{len(changed)} pods changed"
        + (f", first {MAX_CHANGED_ROWS} shown" if len(changed) > MAX_CHANGED_ROWS else ""),
    )
    summary: Mapping[str, Any] = diff.get("summary") or {}
    sa: Mapping[str, Any] = summary.get("a") or {}
    sb: Mapping[str, Any] = summary.get("b") or {}
    delta_rows = [
        (key, sa.get(key), sb.get(key), _delta(sa.get(key), sb.get(key)))
        for key in sorted(set(sa) | set(sb))
        if _scalar(sa.get(key)) or _scalar(sb.get(key))
    ]
    sections = [
        Section("placements", "Pods per node", fig),
        Section("changed", "Pods whose node or result changed", None, [changed_table]),
        Section(
            "deltas",
            "Summary metrics",
            None,
            [Table(("metric", labels[0], labels[1], "delta"), delta_rows)],
        ),
    ]
    subtitle = f"{labels[0]} vs {labels[1]}: {len(changed)} pods changed"
    return render_page(title, subtitle, sections)


def sweep_report(
    runs: Sequence[Mapping[str, Any]],
    *,
    metrics: Sequence[str] | None = None,
    title: str = "wasmsched sweep",
) -> str:
    """One box plot per summary metric: its distribution over the runs of each config.

    ``runs`` are the per-run records of a sweep: ``{"config": name, "summary": {...}}``.
    """
    configs = sorted({str(r.get("config", "")) for r in runs})
    if metrics is None:
        seen: dict[str, None] = {}
        for r in runs:
            for key, value in (r.get("summary") or {}).items():
                if _scalar(value) and not isinstance(value, bool):
                    seen.setdefault(key, None)
        metrics = [m for m in seen if m not in ("wallSeconds", "podsPerSecond")]
    sections: list[Section] = []
    for metric in metrics:
        fig = go.Figure(
            [
                go.Box(
                    name=config,
                    y=[
                        r["summary"][metric]
                        for r in runs
                        if str(r.get("config", "")) == config
                        and _scalar((r.get("summary") or {}).get(metric))
                    ],
                    boxpoints="all",
                )
                for config in configs
            ]
        )
        fig.update_layout(
            height=340,
            template="plotly_white",
            yaxis_title=metric,
            showlegend=False,
            margin={"l": 60, "r": 20, "t": 30, "b": 60},
        )
        sections.append(Section(f"metric-{_slug(metric)}", metric, fig))
    return render_page(title, f"{len(runs)} runs of {len(configs)} configurations", sections)


def _scalar(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _delta(a: object, b: object) -> object:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return round(float(b) - float(a), 6)
    return ""


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()
