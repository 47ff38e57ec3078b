"""The live scheduler's main loop.

Threads: one informer per kind, a few API workers (bindings, status, events), the leader
elector and the ops HTTP server feed or serve; the Scheduler itself lives on one thread,
the loop's. Everything that changes it arrives through ``inbox`` (informer deltas,
binding answers, wake-ups) and is applied between scheduling cycles.

The loop: apply what is in the inbox; run the timers when due (backoff flush, leftover
flush, permit timeouts); if this replica leads and the informers have synced, run one
cycle; when there is nothing to schedule, sleep on the inbox until the next timer.
"""

from __future__ import annotations

import logging
import math
import queue
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wasmsched.api.objects import Node, ObjectError, Pod
from wasmsched.config import SchedulerConfig
from wasmsched.framework.interfaces import Registry
from wasmsched.live.claims import ClaimCache, ClaimWritten
from wasmsched.live.client import PODS, RESOURCES, ApiClient
from wasmsched.live.collector import IdleCollector
from wasmsched.live.dispatcher import (
    DEFAULT_API_WORKERS,
    DEFAULT_EVENT_WORKERS,
    EVENT_QUEUE_LENGTH,
    Dispatcher,
)
from wasmsched.live.informer import Delta, Disabled, Informer, InformerItem, Synced
from wasmsched.live.leader import LeaderElector, LeaseConfig
from wasmsched.live.ops import OpsServer, SchedulerMetrics
from wasmsched.live.scheduler import PLUGIN_METRICS_SAMPLE_PERCENT, LiveScheduler
from wasmsched.live.writer import BindResult, LiveWriter
from wasmsched.release.version import KubernetesVersion

log = logging.getLogger("wasmsched.live")

# kube-scheduler's pod informer leaves finished pods out.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"
GAUGE_PERIOD = 1.0
METRICS_FLUSH_PERIOD = 1.0
MAX_IDLE_SLEEP = 1.0
# The interpreter's switch interval while the loop runs (sys.setswitchinterval; CPython's
# default is 5 ms). The scheduling thread always has work while pods are pending, and the
# informers and the API workers wait for the GIL after each read: at 5 ms a binding's
# answer or a watch event waits up to 5 ms behind a cycle, and the pipeline stalls in
# bursts. At 1 ms, 500 nodes and 2000 pods against a real kube-apiserver bound 1.2x more
# pods a second in six of six alternating runs, and the API server and the scheduler each
# spent less CPU per pod (benchmarks/README.md, bench_live.py).
LIVE_SWITCH_INTERVAL = 0.001
HEALTH_STALL_SECONDS = 60.0
DROP_LOG_PERIOD = 10.0


@dataclass
class RunOptions:
    leader_elect: bool = True
    lease: LeaseConfig = field(default_factory=LeaseConfig)
    identity: str | None = None
    bind_address: str = "0.0.0.0"
    port: int | None = 10259  # None: no ops server; 0: any free port
    # API calls: per-pod workers (bindings, status, deletes), event workers and queue, and
    # the most bindings in flight before the loop stops taking pods from the queue.
    api_workers: int = DEFAULT_API_WORKERS
    event_workers: int = DEFAULT_EVENT_WORKERS
    event_queue_length: int = EVENT_QUEUE_LENGTH
    max_binds_in_flight: int = 256
    shutdown_timeout: float = 10.0
    seed: int = 0
    page_size: int = 500
    watch_timeout: int = 300
    informer_initial_backoff: float = 0.8
    informer_max_backoff: float = 30.0
    informer_backoff_reset: float = 120.0
    plugin_metrics_sample_percent: int = PLUGIN_METRICS_SAMPLE_PERCENT
    kinds: tuple[str, ...] = tuple(RESOURCES)
    # The kube-scheduler release to schedule as (None: the API server's, live/options.py:
    # scheduler_features) and the --feature-gates text applied to it.
    kubernetes_version: KubernetesVersion | None = None
    feature_gates: str = ""
    # Freeze what the loop holds and collect garbage at idle moments (live/collector.py).
    freeze_garbage: bool = True


class _Wake:
    """Wakes the loop (stop, leadership change)."""


