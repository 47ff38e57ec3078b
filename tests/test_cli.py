"""The command line contract of DESIGN.md: simulate, inspect, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wasmsched.cli import app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "nodenumber"
runner = CliRunner()


def simulate_json(*args: str) -> dict:
    result = runner.invoke(app, ["simulate", *args, "--output", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_output_contract() -> None:
    data = simulate_json("--cluster", str(EXAMPLE / "cluster.yaml"))
    assert set(data) == {"pods", "summary"}
    for entry in data["pods"]:
        assert set(entry) == {"namespace", "name", "node", "result", "message", "nominatedNode"}
        assert entry["result"] in ("Scheduled", "Unschedulable", "Error")
    big = next(p for p in data["pods"] if p["name"] == "big-1")
    assert big == {
        "namespace": "shop",
        "name": "big-1",
        "node": None,
        "result": "Unschedulable",
        "message": "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are "
        "available: 4 No preemption victims found for incoming pod.",
        "nominatedNode": None,
    }
    assert data["summary"]["scheduled"] == 7


def test_wasm_plugin_changes_placements() -> None:
    default = simulate_json("--cluster", str(EXAMPLE / "cluster.yaml"))
    with_wasm = simulate_json(
        "--cluster",
        str(EXAMPLE / "cluster.yaml"),
        "--config",
        str(EXAMPLE / "scheduler-config.yaml"),
    )
    placed = {p["name"]: p["node"] for p in with_wasm["pods"]}
    # NodeNumber: every pod whose name ends in 3 lands on node-3, and so on
    assert placed["api-3"] == placed["web-3"] == placed["cache-3"] == "node-3"
    assert placed["db-1"] == "node-1"
    assert placed["worker-4"] == "node-4"
    default_placed = {p["name"]: p["node"] for p in default["pods"]}
    assert default_placed != placed
    assert len({default_placed[n] for n in ("api-3", "web-3", "cache-3")}) > 1


def test_same_seed_same_result_and_seed_matters() -> None:
    args = ("--cluster", str(EXAMPLE / "cluster.yaml"))
    runs = [simulate_json(*args, "--seed", str(s))["pods"] for s in (7, 7)]
    assert runs[0] == runs[1]


def test_explain_shows_filter_verdicts_and_scores() -> None:
    result = runner.invoke(
        app,
        [
            "simulate",
            "--cluster",
            str(EXAMPLE / "cluster.yaml"),
            "--config",
            str(EXAMPLE / "scheduler-config.yaml"),
            "--explain",
        ],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Filter" in out and "Score (raw / normalized / weighted)" in out
    assert "NodeNumber" in out
    assert "100/100/500" in out  # raw, normalized, weighted (weight 5)
    assert "Insufficient cpu" in out


def test_explain_json_has_cycles() -> None:
    data = simulate_json("--cluster", str(EXAMPLE / "cluster.yaml"), "--explain")
    api = next(p for p in data["pods"] if p["name"] == "api-3")
    cycle = api["cycles"][0]
    assert cycle["selectedNode"] == api["node"]
    assert set(cycle["filter"]) == {"node-1", "node-2", "node-3", "node-4"}
    assert all(v["NodeResourcesFit"] == "passed" for v in cycle["filter"].values())
    assert cycle["score"]["node-1"]["TaintToleration"]["weighted"] == 300


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"c.yaml": "a: [1, 2\n"}, "c.yaml: line"),
        (
            {"c.yaml": "apiVersion: v1\nkind: Gadget\nmetadata: {name: x}\n"},
            'unknown kind "Gadget"',
        ),
        (
            {
                "c.yaml": NODE
                + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                "  - name: c\n    resources: {requests: {cpu: 12x}}\n"
            },
            'c.yaml: document 2: spec.containers[0].resources.requests.cpu: invalid quantity "12x"',
        ),
    ],
)
def test_bad_cluster_is_one_line_naming_file_field_and_value(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    result = runner.invoke(app, ["simulate", "--cluster", str(tmp_path / "c.yaml")])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("wasmsched: error: ")
    assert expected in lines[0]
    assert "Traceback" not in result.output


CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            CONFIG_HEAD
            + "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled: [{name: NodeNumbr}]\n",
            'profiles[0].plugins.score.enabled[0].name: unknown plugin: "NodeNumbr"',
        ),
        (
            CONFIG_HEAD + "profiles:\n- schedulerName: a\n- schedulerName: a\n",
            'profiles[1].schedulerName: duplicate scheduler name: "a"',
        ),
        (
            CONFIG_HEAD
            + "profiles:\n- plugins: {multiPoint: {enabled: [{name: W}]}}\n  pluginConfig:\n"
            "  - name: W\n    args: {guestURL: 'file://missing.wasm'}\n",
            "missing.wasm",
        ),
    ],
)
def test_bad_config_is_one_line(tmp_path: Path, config: str, expected: str) -> None:
    cluster = write(tmp_path, "c.yaml", NODE)
    cfg = write(tmp_path, "s.yaml", config)
    result = runner.invoke(app, ["simulate", "--cluster", str(cluster), "--config", str(cfg)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0]


def test_inspect_reports_exports_and_loadability() -> None:
    result = runner.invoke(app, ["inspect", str(EXAMPLE / "nodenumber.wat"), "--output", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["loadable"] is True
    assert report["extensionPoints"] == ["score"]
    assert [e["name"] for e in report["exports"]] == ["memory", "score"]
    assert {i["name"] for i in report["imports"]} == {
        "currentPod",
        "currentNodeName",
        "get_config",
        "result.status_reason",
    }


def test_inspect_explains_why_a_guest_cannot_load(tmp_path: Path) -> None:
    guest = write(tmp_path, "bad.wat", '(module (memory (export "memory") 1))')
    result = runner.invoke(app, ["inspect", str(guest)])
    assert result.exit_code == 1
    assert "loadable: no" in result.stdout
    assert "does not export any plugin functions" in result.stdout


def test_console_script_runs_the_readme_command() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "wasmsched",
            "simulate",
            "--cluster",
            str(EXAMPLE / "cluster.yaml"),
            "--config",
            str(EXAMPLE / "scheduler-config.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "7 scheduled, 1 unschedulable" in proc.stdout


def test_guest_that_traps_at_start_is_one_line_without_backtrace(tmp_path: Path) -> None:
    write(tmp_path, "boom.wat", (ROOT / "guests" / "wat" / "panic_on_start.wat").read_text())
    cfg = write(
        tmp_path,
        "s.yaml",
        CONFIG_HEAD + "profiles:\n- plugins: {multiPoint: {enabled: [{name: P}]}}\n"
        "  pluginConfig:\n  - name: P\n    args: {guestURL: 'file://boom.wat'}\n",
    )
    cluster = write(tmp_path, "c.yaml", NODE)
    result = runner.invoke(app, ["simulate", "--cluster", str(cluster), "--config", str(cfg)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith(
        "boom.wat: failed to create a guest pool: wasm: instantiate error: panic! "
        "(wasm trap: wasm `unreachable` instruction executed)"
    )


def test_inspect_passes_guest_config_to_start_up(tmp_path: Path) -> None:
    # a guest whose _start traps unless get_config returns something
    guest = write(
        tmp_path,
        "needs_config.wat",
        """(module
          (import "k8s.io/scheduler" "get_config" (func $cfg (param i32 i32) (result i32)))
          (memory (export "memory") 1)
          (func (export "_start") (if (i32.eqz (call $cfg (i32.const 0) (i32.const 64))) (then unreachable)))
          (func (export "filter") (result i32) (i32.const 0)))""",
    )
    without = runner.invoke(app, ["inspect", str(guest)])
    assert without.exit_code == 1 and "loadable: no" in without.stdout
    with_config = runner.invoke(app, ["inspect", str(guest), "--guest-config", "{}"])
    assert with_config.exit_code == 0, with_config.stdout
    assert "loadable: yes" in with_config.stdout
