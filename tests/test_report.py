"""wasmsched.report: the self-contained HTML reports, checked in a real headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wasmsched.report import (
    diff_report,
    fit_error_reasons,
    simulation_report,
    sweep_report,
    write_report,
)

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / ".cache" / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.parametrize(
    ("message", "want"),
    [
        (
            "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) were unschedulable.",
            [("Insufficient cpu", 2), ("node(s) were unschedulable", 1)],
        ),
        (
            "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes are "
            "available: 5 No preemption victims found for incoming pod.",
            [("Insufficient memory", 5)],
        ),
        ("waiting for scheduling gates: [example.com/wait]", []),
        ("", []),
    ],
)
def test_fit_error_reasons(message: str, want: list[tuple[str, int]]) -> None:
    assert fit_error_reasons(message) == want


CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: small, labels: {kubernetes.io/hostname: small}}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: big, labels: {kubernetes.io/hostname: big}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: fits, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: default}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "8"}}}]}
"""


def test_simulation_report_has_a_section_per_kind_of_data() -> None:
    result = {
        "pods": [
            {
                "namespace": "d",
                "name": "a",
                "node": "n1",
                "result": "Scheduled",
                "waitSeconds": 3.0,
            },
            {
                "namespace": "d",
                "name": "<b>",
                "node": None,
                "result": "Unschedulable",
                "message": "0/1 nodes are available: 1 Insufficient cpu.",
            },
        ],
        "summary": {"pods": 2, "nodes": 1},
        "series": [
            {"t": 0, "pending": 2, "running": 0, "allocated": {"cpu": 0.0}},
            {"t": 3, "pending": 1, "running": 1, "allocated": {"cpu": 0.5}},
        ],
        "nodes": [
            {"name": "n1", "allocatable": {"cpu": "2"}, "requested": {"cpu": "1"}, "pods": 1}
        ],
    }
    page = simulation_report(result)
    for section in (
        "summary",
        "results",
        "allocated-over-time",
        "pods-over-time",
        "queueing-delay",
        "top-waiting",
        "utilization",
        "unschedulable",
    ):
        assert f'id="{section}"' in page, section
    assert "&lt;b&gt;" in page and "<b>" not in page.split("</script>")[-1]
    # Without a series or waiting times, those charts are left out rather than empty.
    plain = simulation_report({"pods": result["pods"][1:], "summary": {}})
    assert 'id="pods-over-time"' not in plain and 'id="queueing-delay"' not in plain


def test_summary_reads_as_labels_and_values_not_raw_dicts() -> None:
    wait = {"p50": 0.0, "p90": 210.0, "p99": 240.0, "max": 240.0}
    summary = {
        "pods": 13,
        "schedulingCycles": 30,
        "results": {"Completed": 12, "Running": 1},
        "waitSeconds": wait,
        "waitSecondsByPriority": {"0": wait, "1000": wait},
        "peakAllocation": {"cpu": 0.9375, "memory": 0.375},
        "otherSchedulers": [{"namespace": "d", "name": "p", "schedulerName": "other"}],
        "preemptions": [],
        "stoppedEarly": None,
    }
    page = simulation_report({"pods": [], "summary": summary})
    table = page.partition('id="summary"')[2].partition("</section>")[0]
    rows = re.findall(r"<tr><td>(.*?)</td><td[^>]*>(.*?)</td></tr>", table)
    assert rows == [
        ("pods", "13"),
        ("scheduling cycles", "30"),
        ("results", "Completed 12, Running 1"),
        ("wait (s)", "p50 0, p90 210, p99 240, max 240"),
        ("wait (s), priority 0", "p50 0, p90 210, p99 240, max 240"),
        ("wait (s), priority 1000", "p50 0, p90 210, p99 240, max 240"),
        ("peak allocation", "cpu 94%, memory 38%"),
        ("pods of other schedulers", "namespace d, name p, scheduler name other"),
    ]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: scripts/dev-setup installs Debian's chromium")
        pytest.skip("Debian's chromium is not installed (scripts/dev-setup installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield b
        b.close()


def _open(browser: Any, path: Path, shot: str) -> tuple[Any, list[str], list[str]]:
    """Loads a report from disk with every network request refused; returns the page, the
    console errors and page errors, and the requests that tried to leave the file."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def refuse(route: Any) -> None:
        if not route.request.url.startswith("file://"):
            outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", refuse)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
    return page, errors, outside


def _charts(page: Any) -> dict[str, int]:
    """Section id -> number of rendered plotly SVG layers in its chart."""
    counts: dict[str, int] = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('section')].map(s =>
               [s.id, s.querySelectorAll('.js-plotly-plot .main-svg').length]))"""
    )
    return counts


