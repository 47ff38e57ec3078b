"""The differential suite's generator (tests/reference_gen.py) per release: the inputs only
1.37 has are drawn for 1.37 alone, what it draws is valid at its release, and 1.33's schema
refuses some of it (so drawing it for 1.33 would test nothing but the loader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_diff_run import draw_cases
from reference_gen import BATCHING, NEWER_INPUTS
from reference_support import V133, V137, Case
from wasmsched.api.manifests import load_manifests
from wasmsched.errors import InputError

NEEDS = ["needs-restart-all-containers", "needs-host-network-userns", "needs-bind-mount-options"]
# Hypothesis draws are not independent across one seed's cases: this one has every input.
SEED = 38
COUNT = 30


@pytest.fixture(scope="module")
def drawn_137() -> list[Case]:
    return draw_cases(SEED, COUNT, version=V137.version)


def test_1_33_cases_have_none_of_the_newer_inputs() -> None:
    cases = draw_cases(SEED, 12, version=V133.version)
    newer = {*NEWER_INPUTS, *NEEDS, BATCHING}
    assert not [c.name for c in cases if c.features & newer]


def test_1_37_cases_have_each_newer_input(drawn_137: list[Case]) -> None:
    seen = set().union(*(c.features for c in drawn_137))
    assert {*NEWER_INPUTS, *NEEDS, BATCHING} <= seen


def test_1_37_cases_are_valid_1_37_objects(drawn_137: list[Case], tmp_path: Path) -> None:
    for case in drawn_137:
        case.write(tmp_path / case.name)
        load_manifests(tmp_path / case.name / "cluster.yaml", kubernetes_version=V137.version)


def test_1_33_schema_refuses_some_1_37_cases(drawn_137: list[Case], tmp_path: Path) -> None:
    refused = 0
    for case in drawn_137:
        case.write(tmp_path / case.name)
        try:
            load_manifests(tmp_path / case.name / "cluster.yaml", kubernetes_version=V133.version)
        except InputError:
            refused += 1
    assert refused > 0


def test_batching_runs_are_identical_pods(drawn_137: list[Case]) -> None:
    batching = [c for c in drawn_137 if BATCHING in c.features]
    assert batching
    for case in batching:
        replicas = [
            d
            for d in case.docs
            if d["kind"] == "Pod" and d["metadata"]["name"].startswith("replica-")
        ]
        assert len(replicas) >= 2
        specs = {repr(r["spec"]) for r in replicas}
        assert len(specs) == 1
        # NodeNumber (a wasm guest, no SignPod) would turn batching off.
        assert "NodeNumber" not in repr(case.config)
