"""NodeResourcesFit: Filter reasons, the three scoring strategies, args and queueing hints.

Cases and expected numbers follow kube-scheduler's fit_test.go, least_allocated_test.go,
most_allocated_test.go and requested_to_capacity_ratio_test.go.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_node_info, make_pod, make_snapshot, run_scores

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, POD, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_resources_fit import (
    NodeResourcesFit,
    broken_linear_function,
    fits,
)

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
KUBE_EXT = "kubernetes.io/something"
HUGE_A = "hugepages-2Mi"


def alloc(cpu: int, mem: int, pods: int, ext_a: int, storage: int, huge_a: int) -> dict[str, Any]:
    """makeAllocatableResources of fit_test.go: cpu in milli, memory in bytes."""
    return {
        "cpu": f"{cpu}m",
        "memory": mem,
        "pods": pods,
        EXT_A: ext_a,
        HUGE_A: huge_a,
        "ephemeral-storage": storage,
    }


def req(cpu: int = 0, mem: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if cpu:
        out["cpu"] = f"{cpu}m"
    if mem:
        out["memory"] = mem
    return out


def ext_a(cpu: int, mem: int, qty: int) -> dict[str, Any]:
    return {"cpu": f"{cpu}m", "memory": mem, EXT_A: qty}


NODE_ALLOC = alloc(10, 20, 32, 5, 20, 5)

# (name, pod, existing pod on the node, args, want reasons; () means fits)
FILTER_CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], tuple[str, ...]]] = [
    ("no resources requested always fits", {}, {"containers": [req(10, 20)]}, {}, ()),
    (
        "too many resources fails",
        {"containers": [req(1, 1)]},
        {"containers": [req(10, 20)]},
        {},
        ("Insufficient cpu", "Insufficient memory"),
    ),
    (
        "too many resources fails due to init container cpu",
        {"containers": [req(1, 1)], "init_containers": [req(3, 1)]},
        {"containers": [req(8, 19)]},
        {},
        ("Insufficient cpu",),
    ),
    (
        "too many resources fails due to highest init container cpu",
        {"containers": [req(1, 1)], "init_containers": [req(3, 1), req(2, 1)]},
        {"containers": [req(8, 19)]},
        {},
        ("Insufficient cpu",),
    ),
    (
        "too many resources fails due to init container memory",
        {"containers": [req(1, 1)], "init_containers": [req(1, 3)]},
        {"containers": [req(9, 19)]},
        {},
        ("Insufficient memory",),
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        {"containers": [req(1, 1)], "init_containers": [req(1, 1), req(1, 1)]},
        {"containers": [req(9, 19)]},
        {},
        (),
    ),
    ("both resources fit", {"containers": [req(1, 1)]}, {"containers": [req(5, 5)]}, {}, ()),
    (
        "one resource memory fits",
        {"containers": [req(2, 1)]},
        {"containers": [req(9, 5)]},
        {},
        ("Insufficient cpu",),
    ),
    (
        "one resource cpu fits",
        {"containers": [req(1, 2)]},
        {"containers": [req(5, 19)]},
        {},
        ("Insufficient memory",),
    ),
    ("equal edge case", {"containers": [req(5, 1)]}, {"containers": [req(5, 19)]}, {}, ()),
    (
        "equal edge case for init container",
        {"containers": [req(4, 1)], "init_containers": [req(5, 1)]},
        {"containers": [req(5, 19)]},
        {},
        (),
    ),
    ("extended resource fits", {"containers": [ext_a(0, 0, 1)]}, {}, {}, ()),
    (
        "extended resource capacity enforced",
        {"containers": [ext_a(0, 0, 10)]},
        {"containers": [req(0, 0)]},
        {},
        (f"Insufficient {EXT_A}",),
    ),
    (
        "extended resource allocatable enforced",
        {"containers": [ext_a(0, 0, 1)]},
        {"containers": [ext_a(0, 0, 5)]},
        {},
        (f"Insufficient {EXT_A}",),
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        {"containers": [ext_a(0, 0, 3), ext_a(0, 0, 3)]},
        {"containers": [ext_a(0, 0, 2)]},
        {},
        (f"Insufficient {EXT_A}",),
    ),
    (
        "extended resource allocatable admits multiple init containers",
        {"containers": [req(0, 0)], "init_containers": [ext_a(0, 0, 3), ext_a(0, 0, 3)]},
        {"containers": [ext_a(0, 0, 2)]},
        {},
        (),
    ),
    (
        "extended resource allocatable enforced for single init container",
        {"containers": [req(0, 0)], "init_containers": [ext_a(0, 0, 6)]},
        {"containers": [ext_a(0, 0, 2)]},
        {},
        (f"Insufficient {EXT_A}",),
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        {"containers": [{EXT_B: 1}]},
        {"containers": [req(0, 0)]},
        {},
        (f"Insufficient {EXT_B}",),
    ),
    (
        "kubernetes.io resource capacity enforced",
        {"containers": [{KUBE_EXT: 10}]},
        {"containers": [req(0, 0)]},
        {},
        (f"Insufficient {KUBE_EXT}",),
    ),
    (
        "hugepages resource capacity enforced",
        {"containers": [{HUGE_A: 10}]},
        {"containers": [{HUGE_A: 0}]},
        {},
        (f"Insufficient {HUGE_A}",),
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        {"containers": [{HUGE_A: 6}, {HUGE_A: 6}]},
        {"containers": [{HUGE_A: 2}]},
        {},
        (f"Insufficient {HUGE_A}",),
    ),
    (
        "skip checking ignored extended resource",
        {"containers": [{"cpu": "1m", "memory": 1, EXT_B: 2}]},
        {"containers": [req(0, 0)]},
        {"ignoredResources": [EXT_B]},
        (),
    ),
    (
        "skip checking ignored extended resource via resource groups",
        {"containers": [{"cpu": "1m", "memory": 1, EXT_B: 2}]},
        {"containers": [req(0, 0)]},
        {"ignoredResourceGroups": ["example.com"]},
        (),
    ),
    (
        "ignored resources never skip a kubernetes.io resource",
        {"containers": [{KUBE_EXT: 10}]},
        {"containers": [req(0, 0)]},
        {"ignoredResources": [KUBE_EXT]},
        (f"Insufficient {KUBE_EXT}",),
    ),
    (
        "resources + pod overhead fits",
        {"containers": [req(1, 1)], "overhead": req(3, 13)},
        {"containers": [req(5, 5)]},
        {},
        (),
    ),
    (
        "requests + overhead does not fit for memory",
        {"containers": [req(1, 1)], "overhead": req(1, 15)},
        {"containers": [req(5, 5)]},
        {},
        ("Insufficient memory",),
    ),
    (
        "skip checking extended resource request with quantity zero via resource groups",
        {"containers": [{EXT_B: 0}]},
        {"containers": [req(0, 0)]},
        {"ignoredResourceGroups": ["example.com"]},
        (),
    ),
    (
        "skip checking resource request with quantity zero",
        {"containers": [{"cpu": "1m", "memory": 1, EXT_B: 0}]},
        {"containers": [req(0, 0)]},
        {},
        (),
    ),
    (
        "ephemeral-storage is checked",
        {"containers": [{"ephemeral-storage": 21}]},
        {},
        {},
        ("Insufficient ephemeral-storage",),
    ),
    (
        "every failing resource is reported, in kube-scheduler's order",
        {"containers": [{"cpu": "1m", "memory": 1, "ephemeral-storage": 1, EXT_A: 1, HUGE_A: 1}]},
        {
            "containers": [
                {"cpu": "10m", "memory": 20, "ephemeral-storage": 20, EXT_A: 5, HUGE_A: 5}
            ]
        },
        {},
        (
            "Insufficient cpu",
            "Insufficient memory",
            "Insufficient ephemeral-storage",
            f"Insufficient {EXT_A}",
            f"Insufficient {HUGE_A}",
        ),
    ),
]


def _filter(
    plugin: NodeResourcesFit,
    pod_kw: dict[str, Any],
    node_alloc: dict[str, Any],
    existing: list[dict[str, Any]],
) -> Status | None:
    node = make_node("n", allocatable=node_alloc)
    pods = [make_pod(f"e{i}", node_name="n", **kw) for i, kw in enumerate(existing)]
    ni = make_node_info(node, pods)
    pod = make_pod("p", **pod_kw)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [ni])
    assert result is None and status is None
    return plugin.filter(state, pod, ni)


@pytest.mark.parametrize(
    ("pod_kw", "existing", "args", "want"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter_enough_requests(
    pod_kw: dict[str, Any], existing: dict[str, Any], args: dict[str, Any], want: tuple[str, ...]
) -> None:
    status = _filter(NodeResourcesFit(args), pod_kw, NODE_ALLOC, [existing] if existing else [])
    if not want:
        assert status is None
    else:
        assert status == Status(Code.UNSCHEDULABLE, *want)


@pytest.mark.parametrize(
    ("pod_kw", "existing", "want"),
    [
        ({}, {"containers": [req(10, 20)]}, ("Too many pods",)),
        ({"containers": [req(1, 1)]}, {"containers": [req(5, 5)]}, ("Too many pods",)),
        ({"containers": [req(5, 1)]}, {"containers": [req(5, 19)]}, ("Too many pods",)),
        (
            {"containers": [req(5, 1)], "init_containers": [req(5, 1)]},
            {"containers": [req(5, 19)]},
            ("Too many pods",),
        ),
        (
            {"containers": [req(6, 2)]},
            {"containers": [req(5, 19)]},
            ("Too many pods", "Insufficient cpu", "Insufficient memory"),
        ),
    ],
    ids=[
        "even without specified resources, no space for additional pod",
        "even if both resources fit, no space for additional pod",
        "even for equal edge case, no space for additional pod",
        "even for equal edge case, no space for additional pod due to init container",
        "pods, cpu and memory all reported",
    ],
)
def test_filter_not_enough_pods(
    pod_kw: dict[str, Any], existing: dict[str, Any], want: tuple[str, ...]
) -> None:
    status = _filter(NodeResourcesFit({}), pod_kw, alloc(10, 20, 1, 0, 0, 0), [existing])
    assert status == Status(Code.UNSCHEDULABLE, *want)


def test_filter_without_prefilter_state_is_an_error() -> None:
    ni = make_node_info(make_node("n", allocatable=NODE_ALLOC))
    status = NodeResourcesFit({}).filter(CycleState(), make_pod(), ni)
    assert status is not None and status.code == Code.ERROR
    assert "PreFilterNodeResourcesFit" in status.message


def test_filter_reuses_status_for_the_same_failure() -> None:
    plugin = NodeResourcesFit({})
    a = _filter(plugin, {"containers": [req(11, 1)]}, NODE_ALLOC, [])
    b = _filter(plugin, {"containers": [req(12, 1)]}, NODE_ALLOC, [])
    assert a is b and a == Status(Code.UNSCHEDULABLE, "Insufficient cpu")


def test_fits_lists_reasons() -> None:
    ni = make_node_info(make_node("n", allocatable=alloc(10, 20, 32, 0, 0, 0)))
    assert fits(make_pod(containers=[req(1, 1)]), ni) == []
    assert fits(make_pod(containers=[req(11, 21)]), ni) == [
        "Insufficient cpu",
        "Insufficient memory",
    ]


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
    plugin = NodeResourcesFit({})
    pod = make_pod(containers=CPU_MEM_POD)
    assert plugin.score(CycleState(), pod, snapshot.list()[0]) == (37, None)


# --- args -----------------------------------------------------------------------------


def test_default_args() -> None:
    plugin = NodeResourcesFit({})
    assert plugin.args.strategy == "LeastAllocated"
    assert [(r.name, r.weight) for r in plugin.resources] == [("cpu", 1), ("memory", 1)]


def test_args_weight_defaults_to_one() -> None:
    plugin = NodeResourcesFit(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}}
    )
    assert [(r.name, r.weight) for r in plugin.resources] == [("cpu", 1)]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "memory", "weight": -1}],
                }
            },
            "scoringStrategy.resources[0].weight",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}],
                }
            },
            "scoringStrategy.resources[1].weight",
        ),
        ({"scoringStrategy": {"type": "Bogus"}}, "scoringStrategy.type"),
        ({"scoringStrategy": {"resources": []}}, "scoringStrategy.type"),
        (
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "scoringStrategy.requestedToCapacityRatio",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": []},
                }
            },
            "scoringStrategy.shape",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]
                    },
                }
            },
            "scoringStrategy.shape[1].utilization",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
                }
            },
            "scoringStrategy.shape[0].utilization",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 11}]},
                }
            },
            "scoringStrategy.shape[0].score",
        ),
        ({"ignoredResources": ["not a name!"]}, "ignoredResources[0]"),
        ({"ignoredResourceGroups": ["example.com/aaa"]}, "ignoredResourceGroups[0]"),
        ({"bogusField": 1}, "bogusField"),
    ],
)
def test_invalid_args(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=r"NodeResourcesFitArgs: .*") as info:
        NodeResourcesFit(args)
    assert field in str(info.value)


def test_args_accept_kind_and_api_version() -> None:
    NodeResourcesFit(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"}
    )


# --- events and queueing hints ----------------------------------------------------------


def test_events_to_register() -> None:
    events = NodeResourcesFit({}).events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]
    assert all(e.hint is not None for e in events)


TARGET = make_pod("target", uid="target", containers=[{"cpu": "1", "memory": "1Gi"}])
TARGET_CPU_ONLY = make_pod("target", uid="target", containers=[{"cpu": "1"}])


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        (
            TARGET,
            make_pod("other", node_name="n", containers=[{"cpu": "1"}]),
            None,
            QueueingHint.QUEUE,
        ),
        (TARGET, make_pod("other", containers=[{"cpu": "1"}]), None, QueueingHint.QUEUE_SKIP),
        (
            TARGET,
            make_pod("other", containers=[{"cpu": "2"}]),
            make_pod("other", containers=[{"cpu": "1"}]),
            QueueingHint.QUEUE_SKIP,
        ),
        (
            TARGET,
            make_pod("target", uid="target", containers=[{"cpu": "2"}]),
            make_pod("target", uid="target", containers=[{"cpu": "1"}]),
            QueueingHint.QUEUE,
        ),
        (
            TARGET_CPU_ONLY,
            make_pod("other", node_name="n", containers=[{"cpu": "1", "memory": "2Gi"}]),
            make_pod("other", node_name="n", containers=[{"cpu": "1", "memory": "1Gi"}]),
            QueueingHint.QUEUE_SKIP,
        ),
        (
            TARGET_CPU_ONLY,
            make_pod("other", node_name="n", containers=[{"cpu": "2"}]),
            make_pod("other", node_name="n", containers=[{"cpu": "1"}]),
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "queue-on-deleted-scheduled-pod",
        "skip-queue-on-deleted-unscheduled-pod",
        "skip-queue-on-unscheduled-pod-scale-down",
        "queue-on-target-pod-scale-down",
        "skip-queue-on-other-resource-scale-down",
        "queue-on-requested-resource-scale-down",
    ],
)
def test_hint_after_pod_event(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeResourcesFit({}).is_schedulable_after_pod_event(pod, old, new) == want


def _node(cpu: str, pods: str = "110") -> Any:
    return make_node("n", allocatable={"cpu": cpu, "memory": "4Gi", "pods": pods})


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, _node("2"), QueueingHint.QUEUE),
        (None, _node("500m"), QueueingHint.QUEUE_SKIP),
        (_node("500m"), _node("2"), QueueingHint.QUEUE),
        (_node("2"), _node("4"), QueueingHint.QUEUE),
        (_node("2"), _node("2"), QueueingHint.QUEUE_SKIP),
        (_node("500m"), _node("800m"), QueueingHint.QUEUE_SKIP),
        (_node("2", pods="10"), _node("2", pods="20"), QueueingHint.QUEUE),
        (None, _node("2", pods="0"), QueueingHint.QUEUE_SKIP),
    ],
    ids=[
        "queue-on-node-add-when-fit",
        "skip-queue-on-node-add-when-not-fit",
        "queue-on-node-changed-to-fit",
        "queue-on-node-allocatable-increased",
        "skip-queue-on-node-unrelated-changes",
        "skip-queue-on-node-changes-still-not-fit",
        "queue-on-allowed-pod-number-increased",
        "skip-queue-on-node-without-pod-room",
    ],
)
def test_hint_after_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeResourcesFit({}).is_schedulable_after_node_change(TARGET, old, new) == want
