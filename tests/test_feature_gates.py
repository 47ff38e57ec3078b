"""Feature gates per release, set as kube-scheduler's --feature-gates sets them
(k8s.io/component-base/featuregate)."""

from __future__ import annotations

import pytest

from wasmsched.release import (
    SUPPORTED_VERSIONS,
    FeatureGateError,
    FeatureGates,
    parse_feature_gates,
)
from wasmsched.release.feature_gates import gate_table

TABLE = gate_table()
GATES, DEPENDENCIES, RELEASES = TABLE.gates, TABLE.dependencies, TABLE.releases

V = {str(v): v for v in SUPPORTED_VERSIONS}


@pytest.mark.parametrize(
    ("release", "gate", "enabled"),
    [
        # The gates issue "Current Kubernetes" names, at the release that turned each on.
        ("1.33", "PodLevelResources", False),
        ("1.34", "PodLevelResources", True),
        ("1.33", "DynamicResourceAllocation", False),
        ("1.34", "DynamicResourceAllocation", True),
        ("1.34", "MatchLabelKeysInPodTopologySpreadSelectorMerge", True),
        ("1.35", "OpportunisticBatching", True),
        ("1.35", "NominatedNodeNameForExpectation", True),
        ("1.35", "ClearingNominatedNodeNameAfterBinding", True),
        ("1.35", "NodeDeclaredFeatures", False),
        ("1.36", "NodeDeclaredFeatures", True),
        ("1.37", "NodeDeclaredFeatures", True),
        ("1.37", "DRAConsumableCapacity", True),
        ("1.33", "SchedulerQueueingHints", True),
        ("1.33", "SchedulerAsyncPreemption", True),
    ],
)
def test_defaults_per_release(release: str, gate: str, enabled: bool) -> None:
    assert FeatureGates.for_release(V[release])[gate] is enabled


def test_a_gate_a_release_does_not_register_is_absent() -> None:
    gates = FeatureGates.for_release(V["1.33"])
    assert "OpportunisticBatching" not in gates
    assert "NodeDeclaredFeatures" not in gates
    assert "MatchLabelKeysInPodTopologySpreadSelectorMerge" not in gates
    with pytest.raises(FeatureGateError) as info:
        FeatureGates.for_release(V["1.33"], "OpportunisticBatching=true")
    assert str(info.value) == "--feature-gates: unrecognized feature gate: OpportunisticBatching"


@pytest.mark.parametrize(
    ("release", "text", "expected"),
    [
        ("1.34", "PodLevelResources=false", {"PodLevelResources": False}),
        ("1.33", "PodLevelResources=true,", {"PodLevelResources": True}),
        ("1.33", " PodLevelResources = 1 ", {"PodLevelResources": True}),
        (
            "1.36",
            "OpportunisticBatching=F,SchedulerAsyncPreemption=FALSE",
            {
                "OpportunisticBatching": False,
                "SchedulerAsyncPreemption": False,
            },
        ),
        (
            "1.37",
            "OpportunisticBatching=false,OpportunisticBatching=true",
            {
                "OpportunisticBatching": True,
            },
        ),
        # A locked gate may be "set" to its default.
        ("1.37", "NodeDeclaredFeatures=true", {"NodeDeclaredFeatures": True}),
    ],
)
def test_settings(release: str, text: str, expected: dict[str, bool]) -> None:
    gates = FeatureGates.for_release(V[release], text)
    assert {k: gates[k] for k in expected} == expected
    assert gates.changed() == {k: v for k, v in expected.items() if v != GATES[k][release][1]}


@pytest.mark.parametrize(
    ("release", "text", "message"),
    [
        ("1.37", "PodLevelResources", "missing bool value for PodLevelResources"),
        (
            "1.37",
            "PodLevelResources=yes",
            'invalid value of PodLevelResources=yes, err: strconv.ParseBool: parsing "yes": '
            "invalid syntax",
        ),
        ("1.37", "NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
        (
            "1.37",
            "NodeDeclaredFeatures=false",
            "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true",
        ),
        (
            "1.35",
            "DynamicResourceAllocation=false",
            "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        # From 1.35 a gate's dependants are checked: at 1.37 three default-on gates need
        # PodLevelResources, so kube-scheduler refuses to turn it off alone.
        (
            "1.37",
            "PodLevelResources=false",
            "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that "
            "are disabled: [PodLevelResources]; PodLevelResourcesFixDefaulting is enabled, but "
            "depends on features that are disabled: [PodLevelResources]; "
            "PodLevelResourcesFixKubeletQOSClass is enabled, but depends on features that are "
            "disabled: [PodLevelResources]",
        ),
    ],
)
def test_refusals(release: str, text: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as info:
        FeatureGates.for_release(V[release], text)
    assert str(info.value) == f"--feature-gates: {message}"


def test_dependencies_are_checked_from_1_35() -> None:
    # Find a gate with a dependency that can be switched off at 1.37.
    deps = DEPENDENCIES["1.37"]
    gate, needs = next(
        (g, n)
        for g, n in sorted(deps.items())
        if n and GATES[g]["1.37"][1] and not any(GATES[d]["1.37"][2] for d in n)
    )
    off = ",".join(f"{d}=false" for d in needs)
    with pytest.raises(FeatureGateError) as info:
        FeatureGates.for_release(V["1.37"], off)
    assert f"{gate} is enabled, but depends on features that are disabled: [" in str(info.value)
    # Switching the dependant off too is accepted.
    gates = FeatureGates.for_release(V["1.37"], f"{off},{gate}=false")
    assert gates[gate] is False
    assert DEPENDENCIES["1.33"] == {}


def test_all_alpha_and_all_beta_set_their_stage_but_not_named_gates() -> None:
    release = "1.37"
    alpha = [g for g, per in GATES.items() if per.get(release, ("",))[0] == "Alpha"]
    needed = {d for needs in DEPENDENCIES[release].values() for d in needs}
    named = next(g for g in alpha if g not in needed)
    gates = FeatureGates.for_release(V[release], f"AllAlpha=true,AllBeta=true,{named}=false")
    assert gates[named] is False
    assert all(gates[g] for g in alpha if g != named)
    beta_on = [g for g, per in GATES.items() if per.get(release) == ("Beta", True, False)]
    assert beta_on
    try:
        gates = FeatureGates.for_release(V[release], "AllBeta=false")
    except FeatureGateError as err:
        # Turning every beta gate off may leave a GA gate without its beta dependency.
        assert "depends on features that are disabled" in str(err)
    else:
        assert not any(gates[g] for g in beta_on)


def test_parse_feature_gates() -> None:
    assert parse_feature_gates("") == {}
    assert parse_feature_gates("A=true,,B=0") == {"A": True, "B": False}


def test_the_table_covers_every_modelled_release() -> None:
    assert tuple(str(v) for v in SUPPORTED_VERSIONS) == RELEASES
    for release in RELEASES:
        registered = [g for g, per in GATES.items() if release in per]
        # kube-scheduler registers a couple of hundred gates at every release.
        assert len(registered) > 150, release
        for gate in registered:
            stage, default, locked = GATES[gate][release]
            assert stage in {"PreAlpha", "Alpha", "Beta", "GA", "Deprecated"}, (gate, stage)
            if stage == "Alpha":
                assert not default or locked, gate
