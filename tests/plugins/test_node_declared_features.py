"""NodeDeclaredFeatures (nodedeclaredfeatures.go, v1.37.2) and the feature inference of
component-helpers/nodedeclaredfeatures (v0.37.2: framework.go InferForPodScheduling, the
features' InferForScheduling, featureset.go TryMap)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_node_info

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import NODE, POD, ActionType, ClusterEvent, QueueingHint
from wasmsched.plugins.node_declared_features import (
    REGISTERED_FEATURES,
    NodeDeclaredFeatures,
    infer_for_scheduling,
    node_feature_set,
)
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))
RESTART_ALL = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"
BIND = "VolumeBindMountOptions"
ERR = "node(s) didn't match Pod's required features"
RULE = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


def pod(name: str = "p", uid: str | None = None, **spec: Any) -> Pod:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "img"}], **spec}
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if uid is not None:
        metadata["uid"] = uid
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body})


def node(name: str, declared: list[str] | None = None) -> Node:
    base = make_node(name)
    manifest = dict(base.manifest)
    if declared is not None:
        manifest["status"] = {**manifest["status"], "declaredFeatures": declared}
    return Node(manifest)


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "img", **fields}


MOUNT_WITH_OPTIONS = {"name": "v", "mountPath": "/v", "bindMountOptions": ["noexec"]}

INFER_CASES = [
    ("plain pod", pod(), set()),
    (
        "container restart rule RestartAllContainers",
        pod(containers=[container(restartPolicy="Never", restartPolicyRules=[RULE])]),
        {RESTART_ALL},
    ),
    (
        "init container restart rule",
        pod(initContainers=[container(restartPolicy="Never", restartPolicyRules=[RULE])]),
        {RESTART_ALL},
    ),
    (
        "another restart action",
        pod(containers=[container(restartPolicyRules=[{**RULE, "action": "Restart"}])]),
        set(),
    ),
    ("hostNetwork with hostUsers false", pod(hostNetwork=True, hostUsers=False), {USERNS}),
    ("hostNetwork with hostUsers true", pod(hostNetwork=True, hostUsers=True), set()),
    ("hostNetwork with hostUsers unset", pod(hostNetwork=True), set()),
    ("hostUsers false without hostNetwork", pod(hostUsers=False), set()),
    (
        "container bindMountOptions",
        pod(containers=[container(volumeMounts=[MOUNT_WITH_OPTIONS])]),
        {BIND},
    ),
    (
        "ephemeral container bindMountOptions",
        pod(ephemeralContainers=[container(volumeMounts=[MOUNT_WITH_OPTIONS])]),
        {BIND},
    ),
    (
        "empty bindMountOptions",
        pod(containers=[container(volumeMounts=[{**MOUNT_WITH_OPTIONS, "bindMountOptions": []}])]),
        set(),
    ),
    (
        "all three",
        pod(
            hostNetwork=True,
            hostUsers=False,
            containers=[
                container(restartPolicyRules=[RULE], volumeMounts=[MOUNT_WITH_OPTIONS]),
            ],
        ),
        {RESTART_ALL, USERNS, BIND},
    ),
]


@pytest.mark.parametrize(
    ("p", "want"), [c[1:] for c in INFER_CASES], ids=[c[0] for c in INFER_CASES]
)
def test_infer_for_scheduling(p: Pod, want: set[str]) -> None:
    assert infer_for_scheduling(p, KubernetesVersion(1, 37)) == want


def test_registered_features_are_sorted_like_the_framework() -> None:
    # framework.go New sorts the registry by name; registry.go AllFeatures has nine.
    assert list(REGISTERED_FEATURES) == sorted(REGISTERED_FEATURES)
    assert len(REGISTERED_FEATURES) == 9


@pytest.mark.parametrize(
    ("declared", "want"),
    [
        ([], set()),
        ([RESTART_ALL, BIND], {RESTART_ALL, BIND}),
        (["AAA-unknown", RESTART_ALL, "Zzz"], {RESTART_ALL}),
        # TryMap merges against the sorted registry: an unsorted list loses what it skips.
        ([BIND, RESTART_ALL], {BIND}),
    ],
    ids=["none", "two", "unknown ignored", "unsorted"],
)
def test_node_feature_set(declared: list[str], want: set[str]) -> None:
    assert node_feature_set(declared) == want


RESTARTING = pod(containers=[container(restartPolicy="Never", restartPolicyRules=[RULE])])


@pytest.mark.parametrize(
    ("declared", "want"),
    [
        ([RESTART_ALL], None),
        ([RESTART_ALL, USERNS], None),
        (
            [USERNS],
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ERR,
            ),
        ),
        (None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR)),
    ],
    ids=["declared", "declared among others", "another feature", "nothing declared"],
)
def test_filter(declared: list[str] | None, want: Status | None) -> None:
    plugin = NodeDeclaredFeatures(FakeHandle(features=V137))
    ni = make_node_info(node("n1", declared))
    state = CycleState()
    assert plugin.pre_filter(state, RESTARTING, [ni]) == (None, None)
    assert plugin.filter(state, RESTARTING, ni) == want


def test_pre_filter_skips_a_pod_without_requirements() -> None:
    plugin = NodeDeclaredFeatures(FakeHandle(features=V137))
    _, status = plugin.pre_filter(CycleState(), pod(), [])
    assert status is not None and status.code == Code.SKIP


def test_disabled_without_the_gate() -> None:
    # nodedeclaredfeatures.go New: without NodeDeclaredFeatures the plugin does nothing.
    plugin = NodeDeclaredFeatures(FakeHandle(features=V133))
    _, status = plugin.pre_filter(CycleState(), RESTARTING, [])
    assert status is not None and status.code == Code.SKIP
    assert plugin.filter(CycleState(), RESTARTING, make_node_info(node("n1"))) is None
    assert plugin.events_to_register() == []


def test_events_and_hints() -> None:
    plugin = NodeDeclaredFeatures(FakeHandle(features=V137))
    node_event, pod_event = plugin.events_to_register()
    assert node_event.event == ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE)
    assert pod_event.event == ClusterEvent(POD, ActionType.UPDATE)
    node_hint, pod_hint = node_event.hint, pod_event.hint
    assert node_hint is not None and pod_hint is not None
    old, same, grown = node("n1", [USERNS]), node("n1", [USERNS]), node("n1", [RESTART_ALL, USERNS])
    assert node_hint(RESTARTING, None, old) == QueueingHint.QUEUE
    assert node_hint(RESTARTING, old, same) == QueueingHint.QUEUE_SKIP
    assert node_hint(RESTARTING, old, grown) == QueueingHint.QUEUE
    target = pod(uid="u1")
    changed = pod(uid="u1", hostNetwork=True, hostUsers=False)
    assert pod_hint(target, target, changed) == QueueingHint.QUEUE
    assert pod_hint(target, target, pod(uid="u1", hostUsers=False)) == QueueingHint.QUEUE_SKIP
    assert pod_hint(target, pod(uid="u2"), pod(uid="u2", hostNetwork=True, hostUsers=False)) == (
        QueueingHint.QUEUE_SKIP
    )


def test_sign_pod_writes_the_required_set_as_a_bitmap() -> None:
    # SignPod (nodedeclaredfeatures.go): FeatureSet.String, one character per registered
    # feature in name order (bitmap.go: String).
    plugin = NodeDeclaredFeatures(FakeHandle(features=V137))
    ((key, bits),) = plugin.sign_pod(RESTARTING)
    assert key == "v1.Pod.Spec.RequiredFeatures()"
    assert bits == "".join("1" if n == RESTART_ALL else "0" for n in REGISTERED_FEATURES)
    assert plugin.sign_pod(pod()) == [(key, "0" * 9)]
