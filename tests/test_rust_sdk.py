"""The Rust guest SDK's own unit tests: `cargo test` on the host target (Debian toolchain)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CARGO = Path("/usr/bin/cargo")
RUSTC = Path(os.environ.get("RUSTC", "/usr/bin/rustc"))

pytestmark = pytest.mark.skipif(
    not CARGO.exists() or not RUSTC.exists(),
    reason="needs Debian's cargo and rustc (scripts/dev-setup installs them)",
)


def test_cargo_test_passes(tmp_path: Path) -> None:
    crate = tmp_path / "rust"
    shutil.copytree(ROOT / "sdk" / "rust", crate, ignore=shutil.ignore_patterns("target"))
    env = {
        **os.environ,
        "RUSTC": str(RUSTC),
        "RUSTDOC": str(RUSTC.with_name("rustdoc")),
        "CARGO_TARGET_DIR": str(tmp_path / "target"),
        "CARGO_NET_OFFLINE": "true",
    }
    proc = subprocess.run(
        [str(CARGO), "test", "--offline", "--quiet"],
        cwd=crate,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    results = re.findall(r"test result: ok\. (\d+) passed; 0 failed", output)
    assert results, output
    assert sum(int(n) for n in results) >= 50  # the SDK's unit and integration tests ran
