"""NodeResourcesBalancedAllocation scores (balanced_allocation_test.go cases, v1.33 semantics)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_pod, make_snapshot, run_scores

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code
from wasmsched.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_resource_score,
)

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
