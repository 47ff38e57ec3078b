"""The Rust SDK examples of examples/rust, built by scripts/build_rust_guests.py and run
through the ``wasmsched simulate`` console script as a user would: placements, messages,
``--explain`` scores and verdicts, events and guest logs, each derived from the plugin's
documented semantics and compared with the default profile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("nodenumber", "advanced", "imagelocality", "filter_label")
WASMSCHED = Path(sys.executable).parent / "wasmsched"
RUSTC = Path(os.environ.get("RUSTC") or "/usr/bin/rustc")
CONFIG = "scheduler-config.yaml"
REVERSE = "scheduler-config-reverse.yaml"
INVALID = "scheduler-config-invalid.yaml"
MIB = 1024 * 1024


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str

    def data(self) -> dict[str, Any]:
        """The JSON output, its ``pods`` narrowed to those that were pending (the output
        lists every pod; already running ones have no placement or explain record)."""
        assert self.returncode == 0, self.stderr
        parsed: dict[str, Any] = json.loads(self.stdout)
        parsed["pods"] = [p for p in parsed["pods"] if p["wasPending"]]
        return parsed


class Simulator:
    """Runs ``wasmsched simulate`` in a scratch copy of the repository's layout (the
    examples beside the built ``examples/rust/build``); each distinct run happens once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # A private compiled-module cache: the runs do not touch ~/.cache.
        self.env = dict(os.environ, WASMSCHED_CACHE_DIR=str(root / "cache"), COLUMNS="200")
        self._runs: dict[tuple[str, str | None, tuple[str, ...]], Run] = {}

    def run(self, example: str, config: str | None, *flags: str) -> Run:
        key = (example, config, flags)
        if key not in self._runs:
            folder = Path("examples", "rust", example)
            cmd = [str(WASMSCHED), "simulate", "--cluster", str(folder / "cluster.yaml")]
            if config is not None:
                cmd += ["--config", str(folder / config)]
            cmd += ["--no-progress", *flags]
            proc = subprocess.run(
                cmd, cwd=self.root, env=self.env, capture_output=True, text=True, timeout=120
            )
            self._runs[key] = Run(proc.returncode, proc.stdout, proc.stderr)
        return self._runs[key]

    def pods(self, example: str, config: str | None) -> dict[str, dict[str, Any]]:
        """``--output json``: pod name -> its entry."""
        data = self.run(example, config, "--output", "json").data()
        return {p["name"]: p for p in data["pods"]}

    def explain(self, example: str, config: str | None) -> Run:
        """``--output json --explain -v``: the JSON on stdout, the guests' logs on stderr."""
        return self.run(example, config, "--output", "json", "--explain", "-v")


@pytest.fixture(scope="session")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Simulator:
    if not RUSTC.is_file():
        pytest.skip(
            f"no Rust toolchain: {RUSTC} is missing (Debian: rustc, libstd-rust-dev-wasm32)"
        )
    root = tmp_path_factory.mktemp("rust-examples")
    for name in EXAMPLES:
        shutil.copytree(ROOT / "examples" / "rust" / name, root / "examples" / "rust" / name)
    out = root / "examples" / "rust" / "build"
    build = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_rust_guests.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr
    return Simulator(root)