def _simulate_with_report(cluster: Path, report: Path) -> dict[str, Any]:
    """``simulate --report REPORT --output json`` in a subprocess: its JSON document."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "wasmsched",
            "simulate",
            "--cluster",
            str(cluster),
            "--report",
            str(report),
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=report.parent,
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_simulation_report_renders_in_chromium(browser: Any, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    report = tmp_path / "report.html"
    result = _simulate_with_report(cluster, report)
    assert result["pods"] and report.exists()
    page, errors, outside = _open(browser, report, "simulation-report.png")
    assert errors == [] and outside == []
    charts = _charts(page)
    assert charts["results"] > 0
    assert charts["summary"] == 0  # a table, not a chart
    # too-big fits nowhere: its rejections are broken down by plugin.
    assert charts["unschedulable"] > 0 and charts["utilization"] > 0
    assert "Unschedulable pods by plugin" in page.inner_text("#unschedulable")
    assert "too-big" in page.inner_text("body")
    # No DeviceClass in the cluster: no device view at all, not an empty one.
    assert "devices" not in result
    assert page.locator("#devices, #device-capacity").count() == 0
    page.close()


def test_large_cluster_utilization_is_a_heat_map(browser: Any, tmp_path: Path) -> None:
    nodes = [
        {
            "name": f"node-{i}",
            "allocatable": {"cpu": 4000, "memory": 2**34},
            "requested": {"cpu": (i * 37) % 4000, "memory": 2**33},
            "pods": i % 7,
        }
        for i in range(500)
    ]
    result = {
        "pods": [{"namespace": "d", "name": "p", "node": "node-1", "result": "Scheduled"}],
        "summary": {"nodes": 500},
        "nodes": nodes,
    }
    report = tmp_path / "big.html"
    write_report(report, simulation_report(result))
    page, errors, outside = _open(browser, report, "utilization-heatmap.png")
    assert errors == [] and outside == []
    assert _charts(page)["utilization"] > 0
    assert page.locator("#chart-utilization .heatmaplayer").count() == 1
    page.close()


def test_diff_and_sweep_reports_render(browser: Any, tmp_path: Path) -> None:
    a = {"pods": [{"namespace": "d", "name": "p", "node": "n1", "result": "Scheduled"}]}
    b = {"pods": [{"namespace": "d", "name": "p", "node": "n2", "result": "Scheduled"}]}
    diff = {
        "changed": [
            {
                "namespace": "d",
                "name": "p",
                "a": {"node": "n1", "result": "Scheduled"},
                "b": {"node": "n2", "result": "Scheduled"},
            }
        ],
        "summary": {"changed": 1, "a": {"scheduled": 1}, "b": {"scheduled": 1}},
    }
    report = tmp_path / "diff.html"
    write_report(report, diff_report(diff, a, b, labels=("least", "most")))
    page, errors, outside = _open(browser, report, "diff-report.png")
    assert errors == [] and outside == []
    assert _charts(page)["placements"] > 0
    assert "least node" in page.inner_text("#changed")
    page.close()

    runs = [
        {"config": c, "seed": s, "summary": {"scheduled": s + (2 if c == "b" else 0)}}
        for c in ("a", "b")
        for s in range(5)
    ]
    report = tmp_path / "sweep.html"
    write_report(report, sweep_report(runs))
    page, errors, outside = _open(browser, report, "sweep-report.png")
    assert errors == [] and outside == []
    assert _charts(page)["metric-scheduled"] > 0
    page.close()


def test_replay_report_renders_its_time_charts(browser: Any, tmp_path: Path) -> None:
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}},
        }
        for i in range(2)
    ]
    records = [{"at": 0, "node": n} for n in nodes] + [
        {
            "at": 5 * i,
            "duration": 40,
            "create": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "d"},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}
                    ]
                },
            },
        }
        for i in range(8)
    ]
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = tmp_path / "replay.html"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "wasmsched",
            "replay",
            "--trace",
            str(trace),
            "--report",
            str(report),
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    page, errors, outside = _open(browser, report, "replay-report.png")
    assert errors == [] and outside == []
    charts = _charts(page)
    for section in ("allocated-over-time", "pods-over-time", "queueing-delay", "results"):
        assert charts[section] > 0, section
    assert "Top" in page.inner_text("#top-waiting")
    summary = page.inner_text("#summary")
    assert "wait (s)\tp50 " in summary and "peak allocation\tcpu " in summary
    assert "{" not in summary and "waitSeconds" not in summary
    page.close()


def _traces(page: Any, section: str) -> dict[str, list[Any]]:
    """A rendered chart's traces: name -> y values, as plotly.js holds them."""
    traces: dict[str, list[Any]] = page.evaluate(
        f"""() => Object.fromEntries(document.getElementById('chart-{section}').data
               .map(t => [t.name, Array.from(t.y)]))"""
    )
    return traces


def test_dra_report_shows_devices_per_class_over_the_run(browser: Any, tmp_path: Path) -> None:
    report = tmp_path / "dra.html"
    result = _simulate_with_report(ROOT / "tests" / "fixtures" / "dra-report.yaml", report)
    assert {p["result"] for p in result["pods"]} == {"Scheduled"}
    page, errors, outside = _open(browser, report, "dra-report.png")
    assert errors == [] and outside == []
    charts = _charts(page)
    assert charts["devices"] > 0 and charts["device-capacity"] > 0
    # Three pods take a whole GPU each, then three take a 4Gi share of an 8Gi shareable
    # GPU: the first two fill sgpu-0, the third opens sgpu-1.
    assert _traces(page, "devices") == {
        "gpu": [0, 1, 2, 3, 3, 3, 3],
        "shared-gpu": [0, 0, 0, 0, 1, 1, 2],
    }
    assert _traces(page, "device-capacity") == {
        "shared-gpu memory": [0.0, 0.0, 0.0, 0.0, 0.25, 0.5, 0.75]
    }
    rows = page.eval_on_selector_all(
        "#devices tbody tr", "rows => rows.map(r => r.innerText.split('\\t'))"
    )
    assert rows == [["gpu", "4", "3", "3"], ["shared-gpu", "2", "2", "2"]]
    assert "16Gi" in page.inner_text("#device-capacity")
    page.close()
