"""Writing back to the API server: bindings, pod status, events, preemption victims.

All calls leave the scheduling thread: a ``Dispatcher`` runs them on a few worker threads.
Calls about one pod go to the same worker (chosen by uid), so they reach the API server
in the order the scheduler made them (a status patch is never overtaken by the binding
that follows it). Events go through their own bounded queue and are dropped when it is
full, as client-go's event broadcaster does, so a burst of failures cannot hold up
bindings.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import queue
import socket
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wasmsched.framework.interfaces import Event, ObjectReference
from wasmsched.framework.status import Code, Status
from wasmsched.live.claim_writes import CLAIM_WRITES_TIMEOUT, DYNAMIC_RESOURCES, ClaimWrites
from wasmsched.live.claims import ClaimCache, ClaimWritten
from wasmsched.live.client import STRATEGIC_MERGE_PATCH, ApiClient, ApiError, FencedError

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod

log = logging.getLogger("wasmsched.live.writer")

Job = Callable[[], None]
# validation.NoteLengthLimit: event notes and condition messages are cut to this.
NOTE_LENGTH_LIMIT = 1024
EVENT_QUEUE_LENGTH = 1000
DEFAULT_API_WORKERS = 64
DEFAULT_EVENT_WORKERS = 16


def now_rfc3339(micro: bool = False, at_ns: int | None = None) -> str:
    """Now (or ``at_ns``, time.time_ns() taken earlier) as RFC 3339, UTC."""
    if at_ns is None:
        t = dt.datetime.now(dt.UTC)
    else:
        t = dt.datetime.fromtimestamp(at_ns // 10**9, dt.UTC)
        t = t.replace(microsecond=at_ns // 1000 % 10**6)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def truncate(message: str, limit: int = NOTE_LENGTH_LIMIT) -> str:
    """kube-scheduler's truncateMessage."""
    if len(message) <= limit:
        return message
    return message[: limit - 4] + " ..."


class Dispatcher:
    """Worker threads running API calls; jobs with the same key run in submission order.

    ``workers`` threads take the per-pod calls (bindings, status patches, deletes) and
    ``event_workers`` the events, from a queue of ``event_queue_length``. With an API
    server answering in 200 ms, 64 workers allow 320 bindings/s and 16 event workers 80
    events/s; kube-scheduler binds each pod on its own goroutine and the event
    broadcaster keeps 1000 queued events (client-go tools/record: maxQueuedEvents).
    ``on_drop`` is told the total each time an event is dropped.
    """

    def __init__(
        self,
        workers: int = DEFAULT_API_WORKERS,
        name: str = "api",
        *,
        event_workers: int = DEFAULT_EVENT_WORKERS,
        event_queue_length: int = EVENT_QUEUE_LENGTH,
        on_drop: Callable[[int], None] = lambda total: None,
    ) -> None:
        self._queues: list[queue.SimpleQueue[Job | None]] = [
            queue.SimpleQueue() for _ in range(max(1, workers))
        ]
        self._events: queue.Queue[Job | None] = queue.Queue(max(1, event_queue_length))
        self._pending = 0
        self._lock = threading.Condition()
        self._threads = [
            threading.Thread(target=self._work, args=(q,), name=f"{name}-{i}", daemon=True)
            for i, q in enumerate(self._queues)
        ]
        self._event_threads = [
            threading.Thread(
                target=self._work, args=(self._events,), name=f"{name}-events-{i}", daemon=True
            )
            for i in range(max(1, event_workers))
        ]
        self._threads.extend(self._event_threads)
        self.dropped_events = 0
        self.abandoned = 0
        self.on_drop = on_drop
        self._closed = False
        for t in self._threads:
            t.start()

    def submit(self, key: str, job: Job) -> None:
        if self._closed:
            log.warning("dispatcher closed, dropping an API call")
            return
        with self._lock:
            self._pending += 1
        self._queues[zlib.crc32(key.encode()) % len(self._queues)].put(job)

    def submit_event(self, job: Job) -> None:
        if self._closed:
            return
        with self._lock:
            self._pending += 1
        try:
            self._events.put_nowait(job)
        except queue.Full:
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()
                self.dropped_events += 1
                total = self.dropped_events
            self.on_drop(total)

    @property
    def pending(self) -> int:
        with self._lock:
            return self._pending

    def _work(self, q: queue.SimpleQueue[Job | None] | queue.Queue[Job | None]) -> None:
        while True:
            job = q.get()
            if job is None:
                return
            try:
                if self._closed:
                    # Shutting down after the drain deadline: what is left is abandoned,
                    # not sent through a client that is being closed.
                    self.abandoned += 1
                else:
                    job()
            except Exception:
                log.exception("API call failed")
            finally:
                with self._lock:
                    self._pending -= 1
                    self._lock.notify_all()

    def drain(self, timeout: float) -> bool:
        """Waits until every submitted call has run; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        self._closed = True
        for q in self._queues:
            q.put(None)
        for _ in self._event_threads:
            with contextlib.suppress(queue.Full):
                self._events.put(None, timeout=timeout)
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        if self.abandoned:
            log.warning("API calls abandoned at shutdown count=%d", self.abandoned)


@dataclass(frozen=True)
class BindResult:
    """How a binding POST ended: ok, ``conflict`` (409 already bound / 404 gone) or error."""

    uid: str
    node: str
    ok: bool
    conflict: bool = False
    message: str = ""
    seconds: float = 0.0
    fenced: bool = False


def binding_body(pod: Pod, node_name: str) -> dict[str, Any]:
    """A v1 Binding as DefaultBinder builds it: the uid makes it a precondition."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }


