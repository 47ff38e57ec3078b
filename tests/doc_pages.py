"""Markdown pages whose commands a test runs: docs/tutorial.md, docs/replay.md, ...

A page's ```sh blocks run in order (a ``cd`` carries over to the next block, as in a
terminal); the ```text block after a command shows its output to the reader and must
match what the command printed, up to timings, sizes, hashes and paths; every other
number is compared exactly. Markers, each on the line before a fence: ``<!-- skip: reason
-->`` (a command block not run), ``<!-- file: path -->`` (a listing of a committed file)
and ``<!-- excerpt: START -- END -->`` (an output block showing only the lines from the
first one matching START up to the next one matching END).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!--\s*(skip|file|excerpt):\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced block of the page."""

    lang: str
    text: str
    line: int  # 1-based line of the opening fence
    skip: str | None = None  # reason, for ```sh blocks not run
    file: str | None = None  # repository path this block (or part of it) reproduces
    excerpt: tuple[str, str] | None = None  # (start, end) regexes, for output blocks
    output: Block | None = None  # the ```text block showing this command's output


def parse(markdown: str, source: str) -> list[Block]:
    """The fenced blocks, with their markers and each command's output block attached."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{source}:{start + 1}: unclosed code fence"
        i += 1
        block = Block(m.group(1), "".join(f"{line}\n" for line in body), start + 1)
        marker = _MARKER.match(lines[start - 1]) if start > 0 else None
        if marker and marker.group(1) == "skip":
            block.skip = marker.group(2)
        elif marker and marker.group(1) == "file":
            block.file = marker.group(2)
        elif marker:
            start_re, sep, end_re = marker.group(2).partition(" -- ")
            assert sep, f"{source}:{start}: excerpt needs 'START -- END'"
            block.excerpt = (start_re, end_re)
        # Output shown for a command: the next block, if it is ```text.
        if block.lang == "text" and blocks and blocks[-1].lang == "sh":
            blocks[-1].output = block
        blocks.append(block)
    return blocks


@dataclass
class Run:
    block: Block
    returncode: int | None  # None: not run because an earlier block failed
    output: str  # stdout and stderr, interleaved


def run_commands(
    commands: list[Block], cwd: Path, env: dict[str, str], timeout: float
) -> list[Run]:
    """Runs command blocks in order in bash, from ``cwd``; after a failure the rest are
    recorded as not run."""
    cwd_file = cwd / ".cwd"
    runs: list[Run] = []
    for block in commands:
        if runs and runs[-1].returncode != 0:
            runs.append(Run(block, None, ""))
            continue
        script = f"cd {_quote(cwd)}\n{block.text}\npwd > {_quote(cwd_file)}\n"
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        runs.append(Run(block, proc.returncode, proc.stdout))
        if proc.returncode == 0:
            cwd = Path(cwd_file.read_text().strip())
    return runs


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"


# What varies between runs and machines: timings, sizes, hashes and paths. Every other
# number is deterministic and compared exactly, so that a stale one fails the page.
_VOLATILE = (
    (re.compile(r"\d+\.\d+(?= s wall\b)"), "<TIME>"),  # "0.002 s wall"
    (re.compile(r"(\bwall seconds\W+)\d+\.\d+"), r"\1<TIME>"),  # "wall seconds │ 0.031"
    (re.compile(r"\bin \d+\.\d+s\b"), "in <TIME>s"),  # cargo's "Finished ... in 5.65s"
    (re.compile(r"\b[0-9a-f]{64}\b"), "<SHA256>"),
    (re.compile(r"-[0-9a-f]{16}\b"), "-<HASH>"),
    (re.compile(r"\(/[^)]*\)"), "(<PATH>)"),
    (re.compile(r"\b\d+ bytes\b"), "<N> bytes"),
    (re.compile(r"\s+"), " "),
)
_DECIMAL = re.compile(r"\d+\.\d+")
# A benchmark table's header ("ours µs/op"): its rows' decimals are timings.
_TIMING_TABLE = re.compile(r"\bµs/op\b")


def normalize(line: str, timings: bool = False) -> str:
    """``line`` with what varies masked; ``timings``: a benchmark table row, all decimals."""
    line = line.strip()
    if timings:
        line = _DECIMAL.sub("<TIME>", line)
    for pattern, repl in _VOLATILE:
        line = pattern.sub(repl, line)
    return line


def _normalized(text: str) -> list[tuple[str, str]]:
    """Each line of ``text`` and its normalized form; a blank line ends a benchmark table."""
    out: list[tuple[str, str]] = []
    in_table = False
    for line in text.splitlines():
        if not line.strip():
            in_table = False
        out.append((line, normalize(line, in_table)))
        if _TIMING_TABLE.search(line):
            in_table = True
    return out


def missing_lines(shown: str, actual: str) -> list[str]:
    """Lines of a snippet that the command did not print (after normalising both)."""
    printed = {norm for _, norm in _normalized(actual)}
    return [line for line, norm in _normalized(shown) if line.strip() and norm not in printed]
