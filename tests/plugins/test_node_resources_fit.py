"""NodeResourcesFit: Filter reasons, args and queueing hints.

Cases and expected numbers follow kube-scheduler's noderesources fit_test.go; the scoring
strategies are in test_node_resources_fit_scoring.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_node_info, make_pod

from wasmsched.framework.columns import NodeColumns, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, POD, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_resources_fit import (
    NodeResourcesFit,
    fits,
)
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

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
    status = _filter(
        NodeResourcesFit(args, FakeHandle()), pod_kw, NODE_ALLOC, [existing] if existing else []
    )
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
    status = _filter(
        NodeResourcesFit({}, FakeHandle()), pod_kw, alloc(10, 20, 1, 0, 0, 0), [existing]
    )
    assert status == Status(Code.UNSCHEDULABLE, *want)


def test_filter_without_prefilter_state_is_an_error() -> None:
    ni = make_node_info(make_node("n", allocatable=NODE_ALLOC))
    status = NodeResourcesFit({}, FakeHandle()).filter(CycleState(), make_pod(), ni)
    assert status is not None and status.code == Code.ERROR
    assert "PreFilterNodeResourcesFit" in status.message


def test_filter_reuses_status_for_the_same_failure() -> None:
    plugin = NodeResourcesFit({}, FakeHandle())
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


# --- args -----------------------------------------------------------------------------


def test_default_args() -> None:
    plugin = NodeResourcesFit({}, FakeHandle())
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
        NodeResourcesFit(args, FakeHandle())
    assert field in str(info.value)


def test_args_accept_kind_and_api_version() -> None:
    NodeResourcesFit(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"}
    )


# --- events and queueing hints ----------------------------------------------------------


def test_events_to_register() -> None:
    events = NodeResourcesFit({}, FakeHandle()).events_to_register()
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
            make_pod("other", nominated_node_name="n", containers=[{"cpu": "1"}]),
            None,
            QueueingHint.QUEUE,
        ),
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
        "queue-on-deleted-nominated-pod",
        "skip-queue-on-unscheduled-pod-scale-down",
        "queue-on-target-pod-scale-down",
        "skip-queue-on-other-resource-scale-down",
        "queue-on-requested-resource-scale-down",
    ],
)
def test_hint_after_pod_event(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert NodeResourcesFit({}, FakeHandle()).is_schedulable_after_pod_event(pod, old, new) == want


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
    assert (
        NodeResourcesFit({}, FakeHandle()).is_schedulable_after_node_change(TARGET, old, new)
        == want
    )


# --- v1.34+: a request above the node's allocatable is unresolvable ------------------------
# fit.go (v1.37.2) fitsRequest: InsufficientResource.Unresolvable = podRequest.X >
# nodeInfo.Allocatable.X for cpu, memory, ephemeral-storage and scalars ("Too many pods"
# never); Fit.Filter: UnschedulableAndUnresolvable when any reason is unresolvable.

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# (name, pod, existing pods, node allocatable, want code at 1.37, want reasons)
UNRESOLVABLE_CASES: list[
    tuple[str, dict[str, Any], list[Any], dict[str, Any], Code, tuple[str, ...]]
]
UNRESOLVABLE_CASES = [
    (
        "cpu above allocatable",
        {"containers": [req(11, 1)]},
        [],
        NODE_ALLOC,
        UNRESOLVABLE,
        ("Insufficient cpu",),
    ),
    (
        "cpu within allocatable but used up",
        {"containers": [req(1, 1)]},
        [{"containers": [req(10, 1)]}],
        NODE_ALLOC,
        Code.UNSCHEDULABLE,
        ("Insufficient cpu",),
    ),
    (
        "one reason unresolvable makes the status unresolvable",
        {"containers": [req(11, 1)]},
        [{"containers": [req(1, 20)]}],
        NODE_ALLOC,
        UNRESOLVABLE,
        ("Insufficient cpu", "Insufficient memory"),
    ),
    (
        "memory above allocatable",
        {"containers": [req(1, 21)]},
        [],
        NODE_ALLOC,
        UNRESOLVABLE,
        ("Insufficient memory",),
    ),
    (
        "ephemeral-storage above allocatable",
        {"containers": [{"ephemeral-storage": 25}]},
        [],
        NODE_ALLOC,
        UNRESOLVABLE,
        ("Insufficient ephemeral-storage",),
    ),
    (
        "extended resource above allocatable",
        {"containers": [ext_a(1, 1, 6)]},
        [],
        NODE_ALLOC,
        UNRESOLVABLE,
        (f"Insufficient {EXT_A}",),
    ),
    (
        "extended resource the node lacks",
        {"containers": [{"cpu": "1m", EXT_B: 1}]},
        [],
        NODE_ALLOC,
        UNRESOLVABLE,
        (f"Insufficient {EXT_B}",),
    ),
    (
        "extended resource used up",
        {"containers": [ext_a(1, 1, 1)]},
        [{"containers": [ext_a(1, 1, 5)]}],
        NODE_ALLOC,
        Code.UNSCHEDULABLE,
        (f"Insufficient {EXT_A}",),
    ),
    (
        "too many pods alone stays resolvable",
        {"containers": [req(1, 1)]},
        [{"containers": [req(1, 1)]}],
        alloc(10, 20, 1, 0, 0, 0),
        Code.UNSCHEDULABLE,
        ("Too many pods",),
    ),
    (
        "too many pods and cpu above allocatable",
        {"containers": [req(11, 1)]},
        [{"containers": [req(1, 1)]}],
        alloc(10, 20, 1, 0, 0, 0),
        UNRESOLVABLE,
        ("Too many pods", "Insufficient cpu"),
    ),
]


def _filter_columns(
    plugin: NodeResourcesFit, pod_kw: dict[str, Any], node_alloc: Any, existing: list[Any]
) -> Status | None:
    node = make_node("n", allocatable=node_alloc)
    pods = [make_pod(f"e{i}", node_name="n", **kw) for i, kw in enumerate(existing)]
    columns = NodeColumns([make_node_info(node, pods)])
    pod = make_pod("p", **pod_kw)
    state = CycleState()
    plugin.pre_filter(state, pod, columns.infos)
    answer = plugin.filter_columns(state, pod, NodeRows(columns, columns.all_rows))
    assert answer is not None
    codes, statuses = answer
    code = int(codes[0])
    return statuses[code - 1] if code else None


@pytest.mark.parametrize(
    ("pod_kw", "existing", "node_alloc", "code", "reasons"),
    [c[1:] for c in UNRESOLVABLE_CASES],
    ids=[c[0] for c in UNRESOLVABLE_CASES],
)
@pytest.mark.parametrize("form", [_filter, _filter_columns], ids=["per node", "columns"])
def test_filter_unresolvable_over_allocatable_since_1_34(
    form: Any,
    pod_kw: dict[str, Any],
    existing: list[Any],
    node_alloc: dict[str, Any],
    code: Code,
    reasons: tuple[str, ...],
) -> None:
    new = form(NodeResourcesFit({}, FakeHandle(features=V137)), pod_kw, node_alloc, existing)
    assert new == Status(code, *reasons)
    old = form(NodeResourcesFit({}, FakeHandle(features=V133)), pod_kw, node_alloc, existing)
    assert old == Status(Code.UNSCHEDULABLE, *reasons)


def _pod_level(name: str, cpu: str, **kw: Any) -> Any:
    pod = make_pod(name, containers=[{"cpu": "100m"}], **kw)
    return type(pod)(
        {**pod.manifest, "spec": {**pod.spec, "resources": {"requests": {"cpu": cpu}}}}
    )


@pytest.mark.parametrize("minor", [33, 37])
def test_hint_after_pod_level_scale_down(minor: int) -> None:
    # fit.go (v1.33.4 and v1.37.2) haveEnoughRelevantResourcesDecreased: PodRequests without
    # SkipPodLevelResources, so a placed pod's pod-level cpu going down frees cpu, gate or not.
    plugin = NodeResourcesFit(
        {}, FakeHandle(features=SchedulerFeatures.of(KubernetesVersion(1, minor)))
    )
    target = make_pod("target", containers=[{"cpu": "1"}])
    old = _pod_level("other", "2", node_name="n")
    new = _pod_level("other", "1", node_name="n")
    assert plugin.is_schedulable_after_pod_event(target, old, new) == QueueingHint.QUEUE
