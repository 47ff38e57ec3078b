"""NodeResourcesFit scoring: LeastAllocated, MostAllocated and RequestedToCapacityRatio.

Cases and expected numbers follow kube-scheduler's noderesources least_allocated_test.go,
most_allocated_test.go and requested_to_capacity_ratio_test.go.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_pod, make_snapshot, run_scores

from wasmsched.framework.cycle_state import CycleState
from wasmsched.plugins.node_resources_fit import (
    NodeResourcesFit,
    broken_linear_function,
)

# --- scoring --------------------------------------------------------------------------

NODES_4_10 = [("node1", "4000", "10000"), ("node2", "4000", "10000")]


def _score(
    strategy: dict[str, Any],
    pod_containers: list[dict[str, Any] | None] | None,
    nodes: list[tuple[str, str, str] | tuple[str, str, str, dict[str, Any]]],
    existing: list[tuple[str, dict[str, Any]]],
) -> list[int]:
    node_objs = []
    for n in nodes:
        extra = n[3] if len(n) > 3 else {}
        node_objs.append(make_node(n[0], allocatable={"cpu": n[1], "memory": n[2], **extra}))
    pods = [
        make_pod(f"e{i}", node_name=node, containers=[r] if r is not None else [])
        for i, (node, r) in enumerate(existing)
    ]
    snapshot = make_snapshot(node_objs, pods)
    plugin = NodeResourcesFit({"scoringStrategy": strategy}, FakeHandle(snapshot))
    pod = make_pod("p", containers=pod_containers if pod_containers is not None else [])
    return [s for _, s in run_scores(plugin, pod, snapshot)]


CPU_MEM_POD = [{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]
EXTENDED = "abc.com/xyz"
EXTENDED_SET = [
    {"name": "cpu", "weight": 1},
    {"name": "memory", "weight": 1},
    {"name": EXTENDED, "weight": 1},
]

LEAST_CASES = [
    ("nothing scheduled, nothing requested", None, NODES_4_10, [], None, [100, 100]),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        CPU_MEM_POD,
        [("node1", "4000", "10000"), ("node2", "6000", "10000")],
        [],
        None,
        [37, 50],
    ),
    (
        "no resources requested, pods scheduled",
        None,
        NODES_4_10,
        [("node1", None), ("node1", None), ("node2", None), ("node2", None)],
        None,
        [100, 100],
    ),
    (
        "no resources requested, pods scheduled with resources",
        None,
        [("node1", "10000", "20000"), ("node2", "10000", "20000")],
        [
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "5000"}),
        ],
        None,
        [70, 57],
    ),
    (
        "resources requested, pods scheduled with resources",
        CPU_MEM_POD,
        [("node1", "10000", "20000"), ("node2", "10000", "20000")],
        [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
        None,
        [57, 45],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        CPU_MEM_POD,
        [("node1", "10000", "20000"), ("node2", "10000", "50000")],
        [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
        None,
        [57, 60],
    ),
    (
        "requested resources exceed node capacity",
        [{"cpu": "3000", "memory": "0"}],
        NODES_4_10,
        [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
        None,
        [50, 25],
    ),
    (
        "zero node resources, pods scheduled with resources",
        None,
        [("node1", "0", "0"), ("node2", "0", "0")],
        [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
        None,
        [0, 0],
    ),
    (
        "resources requested with different weight on CPU and memory",
        CPU_MEM_POD,
        [("node1", "4000", "10000"), ("node2", "6000", "10000")],
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        [41, 50],
    ),
    (
        "bypass extended resource if the pod does not request",
        CPU_MEM_POD,
        [("node1", "6000", "10000"), ("node2", "6000", "10000", {EXTENDED: 4})],
        [],
        EXTENDED_SET,
        [50, 50],
    ),
    (
        "honor extended resource if the pod requests",
        [{"cpu": "3000", "memory": "5000", EXTENDED: "2"}],
        [("node1", "6000", "10000", {EXTENDED: 4}), ("node2", "6000", "10000", {EXTENDED: 10})],
        [],
        EXTENDED_SET,
        [50, 60],
    ),
    (
        "if the node doesn't have a resource",
        [{"cpu": "3000", "memory": "4000"}],
        [("node1", "6000", "10000"), ("node2", "6000", "10000", {EXTENDED: 4})],
        [],
        [
            {"name": EXTENDED, "weight": 2},
            {"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 1},
        ],
        [55, 55],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want"),
    [c[1:] for c in LEAST_CASES],
    ids=[c[0] for c in LEAST_CASES],
)
def test_least_allocated(
    pod: Any, nodes: Any, existing: Any, resources: Any, want: list[int]
) -> None:
    strategy: dict[str, Any] = {"type": "LeastAllocated"}
    if resources is not None:
        strategy["resources"] = resources
    assert _score(strategy, pod, nodes, existing) == want


MOST_CASES = [
    ("nothing scheduled, nothing requested", None, NODES_4_10, [], None, [0, 0]),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        CPU_MEM_POD,
        [("node1", "4000", "10000"), ("node2", "6000", "10000")],
        [],
        None,
        [62, 50],
    ),
    (
        "no resources requested, pods scheduled with resources",
        None,
        [("node1", "10000", "20000"), ("node2", "10000", "20000")],
        [
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "5000"}),
        ],
        None,
        [30, 42],
    ),
    (
        "resources requested, pods scheduled with resources",
        CPU_MEM_POD,
        [("node1", "10000", "20000"), ("node2", "10000", "20000")],
        [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
        None,
        [42, 55],
    ),
    (
        "resources requested with different weight on CPU and memory",
        CPU_MEM_POD,
        [("node1", "4000", "10000"), ("node2", "6000", "10000")],
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        [58, 50],
    ),
    (
        "requested above capacity is capped at capacity",
        [{"cpu": "3000", "memory": "0"}],
        NODES_4_10,
        [("node1", {"cpu": "3000", "memory": "0"}), ("node2", {"cpu": "3000", "memory": "5000"})],
        None,
        [50, 75],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "resources", "want"),
    [c[1:] for c in MOST_CASES],
    ids=[c[0] for c in MOST_CASES],
)
def test_most_allocated(
    pod: Any, nodes: Any, existing: Any, resources: Any, want: list[int]
) -> None:
    strategy: dict[str, Any] = {"type": "MostAllocated"}
    if resources is not None:
        strategy["resources"] = resources
    assert _score(strategy, pod, nodes, existing) == want


LEAST_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
MOST_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]

RTCR_CASES = [
    (
        "nothing scheduled, nothing requested (least shape)",
        LEAST_SHAPE,
        None,
        NODES_4_10,
        [],
        [100, 100],
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes (least shape)",
        LEAST_SHAPE,
        CPU_MEM_POD,
        [("node1", "4000", "10000"), ("node2", "6000", "10000")],
        [],
        # cpu 75% -> 25, memory 50% -> 50; round(37.5) = 38
        [38, 50],
    ),
    (
        "no resources requested, pods scheduled with resources (least shape)",
        LEAST_SHAPE,
        None,
        [("node1", "10000", "20000"), ("node2", "10000", "20000")],
        [
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node1", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "0"}),
            ("node2", {"cpu": "3000", "memory": "5000"}),
        ],
        [70, 58],
    ),
    (
        "bin packing shape: fuller nodes score higher",
        MOST_SHAPE,
        CPU_MEM_POD,
        [("node1", "4000", "10000"), ("node2", "6000", "10000")],
        [],
        # node1: cpu 75, memory 50 -> round(62.5) = 63
        [63, 50],
    ),
    (
        "resources scoring 0 are left out of the average",
        MOST_SHAPE,
        [{"cpu": "2000", "memory": "0"}],
        [("node1", "4000", "10000")],
        [],
        [50],
    ),
]


@pytest.mark.parametrize(
    ("shape", "pod", "nodes", "existing", "want"),
    [c[1:] for c in RTCR_CASES],
    ids=[c[0] for c in RTCR_CASES],
)
def test_requested_to_capacity_ratio(
    shape: Any, pod: Any, nodes: Any, existing: Any, want: list[int]
) -> None:
    strategy = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}}
    assert _score(strategy, pod, nodes, existing) == want


@pytest.mark.parametrize(
    ("shape", "p", "want"),
    [
        ([(10, 1), (90, 9)], -10, 1),
        ([(10, 1), (90, 9)], 0, 1),
        ([(10, 1), (90, 9)], 9, 1),
        ([(10, 1), (90, 9)], 10, 1),
        ([(10, 1), (90, 9)], 15, 1),
        ([(10, 1), (90, 9)], 19, 1),
        ([(10, 1), (90, 9)], 20, 2),
        ([(10, 1), (90, 9)], 89, 8),
        ([(10, 1), (90, 9)], 90, 9),
        ([(10, 1), (90, 9)], 99, 9),
        ([(10, 1), (90, 9)], 110, 9),
        ([(0, 2), (40, 10), (100, 0)], 10, 4),
        ([(0, 2), (40, 10), (100, 0)], 70, 5),
        # A falling segment truncates toward zero as Go does: 10 + (-10 * 1) / 3 = 7.
        ([(0, 10), (3, 0)], 1, 7),
        ([(0, 10), (3, 0)], 2, 4),
    ],
)
def test_broken_linear_function(shape: list[tuple[int, int]], p: int, want: int) -> None:
    assert broken_linear_function(shape)(p) == want


def test_score_uses_non_zero_requests_of_pods_without_requests() -> None:
    # Existing and incoming pods without requests count 100m CPU / 200Mi each.
    node = ("node1", "1", str(1000 * 1024 * 1024))
    scores = _score({"type": "MostAllocated"}, [None], [node], [("node1", {})])
    # cpu: 200m of 1000m -> 20; memory: 400Mi of 1000Mi -> 40; (20 + 40) / 2 = 30
    assert scores == [30]


def test_score_without_pre_score_computes_the_request() -> None:
    node = make_node("n", allocatable={"cpu": "4000", "memory": "10000"})
    snapshot = make_snapshot([node])
    plugin = NodeResourcesFit({}, FakeHandle())
    pod = make_pod(containers=CPU_MEM_POD)
    assert plugin.score(CycleState(), pod, snapshot.list()[0]) == (37, None)
