#!/usr/bin/env python3
"""Build the conformance test guests: guests/wat/*.wat and guests/c/*.c into .wasm files.

WAT sources are compiled with ``wasmtime.wat2wasm``; C sources with clang for
``wasm32-wasi`` against Debian's wasi-libc (packages ``clang lld wasi-libc
libclang-rt-14-dev-wasm32``). Output names are the source stems (``filter.wasm``,
``panic_on_filter.wasm``, ...). Built binaries are never committed.

Usage: ``scripts/build_guests.py [--out DIR]`` (default ``build/guests``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUESTS = ROOT / "guests"
WAT_DIR = GUESTS / "wat"
C_DIR = GUESTS / "c"

CLANG_FLAGS = (
    "--target=wasm32-wasi",
    "--sysroot=/usr",
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-function",
    "-Wl,--strip-debug",  # wasi-libc ships DWARF; keep only the name section
)


class BuildError(RuntimeError):
    """A guest failed to build (missing compiler or a compile error)."""


def sources() -> list[Path]:
    """Every file the build depends on, sorted."""
    files = sorted(WAT_DIR.glob("*.wat")) + sorted(C_DIR.glob("*.[ch]"))
    return [*files, Path(__file__).resolve()]


def sources_digest() -> str:
    """A digest of all guest sources and this script: the cache key of a build."""
    h = hashlib.sha256()
    for path in sources():
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def find_clang() -> str:
    clang = os.environ.get("CLANG") or shutil.which("clang") or shutil.which("clang-14")
    if not clang:
        raise BuildError(
            "clang not found: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32"
        )
    return clang


def build_wat(src: Path, out: Path) -> Path:
    import wasmtime

    dest = out / f"{src.stem}.wasm"
    try:
        dest.write_bytes(wasmtime.wat2wasm(src.read_text()))
    except Exception as exc:  # wasmtime raises WasmtimeError with the parse error
        raise BuildError(f"{src}: {exc}") from exc
    return dest


def build_c(clang: str, src: Path, out: Path) -> Path:
    dest = out / f"{src.stem}.wasm"
    cmd = [clang, *CLANG_FLAGS, f"-I{C_DIR}", "-o", str(dest), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"{src}: clang failed ({proc.returncode}):\n{proc.stderr}")
    return dest


def build(out: Path) -> dict[str, Path]:
    """Builds every guest into ``out``; returns {name: path}."""
    out.mkdir(parents=True, exist_ok=True)
    built = {src.stem: build_wat(src, out) for src in sorted(WAT_DIR.glob("*.wat"))}
    c_sources = sorted(C_DIR.glob("*.c"))
    if c_sources:
        clang = find_clang()
        with ThreadPoolExecutor(max_workers=2) as pool:
            for path in pool.map(lambda s: build_c(clang, s, out), c_sources):
                built[path.stem] = path
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "guests")
    args = parser.parse_args(argv)
    try:
        built = build(args.out)
    except BuildError as exc:
        print(f"build_guests: {exc}", file=sys.stderr)
        return 1
    for name in sorted(built):
        print(f"{built[name].stat().st_size:>8}  {built[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
