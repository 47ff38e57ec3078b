"""``wasmsched run`` allocates ResourceClaims on a real kube-apiserver v1.37.2 (DRA is
resource.k8s.io/v1 from 1.34; the v1.33.4 server has no v1 and is not run here), as its
ServiceAccount authorised by deploy/rbac.yaml only: the allocation, the reservation and the
finalizer are written by DynamicResources' PreBind, then the pod is bound. A claim from a
template is made by the test the way the resourceclaim controller makes it (there is no
kube-controller-manager); until then the pod waits at PreEnqueue.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kube_apiserver import Cluster, require, start_cluster
from live_support import (
    claim_for_pod,
    claim_template,
    claiming_pod,
    device_class,
    device_request,
    node,
    resource_claim,
    resource_slice,
    wait,
)
from live_support import pod as plain_pod
from test_live_real_apiserver import CONFIG, NO_ELECTION, SCHEDULER, assert_clean, condition
from wasmsched.api.dra import ALLOCATION_FINALIZER, extended_resource_claim
from wasmsched.api.objects import Pod

VERSION = "1.37"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A v1.37.2 API server for this module; skipped without its binaries, except in CI."""
    require(VERSION)
    c = start_cluster(version=VERSION)
    try:
        yield c
    finally:
        c.close()


def pod(name: str, **claim: str) -> dict[str, Any]:
    """A pod of the scheduler's profile with the claim "gpu", without a token volume."""
    return claiming_pod(
        name, scheduler=SCHEDULER, memory="64Mi", automountServiceAccountToken=False, **claim
    )


def get_claim(cluster: Cluster, name: str) -> dict[str, Any]:
    return cluster.request("GET", f"{CLAIMS}/{name}")


def assert_allocated_for(cluster: Cluster, claim_name: str, pod_name: str) -> str:
    """The claim holds one of node-1's GPUs for the pod, behind the finalizer; the device."""
    claim = get_claim(cluster, claim_name)
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert (result["request"], result["driver"], result["pool"]) == (
        "gpu",
        "gpu.example.com",
        "node-1",
    )
    selector = claim["status"]["allocation"]["nodeSelector"]
    assert selector["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node-1"]
    bound = cluster.pod(pod_name)
    assert bound is not None and bound["spec"]["nodeName"] == "node-1"
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": pod_name, "uid": bound["metadata"]["uid"]}
    ]
    assert ALLOCATION_FINALIZER in claim["metadata"]["finalizers"]
    return str(result["device"])


