#!/usr/bin/env python3
"""Guest load time with and without the on-disk compiled-module cache.

Builds a large guest from our sources (the Rust ``all_hooks`` example without
optimisations, its DWARF sections dropped: about 0.5 MB, mostly code) unless ``--wasm``
names one, then measures, side by side in one run, each load in a fresh process:

* cold: an empty cache folder, so ``WasmPlugin`` fetches, compiles and serializes;
* warm: the folder the cold load just filled, so the module is deserialized.

Each child constructs ``WasmPlugin(name, WasmPluginConfig(guest_url=..., cache_dir=...))``
and reports the time spent in ``fetch_guest``, in ``load_module`` and in the whole
constructor (which also validates the module and starts the first guest instance), plus
the cache counters proving which path ran. The table shows medians and cold/warm ratios.

Usage: ``python benchmarks/bench_wasm_load.py [--runs N] [--wasm PATH] [--guest-config TEXT]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

GUEST = "all_hooks"
COLUMNS = ("fetch", "load_module", "plugin", "process")


# --- the guest ----------------------------------------------------------------------------


def _leb128(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def strip_dwarf(wasm: bytes) -> bytes:
    """``wasm`` without its ``.debug_*`` custom sections, which wasmtime does not compile;
    what is left (code, data, the name section) is what a stripped debug build ships."""
    out = bytearray(wasm[:8])
    pos = 8
    while pos < len(wasm):
        size, body = _leb128(wasm, pos + 1)
        end = body + size
        if wasm[pos] == 0:  # custom section: a name, then the payload
            name_len, name_at = _leb128(wasm, body)
            if wasm[name_at : name_at + name_len].startswith(b".debug"):
                pos = end
                continue
        out += wasm[pos:end]
        pos = end
    return bytes(out)


def code_size(wasm: bytes) -> int:
    """Bytes of the code section (what the compiler works through)."""
    pos = 8
    while pos < len(wasm):
        size, body = _leb128(wasm, pos + 1)
        if wasm[pos] == 10:
            return size
        pos = body + size
    return 0


def build_guest(dest: Path) -> Path:
    """The unoptimised ``all_hooks`` guest without DWARF, written to ``dest``."""
    import build_rust_guests  # scripts/, on sys.path

    built = build_rust_guests.build(dest / "debug", release=False)
    path = dest / f"{GUEST}-debug.wasm"
    path.write_bytes(strip_dwarf(built[GUEST].read_bytes()))
    return path


# --- one measurement, in a fresh process ------------------------------------------------------


def child(wasm: Path, cache_dir: Path, guest_config: str) -> dict[str, Any]:
    """Loads the guest once; times spent in fetch_guest, load_module and the constructor."""
    from wasmsched.wasm import cache, plugin
    from wasmsched.wasm.config import WasmPluginConfig

    spent = {"fetch": 0.0, "load_module": 0.0}

    def timed(name: str, func: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t0

        return wrapper

    # The constructor calls these through plugin's namespace.
    names = vars(plugin)
    for key, func in (("fetch", "fetch_guest"), ("load_module", "load_module")):
        names[func] = timed(key, names[func])
    config = WasmPluginConfig(
        guest_url=wasm.resolve().as_uri(), guest_config=guest_config, cache_dir=cache_dir
    )
    t0 = time.perf_counter()
    plugin.WasmPlugin("Bench", config, handle=None)
    total = time.perf_counter() - t0
    s = cache.STATS
    return {
        "fetch": spent["fetch"],
        "load_module": spent["load_module"],
        "plugin": total,
        "stats": {"compiles": s.compiles, "disk_hits": s.disk_hits, "writes": s.writes},
    }


def measure(wasm: Path, cache_dir: Path, guest_config: str) -> dict[str, Any]:
    """One child process; adds its wall time (interpreter start and imports included)."""
    cmd = [sys.executable, __file__, "--child", str(wasm), "--cache-dir", str(cache_dir)]
    cmd += ["--guest-config", guest_config]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"bench_wasm_load: child failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    result["process"] = wall
    return result


# --- the table ------------------------------------------------------------------------------


def run(wasm: Path, runs: int, guest_config: str) -> None:
    data = wasm.read_bytes()
    print(
        f"guest: {wasm} ({len(data):,d} B, code section {code_size(data):,d} B); "
        f"{runs} runs, one fresh process per load"
    )
    samples: dict[str, list[dict[str, Any]]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="bench-wasm-load-") as tmp:
        for i in range(runs):
            # Alternating cold and warm keeps machine load changes from favouring one side.
            folder = Path(tmp) / f"cache-{i}"
            samples["cold"].append(measure(wasm, folder, guest_config))
            samples["warm"].append(measure(wasm, folder, guest_config))
        entry = next((Path(tmp) / "cache-0").glob("*.cwasm"))
        print(f"cache entry: {entry.stat().st_size:,d} B")
    expected = {
        "cold": {"compiles": 1, "disk_hits": 0, "writes": 1},
        "warm": {"compiles": 0, "disk_hits": 1, "writes": 0},
    }
    for kind, rows in samples.items():
        for row in rows:
            if row["stats"] != expected[kind]:
                raise SystemExit(f"bench_wasm_load: {kind} load took another path: {row}")
    med = {
        kind: {c: statistics.median(r[c] for r in rows) * 1000 for c in COLUMNS}
        for kind, rows in samples.items()
    }
    print()
    print(f"{'median ms':<22}{'cold':>10}{'warm':>10}{'cold/warm':>11}")
    labels = {
        "fetch": "fetch_guest",
        "load_module": "load_module",
        "plugin": "WasmPlugin(...) total",
        "process": "process wall",
    }
    for c in COLUMNS:
        cold, warm = med["cold"][c], med["warm"][c]
        ratio = f"{cold / warm:.1f}x" if warm > 0 else "-"
        print(f"{labels[c]:<22}{cold:>10.1f}{warm:>10.1f}{ratio:>11}")
    print()
    print("load_module: cold = compile + serialize + write; warm = read + check + deserialize.")
    print("process wall includes the interpreter start and imports (the same on both sides).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="measurements per side")
    parser.add_argument("--wasm", type=Path, help="guest to load (default: build all_hooks)")
    parser.add_argument("--guest-config", default="", help="guestConfig for the guest")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child, args.cache_dir, args.guest_config)))
        return 0
    if args.wasm is not None:
        run(args.wasm, args.runs, args.guest_config)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-wasm-guest-") as tmp:
        run(build_guest(Path(tmp)), args.runs, args.guest_config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
