"""docs/tutorial.md, executed.

Every ```sh block of the tutorial runs in order (a ``cd`` carries over to the next block,
as in a terminal) in a scratch copy of ``examples/tutorial`` and ``sdk/rust``, with the
venv's ``wasmsched`` and ``python`` first on PATH. Each must exit 0; each ```text block
after it (its output, as shown to the reader) must match what the command printed, up to
timings, sizes, hashes and paths; the page's file listings must equal the committed files;
and the plugin must visibly change placements.

Markers, each on the line before a fence: ``<!-- skip: reason -->`` (a command block not
run), ``<!-- file: path -->`` (a listing of a committed file, or of consecutive parts of it)
and ``<!-- excerpt: START -- END -->`` (an output block showing only the lines from the
first one matching the regex START up to, not including, the next one matching END).

``python tests/test_tutorial.py --update`` runs the page and rewrites its output blocks
with what the commands printed; without ``--update`` it prints every output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from doc_pages import Block, Run, missing_lines, parse, run_commands

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "tutorial.md"
TUTORIAL = ROOT / "examples" / "tutorial"
DEBIAN_TOOLS = (Path("/usr/bin/cargo"), Path("/usr/bin/rustc"))
BLOCK_TIMEOUT = 300  # seconds; the whole page takes about 15 s

BLOCKS = parse(DOC.read_text(), "docs/tutorial.md")
COMMANDS = [b for b in BLOCKS if b.lang == "sh" and b.skip is None]


# --- running the page -------------------------------------------------------------------


def make_scratch(dest: Path) -> None:
    """The folders the tutorial touches, without build outputs; the benchmark script is
    linked so that it still finds the repository's fixtures."""
    shutil.copytree(ROOT / "sdk" / "rust", dest / "sdk" / "rust", ignore=_ignore_built)
    shutil.copytree(TUTORIAL, dest / "examples" / "tutorial", ignore=_ignore_built)
    (dest / "benchmarks").mkdir()
    bench = ROOT / "benchmarks" / "bench_wasm_plugin.py"
    (dest / "benchmarks" / bench.name).symlink_to(bench)


def _ignore_built(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "target" or n.endswith((".wasm", ".json"))}


