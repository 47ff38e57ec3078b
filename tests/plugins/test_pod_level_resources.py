"""Pod-level resources (spec.resources, the PodLevelResources gate, on from v1.34) in
NodeInfo, NodeResourcesFit's Filter and Score, and NodeResourcesBalancedAllocation.

component-helpers/resource/helpers.go (v0.37.2) PodRequests: the pod-level cpu/memory
replace the containers' aggregate. Callers with the gate: framework/types.go
PodInfo.CalculateResource (NodeInfo), noderesources/fit.go computePodResourceRequest
(Filter), resource_allocation.go calculatePodResourceRequest (the scores).
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_snapshot, run_scores

from wasmsched.api.objects import Pod
from wasmsched.framework.columns import NodeColumns, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import NodeInfo
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from wasmsched.plugins.node_resources_fit import NodeResourcesFit
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))
GI = 1 << 30


def pod(name: str, pod_cpu: str, node_name: str = "") -> Pod:
    """A pod asking ``pod_cpu`` at the pod level and 100m cpu, 1Gi memory in its container."""
    spec: dict[str, Any] = {
        "resources": {"requests": {"cpu": pod_cpu}},
        "containers": [
            {
                "name": "c",
                "image": "img",
                "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}},
            }
        ],
    }
    if node_name:
        spec["nodeName"] = node_name
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


NODE = make_node("n1", allocatable={"cpu": "4", "memory": f"{8 * GI}"})


@pytest.mark.parametrize(("features", "cpu"), [(V137, 3000), (V133, 100)], ids=["1.37", "1.33"])
def test_node_info_counts_pod_level_requests(features: SchedulerFeatures, cpu: int) -> None:
    ni = NodeInfo(NODE, features)
    placed = pod("placed", "3", "n1")
    ni.add_pod(placed)
    assert (ni.requested.milli_cpu, ni.requested.memory) == (cpu, GI)
    assert (ni.non_zero_cpu, ni.non_zero_memory) == (cpu, GI)
    assert ni.clone().requested.milli_cpu == cpu
    assert ni.remove_pod(placed)
    assert (ni.requested.milli_cpu, ni.non_zero_cpu) == (0, 0)


@pytest.mark.parametrize(
    ("features", "want"),
    [(V137, Status(Code.UNSCHEDULABLE, "Insufficient cpu")), (V133, None)],
    ids=["1.37", "1.33"],
)
def test_fit_filter_counts_pod_level_requests(
    features: SchedulerFeatures, want: Status | None
) -> None:
    # 3 cpu placed at the pod level leave 1 of 4; the incoming pod asks 1.5 at the pod level.
    ni = NodeInfo(NODE, features)
    ni.add_pod(pod("placed", "3", "n1"))
    plugin = NodeResourcesFit({}, FakeHandle(features=features))
    incoming = pod("p", "1500m")
    state = CycleState()
    plugin.pre_filter(state, incoming, [ni])
    assert plugin.filter(state, incoming, ni) == want
    columns = NodeColumns([ni])
    answer = plugin.filter_columns(state, incoming, NodeRows(columns, columns.all_rows))
    assert answer is not None
    codes, statuses = answer
    assert (statuses[int(codes[0]) - 1] if codes[0] else None) == want


@pytest.mark.parametrize(
    ("features", "fit", "balanced"),
    [
        # NodeResourcesFit's strategies skip pod-level requests even in 1.37 (fit.go builds
        # its scorer without enablePodLevelResources): the container's 100m as in 1.33, 92.
        # BalancedAllocation counts them. With 0.375, 0.125 -> 87, without 100:
        # 50 + 37/2 = 68.
        (V137, 92, 68),
        # 1.33: the container's 100m: cpu 97, memory 87 -> 92; balance 0.025, 0.125 -> 95.
        (V133, 92, 95),
    ],
    ids=["1.37", "1.33"],
)
def test_balanced_allocation_scores_count_pod_level_requests(
    features: SchedulerFeatures, fit: int, balanced: int
) -> None:
    snapshot = make_snapshot([NODE])
    incoming = pod("p", "1500m")
    handle = FakeHandle(snapshot, features=features)
    for plugin, want in (
        (NodeResourcesFit({}, handle), fit),
        (NodeResourcesBalancedAllocation({}, handle), balanced),
    ):
        assert run_scores(plugin, incoming, snapshot) == [("n1", want)]
        state = CycleState()
        plugin.pre_score(state, incoming, snapshot.list())
        columns = NodeColumns(snapshot.list())
        by_columns = plugin.score_columns(state, incoming, NodeRows(columns, columns.all_rows))
        assert by_columns is not None and by_columns.tolist() == [want]


def test_resource_signature_counts_pod_level_requests() -> None:
    # fit.go / balanced_allocation.go SignPod: computePodResourceRequest with
    # EnablePodLevelResources; two pods differing only at the pod level sign differently.
    a, b = pod("a", "1500m"), pod("b", "2")
    for features, differ in ((V137, True), (V133, False)):
        handle = FakeHandle(features=features)
        for plugin in (NodeResourcesFit({}, handle), NodeResourcesBalancedAllocation({}, handle)):
            assert (plugin.sign_pod(a) != plugin.sign_pod(b)) == differ
