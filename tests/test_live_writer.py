"""The live ClusterWriter and its dispatcher against the double."""

from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any

import pytest

from apiserver import ApiServerDouble
from live_support import api_for, node, pod, wait
from wasmsched.api.objects import Pod
from wasmsched.framework.interfaces import Event, ObjectReference
from wasmsched.live.client import (
    JSON,
    PROTOBUF,
    STRATEGIC_MERGE_PATCH,
    accepts_protobuf,
    sends_protobuf,
)
from wasmsched.live.dispatcher import Dispatcher
from wasmsched.live.writer import (
    BindResult,
    LiveWriter,
    binding_body,
    post_binding,
    truncate,
)


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def writer(srv: ApiServerDouble) -> Any:
    dispatcher = Dispatcher(workers=2)
    pods: dict[str, Pod] = {}
    w = LiveWriter(api_for(srv), dispatcher, pods.get)
    w.pods = pods  # type: ignore[attr-defined]
    yield w
    dispatcher.close()


def stored(srv: ApiServerDouble, name: str) -> Pod:
    return Pod(srv.get("Pod", "default", name))


def condition(srv: ApiServerDouble, name: str, type_: str) -> dict[str, Any] | None:
    conds = srv.get("Pod", "default", name)["status"].get("conditions") or []
    return next((c for c in conds if c["type"] == type_), None)


def status_patches(srv: ApiServerDouble, name: str) -> int:
    return sum(1 for m, t, _ in srv.requests if m == "PATCH" and f"/pods/{name}/status" in t)


def test_unschedulable_condition_is_patched_once(srv: ApiServerDouble, writer: Any) -> None:
    srv.create(pod("web-0"))
    p = stored(srv, "web-0")
    writer.set_unschedulable(p, "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")
    assert writer.dispatcher.drain(5)
    cond = condition(srv, "web-0", "PodScheduled")
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    # The informer's view now has it: writing the same again is skipped.
    writer.pods[p.uid] = stored(srv, "web-0")
    writer.set_unschedulable(p, "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")
    writer.set_unschedulable(p, "SchedulerError", "boom")
    assert writer.dispatcher.drain(5)
    assert status_patches(srv, "web-0") == 2
    assert condition(srv, "web-0", "PodScheduled")["reason"] == "SchedulerError"


def test_nominated_node_is_set_and_cleared(srv: ApiServerDouble, writer: Any) -> None:
    srv.create(pod("web-0"))
    writer.set_nominated_node(stored(srv, "web-0"), "node-1")
    assert writer.dispatcher.drain(5)
    assert stored(srv, "web-0").nominated_node_name == "node-1"
    writer.set_nominated_node(stored(srv, "web-0"), "")
    assert writer.dispatcher.drain(5)
    assert stored(srv, "web-0").nominated_node_name == ""


def test_preemption_marks_deletes_and_records(srv: ApiServerDouble, writer: Any) -> None:
    srv.create(node("node-0"))
    srv.create(pod("victim-0", nodeName="node-0"))
    victim = stored(srv, "victim-0")
    writer.delete_pod(victim, "default/high-0")
    assert writer.dispatcher.drain(5)
    assert srv.get("Pod", "default", "victim-0") is None
    patched = [
        t for m, t, c in srv.requests if m == "PATCH" and "victim-0/status" in t and c == 200
    ]
    assert patched
    event = next(e for e in srv.events if e.get("reason") == "Preempted")
    assert event["note"] == "Preempted by pod default/high-0 on node node-0"
    assert event["regarding"]["uid"] == victim.uid


def test_binding_answers(srv: ApiServerDouble, writer: Any) -> None:
    srv.create(node("node-0"))
    srv.create(pod("web-0"))
    p = stored(srv, "web-0")
    first = post_binding(writer.api, p, "node-0")
    again = post_binding(writer.api, p, "node-0")
    srv.delete("Pod", "default", "web-0")
    gone = post_binding(writer.api, p, "node-0")
    assert (first.ok, first.conflict) == (True, False)
    assert (again.ok, again.conflict) == (False, True) and again.message.startswith("409")
    assert (gone.ok, gone.conflict) == (False, True) and gone.message.startswith("404")


