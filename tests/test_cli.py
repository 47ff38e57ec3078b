"""The command line contract (README, docs/output.md): simulate, inspect, run flags, bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    assert set(data) == {"pods", "nodes", "summary"}
    for entry in data["pods"]:
        # An unschedulable pod also says how many nodes each plugin rejected.
        extra = {"rejectedBy"} if entry["result"] == "Unschedulable" else set()
        assert (
            set(entry)
            == {
                "namespace",
                "name",
                "node",
                "result",
                "message",
                "nominatedNode",
                "preemptedBy",
                "wasPending",
            }
            | extra
        )
        if entry["wasPending"]:
            assert entry["result"] in ("Scheduled", "Unschedulable", "Error")
        else:  # already bound in the cluster file
            assert entry["result"] == "Running" and entry["node"]
    big = next(p for p in data["pods"] if p["name"] == "big-1")
    assert big == {
        "namespace": "shop",
        "name": "big-1",
        "node": None,
        "result": "Unschedulable",
        "message": "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are "
        "available: 4 No preemption victims found for incoming pod.",
        "nominatedNode": None,
        "preemptedBy": None,
        "wasPending": True,
        "rejectedBy": {"NodeResourcesFit": 4},
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


def _explain_example(columns: int) -> Any:
    args = ["--cluster", str(EXAMPLE / "cluster.yaml")]
    args += ["--config", str(EXAMPLE / "scheduler-config.yaml"), "--explain"]
    return runner.invoke(app, ["simulate", *args], env={"COLUMNS": str(columns)})


def test_explain_shows_filter_verdicts_and_scores() -> None:
    result = _explain_example(columns=250)
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
                "  - name: c\n    image: i\n    resources: {requests: {cpu: 12x}}\n"
            },
            "c.yaml: document 2: Pod default/p: spec.containers[0].resources.requests.cpu: "
            'invalid quantity "12x"',
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


# --- the output contract's extensions (docs/output.md) ------------------------------------

PREEMPTION = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: high, namespace: default}
spec:
  priority: 100
  containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: default}
spec:
  schedulingGates: [{name: example.com/wait}]
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Pod
metadata: {name: theirs, namespace: default}
spec:
  schedulerName: other
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
status: {phase: Failed}
"""


