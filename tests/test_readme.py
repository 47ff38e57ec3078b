"""The README's two commands work from a fresh clone on Debian, and it states what they need."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from doc_pages import parse

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _first_command() -> list[str]:
    blocks = [b for b in parse(README.read_text(), "README.md") if b.lang == "sh"]
    return [step.strip() for step in blocks[0].text.split("&&")]


def test_the_first_command_installs_into_a_virtualenv_and_simulates() -> None:
    # Debian's pip refuses to install outside a virtual environment
    # (externally-managed-environment): the command makes one and runs everything from it.
    steps = _first_command()
    assert steps[0] == "python3 -m venv .venv"
    for step in steps[1:]:
        assert step.startswith(".venv/bin/"), step
    assert steps[1].startswith(".venv/bin/pip install -e .")
    program, *args = steps[-1].split()
    assert program == ".venv/bin/wasmsched" and args[0] == "simulate"
    # This suite's wasmsched stands for the one the command installs.
    proc = subprocess.run(
        [sys.executable, "-m", "wasmsched", *args], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "Scheduled" in proc.stdout


def test_the_readme_states_the_prerequisites() -> None:
    text = " ".join(README.read_text().split())
    python = re.search(r'requires-python = ">=(\d+\.\d+)"', (ROOT / "pyproject.toml").read_text())
    assert python is not None
    assert f"Python {python[1]} or newer" in text
    assert "python3-venv" in text
    go = re.search(r"need Go >= (\d+\.\d+)", (ROOT / "scripts" / "require-go").read_text())
    assert go is not None
    assert f"Go {go[1]} or newer" in text


def test_dev_setup_stops_first_when_go_is_missing(tmp_path: Path) -> None:
    # A PATH without go, whose apt, dpkg, sudo and python3 only record that they ran.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "id", "sed", "grep", "cat"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    ran = tmp_path / "ran"
    for stub in ("apt-get", "dpkg-query", "sudo", "python3"):
        (bin_dir / stub).write_text(f"#!{shutil.which('bash')}\necho {stub} >> {ran}\nexit 1\n")
        (bin_dir / stub).chmod(0o755)
    proc = subprocess.run(
        [shutil.which("bash") or "bash", str(ROOT / "scripts" / "dev-setup")],
        env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("dev-setup: Go is not installed (need Go >= 1.26 on PATH: ")
    assert proc.stderr.count("\n") == 1
    assert not ran.exists(), ran.read_text()
