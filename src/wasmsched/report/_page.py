"""The page around the charts: one self-contained HTML file that opens offline.

plotly.js is inlined once in the head (no CDN: the report must open on a machine with no
network), and every chart is a ``<section>`` with a stable id, so that a reader can link
to it and a test can find it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1200px; color: #1f2933; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.15rem; margin-top: 2.2rem; border-bottom: 1px solid #d9e2ec; }
.subtitle { color: #52606d; margin-top: 0; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #d9e2ec; padding: 0.25rem 0.6rem; text-align: left;
         vertical-align: top; }
th { background: #f0f4f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #52606d; font-size: 0.85rem; }
"""


@dataclass
class Table:
    """A plain HTML table: a header row and rows of cells (numbers align right)."""

    header: Sequence[str]
    rows: Sequence[Sequence[object]]
    note: str = ""

    def to_html(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in self.rows)
        note = f'<p class="note">{html.escape(self.note)}</p>' if self.note else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}"


@dataclass
class Section:
    """One titled part of the report: a chart, a table, or both."""

    id: str
    title: str
    figure: go.Figure | None = None
    tables: list[Table] = field(default_factory=list)
    note: str = ""


def _cell(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return f"<td>{html.escape('' if value is None else str(value).lower())}</td>"
    if isinstance(value, int | float):
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        return f'<td class="num">{text}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def render_page(title: str, subtitle: str, sections: Iterable[Section]) -> str:
    """The whole report as one HTML document with plotly.js inlined."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        # The JSON blob keeps the bundle from being parsed as markup; plotly.js is
        # self-contained and defines window.Plotly.
        f"<script>{get_plotlyjs()}</script>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="subtitle">{html.escape(subtitle)}</p>',
    ]
    for section in sections:
        parts.append(f'<section id="{html.escape(section.id)}" class="report-section">')
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.note:
            parts.append(f'<p class="note">{html.escape(section.note)}</p>')
        if section.figure is not None:
            parts.append(
                section.figure.to_html(
                    full_html=False,
                    include_plotlyjs=False,
                    div_id=f"chart-{section.id}",
                    config={"displaylogo": False, "responsive": True},
                )
            )
        parts.extend(table.to_html() for table in section.tables)
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


# Labels of the summary's keys (simulate's and replay's, docs/output.md and docs/replay.md);
# any other key is its camelCase split into words.
_LABELS: Mapping[str, str] = {
    "totalPods": "pods in all",
    "simulatedSeconds": "simulated time (s)",
    "wallSeconds": "wall time (s)",
    "otherSchedulers": "pods of other schedulers",
    "waitSeconds": "wait (s)",
    "waitSecondsByPriority": "wait (s), priority",
    "waitSecondsByQoS": "wait (s), QoS class",
    "pluginsNotImplemented": "plugins not implemented, profile",
}
# Summary values that are fractions of a whole, shown as percentages.
_FRACTIONS = frozenset({"peakAllocation"})
_MAX_VALUE_CHARS = 300
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def key_values(data: Mapping[str, Any]) -> Table:
    """A two-column table of a summary: a label per key, values as plain text.

    A mapping of scalars or a list becomes one line ("p50 0, p90 210, max 240"); a mapping
    of mappings (a breakdown, e.g. per priority) one row per entry. Empty and null values
    (nothing to report) are left out.
    """
    rows: list[tuple[str, object]] = []
    for key, value in data.items():
        label = _label(key)
        fraction = key in _FRACTIONS
        if isinstance(value, Mapping) and any(
            isinstance(v, Mapping | list) for v in value.values()
        ):
            rows.extend((f"{label} {k}", _plain(v, fraction)) for k, v in value.items())
        elif value is not None and value != [] and value != {}:
            rows.append((label, _plain(value, fraction)))
    return Table(("metric", "value"), rows)


def _label(key: str) -> str:
    """ "schedulingCycles" -> "scheduling cycles"; a key without camelCase stays as it is."""
    if key in _LABELS:
        return _LABELS[key]
    words = _CAMEL.sub(" ", key)
    return words.lower() if words != key else key


def _plain(value: object, fraction: bool = False) -> object:
    """A summary value as a table cell: numbers stay numbers, the rest one line of text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:.0%}" if fraction else value
    if isinstance(value, Mapping):
        text = ", ".join(f"{_label(k)} {_word(v, fraction)}" for k, v in value.items())
    elif isinstance(value, list):
        text = "; ".join(_word(v, fraction) for v in value)
    else:
        return value
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


def _word(value: object, fraction: bool) -> str:
    plain = _plain(value, fraction)
    return f"{plain:g}" if isinstance(plain, float) else str(plain)
