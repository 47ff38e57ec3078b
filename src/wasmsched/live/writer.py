"""Writing back to the API server: bindings, pod status, events, preemption victims.

All calls leave the scheduling thread: a ``Dispatcher`` (live/dispatcher.py) runs them on
worker threads. Calls about one pod are keyed by its uid and run one at a time, so they
reach the API server in the order the scheduler made them (a status patch is never
overtaken by the binding that follows it). Events go through their own bounded queue and
are dropped when it is full, as client-go's event broadcaster does, so a burst of
failures cannot hold up bindings.
"""

from __future__ import annotations

import datetime as dt
import logging
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wasmsched.framework.interfaces import Event, ObjectReference
from wasmsched.framework.status import Code, Status
from wasmsched.live.claim_writes import CLAIM_WRITES_TIMEOUT, DYNAMIC_RESOURCES, ClaimWrites
from wasmsched.live.claims import ClaimCache, ClaimWritten
from wasmsched.live.client import STRATEGIC_MERGE_PATCH, ApiClient, ApiError, FencedError
from wasmsched.live.dispatcher import Dispatcher

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod

log = logging.getLogger("wasmsched.live.writer")

# validation.NoteLengthLimit: event notes and condition messages are cut to this.
NOTE_LENGTH_LIMIT = 1024


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