class LiveRunner:
    """A scheduler wired to an API server; ``run()`` blocks until ``stop()``."""

    def __init__(
        self,
        api: ApiClient,
        config: SchedulerConfig,
        registry: Registry,
        options: RunOptions | None = None,
    ) -> None:
        self.api = api
        self.options = opts = options or RunOptions()
        self.inbox: queue.SimpleQueue[InformerItem | BindResult | ClaimWritten | _Wake] = (
            queue.SimpleQueue()
        )
        self._t0 = time.monotonic()
        self.metrics = SchedulerMetrics()
        self.dispatcher = Dispatcher(
            opts.api_workers,
            event_workers=opts.event_workers,
            event_queue_length=opts.event_queue_length,
            on_drop=self._on_event_dropped,
        )
        self._drops_logged = 0
        self._drop_log_at = -math.inf
        api.on_request = self._on_request
        # The informers' view, on the scheduling thread: pods by uid, nodes by name.
        self.pods: dict[str, Pod] = {}
        self.nodes: dict[str, Node] = {}
        self.elector: LeaderElector | None = None
        if opts.leader_elect:
            self.elector = LeaderElector(
                api,
                opts.lease,
                opts.identity,
                on_started=self._on_started_leading,
                on_stopped=self._on_stopped_leading,
            )
        if self.elector is not None:
            api.user_agent = f"wasmsched ({self.elector.identity})"
        # ResourceClaims reach the scheduler through the assume cache (live/claims.py).
        self.claims = ClaimCache(
            lambda claim: self.scheduler.on_object_add(claim),
            lambda old, new: self.scheduler.on_object_update(old, new),
            lambda claim: self.scheduler.on_object_delete(claim),
        )
        self.writer = LiveWriter(
            api,
            self.dispatcher,
            self.pods.get,
            may_write=self.is_leader,
            term=self.term,
            bind_results=self.inbox.put,
            on_fenced=self._on_fenced,
            event_client=api.with_own_rate_limit(),
            claims=self.claims,
            claim_results=self.inbox.put,
            on_claim_created=self._on_claim_created,
        )
        self.scheduler = LiveScheduler(
            config,
            registry,
            self.writer,
            self.now,
            metrics=self.metrics,
            seed=opts.seed,
            sample_percent=opts.plugin_metrics_sample_percent,
        )
        self.informers: dict[str, Informer] = {}
        for kind in opts.kinds:
            resource = RESOURCES[kind]
            self.informers[kind] = Informer(
                api,
                resource,
                _parse_added_pods(self.inbox.put) if resource is PODS else self.inbox.put,
                field_selector=POD_FIELD_SELECTOR if resource is PODS else "",
                page_size=opts.page_size,
                watch_timeout=opts.watch_timeout,
                initial_backoff=opts.informer_initial_backoff,
                max_backoff=opts.informer_max_backoff,
                backoff_reset=opts.informer_backoff_reset,
                keep=_not_terminal if resource is PODS else None,
                on_relist=self._on_relist,
            )
        self._pending_sync = set(self.informers)
        self.collector = IdleCollector() if opts.freeze_garbage else None
        self.ready = threading.Event()
        self.leading = threading.Event()
        self._stop = threading.Event()
        self._lost = False
        self._heartbeat = time.monotonic()
        self.ops: OpsServer | None = None
        if opts.port is not None:
            self.ops = OpsServer(
                opts.bind_address, opts.port, self.metrics, self._healthy, self._ready
            )

    # --- clock and state -----------------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic() - self._t0

    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    def term(self) -> int:
        return 0 if self.elector is None else self.elector.term

    def _on_request(self, verb: str, seconds: float) -> None:
        self.metrics.api_latency.labels(verb).observe(seconds)

    def _on_event_dropped(self, total: int) -> None:
        """Counts a dropped event; logs the drops at most every 10 s (from any thread)."""
        self.metrics.dropped_events.inc()
        now = time.monotonic()
        if now - self._drop_log_at >= DROP_LOG_PERIOD:
            self._drop_log_at = now
            log.warning(
                "event queue full, events dropped dropped=%d total=%d queue=%d",
                total - self._drops_logged,
                total,
                self.options.event_queue_length,
            )
            self._drops_logged = total

    def _on_claim_created(self, created: bool) -> None:
        # The special claim for extended resources: no admin access, owned by a Pod.
        status = "success" if created else "failure"
        self.metrics.resourceclaim_creates.labels(status, "false", "", "Pod").inc()

    def _on_fenced(self, what: str) -> None:
        self.metrics.fenced_writes.labels(what).inc()

    def _healthy(self) -> tuple[bool, str]:
        if self.elector is not None and not self.elector.healthy:
            return False, "leaderElection: lease not renewed"
        if not self._stop.is_set() and time.monotonic() - self._heartbeat > HEALTH_STALL_SECONDS:
            return False, "scheduling loop stalled"
        return True, "ok"

    def _ready(self) -> tuple[bool, str]:
        if self._stop.is_set():
            return False, "shutting down"
        if not self.ready.is_set():
            return False, f"informers not synced: {', '.join(sorted(self._pending_sync))}"
        return True, "ok"

    def _on_started_leading(self) -> None:
        self.leading.set()
        self.metrics.leader.labels(self.options.lease.name).set(1)
        self.inbox.put(_Wake())

    def _on_stopped_leading(self) -> None:
        # kube-scheduler exits when it loses the lease; so does this loop.
        self.leading.clear()
        self.metrics.leader.labels(self.options.lease.name).set(0)
        self._lost = True
        self._stop.set()
        self.inbox.put(_Wake())

    def _on_relist(self, kind: str) -> None:
        self.metrics.relists.labels(kind).inc()

    def stop(self) -> None:
        """Asks the loop to stop (thread- and signal-safe); ``run()`` then shuts down."""
        self._stop.set()
        self.inbox.put(_Wake())

    # --- run -----------------------------------------------------------------------------------

    def run(self) -> int:
        """Runs until stopped; 0 after a graceful stop, 1 when the lease was lost."""
        if self.ops is not None:
            self.ops.start()
            log.info(
                "serving healthz and metrics address=%s port=%d",
                self.options.bind_address,
                self.ops.port,
            )
        log.info("reading pods and nodes as %s", "protobuf" if self.api.protobuf else "json")
        log.info(
            "writing bindings and events as %s", "protobuf" if self.api.send_protobuf else "json"
        )
        for informer in self.informers.values():
            informer.start()
        threading.Thread(target=self._flush_metrics, name="metrics-flush", daemon=True).start()
        if self.elector is not None:
            self.metrics.leader.labels(self.options.lease.name).set(0)
            self.elector.start()
        else:
            self.leading.set()
        interval = sys.getswitchinterval()
        sys.setswitchinterval(LIVE_SWITCH_INTERVAL)
        try:
            self._loop()
        finally:
            try:
                self._shutdown()
            finally:
                sys.setswitchinterval(interval)
        return 1 if self._lost else 0

    def _loop(self) -> None:
        sched = self.scheduler
        due = 0.0
        next_gauges = 0.0
        while not self._stop.is_set():
            self._heartbeat = time.monotonic()
            self._drain(0.0)
            if self._stop.is_set():
                break
            now = self.now()
            if now >= due:
                sched.tick()
                due = self._next_due(now)
            if now >= next_gauges:
                self._update_gauges()
                next_gauges = now + GAUGE_PERIOD
            # Backpressure (kube-scheduler's async API calls): no new pod while too many
            # bindings wait for the API server; their answers wake the loop.
            if (
                self.ready.is_set()
                and self.is_leader()
                and sched.binds_in_flight < self.options.max_binds_in_flight
            ):
                try:
                    worked = sched.schedule_one()
                except Exception:
                    log.exception("scheduling cycle failed")
                    worked = True
                if worked:
                    if sched.pending_timers():
                        due = min(due, self._next_due(self.now()))
                    continue
            if self.collector is not None:
                self.collector.idle()
            self._drain(max(0.0, min(due - self.now(), MAX_IDLE_SLEEP)))

    def _flush_metrics(self) -> None:
        """Counts the sampled cycles' plugin durations off the scheduling thread, every
        second (kube-scheduler's MetricAsyncRecorder flush interval)."""
        while not self._stop.wait(METRICS_FLUSH_PERIOD):
            self.metrics.flush_plugins()

    def _next_due(self, now: float) -> float:
        wake = self.scheduler.next_wakeup()
        return min(wake if wake is not None else math.inf, now + MAX_IDLE_SLEEP)

    def _update_gauges(self) -> None:
        counts = self.scheduler.pending_counts()
        self.metrics.set_pending(
            counts["active"], counts["backoff"], counts["unschedulable"], counts["gated"]
        )

    def _drain(self, timeout: float) -> None:
        """Applies everything in the inbox, waiting up to ``timeout`` for the first item."""
        try:
            item = self.inbox.get(timeout=timeout) if timeout > 0 else self.inbox.get_nowait()
        except queue.Empty:
            return
        while True:
            try:
                self._apply(item)
            except Exception:
                log.exception("applying an informer change failed")
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return

    def _shutdown(self) -> None:
        opts = self.options
        deadline = time.monotonic() + opts.shutdown_timeout
        log.info("shutting down binds_in_flight=%d", self.scheduler.binds_in_flight)
        # Finish in-flight bindings (their answers come through the inbox), then the rest.
        while self.scheduler.binds_in_flight and time.monotonic() < deadline and not self._lost:
            self._drain(0.05)
        self.dispatcher.drain(max(0.0, deadline - time.monotonic()))
        self._drain(0.0)
        if self.elector is not None:
            if self._lost:
                self.elector.stop()
            else:
                self.elector.release()
            self.metrics.leader.labels(opts.lease.name).set(0)
        self.leading.clear()
        for informer in self.informers.values():
            informer.stop()
        self.dispatcher.close(1.0)
        if self.ops is not None:
            self.ops.stop()
        self.scheduler.close()
        if self.collector is not None:
            self.collector.close()
        log.info("stopped")

    # --- inbox items ---------------------------------------------------------------------------

    def _apply(self, item: InformerItem | BindResult | ClaimWritten | _Wake) -> None:
        if isinstance(item, Delta):
            if item.kind == "Pod":
                self._apply_pod(item)
            elif item.kind == "Node":
                self._apply_node(item)
            elif item.kind == "ResourceClaim":
                self.claims.informed(item.old, item.new)
            elif item.new is None:
                assert item.old is not None
                self.scheduler.on_object_delete(item.old)
            elif item.old is None:
                self.scheduler.on_object_add(item.new)
            else:
                # An Update event with both versions, as kube's informers deliver it: the
                # plugins' queueing hints compare them (DynamicResources' classes, slices).
                self.scheduler.on_object_update(item.old, item.new)
        elif isinstance(item, BindResult):
            self.scheduler.finish_binding(item)
        elif isinstance(item, ClaimWritten):
            self.claims.end(item.key, item.answer)
        elif isinstance(item, (Synced, Disabled)):
            if isinstance(item, Disabled):
                log.warning("informer disabled kind=%s reason=%r", item.kind, item.reason)
            self._pending_sync.discard(item.kind)
            if not self._pending_sync and not self.ready.is_set():
                log.info("informers synced nodes=%d pods=%d", len(self.nodes), len(self.pods))
                if self.collector is not None:
                    self.collector.synced()
                self.ready.set()

    def _apply_pod(self, delta: Delta) -> None:
        sched = self.scheduler
        if delta.new is None:
            assert delta.old is not None
            gone = Pod(delta.old)
            pod = self.pods.pop(gone.uid, None)
            if pod is not None:
                sched.on_pod_delete(pod)
            return
        uid = (delta.new.get("metadata") or {}).get("uid")
        previous = self.pods.get(uid) if isinstance(uid, str) else None
        if previous is None and isinstance(delta, PodAdded):
            pod, error = delta.pod, delta.error  # parsed on the informer's thread
        else:
            # An update after a binding or a status patch keeps what the previous version
            # parsed: validating a whole pod again costs as much as a scheduling cycle.
            pod = Pod(delta.new) if previous is None else previous.updated(delta.new)
            error = _invalid(pod)
        if error is not None:
            log.warning("ignoring invalid pod pod=%s error=%r", _key(delta.new), error)
            return
        self.pods[pod.uid] = pod
        if previous is None:
            sched.on_pod_add(pod)
        else:
            sched.on_pod_update(previous, pod)

    def _apply_node(self, delta: Delta) -> None:
        sched = self.scheduler
        if delta.new is None:
            assert delta.old is not None
            name = str((delta.old.get("metadata") or {}).get("name", ""))
            node = self.nodes.pop(name, None)
            if node is not None:
                sched.on_node_delete(node)
            return
        node = Node(delta.new)
        try:
            node.validate()
        except ObjectError as err:
            log.warning("ignoring invalid node node=%s error=%r", _key(delta.new), str(err))
            return
        previous = self.nodes.get(node.name)
        self.nodes[node.name] = node
        if previous is None:
            sched.on_node_add(node)
        else:
            sched.on_node_update(previous, node)


