"""VolumeBinding's Score under StorageCapacityScoring (1.37): the shape the config loader
defaults, the class scorer (cases of scorer_test.go: TestScore) and the plugin's static
binding scores (volume_binding_test.go: "storage capacity score")."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_node_info
from volume_support import WFFC, handle_for, pv, pvc, storage_class, vol_pod, zone_node

from wasmsched.config import default_config
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import PRE_SCORE, SCORE, implements
from wasmsched.framework.status import Code
from wasmsched.plugins.resource_allocation import requested_to_capacity_ratio_score
from wasmsched.plugins.volume_binding import new
from wasmsched.plugins.volume_binding.plugin import class_resources_score
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))
DEFAULT_SHAPE = [(0, 10), (100, 0)]
CUSTOM_SHAPE = [(50, 0), (80, 3), (100, 5)]  # scorer_test.go's {50,0},{80,30},{100,50}


def _volume_binding_args(features: SchedulerFeatures) -> dict[str, Any]:
    [profile] = default_config(features).profiles
    return dict(profile.plugin_args["VolumeBinding"])


def test_shape_is_defaulted_only_under_storage_capacity_scoring() -> None:
    assert _volume_binding_args(V137)["shape"] == [
        {"utilization": 0, "score": 10},
        {"utilization": 100, "score": 0},
    ]
    assert "shape" not in _volume_binding_args(V133)


@pytest.mark.parametrize(
    ("shape", "classes", "want"),
    [
        (DEFAULT_SHAPE, [(0, 100)], 100),
        (DEFAULT_SHAPE, [(30, 100)], 70),
        (DEFAULT_SHAPE, [(50, 100)], 50),
        (DEFAULT_SHAPE, [(100, 100)], 0),
        (DEFAULT_SHAPE, [(0, 100), (0, 100)], 100),
        (DEFAULT_SHAPE, [(0, 100), (30, 100)], 85),
        (DEFAULT_SHAPE, [(30, 100), (30, 100)], 70),
        (DEFAULT_SHAPE, [(30, 100), (60, 100)], 55),
        (DEFAULT_SHAPE, [(50, 100), (50, 100)], 50),
        (DEFAULT_SHAPE, [(50, 100), (100, 100)], 25),
        (DEFAULT_SHAPE, [(100, 100), (100, 100)], 0),
        (CUSTOM_SHAPE, [(0, 100), (0, 100)], 0),
        (CUSTOM_SHAPE, [(0, 100), (30, 100)], 0),
        (CUSTOM_SHAPE, [(30, 100), (30, 100)], 0),
        (CUSTOM_SHAPE, [(30, 100), (60, 100)], 5),
        (CUSTOM_SHAPE, [(50, 100), (100, 100)], 25),
        (CUSTOM_SHAPE, [(90, 100), (90, 100)], 40),
        (CUSTOM_SHAPE, [(100, 100), (100, 100)], 50),
        # over capacity, or none, scores as full (scorer.go: buildScorerFunction)
        (DEFAULT_SHAPE, [(200, 100)], 0),
        (DEFAULT_SHAPE, [(0, 0)], 0),
        (DEFAULT_SHAPE, [], 0),
    ],
)
def test_class_resources_score(
    shape: list[tuple[int, int]], classes: list[tuple[int, int]], want: int
) -> None:
    score = requested_to_capacity_ratio_score(shape)
    assert class_resources_score(score, [list(c) for c in classes]) == want


WAIT_SC = storage_class("wait-sc", WFFC)
FAST_SC = storage_class("fast-sc", WFFC)
NODES = [zone_node("node-a", {"zone": "a"}), zone_node("node-b", {"zone": "b"})]


def _scores(
    objects: list[dict[str, Any]], claims: list[str], features: SchedulerFeatures
) -> dict[str, int]:
    handle = handle_for(objects)
    handle.features = features
    plugin = new({"shape": [{"utilization": u, "score": s} for u, s in DEFAULT_SHAPE]}, handle)
    assert implements(plugin, SCORE) == implements(plugin, PRE_SCORE)
    if not implements(plugin, SCORE):
        return {}
    pod = vol_pod(claims=claims)
    infos = [make_node_info(n) for n in NODES]
    state = CycleState()
    assert plugin.pre_filter(state, pod, infos) == (None, None)
    feasible = [ni for ni in infos if plugin.filter(state, pod, ni) is None]
    assert plugin.pre_score(state, pod, feasible) is None  # type: ignore[attr-defined]
    out: dict[str, int] = {}
    for ni in feasible:
        score, status = plugin.score(state, pod, ni)  # type: ignore[attr-defined]
        assert status is None
        out[ni.name] = score
    return out


ZONAL_PVS = [
    pv("pv-a-50g", "wait-sc", capacity="50Gi", affinity={"zone": ["a"]}),
    pv("pv-b-100g", "wait-sc", capacity="100Gi", affinity={"zone": ["b"]}),
    pv("fast-a-100g", "fast-sc", capacity="100Gi", affinity={"zone": ["a"]}),
    pv("fast-b-40g", "fast-sc", capacity="40Gi", affinity={"zone": ["b"]}),
]


@pytest.mark.parametrize(
    ("name", "claims", "want"),
    [
        # one class: the emptier PV's node wins (50/50 -> 0, 50/100 -> 50)
        ("one claim", [pvc("data", "wait-sc", storage="50Gi")], {"node-a": 0, "node-b": 50}),
        # two classes: the mean of the class scores, rounded half away from zero
        (
            "two classes",
            [pvc("data", "wait-sc", storage="25Gi"), pvc("fast", "fast-sc", storage="30Gi")],
            # node-a: 25/50 -> 50, 30/100 -> 70: 60; node-b: 25/100 -> 75, 30/40 -> 25: 50
            {"node-a": 60, "node-b": 50},
        ),
        # a claim already bound is not the pod's new volume: nothing to score
        (
            "all bound",
            [pvc("data", "wait-sc", storage="50Gi", volume="pv-b-100g", bound=True)],
            {"node-b": 0},
        ),
    ],
)
def test_static_bindings_score_at_137(
    name: str, claims: list[dict[str, Any]], want: dict[str, int]
) -> None:
    objects = [WAIT_SC, FAST_SC, *ZONAL_PVS, *claims]
    names = [c["metadata"]["name"] for c in claims]
    assert _scores(objects, names, V137) == want


def test_no_score_before_storage_capacity_scoring() -> None:
    objects = [WAIT_SC, *ZONAL_PVS, pvc("data", "wait-sc", storage="50Gi")]
    assert _scores(objects, ["data"], V133) == {}


def test_a_pod_without_claims_scores_zero() -> None:
    """kube's PreFilter writes an empty state for it and Skips; PreScore and Score still
    run (volume_binding.go), and every node scores 0."""
    handle = handle_for([WAIT_SC, *ZONAL_PVS])
    handle.features = V137
    plugin = new({}, handle)
    pod = vol_pod()
    infos = [make_node_info(n) for n in NODES]
    state = CycleState()
    assert plugin.pre_filter(state, pod, infos)[1].code == Code.SKIP  # type: ignore[union-attr]
    assert plugin.pre_score(state, pod, infos) is None  # type: ignore[attr-defined]
    assert [plugin.score(state, pod, ni) for ni in infos] == [(0, None), (0, None)]  # type: ignore[attr-defined]
