"""The project's own checks: ruff (lint and format), mypy --strict on the package, and
the size of its modules and classes, and no dead module."""

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


MAX_MODULE_LINES = 700
MAX_CLASS_LINES = 500


def _sizes() -> tuple[list[str], list[str]]:
    import ast

    modules, classes = [], []
    for path in sorted((ROOT / "src" / "wasmsched").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        if len(text.splitlines()) > MAX_MODULE_LINES:
            modules.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    classes.append(f"{rel}: class {node.name}: {size} lines")
    return modules, classes


def test_no_module_or_class_is_too_big() -> None:
    # A module that grows past this is cut by responsibility, as kube-scheduler splits a
    # plugin into filtering, scoring and plugin files.
    modules, classes = _sizes()
    assert modules == [] and classes == []


# Imported by no module of the package, and rightly so: ``python -m wasmsched``.
ENTRY_POINTS = frozenset({"wasmsched.__main__"})


def test_every_module_is_imported_by_another() -> None:
    """A module no other module imports is dead code (an old import path kept as a
    re-export, say); packages count as imported through their modules."""
    import grimp

    graph = grimp.build_graph("wasmsched", cache_dir=None)
    src = ROOT / "src"
    dead = [
        module
        for module in sorted(graph.modules)
        if module not in ENTRY_POINTS
        and not (src.joinpath(*module.split(".")) / "__init__.py").exists()
        and not graph.find_modules_that_directly_import(module)
    ]
    assert dead == []
