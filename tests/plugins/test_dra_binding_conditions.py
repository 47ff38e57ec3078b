"""DynamicResources' PreBind waits for devices' binding conditions (DRADeviceBindingConditions
with DRAResourceClaimDeviceStatus, on at 1.37), on the simulated clock: a cluster without a
driver never reports them, so the pod's binding fails after bindingTimeout (10 min), its
claim is deallocated at the next attempt (Filter: timed out) and allocated again. A driver
(here a test writing the claim's status.devices) makes it bind, or fail at once.

kube-scheduler v1.37.2 would sleep real minutes for these cases, and the differential
generator has no driver: they are checked here against dynamicresources.go's rules
(PreBind, isPodReadyForBinding, isClaimReadyForBinding, isClaimTimeout)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from test_dynamic_resources import DRA_CLUSTER

from wasmsched.api.manifests import load_manifests
from wasmsched.config import default_config
from wasmsched.plugins.dynamic_resources.binding import claim_readiness, claim_timed_out
from wasmsched.plugins.dynamic_resources.plugin import DynamicResources, new
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.sim.simulation import Simulation

V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def _cluster() -> str:
    """test_dynamic_resources' cluster reduced to node n1, whose GPUs have the binding
    condition ``attached`` and the failure condition ``broken``; the claim claim-a for one
    GPU and the pod train using it."""
    docs = [
        d
        for d in yaml.safe_load_all(DRA_CLUSTER)
        if d["kind"] in ("Node", "DeviceClass", "ResourceSlice")
        and d["metadata"]["name"] in ("n1", "gpu", "n1-gpu")
    ]
    for d in docs:
        for device in d.get("spec", {}).get("devices", ()):
            device["bindingConditions"] = ["attached"]
            device["bindingFailureConditions"] = ["broken"]
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "claim-a", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim-a"}],
        },
    }
    return yaml.safe_dump_all([*docs, claim, pod])


CLAIM = "default/claim-a"


def simulate(
    tmp_path: Any, until: float, driver: tuple[float, str, str] | None = None
) -> tuple[Simulation, Any, list[tuple[float, str]]]:
    """Runs CLUSTER up to ``until`` simulated seconds. ``driver``: (when, condition,
    status) the "driver" reports for gpu-0 in the claim's status.devices at ``when``.
    Returns the simulation, its result and the claim's allocation changes (time, device
    or "-")."""
    path = tmp_path / "cluster.yaml"
    path.write_text(_cluster())
    cluster = load_manifests(path, kubernetes_version=KubernetesVersion(1, 37))
    sim = Simulation(cluster, default_config(V137), in_tree_registry(), max_simulated_seconds=until)
    changes: list[tuple[float, str]] = []

    def watch(old: Any, new: Any) -> None:
        if new is None or (new.get("metadata") or {}).get("name") != "claim-a":
            return
        allocation = (new.get("status") or {}).get("allocation")
        was = ((old or {}).get("status") or {}).get("allocation")
        if (allocation is None) != (was is None):
            device = allocation["devices"]["results"][0]["device"] if allocation else "-"
            changes.append((sim.now(), device))

    sim.store.subscribe(on_claim=watch)
    if driver is not None:
        when, condition, status = driver

        def report() -> None:
            claim = dict(sim.store.resource_claims[CLAIM])
            claim["status"] = {
                **claim["status"],
                "devices": [
                    {
                        "driver": "gpu.example.com",
                        "pool": "n1",
                        "device": "gpu-0",
                        "conditions": [
                            {"type": condition, "status": status, "reason": "Driver",
                             "message": "said \"so\""}
                        ],
                    }
                ],
            }  # fmt: skip
            sim.store.write_resource_claim(claim)

        sim.at(when, report)
    try:
        result = sim.run()
    finally:
        sim.close()
    return sim, result, changes


def outcome(result: Any) -> tuple[str, str | None, str]:
    (o,) = [o for o in result.outcomes if o.pod.name == "train"]
    return o.result, o.node, o.message


def test_without_a_driver_the_binding_times_out_and_the_claim_is_reallocated(
    tmp_path: Any,
) -> None:
    sim, result, changes = simulate(tmp_path, 1300.0)
    kind, node, message = outcome(result)
    assert (kind, node) == ("Unschedulable", None)
    assert (
        message == "still waiting at PreBind (DynamicResources) on n1 when the simulation stopped"
    )
    notes = [e.note for e in sim.store.events if e.reason == "FailedScheduling"]
    assert notes[0] == (
        "running PreBind plugin 'DynamicResources': device binding timeout: "
        "context deadline exceeded"
    )
    assert notes[1].startswith(
        "0/1 nodes are available: 1 resourceclaim not available on the node. "
        "deallocation of ResourceClaim completed"
    )
    # Allocated at 0, waited 600 s (the pod held the device), failed; the next attempt's
    # Filter finds the allocation timed out and PostFilter deallocates it; allocated again
    # at once: the deallocation requeued the pod to backoffQ, and with activeQ empty Pop
    # takes it from there (SchedulerPopFromBackoffQ: active_queue.go: unlockedPop).
    assert changes[0] == (0.0, "gpu-0")
    assert changes[1:3] == [(601.0, "-"), (601.0, "gpu-0")]
    reasons = [(e.time, e.reason) for e in sim.store.events if e.regarding.name == "train"]
    assert reasons[:4] == [
        (0.0, "BindingConditionsPending"),
        (600.0, "FailedScheduling"),
        (601.0, "FailedScheduling"),
        (601.0, "BindingConditionsPending"),
    ]
    assert not sim.store.pods[sim.store.uid_of("default/train")].node_name


def test_a_driver_reporting_the_condition_lets_the_pod_bind(tmp_path: Any) -> None:
    _, result, changes = simulate(tmp_path, 1300.0, driver=(42.0, "attached", "True"))
    kind, node, _ = outcome(result)
    assert (kind, node) == ("Scheduled", "n1")
    # Bound at the first poll after the report (every 5 s from the start of the wait).
    (o,) = [o for o in result.outcomes if o.pod.name == "train"]
    assert o.scheduled_at == 45.0
    assert changes == [(0.0, "gpu-0")]


def test_a_failure_condition_fails_the_binding_at_the_next_poll(tmp_path: Any) -> None:
    sim, _, changes = simulate(tmp_path, 100.0, driver=(12.0, "broken", "True"))
    failed = [(e.time, e.note) for e in sim.store.events if e.reason == "FailedScheduling"]
    # Failed at the poll of 15 s; the retry's Filter sees the failure and PostFilter
    # deallocates the claim (and its device status); it is allocated again at once, popped
    # from backoffQ (SchedulerPopFromBackoffQ).
    assert failed[0] == (
        15.0,
        "running PreBind plugin 'DynamicResources': device binding failed: claim=claim-a, "
        'reason=Driver, message="said \\"so\\""',
    )
    assert failed[1][1].startswith(
        "0/1 nodes are available: 1 resourceclaim not available on the node. "
        "deallocation of ResourceClaim completed"
    )
    assert changes == [(0.0, "gpu-0"), (16.0, "-"), (16.0, "gpu-0")]


def allocated(
    results: list[dict[str, Any]], devices: Any = None, stamp: str | None = None
) -> dict[str, Any]:
    allocation: dict[str, Any] = {"devices": {"results": results}}
    if stamp is not None:
        allocation["allocationTimestamp"] = stamp
    status: dict[str, Any] = {"allocation": allocation}
    if devices is not None:
        status["devices"] = devices
    return {"metadata": {"name": "c"}, "status": status}


BC = {"driver": "d", "pool": "p", "device": "x", "bindingConditions": ["a", "b"],
      "bindingFailureConditions": ["f"]}  # fmt: skip


def device_status(**conditions: str) -> list[dict[str, Any]]:
    return [
        {
            "driver": "d",
            "pool": "p",
            "device": "x",
            "conditions": [
                {"type": k, "status": v, "reason": "R", "message": "m"}
                for k, v in conditions.items()
            ],
        }
    ]


@pytest.mark.parametrize(
    ("claim", "ready", "failed"),
    [
        ({"metadata": {"name": "c"}, "status": {}}, False, None),  # not allocated
        (allocated([{"driver": "d", "pool": "p", "device": "y"}]), True, None),
        (allocated([BC]), False, None),  # no device status yet
        (allocated([BC], device_status(a="True")), False, None),
        (allocated([BC], device_status(a="True", b="True")), True, None),
        (allocated([BC], device_status(a="True", b="False", f="False")), False, None),
        (
            allocated([BC], device_status(a="True", b="True", f="True")),
            False,
            'device binding failed: claim=c, reason=R, message="m"',
        ),
    ],
)
def test_claim_readiness(claim: dict[str, Any], ready: bool, failed: str | None) -> None:
    assert claim_readiness(claim) == (ready, failed)


@pytest.mark.parametrize(
    ("claim", "now", "timed_out"),
    [
        (allocated([BC], stamp="1970-01-01T00:00:10Z"), 610.0, False),
        (allocated([BC], stamp="1970-01-01T00:00:10Z"), 611.0, True),
        (
            allocated([{"driver": "d", "pool": "p", "device": "y"}], stamp="1970-01-01T00:00:10Z"),
            10_000.0,
            False,
        ),
        (allocated([BC]), 10_000.0, False),  # no timestamp
    ],
)
def test_claim_timed_out(claim: dict[str, Any], now: float, timed_out: bool) -> None:
    assert claim_timed_out(claim, 600.0, now) is timed_out


def test_binding_timeout_arg() -> None:
    from conftest import FakeHandle

    handle = FakeHandle()
    handle.features = V137
    assert new({"bindingTimeout": "90s"}, handle)._binding_timeout == 90.0
    assert new({}, handle)._binding_timeout == 600.0
    with pytest.raises(ValueError, match="must be at least 1 second"):
        new({"bindingTimeout": "500ms"}, handle)
    handle.features = SchedulerFeatures.of(KubernetesVersion(1, 33))
    with pytest.raises(ValueError, match="feature gate is disabled"):
        new({"bindingTimeout": "90s"}, handle)
    assert DynamicResources(handle)._binding_timeout == 600.0
