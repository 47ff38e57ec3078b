"""NodeVolumeLimits: CSI attach limits from CSINode or node allocatable (cases after
nodevolumelimits/csi_test.go)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from conftest import make_node, make_node_info
from volume_support import csi_node, handle_for, pv, pvc, storage_class, vol_pod

from wasmsched.api.objects import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import QueueingHint
from wasmsched.plugins.node_volume_limits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
    csi_attach_limit_key,
    is_schedulable_after_pod_deleted,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EXCEEDED = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def csi_pv(name: str, driver: str = EBS, handle: str = "") -> dict[str, Any]:
    return pv(name, source={"csi": {"driver": driver, "volumeHandle": handle or name}})


def bound(claim: str, volume: str) -> dict[str, Any]:
    return pvc(claim, "", volume=volume, bound=True)


CLUSTER: list[dict[str, Any]] = [
    *(csi_pv(f"ebs-{i}") for i in range(5)),
    *(bound(f"ebs-{i}", f"ebs-{i}") for i in range(5)),
    csi_pv("gce-0", GCE),
    bound("gce-0", "gce-0"),
    csi_pv("ebs-dup", handle="ebs-0"),
    bound("ebs-dup", "ebs-dup"),
    pv("intree-ebs", source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}),
    bound("intree-ebs", "intree-ebs"),
    storage_class("ebs-sc", "WaitForFirstConsumer", EBS),
    storage_class("intree-sc", "WaitForFirstConsumer", "kubernetes.io/aws-ebs"),
    pvc("pending-ebs", "ebs-sc"),
    pvc("pending-intree", "intree-sc"),
    pvc("missing-pv", "ebs-sc", volume="no-such-pv", bound=True),
    pvc("missing-sc", "no-such-sc"),
]

INLINE_EBS = {"name": "inline", "awsElasticBlockStore": {"volumeID": "vol-inline"}}


def claims(*names: str) -> list[str]:
    return list(names)


# (name, new pod claims, new pod inline volumes, existing pods' claims, CSINode drivers
#  (None: no CSINode), node allocatable, Filter status)
CASES: list[
    tuple[
        str,
        list[str],
        list[Any],
        list[list[str]],
        dict[str, int | None] | None,
        dict[str, str],
        Status | None,
    ]
] = [
    ("fits under the limit", ["ebs-0"], [], [["ebs-1", "ebs-2"]], {EBS: 4}, {}, None),
    (
        "node exceeds max csi volume count",
        ["ebs-0"],
        [],
        [["ebs-1", "ebs-2"]],
        {EBS: 2},
        {},
        EXCEEDED,
    ),
    (
        "new pod's volumes alone exceed the limit",
        ["ebs-0", "ebs-1"],
        [],
        [],
        {EBS: 1},
        {},
        EXCEEDED,
    ),
    (
        "a volume already attached counts once",
        ["ebs-0"],
        [],
        [["ebs-0", "ebs-1"]],
        {EBS: 2},
        {},
        None,
    ),
    (
        "the same handle through another PV counts once",
        ["ebs-dup"],
        [],
        [["ebs-0", "ebs-1"]],
        {EBS: 2},
        {},
        None,
    ),
    ("other driver's volumes do not count", ["ebs-0"], [], [["gce-0"]], {EBS: 1, GCE: 1}, {}, None),
    (
        "driver without a count: no limit",
        ["ebs-0"],
        [],
        [["ebs-1", "ebs-2"]],
        {EBS: None},
        {},
        None,
    ),
    ("no CSINode and no allocatable: no limit", ["ebs-0"], [], [["ebs-1"]], None, {}, None),
    (
        "node allocatable is not a limit (v1.33 reads CSINode only)",
        ["ebs-0"],
        [],
        [["ebs-1"]],
        None,
        {"attachable-volumes-csi-ebs.csi.aws.com": "1"},
        None,
    ),
    (
        "CSINode count overrides node allocatable",
        ["ebs-0"],
        [],
        [["ebs-1"]],
        {EBS: 5},
        {"attachable-volumes-csi-ebs.csi.aws.com": "1"},
        None,
    ),
    (
        "pending claim counts through its class",
        ["pending-ebs"],
        [],
        [["ebs-1"]],
        {EBS: 1},
        {},
        EXCEEDED,
    ),
    (
        "claim with a missing PV counts through its class",
        ["missing-pv"],
        [],
        [["ebs-1"]],
        {EBS: 1},
        {},
        EXCEEDED,
    ),
    (
        "claim with a missing class is not counted",
        ["missing-sc"],
        [],
        [["ebs-1"]],
        {EBS: 1},
        {},
        None,
    ),
    (
        "in-tree PV counts when a CSINode exists",
        ["intree-ebs"],
        [],
        [["ebs-1"]],
        {EBS: 1},
        {},
        EXCEEDED,
    ),
    (
        "in-tree PV without CSINode is not counted",
        ["intree-ebs"],
        [],
        [["ebs-1"]],
        None,
        {"attachable-volumes-csi-ebs.csi.aws.com": "1"},
        None,
    ),
    (
        "in-tree provisioner counts as its CSI driver",
        ["pending-intree"],
        [],
        [["ebs-1"]],
        {EBS: 1},
        {},
        EXCEEDED,
    ),
    (
        "inline in-tree volume is migrated and counted",
        [],
        [INLINE_EBS],
        [["ebs-1"]],
        {EBS: 1},
        {},
        EXCEEDED,
    ),
    ("existing pod's missing claim is not counted", ["ebs-0"], [], [["gone"]], {EBS: 1}, {}, None),
    (
        "new pod's missing claim",
        ["gone"],
        [],
        [],
        {EBS: 1},
        {},
        Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            'looking up PVC default/gone: persistentvolumeclaim "gone" not found',
        ),
    ),
]


@pytest.mark.parametrize(
    ("new_claims", "inline", "existing", "drivers", "allocatable", "want"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_csi_limits(
    new_claims: list[str],
    inline: list[Any],
    existing: list[list[str]],
    drivers: dict[str, int | None] | None,
    allocatable: dict[str, str],
    want: Status | None,
) -> None:
    objects = list(CLUSTER)
    if drivers is not None:
        objects.append(csi_node("n", drivers))
    on_node = [vol_pod(f"e{i}", claims=c, node_name="n") for i, c in enumerate(existing)]
    ni = make_node_info(make_node("n", allocatable=allocatable or None), on_node)
    pod = vol_pod(claims=new_claims, volumes=inline)
    plugin = NodeVolumeLimits(handle_for(objects))
    state = CycleState()
    assert plugin.pre_filter(state, pod, [ni]) == (None, None)
    assert plugin.filter(state, pod, ni) == want


@pytest.mark.parametrize(
    "pod",
    [vol_pod(), vol_pod(volumes=[{"name": "s", "secret": {"secretName": "x"}}])],
    ids=["no volumes", "only a secret"],
)
def test_pods_without_attachable_volumes_are_skipped(pod: Pod) -> None:
    _, status = NodeVolumeLimits(handle_for()).pre_filter(CycleState(), pod, [])
    assert status == Status(Code.SKIP)


def test_ephemeral_volume_counts_when_owned() -> None:
    owned = pvc("p-scratch", "ebs-sc", owner_uid="pod-uid")
    objects = [*CLUSTER, owned, csi_node("n", {EBS: 1})]
    ni = make_node_info(make_node("n"), [vol_pod("e", claims=["ebs-1"], node_name="n")])
    pod = vol_pod(ephemeral=["scratch"], uid="pod-uid")
    plugin = NodeVolumeLimits(handle_for(objects))
    state = CycleState()
    plugin.pre_filter(state, pod, [ni])
    assert plugin.filter(state, pod, ni) == EXCEEDED
    stranger = vol_pod(ephemeral=["scratch"], uid="other-uid")
    state = CycleState()
    plugin.pre_filter(state, stranger, [ni])
    assert plugin.filter(state, stranger, ni) == Status(
        Code.ERROR, "PVC default/p-scratch was not created for pod default/p (pod is not owner)"
    )


def test_csi_attach_limit_key() -> None:
    assert csi_attach_limit_key(EBS) == "attachable-volumes-csi-ebs.csi.aws.com"
    long_name = "a-very-long-csi-driver-name.example.storage.io"
    digest = hashlib.sha1(long_name.encode()).hexdigest()[:16]
    # Names of 63 characters or more are cut to 23 and suffixed with a hash.
    assert (
        csi_attach_limit_key(long_name) == "attachable-volumes-csi-a-very-long-csi-driver-" + digest
    )


def test_queueing_hints() -> None:
    pod = vol_pod(claims=["ebs-0"])
    with_claim = vol_pod("d", claims=["ebs-1"], node_name="n")
    unscheduled = vol_pod("u", claims=["ebs-1"])
    plain = vol_pod("q", node_name="n")
    assert is_schedulable_after_pod_deleted(pod, with_claim, None) == QueueingHint.QUEUE
    assert is_schedulable_after_pod_deleted(pod, unscheduled, None) == QueueingHint.QUEUE_SKIP
    assert is_schedulable_after_pod_deleted(pod, plain, None) == QueueingHint.QUEUE_SKIP
