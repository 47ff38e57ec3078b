"""NodeVolumeLimits: CSI attach limits from CSINode or node allocatable (cases after
nodevolumelimits/csi_test.go)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from conftest import make_node, make_node_info
from volume_support import csi_node, handle_for, pv, pvc, storage_class, vol_pod

from wasmsched import simulate
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
from wasmsched.plugins.node_volume_limits import new as new_node_volume_limits
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

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


def csi_driver(name: str, prevent: bool | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"attachRequired": True}
    if prevent is not None:
        spec["preventPodSchedulingIfMissing"] = prevent
    return {"kind": "CSIDriver", "metadata": {"name": name}, "spec": spec}


# csi_test.go: TestVolumeLimitScalingGate: (name, release, CSIDriver's
# preventPodSchedulingIfMissing or None without a CSIDriver, node's CSINode drivers, want)
V133 = KubernetesVersion(1, 33)
V137 = KubernetesVersion(1, 37)
NOT_INSTALLED = Status(Code.UNSCHEDULABLE, f"{EBS} CSI driver is not installed on the node")
SCALING_CASES: list[tuple[str, KubernetesVersion, bool | None, dict[str, int] | None, Any]] = [
    ("CSIDriver without preventPodSchedulingIfMissing", V137, False, None, None),
    ("driver not installed and preventPodSchedulingIfMissing", V137, True, None, NOT_INSTALLED),
    ("CSINode without the driver", V137, True, {GCE: 2}, NOT_INSTALLED),
    ("gate off (1.33): no driver presence check", V133, True, None, None),
    ("driver installed within limit", V137, True, {EBS: 2}, None),
    ("driver installed at its limit", V137, True, {EBS: 0}, EXCEEDED),
    ("no CSIDriver object", V137, None, None, None),
]


@pytest.mark.parametrize(
    ("name", "version", "prevent", "drivers", "want"),
    SCALING_CASES,
    ids=[c[0] for c in SCALING_CASES],
)
def test_volume_limit_scaling(
    name: str,
    version: KubernetesVersion,
    prevent: bool | None,
    drivers: dict[str, int] | None,
    want: Status | None,
) -> None:
    objects = [csi_pv("ebs-0"), bound("ebs-0", "ebs-0")]
    if prevent is not None:
        objects.append(csi_driver(EBS, prevent))
    if drivers is not None:
        objects.append(csi_node("node-1", drivers))
    handle = handle_for(objects)
    handle.features = SchedulerFeatures.of(version)
    plugin = new_node_volume_limits({}, handle)
    pod = vol_pod(claims=["ebs-0"])
    state = CycleState()
    assert plugin.pre_filter(state, pod, []) == (None, None)
    assert plugin.filter(state, pod, make_node_info(make_node("node-1"))) == want


CSI_CLUSTER = """
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {attachRequired: true, preventPodSchedulingIfMissing: true}
---
apiVersion: v1
kind: Node
metadata: {name: node-0}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: ebs-0}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: ebs.csi.aws.com, volumeHandle: ebs-0}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ebs-0, namespace: default, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
spec: {accessModes: [ReadWriteOnce], volumeName: ebs-0, storageClassName: ""}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: i}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: ebs-0}}]
"""


def test_a_loaded_csi_driver_keeps_pods_off_nodes_without_it(tmp_path: Any) -> None:
    """CSIDriver is a kind the manifests load: at 1.37 the pod waits for the driver."""
    path = tmp_path / "cluster.yaml"
    want = {
        "1.33": ("Scheduled", ""),
        "1.37": (
            "Unschedulable",
            f"0/1 nodes are available: 1 {EBS} CSI driver is not installed on the node. "
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        ),
    }
    for version, (result, message) in want.items():
        cluster = CSI_CLUSTER
        if version == "1.33":  # the field is 1.36's: a 1.33 API server refuses it
            cluster = cluster.replace(", preventPodSchedulingIfMissing: true", "")
        path.write_text(cluster)
        [pod] = simulate(str(path), kubernetes_version=version).pods
        assert (pod.result, pod.message) == (result, message), version
