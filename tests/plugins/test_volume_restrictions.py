"""VolumeRestrictions: in-tree disk conflicts and ReadWriteOncePod claims
(cases after volume_restrictions_test.go)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_node, make_node_info
from volume_support import handle_for, pvc, vol_pod

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import PodInfo
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import QueueingHint
from wasmsched.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
    is_schedulable_after_pod_deleted,
    is_schedulable_after_pvc_added,
)
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

SKIP = Status(Code.SKIP)
DISK_CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
RWOP_CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)

GCE_FOO = {"name": "d", "gcePersistentDisk": {"pdName": "foo"}}
GCE_BAR = {"name": "d", "gcePersistentDisk": {"pdName": "bar"}}
GCE_FOO_RO = {"name": "d", "gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
EBS_FOO = {"name": "d", "awsElasticBlockStore": {"volumeID": "foo"}}
EBS_BAR = {"name": "d", "awsElasticBlockStore": {"volumeID": "bar"}}
EBS_FOO_RO = {"name": "d", "awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}
RBD_1 = {"name": "d", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}}
RBD_2 = {"name": "d", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar"}}
RBD_OVERLAP = {"name": "d", "rbd": {"monitors": ["b", "z"], "pool": "foo", "image": "bar"}}
RBD_DEFAULT_POOL = {"name": "d", "rbd": {"monitors": ["a"], "image": "bar"}}
RBD_RBD_POOL = {"name": "d", "rbd": {"monitors": ["a"], "pool": "rbd", "image": "bar"}}
ISCSI_1 = {
    "name": "d",
    "iscsi": {"targetPortal": "t", "iqn": "iqn.2016-12.server:storage.target01"},
}
ISCSI_2 = {
    "name": "d",
    "iscsi": {"targetPortal": "t", "iqn": "iqn.2017-12.server:storage.target01"},
}
ISCSI_1_RO = {
    "name": "d",
    "iscsi": {"targetPortal": "t", "iqn": "iqn.2016-12.server:storage.target01", "readOnly": True},
}
HOST_PATH = {"name": "d", "hostPath": {"path": "/tmp"}}

# (name, pod volume, existing pod volume, PreFilter status, Filter status)
DISK_CASES: list[tuple[str, Any, Any, Status | None, Status | None]] = [
    ("nothing", None, None, SKIP, None),
    ("one state", None, GCE_FOO, SKIP, None),
    ("gce same state", GCE_FOO, GCE_FOO, None, DISK_CONFLICT),
    ("gce different state", GCE_BAR, GCE_FOO, None, None),
    ("gce both read-only", GCE_FOO_RO, GCE_FOO_RO, None, None),
    ("gce one read-only", GCE_FOO_RO, GCE_FOO, None, DISK_CONFLICT),
    ("aws same state", EBS_FOO, EBS_FOO, None, DISK_CONFLICT),
    ("aws different state", EBS_BAR, EBS_FOO, None, None),
    ("aws conflicts even read-only", EBS_FOO_RO, EBS_FOO_RO, None, DISK_CONFLICT),
    ("rbd same state", RBD_1, RBD_1, None, DISK_CONFLICT),
    ("rbd different monitors", RBD_2, RBD_1, None, None),
    ("rbd one shared monitor", RBD_OVERLAP, RBD_1, None, DISK_CONFLICT),
    ("rbd pool defaults to rbd", RBD_DEFAULT_POOL, RBD_RBD_POOL, None, DISK_CONFLICT),
    ("iscsi same state", ISCSI_1, ISCSI_1, None, DISK_CONFLICT),
    ("iscsi different state", ISCSI_2, ISCSI_1, None, None),
    ("iscsi both read-only", ISCSI_1_RO, ISCSI_1_RO, None, None),
    ("pod with volume that has no restriction", HOST_PATH, GCE_FOO, SKIP, None),
]


@pytest.mark.parametrize(
    ("volume", "existing", "pre_filter_status", "filter_status"),
    [c[1:] for c in DISK_CASES],
    ids=[c[0] for c in DISK_CASES],
)
def test_disk_conflicts(
    volume: Any, existing: Any, pre_filter_status: Status | None, filter_status: Status | None
) -> None:
    pod = vol_pod(volumes=[volume] if volume else [])
    on_node = vol_pod("e", volumes=[existing] if existing else [], node_name="n")
    ni = make_node_info(make_node("n"), [on_node])
    plugin = VolumeRestrictions(handle_for())
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [ni])
    assert status == pre_filter_status
    if status is None:
        assert plugin.filter(state, pod, ni) == filter_status


RWOP1 = pvc("claim-with-rwop-1", modes=["ReadWriteOncePod"])
RWOP2 = pvc("claim-with-rwop-2", modes=["ReadWriteOncePod"])
RWX = pvc("claim-with-rwx", modes=["ReadWriteMany"])

# (name, pod claims, existing pods' claims, claims in the cluster, PreFilter, Filter)
RWOP_CASES: list[
    tuple[str, list[str], list[list[str]], list[Any], Status | None, Status | None]
] = [
    ("nothing", [], [], [], SKIP, None),
    (
        "failed to get PVC",
        ["claim-with-rwop-1"],
        [],
        [],
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            'persistentvolumeclaim "claim-with-rwop-1" not found',
        ),
        None,
    ),
    (
        "no access mode conflict",
        ["claim-with-rwop-1"],
        [["claim-with-rwx"]],
        [RWOP1, RWX],
        SKIP,
        None,
    ),
    (
        "access mode conflict, unschedulable",
        ["claim-with-rwop-1"],
        [["claim-with-rwop-1"], ["claim-with-rwx"]],
        [RWOP1, RWX],
        None,
        RWOP_CONFLICT,
    ),
    (
        "two conflicts, unschedulable",
        ["claim-with-rwop-1", "claim-with-rwop-2"],
        [["claim-with-rwop-1", "claim-with-rwop-2"], ["claim-with-rwx"]],
        [RWOP1, RWOP2, RWX],
        None,
        RWOP_CONFLICT,
    ),
    (
        "many pods may share a ReadWriteMany claim",
        ["claim-with-rwx"],
        [["claim-with-rwx"]],
        [RWX],
        SKIP,
        None,
    ),
]


@pytest.mark.parametrize(
    ("claims", "existing", "objects", "pre_filter_status", "filter_status"),
    [c[1:] for c in RWOP_CASES],
    ids=[c[0] for c in RWOP_CASES],
)
def test_read_write_once_pod_conflicts(
    claims: list[str],
    existing: list[list[str]],
    objects: list[Any],
    pre_filter_status: Status | None,
    filter_status: Status | None,
) -> None:
    pod = vol_pod(claims=claims)
    on_nodes = [vol_pod(f"e{i}", claims=c, node_name="n1") for i, c in enumerate(existing)]
    nodes = [make_node_info(make_node("n1"), on_nodes), make_node_info(make_node("n2"))]
    plugin = VolumeRestrictions(handle_for(objects))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, nodes)
    assert status == pre_filter_status
    if status is None:
        # The claim is used somewhere in the cluster: every node is rejected.
        for ni in nodes:
            assert plugin.filter(state, pod, ni) == filter_status


def test_remove_pod_lifts_the_conflict_for_preemption() -> None:
    holder = vol_pod("holder", claims=["claim-with-rwop-1"], node_name="n1")
    ni = make_node_info(make_node("n1"), [holder])
    plugin = VolumeRestrictions(handle_for([RWOP1]))
    pod = vol_pod(claims=["claim-with-rwop-1"])
    state = CycleState()
    assert plugin.pre_filter(state, pod, [ni]) == (None, None)
    assert plugin.filter(state, pod, ni) == RWOP_CONFLICT
    clone = state.clone()
    copy = ni.clone()
    copy.remove_pod(holder)
    ext = plugin.pre_filter_extensions()
    assert ext.remove_pod(clone, pod, PodInfo(holder), copy) is None
    assert plugin.filter(clone, pod, copy) is None
    assert plugin.filter(state, pod, ni) == RWOP_CONFLICT  # the original state is untouched
    assert ext.add_pod(clone, pod, PodInfo(holder), copy) is None
    assert plugin.filter(clone, pod, copy) == RWOP_CONFLICT


def test_queueing_hints() -> None:
    pod = vol_pod(claims=["claim-with-rwop-1"], volumes=[GCE_FOO])
    same_disk = vol_pod("d", volumes=[GCE_FOO], node_name="n")
    same_claim = vol_pod("c", claims=["claim-with-rwop-1"], node_name="n")
    other = vol_pod("o", volumes=[GCE_BAR], node_name="n")
    elsewhere = vol_pod("x", volumes=[GCE_FOO], node_name="n", namespace="other")
    assert is_schedulable_after_pod_deleted(pod, same_disk, None) == QueueingHint.QUEUE
    assert is_schedulable_after_pod_deleted(pod, same_claim, None) == QueueingHint.QUEUE
    assert is_schedulable_after_pod_deleted(pod, other, None) == QueueingHint.QUEUE_SKIP
    assert is_schedulable_after_pod_deleted(pod, elsewhere, None) == QueueingHint.QUEUE_SKIP
    assert is_schedulable_after_pvc_added(pod, None, RWOP1) == QueueingHint.QUEUE
    assert is_schedulable_after_pvc_added(pod, None, RWX) == QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(
    ("minor", "want"),
    [
        (33, RWOP_CONFLICT),
        # volume_restrictions.go (v1.37.2): ErrReasonReadWriteOncePodConflict.
        (
            37,
            Status(
                Code.UNSCHEDULABLE,
                "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
                "mode already in-use by another pod",
            ),
        ),
    ],
)
def test_read_write_once_pod_message_since_1_34(minor: int, want: Status) -> None:
    holder = vol_pod("holder", claims=["claim-with-rwop-1"], node_name="n1")
    ni = make_node_info(make_node("n1"), [holder])
    handle = handle_for([RWOP1])
    handle.features = SchedulerFeatures.of(KubernetesVersion(1, minor))
    plugin = VolumeRestrictions(handle)
    pod = vol_pod(claims=["claim-with-rwop-1"])
    state = CycleState()
    assert plugin.pre_filter(state, pod, [ni]) == (None, None)
    assert plugin.filter(state, pod, ni) == want
