"""wasmsched.pod_allocations: the devices a pod's claims hold, for Python plugins."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import wasmsched
from wasmsched import DeviceAllocation, Pod, pod_allocations


class Objects:
    """The part of a Handle that pod_allocations reads."""

    def __init__(self, claims: list[Mapping[str, Any]]) -> None:
        self.claims = claims

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return self.claims if kind == "ResourceClaim" else []


def claim(name: str, *results: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}},
    }
    if results:
        out["status"] = {"allocation": {"devices": {"results": list(results)}}}
    return out


def result(device: str, **extra: Any) -> dict[str, Any]:
    return {
        "request": "gpu",
        "driver": "gpu.example.com",
        "pool": "node-0",
        "device": device,
        **extra,
    }


def pod(*entries: dict[str, Any], statuses: list[dict[str, Any]] | None = None) -> Pod:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "resourceClaims": list(entries)},
    }
    if statuses:
        manifest["status"] = {"resourceClaimStatuses": statuses}
    return Pod(manifest)


def test_allocations_of_direct_and_template_claims_in_pod_order() -> None:
    handle = Objects(
        [
            claim("shared", result("gpu-0")),
            claim(
                "train-big-x7k2p",
                result("gpu-1", shareID="s-1", consumedCapacity={"milli": "500"}),
                result("gpu-2", adminAccess=True),
            ),
        ]
    )
    p = pod(
        {"name": "big", "resourceClaimTemplateName": "t"},
        {"name": "small", "resourceClaimName": "shared"},
        statuses=[{"name": "big", "resourceClaimName": "train-big-x7k2p"}],
    )
    got = pod_allocations(handle, p)  # type: ignore[arg-type]
    assert [(a.pod_claim, a.claim, a.device) for a in got] == [
        ("big", "ml/train-big-x7k2p", "gpu-1"),
        ("big", "ml/train-big-x7k2p", "gpu-2"),
        ("small", "ml/shared", "gpu-0"),
    ]
    assert got[0] == DeviceAllocation(
        claim="ml/train-big-x7k2p",
        pod_claim="big",
        request="gpu",
        driver="gpu.example.com",
        pool="node-0",
        device="gpu-1",
        share_id="s-1",
        consumed_capacity={"milli": "500"},
        admin_access=False,
    )
    assert got[1].admin_access and got[1].share_id is None
    with pytest.raises(TypeError):
        got[0].consumed_capacity["milli"] = "1"  # type: ignore[index]
    with pytest.raises(AttributeError):
        got[0].device = "gpu-9"  # type: ignore[misc]


def test_no_allocation_yet() -> None:
    handle = Objects([claim("shared")])
    assert pod_allocations(handle, pod()) == ()  # type: ignore[arg-type]
    # A template claim not made yet, a claim not allocated, a claim not in the cluster.
    p = pod(
        {"name": "big", "resourceClaimTemplateName": "t"},
        {"name": "small", "resourceClaimName": "shared"},
        {"name": "gone", "resourceClaimName": "missing"},
    )
    assert pod_allocations(handle, p) == ()  # type: ignore[arg-type]
    # The claim is allocated later: a new list from the handle, read afresh.
    handle.claims = [claim("shared", result("gpu-3"))]
    assert [a.device for a in pod_allocations(handle, p)] == ["gpu-3"]  # type: ignore[arg-type]


def test_a_plugin_sees_the_devices_of_the_pods_on_a_node() -> None:
    """Through the scheduler's handle: each bound pod's claim, allocated to a device."""
    handles: list[wasmsched.Handle] = []

    class Nothing:
        name = "Nothing"

    def factory(args: dict[str, Any], handle: wasmsched.Handle) -> Nothing:
        handles.append(handle)
        return Nothing()

    registry = wasmsched.default_registry()
    registry.register("Nothing", factory)
    config = wasmsched.load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Nothing"}]}}}],
        },
        registry,
    )
    cluster = Path(__file__).resolve().parent.parent / "examples/dra/cluster.yaml"
    result = wasmsched.simulate(cluster, config, registry=registry)
    devices = {
        o.pod.name: [(a.pool, a.device) for a in pod_allocations(handles[0], o.pod)]
        for o in result.outcomes
    }
    assert sorted(d for held in devices.values() for d in held) == [
        ("node-0", "gpu-0"), ("node-0", "gpu-1"), ("node-1", "gpu-0"),
    ]  # fmt: skip
    assert all(len(held) == 1 for held in devices.values())