def command_env(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("CARGO_TARGET_DIR", None)  # the page relies on cargo's default target/
    for forcing_colour in ("FORCE_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        env.pop(forcing_colour, None)  # the snippets are plain text
    env.update(
        COLUMNS="120",  # the snippets were taken in a 120-column terminal
        CARGO_NET_OFFLINE="true",  # no external crates: never touch the network
        CARGO_TERM_COLOR="never",
        WASMSCHED_CACHE_DIR=str(scratch / ".wasmsched-cache"),
    )
    return env


def run_page(scratch: Path) -> list[Run]:
    """Runs every command block in order; stops at the first failure."""
    make_scratch(scratch)
    return run_commands(COMMANDS, scratch, command_env(scratch), BLOCK_TIMEOUT)


def shown_output(run: Run, scratch: Path) -> str:
    """What the page should show for a run: paths as in the repository, no trailing
    blanks, and only the excerpt if the output block has one."""
    text = run.output.replace(str(scratch), str(ROOT)).rstrip()
    lines = [line.rstrip() for line in text.splitlines()]
    out = run.block.output
    if out is not None and out.excerpt is not None:
        start_re, end_re = (re.compile(r) for r in out.excerpt)
        first = next(i for i, line in enumerate(lines) if start_re.search(line))
        last = next(
            (i for i in range(first + 1, len(lines)) if end_re.search(lines[i])), len(lines)
        )
        lines = lines[first:last]
    return "".join(f"{line}\n" for line in lines)


def update_page(page: str, runs: list[Run], scratch: Path) -> str:
    """The page with every output block replaced by what its command printed."""
    lines = page.splitlines(keepends=True)
    # Bottom up, so that earlier line numbers stay valid.
    for run in sorted(runs, key=lambda r: -r.block.line):
        out = run.block.output
        if out is None or run.returncode != 0:
            continue
        body_start = out.line  # 0-based index of the line after the opening fence
        body_end = body_start + len(out.text.splitlines())
        lines[body_start:body_end] = [shown_output(run, scratch)]
    return "".join(lines)


# --- tests ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="wasmsched-tutorial-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def runs(scratch: Path) -> dict[int, Run]:
    missing = [str(t) for t in DEBIAN_TOOLS if not t.is_file()]
    if missing:
        pytest.skip(f"no Debian Rust toolchain ({', '.join(missing)}): run scripts/dev-setup")
    return {r.block.line: r for r in run_page(scratch)}


@pytest.mark.parametrize("block", COMMANDS, ids=[f"line{b.line}" for b in COMMANDS])
def test_command_runs_and_prints_what_the_page_shows(block: Block, runs: dict[int, Run]) -> None:
    run = runs[block.line]
    assert run.returncode is not None, "not run: an earlier block failed"
    assert run.returncode == 0, f"docs/tutorial.md:{block.line} failed:\n{run.output[-3000:]}"
    if block.output is not None:
        missing = missing_lines(block.output.text, run.output)
        assert not missing, (
            f"docs/tutorial.md:{block.output.line}: shown but not printed:\n"
            + "\n".join(missing)
            + f"\n--- printed:\n{run.output[-3000:]}"
        )


# Lines some command of the page must print, whatever the snippets say.
KEY_LINES = (
    ("cargo build", "Finished release [optimized] target(s)"),
    ("wasmsched inspect", "extension points: filter, score"),
    ("wasmsched inspect", "loadable: yes"),
    ("cargo test", "test result: ok. 3 passed; 0 failed"),
    ("bench_wasm_plugin.py", "PluginFilter"),
    ("bench_wasm_plugin.py", "PluginScore"),
)


def _all_ran(runs: dict[int, Run]) -> None:
    failed = [line for line, r in runs.items() if r.returncode != 0]
    assert not failed, f"docs/tutorial.md: the blocks at lines {failed} failed or did not run"


@pytest.mark.parametrize(("command", "line"), KEY_LINES)
def test_key_output(command: str, line: str, runs: dict[int, Run]) -> None:
    _all_ran(runs)
    outputs = [r.output for r in runs.values() if command in r.block.text]
    assert outputs, f"no block of the page runs {command!r}"
    assert any(line in out for out in outputs), f"{command!r} never printed {line!r}"


def test_the_plugin_changes_placements(runs: dict[int, Run], scratch: Path) -> None:
    _all_ran(runs)
    folder = scratch / "examples" / "tutorial"

    def placements(name: str) -> dict[str, tuple[str, str | None]]:
        pods = json.loads((folder / name).read_text())["pods"]
        return {p["name"]: (p["result"], p["node"]) for p in pods}

    without = placements("without-plugin.json")
    with_plugin = placements("with-plugin.json")
    cheap, dear = {"small-1", "medium-1"}, {"large-1", "gpu-1"}
    # batch-1's budget (200 cents) excludes the dear nodes; report-1's (50) excludes all.
    assert without["report-1"][0] == "Scheduled"
    assert with_plugin["report-1"] == ("Unschedulable", None)
    assert with_plugin["batch-1"][1] in cheap
    # Pods without a budget move to cheap nodes; the GPU pod still gets the GPU node.
    assert any(without[f"web-{i}"][1] in dear for i in (1, 2, 3))
    assert all(with_plugin[f"web-{i}"][1] in cheap for i in (1, 2, 3))
    assert without["train-1"] == with_plugin["train-1"] == ("Scheduled", "gpu-1")


def file_listings() -> dict[str, str]:
    """Repository path -> the text the page shows for it (its parts, joined by a blank line)."""
    parts: dict[str, list[str]] = {}
    for block in BLOCKS:
        if block.file is not None:
            parts.setdefault(block.file, []).append(block.text)
    return {path: "\n".join(texts) for path, texts in parts.items()}


@pytest.mark.parametrize("path", sorted(file_listings()))
def test_listing_matches_the_committed_file(path: str) -> None:
    assert file_listings()[path] == (ROOT / path).read_text(), (
        f"docs/tutorial.md shows {path} differently from the file"
    )


def test_the_page_lists_the_plugin_and_its_setup() -> None:
    listed = set(file_listings())
    assert {
        "examples/tutorial/cost-aware/Cargo.toml",
        "examples/tutorial/cost-aware/src/lib.rs",
        "examples/tutorial/scheduler-config.yaml",
    } <= listed


def test_skipped_blocks_are_few_and_justified() -> None:
    skipped = [b for b in BLOCKS if b.skip is not None]
    assert all(b.lang == "sh" for b in skipped), "only command blocks can be skipped"
    assert all(len(b.skip or "") > 20 for b in skipped), "each skip needs a reason"
    assert len(skipped) <= 2
    assert len(COMMANDS) >= 8


@pytest.mark.parametrize(
    ("markdown", "want"),
    [
        ("```sh\nls\n```\n", [("sh", "ls\n", None, None)]),
        (
            "<!-- skip: needs Go -->\n```sh\ngo build\n```\n```text\nout\n```\n",
            [("sh", "go build\n", "needs Go", None), ("text", "out\n", None, None)],
        ),
        (
            "<!-- file: a/b.rs -->\n```rust\nfn f() {}\n```\n",
            [("rust", "fn f() {}\n", None, "a/b.rs")],
        ),
    ],
)
def test_parse(markdown: str, want: list[tuple[str, str, str | None, str | None]]) -> None:
    assert [(b.lang, b.text, b.skip, b.file) for b in parse(markdown, "page.md")] == want


def test_parse_attaches_output_to_the_command_before_it() -> None:
    blocks = parse("```sh\nls\n```\nprose\n```text\na\n```\n```text\nb\n```\n", "page.md")
    assert blocks[0].output is blocks[1]
    assert blocks[1].output is None


@pytest.mark.parametrize(
    ("shown", "printed", "missing"),
    [
        ("0.0 s simulated, 0.031 s wall\n", "0.0 s simulated, 0.5 s wall\n", []),
        (
            "benchmark  ours µs/op\nPluginFilter   cost_aware  3.71\n",
            "benchmark ours µs/op\nPluginFilter cost_aware 13.02\n",
            [],
        ),
        ("Finished release target(s) in 5.65s\n", "Finished release target(s) in 12.0s\n", []),
        ("│ wall seconds  │ 0.031 │\n", "│ wall seconds │ 1.5 │\n", []),
        # Every other number is deterministic: a stale one is missing.
        (
            "least-allocated.yaml 4.0\n",
            "least-allocated.yaml 3.666667\n",
            ["least-allocated.yaml 4.0"],
        ),
        (
            "0.0 s simulated, 0.031 s wall\n",
            "1.0 s simulated, 0.031 s wall\n",
            ["0.0 s simulated, 0.031 s wall"],
        ),
        (
            "PluginFilter cost_aware 3.71\n",
            "PluginFilter cost_aware 13.02\n",
            ["PluginFilter cost_aware 3.71"],
        ),
        ("{'cpu': 0.25}\n", "{'cpu': 0.5}\n", ["{'cpu': 0.25}"]),
        ("sha256 " + "a" * 64 + "\n", "sha256 " + "b" * 64 + "\n", []),
        ("Compiling x v0.1.0 (/home/u/x)\n", "Compiling x v0.1.0 (/tmp/y/x)\n", []),
        ("web-1  small-1\n", "web-1  large-1\n", ["web-1  small-1"]),
    ],
)
def test_missing_lines(shown: str, printed: str, missing: list[str]) -> None:
    assert missing_lines(shown, printed) == missing


def test_update_page_replaces_outputs_and_keeps_excerpts(tmp_path: Path) -> None:
    page = (
        "```sh\none\n```\n```text\nold\n```\n"
        "```sh\ntwo\n```\n<!-- excerpt: ^b -- ^d -->\n```text\nold\nold\n```\nend\n"
    )
    one, _, two, _ = parse(page, "page.md")
    runs = [Run(one, 0, f"x {tmp_path}/y  \n"), Run(two, 0, "a\nb\nc\nd\n")]
    assert update_page(page, runs, tmp_path) == (
        f"```sh\none\n```\n```text\nx {ROOT}/y\n```\n"
        "```sh\ntwo\n```\n<!-- excerpt: ^b -- ^d -->\n```text\nb\nc\n```\nend\n"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="wasmsched-tutorial-") as tmp:
        page_runs = run_page(Path(tmp))
        for r in page_runs:
            print(f"=== docs/tutorial.md:{r.block.line} (exit {r.returncode})")
            print(r.block.text.rstrip())
            print("---")
            print(r.output.rstrip())
        if "--update" in sys.argv[1:]:
            if any(r.returncode != 0 for r in page_runs):
                sys.exit("a command failed: docs/tutorial.md not updated")
            DOC.write_text(update_page(DOC.read_text(), page_runs, Path(tmp)))
            print(f"updated {DOC}")