def test_json_lists_every_pod_and_the_nodes(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", PREEMPTION)
    data = simulate_json("--cluster", str(cluster))
    pods = {p["name"]: p for p in data["pods"]}
    assert [p["name"] for p in data["pods"]] == ["low", "high", "gated", "theirs", "done"]
    assert {n: (p["result"], p["node"]) for n, p in pods.items()} == {
        "low": ("Preempted", "n1"),
        "high": ("Scheduled", "n1"),
        "gated": ("Unschedulable", None),
        "theirs": ("Skipped", None),
        "done": ("Failed", "n1"),
    }
    assert pods["low"]["preemptedBy"] == "default/high"
    assert "other" in pods["theirs"]["message"]
    assert [p["wasPending"] for p in data["pods"]] == [False, True, True, False, False]
    assert data["nodes"] == [
        {
            "name": "n1",
            "allocatable": {"cpu": "2", "memory": "4Gi", "ephemeral-storage": "0", "pods": "10"},
            "requested": {"cpu": "2", "memory": "0", "ephemeral-storage": "0", "pods": "1"},
            "pods": 1,
        }
    ]
    summary = data["summary"]
    assert (summary["totalPods"], summary["preempted"], summary["skipped"]) == (5, 1, 1)
    assert summary["failed"] == 1 and summary["scheduled"] == 1


@pytest.mark.parametrize(
    ("only", "names"),
    [
        ([], {"high", "gated"}),
        (["--only", "pending"], {"high", "gated"}),
        (["--only", "unschedulable"], {"gated"}),
        (["--only", "all"], {"low", "high", "gated", "theirs", "done"}),
    ],
)
def test_table_only_selects_pods(tmp_path: Path, only: list[str], names: set[str]) -> None:
    cluster = write(tmp_path, "c.yaml", PREEMPTION)
    result = runner.invoke(
        app, ["simulate", "--cluster", str(cluster), *only], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    rows = [line.split("│") for line in result.stdout.splitlines() if line.startswith("│ default")]
    assert {cells[2].strip() for cells in rows if len(cells) > 5} == names
    # text in square brackets is data, not markup
    if "gated" in names:
        assert "waiting for scheduling gates: [example.com/wait]" in result.stdout


@pytest.mark.parametrize(
    ("cluster_text", "code"),
    [(PREEMPTION, 3), (NODE, 0)],
)
def test_fail_on_unschedulable_exits_3(tmp_path: Path, cluster_text: str, code: int) -> None:
    cluster = write(tmp_path, "c.yaml", cluster_text)
    result = runner.invoke(app, ["simulate", "--cluster", str(cluster), "--fail-on-unschedulable"])
    assert result.exit_code == code, result.output
    plain = runner.invoke(app, ["simulate", "--cluster", str(cluster)])
    assert plain.exit_code == 0


def test_explain_output_writes_one_json_line_per_attempt(tmp_path: Path) -> None:
    cluster = write(tmp_path, "c.yaml", PREEMPTION)
    out = tmp_path / "explain.json"
    data = simulate_json("--cluster", str(cluster), "--explain-output", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    # high: preempts low (attempt 1), then binds (attempt 2); gated never gets an attempt
    assert [(line["pod"], line["attempt"]) for line in lines] == [
        ("default/high", 1),
        ("default/high", 2),
    ]
    first, second = lines
    assert first["filter"] == {
        "n1": {
            "NodeUnschedulable": "passed",
            "NodeName": "passed",
            "TaintToleration": "passed",
            # NodeAffinity and NodePorts were skipped at PreFilter
            "NodeResourcesFit": "Unschedulable: Insufficient cpu",
        }
    }
    assert first["nominatedNode"] == "n1" and first["victims"] == ["default/low"]
    assert first["selectedNode"] is None and first["finalResult"] == "Scheduled"
    assert second["selectedNode"] == "n1" and second["victims"] == []
    assert "cycles" not in data["pods"][1]  # the JSON document stays small without --explain


def test_explain_pod_narrows_the_record(tmp_path: Path) -> None:
    out = tmp_path / "explain.json"
    data = simulate_json(
        "--cluster",
        str(EXAMPLE / "cluster.yaml"),
        "--explain-pod",
        "shop/big-1",
        "--explain-output",
        str(out),
    )
    explained = [p["name"] for p in data["pods"] if "cycles" in p]
    assert explained == ["big-1"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["pod"] for line in lines} == {"shop/big-1"}
    assert set(lines[0]["filter"]) == {"node-1", "node-2", "node-3", "node-4"}
    table = runner.invoke(
        app,
        ["simulate", "--cluster", str(EXAMPLE / "cluster.yaml"), "--explain-pod", "shop/big-1"],
        env={"COLUMNS": "200"},
    )
    assert table.exit_code == 0, table.output
    assert "shop/big-1: Unschedulable" in table.stdout
    assert "shop/api-3:" not in table.stdout


def test_cluster_dash_is_passed_to_the_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    import wasmsched.api.manifests as manifests

    real = manifests.load_manifests
    seen: list[object] = []

    def load(path: object, **options: object) -> object:
        seen.append(path)
        return real(EXAMPLE / "cluster.yaml", **options)

    monkeypatch.setattr(manifests, "load_manifests", load)
    result = runner.invoke(app, ["simulate", "--cluster", "-", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert seen == ["-"]


# --- hygiene ------------------------------------------------------------------------------


def test_version() -> None:
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"wasmsched {version('wasmsched')}"


COMMAND_OPTIONS = {
    "": ["--version"],
    "simulate": ["--cluster", "--explain-pod", "--explain-output", "--fail-on-unschedulable"],
    "inspect": ["--guest-config", "--arg"],
    "run": ["--leader-elect-resource-namespace", "--leader-elect-renew-deadline", "--port"],
    "snapshot": ["--kubeconfig"],
}


@pytest.mark.parametrize("command", sorted(COMMAND_OPTIONS))
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_at_80_columns_keeps_option_names_whole(command: str, flag: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "wasmsched", *([command] if command else []), flag],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**__import__("os").environ, "COLUMNS": "80"},
    )
    assert proc.returncode == 0, proc.stderr
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80
    for option in COMMAND_OPTIONS[command]:
        assert f"{option} " in proc.stdout or f"{option}\n" in proc.stdout, option
    assert "…" not in proc.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "--config", "x.yaml", "--port", "65536"], "--port"),
        (["run", "--config", "x.yaml", "--port", "-1"], "--port"),
        (["run", "--config", "x.yaml", "--port", "http"], "--port"),
        (["run", "--config", "x.yaml", "--log-level", "loud"], "--log-level"),
        (["run", "--config", "x.yaml", "--log-format", "xml"], "--log-format"),
        (["simulate", "--cluster", "c.yaml", "--seed", "abc"], "--seed"),
        (["simulate", "--cluster", "c.yaml", "--output", "xml"], "--output"),
        (["simulate", "--cluster", "c.yaml", "--only", "some"], "--only"),
        (["simulate", "--cluster", "c.yaml", "--explain-pod", "noslash"], "--explain-pod"),
        (["simulate", "--cluster", "missing.yaml"], "missing.yaml"),
        (["simulate", "--cluster", "c.yaml", "--explain-pod", "a/b"], "a/b"),
        (["simulate", "--cluster", "c.yaml", "--explain-output", "no/such/dir/x.json"], "no/such"),
    ],
)
def test_bad_flag_values_fail_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "c.yaml", NODE)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert expected in result.stderr


