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
from live_support import config, node, placements, pod, running, wait
from wasmsched.live.ops import JsonFormatter, KeyValueFormatter

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
