"""Extended resources backed by a DeviceClass (DRAExtendedResource, v1.37.2
extendeddynamicresources.go, noderesources/fit.go, dynamic-resource-allocation
extendedresourcecache): which class backs a resource, the special claim's requests and
the pod's request mappings, NodeResourcesFit leaving such a resource to DRA, and the
whole flow in a simulation (the claim created at PreBind, the pod's
status.extendedResourceClaimStatus)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_node_info, make_pod

from wasmsched.api.dra import extended_resource_classes
from wasmsched.api.objects import Node, Pod
from wasmsched.framework.columns import NodeColumns, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.framework.types import QueueingHint
from wasmsched.plugins.dynamic_resources.extended import (
    ExtendedResourceResolver,
    requests_and_mappings,
)
from wasmsched.plugins.node_resources_fit import NodeResourcesFit
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

GPU = "example.com/gpu"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu"


def device_class(
    name: str, extended: str | None = None, created: str | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    spec: dict[str, Any] = {
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]
    }
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": meta,
        "spec": spec,
    }


# --- which class backs a resource (extendedresourcecache: updateResourceName2class) ----------


@pytest.mark.parametrize(
    ("classes", "expected"),
    [
        pytest.param(
            [device_class("gpu", GPU)],
            {GPU: "gpu", IMPLICIT: "gpu"},
            id="explicit-and-implicit",
        ),
        pytest.param(
            [device_class("gpu")],
            {IMPLICIT: "gpu"},
            id="implicit-only",
        ),
        pytest.param(
            [device_class("b", GPU), device_class("a", GPU)],
            {GPU: "a", "deviceclass.resource.kubernetes.io/a": "a"},
            id="same-age-smaller-name-wins-loser-left-out",
        ),
        pytest.param(
            [
                device_class("a", GPU, "2026-01-01T00:00:00Z"),
                device_class("b", GPU, "2026-02-01T00:00:00Z"),
            ],
            {
                GPU: "b",
                "deviceclass.resource.kubernetes.io/a": "a",
                "deviceclass.resource.kubernetes.io/b": "b",
            },
            id="newer-wins",
        ),
        pytest.param(
            [
                device_class("a", GPU, "2026-02-01T00:00:00Z"),
                device_class("b", GPU, "2026-01-01T00:00:00Z"),
            ],
            {GPU: "a", "deviceclass.resource.kubernetes.io/a": "a"},
            id="older-later-in-name-order-left-out",
        ),
    ],
)
def test_which_class_backs_a_resource(
    classes: list[dict[str, Any]], expected: dict[str, str]
) -> None:
    got = extended_resource_classes(classes)
    assert {k: v["metadata"]["name"] for k, v in got.items()} == expected


# --- the special claim's requests (createRequestsAndMappings) ---------------------------------


def container(name: str, requests: dict[str, str], sidecar: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "i", "resources": {"requests": requests}}
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


def pod_of(containers: list[dict[str, Any]], init: list[dict[str, Any]] = ()) -> Pod:  # type: ignore[assignment]
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = list(init)
    return Pod(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"}, "spec": spec}
    )


def req(name: str, count: int) -> dict[str, Any]:
    return {
        "name": name,
        "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count},
    }


def mapping(c: str, request: str, resource: str = GPU) -> dict[str, str]:
    return {"containerName": c, "resourceName": resource, "requestName": request}


@pytest.mark.parametrize(
    ("pod", "resources", "requests", "mappings"),
    [
        pytest.param(
            pod_of([container("c0", {"cpu": "1", GPU: "2"})]),
            {GPU: 2},
            [req("container-0-request-1", 2)],
            [mapping("c0", "container-0-request-1")],
            id="index-among-the-sorted-request-names",
        ),
        pytest.param(
            pod_of([container("c0", {GPU: "2"})], [container("i0", {GPU: "1"})]),
            {GPU: 2},
            [req("container-1-request-0", 2)],
            [mapping("c0", "container-1-request-0"), mapping("i0", "container-1-request-0")],
            id="init-container-reuses-a-later-container",
        ),
        pytest.param(
            pod_of(
                [container("c0", {"cpu": "1"})],
                [container("i0", {GPU: "1"}), container("i1", {GPU: "3"})],
            ),
            {GPU: 3},
            [req("container-1-request-0", 3)],
            [mapping("i0", "container-1-request-0"), mapping("i1", "container-1-request-0")],
            id="init-containers-share-the-largest",
        ),
        pytest.param(
            pod_of(
                [container("c0", {GPU: "1"})],
                [container("s0", {GPU: "1"}, sidecar=True), container("i1", {GPU: "2"})],
            ),
            {GPU: 2},
            [
                req("container-0-request-0", 1),
                req("container-1-request-0", 1),
                req("container-2-request-0", 1),
            ],
            [
                mapping("s0", "container-0-request-0"),
                mapping("c0", "container-2-request-0"),
                mapping("i1", "container-2-request-0"),
                mapping("i1", "container-1-request-0"),
            ],
            id="sidecar-is-long-lived-and-an-init-container-tops-up",
        ),
        pytest.param(
            pod_of([container("c0", {GPU: "1", IMPLICIT: "1"})]),
            {GPU: 1, IMPLICIT: 1},
            [req("container-0-request-0", 1), req("container-0-request-1", 1)],
            [
                mapping("c0", "container-0-request-0", IMPLICIT),
                mapping("c0", "container-0-request-1"),
            ],
            id="resources-in-name-order",
        ),
        pytest.param(
            pod_of([container("c0", {GPU: "1500m"})]),
            {GPU: 2},
            [],
            [],
            id="fraction-is-not-an-int64",
        ),
    ],
)
def test_requests_and_mappings(
    pod: Pod,
    resources: dict[str, int],
    requests: list[dict[str, Any]],
    mappings: list[dict[str, str]],
) -> None:
    resolver = ExtendedResourceResolver().refresh([device_class("gpu", GPU)])
    assert requests_and_mappings(pod, resources, resolver) == (requests, mappings)


# --- NodeResourcesFit leaves a backed resource to DRA (fit.go: shouldDelegateResourceToDRA) ----


V135 = SchedulerFeatures.of(KubernetesVersion(1, 35))
V136 = SchedulerFeatures.of(KubernetesVersion(1, 36))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def fit(features: SchedulerFeatures, classes: list[dict[str, Any]]) -> NodeResourcesFit:
    handle = FakeHandle()
    handle.features = features
    handle.objects = lambda kind: classes if kind == "DeviceClass" else []  # type: ignore[method-assign]
    return NodeResourcesFit(None, handle)


def gpu_node(advertised: int | None, used: int = 0) -> tuple[Node, list[Pod]]:
    allocatable: dict[str, Any] = {"cpu": "4", "memory": "8Gi", "pods": "10"}
    if advertised is not None:
        allocatable[GPU] = str(advertised)
    node = make_node("n", allocatable=allocatable)
    pods = [make_pod(f"u{i}", node_name="n", containers=[{GPU: "1"}]) for i in range(used)]
    return node, pods


@pytest.mark.parametrize("columnar", [False, True], ids=["per node", "columns"])
@pytest.mark.parametrize(
    ("features", "classes", "advertised", "used", "code", "reasons"),
    [
        pytest.param(V137, [device_class("gpu", GPU)], None, 0, None, [], id="left-to-dra"),
        pytest.param(V137, [device_class("gpu", GPU)], 0, 0, None, [], id="advertised-zero"),
        pytest.param(
            V137,
            [device_class("gpu", GPU)],
            1,
            1,
            Code.UNSCHEDULABLE,
            [f"Insufficient {GPU}"],
            id="device-plugin-node-is-full",
        ),
        pytest.param(
            V137,
            [device_class("other")],
            None,
            0,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            [f"Insufficient {GPU}"],
            id="no-class-backs-it",
        ),
        pytest.param(
            V135,
            [device_class("gpu", GPU)],
            None,
            0,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            [f"Insufficient {GPU}"],
            id="gate-off-in-1.35",
        ),
        pytest.param(V136, [device_class("gpu", GPU)], None, 0, None, [], id="gate-on-in-1.36"),
    ],
)
def test_fit_filter(
    columnar: bool,
    features: SchedulerFeatures,
    classes: list[dict[str, Any]],
    advertised: int | None,
    used: int,
    code: Code | None,
    reasons: list[str],
) -> None:
    plugin = fit(features, classes)
    node, pods = gpu_node(advertised, used)
    pod = make_pod(containers=[{"cpu": "1", GPU: "1"}])
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    info = make_node_info(node, pods)
    if columnar:
        columns = NodeColumns([info])
        answer = plugin.filter_columns(state, pod, NodeRows(columns, columns.all_rows))
        assert answer is not None
        verdicts, statuses = answer
        status = statuses[int(verdicts[0]) - 1] if int(verdicts[0]) else None
    else:
        status = plugin.filter(state, pod, info)
    if code is None:
        assert status is None
    else:
        assert status is not None and status.code == code and list(status.reasons) == reasons


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        (None, device_class("gpu"), QueueingHint.QUEUE),
        (None, device_class("x", GPU), QueueingHint.QUEUE),
        (None, device_class("x"), QueueingHint.QUEUE_SKIP),
        (device_class("x"), device_class("x", GPU), QueueingHint.QUEUE),
        (device_class("x", GPU), device_class("x", GPU), QueueingHint.QUEUE_SKIP),
        (device_class("x", GPU), device_class("x", "example.com/other"), QueueingHint.QUEUE_SKIP),
    ],
)
def test_fit_hint_after_device_class_event(
    old: dict[str, Any] | None, new: dict[str, Any], hint: QueueingHint
) -> None:
    plugin = fit(V137, [])
    pod = make_pod(containers=[{GPU: "1", IMPLICIT: "1"}])
    assert plugin.is_schedulable_after_device_class_event(pod, old, new) == hint


def test_fit_registers_device_class_events_with_the_gate() -> None:
    def kinds(features: SchedulerFeatures) -> list[str]:
        return [e.event.resource for e in fit(features, []).events_to_register()]

    assert "resource.k8s.io/DeviceClass" in kinds(V137)
    assert "resource.k8s.io/DeviceClass" not in kinds(V135)


def test_fit_does_not_sign_a_pod_with_a_backed_resource() -> None:
    """fit.go: SignPod: such a pod is never batched (opportunistic batching, 1.35+)."""
    pod = make_pod(containers=[{"cpu": "1", GPU: "1"}])
    assert fit(V137, [device_class("gpu", GPU)]).sign_pod(pod) is None
    assert fit(V137, [device_class("other")]).sign_pod(pod) is not None
    assert fit(V135, [device_class("gpu", GPU)]).sign_pod(pod) is not None
