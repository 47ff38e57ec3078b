"""Operations: /healthz, /readyz, /metrics with kube-scheduler's metric names; log formats."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest

from apiserver import ApiServerDouble
from live_support import api_for, config, node, placements, pod, running, wait
from wasmsched.live import LeaderElector, LeaseConfig
from wasmsched.live.ops import JsonFormatter, KeyValueFormatter, configure_logging

ROOT = Path(__file__).resolve().parents[1]
WASM = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: NodeNumber
  pluginConfig:
  - name: NodeNumber
    args:
      guestURL: file://{ROOT / "examples" / "nodenumber" / "nodenumber.wat"}
"""


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble()
    server.start()
    yield server
    server.stop()


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of one series of a Prometheus exposition."""
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_endpoints_and_scheduler_metrics(srv: ApiServerDouble) -> None:
    srv.create(node("node-0", cpu="1"))
    srv.create(node("node-1", cpu="1"))
    srv.create(pod("web-0"))
    srv.create(pod("web-1"))
    srv.create(pod("big-0", cpu="4"))
    with running(srv, config(WASM), port=0, plugin_metrics_sample_percent=100) as runner:
        assert runner.ops is not None
        base = f"http://127.0.0.1:{runner.ops.port}"
        wait(lambda: len(placements(srv)) == 2, what="bound")
        wait(lambda: httpx2.get(f"{base}/readyz").status_code == 200, what="ready")
        assert httpx2.get(f"{base}/healthz").text == "ok"
        assert httpx2.get(f"{base}/nothing").status_code == 404

        def metrics() -> str:
            return httpx2.get(f"{base}/metrics").text

        wait(
            lambda: sample(metrics(), "scheduler_pending_pods", queue="unschedulable") == 1.0,
            what="pending gauge",
        )
        text = metrics()
    profile = "default-scheduler"
    attempts = "scheduler_schedule_attempts_total"
    assert sample(text, attempts, result="scheduled", profile=profile) == 2.0
    assert sample(text, attempts, result="unschedulable", profile=profile) == 1.0
    assert (
        sample(
            text,
            "scheduler_scheduling_attempt_duration_seconds_count",
            result="scheduled",
            profile=profile,
        )
        == 2.0
    )
    duration = "scheduler_plugin_execution_duration_seconds_count"
    # Every cycle sampled here: the wasm plugin, the in-tree ones and the async binding.
    assert sample(text, duration, plugin="NodeNumber", extension_point="Score", status="Success")
    assert sample(
        text, duration, plugin="NodeResourcesFit", extension_point="Filter", status="Unschedulable"
    )
    assert (
        sample(text, duration, plugin="DefaultBinder", extension_point="Bind", status="Success")
        == 2.0
    )
    assert sample(text, duration, plugin="DefaultPreemption", extension_point="PostFilter")
    assert sample(text, "scheduler_pending_pods", queue="active") == 0.0
    assert "_created" not in text


def test_unsampled_cycles_set_no_observer(srv: ApiServerDouble) -> None:
    srv.create(node("node-0"))
    srv.create(pod("web-0"))
    with running(srv, plugin_metrics_sample_percent=0) as runner:
        live = runner.scheduler
        observers: list[object] = []
        real_started = live.attempt_started

        def spy(fwk: Any, info: Any) -> Any:
            observer = real_started(fwk, info)
            observers.append(observer)
            return observer

        live.attempt_started = spy  # type: ignore[method-assign]
        wait(lambda: len(placements(srv)) == 1, what="bound")
        text = runner.metrics.exposition().decode()
    assert observers and all(o is None for o in observers)
    assert "scheduler_plugin_execution_duration_seconds_count{" not in text


@pytest.mark.parametrize("formatter", [KeyValueFormatter(), JsonFormatter()])
def test_log_formats(formatter: logging.Formatter) -> None:
    record = logging.LogRecord(
        "wasmsched.live",
        logging.INFO,
        __file__,
        1,
        "bound pod pod=%s node=%s",
        ("ns/a", "n1"),
        None,
    )
    line = formatter.format(record)
    if isinstance(formatter, JsonFormatter):
        data = json.loads(line)
        assert data["msg"] == "bound pod pod=ns/a node=n1"
        assert (data["level"], data["logger"]) == ("info", "wasmsched.live")
    else:
        assert line.endswith("INFO wasmsched.live bound pod pod=ns/a node=n1")


@pytest.fixture
def restore_logging() -> Any:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    quiet = {name: logging.getLogger(name).level for name in ("httpx", "httpx2", "httpcore2")}
    yield
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
    for name, level in quiet.items():
        logging.getLogger(name).setLevel(level)


def test_info_logs_no_http_request_lines(
    srv: ApiServerDouble, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    # httpx logged one INFO line per request: 14,730 lines for 5,000 pods.
    configure_logging("text", "info")
    srv.create(node("n1"))
    for i in range(5):
        srv.create(pod(f"p-{i}"))
    with running(srv):
        wait(lambda: len(placements(srv)) == 5, 30, "5 pods bound")
        wait(lambda: len(srv.events) >= 5, 30, "5 Scheduled events")
    err = capsys.readouterr().err
    assert "HTTP Request" not in err
    assert err.count("bound pod") == 5
    assert len(err.splitlines()) < 30, err


def test_a_lease_renewal_logs_at_most_one_debug_line(
    srv: ApiServerDouble, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:

    configure_logging("text", "debug")
    lease = LeaseConfig(lease_duration=1.5, renew_deadline=1.0, retry_period=0.1)
    elector = LeaderElector(api_for(srv), lease, "a")
    elector.start()
    try:
        wait(
            lambda: (
                (srv.get("Lease", "kube-system", "wasmsched") or {}).get("metadata", {})
                and _renewals(srv) >= 5
            ),
            30,
            "5 renewals",
        )
    finally:
        elector.release()
    renewals = _renewals(srv)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert not [ln for ln in lines if "HTTP Request" in ln or "httpcore" in ln]
    renew_lines = [ln for ln in lines if "renewed lease" in ln]
    assert renew_lines and all("level=debug" in ln.lower() or "DEBUG" in ln for ln in renew_lines)
    # Acquire, release and one line per renewal at most.
    assert len(lines) <= renewals + 4, lines


def _renewals(srv: ApiServerDouble) -> int:
    return sum(
        1 for method, target, code in list(srv.requests) if method == "PUT" and "leases" in target
    )


def test_plugin_durations_expose_what_a_histogram_would() -> None:
    """The queued plugin durations, once counted, read as prometheus_client's Histogram of
    the same buckets reads: bucket edges included, per label set, sums."""
    from prometheus_client import CollectorRegistry, Histogram
    from prometheus_client.exposition import generate_latest

    from wasmsched.live.ops import SchedulerMetrics

    metrics = SchedulerMetrics()
    reference = CollectorRegistry()
    histogram = Histogram(
        "scheduler_plugin_execution_duration_seconds",
        "Duration for running a plugin at a specific extension point.",
        ["plugin", "extension_point", "status"],
        buckets=[0.00001 * 1.5**i for i in range(20)],
        registry=reference,
    )
    calls = [
        ("NodeResourcesFit", "Filter", "Success", 0.00001),  # on a bucket's edge
        ("NodeResourcesFit", "Filter", "Success", 0.0004),
        ("NodeResourcesFit", "Filter", "Unschedulable", 2.5),  # beyond the last bucket
        ("ImageLocality", "Score", "Success", 0.0),
    ]
    for plugin, point, status, seconds in calls:
        metrics.plugin(plugin, point, status, seconds)
        histogram.labels(plugin, point, status).observe(seconds)

    def lines(text: bytes) -> list[str]:
        name = "scheduler_plugin_execution_duration_seconds"
        return sorted(line for line in text.decode().splitlines() if name in line)

    assert lines(metrics.exposition()) == lines(generate_latest(reference))


def test_plugin_durations_take_a_vectorized_calls_nodes_at_once() -> None:
    """A sampled cycle's vectorized Filter over n nodes stands for n calls: one queued
    entry, exposed as n observations of the call's per-node share."""
    from wasmsched.framework.observed import observe_calls
    from wasmsched.live.ops import SchedulerMetrics
    from wasmsched.live.scheduler import PluginCallObserver

    metrics = SchedulerMetrics()
    counts = [("Success", 300), ("Unschedulable", 100), ("Error", 0)]
    observe_calls(PluginCallObserver(metrics), "Filter", "NodePorts", counts, seconds=0.004)
    assert len(metrics.plugin_duration._queued) == 2  # one entry per status, not per node
    text = metrics.exposition().decode()
    name = "scheduler_plugin_execution_duration_seconds"
    labels = {"plugin": "NodePorts", "extension_point": "Filter"}
    assert sample(text, name + "_count", status="Success", **labels) == 300.0
    assert sample(text, name + "_count", status="Unschedulable", **labels) == 100.0
    assert sample(text, name + "_count", status="Error", **labels) is None
    assert sample(text, name + "_sum", status="Success", **labels) == pytest.approx(0.003)
    # 10 us each: the first bucket (le 1e-05) holds all of them.
    assert sample(text, name + "_bucket", status="Unschedulable", le="1e-05", **labels) == 100.0