def post_binding(
    api: ApiClient, pod: Pod, node_name: str, guard: Callable[[], bool] | None = None
) -> BindResult:
    """POSTs the binding (not sent, and not ok, once ``guard`` says no: FencedError)."""
    path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
    start = time.perf_counter()
    try:
        # Replayable: a repeat of a binding the server took answers 409 "already
        # assigned", the conflict path below (the assumed pod is forgotten and the watch,
        # which shows it bound, puts it back in the cache).
        # As protobuf when clientConnection's contentType asks for it (ApiClient.create).
        api.create(path, binding_body(pod, node_name), guard=guard, replayable=True)
    except FencedError:
        return BindResult(pod.uid, node_name, False, message="not the leader", fenced=True)
    except ApiError as err:
        return BindResult(
            pod.uid,
            node_name,
            False,
            conflict=err.status in (404, 409),
            message=str(err),
            seconds=time.perf_counter() - start,
        )
    return BindResult(pod.uid, node_name, True, seconds=time.perf_counter() - start)


class LiveWriter:
    """The scheduler's ClusterWriter against the API server.

    ``current_pod(uid)`` is the informer's latest view of a pod (read on the scheduling
    thread, where every writer method is called); it avoids writing what is already there.
    Fencing: every write is decided under a leadership term (``term()`` when it is
    queued, on the scheduling thread) and checked immediately before it is sent: it goes
    out only if ``may_write()`` (this replica holds the lease and is within its renew
    deadline, by its own monotonic clock) and the term is still the same; a write decided
    under an older term (before a pause, a lost renewal) is dropped, never sent late
    (client-go tools/leaderelection: a leader that cannot renew within RenewDeadline
    stops acting). Dropped writes are counted in ``fenced``. ResourceClaims are written
    through ``claims`` (live/claims.py). Given
    ``bind_results``, it binds asynchronously (``bind_async``): the POST runs on a worker
    and its ``BindResult`` goes to ``bind_results``, which must hand it to the scheduling
    thread (the runner's inbox, then ``Scheduler.complete_binding``).
    """

    def __init__(
        self,
        api: ApiClient,
        dispatcher: Dispatcher,
        current_pod: Callable[[str], Pod | None],
        *,
        reporter: str = "wasmsched",
        may_write: Callable[[], bool] = lambda: True,
        term: Callable[[], int] = lambda: 0,
        bind_results: Callable[[BindResult], None] | None = None,
        on_fenced: Callable[[str], None] = lambda what: None,
        event_client: ApiClient | None = None,
        claims: ClaimCache | None = None,
        claim_results: Callable[[ClaimWritten], None] | None = None,
        on_claim_created: Callable[[bool], None] = lambda created: None,
    ) -> None:
        self.api = api
        # The claims the scheduler sees (the runner's ResourceClaim informer), and where
        # the outcome of a claim write goes (the runner's inbox, then ``claims.end``).
        self.claims = claims
        # Events go through their own client (rate limit) when given one.
        self.event_client = event_client or api
        self.dispatcher = dispatcher
        self.current_pod = current_pod
        self.reporter = reporter
        self.instance = f"{reporter}-{socket.gethostname()}"
        self.may_write = may_write
        self.term = term
        self.on_fenced = on_fenced
        self.fenced = 0
        self._events_api = "events.k8s.io/v1"
        self._bind_results = bind_results
        self._claim_writes = ClaimWrites(
            api,
            dispatcher,
            claims,
            claim_results,
            term=term,
            may_send=self._may_send,
            guard=self._guard,
            dropped=self._dropped,
            on_created=on_claim_created,
        )
        # The capability DefaultBinder looks for; absent without a place for the answers.
        self.bind_async: Callable[[Pod, str], None] | None = (
            self._bind_async if bind_results is not None else None
        )

    # --- ClusterWriter --------------------------------------------------------------------

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        """The synchronous binding: without ``bind_results``, or for other Bind plugins
        (after the pod's claim writes, waited for here)."""
        term = self.term()
        claim_writes = self._claim_writes.pod_writes(pod.uid)
        error = claim_writes.wait(CLAIM_WRITES_TIMEOUT) if claim_writes is not None else ""
        if error:
            return Status(Code.ERROR, f"running PreBind plugin {DYNAMIC_RESOURCES!r}: {error}")
        if not self._may_send(term, "binding"):
            return Status(Code.ERROR, "not the leader: binding not written")
        result = post_binding(self.api, pod, node_name, self._guard(term))
        if result.fenced:
            self._dropped(term, "binding")
        if result.ok:
            self._claim_writes.bound(pod.uid)
            return None
        return Status(Code.ERROR, result.message)

    def _bind_async(self, pod: Pod, node_name: str) -> None:
        """Posts the binding on the pod's worker; the answer goes to ``bind_results``."""
        deliver = self._bind_results
        assert deliver is not None
        term = self.term()
        claim_writes = self._claim_writes.pod_writes(pod.uid)

        def job() -> None:
            error = claim_writes.wait(CLAIM_WRITES_TIMEOUT) if claim_writes is not None else ""
            if error:
                # PreBind failed: the binding-failure path (Unreserve, requeue).
                message = f"running PreBind plugin {DYNAMIC_RESOURCES!r}: {error}"
                result = BindResult(pod.uid, node_name, False, message=message)
            elif not self._may_send(term, "binding"):
                # The binding-failure path: requeued, and retried only by a leader.
                result = BindResult(pod.uid, node_name, False, message="not the leader")
            else:
                result = post_binding(self.api, pod, node_name, self._guard(term))
                if result.fenced:
                    self._dropped(term, "binding")
            if result.ok:
                self._claim_writes.bound(pod.uid)
            deliver(result)

        self.dispatcher.submit(pod.uid, job)

    def extender_bound(self, pod: Pod, node_name: str) -> Status | None:
        return None  # the watch shows the extender's binding

    def write_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """DynamicResources' claim writes (live/claim_writes.py)."""
        return self._claim_writes.write_resource_claim(claim)

    def delete_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """DynamicResources' deletion of a special claim (live/claim_writes.py)."""
        return self._claim_writes.delete_resource_claim(claim)

    def set_extended_resource_claim_status(
        self, pod: Pod, status: Mapping[str, Any]
    ) -> Status | None:
        """The pod's extendedResourceClaimStatus (live/claim_writes.py)."""
        return self._claim_writes.set_extended_resource_claim_status(pod, status)

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Preempts a victim: DisruptionTarget condition, delete, Preempted event."""
        node = pod.node_name
        ns, name, uid = pod.namespace, pod.name, pod.uid
        term = self.term()

        def job() -> None:
            if not self._may_send(term, "status"):
                return
            cond = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": f"{self.reporter}: preempting to accommodate a higher priority pod",
                "lastTransitionTime": now_rfc3339(),
            }
            try:
                self.api.request(
                    "PATCH",
                    f"/api/v1/namespaces/{ns}/pods/{name}/status",
                    body={"status": {"conditions": [cond]}},
                    content_type=STRATEGIC_MERGE_PATCH,
                    guard=self._guard(term),
                )
                if not self._may_send(term, "delete"):
                    return
                self.api.request(
                    "DELETE",
                    f"/api/v1/namespaces/{ns}/pods/{name}",
                    body={
                        "apiVersion": "v1",
                        "kind": "DeleteOptions",
                        "preconditions": {"uid": uid},
                    },
                    guard=self._guard(term),
                )
            except FencedError:
                self._dropped(term, "delete")
                return
            except ApiError as err:
                if not err.not_found:
                    log.warning("preemption failed victim=%s/%s error=%r", ns, name, str(err))
                return
            log.info("preempted victim=%s/%s node=%s preemptor=%s", ns, name, node, reason)

        self.dispatcher.submit(uid, job)
        self.record_event(Event.preempted(time.monotonic(), pod, reason, self.reporter))

    def set_nominated_node(self, pod: Pod, node_name: str) -> None:
        current = self.current_pod(pod.uid) or pod
        if current.nominated_node_name == node_name:
            return
        self._patch_status(pod, {"nominatedNodeName": node_name or None})

    def set_unschedulable(self, pod: Pod, reason: str, message: str) -> None:
        """PodScheduled=False with the reason and message, unless it already says so."""
        current = self.current_pod(pod.uid) or pod
        message = truncate(message)
        for c in current.status.get("conditions") or ():
            if (
                isinstance(c, Mapping)
                and c.get("type") == "PodScheduled"
                and c.get("status") == "False"
                and c.get("reason") == reason
                and c.get("message") == message
            ):
                return
        cond = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": now_rfc3339(),
        }
        self._patch_status(pod, {"conditions": [cond]})

    def record_event(self, event: Event) -> None:
        """Queues the event; its body is built on the event worker (off the scheduling
        thread), stamped with the time it was recorded, as client-go's recorder stamps an
        event before its broadcaster queues it (tools/record: recorder.generateEvent)."""
        recorded = time.time_ns()
        term = self.term()
        self.dispatcher.submit_event(
            lambda: self._post_event(event, self._event_body(event, recorded), term)
        )

    # --- helpers ----------------------------------------------------------------------------

    def _leads(self, term: int) -> bool:
        return self.may_write() and self.term() == term

    def _guard(self, term: int) -> Callable[[], bool]:
        """Asked by the HTTP client right before the request is written."""
        return lambda: self._leads(term)

    def _may_send(self, term: int, what: str) -> bool:
        """Leading, and still in the term the write was decided in; else counted and dropped."""
        if self._leads(term):
            return True
        self._dropped(term, what)
        return False

    def _dropped(self, term: int, what: str) -> None:
        self.fenced += 1
        self.on_fenced(what)
        log.debug("write dropped: not the leader of its term what=%s term=%d", what, term)

    def _patch_status(self, pod: Pod, status: dict[str, Any]) -> None:
        ns, name = pod.namespace, pod.name
        term = self.term()

        def job() -> None:
            if not self._may_send(term, "status"):
                return
            try:
                # A strategic merge patch merges conditions by type, as PatchPodStatus does.
                self.api.request(
                    "PATCH",
                    f"/api/v1/namespaces/{ns}/pods/{name}/status",
                    body={"status": status},
                    content_type=STRATEGIC_MERGE_PATCH,
                    guard=self._guard(term),
                )
            except FencedError:
                self._dropped(term, "status")
            except ApiError as err:
                level = logging.DEBUG if err.not_found else logging.WARNING
                log.log(level, "pod status update failed pod=%s/%s error=%r", ns, name, str(err))

        self.dispatcher.submit(pod.uid, job)

    def _event_body(self, event: Event, recorded: int) -> dict[str, Any]:
        """The events.k8s.io/v1 Event, named and stamped by ``recorded`` (time.time_ns())."""
        ref = event.regarding
        meta = {"name": f"{ref.name}.{recorded:x}", "namespace": ref.namespace or "default"}
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": meta,
            "eventTime": now_rfc3339(micro=True, at_ns=recorded),
            "reportingController": event.reporter or self.reporter,
            "reportingInstance": self.instance,
            "action": event.action or event.reason,
            "reason": event.reason,
            "regarding": _reference(ref),
            "note": truncate(event.note),
            "type": event.type or "Normal",
        }
        if event.related is not None:
            body["related"] = _reference(event.related)
        return body

    def _post_event(self, event: Event, body: dict[str, Any], term: int) -> None:
        if not self._may_send(term, "event"):
            return
        ns = body["metadata"]["namespace"]
        if self._events_api == "events.k8s.io/v1":
            try:
                # Replayable: a repeat of an event the server took answers 409 (its name
                # is taken), logged at debug below. As protobuf when clientConnection's
                # contentType asks for it (ApiClient.create); the answer is not read.
                self.event_client.create(
                    f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
                    body,
                    guard=self._guard(term),
                    replayable=True,
                )
                return
            except FencedError:
                self._dropped(term, "event")
                return
            except ApiError as err:
                if err.status != 404 or 'namespaces "' in err.message:
                    log.debug("event not written reason=%s error=%r", event.reason, str(err))
                    return
                # The server has no events.k8s.io/v1: use core v1 events from now on.
                self._events_api = "v1"
        try:
            self.event_client.request(
                "POST",
                f"/api/v1/namespaces/{ns}/events",
                body=_core_event(body, event),
                guard=self._guard(term),
                replayable=True,
            )
        except FencedError:
            self._dropped(term, "event")
        except ApiError as err:
            log.debug("event not written reason=%s error=%r", event.reason, str(err))


def _reference(ref: ObjectReference) -> dict[str, Any]:
    out = {"kind": ref.kind, "apiVersion": ref.api_version or "v1", "name": ref.name}
    if ref.namespace:
        out["namespace"] = ref.namespace
    if ref.uid:
        out["uid"] = ref.uid
    if ref.resource_version:
        out["resourceVersion"] = ref.resource_version
    return out


def _core_event(body: Mapping[str, Any], event: Event) -> dict[str, Any]:
    """The same event as a core v1 Event."""
    stamp = now_rfc3339()
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": dict(body["metadata"]),
        "involvedObject": body["regarding"],
        "reason": body["reason"],
        "message": body["note"],
        "type": body["type"],
        "action": body["action"],
        "source": {"component": body["reportingController"]},
        "reportingComponent": body["reportingController"],
        "reportingInstance": body["reportingInstance"],
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "eventTime": None,
        "count": 1,
    }
    if event.related is not None:
        out["related"] = body["related"]
    return out
