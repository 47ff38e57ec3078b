"""NodeResourcesBalancedAllocation scores (balanced_allocation_test.go cases, v1.33 semantics)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_pod, make_snapshot, run_scores

from wasmsched.framework.columns import NodeColumns, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_resource_change_score,
    balanced_resource_score,
)
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
GPU = "nvidia.com/gpu"


def node(name: str, milli_cpu: int, memory: int, gpus: int | None = None) -> Any:
    alloc: dict[str, Any] = {"cpu": f"{milli_cpu}m", "memory": memory}
    if gpus is not None:
        alloc[GPU] = gpus
    return make_node(name, allocatable=alloc)


CASES = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        CPU_AND_MEMORY,
        [node("node1", 4000, 10000), node("node2", 6000, 10000)],
        [],
        None,
        # node1: cpu 0.75, memory 0.5 -> std 0.125 -> 87
        [87, 100],
    ),
    (
        "resources requested, pods scheduled with resources",
        CPU_AND_MEMORY,
        [node("node1", 10000, 20000), node("node2", 10000, 20000)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        None,
        # node1: 0.6, 0.25 -> 82; node2: 0.6, 0.5 -> 95
        [82, 95],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        CPU_AND_MEMORY,
        [node("node1", 10000, 20000), node("node2", 10000, 50000)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        None,
        [82, 80],
    ),
    (
        "requested resources at node capacity",
        CPU_ONLY,
        [node("node1", 4000, 10000), node("node2", 4000, 10000)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        None,
        # fractions are capped at 1: node1 1, 0 -> 50; node2 1, 0.5 -> 75
        [50, 75],
    ),
    (
        "zero node resources, pods scheduled with resources",
        CPU_AND_MEMORY,
        [node("node1", 0, 0), node("node2", 0, 0)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        None,
        [100, 100],
    ),
    (
        "existing pods without requests do not count (Requested, not NonZeroRequested)",
        CPU_AND_MEMORY,
        [node("node1", 6000, 10000)],
        [("node1", [None]), ("node1", [None])],
        None,
        [100],
    ),
    (
        "three resources use the standard deviation",
        [{"cpu": "2000m", "memory": "2500", GPU: "2"}],
        [node("node1", 4000, 10000, gpus=4)],
        [],
        [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}],
        # fractions 0.5, 0.25, 0.5 -> std 0.11785 -> 88
        [88],
    ),
    (
        "an extended resource the pod does not request is left out",
        CPU_AND_MEMORY,
        [node("node1", 4000, 10000, gpus=4), node("node2", 6000, 10000)],
        [],
        [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU}],
        [87, 100],
    ),
    (
        "an extended resource the node lacks is left out",
        [{"cpu": "3000m", "memory": "5000", GPU: "1"}],
        [node("node1", 4000, 10000, gpus=4), node("node2", 4000, 10000)],
        [],
        [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}],
        # node1: 0.75, 0.5, 0.25 -> std 0.2041 -> 79; node2: 0.75, 0.5 -> 87
        [79, 87],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_score(pod: Any, nodes: Any, existing: Any, resources: Any, want: list[int]) -> None:
    pods = [
        make_pod(f"e{i}", node_name=n, containers=containers)
        for i, (n, containers) in enumerate(existing)
    ]
    snapshot = make_snapshot(nodes, pods)
    args = {"resources": resources} if resources is not None else {}
    plugin = NodeResourcesBalancedAllocation(args, FakeHandle(snapshot))
    assert [s for _, s in run_scores(plugin, make_pod(containers=pod), snapshot)] == want


@pytest.mark.parametrize(
    "containers",
    [[], [None], [{"cpu": "0", "memory": "0"}]],
    ids=["no containers", "no requests", "zero requests"],
)
def test_best_effort_pod_is_skipped(containers: Any) -> None:
    snapshot = make_snapshot([node("node1", 4000, 10000)])
    plugin = NodeResourcesBalancedAllocation({}, FakeHandle(snapshot))
    pod = make_pod(containers=containers)
    status = plugin.pre_score(CycleState(), pod, snapshot.list())
    assert status is not None and status.code == Code.SKIP
    # Score without PreScore state gives a best-effort pod 0.
    assert plugin.score(CycleState(), pod, snapshot.list()[0]) == (0, None)


@pytest.mark.parametrize(
    ("requested", "allocatable", "want"),
    [
        ([0, 0], [4000, 10000], 100),
        ([3000, 5000], [4000, 10000], 87),
        ([5000, 5000], [4000, 10000], 75),
        ([1, 2, 3], [0, 0, 0], 100),
        ([1], [2], 100),
        ([1, 1, 1, 1], [4, 2, 1, 8], 66),
    ],
)
def test_balanced_resource_score(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balanced_resource_score(requested, allocatable) == want


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight"),
        ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "resources[1].name"),
        ({"resources": [{"weight": 1}]}, "resources[0].name"),
        ({"shape": []}, "shape"),
    ],
)
def test_invalid_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match="NodeResourcesBalancedAllocationArgs") as info:
        NodeResourcesBalancedAllocation(args)
    assert field in str(info.value)


def test_default_resources() -> None:
    plugin = NodeResourcesBalancedAllocation({})
    assert [(r.name, r.weight) for r in plugin.resources] == [("cpu", 1), ("memory", 1)]


# --- v1.36+: the change in balance the pod makes ------------------------------------------
# balanced_allocation.go (v1.37.2): balancedResourceScorer(requested, allocated, allocatable)
# = MaxNodeScore/2 + (MaxNodeScore/2 + scoreWithPod - scoreWithoutPod)/2, each score
# balancedResourceScore's (1 - std) * 100 of the fractions with and without the pod.

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))

CHANGE_CASES = [
    (
        "nothing scheduled: with the pod 87 and 100, without 100",
        CPU_AND_MEMORY,
        [node("node1", 4000, 10000), node("node2", 6000, 10000)],
        [],
        None,
        # node1: 50 + (50 + 87 - 100) / 2 = 68; node2: 50 + (50 + 100 - 100) / 2 = 75
        [68, 75],
    ),
    (
        "pods scheduled: the pod makes both nodes a little less even",
        CPU_AND_MEMORY,
        [node("node1", 10000, 20000), node("node2", 10000, 20000)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        None,
        # node1: with 0.6, 0.25 -> 82, without 0.3, 0 -> 85: 50 + 47 / 2 = 73
        # node2: with 0.6, 0.5 -> 95, without 0.3, 0.25 -> 97: 50 + 48 / 2 = 74
        [73, 74],
    ),
    (
        "a memory-only pod evens out a cpu-heavy node",
        [{"cpu": "0", "memory": "6000"}],
        [node("node1", 10000, 20000), node("node2", 10000, 20000)],
        [("node1", CPU_ONLY)],
        None,
        # node1: with 0.3, 0.3 -> 100, without 0.3, 0 -> 85: 50 + 65 / 2 = 82
        # node2: with 0, 0.3 -> 85, without 0, 0 -> 100: 50 + 35 / 2 = 67
        [82, 67],
    ),
    (
        "three resources, the gpu node scored over cpu, memory and gpu",
        [{"cpu": "3000m", "memory": "5000", GPU: "1"}],
        [node("node1", 4000, 10000, gpus=4), node("node2", 4000, 10000)],
        [],
        [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}],
        # node1: with 0.75, 0.5, 0.25 -> 79, without 100: 50 + 29 / 2 = 64
        # node2: with 0.75, 0.5 -> 87, without 100: 50 + 37 / 2 = 68
        [64, 68],
    ),
    (
        "requests at capacity: fractions capped at 1 before and after",
        CPU_ONLY,
        [node("node1", 4000, 10000), node("node2", 4000, 10000)],
        [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)],
        None,
        # node1: with 1, 0 -> 50, without 0.75, 0 -> 62: 50 + 38 / 2 = 69
        # node2: with 1, 0.5 -> 75, without 0.75, 0.5 -> 87: 50 + 38 / 2 = 69
        [69, 69],
    ),
]


def _scores_both_ways(
    plugin: NodeResourcesBalancedAllocation, pod: Any, snapshot: Any
) -> tuple[list[int], list[int]]:
    """Score per node and score_columns over every row, after PreScore."""
    state = CycleState()
    assert plugin.pre_score(state, pod, snapshot.list()) is None
    per_node = []
    for ni in snapshot:
        score, status = plugin.score(state, pod, ni)
        assert status is None
        per_node.append(score)
    columns = NodeColumns(snapshot.list())
    by_columns = plugin.score_columns(state, pod, NodeRows(columns, columns.all_rows))
    assert by_columns is not None
    return per_node, by_columns.tolist()


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want"),
    [c[1:] for c in CHANGE_CASES],
    ids=[c[0] for c in CHANGE_CASES],
)
def test_score_change_since_1_36(
    pod: Any, nodes: Any, existing: Any, resources: Any, want: list[int]
) -> None:
    pods = [
        make_pod(f"e{i}", node_name=n, containers=containers)
        for i, (n, containers) in enumerate(existing)
    ]
    snapshot = make_snapshot(nodes, pods)
    args = {"resources": resources} if resources is not None else {}
    incoming = make_pod(containers=pod)
    plugin = NodeResourcesBalancedAllocation(args, FakeHandle(snapshot, features=V137))
    per_node, by_columns = _scores_both_ways(plugin, incoming, snapshot)
    assert per_node == want
    assert by_columns == want
    # 1.33 scores the balance with the pod placed, by both forms alike.
    old = NodeResourcesBalancedAllocation(args, FakeHandle(snapshot, features=V133))
    per_node, by_columns = _scores_both_ways(old, incoming, snapshot)
    assert per_node == by_columns
    assert per_node != want


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "want"),
    [
        ([0, 0], [0, 0], [4000, 10000], 75),
        ([3000, 5000], [0, 0], [4000, 10000], 68),
        ([3000, 3000], [3000, 0], [10000, 10000], 82),
        ([1, 1, 1, 1], [0, 0, 0, 0], [4, 2, 1, 8], 58),
    ],
)
def test_balanced_resource_change_score(
    requested: list[int], allocated: list[int], allocatable: list[int], want: int
) -> None:
    assert balanced_resource_change_score(requested, allocated, allocatable) == want