@dataclass(frozen=True)
class PodAdded(Delta):
    """A pod's add, parsed and validated where the watch decoded it (``error``: why it
    is invalid, or None)."""

    pod: Pod
    error: str | None


def _invalid(pod: Pod) -> str | None:
    """Why ``pod`` is invalid (every field parsed now), or None."""
    try:
        pod.validate()
    except ObjectError as err:
        return str(err)
    return None


def _parse_added_pods(sink: Callable[[InformerItem], None]) -> Callable[[InformerItem], None]:
    """The Pod informer's sink: each new pod is parsed and validated on the informer's
    thread, as kube-scheduler's informers decode pods beside its scheduling goroutine, so
    the scheduling thread only queues it (a pod's full parse costs a third of its cycle;
    its later versions keep what it parsed: ``Pod.updated``). The Pod object is the
    scheduling thread's from the moment it is handed over."""

    def parse(item: InformerItem) -> None:
        if isinstance(item, Delta) and item.old is None and item.new is not None:
            try:
                pod = Pod(item.new)
            except ObjectError:
                pass  # not a pod's manifest: the scheduling thread reports it as before
            else:
                error = _invalid(pod)
                item = PodAdded(item.kind, None, item.new, pod, error)
        sink(item)

    return parse


def _not_terminal(manifest: Mapping[str, Any]) -> bool:
    phase = (manifest.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed")


def _key(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