def test_run_port_zero_is_accepted_as_disabled(tmp_path: Path) -> None:
    # 0 passes the flag check: the run then stops at the (missing) config, not at --port.
    result = runner.invoke(app, ["run", "--config", str(tmp_path / "none.yaml"), "--port", "0"])
    assert result.exit_code == 2
    assert "--port" not in result.stderr and "none.yaml" in result.stderr


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda d: d, "is a directory, not a wasm plugin"),
        (lambda d: write(d, "notes.txt", "hello\n"), "a text file, not a wasm plugin"),
        (lambda d: write(d, "empty.wasm", ""), "an empty file, not a wasm plugin"),
        (lambda d: d / "absent.wasm", "no such file"),
        (lambda d: Path("/dev/null"), "not a regular file"),
    ],
)
def test_inspect_says_what_a_non_wasm_path_is(tmp_path: Path, make: Any, expected: str) -> None:
    path = make(tmp_path)
    result = runner.invoke(app, ["inspect", str(path)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"wasmsched: error: {path}: {expected}")


@pytest.mark.parametrize("content", [b"hello\n", b"", b"\xff\xfe\x00binary"])
def test_a_guest_url_at_a_non_wasm_file_is_described_as_inspect_does(
    tmp_path: Path, content: bytes
) -> None:
    guest = tmp_path / "plugin.wasm"
    guest.write_bytes(content)
    config = tmp_path / "config.yaml"
    text = (EXAMPLE / "scheduler-config.yaml").read_text()
    config.write_text(text.replace("file://nodenumber.wat", "file://plugin.wasm"))
    inspected = runner.invoke(app, ["inspect", str(guest)])
    assert inspected.exit_code == 2
    description = inspected.stderr.strip().removeprefix(f"wasmsched: error: {guest}: ")
    assert description.endswith("not a wasm plugin (no \\0asm header, not WebAssembly text)")
    result = runner.invoke(
        app, ["simulate", "--cluster", str(EXAMPLE / "cluster.yaml"), "--config", str(config)]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f'wasmsched: error: {config}: plugin "NodeNumber": '
        f"guestURL {guest.as_uri()}: wasm: error compiling guest: {description}\n"
    )


def test_a_wat_head_cut_inside_a_character_is_still_text(tmp_path: Path) -> None:
    # The first 4096 bytes (what is read to tell text from binary) end inside "é".
    wat = (EXAMPLE / "nodenumber.wat").read_text()
    head, module, body = wat.partition("(module")
    pad = 4095 - len((head + module + "\n;; ").encode())
    guest = tmp_path / "plugin.wat"
    guest.write_text(f"{head}{module}\n;; {'x' * pad}é\n{body}")
    assert guest.read_bytes()[4095:4097] == "é".encode()
    result = runner.invoke(app, ["inspect", str(guest)])
    assert result.exit_code == 0, result.output + result.stderr


def test_explain_at_80_columns_is_readable_and_complete() -> None:
    # A table wider than the terminal becomes one block per node: no plugin name or score
    # cut off ("NodeNumb…", "100/100/…"), no reason folded into a 9-character column.
    result = _explain_example(columns=80)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "…" not in result.stdout
    assert max(len(line) for line in lines) <= 80
    assert "  NodeResourcesBalancedAllocation  90/90/90" in lines
    assert "  NodeNumber                       100/100/500" in lines  # the wasm plugin
    assert "  NodeResourcesFit: Unschedulable: Insufficient cpu" in lines
    assert "Score (raw / normalized / weighted)" in lines


WHAT_IF = ROOT / "examples" / "what-if"
REPORTING = {
    "simulate": ["--cluster", str(EXAMPLE / "cluster.yaml")],
    "replay": [
        *("--cluster", str(ROOT / "examples" / "replay" / "cluster.yaml")),
        *("--trace", str(ROOT / "examples" / "replay" / "trace.jsonl")),
    ],
    "diff": [
        *("--cluster", str(WHAT_IF / "cluster.yaml")),
        *("--config", str(WHAT_IF / "least-allocated.yaml")),
        *("--config", str(WHAT_IF / "most-allocated.yaml")),
    ],
    "sweep": [
        *("--cluster", str(WHAT_IF / "cluster.yaml")),
        *("--config", str(WHAT_IF / "least-allocated.yaml")),
        *("--seeds", "1", "--workers", "1"),
    ],
}


@pytest.mark.parametrize("command", sorted(REPORTING))
def test_report_says_where_it_went_on_stderr(tmp_path: Path, command: str) -> None:
    args = [command, *REPORTING[command], "--output", "json"]
    if command == "sweep":
        args += ["--out", str(tmp_path / "sweep")]
    report = tmp_path / "report.html"
    result = runner.invoke(app, [*args, "--report", str(report)])
    assert result.exit_code == 0, result.output + result.stderr
    json.loads(result.stdout)  # stdout stays one JSON document
    assert f"report written to {report}" in result.stderr.splitlines()
    assert report.read_text().startswith("<!DOCTYPE html>")
    # An unwritable report is one line, exit 2, for every command.
    unwritable = tmp_path / "no" / "such" / "dir" / "report.html"
    result = runner.invoke(app, [*args, "--report", str(unwritable)])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"wasmsched: error: {unwritable}: No such file or directory\n"


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        return [path]
    return [p for name, sub in subcommands.items() for p in _command_paths(sub, (*path, name))]


def test_every_option_shows_a_plain_metavar() -> None:
    # Typer's default metavars are types: "<list[Path]>", "<int range>", "<path>".
    import typer.main

    paths = _command_paths(typer.main.get_command(app))
    assert ("simulate",) in paths and ("import", "alibaba-gpu") in paths
    option = re.compile(r"^  (?:-\w, )?--[\w-]+(?: / --[\w-]+)?(?: (?P<metavar>\S+))?")
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        options = result.output.partition("\nOptions:\n")[2]
        metavars = [m["metavar"] for m in map(option.match, options.splitlines()) if m]
        assert metavars, path
        for metavar in filter(None, metavars):
            assert re.fullmatch(r"[A-Za-z][\w./|-]*", metavar), (path, metavar)
