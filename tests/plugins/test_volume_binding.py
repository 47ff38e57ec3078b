"""VolumeBinding: claim lookup, binding modes, PV node affinity, static matching, the
assume cache and what the simulator does not do (cases after volume_binding_test.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from conftest import make_node_info
from volume_support import WFFC, handle_for, pv, pvc, storage_class, vol_pod, zone_node

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import QueueingHint
from wasmsched.plugins.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    UNBOUND_IMMEDIATE,
    StorageObjects,
    VolumeBinding,
    check_node_affinity,
    is_schedulable_after_pvc_change,
    is_schedulable_after_storage_class_change,
    new,
    topology_terms_match,
)

U3 = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
IMMEDIATE_SC = storage_class("immediate-sc")
WAIT_SC = storage_class("wait-sc", WFFC)
NODE_A = zone_node("node-a", {"foo": "bar"})

# (name, pod claims, objects, PreFilter status, Filter status on node-a)
CASES: list[tuple[str, list[str], list[dict[str, Any]], Status | None, Status | None]] = [
    (
        "all bound",
        ["pvc-a"],
        [pvc("pvc-a", "", volume="pv-a", bound=True), pv("pv-a")],
        None,
        None,
    ),
    (
        "bound by status phase only",
        ["pvc-a"],
        [pvc("pvc-a", "", volume="pv-a", phase="Bound"), pv("pv-a")],
        None,
        None,
    ),
    (
        "all bound with local volumes",
        ["pvc-a", "pvc-b"],
        [
            pvc("pvc-a", WAIT_SC["metadata"]["name"], volume="pv-a", bound=True),
            pvc("pvc-b", "wait-sc", volume="pv-b", bound=True),
            pv("pv-a", "wait-sc", affinity={"foo": ["bar"]}),
            pv("pv-b", "wait-sc", affinity={"foo": ["bar"]}),
            WAIT_SC,
        ],
        None,
        None,
    ),
    (
        "PVC does not exist",
        ["pvc-a"],
        [],
        Status(U3, 'persistentvolumeclaim "pvc-a" not found'),
        None,
    ),
    (
        "Part of PVCs do not exist",
        ["pvc-a", "pvc-b"],
        [pvc("pvc-a", "", volume="pv-a", bound=True), pv("pv-a")],
        Status(U3, 'persistentvolumeclaim "pvc-b" not found'),
        None,
    ),
    (
        "immediate claims not bound",
        ["pvc-a"],
        [pvc("pvc-a", "immediate-sc"), IMMEDIATE_SC],
        Status(U3, UNBOUND_IMMEDIATE),
        None,
    ),
    (
        "claim of a missing class is immediate",
        ["pvc-a"],
        [pvc("pvc-a", "no-such-class")],
        Status(U3, UNBOUND_IMMEDIATE),
        None,
    ),
    (
        "pre-bound claim (volumeName, not bound yet) is immediate",
        ["pvc-a"],
        [pvc("pvc-a", "wait-sc", volume="pv-a"), pv("pv-a", "wait-sc"), WAIT_SC],
        Status(U3, UNBOUND_IMMEDIATE),
        None,
    ),
    # status.phase Bound without the annotation: bound only where the PV controller would
    # have bound it (pv_controller.go: syncUnboundClaim); found by the reference
    # (tests/reference_cases/claim_names_missing_pv).
    (
        "Bound phase, PV unclaimed: bound",
        ["pvc-a"],
        [pvc("pvc-a", "immediate-sc", volume="pv-a", phase="Bound"), pv("pv-a"), IMMEDIATE_SC],
        None,
        None,
    ),
    (
        "Bound phase, PV missing: unbound immediate",
        ["pvc-a"],
        [pvc("pvc-a", "immediate-sc", volume="pv-a", phase="Bound"), IMMEDIATE_SC],
        Status(U3, UNBOUND_IMMEDIATE),
        None,
    ),
    (
        "Bound phase, PV claimed by another claim: unbound immediate",
        ["pvc-a"],
        [
            pvc("pvc-a", "immediate-sc", volume="pv-a", phase="Bound"),
            pv("pv-a", claim="pvc-b"),
            IMMEDIATE_SC,
        ],
        Status(U3, UNBOUND_IMMEDIATE),
        None,
    ),
    (
        "lost claim",
        ["pvc-a"],
        [pvc("pvc-a", "", volume="pv-a", phase="Lost")],
        Status(U3, 'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
        None,
    ),
    (
        "unbound claims no matches",
        ["pvc-a"],
        [pvc("pvc-a", "wait-sc"), WAIT_SC],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "bound and unbound unsatisfied",
        ["pvc-a", "pvc-b"],
        [
            pvc("pvc-a", "wait-sc", volume="pv-a", bound=True),
            pvc("pvc-b", "wait-sc"),
            pv("pv-a", "wait-sc", affinity={"foo": ["barbar"]}),
            WAIT_SC,
        ],
        None,
        Status(U3, ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "pv not found",
        ["pvc-a"],
        [pvc("pvc-a", "", volume="pv-a", bound=True)],
        None,
        Status(U3, ERR_REASON_PV_NOT_EXIST),
    ),
    (
        "unbound claim matches an available local PV",
        ["pvc-a"],
        [
            pvc("pvc-a", "wait-sc", storage="1Gi"),
            pv("pv-a", "wait-sc", affinity={"foo": ["bar"]}),
            WAIT_SC,
        ],
        None,
        None,
    ),
    (
        "the only PV is on another node",
        ["pvc-a"],
        [pvc("pvc-a", "wait-sc"), pv("pv-a", "wait-sc", affinity={"foo": ["baz"]}), WAIT_SC],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "the PV is too small",
        ["pvc-a"],
        [pvc("pvc-a", "wait-sc", storage="2Gi"), pv("pv-a", "wait-sc", capacity="1Gi"), WAIT_SC],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "the PV lacks the access mode",
        ["pvc-a"],
        [
            pvc("pvc-a", "wait-sc", modes=["ReadWriteMany"]),
            pv("pv-a", "wait-sc"),
            WAIT_SC,
        ],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "the PV is not Available",
        ["pvc-a"],
        [pvc("pvc-a", "wait-sc"), pv("pv-a", "wait-sc", phase="Released"), WAIT_SC],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "the PV is claimed by another claim",
        ["pvc-a"],
        [pvc("pvc-a", "wait-sc"), pv("pv-a", "wait-sc", claim="other"), WAIT_SC],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "a PV pre-bound to the claim is taken whatever its phase",
        ["pvc-a"],
        [pvc("pvc-a", "wait-sc"), pv("pv-a", "wait-sc", claim="pvc-a", phase="Pending"), WAIT_SC],
        None,
        None,
    ),
    (
        "the claim selector does not match the PV labels",
        ["pvc-a"],
        [
            pvc("pvc-a", "wait-sc", selector={"matchLabels": {"tier": "fast"}}),
            pv("pv-a", "wait-sc", labels={"tier": "slow"}),
            WAIT_SC,
        ],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "selected node annotation for another node",
        ["pvc-a"],
        [
            pvc("pvc-a", "wait-sc", annotations={"volume.kubernetes.io/selected-node": "node-b"}),
            WAIT_SC,
        ],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "dynamic provisioning is not simulated",
        ["pvc-a"],
        [pvc("pvc-a", "csi-sc"), storage_class("csi-sc", WFFC, "ebs.csi.aws.com")],
        None,
        Status(
            U3, "wasmsched: dynamic provisioning of PersistentVolumeClaim pvc-a is not simulated"
        ),
    ),
    (
        "provisioning excluded by the class's allowed topologies",
        ["pvc-a"],
        [
            pvc("pvc-a", "csi-sc"),
            storage_class("csi-sc", WFFC, "ebs.csi.aws.com", allowed_topologies=[{"foo": ["x"]}]),
        ],
        None,
        Status(U3, ERR_REASON_BIND_CONFLICT),
    ),
    (
        "the default class applies to a claim that names none",
        ["pvc-a"],
        [
            pvc("pvc-a", None),
            pv("pv-a", "local", affinity={"foo": ["bar"]}),
            storage_class("local", WFFC, default=True),
        ],
        None,
        None,
    ),
    (
        "generic ephemeral volume not created yet",
        [],
        [],
        Status(
            U3,
            "waiting for ephemeral volume controller to create the persistentvolumeclaim "
            '"p-scratch"',
        ),
        None,
    ),
]


@pytest.mark.parametrize(
    ("claims", "objects", "pre_filter_status", "filter_status"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_volume_binding(
    claims: list[str],
    objects: list[dict[str, Any]],
    pre_filter_status: Status | None,
    filter_status: Status | None,
) -> None:
    ephemeral = ["scratch"] if not claims else []
    pod = vol_pod(claims=claims, ephemeral=ephemeral)
    plugin = VolumeBinding(handle_for(objects))
    state = CycleState()
    ni = make_node_info(NODE_A)
    _, status = plugin.pre_filter(state, pod, [ni])
    assert status == pre_filter_status
    if status is not None:
        return
    assert plugin.filter(state, pod, ni) == filter_status


def test_pod_without_claims_is_skipped_and_reserve_is_free() -> None:
    plugin = VolumeBinding(handle_for())
    state = CycleState()
    pod = vol_pod(volumes=[{"name": "tmp", "emptyDir": {}}])
    _, status = plugin.pre_filter(state, pod, [])
    assert status is not None and status.code == Code.SKIP
    assert plugin.reserve(state, pod, "node-a") is None
    assert plugin.pre_bind(state, pod, "node-a") is None


def test_ephemeral_claim_must_be_owned_by_the_pod() -> None:
    pod = vol_pod(ephemeral=["scratch"], uid="pod-uid")
    objects = [
        pvc("p-scratch", "", volume="pv-a", bound=True, owner_uid="someone-else"),
        pv("pv-a"),
    ]
    _, status = VolumeBinding(handle_for(objects)).pre_filter(CycleState(), pod, [])
    assert status == Status(
        U3, "PVC default/p-scratch was not created for pod default/p (pod is not owner)"
    )
    owned = [pvc("p-scratch", "", volume="pv-a", bound=True, owner_uid="pod-uid"), pv("pv-a")]
    assert VolumeBinding(handle_for(owned)).pre_filter(CycleState(), pod, []) == (None, None)


def test_smallest_matching_pv_is_chosen_and_assumed_at_reserve() -> None:
    objects = [
        pvc("pvc-a", "wait-sc", storage="1Gi"),
        pvc("pvc-b", "wait-sc", storage="1Gi"),
        pv("big", "wait-sc", capacity="10Gi"),
        pv("small", "wait-sc", capacity="2Gi"),
        WAIT_SC,
    ]
    plugin = VolumeBinding(handle_for(objects))
    ni = make_node_info(NODE_A)

    first = vol_pod("first", claims=["pvc-a"])
    state = CycleState()
    assert plugin.pre_filter(state, first, [ni]) == (None, None)
    assert plugin.filter(state, first, ni) is None
    assert state.read("VolumeBinding").pod_volumes_by_node["node-a"].static_bindings == [
        ("default/pvc-a", "small")
    ]
    assert plugin.reserve(state, first, "node-a") is None
    assert plugin.pre_bind(state, first, "node-a") is None

    # The claim now counts as bound to "small"; the next claim gets "big".
    assert plugin.bound_volume("default/pvc-a", objects[0], StorageObjects()) == "small"
    second = vol_pod("second", claims=["pvc-b"])
    state2 = CycleState()
    plugin.pre_filter(state2, second, [ni])
    assert plugin.filter(state2, second, ni) is None
    assert state2.read("VolumeBinding").pod_volumes_by_node["node-a"].static_bindings == [
        ("default/pvc-b", "big")
    ]

    # A pod sharing the first claim sees it bound.
    again = vol_pod("again", claims=["pvc-a"])
    state3 = CycleState()
    plugin.pre_filter(state3, again, [ni])
    assert state3.read("VolumeBinding").bound_claims == [objects[0]]


def test_unreserve_reverts_the_assumed_binding() -> None:
    objects = [pvc("pvc-a", "wait-sc"), pv("pv-a", "wait-sc"), WAIT_SC]
    plugin = VolumeBinding(handle_for(objects))
    ni = make_node_info(NODE_A)
    pod = vol_pod(claims=["pvc-a"])
    state = CycleState()
    plugin.pre_filter(state, pod, [ni])
    plugin.filter(state, pod, ni)
    plugin.reserve(state, pod, "node-a")
    assert plugin.bound_volume("default/pvc-a", objects[0], StorageObjects()) == "pv-a"
    plugin.unreserve(state, pod, "node-a")
    assert plugin.bound_volume("default/pvc-a", objects[0], StorageObjects()) == ""


def test_pre_bind_without_filter_result_is_an_error() -> None:
    objects = [pvc("pvc-a", "wait-sc"), pv("pv-a", "wait-sc"), WAIT_SC]
    plugin = VolumeBinding(handle_for(objects))
    ni = make_node_info(NODE_A)
    pod = vol_pod(claims=["pvc-a"])
    state = CycleState()
    plugin.pre_filter(state, pod, [ni])
    plugin.filter(state, pod, ni)
    plugin.reserve(state, pod, "node-a")
    assert plugin.pre_bind(state, pod, "node-b") == Status(
        Code.ERROR, 'no pod volumes found for node "node-b"'
    )


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        (pvc("c", ""), ""),
        (pvc("c", "gold"), "gold"),
        (pvc("c", None), "std"),
        (pvc("c", "gold", annotations={"volume.beta.kubernetes.io/storage-class": "beta"}), "beta"),
    ],
)
def test_claim_class(claim: dict[str, Any], want: str) -> None:
    storage = StorageObjects(classes=[storage_class("std", default=True), storage_class("gold")])
    assert storage.claim_class(claim) == want


@pytest.mark.parametrize(
    ("affinity", "labels", "want"),
    [
        (None, {}, True),
        ({"foo": ["bar"]}, {"foo": "bar"}, True),
        ({"foo": ["bar"]}, {"foo": "baz"}, False),
        ({"foo": ["bar"]}, {}, False),
    ],
)
def test_check_node_affinity(
    affinity: Mapping[str, list[str]] | None, labels: dict[str, str], want: bool
) -> None:
    assert check_node_affinity(pv("pv", affinity=affinity), labels) is want


@pytest.mark.parametrize(
    ("terms", "labels", "want"),
    [
        (None, {}, True),
        ([], {"a": "1"}, True),
        ([{"matchLabelExpressions": [{"key": "a", "values": ["1"]}]}], {"a": "1"}, True),
        ([{"matchLabelExpressions": [{"key": "a", "values": ["1"]}]}], {"a": "2"}, False),
        (
            [
                {"matchLabelExpressions": [{"key": "a", "values": ["9"]}]},
                {"matchLabelExpressions": [{"key": "b", "values": ["2"]}]},
            ],
            {"a": "1", "b": "2"},
            True,
        ),
    ],
)
def test_topology_terms_match(terms: Any, labels: dict[str, str], want: bool) -> None:
    assert topology_terms_match(terms, labels) is want


def test_queueing_hints() -> None:
    pod = vol_pod(claims=["pvc-a"])
    assert is_schedulable_after_pvc_change(pod, None, pvc("pvc-a")) == QueueingHint.QUEUE
    assert is_schedulable_after_pvc_change(pod, None, pvc("other")) == QueueingHint.QUEUE_SKIP
    assert (
        is_schedulable_after_pvc_change(pod, None, pvc("pvc-a", namespace="x"))
        == QueueingHint.QUEUE_SKIP
    )
    sc = storage_class("sc")
    assert is_schedulable_after_storage_class_change(pod, None, sc) == QueueingHint.QUEUE
    assert is_schedulable_after_storage_class_change(pod, sc, sc) == QueueingHint.QUEUE_SKIP
    topo = storage_class("sc", allowed_topologies=[{"a": ["1"]}])
    assert is_schedulable_after_storage_class_change(pod, sc, topo) == QueueingHint.QUEUE
    events = {e.event.resource for e in new({}, handle_for()).events_to_register()}
    assert {"PersistentVolumeClaim", "PersistentVolume", "Node"} <= events
