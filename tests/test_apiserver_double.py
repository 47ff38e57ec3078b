"""Tests of the kube-apiserver double, driven through lightkube's real client over HTTP."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.models.core_v1 import Container, ObjectReference, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Event, Node, Pod, PodBinding, PodStatus
from lightkube.types import OnErrorAction, OnErrorResult, PatchType

from apiserver import ApiServerDouble, StatusError
from apiserver.patch import json_patch, merge_patch, strategic_merge
from apiserver.selectors import SelectorError, parse_labels

TOKEN = "double-token"


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    server = ApiServerDouble(token=TOKEN, bookmark_interval=0.2)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def client(srv: ApiServerDouble, tmp_path: Path) -> Iterator[Client]:
    # trust_env=False: proxy variables must not reroute 127.0.0.1.
    c = Client(KubeConfig.from_file(srv.kubeconfig(tmp_path / "kubeconfig")), trust_env=False)
    yield c
    c.close()


@pytest.fixture
def http(srv: ApiServerDouble) -> Iterator[httpx2.Client]:
    with httpx2.Client(
        base_url=srv.url, headers={"Authorization": f"Bearer {TOKEN}"}, trust_env=False, timeout=5
    ) as c:
        yield c


def pod(name: str, ns: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def bind(client: Client, name: str, node_name: str, uid: str | None = None) -> httpx2.Response:
    """POST pods/{name}/binding through lightkube's request path.

    lightkube's `create(PodBinding)` decodes the answer as a Binding, but the real server (and so
    the double) answers a Status; send it with response_type None and read the raw response.
    """
    g = client._client
    binding = PodBinding(
        metadata=ObjectMeta(name=name, namespace="default", uid=uid),
        target=ObjectReference(kind="Node", name=node_name),
    )
    br = g.prepare_request("post", obj=binding, name=name, namespace="default")
    br.response_type = None
    resp = g.send(g.build_adapter_request(br))
    g.handle_response("post", resp, br)
    return resp


def stream_lines(http: httpx2.Client, url: str, limit: int = 50) -> list[dict[str, Any]]:
    with http.stream("GET", url) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"] == "application/json"
        out = []
        for line in resp.iter_lines():
            out.append(json.loads(line))
            if len(out) >= limit:
                break
        return out


# ---------------------------------------------------------------- CRUD


def test_create_get_list_like_the_real_server(
    srv: ApiServerDouble, client: Client, http: httpx2.Client
) -> None:
    created = client.create(
        Pod(
            metadata=ObjectMeta(name="p1", labels={"app": "a"}),
            spec=PodSpec(containers=[Container(name="c", image="x")]),
        )
    )
    assert created.metadata.uid and created.metadata.creationTimestamp
    assert created.spec.schedulerName == "default-scheduler"
    assert created.spec.priority == 0
    assert created.status.phase == "Pending"
    assert client.get(Pod, "p1", namespace="default").metadata.resourceVersion == (
        created.metadata.resourceVersion
    )
    srv.create(pod("p2", ns="other"))
    assert sorted(p.metadata.name for p in client.list(Pod, namespace="*")) == ["p1", "p2"]
    assert [p.metadata.name for p in client.list(Pod, namespace="other")] == ["p2"]

    raw = http.get("/api/v1/namespaces/default/pods").json()
    assert raw["kind"] == "PodList" and raw["apiVersion"] == "v1"
    assert raw["metadata"]["resourceVersion"] == srv.resource_version
    assert "kind" not in raw["items"][0]  # list items carry no TypeMeta on the wire

    with pytest.raises(ApiError) as err:
        client.create(Pod(metadata=ObjectMeta(name="p1"), spec=PodSpec(containers=[])))
    assert (err.value.status.code, err.value.status.reason) == (409, "AlreadyExists")
    assert err.value.status.message == 'pods "p1" already exists'

    missing = http.get("/api/v1/namespaces/default/pods/nope")
    assert missing.status_code == 404
    assert missing.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "kind": "pods"},
        "code": 404,
    }
    assert http.post("/api/v1/namespaces/ghost/pods", json=pod("x", "ghost")).status_code == 404


def test_global_resource_version_and_defaults(srv: ApiServerDouble) -> None:
    n = srv.create(node("n1"))
    p = srv.create(pod("p1"))
    assert int(p["metadata"]["resourceVersion"]) == int(n["metadata"]["resourceVersion"]) + 1
    assert n["status"]["allocatable"] == n["status"]["capacity"]
    guaranteed = pod("g")
    guaranteed["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1", "memory": "1Gi"}}
    g = srv.create(guaranteed)
    assert g["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert g["status"]["qosClass"] == "Guaranteed"


def test_priority_admission(srv: ApiServerDouble, http: httpx2.Client) -> None:
    srv.create(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    )
    ok = http.post("/api/v1/namespaces/default/pods", json=pod("a", priorityClassName="high"))
    assert ok.status_code == 201
    assert ok.json()["spec"]["priority"] == 1000
    assert ok.json()["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    bad = http.post("/api/v1/namespaces/default/pods", json=pod("b", priorityClassName="nope"))
    assert (bad.status_code, bad.json()["reason"]) == (403, "Forbidden")


def test_list_chunking_is_a_consistent_snapshot(
    srv: ApiServerDouble, client: Client, http: httpx2.Client
) -> None:
    for i in range(5):
        srv.create(pod(f"p{i}"))
    assert [p.metadata.name for p in client.list(Pod, namespace="default", chunk_size=2)] == [
        f"p{i}" for i in range(5)
    ]
    pages = [(m, t) for m, t, _ in srv.requests if t.startswith("/api/v1/namespaces/default/pods")]
    assert len(pages) == 3 and all("limit=2" in t for _, t in pages)

    first = http.get("/api/v1/namespaces/default/pods", params={"limit": 2}).json()
    assert [i["metadata"]["name"] for i in first["items"]] == ["p0", "p1"]
    assert first["metadata"]["remainingItemCount"] == 3
    srv.create(pod("p25"))  # after the snapshot: must not show up in later pages
    srv.delete("Pod", "default", "p3")  # deleted after the snapshot: still listed
    rest = http.get(
        "/api/v1/namespaces/default/pods",
        params={"limit": 10, "continue": first["metadata"]["continue"]},
    ).json()
    assert [i["metadata"]["name"] for i in rest["items"]] == ["p2", "p3", "p4"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in rest["metadata"]

    srv.faults.expire_resource_versions()
    gone = http.get(
        "/api/v1/namespaces/default/pods",
        params={"limit": 2, "continue": first["metadata"]["continue"]},
    )
    assert (gone.status_code, gone.json()["reason"]) == (410, "Expired")
    assert gone.json()["metadata"]["continue"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("spec.nodeName=", ["pending", "waiting"]),
        ("spec.nodeName!=", ["bound"]),
        ("spec.nodeName=n1", ["bound"]),
        ("spec.schedulerName=other-scheduler", ["waiting"]),
        ("metadata.name=pending", ["pending"]),
        ("status.phase!=Running", ["pending", "waiting"]),
        ("spec.nodeName=,spec.schedulerName=default-scheduler", ["pending"]),
    ],
)
def test_field_selectors(
    srv: ApiServerDouble, http: httpx2.Client, selector: str, expected: list[str]
) -> None:
    srv.create(pod("pending"))
    srv.create(pod("waiting", schedulerName="other-scheduler"))
    bound = pod("bound", nodeName="n1")
    bound["status"] = {"phase": "Running"}
    srv.create(bound)
    body = http.get("/api/v1/pods", params={"fieldSelector": selector}).json()
    assert [i["metadata"]["name"] for i in body["items"]] == expected


def test_selector_errors_are_bad_requests(http: httpx2.Client) -> None:
    r = http.get("/api/v1/pods", params={"fieldSelector": "spec.bogus=x"})
    assert (r.status_code, r.json()["message"]) == (400, "field label not supported: spec.bogus")
    assert http.get("/api/v1/pods", params={"labelSelector": "a in (x"}).status_code == 400


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "db"}, False),
        ("app!=web", {}, True),
        ("app in (web, db)", {"app": "db"}, True),
        ("app notin (web)", {}, True),
        ("app", {"app": ""}, True),
        ("!app", {"app": "x"}, False),
        ("tier,app=web", {"app": "web"}, False),
        ("gen>3", {"gen": "4"}, True),
        ("gen<3", {"gen": "x"}, False),
    ],
)
def test_label_selector_semantics(selector: str, labels: dict[str, str], matches: bool) -> None:
    matcher = parse_labels(selector)
    assert matcher is not None
    assert matcher({"metadata": {"labels": labels}}) is matches


def test_label_selector_syntax_error() -> None:
    with pytest.raises(SelectorError):
        parse_labels("app in web")


# ---------------------------------------------------------------- watch


def test_watch_replays_history_after_rv(srv: ApiServerDouble, client: Client) -> None:
    srv.create(pod("p1"))
    rv = srv.resource_version
    srv.create(pod("p2"))
    changed = srv.get("Pod", "default", "p1")
    assert changed is not None
    changed["metadata"]["labels"]["x"] = "y"
    srv.update(changed)
    srv.delete("Pod", "default", "p2")
    srv.create(node("n1"))  # another kind: shares the RV counter, not the stream
    seen = []
    for kind, obj in client.watch(Pod, namespace="default", resource_version=rv, server_timeout=5):
        seen.append((kind, obj.metadata.name, int(obj.metadata.resourceVersion)))
        if len(seen) == 3:
            break
    assert [s[:2] for s in seen] == [("ADDED", "p2"), ("MODIFIED", "p1"), ("DELETED", "p2")]
    assert [s[2] for s in seen] == sorted(s[2] for s in seen)


def test_watch_without_rv_starts_with_the_current_state(
    srv: ApiServerDouble, http: httpx2.Client
) -> None:
    srv.create(pod("a"))
    srv.create(pod("b"))
    events = stream_lines(
        http, "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=5", limit=2
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
    ]
    assert events[0]["object"]["kind"] == "Pod"  # watch objects do carry TypeMeta


def test_watch_bookmarks(srv: ApiServerDouble, http: httpx2.Client) -> None:
    rv = srv.resource_version
    url = f"/api/v1/pods?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=5"
    events = stream_lines(http, url, limit=2)
    assert [e["type"] for e in events] == ["BOOKMARK", "BOOKMARK"]
    assert events[0]["object"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": rv, "creationTimestamp": None},
    }


def test_watch_list_ends_initial_events_with_annotated_bookmark(
    srv: ApiServerDouble, http: httpx2.Client
) -> None:
    srv.create(pod("a"))
    url = (
        "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        "&allowWatchBookmarks=true&timeoutSeconds=5"
    )
    events = stream_lines(http, url, limit=2)
    assert events[0]["type"] == "ADDED"
    assert events[1]["type"] == "BOOKMARK"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_watch_from_compacted_rv_gets_410_error_event(
    srv: ApiServerDouble, client: Client, http: httpx2.Client
) -> None:
    srv.create(pod("a"))
    old = int(srv.resource_version)
    srv.create(pod("b"))
    compacted = srv.faults.expire_resource_versions()
    events = stream_lines(http, f"/api/v1/pods?watch=true&resourceVersion={old}")
    assert events == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"too old resource version: {old} ({compacted})",
                "reason": "Expired",
                "code": 410,
            },
        }
    ]
    with pytest.raises(ApiError) as err:
        next(iter(client.watch(Pod, resource_version=str(old))))
    assert (err.value.status.code, err.value.status.reason) == (410, "Expired")
    # From the compaction point itself the watch is fine.
    srv.create(pod("c"))
    kind, obj = next(iter(client.watch(Pod, resource_version=str(compacted), server_timeout=5)))
    assert (kind, obj.metadata.name) == ("ADDED", "c")


def test_dropped_watch_resumes_from_last_rv(
    srv: ApiServerDouble, client: Client, http: httpx2.Client
) -> None:
    rv = srv.resource_version
    for name in ("a", "b", "c"):
        srv.create(pod(name))
    srv.faults.drop_watch("Pod", after_events=2)
    got = []
    with (
        pytest.raises(httpx2.RemoteProtocolError),
        http.stream("GET", f"/api/v1/pods?watch=true&resourceVersion={rv}") as resp,
    ):
        for line in resp.iter_lines():
            got.append(json.loads(line)["object"]["metadata"]["name"])
    assert got == ["a", "b"]

    srv.faults.drop_watch("pods", after_events=1)
    retries: list[int] = []

    def retry(err: Exception, count: int) -> OnErrorResult:
        retries.append(count)
        return OnErrorResult(OnErrorAction.RETRY)

    names = []
    for _, obj in client.watch(Pod, resource_version=rv, on_error=retry, server_timeout=5):
        names.append(obj.metadata.name)
        if len(names) == 3:
            break
    assert names == ["a", "b", "c"]  # resumed after "a" without duplicates
    assert retries == [1]
    # lightkube defaults to the kubeconfig namespace; the retry resumes after the last RV seen.
    watches = [t for _, t, _ in srv.requests if t.startswith("/api/v1/namespaces/default/pods?")]
    assert len(watches) == 2
    assert f"resourceVersion={int(rv) + 1}" in watches[-1]


def test_timeout_seconds_ends_the_stream_cleanly(srv: ApiServerDouble, http: httpx2.Client) -> None:
    start = time.monotonic()
    rv = srv.resource_version
    events = stream_lines(http, f"/api/v1/pods?watch=true&resourceVersion={rv}&timeoutSeconds=1")
    elapsed = time.monotonic() - start
    assert events == []
    assert 0.9 <= elapsed < 3


def test_lightkube_rewatches_after_server_timeout(srv: ApiServerDouble, client: Client) -> None:
    rv = srv.resource_version

    def late_create() -> None:
        time.sleep(1.3)
        srv.create(pod("late"))

    t = threading.Thread(target=late_create)
    t.start()
    kind, obj = next(iter(client.watch(Pod, resource_version=rv, server_timeout=1)))
    t.join()
    assert (kind, obj.metadata.name) == ("ADDED", "late")
    watches = [t for _, t, _ in srv.requests if "watch=true" in t]
    assert len(watches) == 2


def test_selector_watch_sees_pods_leave_as_deleted(
    srv: ApiServerDouble, client: Client, http: httpx2.Client
) -> None:
    srv.create(node("n1"))
    p = srv.create(pod("p"))
    rv = srv.resource_version
    bind(client, "p", "n1", uid=p["metadata"]["uid"])
    url = f"/api/v1/pods?watch=true&resourceVersion={rv}&fieldSelector=spec.nodeName%3D"
    events = stream_lines(http, url, limit=1)
    assert events[0]["type"] == "DELETED"
    assert events[0]["object"]["metadata"]["name"] == "p"
    assert int(events[0]["object"]["metadata"]["resourceVersion"]) == int(rv) + 1


# ---------------------------------------------------------------- binding and status


def test_binding_201_then_409(srv: ApiServerDouble, client: Client) -> None:
    srv.create(node("n1"))
    p = srv.create(pod("p"))
    resp = bind(client, "p", "n1", uid=p["metadata"]["uid"])
    assert resp.status_code == 201
    assert resp.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    bound = client.get(Pod, "p", namespace="default")
    assert bound.spec.nodeName == "n1"
    assert int(bound.metadata.resourceVersion) > int(p["metadata"]["resourceVersion"])
    scheduled = [c for c in bound.status.conditions if c.type == "PodScheduled"]
    assert [(c.status, c.lastTransitionTime is not None) for c in scheduled] == [("True", True)]

    with pytest.raises(ApiError) as err:
        bind(client, "p", "n2")
    status = err.value.status
    assert (status.code, status.reason) == (409, "Conflict")
    assert status.message == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'
    )
    with pytest.raises(ApiError) as err:
        bind(client, "ghost", "n1")
    assert err.value.status.code == 404
    srv.create(pod("q"))
    with pytest.raises(ApiError) as err:
        bind(client, "q", "n1", uid="not-the-uid")  # a recreated pod must not be bound
    assert err.value.status.code == 409
    assert [(b["name"], b["node"], b["code"]) for b in srv.bindings] == [
        ("p", "n1", 201),
        ("p", "n2", 409),
        ("ghost", "n1", 404),
        ("q", "n1", 409),
    ]


@pytest.mark.parametrize("patch_type", [PatchType.STRATEGIC, PatchType.MERGE, PatchType.APPLY])
def test_status_patch_sets_condition(
    srv: ApiServerDouble, client: Client, http: httpx2.Client, patch_type: PatchType
) -> None:
    srv.create(pod("p"))
    rv = srv.resource_version
    condition = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/1 nodes are available",
    }
    body: dict[str, Any] = {"status": {"conditions": [condition], "nominatedNodeName": "n1"}}
    if patch_type is PatchType.APPLY:
        body |= {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
        }
    out = client.patch(
        PodStatus, "p", body, namespace="default", patch_type=patch_type, field_manager="wasmsched"
    )
    assert out.status.nominatedNodeName == "n1"
    assert [(c.type, c.status, c.reason) for c in out.status.conditions] == [
        ("PodScheduled", "False", "Unschedulable")
    ]
    assert out.status.phase == "Pending"  # merged, not replaced
    events = stream_lines(http, f"/api/v1/pods?watch=true&resourceVersion={rv}", limit=1)
    assert events[0]["type"] == "MODIFIED"
    # A status patch cannot touch spec, and the same patch again is a no-op without a new RV.
    again = client.patch(
        PodStatus, "p", body, namespace="default", patch_type=patch_type, field_manager="wasmsched"
    )
    assert again.metadata.resourceVersion == out.metadata.resourceVersion


def test_main_resource_put_keeps_status(srv: ApiServerDouble, client: Client) -> None:
    srv.create(pod("p"))
    current = client.get(Pod, "p", namespace="default")
    current.status.phase = "Running"
    current.metadata.labels = {"new": "label"}
    out = client.replace(current)
    assert out.metadata.labels == {"new": "label"}
    assert out.status.phase == "Pending"


# ---------------------------------------------------------------- leases and events


def test_lease_optimistic_concurrency(
    srv: ApiServerDouble, client: Client, http: httpx2.Client
) -> None:
    lease = client.create(
        Lease.from_dict(
            {
                "metadata": {"name": "wasmsched", "namespace": "kube-system"},
                "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
            }
        )
    )
    stale_rv = lease.metadata.resourceVersion
    lease.spec.holderIdentity = "b"
    renewed = client.replace(lease)
    assert renewed.spec.holderIdentity == "b"
    assert renewed.metadata.resourceVersion != stale_rv

    lease.spec.holderIdentity = "c"
    lease.metadata.resourceVersion = stale_rv
    with pytest.raises(ApiError) as err:
        client.replace(lease)
    assert (err.value.status.code, err.value.status.reason) == (409, "Conflict")
    assert err.value.status.message == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "wasmsched": the object has '
        "been modified; please apply your changes to the latest version and try again"
    )
    no_rv = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "wasmsched", "namespace": "kube-system"},
        "spec": {"holderIdentity": "d"},
    }
    url = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/wasmsched"
    assert http.put(url, json=no_rv).status_code == 422
    created = http.put(
        url.replace("wasmsched", "fresh"), json={**no_rv, "metadata": {"name": "fresh"}}
    )
    assert created.status_code == 201  # leases allow create-on-update
    assert srv.get("Lease", "kube-system", "wasmsched")["spec"]["holderIdentity"] == "b"


def test_events_of_both_apis_are_recorded(
    srv: ApiServerDouble, client: Client, http: httpx2.Client
) -> None:
    client.create(
        Event.from_dict(
            {
                "metadata": {"name": "p.1", "namespace": "default"},
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
                "reason": "Scheduled",
                "message": "Successfully assigned default/p to n1",
                "type": "Normal",
            }
        )
    )
    r = http.post(
        "/apis/events.k8s.io/v1/namespaces/default/events",
        json={
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "p.2"},
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "FailedScheduling",
            "action": "Scheduling",
            "reportingController": "wasmsched",
            "reportingInstance": "wasmsched-1",
            "type": "Warning",
        },
    )
    assert r.status_code == 201
    assert [(e["apiVersion"], e["reason"]) for e in srv.events] == [
        ("v1", "Scheduled"),
        ("events.k8s.io/v1", "FailedScheduling"),
    ]
    only = http.get("/api/v1/events", params={"fieldSelector": "reason=Scheduled"}).json()
    assert [i["metadata"]["name"] for i in only["items"]] == ["p.1"]


# ---------------------------------------------------------------- deletion


def test_graceful_pod_deletion(tmp_path: Path) -> None:
    with ApiServerDouble(pod_deletion="graceful", kubelet_delay=0.2) as srv:
        srv.create(pod("bound", nodeName="n1"))
        srv.create(pod("pending"))
        with httpx2.Client(base_url=srv.url, trust_env=False) as http:
            r = http.delete("/api/v1/namespaces/default/pods/bound")
            assert r.status_code == 202
            assert r.json()["metadata"]["deletionTimestamp"]
            assert r.json()["metadata"]["deletionGracePeriodSeconds"] == 30
            assert srv.get("Pod", "default", "bound") is not None
            assert srv.wait_for(lambda: srv.get("Pod", "default", "bound") is None, timeout=3)
            r = http.delete("/api/v1/namespaces/default/pods/pending")
            assert r.status_code == 200  # never scheduled: no grace period
            assert srv.get("Pod", "default", "pending") is None


def test_immediate_delete_and_status_answer(srv: ApiServerDouble, http: httpx2.Client) -> None:
    srv.create(pod("p"))
    srv.create(node("n1"))
    r = http.delete("/api/v1/namespaces/default/pods/p")
    assert (r.status_code, r.json()["kind"]) == (200, "Pod")
    r = http.delete("/api/v1/nodes/n1")
    assert r.json()["status"] == "Success"
    assert r.json()["details"]["name"] == "n1"
    assert http.delete("/api/v1/nodes/n1").status_code == 404


# ---------------------------------------------------------------- faults, auth, shutdown


def test_fault_injection_500_and_429(srv: ApiServerDouble, client: Client) -> None:
    srv.create(node("n1"))
    srv.faults.fail_next("GET", r"^/api/v1/nodes$")
    with pytest.raises(ApiError) as err:
        list(client.list(Node))
    assert (err.value.status.code, err.value.status.reason) == (500, "InternalError")
    assert [n.metadata.name for n in client.list(Node)] == ["n1"]  # only the next one fails
    srv.faults.fail_next("*", "/nodes/n1", status=429, retry_after=2)
    with pytest.raises(ApiError) as err:
        client.get(Node, "n1")
    assert err.value.response.headers["Retry-After"] == "2"
    assert srv.requests[-1] == ("GET", "/api/v1/nodes/n1", 429)


def test_fault_delay(srv: ApiServerDouble, client: Client) -> None:
    srv.create(node("n1"))
    # A delay far above a loaded machine's own latency, so that the two reads differ by it.
    srv.faults.delay("/nodes", 1.5)
    start = time.monotonic()
    client.get(Node, "n1")
    assert time.monotonic() - start >= 1.5
    srv.faults.clear()
    start = time.monotonic()
    client.get(Node, "n1")
    assert time.monotonic() - start < 1.0


def test_wrong_token_is_unauthorized(srv: ApiServerDouble) -> None:
    with httpx2.Client(base_url=srv.url, trust_env=False) as http:
        r = http.get("/api/v1/nodes", headers={"Authorization": "Bearer wrong"})
    assert (r.status_code, r.json()["reason"]) == (401, "Unauthorized")


def test_stop_ends_open_watches_and_threads() -> None:
    srv = ApiServerDouble()
    srv.start()
    before = set(threading.enumerate())
    outcome: list[str] = []

    def watch() -> None:
        try:
            with (
                httpx2.Client(base_url=srv.url, trust_env=False, timeout=10) as http,
                http.stream("GET", "/api/v1/pods?watch=true") as resp,
            ):
                for _ in resp.iter_lines():
                    pass
            outcome.append("ended")
        except httpx2.HTTPError as err:
            outcome.append(type(err).__name__)

    t = threading.Thread(target=watch)
    t.start()
    assert srv.wait_for(lambda: any("watch" in r[1] for r in srv.requests), timeout=3)
    start = time.monotonic()
    srv.stop()
    t.join(timeout=3)
    assert not t.is_alive() and outcome
    assert time.monotonic() - start < 2
    leftover = [th for th in set(threading.enumerate()) - before if th.is_alive()]
    assert leftover == []
    assert not [th for th in threading.enumerate() if th.name == "apiserver-double"]


def test_python_side_errors() -> None:
    srv = ApiServerDouble(bootstrap=False)
    with pytest.raises(StatusError) as err:
        srv.update(node("ghost"))
    assert err.value.code == 404
    assert srv.delete("Node", None, "ghost") is None
    srv.create(pod("p", ns="made-up"))
    assert srv.get("Namespace", None, "made-up") is not None  # created on demand


# ---------------------------------------------------------------- patch formats


@pytest.mark.parametrize(
    ("orig", "patch", "expected"),
    [
        (
            {
                "status": {
                    "conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "True"}]
                }
            },
            {"status": {"conditions": [{"type": "B", "status": "False"}]}},
            {
                "status": {
                    "conditions": [
                        {"type": "A", "status": "True"},
                        {"type": "B", "status": "False"},
                    ]
                }
            },
        ),
        (
            {"status": {"conditions": [{"type": "A"}, {"type": "B"}]}},
            {"status": {"conditions": [{"type": "A", "$patch": "delete"}]}},
            {"status": {"conditions": [{"type": "B"}]}},
        ),
        (
            {"metadata": {"finalizers": ["a"], "labels": {"x": "1", "y": "2"}}},
            {"metadata": {"finalizers": ["b"], "labels": {"x": None}}},
            {"metadata": {"finalizers": ["a", "b"], "labels": {"y": "2"}}},
        ),
        (
            {"spec": {"tolerations": [{"key": "a"}]}},
            {"spec": {"tolerations": [{"key": "b"}]}},
            {"spec": {"tolerations": [{"key": "b"}]}},
        ),
        (
            {"status": {"conditions": [{"type": "A"}, {"type": "B"}]}},
            {
                "status": {
                    "$setElementOrder/conditions": [{"type": "B"}, {"type": "A"}],
                    "conditions": [{"type": "A", "status": "x"}],
                }
            },
            {"status": {"conditions": [{"type": "B"}, {"type": "A", "status": "x"}]}},
        ),
    ],
)
def test_strategic_merge(
    orig: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert strategic_merge(orig, patch) == expected


def test_merge_and_json_patch() -> None:
    assert merge_patch({"a": {"b": 1, "c": 2}, "l": [1]}, {"a": {"b": None}, "l": [2]}) == {
        "a": {"c": 2},
        "l": [2],
    }
    doc = {"spec": {"list": [1, 2]}, "x": 1}
    ops = [
        {"op": "add", "path": "/spec/list/-", "value": 3},
        {"op": "replace", "path": "/x", "value": 2},
        {"op": "remove", "path": "/spec/list/0"},
        {"op": "test", "path": "/x", "value": 2},
        {"op": "copy", "from": "/x", "path": "/y"},
    ]
    assert json_patch(doc, ops) == {"spec": {"list": [2, 3]}, "x": 2, "y": 2}
    assert doc == {"spec": {"list": [1, 2]}, "x": 1}


def test_json_patch_over_http(srv: ApiServerDouble, http: httpx2.Client) -> None:
    srv.create(node("n1"))
    ops = [{"op": "add", "path": "/spec", "value": {"unschedulable": True}}]
    r = http.patch(
        "/api/v1/nodes/n1",
        content=json.dumps(ops),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert r.status_code == 200 and r.json()["spec"] == {"unschedulable": True}
    failing = [{"op": "test", "path": "/spec/unschedulable", "value": False}]
    r = http.patch(
        "/api/v1/nodes/n1",
        content=json.dumps(failing),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert (r.status_code, r.json()["reason"]) == (422, "Invalid")
    r = http.patch("/api/v1/nodes/n1", content="{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_answers_are_not_held_back_by_delayed_acks(
    srv: ApiServerDouble, http: httpx2.Client, method: str
) -> None:
    # Headers and body written separately without TCP_NODELAY: every answer on a kept-alive
    # connection waited for the client's delayed ACK (~40 ms each, measured 44 ms p50).
    srv.create(node("n1"))
    times = []
    for i in range(40):
        start = time.perf_counter()
        if method == "GET":
            resp = http.get("/api/v1/nodes/n1")
        else:
            resp = http.post("/api/v1/namespaces/default/pods", json=pod(f"p{i}"))
        times.append(time.perf_counter() - start)
        assert resp.status_code in (200, 201)
    times.sort()
    assert times[len(times) // 2] < 0.025, f"median {times[len(times) // 2] * 1e3:.1f} ms"
