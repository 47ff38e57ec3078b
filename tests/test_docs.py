"""docs/*.md pages with worked examples, executed: every ```sh block runs in a scratch
copy of the repository's examples and must print what the page shows."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from doc_pages import Block, Run, missing_lines, parse, run_commands

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["docs/dra.md", "docs/replay.md", "docs/versions.md", "docs/what-if.md"]


def _commands(page: str) -> list[Block]:
    blocks = parse((ROOT / page).read_text(), page)
    return [b for b in blocks if b.lang == "sh" and b.skip is None]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for forcing_colour in ("FORCE_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        env.pop(forcing_colour, None)
    env["COLUMNS"] = "120"
    return env


_RUNS: dict[str, list[Run]] = {}


def _runs(page: str, tmp_root: Path) -> list[Run]:
    if page not in _RUNS:
        scratch = tmp_root / page.replace("/", "_")
        shutil.copytree(ROOT / "examples", scratch / "examples")
        _RUNS[page] = run_commands(_commands(page), scratch, _env(), timeout=300)
    return _RUNS[page]


@pytest.mark.parametrize("page", PAGES)
def test_page_commands_print_what_the_page_shows(
    page: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    runs = _runs(page, tmp_path_factory.mktemp("docs"))
    assert runs, f"{page} has no commands"
    for run in runs:
        where = f"{page}:{run.block.line}"
        assert run.returncode == 0, f"{where}: exit {run.returncode}\n{run.output}"
        shown = run.block.output
        if shown is not None:
            missing = missing_lines(shown.text, run.output)
            assert not missing, f"{where}: not printed: {missing}\n--- printed:\n{run.output}"
