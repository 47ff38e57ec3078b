"""The live mode allocates ResourceClaims on the API server (the double): DynamicResources'
PreBind writes the finalizer, the allocation and the reservation before the binding, retries
on conflicts, and Unreserve takes the pod out again when the binding fails."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from apiserver import ApiServerDouble
from live_support import (
    api_for,
    claiming_pod,
    device_class,
    dra_config,
    node,
    placements,
    pod,
    resource_claim,
    resource_slice,
    running,
    wait,
)
from wasmsched.api.dra import (
    ALLOCATION_FINALIZER,
    created_extended_resource_claim,
    extended_resource_claim,
)
from wasmsched.api.objects import Pod
from wasmsched.live.claims import ClaimCache, ClaimWritten, claim_change
from wasmsched.live.dispatcher import Dispatcher
from wasmsched.live.writer import LiveWriter

CLAIM_STATUS = r"/resourceclaims/[^/]+/status$"


@pytest.fixture
def srv() -> Iterator[ApiServerDouble]:
    server = ApiServerDouble()
    server.start()
    yield server
    server.stop()


def gpu_cluster(srv: ApiServerDouble) -> None:
    """node-0 without devices, node-1 with one GPU in its ResourceSlice."""
    srv.create(node("node-0"))
    srv.create(node("node-1"))
    srv.create(device_class())
    srv.create(resource_slice("node-1"))


def claim(srv: ApiServerDouble, name: str) -> dict[str, Any]:
    got = srv.get("ResourceClaim", "default", name)
    assert got is not None
    return got


def assert_allocated_for(srv: ApiServerDouble, name: str, pod_name: str) -> None:
    """The claim holds node-1's GPU for the pod, behind the finalizer."""
    c = claim(srv, name)
    (result,) = c["status"]["allocation"]["devices"]["results"]
    assert (result["driver"], result["pool"], result["device"]) == (
        "gpu.example.com",
        "node-1",
        "gpu-0",
    )
    assert result["request"] == "gpu"
    pod = srv.get("Pod", "default", pod_name)
    assert pod is not None
    assert c["status"]["reservedFor"] == [
        {"resource": "pods", "name": pod_name, "uid": pod["metadata"]["uid"]}
    ]
    assert ALLOCATION_FINALIZER in c["metadata"]["finalizers"]


