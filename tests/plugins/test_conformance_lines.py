"""The static conformance lines of the in-tree plugins (Go's ``var _ framework.FilterPlugin = &X{}``).

Each plugin module ends with an ``if TYPE_CHECKING:`` block holding one line
``_<point>: type[<Protocol>] = <Class>`` per extension point the class serves (plus
``EnqueueExtensions``), so that ``mypy --strict`` checks the class against the protocols of
wasmsched/framework/interfaces.py. The first test proves that such a line makes mypy fail on
a plugin that breaks its protocol (and pass on one that keeps it); the second that every
plugin of the in-tree registry carries exactly the lines for the points it serves.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FakeHandle

from wasmsched.framework import interfaces as fw
from wasmsched.plugins.registry import IN_TREE_NAMES, in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

PROTOCOLS = {
    fw.PRE_ENQUEUE: "PreEnqueuePlugin",
    fw.QUEUE_SORT: "QueueSortPlugin",
    fw.PRE_FILTER: "PreFilterPlugin",
    fw.FILTER: "FilterPlugin",
    fw.POST_FILTER: "PostFilterPlugin",
    fw.PRE_SCORE: "PreScorePlugin",
    fw.SCORE: "ScorePlugin",
    fw.RESERVE: "ReservePlugin",
    fw.PERMIT: "PermitPlugin",
    fw.PRE_BIND: "PreBindPlugin",
    fw.BIND: "BindPlugin",
    fw.POST_BIND: "PostBindPlugin",
}

_HEADER = """\
from __future__ import annotations

from typing import TYPE_CHECKING

from wasmsched.api.objects import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.node_info import NodeInfo
from wasmsched.framework.status import Status
"""

# (case, plugin class body, protocol, expected mypy error or "" for a clean pass)
CASES = [
    (
        "filter_ok",
        """
        class Plugin:
            name = "P"

            def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
                return None
        """,
        "FilterPlugin",
        "",
    ),
    (
        "filter_wrong_parameter_type",
        """
        class Plugin:
            name = "P"

            def filter(self, state: CycleState, pod: Pod, node_info: str) -> Status | None:
                return None
        """,
        "FilterPlugin",
        'variable has type "type[FilterPlugin]"',
    ),
    (
        "filter_missing_parameter",
        """
        class Plugin:
            name = "P"

            def filter(self, state: CycleState, pod: Pod) -> Status | None:
                return None
        """,
        "FilterPlugin",
        'variable has type "type[FilterPlugin]"',
    ),
    (
        "score_wrong_return_type",
        """
        class Plugin:
            name = "P"

            def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
                return 0

            def score_extensions(self) -> None:
                return None
        """,
        "ScorePlugin",
        'variable has type "type[ScorePlugin]"',
    ),
    (
        "score_extensions_missing",
        """
        class Plugin:
            name = "P"

            def score(
                self, state: CycleState, pod: Pod, node_info: NodeInfo
            ) -> tuple[int, Status | None]:
                return 0, None
        """,
        "ScorePlugin",
        'variable has type "type[ScorePlugin]"',
    ),
    (
        "score_extensions_broken_normalize",
        """
        class Plugin:
            name = "P"

            def score(
                self, state: CycleState, pod: Pod, node_info: NodeInfo
            ) -> tuple[int, Status | None]:
                return 0, None

            def normalize_score(self, state: CycleState, pod: Pod, scores: list[int]) -> None:
                return None

            def score_extensions(self) -> Plugin:
                return self
        """,
        "ScorePlugin",
        'variable has type "type[ScorePlugin]"',
    ),
    (
        "score_with_extensions_ok",
        """
        class Plugin:
            name = "P"

            def score(
                self, state: CycleState, pod: Pod, node_info: NodeInfo
            ) -> tuple[int, Status | None]:
                return 0, None

            def normalize_score(
                self, state: CycleState, pod: Pod, scores: list[NodeScore]
            ) -> Status | None:
                return None

            def score_extensions(self) -> Plugin:
                return self
        """,
        "ScorePlugin",
        "",
    ),
    (
        "name_missing",
        """
        class Plugin:
            def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
                return None
        """,
        "FilterPlugin",
        'variable has type "type[FilterPlugin]"',
    ),
]


def _snippet(body: str, protocol: str) -> str:
    return (
        _HEADER
        + f"from wasmsched.framework.interfaces import {protocol}\n\n"
        + textwrap.dedent(body).strip()
        + f"\n\n\nif TYPE_CHECKING:\n    _point: type[{protocol}] = Plugin\n"
    )


def test_mypy_checks_a_conformance_line(tmp_path: Path) -> None:
    """One mypy --strict run over every case: each broken case fails on its line, no other."""
    for case, body, protocol, _ in CASES:
        (tmp_path / f"{case}.py").write_text(_snippet(body, protocol))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            *(f"{case}.py" for case, _, _, _ in CASES),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    errors: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(\w+)\.py:(\d+): error: (.*)", line)
        if m:
            errors.setdefault(m.group(1), []).append(f"{m.group(2)}: {m.group(3)}")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 2 would be a crash/usage
    for case, body, protocol, expected in CASES:
        got = errors.get(case, [])
        if not expected:
            assert got == [], (case, got)
            continue
        last_line = len(_snippet(body, protocol).splitlines())
        assert got == [
            f"{last_line}: Incompatible types in assignment (expression has type "
            f'"type[Plugin]", {expected})  [assignment]'
        ], (case, proc.stdout)


def _conformance_lines(path: Path, class_name: str) -> list[str]:
    """The protocols of the module's top-level ``if TYPE_CHECKING:`` lines naming the class."""
    tree = ast.parse(path.read_text())
    found: list[str] = []
    for node in tree.body:
        if not (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            continue
        for stmt in node.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.value, ast.Name)
                and stmt.value.id == class_name
                and isinstance(stmt.annotation, ast.Subscript)
                and isinstance(stmt.annotation.value, ast.Name)
                and stmt.annotation.value.id == "type"
                and isinstance(stmt.annotation.slice, ast.Name)
            ):
                found.append(stmt.annotation.slice.id)
    return found


