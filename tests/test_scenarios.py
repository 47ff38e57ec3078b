"""Runs every scenario in tests/scenarios (format: tests/scenarios/README.md).

The expectations are kube-scheduler v1.33's: each scenario runs as 1.33, whatever the
default release; tests/test_reference.py checks them against the reference at 1.33 and 1.37.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from wasmsched.api.manifests import load_manifests
from wasmsched.config import default_config, load_config
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.simulation import Simulation

SCENARIOS = Path(__file__).parent / "scenarios"
# The release whose behaviour the scenarios' expectations state.
SCENARIO_VERSION = KubernetesVersion(1, 33)
EXPECT = re.compile(
    r"^(?P<pod>\S+)\s*->\s*(?P<where>Unschedulable|Error|[^\s(:]+)"
    r"(?::\s*(?P<message>.*?))?(?:\s*\(preempts (?P<victims>[^)]*)\))?\s*$"
)


@dataclass
class Expectation:
    pod: str
    where: str
    message: str | None
    victims: list[str] | None


@dataclass
class Scenario:
    path: Path
    rule: str = ""
    config: Path | None = None
    seed: int = 0
    expectations: list[Expectation] = field(default_factory=list)


def parse(path: Path) -> Scenario:
    scenario = Scenario(path)
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            if line.strip() and not line.startswith("---"):
                break
            continue
        key, _, value = line[1:].strip().partition(":")
        value = value.strip()
        if key == "rule":
            scenario.rule = value
        elif key == "config":
            scenario.config = path.parent / value
        elif key == "seed":
            scenario.seed = int(value)
        elif key == "expect":
            m = EXPECT.match(value)
            if m is None:
                raise ValueError(f"{path.name}: cannot parse expectation {value!r}")
            victims = m["victims"]
            scenario.expectations.append(
                Expectation(
                    m["pod"],
                    m["where"],
                    m["message"],
                    [v.strip() for v in victims.split(",")] if victims else None,
                )
            )
    return scenario


def scenario_files() -> list[Path]:
    return sorted(p for p in SCENARIOS.glob("*.yaml") if not p.name.endswith(".config.yaml"))


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    scenario = parse(path)
    assert scenario.rule, f"{path.name}: every scenario states its rule"
    registry = default_registry()
    features = SchedulerFeatures.of(SCENARIO_VERSION)
    if scenario.config is not None:
        config = load_config(scenario.config, registry, features)
    else:
        config = default_config(features)
    objects = load_manifests(path, kubernetes_version=SCENARIO_VERSION)
    sim = Simulation(objects, config, registry, seed=scenario.seed)
    try:
        result = sim.run()
    finally:
        sim.close()
    outcomes = {o.pod.name: o for o in result.outcomes}
    pending = {p.name for p in objects.pods if not p.node_name}
    expected = {e.pod for e in scenario.expectations}
    assert expected == pending, f"{path.name}: expectations must cover every pending pod"
    for e in scenario.expectations:
        o = outcomes[e.pod]
        if e.where in ("Unschedulable", "Error"):
            assert o.result == e.where, f"{e.pod}: {o.result} on {o.node}: {o.message}"
            if e.message is not None:
                assert o.message == e.message, f"{e.pod}"
        else:
            assert (o.result, o.node) == ("Scheduled", e.where), f"{e.pod}: {o.message}"
        if e.victims is not None:
            preempted = sorted(
                p.victim for p in result.preemptions if p.preemptor.rsplit("/", 1)[-1] == e.pod
            )
            assert preempted == sorted(e.victims), f"{e.pod} preempted {preempted}"


@pytest.mark.parametrize(("gates", "node", "seconds"), [("", "big", 0.0), ("false", "small", 1.0)])
def test_preemptor_retried_at_once_only_pops_from_backoff_with_the_gate(
    gates: str, node: str, seconds: float
) -> None:
    """preemption_preemptor_retried_at_once with SchedulerPopFromBackoffQ=false: the
    preemptor waits out its 1 s backoff, by when its nominatedNodeName has reached the
    queue, so its retry tries the nominated node first (schedule_one.go:
    evaluateNominatedNode), as the reference does with the gate off."""
    features = SchedulerFeatures.of(
        SCENARIO_VERSION, f"SchedulerPopFromBackoffQ={gates}" if gates else ""
    )
    path = SCENARIOS / "preemption_preemptor_retried_at_once.yaml"
    objects = load_manifests(path, kubernetes_version=SCENARIO_VERSION)
    sim = Simulation(objects, default_config(features), default_registry())
    try:
        result = sim.run()
    finally:
        sim.close()
    assert {o.pod.name: o.node for o in result.outcomes} == {"anti": node}
    assert [(p.victim, p.node) for p in result.preemptions] == [("default/cache", "small")]
    assert result.simulated_seconds == seconds