def test_allocates_the_claim_then_binds_and_a_second_claim_waits(srv: ApiServerDouble) -> None:
    gpu_cluster(srv)
    srv.create(resource_claim("claim-a"))
    srv.create(resource_claim("claim-b"))
    srv.create(claiming_pod("train-a", claim="claim-a"))
    with running(srv, dra_config()):
        wait(lambda: placements(srv).get("train-a") == "node-1", what="train-a bound")
        assert_allocated_for(srv, "claim-a", "train-a")
        srv.create(claiming_pod("train-b", claim="claim-b"))
        wait(lambda: scheduled_condition(srv, "train-b") is not None, what="train-b's condition")
    assert "train-b" not in placements(srv)
    assert "allocation" not in claim(srv, "claim-b").get("status", {})
    cond = scheduled_condition(srv, "train-b")
    assert cond is not None
    assert cond["reason"] == "Unschedulable"
    assert cond["message"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    # The claim is written before the binding: its status update precedes the POST.
    order = [(m, t.split("?")[0]) for m, t, _ in srv.requests if m in ("PUT", "POST")]
    claim_write = order.index(
        ("PUT", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/claim-a/status")
    )
    binding = order.index(("POST", "/api/v1/namespaces/default/pods/train-a/binding"))
    assert claim_write < binding


def scheduled_condition(srv: ApiServerDouble, name: str) -> dict[str, Any] | None:
    pod = srv.get("Pod", "default", name) or {}
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "PodScheduled":
            return dict(c)
    return None


def schedule_train_a(srv: ApiServerDouble, method: str, path: str, code: int) -> None:
    """train-a with claim-a, scheduled while the first ``method`` on ``path`` fails with
    ``code``: bound to node-1 in the end, its claim allocated."""
    gpu_cluster(srv)
    srv.create(resource_claim("claim-a"))
    srv.create(claiming_pod("train-a", claim="claim-a"))
    srv.faults.fail_next(method, path, status=code)
    with running(srv, dra_config()):
        wait(lambda: placements(srv).get("train-a") == "node-1", 20, what="train-a bound")
    assert_allocated_for(srv, "claim-a", "train-a")


def test_a_conflicting_claim_write_is_retried_from_the_servers_version(
    srv: ApiServerDouble,
) -> None:
    schedule_train_a(srv, "PUT", CLAIM_STATUS, 409)
    gets = [t for m, t, _ in srv.requests if m == "GET" and "/resourceclaims/claim-a" in t]
    assert gets, "the claim was not read again after the conflict"


def test_a_failed_claim_write_fails_the_binding_and_the_pod_is_retried(
    srv: ApiServerDouble,
) -> None:
    schedule_train_a(srv, "PUT", CLAIM_STATUS, 500)
    # No binding was posted for the attempt whose claim write failed.
    assert [b["code"] for b in srv.bindings] == [201]


def test_a_failed_binding_takes_the_pod_out_of_reserved_for(srv: ApiServerDouble) -> None:
    schedule_train_a(srv, "POST", r"/pods/train-a/binding$", 500)
    patches = [t for m, t, _ in srv.requests if m == "PATCH" and "resourceclaims" in t]
    assert patches == ["/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/claim-a/status"]


def test_claim_writes_leave_the_scheduling_thread(srv: ApiServerDouble) -> None:
    gpu_cluster(srv)
    srv.create(resource_claim("claim-a"))
    # train-a first (priority), then web-0, which has no claim.
    srv.create(claiming_pod("train-a", claim="claim-a", priority=100))
    srv.create(pod("web-0"))
    # Long enough that web-0 is bound within it on a loaded machine too.
    srv.faults.delay(CLAIM_STATUS, 5.0, method="PUT", count=1)
    with running(srv, dra_config()):
        wait(lambda: "web-0" in placements(srv), what="web-0 bound")
        # web-0 was scheduled and bound while train-a's claim was being written.
        assert "allocation" not in claim(srv, "claim-a").get("status", {})
        assert "train-a" not in placements(srv)
        wait(lambda: placements(srv).get("train-a") == "node-1", 20, what="train-a bound")
    assert_allocated_for(srv, "claim-a", "train-a")


def test_pods_sharing_a_claim_write_it_in_turn(srv: ApiServerDouble) -> None:
    gpu_cluster(srv)
    srv.create(resource_claim("shared"))
    srv.create(claiming_pod("train-a", claim="shared", priority=100))
    srv.create(claiming_pod("train-b", claim="shared"))
    # train-b's reservation is decided while train-a's allocation is on its way.
    srv.faults.delay(CLAIM_STATUS, 1.0, method="PUT", count=1)
    with running(srv, dra_config()):
        wait(lambda: len(placements(srv)) == 2, what="both pods bound")
    assert placements(srv) == {"train-a": "node-1", "train-b": "node-1"}
    c = claim(srv, "shared")
    assert [r["name"] for r in c["status"]["reservedFor"]] == ["train-a", "train-b"]
    assert [b["code"] for b in srv.bindings] == [201, 201]
    puts = [t for m, t, _ in srv.requests if m == "PUT" and t.startswith("/apis/resource")]
    assert len(puts) == 3  # the finalizer, train-a's status, train-b's status: no conflict


def versioned(rv: str, **status: Any) -> dict[str, Any]:
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default", "resourceVersion": rv},
        "status": status,
    }


def test_claim_cache_shows_a_claim_being_written_until_the_write_ended() -> None:
    seen: list[tuple[str, str, bool]] = []

    def record(what: str, c: dict[str, Any]) -> None:
        seen.append((what, c["metadata"]["resourceVersion"], "allocation" in c["status"]))

    cache = ClaimCache(
        lambda c: record("add", c),
        lambda o, n: record("update", n),
        lambda c: record("delete", c),
    )
    cache.informed(None, versioned("5"))
    cache.begin(versioned("5", allocation={}))  # PreBind's version, on its way
    cache.informed(versioned("5"), versioned("7"))  # someone else's change meanwhile
    cache.end("default/c", versioned("9", allocation={}))  # the server's answer
    cache.informed(versioned("7"), versioned("9", allocation={}))  # the watch catches up
    cache.begin(versioned("9"))  # a deallocation that will fail
    cache.end("default/c", None)
    cache.informed(versioned("9"), versioned("12"))
    cache.informed(versioned("12"), None)
    assert seen == [
        ("add", "5", False),
        ("update", "5", True),
        ("update", "9", True),
        ("update", "9", False),
        ("update", "9", True),  # the failed write: the server's version again
        ("update", "12", False),
        ("delete", "12", False),
    ]


def test_claim_change_reads_what_the_plugin_decided() -> None:
    pod_a = {"resource": "pods", "name": "a", "uid": "ua"}
    pod_b = {"resource": "pods", "name": "b", "uid": "ub"}
    base = versioned("3")
    allocated = versioned("3", allocation={"devices": {}}, reservedFor=[pod_a])
    change = claim_change(base, allocated)
    assert change.allocation == {"devices": {}}
    assert change.reserve == (pod_a,)
    assert not change.deallocate and not change.unreserve
    # A second pod sharing the claim: only its reservation.
    shared = versioned("4", allocation={"devices": {}}, reservedFor=[pod_a, pod_b])
    change = claim_change(versioned("4", allocation={"devices": {}}, reservedFor=[pod_a]), shared)
    assert change.allocation is None and change.reserve == (pod_b,)
    # Unreserve and PostFilter's deallocation.
    assert claim_change(shared, versioned("4", allocation={}, reservedFor=[pod_b])).unreserve == {
        "ua"
    }
    assert claim_change(allocated, versioned("3")).deallocate


def test_a_synchronous_binding_waits_for_the_pods_claim_writes(srv: ApiServerDouble) -> None:
    # A Bind plugin other than DefaultBinder binds through LiveWriter.bind, on the
    # scheduling thread: the pod's claim writes, on another worker, come first.
    gpu_cluster(srv)
    created = srv.create(resource_claim("claim-a"))
    srv.create(claiming_pod("train-a", claim="claim-a"))
    train = Pod(srv.get("Pod", "default", "train-a") or {})
    results: list[ClaimWritten] = []
    cache = ClaimCache(lambda c: None, lambda o, n: None, lambda c: None)
    cache.informed(None, created)
    dispatcher = Dispatcher(4)
    writer = LiveWriter(
        api_for(srv),
        dispatcher,
        lambda uid: None,
        claims=cache,
        claim_results=results.append,
    )
    srv.faults.delay(CLAIM_STATUS, 0.5, method="PUT", count=1)
    try:
        reserved = {"resource": "pods", "name": "train-a", "uid": train.uid}
        desired = {**created, "status": {"allocation": {"devices": {}}, "reservedFor": [reserved]}}
        assert writer.write_resource_claim(desired) is None
        assert writer.bind(train, "node-1") is None
    finally:
        dispatcher.close()
    order = [t for m, t, _ in srv.requests if m in ("PUT", "POST")]
    assert order[-2:] == [
        "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/claim-a/status",
        "/api/v1/namespaces/default/pods/train-a/binding",
    ]
    assert [r.answer is not None for r in results] == [True]


EXTENDED = "example.com/gpu"


def extended_cluster(srv: ApiServerDouble) -> None:
    """gpu_cluster with the GPU class backing the extended resource example.com/gpu,
    which no node advertises."""
    srv.create(node("node-0"))
    srv.create(node("node-1"))
    gpus = device_class()
    gpus["spec"]["extendedResourceName"] = EXTENDED
    srv.create(gpus)
    srv.create(resource_slice("node-1"))


def extended_pod(name: str) -> dict[str, Any]:
    """A pod asking for one example.com/gpu (no claim of its own)."""
    out = pod(name)
    resources = out["spec"]["containers"][0]["resources"]
    resources["requests"][EXTENDED] = "1"
    resources["limits"] = {EXTENDED: "1"}
    return out


def special_claims(srv: ApiServerDouble) -> list[dict[str, Any]]:
    return [c for c in srv.list("ResourceClaim") if c["metadata"].get("generateName")]


def assert_extended_claim_for(srv: ApiServerDouble, pod_name: str) -> dict[str, Any]:
    """The pod's one special claim, created by PreBind as kube-scheduler creates it and
    allocated for the pod, which names it in its status."""
    bound = srv.get("Pod", "default", pod_name)
    assert bound is not None and bound["spec"]["nodeName"] == "node-1"
    (made,) = special_claims(srv)
    meta = made["metadata"]
    assert meta["generateName"] == f"{pod_name}-extended-resources-"
    assert meta["name"].startswith(meta["generateName"])
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    (owner,) = meta["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Pod",
        pod_name,
        bound["metadata"]["uid"],
        True,
    )
    assert ALLOCATION_FINALIZER in meta["finalizers"]
    (result,) = made["status"]["allocation"]["devices"]["results"]
    # The request is named by the resource's place among the container's (cpu, gpu, memory).
    assert (result["request"], result["pool"], result["device"]) == (
        "container-0-request-1",
        "node-1",
        "gpu-0",
    )
    assert made["status"]["reservedFor"] == [
        {"resource": "pods", "name": pod_name, "uid": bound["metadata"]["uid"]}
    ]
    assert bound["status"]["extendedResourceClaimStatus"] == {
        "resourceClaimName": meta["name"],
        "requestMappings": [
            {"containerName": "c", "resourceName": EXTENDED, "requestName": "container-0-request-1"}
        ],
    }
    return made


def test_prebind_creates_the_claim_for_extended_resources(srv: ApiServerDouble) -> None:
    extended_cluster(srv)
    srv.create(extended_pod("train-x"))
    with running(srv, dra_config()):
        wait(lambda: placements(srv).get("train-x") == "node-1", what="train-x bound")
    made = assert_extended_claim_for(srv, "train-x")
    # Created with a name the server generated (not the one wasmsched's simulation
    # derives), then written, then the pod's status names it, then the binding.
    in_memory = extended_resource_claim(Pod(srv.get("Pod", "default", "train-x") or {}))
    assert (
        made["metadata"]["name"] != created_extended_resource_claim(in_memory)["metadata"]["name"]
    )
    writes = [(m, t.split("?")[0]) for m, t, _ in srv.requests if m in ("PUT", "POST", "PATCH")]
    path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    name = made["metadata"]["name"]
    pod_status = ("PATCH", "/api/v1/namespaces/default/pods/train-x/status")
    writes.remove(pod_status)  # the first: nominatedNodeName, on the pod's own worker
    assert writes[:5] == [
        ("POST", path),
        ("PUT", f"{path}/{name}"),
        ("PUT", f"{path}/{name}/status"),
        pod_status,
        ("POST", "/api/v1/namespaces/default/pods/train-x/binding"),
    ]


def test_a_failed_binding_deletes_the_created_claim_and_the_retry_makes_another(
    srv: ApiServerDouble,
) -> None:
    extended_cluster(srv)
    srv.create(extended_pod("train-x"))
    srv.faults.fail_next("POST", r"/pods/train-x/binding$", status=500)
    with running(srv, dra_config()):
        wait(lambda: placements(srv).get("train-x") == "node-1", what="train-x bound")
        wait(lambda: len(special_claims(srv)) == 1, what="the first claim deleted")
    assert_extended_claim_for(srv, "train-x")
    posts = [t for m, t, _ in srv.requests if m == "POST" and t.endswith("/resourceclaims")]
    deletes = [t for m, t, _ in srv.requests if m == "DELETE" and "/resourceclaims/" in t]
    assert (len(posts), len(deletes)) == (2, 1)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", r"/resourceclaims$"),
        ("PUT", CLAIM_STATUS),
        ("PATCH", r"/pods/train-x/status$"),
    ],
)
def test_a_failed_extended_claim_write_fails_the_binding(
    srv: ApiServerDouble, method: str, path: str
) -> None:
    extended_cluster(srv)
    # Nominated to node-1 already: the only status PATCH is extendedResourceClaimStatus's.
    srv.create({**extended_pod("train-x"), "status": {"nominatedNodeName": "node-1"}})
    srv.faults.fail_next(method, path, status=500)
    with running(srv, dra_config()) as runner:
        wait(lambda: placements(srv).get("train-x") == "node-1", what="train-x bound")
        wait(lambda: len(special_claims(srv)) == 1, what="a claim created and not deleted")
        creates = {
            status: runner.metrics.registry.get_sample_value(
                "dynamic_resource_allocation_resourceclaim_creates_total",
                {"status": status, "admin_access": "false", "owner_api_group": "",
                 "owner_api_kind": "Pod"},
            )
            for status in ("success", "failure")
        }  # fmt: skip
    assert_extended_claim_for(srv, "train-x")
    # The failed POST is counted as kube-scheduler counts it.
    failed = 1.0 if method == "POST" else None
    assert creates == {"success": 1.0 if failed else 2.0, "failure": failed}
    # No binding was posted for the attempt whose write failed.
    assert [b["code"] for b in srv.bindings] == [201]