@pytest.mark.parametrize("name", IN_TREE_NAMES)
def test_in_tree_plugin_has_its_conformance_lines(name: str) -> None:
    handle = FakeHandle()
    # The newest release: a plugin serves its most points there (DynamicResources' Score
    # from 1.35).
    handle.features = SchedulerFeatures.of(KubernetesVersion(1, 37))
    plugin = in_tree_registry().factories[name]({}, handle)
    cls = type(plugin)
    served = [PROTOCOLS[p] for p in fw.POINT_METHODS if fw.implements(plugin, p)]
    if fw.has_enqueue_extensions(plugin):
        served.append("EnqueueExtensions")
    assert served, name
    source = inspect.getsourcefile(cls)
    assert source is not None
    lines = _conformance_lines(Path(source), cls.__name__)
    assert sorted(lines) == sorted(served), (source, lines)


def test_conformance_lines_finds_lines_only_under_type_checking(tmp_path: Path) -> None:
    """The AST reader above ignores lines outside ``if TYPE_CHECKING:`` and for other classes."""
    module = tmp_path / "m.py"
    module.write_text(
        "if TYPE_CHECKING:\n"
        "    _filter: type[FilterPlugin] = A\n"
        "    _score: type[ScorePlugin] = B\n"
        "_bind: type[BindPlugin] = A\n"
        "if OTHER:\n"
        "    _permit: type[PermitPlugin] = A\n"
    )
    assert _conformance_lines(module, "A") == ["FilterPlugin"]
    assert _conformance_lines(module, "B") == ["ScorePlugin"]
    assert _conformance_lines(module, "C") == []
