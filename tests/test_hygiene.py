"""The project's own checks: ruff (lint and format) and mypy --strict on the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["src", "tests", "benchmarks", "scripts"]


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "ruff", "check", *PATHS],
        [sys.executable, "-m", "ruff", "format", "--check", *PATHS],
        [sys.executable, "-m", "mypy"],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_clean(command: list[str]) -> None:
    proc = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