def report_device(srv: ApiServerDouble, condition: str) -> None:
    """The driver: gpu-0's ``condition`` True in claim-a's status.devices."""
    c = claim(srv, "claim-a")
    c["status"]["devices"] = [
        {
            "driver": "gpu.example.com",
            "pool": "node-1",
            "device": "gpu-0",
            "conditions": [
                {
                    "type": condition,
                    "status": "True",
                    "reason": "Driver",
                    "message": "reported",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
    ]
    srv.update(c)


def binding_conditions_cluster(srv: ApiServerDouble) -> None:
    """gpu_cluster whose GPU has binding conditions; train-a with claim-a."""
    srv.create(node("node-0"))
    srv.create(node("node-1"))
    srv.create(device_class())
    gpus = resource_slice("node-1")
    gpus["spec"]["devices"][0]["bindingConditions"] = ["attached"]
    gpus["spec"]["devices"][0]["bindingFailureConditions"] = ["broken"]
    srv.create(gpus)
    srv.create(resource_claim("claim-a"))
    srv.create(claiming_pod("train-a", claim="claim-a"))


def allocated_not_bound(srv: ApiServerDouble) -> bool:
    reserved = claim(srv, "claim-a").get("status", {}).get("reservedFor")
    return bool(reserved) and "train-a" not in placements(srv)


def test_prebind_waits_for_the_devices_binding_conditions(srv: ApiServerDouble) -> None:
    binding_conditions_cluster(srv)
    with running(srv, dra_config()):
        wait(lambda: allocated_not_bound(srv), what="claim-a allocated, train-a waiting")
        time.sleep(1.0)
        assert "train-a" not in placements(srv)  # waiting for the driver
        report_device(srv, "attached")
        wait(lambda: placements(srv).get("train-a") == "node-1", 8.0, "train-a bound")
    allocation = claim(srv, "claim-a")["status"]["allocation"]
    assert allocation["devices"]["results"][0]["bindingConditions"] == ["attached"]
    reasons = [e.get("reason") for e in srv.events]
    assert "BindingConditionsPending" in reasons


def test_a_binding_failure_condition_fails_the_binding(srv: ApiServerDouble) -> None:
    binding_conditions_cluster(srv)
    with running(srv, dra_config()):
        wait(lambda: allocated_not_bound(srv), what="claim-a allocated, train-a waiting")
        report_device(srv, "broken")
        wait(
            lambda: any("device binding failed" in (e.get("note") or "") for e in srv.events),
            8.0,
            "the binding failure",
        )
    assert srv.bindings == []