@pytest.mark.parametrize("content_type", [JSON, PROTOBUF])
def test_the_binding_and_the_event_go_in_the_configured_content_type(
    srv: ApiServerDouble, content_type: str
) -> None:
    """clientConnection.contentType protobuf (kube-scheduler's default): the binding and the
    events.k8s.io Event are protobuf bodies, read back to what the JSON path writes; the
    status patch stays JSON. application/json: all JSON."""
    srv.create(node("node-0"))
    srv.create(pod("web-0"))
    p = stored(srv, "web-0")
    dispatcher = Dispatcher(workers=1)
    api = api_for(
        srv,
        accept_protobuf=accepts_protobuf(content_type),
        send_protobuf=sends_protobuf(content_type),
    )
    w = LiveWriter(api, dispatcher, {}.get)
    ref = ObjectReference("Pod", "v1", p.name, p.namespace, p.uid)
    related = ObjectReference("Node", "v1", "node-0")
    try:
        assert post_binding(api, p, "node-0").ok
        again = post_binding(api, p, "node-0")
        w.record_event(Event(0.0, ref, related, "Normal", "Scheduled", "Binding", "assigned"))
        w.set_unschedulable(p, "Unschedulable", "none fit")
        assert dispatcher.drain(5)
    finally:
        dispatcher.close()
        api.close()
    assert (again.ok, again.conflict) == (False, True)
    assert again.message.startswith("409 Conflict: Operation cannot be fulfilled on pods/binding")
    sent = {(m, path): ctype for m, path, ctype in srv.content_types}
    assert sent[("POST", "/api/v1/namespaces/default/pods/web-0/binding")] == content_type
    assert sent[("POST", "/apis/events.k8s.io/v1/namespaces/default/events")] == content_type
    assert sent[("PATCH", "/api/v1/namespaces/default/pods/web-0/status")] == (
        STRATEGIC_MERGE_PATCH
    )
    assert srv.bindings[0]["binding"] == binding_body(p, "node-0")
    (event,) = srv.events
    assert {k: v for k, v in event.items() if k not in ("metadata", "eventTime")} == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "reportingController": "wasmsched",
        "reportingInstance": w.instance,
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "apiVersion": "v1", "name": "web-0",
                      "namespace": "default", "uid": p.uid},
        "related": {"kind": "Node", "apiVersion": "v1", "name": "node-0"},
        "note": "assigned",
        "type": "Normal",
    }  # fmt: skip


def test_events_fall_back_to_core_v1(srv: ApiServerDouble, writer: Any) -> None:
    srv.create(pod("web-0"))
    p = stored(srv, "web-0")
    ref = ObjectReference("Pod", "v1", p.name, p.namespace, p.uid)
    srv.faults.fail_next(
        "POST",
        r"^/apis/events\.k8s\.io/",
        status=404,
        message="the server could not find the requested resource",
    )
    for note in ("first", "second"):
        writer.record_event(
            Event(0.0, ref, None, "Warning", "FailedScheduling", "Scheduling", note)
        )
        assert writer.dispatcher.drain(5)
    events = srv.events
    assert [e["apiVersion"] for e in events] == ["v1", "v1"]
    assert events[0]["involvedObject"]["uid"] == p.uid
    assert events[1]["message"] == "second"
    assert events[1]["source"]["component"] == "wasmsched"