def cycle(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod's only scheduling cycle (none of these examples retries)."""
    assert pod["attempts"] == 1 and len(pod["cycles"]) == 1, pod
    only: dict[str, Any] = pod["cycles"][0]
    return only


def plugin_events(data: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """pod -> (type, reason, action) of the events a guest recorded (not the binder's)."""
    return {
        e["object"].rpartition("/")[2]: (e["type"], e["reason"], e["action"])
        for e in data["events"]
        if e["reason"] != "Scheduled"
    }


# --- placements and messages ----------------------------------------------------------------

NOT_SSD = (
    '1 node "node-3" has label disktype=hdd, want ssd, '
    '1 node "node-4" does not have label disktype=ssd'
)
SEARCH_MESSAGE = (
    f"0/4 nodes are available: {NOT_SSD}, 2 Insufficient cpu, 2 Insufficient memory. "
    "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
)

# (example, config or None for the default profile, pod -> node, or None if unschedulable)
PLACEMENTS: list[tuple[str, str | None, dict[str, str | None]]] = [
    # Default: node-3 is the emptiest node throughout.
    ("nodenumber", None, {"web-1": "node-3", "web-2": "node-3", "cache-3": "node-3",
                          "frontend": "node-3"}),
    # Last digit of the pod's name = last digit of the node's; no digit: spreading decides.
    ("nodenumber", CONFIG, {"web-1": "node-1", "web-2": "node-2", "cache-3": "node-3",
                            "frontend": "node-3"}),
    # reverse: anywhere but the matching node; node-2 is emptier than node-1 for cache-3.
    ("nodenumber", REVERSE, {"web-1": "node-3", "web-2": "node-3", "cache-3": "node-2",
                             "frontend": "node-3"}),
    # No spec.nodeName on a pending pod: every node scores alike, placements are default.
    ("advanced", None, {"happy8-meta": "glad9", "happy9-meta": "glad9"}),
    ("advanced", CONFIG, {"happy8-meta": "glad9", "happy9-meta": "glad9"}),
    # Default: in-tree ImageLocality at weight 1 loses to node-b's free capacity.
    ("imagelocality", None, {"trainer": "node-b", "report": "node-b", "api": "node-b"}),
    # Wasm ImageLocality at weight 5: to the nodes holding the images.
    ("imagelocality", CONFIG, {"trainer": "node-a", "report": "node-c", "api": "node-b"}),
    ("filter_label", None, {"db": "node-4", "cache": "node-3", "search": "node-2"}),
    # Only disktype=ssd nodes fit; after db and cache neither has room for search.
    ("filter_label", CONFIG, {"db": "node-2", "cache": "node-2", "search": None}),
]  # fmt: skip


@pytest.mark.parametrize(("example", "config", "want"), PLACEMENTS)
def test_placements(
    sim: Simulator, example: str, config: str | None, want: dict[str, str | None]
) -> None:
    pods = sim.pods(example, config)
    assert {name: p["node"] for name, p in pods.items()} == want
    for name, pod in pods.items():
        if want[name] is None:
            assert pod["result"] == "Unschedulable"
        else:
            assert (pod["result"], pod["message"]) == ("Scheduled", ""), pod


def test_filter_label_message_names_the_rule(sim: Simulator) -> None:
    search = sim.pods("filter_label", CONFIG)["search"]
    assert search["message"] == SEARCH_MESSAGE
    assert search["nominatedNode"] is None


@pytest.mark.parametrize("example", ["nodenumber", "imagelocality", "filter_label"])
def test_plugin_changes_placements(sim: Simulator, example: str) -> None:
    """The examples are built so that the plugin visibly matters."""
    assert sim.pods(example, CONFIG) != sim.pods(example, None)


# --- explain: the plugins' own scores and verdicts ------------------------------------------


@pytest.mark.parametrize(("config", "reverse"), [(CONFIG, False), (REVERSE, True)])
def test_nodenumber_scores_and_events(sim: Simulator, config: str, reverse: bool) -> None:
    run = sim.explain("nodenumber", config)
    data = run.data()
    for pod in data["pods"]:
        name = pod["name"]
        digit = name[-1] if name[-1].isdigit() else None
        record = cycle(pod)
        assert record["preScore"]["NodeNumber"] == "passed"
        scores = {node: s["NodeNumber"] for node, s in record["score"].items()}
        assert set(scores) == {"node-1", "node-2", "node-3"}
        for node, score in scores.items():
            matched = digit is None or node[-1] == digit
            raw = 10 if matched != reverse else 0
            assert score == {"raw": raw, "normalized": raw, "weighted": 10 * raw}, (name, node)
        assert f'"execute PreScore on NodeNumber plugin" pod="shop/{name}"' in run.stderr
        assert run.stderr.count(f'"execute Score on NodeNumber plugin" pod="shop/{name}"') == 3
    assert plugin_events(data) == {
        "web-1": ("PreScore", "match lastNumber", "Continue"),
        "web-2": ("PreScore", "match lastNumber", "Continue"),
        "cache-3": ("PreScore", "match lastNumber", "Continue"),
        "frontend": ("PreScore", "not match lastNumber", "Skip"),
    }
    # Logged by the guest only when it was given a guestConfig.
    assert ("NodeNumberArgs is successfully applied" in run.stderr) == reverse


def test_advanced_sees_no_node_name_on_pending_pods(sim: Simulator) -> None:
    run = sim.explain("advanced", CONFIG)
    data = run.data()
    for pod in data["pods"]:
        record = cycle(pod)
        assert {node: s["NodeNumber"]["raw"] for node, s in record["score"].items()} == {
            "glad8": 10,
            "glad9": 10,
        }
        assert f'"execute PreScore on NodeNumber plugin" pod="default/{pod["name"]}"' in (
            run.stderr
        )
    assert plugin_events(data) == {
        "happy8-meta": ("PreScore", "not match lastNumber", "Skip"),
        "happy9-meta": ("PreScore", "not match lastNumber", "Skip"),
    }
    assert run.stderr.count("NodeNumberArgs is successfully applied") == 1


def test_advanced_rejects_invalid_config_at_start(sim: Simulator) -> None:
    run = sim.run("advanced", INVALID, "--output", "json")
    assert run.returncode == 2
    assert run.stdout == ""
    assert 'panic: reverse must be a boolean, got "yes"' in run.stderr
    assert run.stderr.startswith("wasmsched: error: ") and run.stderr.count("\n") == 1


def image_score(size_mib: int, nodes_with_image: int, nodes: int = 3) -> int:
    """Kubernetes' ImageLocality for one container: the image size spread over the nodes
    that have it, clamped to [23 MiB, 1000 MiB] and mapped onto 0..100."""
    spread = int(size_mib * MIB * (nodes_with_image / nodes))
    low, high = 23 * MIB, 1000 * MIB
    return 100 * (min(max(spread, low), high) - low) // (high - low)


# pod -> node -> raw score; every other pair scores 0.
IMAGE_SCORES = {
    "trainer": {"node-a": image_score(900, 1)},  # 28
    "report": {"node-c": image_score(600, 1)},  # 18: "report" is normalised to report:latest
}


@pytest.mark.parametrize(
    ("config", "plugin", "weight"), [(CONFIG, "WasmImageLocality", 5), (None, "ImageLocality", 1)]
)
def test_imagelocality_scores(sim: Simulator, config: str | None, plugin: str, weight: int) -> None:
    """The wasm plugin scores exactly as the in-tree one does in the default profile."""
    assert IMAGE_SCORES == {"trainer": {"node-a": 28}, "report": {"node-c": 18}}
    for pod in sim.explain("imagelocality", config).data()["pods"]:
        record = cycle(pod)
        assert set(record["score"]) == {"node-a", "node-b", "node-c"}
        for node, scores in record["score"].items():
            raw = IMAGE_SCORES.get(pod["name"], {}).get(node, 0)
            assert scores[plugin] == {"raw": raw, "normalized": raw, "weighted": weight * raw}
            # The configuration replaces the in-tree plugin rather than adding to it.
            assert {"ImageLocality", "WasmImageLocality"} & set(scores) == {plugin}


def test_filter_label_verdicts(sim: Simulator) -> None:
    verdicts = {
        "node-1": "passed",
        "node-2": "passed",
        "node-3": 'Unschedulable: node "node-3" has label disktype=hdd, want ssd',
        "node-4": 'Unschedulable: node "node-4" does not have label disktype=ssd',
    }
    for pod in sim.explain("filter_label", CONFIG).data()["pods"]:
        record = cycle(pod)
        seen = {n: v["FilterLabel"] for n, v in record["filter"].items() if "FilterLabel" in v}
        # A node NodeResourcesFit already rejected never reaches FilterLabel.
        assert {n: verdicts[n] for n in seen} == seen
        assert {"node-3", "node-4"} <= set(seen)
        assert set(record["score"]) <= {"node-1", "node-2"}
        if pod["name"] == "search":
            assert record["selectedNode"] is None
            assert "DefaultPreemption" in record["postFilter"]
