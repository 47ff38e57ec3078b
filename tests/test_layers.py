"""The import contracts (pyproject.toml [tool.importlinter]: the layers, and the cycles
within the scheduler) hold, checked by import-linter's ``lint-imports``; and they do
catch an upward import, a sideways one, and a cycle that imports the other."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(src: Path) -> subprocess.CompletedProcess[str]:
    """Runs lint-imports on the ``wasmsched`` package found under ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def tool() -> None:
    if not LINT_IMPORTS.exists():
        pytest.fail("lint-imports is missing: install the dev extras (pip install -e '.[dev]')")


def test_the_layers_contract_is_kept(tool: None) -> None:
    proc = lint_imports(ROOT / "src")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 kept, 0 broken" in proc.stdout


@pytest.mark.parametrize(
    ("module", "line", "edge"),
    [
        # upward: the framework must not know the scheduler
        ("framework/status.py", "import wasmsched.scheduler", "wasmsched.framework"),
        # sideways: plugins and wasm are siblings
        ("plugins/helpers.py", "import wasmsched.wasm", "wasmsched.plugins"),
        # sideways: the simulation and the live mode are siblings above the scheduler
        ("sim/store.py", "import wasmsched.live", "wasmsched.sim"),
        # the bottom imports nothing of ours
        ("errors.py", "import wasmsched.api", "wasmsched.errors"),
        # the cycles: the binding cycle does not call back into the scheduling cycle...
        (
            "scheduler/binding.py",
            "import wasmsched.scheduler.schedule_one",
            "wasmsched.scheduler.binding",
        ),
        # ...nor the scheduling cycle into the binding cycle...
        (
            "scheduler/schedule_one.py",
            "import wasmsched.scheduler.binding",
            "wasmsched.scheduler.schedule_one",
        ),
        # ...and the failure handler both end in is below them
        (
            "scheduler/failure.py",
            "import wasmsched.scheduler.schedule_one",
            "wasmsched.scheduler.failure",
        ),
    ],
)
def test_the_contract_rejects_an_upward_or_sideways_import(
    tool: None, tmp_path: Path, module: str, line: str, edge: str
) -> None:
    shutil.copytree(
        ROOT / "src" / "wasmsched",
        tmp_path / "wasmsched",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    target = tmp_path / "wasmsched" / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    proc = lint_imports(tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert "BROKEN" in proc.stdout and edge in proc.stdout
