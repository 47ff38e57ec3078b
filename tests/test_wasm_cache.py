"""wasm/cache.py: compile once, reuse serialized modules from disk, survive corrupt entries."""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from wasmsched.wasm import WasmError, cache

WAT = '(module (memory (export "memory") 1) (func (export "filter") (result i32) i32.const %d))'


def wasm(n: int) -> bytes:
    return wasmtime.wat2wasm(WAT % n)


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.cwasm"))


def test_second_load_comes_from_disk_without_compiling(tmp_path: Path) -> None:
    binary = wasm(1001)
    before = cache.STATS.compiles
    first = cache.load_module(binary, tmp_path)
    assert cache.STATS.compiles == before + 1
    assert len(entries(tmp_path)) == 1
    assert cache.load_module(binary, tmp_path) is first  # in-process memo

    cache.clear_memory_cache()
    hits = cache.STATS.disk_hits
    second = cache.load_module(binary, tmp_path)
    assert cache.STATS.compiles == before + 1  # no compile
    assert cache.STATS.disk_hits == hits + 1
    assert [e.name for e in second.exports] == ["memory", "filter"]


def test_key_includes_wasm_digest_and_engine_fingerprint(tmp_path: Path) -> None:
    cache.load_module(wasm(1002), tmp_path)
    cache.load_module(wasm(1003), tmp_path)
    names = [p.name for p in entries(tmp_path)]
    assert len(names) == 2
    assert all(n.endswith(f"-{cache.fingerprint_digest()}.cwasm") for n in names)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_entry_is_ignored_and_rewritten(tmp_path: Path, damage: str) -> None:
    binary = wasm(1100 + len(damage))
    cache.load_module(binary, tmp_path)
    (entry,) = entries(tmp_path)
    blob = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        entry.write_bytes(blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:])
    else:
        entry.write_bytes(b"not a module")
    cache.clear_memory_cache()
    corrupt, compiles = cache.STATS.corrupt, cache.STATS.compiles
    module = cache.load_module(binary, tmp_path)
    assert cache.STATS.corrupt == corrupt + 1
    assert cache.STATS.compiles == compiles + 1
    assert entry.read_bytes() == blob  # rewritten
    assert [e.name for e in module.exports] == ["memory", "filter"]


def test_unwritable_cache_dir_only_disables_the_disk_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    module = cache.load_module(wasm(1200), blocker / "sub")
    assert [e.name for e in module.exports] == ["memory", "filter"]


def test_compile_error_is_a_wasm_error(tmp_path: Path) -> None:
    with pytest.raises(WasmError, match="wasm: error compiling guest"):
        cache.load_module(b"\0asm\x01\0\0\0garbage", tmp_path)


def test_default_dir_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WASMSCHED_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.default_cache_dir() == tmp_path / "xdg" / "wasmsched"
    monkeypatch.setenv("WASMSCHED_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("WASMSCHED_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.default_cache_dir() == Path.home() / ".cache" / "wasmsched"
