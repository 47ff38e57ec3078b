"""The public API (``wasmsched/__init__.py``): docs/python-api.md's examples run and print
what the page shows, and every symbol of the facade is documented."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import wasmsched

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python-api.md"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def examples() -> list[tuple[str, str]]:
    """(code, expected output) for each python block; the block after it is its output."""
    blocks = [(m.group(1), m.group(2)) for m in _FENCE.finditer(DOC.read_text())]
    pairs = []
    for i, (lang, body) in enumerate(blocks):
        if lang != "python":
            continue
        assert i + 1 < len(blocks) and blocks[i + 1][0] == "output", (
            f"python block {len(pairs) + 1} of {DOC.name} has no output block after it"
        )
        pairs.append((body, blocks[i + 1][1]))
    return pairs


EXAMPLES = examples()


def test_the_page_has_examples_for_embedding_and_plugins() -> None:
    code = "\n".join(c for c, _ in EXAMPLES)
    assert len(EXAMPLES) >= 4
    assert "wasmsched.simulate(" in code and "explain=True" in code
    assert "registry.register(" in code and "load_configuration(" in code


@pytest.mark.parametrize("index", range(len(EXAMPLES)), ids=lambda i: f"example-{i + 1}")
def test_example_prints_what_the_page_shows(index: int) -> None:
    code, expected = EXAMPLES[index]
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


def _own_docstring(obj: object) -> str | None:
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        # A dataclass without a docstring gets its signature as __doc__.
        if doc and doc.startswith(f"{obj.__name__}("):
            return None
        return doc
    return getattr(obj, "__doc__", None)


def test_every_public_symbol_is_documented() -> None:
    module_doc = wasmsched.__doc__ or ""
    undocumented = []
    for name in wasmsched.__all__:
        obj = getattr(wasmsched, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            if not (_own_docstring(obj) or "").strip():
                undocumented.append(name)
        elif name not in module_doc:  # constants and aliases are described there
            undocumented.append(name)
    assert undocumented == []


def test_names_resolve_lazily_and_unknown_names_fail() -> None:
    assert sorted(wasmsched.__all__) == dir(wasmsched)
    assert wasmsched.Status is wasmsched.__getattr__("Status")
    with pytest.raises(AttributeError, match="NoSuchName"):
        _ = wasmsched.NoSuchName  # type: ignore[attr-defined]


def _type_checking_imports() -> dict[str, tuple[str, ...]]:
    """What the ``if TYPE_CHECKING:`` block of wasmsched/__init__.py imports, by module,
    each name re-exported as itself ("X as X", which mypy --strict needs)."""
    tree = ast.parse(Path(wasmsched.__file__).read_text())
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        if node.test.id == "TYPE_CHECKING"
    ]
    imports: dict[str, tuple[str, ...]] = {}
    for stmt in block.body:
        assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.unparse(stmt)
        for alias in stmt.names:
            assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
            imports[stmt.module] = (*imports.get(stmt.module, ()), alias.name)
    return imports


def test_the_public_names_are_listed_once_and_the_type_checkers_view_agrees() -> None:
    # _HOMES is the list: __getattr__ and __all__ come from it. Type checkers cannot run
    # __getattr__, so the TYPE_CHECKING block names the same things again; it must say
    # exactly what _HOMES says, in the same order.
    assert _type_checking_imports() == wasmsched._HOMES
    functions = sorted(
        name
        for name, value in vars(wasmsched).items()
        if inspect.isfunction(value) and value.__module__ == "wasmsched"
        if not name.startswith("_")
    )
    names = [name for names in wasmsched._HOMES.values() for name in names]
    assert len(set(names)) == len(names)
    assert wasmsched.__all__ == sorted([*names, *functions])


def test_errors_of_bad_inputs_are_wasmsched_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(wasmsched.InputError, match=r"missing\.yaml"):
        wasmsched.load_configuration(missing)
    with pytest.raises(wasmsched.WasmschedError):
        wasmsched.load_cluster(missing)


def mypy_strict(path: Path) -> subprocess.CompletedProcess[str]:
    # A cache beside the file: a second check in the same folder reads wasmsched's modules
    # from it instead of analysing them again.
    cache = path.parent / ".mypy_cache"
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_examples_type_check_and_a_wrong_plugin_signature_does_not(tmp_path: Path) -> None:
    code = "\n\n".join(
        f"def example_{i}() -> None:\n" + "".join(f"    {line}\n" for line in c.splitlines())
        for i, (c, _) in enumerate(EXAMPLES)
    )
    good = tmp_path / "examples.py"
    good.write_text(code)
    proc = mypy_strict(good)
    assert proc.returncode == 0, proc.stdout
    # The plugin example's conformance lines are what catch a wrong signature.
    plugin_code = next(c for c, _ in EXAMPLES if "registry.register(" in c)
    signature = "def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo)"
    assert signature in plugin_code
    bad = tmp_path / "bad_plugin.py"
    bad.write_text(plugin_code.replace(signature, "def filter(self, state: CycleState, pod: Pod)"))
    proc = mypy_strict(bad)
    assert proc.returncode != 0 and '"FilterPlugin"' in proc.stdout, proc.stdout