def test_an_event_is_built_on_its_worker_stamped_when_recorded(
    srv: ApiServerDouble, writer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv.create(pod("web-0"))
    p = stored(srv, "web-0")
    ref = ObjectReference("Pod", "v1", p.name, p.namespace, p.uid)
    built_on: list[str] = []
    build = LiveWriter._event_body

    def spy(self: LiveWriter, event: Event, recorded: int) -> dict[str, Any]:
        built_on.append(threading.current_thread().name)
        return build(self, event, recorded)

    monkeypatch.setattr(LiveWriter, "_event_body", spy)
    # The event worker is busy for a while: the event waits in the queue.
    writer.dispatcher.submit_event(lambda: time.sleep(0.3))
    before = time.time_ns()
    writer.record_event(Event(0.0, ref, None, "Normal", "Scheduled", "Binding", "assigned"))
    after = time.time_ns()
    assert built_on == []  # not on the scheduling thread, which only queued it
    assert writer.dispatcher.drain(5)
    assert [name.startswith("api-events-") for name in built_on] == [True]
    (event,) = srv.events
    # Named and stamped at record_event, not when the worker got to it 0.3 s later.
    assert before <= int(event["metadata"]["name"].rsplit(".", 1)[1], 16) <= after
    stamp = dt.datetime.strptime(event["eventTime"], "%Y-%m-%dT%H:%M:%S.%fZ")
    micros = int(stamp.replace(tzinfo=dt.UTC).timestamp() * 10**6)
    assert before // 1000 <= micros <= after // 1000


def test_dispatcher_keeps_order_per_key() -> None:
    dispatcher = Dispatcher(workers=3)
    seen: dict[str, list[int]] = {}
    lock = threading.Lock()

    def job(key: str, i: int) -> Any:
        def run() -> None:
            time.sleep(0.001 * ((i * 7) % 3))
            with lock:
                seen.setdefault(key, []).append(i)

        return run

    for i in range(30):
        for key in ("a", "b", "c", "d"):
            dispatcher.submit(key, job(key, i))
    assert dispatcher.drain(10)
    dispatcher.close()
    assert all(order == list(range(30)) for order in seen.values())
    assert len(seen) == 4


@pytest.mark.parametrize(("length", "cut"), [(10, False), (1024, False), (1025, True)])
def test_messages_are_truncated_like_kube_scheduler(length: int, cut: bool) -> None:
    out = truncate("x" * length)
    assert len(out) == min(length, 1024)
    assert out.endswith(" ...") == cut


def test_a_slow_api_server_does_not_block_the_caller(srv: ApiServerDouble, writer: Any) -> None:
    # A slow API server does not block the caller: calls are queued.
    srv.create(pod("web-0"))
    srv.faults.delay(r"/status$", 0.5)
    started = time.monotonic()
    writer.set_unschedulable(stored(srv, "web-0"), "Unschedulable", "slow")
    assert time.monotonic() - started < 0.1
    wait(lambda: condition(srv, "web-0", "PodScheduled") is not None, what="the slow patch")


@pytest.mark.parametrize(
    ("leader", "status", "expected"),
    [
        (True, None, (True, False, "")),
        (True, 409, (False, True, None)),
        (True, 500, (False, False, None)),
        (False, None, (False, False, "not the leader")),
    ],
    ids=["bound", "conflict", "error", "not-leader"],
)
def test_bind_async_delivers_the_result(
    srv: ApiServerDouble,
    leader: bool,
    status: int | None,
    expected: tuple[bool, bool, str | None],
) -> None:
    srv.create(node("node-0"))
    srv.create(pod("web-0"))
    if status is not None:
        srv.faults.fail_next("POST", r"/pods/web-0/binding$", status=status)
    results: list[BindResult] = []
    dispatcher = Dispatcher(workers=1)
    w = LiveWriter(
        api_for(srv), dispatcher, {}.get, may_write=lambda: leader, bind_results=results.append
    )
    try:
        assert w.bind_async is not None
        w.bind_async(stored(srv, "web-0"), "node-0")
        assert dispatcher.drain(5)
    finally:
        dispatcher.close()
    (result,) = results
    ok, conflict, message = expected
    assert (result.node, result.ok, result.conflict) == ("node-0", ok, conflict)
    if message is not None:
        assert result.message == message
    assert (stored(srv, "web-0").node_name == "node-0") == ok


def test_without_a_result_sink_the_writer_binds_synchronously(writer: Any) -> None:
    assert writer.bind_async is None


def test_writes_decided_under_an_older_term_are_dropped(srv: ApiServerDouble) -> None:
    # A replica paused past its renew deadline that then renews leads again, but in a new
    # term: what it queued before the pause was decided on a view that may be stale.
    srv.create(node("node-0"))
    for name in ("web-0", "web-1", "web-2"):
        srv.create(pod(name))
    term = [1]
    results: list[BindResult] = []
    fenced: list[str] = []
    dispatcher = Dispatcher(workers=1)
    w = LiveWriter(
        api_for(srv),
        dispatcher,
        {}.get,
        term=lambda: term[0],
        bind_results=results.append,
        on_fenced=fenced.append,
    )
    release = threading.Event()
    dispatcher.submit("x", lambda: release.wait(10))  # holds the one worker
    dispatcher.submit_event(lambda: release.wait(10))  # and the events worker
    try:
        assert w.bind_async is not None
        w.bind_async(stored(srv, "web-0"), "node-0")
        w.set_unschedulable(stored(srv, "web-1"), "Unschedulable", "no")
        w.delete_pod(stored(srv, "web-2"), "default/high")
        term[0] = 2
        release.set()
        assert dispatcher.drain(10)
        w.bind_async(stored(srv, "web-1"), "node-0")  # decided in the new term: sent
        assert dispatcher.drain(10)
    finally:
        dispatcher.close()
    assert [(r.uid, r.ok, r.conflict) for r in results] == [
        (stored(srv, "web-0").uid, False, False),
        (stored(srv, "web-1").uid, True, False),
    ]
    assert stored(srv, "web-0").node_name == ""
    assert srv.get("Pod", "default", "web-2") is not None  # the victim was not deleted
    assert condition(srv, "web-1", "PodScheduled")["status"] == "True"
    assert sorted(fenced) == ["binding", "event", "status", "status"]
    assert w.fenced == 4


def test_calls_left_at_close_are_abandoned_not_run() -> None:
    # They ran against the closed HTTP client: one traceback each at shutdown.
    ran: list[int] = []
    release = threading.Event()
    started = threading.Event()
    d = Dispatcher(workers=1, event_workers=1)

    def block() -> None:
        started.set()
        release.wait(10)

    d.submit("k", block)
    assert started.wait(10)
    for i in range(5):
        d.submit("k", lambda i=i: ran.append(i))
    closer = threading.Thread(target=d.close, args=(10.0,))
    closer.start()
    wait(lambda: d._closed, 10, "closing")
    release.set()
    closer.join(15)
    assert ran == [] and d.abandoned == 5


def test_leadership_is_checked_again_right_before_the_request_is_written(
    srv: ApiServerDouble,
) -> None:
    # Checked only when the job started, a binding still went out if the replica stopped
    # leading (a pause, a lapsed renewal) while the job waited for a connection.
    from wasmsched.live.client import FencedError

    srv.create(node("node-0"))
    srv.create(pod("web-0"))
    api = api_for(srv)
    path = "/api/v1/namespaces/default/pods/web-0/binding"
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web-0"},
        "target": {"kind": "Node", "name": "node-0"},
    }
    with pytest.raises(FencedError):
        api.request("POST", path, body=body, guard=lambda: False)
    assert srv.bindings == []
    checks = iter([True, False])  # leading when the job starts, not when it is written
    results: list[BindResult] = []
    fenced: list[str] = []
    dispatcher = Dispatcher(workers=1)
    w = LiveWriter(
        api,
        dispatcher,
        {}.get,
        may_write=lambda: next(checks, False),
        bind_results=results.append,
        on_fenced=fenced.append,
    )
    try:
        assert w.bind_async is not None
        w.bind_async(stored(srv, "web-0"), "node-0")
        assert dispatcher.drain(10)
    finally:
        dispatcher.close()
    assert srv.bindings == []
    assert [(r.ok, r.conflict, r.fenced) for r in results] == [(False, False, True)]
    assert fenced == ["binding"]
    api.request("POST", path, body=body, guard=lambda: True)
    assert [b["code"] for b in srv.bindings] == [201]
