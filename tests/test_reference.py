"""The reference scheduler (reference/: kube-scheduler v1.33.4 in process) itself: its
output contract, its settling, the NodeNumber twin, and every hand-written scenario of
tests/scenarios run through both schedulers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from reference_support import (
    BINARY,
    NOT_BUILT,
    ROOT,
    V133,
    V137,
    Case,
    Reference,
    compare,
    read_reference,
    reference_built,
    run_cases,
    run_reference,
)

pytestmark = pytest.mark.skipif(not reference_built(), reason=NOT_BUILT)

SCENARIOS = ROOT / "tests" / "scenarios"
NODENUMBER_WASM = ROOT / "target" / "rust" / "guests" / "nodenumber.wasm"


def _node(name: str, cpu: str = "4") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def _pod(name: str, cpu: str, **spec: object) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


def _run(tmp_path: Path, docs: list[dict[str, object]], *extra: str) -> dict[str, object]:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    out = subprocess.run(
        [str(BINARY), "--cluster", str(path), *extra],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    data: dict[str, object] = json.loads(out.stdout)
    return data


def test_output_has_simulate_json_fields(tmp_path: Path) -> None:
    list_doc = {"apiVersion": "v1", "kind": "List", "items": [_node("a"), _node("b", "1")]}
    data = _run(
        tmp_path,
        [
            list_doc,
            _pod("fits", "2"),
            _pod("huge", "64"),
            _pod("gated", "1", schedulingGates=[{"name": "g"}]),
        ],
    )
    pods = {p["name"]: p for p in data["pods"]}  # type: ignore[attr-defined]
    assert set(pods["fits"]) == {"namespace", "name", "node", "result", "message", "nominatedNode"}
    assert (pods["fits"]["result"], pods["fits"]["node"]) == ("Scheduled", "a")
    assert pods["huge"]["result"] == "Unschedulable"
    assert (
        pods["huge"]["message"]
        == "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert (pods["gated"]["result"], pods["gated"]["node"]) == ("Unschedulable", None)


def test_preemption_is_reported_with_victim_and_preemptor(tmp_path: Path) -> None:
    classes = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
    ]
    data = _run(
        tmp_path,
        [
            *classes,
            _node("a"),
            _pod("low", "3", nodeName="a"),
            _pod("vip", "2", priorityClassName="high"),
        ],
    )
    [vip] = data["pods"]  # type: ignore[misc]
    assert (vip["result"], vip["node"]) == ("Scheduled", "a")
    assert data["summary"]["preemptions"] == [  # type: ignore[index]
        {"victim": "default/low", "node": "a", "preemptor": "default/vip"}
    ]


def test_prefer_breaks_only_ties(tmp_path: Path) -> None:
    """Equal nodes: the reference follows the preference; unequal: it does not."""
    docs = [_node("a"), _node("b"), _node("c", "8"), _pod("p", "1")]
    prefer = tmp_path / "prefer.json"
    for wanted, expected in [("a", "c"), ("c", "c")]:
        prefer.write_text(json.dumps({"default/p": wanted}))
        data = _run(tmp_path, docs, "--prefer", str(prefer))
        assert data["pods"][0]["node"] == expected  # type: ignore[index]
    docs = [_node("a"), _node("b"), _pod("p", "1")]
    for wanted in ("a", "b", "a", "b"):
        prefer.write_text(json.dumps({"default/p": wanted}))
        data = _run(tmp_path, docs, "--prefer", str(prefer))
        assert data["pods"][0]["node"] == wanted  # type: ignore[index]


def test_many_pending_pods_are_all_attempted(tmp_path: Path) -> None:
    """More pending pods than the fake watch channel holds (100)."""
    docs = [_node(f"n{i}", "100") for i in range(3)] + [_pod(f"p{i}", "1") for i in range(250)]
    data = _run(tmp_path, docs)
    results = [p["result"] for p in data["pods"]]  # type: ignore[attr-defined]
    assert results.count("Scheduled") == 250


def _scenario_cases() -> list[Path]:
    return sorted(p for p in SCENARIOS.glob("*.yaml") if not p.name.endswith(".config.yaml"))


def _config_of(path: Path) -> dict[str, object] | None:
    for line in path.read_text().splitlines():
        if line.startswith("# config:"):
            cfg: dict[str, object] = yaml.safe_load(
                (path.parent / line.split(":", 1)[1].strip()).read_text()
            )
            return cfg
    return None


# Scenarios the two cannot agree on by design: wasmsched reports dynamic provisioning as
# not simulated; kube-scheduler, with no provisioner running, fails at PreBind.
# Nor on workload controllers: the reference runs kube-scheduler alone, with no
# controller-manager to turn a Deployment, StatefulSet or DaemonSet into pods.
NOT_COMPARABLE = {
    "volume_binding_dynamic_provisioning",
    "workloads_daemonset_takes_nodes",
    "workloads_statefulset_ordered",
}


def _built(ref: Reference) -> Any:
    return pytest.param(
        ref,
        id=str(ref.version),
        marks=pytest.mark.skipif(not ref.built(), reason=ref.not_built),
    )


@pytest.mark.parametrize("ref", [_built(V133), _built(V137)])
def test_every_scenario_agrees(ref: Reference, tmp_path: Path) -> None:
    """The hand-written parity scenarios (tests/scenarios) through both schedulers, at
    v1.33.4 (the release their expectations state) and at v1.37.2, wasmsched modelling
    the reference's release."""
    cases = []
    for path in _scenario_cases():
        if path.stem in NOT_COMPARABLE:
            continue
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        cases.append(Case(path.stem, docs, _config_of(path)))
    outcomes = run_cases(cases, tmp_path, ref=ref)
    bad = {o.case.name: o.diffs for o in outcomes if o.diffs}
    assert bad == {}


@pytest.mark.skipif(not NODENUMBER_WASM.exists(), reason="scripts/build_rust_guests.py not run")
@pytest.mark.parametrize("reverse", [False, True])
def test_nodenumber_twin_matches_the_wasm_guest(tmp_path: Path, reverse: bool) -> None:
    example = ROOT / "examples" / "rust" / "nodenumber"
    docs = [d for d in yaml.safe_load_all((example / "cluster.yaml").read_text()) if d]
    args: dict[str, object] = {"guestURL": NODENUMBER_WASM.as_uri()}
    if reverse:
        args["guestConfig"] = '{"reverse": true}'
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "NodeNumber", "weight": 10}]}},
                "pluginConfig": [{"name": "NodeNumber", "args": args}],
            }
        ],
    }
    [outcome] = run_cases([Case("nodenumber", docs, config)], tmp_path)
    assert outcome.diffs == []
    # The plugin changes placements (else the twin would not be tested).
    [plain] = run_cases([Case("plain", docs)], tmp_path / "plain")
    assert {k: v.node for k, v in plain.ref.pods.items()} != {
        k: v.node for k, v in outcome.ref.pods.items()
    }


def test_unknown_wasm_guest_is_refused(tmp_path: Path) -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "Other"}]}},
                "pluginConfig": [{"name": "Other", "args": {"guestURL": "file:///x/other.wasm"}}],
            }
        ],
    }
    case = Case("other", [_node("a"), _pod("p", "1")], config)
    case.write(tmp_path / "other")
    run_reference(tmp_path)
    ref = read_reference(tmp_path / "other")
    assert "no Go twin for guest file:///x/other.wasm" in ref.error
    assert compare(ref, ref) == [f"reference failed: {ref.error}"]
