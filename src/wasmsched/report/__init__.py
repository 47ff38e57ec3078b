"""Self-contained HTML reports: one file with plots that opens offline.

``simulation_report`` renders the JSON output of ``simulate`` or ``replay``;
``diff_report`` two runs side by side; ``sweep_report`` the distribution of each summary
metric per configuration over many runs. Charts are plotly figures with plotly.js inlined.
"""

from __future__ import annotations

from pathlib import Path

from wasmsched.report.compare import diff_report, sweep_report
from wasmsched.report.simulation import fit_error_reasons, simulation_report

__all__ = ["diff_report", "fit_error_reasons", "simulation_report", "sweep_report", "write_report"]


def write_report(path: Path, page: str) -> None:
    """Writes a report next to its final name first, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)
