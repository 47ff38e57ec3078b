"""Operations: Prometheus metrics with kube-scheduler's names, /healthz, /readyz, /metrics,
and the log format."""

from __future__ import annotations

import bisect
import collections
import datetime as dt
import itertools
import json
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

log = logging.getLogger("wasmsched.live.ops")

# pkg/scheduler/metrics: label values of scheduler_schedule_attempts_total.
SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class SchedulerMetrics:
    """The metrics of one scheduler, in their own registry (several may share a process)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        # kube-scheduler exposes no *_created series; the setting is process-wide.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = registry if registry is not None else CollectorRegistry()
        self._attempt_children: dict[tuple[str, str], tuple[Counter, Histogram]] = {}
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.plugin_duration = PluginDurations(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            _exponential(0.00001, 1.5, 20),
        )
        r.register(self.plugin_duration)
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type.",
            ["queue"],
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master.",
            ["name"],
            registry=r,
        )
        self.binding_conflicts = Counter(
            "wasmsched_binding_conflicts_total",
            "Bindings refused because the pod was already bound or deleted.",
            registry=r,
        )
        self.dropped_events = Counter(
            "wasmsched_events_dropped_total",
            "Events not written because the event queue was full (client-go's broadcaster "
            "drops them the same way).",
            registry=r,
        )
        # client-go's rest_client_request_duration_seconds (tools/metrics), by verb.
        self.api_latency = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb.",
            ["verb"],
            buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0),
            registry=r,
        )
        self.fenced_writes = Counter(
            "wasmsched_fenced_writes_total",
            "Writes dropped because this replica no longer led in the term they were decided "
            "in, by the write (binding, status, event, delete).",
            ["write"],
            registry=r,
        )
        self.relists = Counter(
            "wasmsched_informer_relists_total",
            "Full lists made by the informers (start, 410 Gone).",
            ["kind"],
            registry=r,
        )
        # k8s.io/dynamic-resource-allocation/resourceclaim/metrics: ResourceClaimCreate,
        # counted by DynamicResources' PreBind (createExtendedResourceClaimInAPI).
        self.resourceclaim_creates = Counter(
            "dynamic_resource_allocation_resourceclaim_creates_total",
            "Number of ResourceClaims creation requests, categorized by creation status, "
            "admin access, and owning API group and kind (either Pod or "
            "scheduling.k8s.io/PodGroup)",
            ["status", "admin_access", "owner_api_group", "owner_api_kind"],
            registry=r,
        )

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt (on the scheduling thread, once a pod: the labelled
        children are looked up once per label pair)."""
        children = self._attempt_children.get((result, profile))
        if children is None:
            children = (
                self.schedule_attempts.labels(result, profile),
                self.attempt_duration.labels(result, profile),
            )
            self._attempt_children[(result, profile)] = children
        children[0].inc()
        children[1].observe(seconds)

    def plugin(self, plugin: str, point: str, status: str, seconds: float, count: int = 1) -> None:
        """``count`` plugin calls of a sampled cycle, each lasting ``seconds``: queued,
        counted by ``flush_plugins``."""
        self.plugin_duration.observe(plugin, point, status, seconds, count)

    def flush_plugins(self) -> None:
        self.plugin_duration.flush()

    def set_pending(self, active: int, backoff: int, unschedulable: int, gated: int) -> None:
        g = self.pending_pods
        g.labels("active").set(active)
        g.labels("backoff").set(backoff)
        g.labels("unschedulable").set(unschedulable)
        g.labels("gated").set(gated)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class PluginDurations(Collector):
    """A histogram by (plugin, extension_point, status), recorded as kube-scheduler's
    MetricAsyncRecorder records it (pkg/scheduler/metrics/metric_recorder.go:
    ObservePluginDurationAsync queues, a goroutine flushes every second): a sampled cycle
    observes every plugin call on every node, thousands a cycle, so the scheduling thread
    only queues them, and ``flush`` (a thread of the runner, and every scrape) sorts them
    into buckets."""

    def __init__(self, name: str, documentation: str, buckets: list[float]) -> None:
        self.name = name
        self.documentation = documentation
        self._bounds = list(buckets)
        self._labels = [floatToGoString(b) for b in self._bounds] + ["+Inf"]  # type: ignore[no-untyped-call]
        # deque: appends and pops are atomic, so observe() takes no lock.
        self._queued: collections.deque[tuple[str, str, str, float, int]] = collections.deque()
        self._counts: dict[tuple[str, str, str], list[int]] = {}
        self._sums: dict[tuple[str, str, str], float] = {}
        self._lock = threading.Lock()

    def observe(self, plugin: str, point: str, status: str, seconds: float, count: int = 1) -> None:
        """``count`` observations of ``seconds`` (a vectorized call's per-node share)."""
        self._queued.append((plugin, point, status, seconds, count))

    def flush(self) -> None:
        """Counts what was queued."""
        queued, bounds, counts, sums = self._queued, self._bounds, self._counts, self._sums
        with self._lock:
            for _ in range(len(queued)):
                plugin, point, status, seconds, count = queued.popleft()
                key = (plugin, point, status)
                row = counts.get(key)
                if row is None:
                    row = counts[key] = [0] * (len(bounds) + 1)
                    sums[key] = 0.0
                row[bisect.bisect_left(bounds, seconds)] += count
                sums[key] += seconds * count

    def collect(self) -> Iterator[HistogramMetricFamily]:
        self.flush()
        family = HistogramMetricFamily(
            self.name, self.documentation, labels=["plugin", "extension_point", "status"]
        )
        with self._lock:
            for key, row in self._counts.items():
                cumulative = list(itertools.accumulate(row))
                family.add_metric(list(key), list(zip(self._labels, cumulative, strict=True)),
                                  self._sums[key])  # fmt: skip
        yield family


Check = Callable[[], tuple[bool, str]]


class OpsServer:
    """/healthz, /livez, /readyz and /metrics over plain HTTP on a thread."""

    def __init__(
        self,
        address: str,
        port: int,
        metrics: SchedulerMetrics,
        healthy: Check,
        ready: Check,
    ) -> None:
        self.metrics = metrics
        self.healthy = healthy
        self.ready = ready
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, server.metrics.exposition(), CONTENT_TYPE_LATEST)
                elif path in ("/healthz", "/livez"):
                    ok, why = server.healthy()
                    self._send(200 if ok else 500, (why or "ok").encode())
                elif path == "/readyz":
                    ok, why = server.ready()
                    self._send(200 if ok else 500, (why or "ok").encode())
                else:
                    self._send(404, b"not found")

            def _send(self, code: int, body: bytes, ctype: str = "text/plain") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("ops request %s", format % args)

        self._httpd = ThreadingHTTPServer((address, port), Handler)
        self._httpd.daemon_threads = True
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="ops-http", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class KeyValueFormatter(logging.Formatter):
    """``time level logger message`` where messages carry their own key=value fields."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = dt.datetime.fromtimestamp(record.created, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        line = f"{stamp} {record.levelname} {record.name} {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ts, level, logger, msg (and exc)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).strftime(
                "%Y-%m-%dT%H:%M:%S.%fZ"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out)


# The HTTP client's loggers: httpx logs every request at INFO (three lines a pod: binding,
# status, event) and httpcore traces every connection at DEBUG. The scheduler logs what it
# does itself, so these say only warnings and errors, at every --log-level.
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "hpack")


def configure_logging(fmt: str = "text", level: str = "info") -> None:
    """Logs to stderr at ``level`` (text or JSON lines), HTTP client request logs off."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
