"""VolumeZone: PV zone/region labels against node labels (cases after volume_zone_test.go:
TestSingleZone, TestMultiZone, TestWithBinding)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_node, make_node_info
from volume_support import WFFC, handle_for, pv, pvc, storage_class, vol_pod

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import QueueingHint
from wasmsched.plugins.volume_zone import (
    ERR_REASON_CONFLICT,
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_REGION,
    LABEL_ZONE,
    VolumeZone,
    is_schedulable_after_pv_change,
    is_schedulable_after_storage_class_added,
    label_zones_to_set,
)

CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
SKIP = Status(Code.SKIP)

OBJECTS: list[dict[str, Any]] = [
    pv("Vol_1", labels={LABEL_BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={LABEL_BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", labels={LABEL_BETA_REGION: "us-west1"}),
    pv("Vol_4", labels={LABEL_ZONE: "us-west1-a"}),
    pv("Vol_5", labels={LABEL_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Multi", labels={LABEL_BETA_ZONE: "us-west1-b__us-west1-c"}),
    pv("Vol_Bad", labels={LABEL_BETA_ZONE: "us-west1-c__"}),
    *(
        pvc(f"PVC_{n}", volume=f"Vol_{n}", bound=True)
        for n in ("1", "2", "3", "4", "5", "Multi", "Bad")
    ),
    pvc("PVC_NoSC", None),
    pvc("PVC_EmptySC", ""),
    pvc("PVC_NoSCExist", "Class_0"),
    pvc("PVC_Immediate", "Class_Immediate"),
    pvc("PVC_WFFC", "Class_Wait"),
    pvc("PVC_NoVol", volume="Vol_Not_Exist", bound=True),
    storage_class("Class_Immediate"),
    storage_class("Class_Wait", WFFC),
]

# (name, claims, node labels, PreFilter status, Filter status)
CASES: list[tuple[str, list[str], dict[str, str], Status | None, Status | None]] = [
    ("pod without volume", [], {LABEL_BETA_ZONE: "us-west1-a"}, SKIP, None),
    ("node without labels", ["PVC_1"], {}, None, None),
    ("beta zone label matched", ["PVC_1"], {LABEL_BETA_ZONE: "us-west1-a", "x": "y"}, None, None),
    ("beta region label matched", ["PVC_2"], {LABEL_BETA_REGION: "us-west1"}, None, None),
    (
        "beta region label doesn't match",
        ["PVC_2"],
        {LABEL_BETA_REGION: "no_us-west1"},
        None,
        CONFLICT,
    ),
    (
        "beta zone label doesn't match",
        ["PVC_1"],
        {LABEL_BETA_ZONE: "no_us-west1-a"},
        None,
        CONFLICT,
    ),
    ("zone label matched", ["PVC_4"], {LABEL_ZONE: "us-west1-a"}, None, None),
    ("zone label doesn't match", ["PVC_4"], {LABEL_ZONE: "no_us-west1-a"}, None, CONFLICT),
    ("region label matched", ["PVC_5"], {LABEL_REGION: "us-west1"}, None, None),
    ("region label doesn't match", ["PVC_5"], {LABEL_REGION: "no_us-west1"}, None, CONFLICT),
    ("beta PV label, GA node label", ["PVC_1"], {LABEL_ZONE: "us-west1-a"}, None, None),
    (
        "beta PV label, GA node label mismatch",
        ["PVC_1"],
        {LABEL_ZONE: "us-west1-b"},
        None,
        CONFLICT,
    ),
    ("node missing the PV's key", ["PVC_3"], {LABEL_ZONE: "us-west1-a"}, None, CONFLICT),
    (
        "multi-zone label: node in one of them",
        ["PVC_Multi"],
        {LABEL_BETA_ZONE: "us-west1-c"},
        None,
        None,
    ),
    (
        "multi-zone label: node in none",
        ["PVC_Multi"],
        {LABEL_BETA_ZONE: "us-west1-a"},
        None,
        CONFLICT,
    ),
    ("unparsable zone label is ignored", ["PVC_Bad"], {LABEL_BETA_ZONE: "us-west1-a"}, SKIP, None),
    ("unbound WaitForFirstConsumer claim is skipped", ["PVC_WFFC"], {LABEL_ZONE: "a"}, SKIP, None),
    (
        "unbound immediate claim",
        ["PVC_Immediate"],
        {},
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name"),
        None,
    ),
    (
        "class not found",
        ["PVC_NoSCExist"],
        {},
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'storageclass.storage.k8s.io "Class_0" not found'
        ),
        None,
    ),
    (
        "claim without volume nor class",
        ["PVC_EmptySC"],
        {},
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "PersistentVolumeClaim had no pv name and storageClass name",
        ),
        None,
    ),
    (
        "claim not found",
        ["PVC_X"],
        {},
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "PVC_X" not found'),
        None,
    ),
    (
        "volume not found",
        ["PVC_NoVol"],
        {},
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "Vol_Not_Exist" not found'),
        None,
    ),
    (
        "empty claim name",
        [""],
        {},
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name"),
        None,
    ),
]


@pytest.mark.parametrize(
    ("claims", "node_labels", "pre_filter_status", "filter_status"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_volume_zone(
    claims: list[str],
    node_labels: dict[str, str],
    pre_filter_status: Status | None,
    filter_status: Status | None,
) -> None:
    pod = vol_pod(claims=claims)
    ni = make_node_info(make_node("n", labels=node_labels))
    plugin = VolumeZone(handle_for(OBJECTS))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [ni])
    assert status == pre_filter_status
    if status is None:
        assert plugin.filter(state, pod, ni) == filter_status


def test_filter_without_pre_filter_state_computes_topologies() -> None:
    pod = vol_pod(claims=["PVC_1"])
    plugin = VolumeZone(handle_for(OBJECTS))
    ni = make_node_info(make_node("n", labels={LABEL_BETA_ZONE: "other"}))
    assert plugin.filter(CycleState(), pod, ni) == CONFLICT


@pytest.mark.parametrize(
    ("value", "want"),
    [("a", {"a"}), ("a__b", {"a", "b"}), ("a__", None), ("", None)],
)
def test_label_zones_to_set(value: str, want: set[str] | None) -> None:
    got = label_zones_to_set(value)
    assert (None if got is None else set(got)) == want


def test_queueing_hints() -> None:
    pod = vol_pod(claims=["PVC_1"])
    old = pv("v", labels={LABEL_ZONE: "a"})
    assert is_schedulable_after_pv_change(pod, None, old) == QueueingHint.QUEUE
    assert is_schedulable_after_pv_change(pod, old, old) == QueueingHint.QUEUE_SKIP
    moved = pv("v", labels={LABEL_ZONE: "b"})
    assert is_schedulable_after_pv_change(pod, old, moved) == QueueingHint.QUEUE
    wait = storage_class("w", WFFC)
    assert is_schedulable_after_storage_class_added(pod, None, wait) == QueueingHint.QUEUE
    immediate = storage_class("i")
    assert is_schedulable_after_storage_class_added(pod, None, immediate) == QueueingHint.QUEUE_SKIP