def test_allocates_claims_and_binds_as_its_service_account(cluster: Cluster) -> None:
    cluster.add_node(node("node-0", cpu="2"))
    cluster.add_node(node("node-1", cpu="2"))
    cluster.create(device_class())
    cluster.create(resource_slice("node-1", devices=2))
    cluster.create(resource_claim("claim-a"))
    template = claim_template("gpu-template")
    cluster.create(template)
    cluster.create(pod("train-a", claim="claim-a"))
    waiting = cluster.create(pod("train-t", template="gpu-template"))
    sched = cluster.scheduler(CONFIG, *NO_ELECTION)

    wait(lambda: "train-a" in cluster.placements(), 30, "train-a bound")
    first = assert_allocated_for(cluster, "claim-a", "train-a")
    # train-t waits for its claim (PreEnqueue), as it would for the controller.
    assert "train-t" not in cluster.placements()
    made = cluster.create(claim_for_pod(waiting, template))
    cluster.request(
        "PATCH",
        "/api/v1/namespaces/default/pods/train-t/status",
        {"status": {"resourceClaimStatuses": [
            {"name": "gpu", "resourceClaimName": made["metadata"]["name"]}
        ]}},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    wait(lambda: "train-t" in cluster.placements(), 30, "train-t bound")
    second = assert_allocated_for(cluster, made["metadata"]["name"], "train-t")
    assert {first, second} == {"gpu-0", "gpu-1"}

    # Both GPUs are taken: a third claim waits, with kube-scheduler's message.
    cluster.create(resource_claim("claim-b"))
    cluster.create(pod("train-b", claim="claim-b"))
    wait(
        lambda: condition(cluster.pod("train-b"), "PodScheduled") is not None,
        30,
        "train-b's condition",
    )
    cond = condition(cluster.pod("train-b"), "PodScheduled")
    assert cond is not None and (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    assert "allocation" not in get_claim(cluster, "claim-b").get("status", {})
    assert sorted(sched.bound()) == ["default/train-a", "default/train-t"]
    assert_clean(sched)
    assert sched.stop() == 0


EXTENDED = "ext.example.com/gpu"
EXTENDED_DRIVER = "ext.example.com"


def extended_pod(name: str) -> dict[str, Any]:
    """A pod of the scheduler's profile asking for one ext.example.com/gpu, no claim."""
    out = plain_pod(name, scheduler=SCHEDULER, memory="64Mi", automountServiceAccountToken=False)
    resources = out["spec"]["containers"][0]["resources"]
    resources["requests"][EXTENDED] = "1"
    resources["limits"] = {EXTENDED: "1"}
    return out


def stale_gone(cluster: Cluster) -> bool:
    names = [c["metadata"]["name"] for c in cluster.request("GET", CLAIMS)["items"]]
    return "train-x-extended-resources-stale" not in names


def test_creates_the_claim_for_extended_resources_as_its_service_account(
    cluster: Cluster,
) -> None:
    # Only node-2, whose one device of the class backing ext.example.com/gpu is in a
    # ResourceSlice (the node does not advertise the resource).
    cluster.reset()
    try:
        cluster.add_node(node("node-2", cpu="2"))
        gpus = device_class(EXTENDED_DRIVER, EXTENDED_DRIVER)
        gpus["spec"]["extendedResourceName"] = EXTENDED
        cluster.create(gpus)
        cluster.create(resource_slice("node-2", driver=EXTENDED_DRIVER))
        made = cluster.create(extended_pod("train-x"))
        # A special claim left from an earlier attempt: PostFilter deletes it first.
        stale = extended_resource_claim(Pod(made))
        stale["metadata"]["name"] = "train-x-extended-resources-stale"
        stale["metadata"].pop("uid")
        stale["spec"] = {"devices": {"requests": [device_request(EXTENDED_DRIVER)]}}
        cluster.create(stale)
        sched = cluster.scheduler(CONFIG, *NO_ELECTION)

        wait(lambda: stale_gone(cluster), 30, "the stale claim deleted")
        # Its deletion (no allocation) moves no pod, as in kube (isSchedulableAfterClaimChange
        # skips it): a change of the class does.
        cluster.request(
            "PATCH",
            f"/apis/resource.k8s.io/v1/deviceclasses/{EXTENDED_DRIVER}",
            {"metadata": {"labels": {"touched": "yes"}}},
            content_type="application/merge-patch+json",
        )
        wait(lambda: "train-x" in cluster.placements(), 30, "train-x bound")
        bound = cluster.pod("train-x")
        assert bound is not None and bound["spec"]["nodeName"] == "node-2"
        claims = cluster.request("GET", CLAIMS)["items"]
        (claim,) = [c for c in claims if c["metadata"]["name"].startswith("train-x-")]
        name = claim["metadata"]["name"]
        assert name != "train-x-extended-resources-stale"
        assert claim["metadata"]["generateName"] == "train-x-extended-resources-"
        assert ALLOCATION_FINALIZER in claim["metadata"]["finalizers"]
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"], result["device"]) == (
            EXTENDED_DRIVER,
            "node-2",
            "gpu-0",
        )
        assert claim["status"]["reservedFor"] == [
            {"resource": "pods", "name": "train-x", "uid": bound["metadata"]["uid"]}
        ]
        assert bound["status"]["extendedResourceClaimStatus"] == {
            "resourceClaimName": name,
            "requestMappings": [
                {
                    "containerName": "c",
                    "resourceName": EXTENDED,
                    "requestName": result["request"],
                }
            ],
        }
        assert_clean(sched)
        assert sched.stop() == 0
    finally:
        cluster.reset()


BC_DRIVER = "bc.example.com"


def test_waits_for_binding_conditions_the_driver_reports(cluster: Cluster) -> None:
    # node-3's one device has the binding condition "attached": the pod is bound only once
    # the "driver" (the test, as admin) reports it True in the claim's status.devices.
    cluster.reset()
    try:
        cluster.add_node(node("node-3", cpu="2"))
        cluster.create(device_class(BC_DRIVER, BC_DRIVER))
        gpus = resource_slice("node-3", driver=BC_DRIVER)
        gpus["spec"]["devices"][0]["bindingConditions"] = ["attached"]
        gpus["spec"]["devices"][0]["bindingFailureConditions"] = ["broken"]
        cluster.create(gpus)
        bc_claim = resource_claim("claim-bc")
        bc_claim["spec"]["devices"]["requests"] = [device_request(BC_DRIVER)]
        cluster.create(bc_claim)
        cluster.create(pod("train-bc", claim="claim-bc"))
        sched = cluster.scheduler(CONFIG, *NO_ELECTION)

        def reserved() -> bool:
            return bool(get_claim(cluster, "claim-bc").get("status", {}).get("reservedFor"))

        wait(reserved, 30, "claim-bc allocated and reserved")
        time.sleep(2.0)
        assert "train-bc" not in cluster.placements()
        written = get_claim(cluster, "claim-bc")
        (result,) = written["status"]["allocation"]["devices"]["results"]
        assert (result["bindingConditions"], result["bindingFailureConditions"]) == (
            ["attached"],
            ["broken"],
        )
        written["status"]["devices"] = [
            {
                "driver": BC_DRIVER,
                "pool": "node-3",
                "device": "gpu-0",
                "conditions": [
                    {
                        "type": "attached",
                        "status": "True",
                        "reason": "Attached",
                        "message": "the driver attached it",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ],
            }
        ]
        cluster.request("PUT", f"{CLAIMS}/claim-bc/status", written)
        wait(lambda: "train-bc" in cluster.placements(), 30, "train-bc bound")
        assert cluster.placements()["train-bc"] == "node-3"
        assert_clean(sched)
        assert sched.stop() == 0
    finally:
        cluster.reset()
