"""``wasmsched run`` allocates ResourceClaims on a real kube-apiserver v1.37.2 (DRA is
resource.k8s.io/v1 from 1.34; the v1.33.4 server has no v1 and is not run here), as its
ServiceAccount authorised by deploy/rbac.yaml only: the allocation, the reservation and the
finalizer are written by DynamicResources' PreBind, then the pod is bound. A claim from a
template is made by the test the way the resourceclaim controller makes it (there is no
kube-controller-manager); until then the pod waits at PreEnqueue.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kube_apiserver import Cluster, require, start_cluster
from live_support import (
    claim_for_pod,
    claim_template,
    claiming_pod,
    device_class,
    node,
    resource_claim,
    resource_slice,
    wait,
)
from test_live_real_apiserver import CONFIG, NO_ELECTION, SCHEDULER, assert_clean, condition
from wasmsched.api.dra import ALLOCATION_FINALIZER

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
