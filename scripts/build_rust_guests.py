#!/usr/bin/env python3
"""Build the Rust example guests of ``sdk/rust`` to ``.wasm`` files.

Uses the Debian toolchain (``/usr/bin/rustc`` with its wasm32 std) unless ``RUSTC`` /
``CARGO`` say otherwise: rustup toolchains usually lack the wasm target. The target is
``wasm32-wasip1`` when the toolchain has it, else ``wasm32-wasi`` (Rust <= 1.83).
Cargo is used when present; otherwise ``rustc`` is driven directly. Each example is
copied to ``OUT/<name>.wasm`` (``test_guest`` becomes ``test.wasm``) and its size printed.

Usage: scripts/build_rust_guests.py [--out DIR] [--debug]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "sdk" / "rust"
TARGET_DIR = ROOT / "target" / "rust"
DEFAULT_OUT = TARGET_DIR / "guests"
# Example source name -> output wasm name.
EXAMPLES = {
    "nodenumber": "nodenumber",
    "advanced": "advanced",
    "imagelocality": "imagelocality",
    "filter_label": "filter_label",
    "noop": "noop",
    "test_guest": "test",
    "all_hooks": "all_hooks",
}
TARGETS = ("wasm32-wasip1", "wasm32-wasi")


class BuildError(RuntimeError):
    """The toolchain is missing or a compilation failed."""


def find_rustc() -> str:
    """The rustc to use: $RUSTC, else Debian's /usr/bin/rustc."""
    rustc = os.environ.get("RUSTC") or "/usr/bin/rustc"
    if not Path(rustc).is_file():
        raise BuildError(
            f"rustc not found at {rustc} (install Debian's rustc and libstd-rust-dev-wasm32)"
        )
    return rustc


def find_cargo() -> str | None:
    """The cargo to use: $CARGO, else /usr/bin/cargo, else None (drive rustc directly)."""
    cargo = os.environ.get("CARGO") or "/usr/bin/cargo"
    return cargo if Path(cargo).is_file() else None


def wasm_target(rustc: str) -> str:
    """The first wasm target whose std is installed in the toolchain's sysroot."""
    sysroot = subprocess.run(
        [rustc, "--print", "sysroot"], check=True, capture_output=True, text=True
    ).stdout.strip()
    for target in TARGETS:
        if (Path(sysroot) / "lib" / "rustlib" / target / "lib").is_dir():
            return target
    raise BuildError(
        f"{rustc} has no std for {' or '.join(TARGETS)} (Debian: libstd-rust-dev-wasm32)"
    )


def _run(cmd: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(cmd, cwd=SDK, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")


# Panic locations name source files: recorded relative to the repository, so a guest built
# here carries no path of the machine that built it.
REMAP = f"--remap-path-prefix={ROOT}=."


def _build_with_cargo(cargo: str, rustc: str, target: str, release: bool) -> Path:
    # CARGO_ENCODED_RUSTFLAGS (0x1f-separated) keeps a path with spaces one argument and
    # the caller's own RUSTFLAGS in force.
    flags = [*os.environ.get("RUSTFLAGS", "").split(), REMAP]
    env = dict(os.environ, RUSTC=rustc, CARGO_TARGET_DIR=str(TARGET_DIR))
    env.pop("RUSTFLAGS", None)
    env["CARGO_ENCODED_RUSTFLAGS"] = "\x1f".join(flags)
    cmd = [cargo, "build", "--offline", "--target", target, "--examples"]
    if release:
        cmd.append("--release")
    _run(cmd, env)
    return TARGET_DIR / target / ("release" if release else "debug") / "examples"


def _build_with_rustc(rustc: str, target: str, release: bool) -> Path:
    out = TARGET_DIR / target / ("rustc-release" if release else "rustc-debug")
    out.mkdir(parents=True, exist_ok=True)
    opt = ["-C", "opt-level=3", "-C", "lto=fat", "-C", "codegen-units=1", "-C", "strip=symbols"]
    flags = ["--edition", "2021", "--target", target, "-C", "panic=abort", REMAP] + (
        opt if release else []
    )
    env = dict(os.environ)
    _run(
        [rustc, *flags, "--crate-type", "rlib", "--crate-name", "wasmsched_guest",
         "-o", str(out / "libwasmsched_guest.rlib"), str(SDK / "src" / "lib.rs")],
        env,
    )  # fmt: skip
    for name in EXAMPLES:
        _run(
            [rustc, *flags, "--crate-type", "cdylib", "--crate-name", name,
             "--extern", f"wasmsched_guest={out / 'libwasmsched_guest.rlib'}",
             "-o", str(out / f"{name}.wasm"), str(SDK / "examples" / f"{name}.rs")],
            env,
        )  # fmt: skip
    return out


def build(out_dir: Path, release: bool = True) -> dict[str, Path]:
    """Builds every example and copies it to ``out_dir``; returns name -> wasm path."""
    rustc = find_rustc()
    target = wasm_target(rustc)
    cargo = find_cargo()
    if cargo is not None:
        built = _build_with_cargo(cargo, rustc, target, release)
    else:
        built = _build_with_rustc(rustc, target, release)
    out_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Path] = {}
    for src, name in EXAMPLES.items():
        dest = out_dir / f"{name}.wasm"
        shutil.copyfile(built / f"{src}.wasm", dest)
        result[name] = dest
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    parser.add_argument("--debug", action="store_true", help="build without optimisations")
    args = parser.parse_args(argv)
    try:
        wasms = build(args.out.resolve(), release=not args.debug)
    except BuildError as e:
        print(f"build_rust_guests: {e}", file=sys.stderr)
        return 1
    for name, path in wasms.items():
        print(f"{path.stat().st_size:>9,d} B  {name:<14} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
