"""DynamicResources (v1.37.2 dynamicresources.go) for pods without claims, and its place in
the default profile from 1.34: PreFilter writes its state, PostFilter reads it first.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_pod, make_snapshot

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.framework import interfaces as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore, NodeToStatus
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.dynamic_resources import ERR_NOT_FOUND, STATE_KEY, DynamicResources
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V134 = SchedulerFeatures.of(KubernetesVersion(1, 34))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def plugin(features: SchedulerFeatures = V137, objects: dict[str, list[Any]] | None = None) -> Any:
    handle = FakeHandle()
    handle.features = features
    kinds = objects or {}
    handle.objects = lambda kind: kinds.get(kind, [])  # type: ignore[method-assign]
    return DynamicResources(handle)


def test_pre_filter_writes_state_and_skips_a_pod_without_claims() -> None:
    pl = plugin()
    state = CycleState()
    result, status = pl.pre_filter(state, make_pod(), [])
    assert result is None
    assert status == Status(Code.SKIP)
    assert STATE_KEY in state


def test_post_filter_without_its_state_is_the_error_not_found() -> None:
    pl = plugin()
    _, status = pl.post_filter(CycleState(), make_pod(), NodeToStatus())
    assert status == Status(Code.ERROR, ERR_NOT_FOUND)


def test_post_filter_after_pre_filter_is_unschedulable_for_the_next_plugin() -> None:
    pl = plugin()
    state = CycleState()
    pl.pre_filter(state, make_pod(), [])
    _, status = pl.post_filter(state, make_pod(), NodeToStatus())
    assert status == Status(Code.UNSCHEDULABLE)


def test_score_is_zero_without_claims() -> None:
    pl = plugin()
    snapshot = make_snapshot([make_node("a"), make_node("b")])
    pod = make_pod()
    state = CycleState()
    pl.pre_filter(state, pod, snapshot.list())
    scores = [pl.score(state, pod, ni) for ni in snapshot]
    assert scores == [(0, None), (0, None)]
    scored = [NodeScore("a", 0), NodeScore("b", 0)]
    assert pl.score_extensions().normalize_score(state, pod, scored) is None
    assert [s.score for s in scored] == [0, 0]


def test_disabled_without_the_gate() -> None:
    pl = plugin(V133)
    state = CycleState()
    assert pl.pre_filter(state, make_pod(), []) == (None, Status(Code.SKIP))
    assert STATE_KEY not in state
    assert pl.post_filter(state, make_pod(), NodeToStatus()) == (None, Status(Code.UNSCHEDULABLE))
    assert pl.events_to_register() == []


@pytest.mark.parametrize(("features", "scores"), [(V134, False), (V137, True)])
def test_score_extension_from_1_35(features: SchedulerFeatures, scores: bool) -> None:
    assert fw.implements(plugin(features), fw.SCORE) is scores


def _claim_pod(entries: list[dict[str, str]], statuses: list[dict[str, str]] | None = None) -> Pod:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "pod-uid"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "resourceClaims": entries},
    }
    if statuses is not None:
        manifest["status"] = {"resourceClaimStatuses": statuses}
    return Pod(manifest)


@pytest.mark.parametrize(
    ("entries", "statuses", "message"),
    [
        (
            [{"name": "gpu", "resourceClaimName": "c1"}],
            None,
            'could not find ResourceClaim "default/c1"',
        ),
        (
            [{"name": "gpu", "resourceClaimTemplateName": "t"}],
            None,
            'pod "default/p": ResourceClaim not created yet',
        ),
        (
            [{"name": "gpu"}],
            None,
            'pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set',
        ),
        (
            [{"name": "gpu", "resourceClaimTemplateName": "t"}],
            [{"name": "gpu", "resourceClaimName": "p-gpu-x"}],
            "ResourceClaim default/p-gpu-x was not created for Pod default/p (Pod is not owner)",
        ),
    ],
)
def test_pre_enqueue_waits_for_the_pods_claims(
    entries: list[dict[str, str]], statuses: list[dict[str, str]] | None, message: str
) -> None:
    other = {"metadata": {"name": "p-gpu-x", "namespace": "default", "uid": "u"}}
    pl = plugin(objects={"ResourceClaim": [other]})
    status = pl.pre_enqueue(_claim_pod(entries, statuses))
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def test_pre_enqueue_passes_a_template_claim_the_controller_decided_not_to_make() -> None:
    pod = _claim_pod([{"name": "gpu", "resourceClaimTemplateName": "t"}], [{"name": "gpu"}])
    assert plugin().pre_enqueue(pod) is None


# --- in the default profile --------------------------------------------------------------


def _node(name: str) -> Node:
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )


def _pod(name: str, cpu: str, claim: str = "") -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]
    }
    if claim:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def _messages(features: SchedulerFeatures) -> dict[str, tuple[str, str | None, str]]:
    from wasmsched.sim.simulation import Simulation

    cluster = ClusterObjects(
        nodes=[_node("n1"), _node("n2")],
        pods=[_pod("web", "1", claim="x"), _pod("ok", "1")],
        others=[],
    )
    sim = Simulation(cluster, default_config(features), in_tree_registry())
    try:
        result = sim.run()
    finally:
        sim.close()
    return {o.pod.name: (o.result, o.node, o.message) for o in result.outcomes}


def test_a_pod_rejected_before_dynamic_resources_pre_filter_ends_with_not_found() -> None:
    """docs/dev/kube-1.37-changes.md, DynamicResources: VolumeBinding's PreFilter rejects the
    pod (UnschedulableAndUnresolvable), DynamicResources' PreFilter never runs, its PostFilter
    fails "not found" and preemption is not tried. The messages are the reference's
    (.cache/reference/wasmsched-reference-1.37 and wasmsched-reference on this cluster)."""
    got = _messages(V137)
    assert got["web"] == (
        "Unschedulable",
        None,
        '0/2 nodes are available: persistentvolumeclaim "x" not found. not found',
    )
    assert got["ok"] == ("Scheduled", "n1", "")
    assert _messages(V133)["web"][2] == (
        '0/2 nodes are available: persistentvolumeclaim "x" not found. '
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
