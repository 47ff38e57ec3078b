"""Compile-once module loading with an on-disk cache of serialized wasmtime modules.

Compiling a 1 MB TinyGo guest takes most of a second; deserializing it takes about a
millisecond. Entries are keyed by sha256(wasm) and a fingerprint of the wasmtime version and
engine settings, written atomically (temp file + rename) and protected by a sha256 of the
payload: a truncated or corrupt entry is ignored and rewritten, never handed to wasmtime
(whose deserializer trusts its input). The cache folder is, in order: the plugin's
``cache_dir``, ``$WASMSCHED_CACHE_DIR``, ``$XDG_CACHE_HOME/wasmsched``, ``~/.cache/wasmsched``.
An unwritable folder only disables the disk cache.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import wasmtime

from wasmsched.wasm import _fastpath
from wasmsched.wasm.config import WasmError

__all__ = [
    "STATS",
    "CacheStats",
    "clear_memory_cache",
    "default_cache_dir",
    "load_module",
    "not_wasm",
]

_log = logging.getLogger("wasmsched.wasm.cache")
_MAGIC = b"WSCWASM1"


@dataclass
class CacheStats:
    """Counters, for tests and diagnostics."""

    compiles: int = 0
    disk_hits: int = 0
    memory_hits: int = 0
    writes: int = 0
    corrupt: int = 0


STATS = CacheStats()
_memory: dict[tuple[str, str], wasmtime.Module] = {}
_lock = threading.Lock()


def default_cache_dir() -> Path:
    env = os.environ.get("WASMSCHED_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "wasmsched"
    return Path.home() / ".cache" / "wasmsched"


def clear_memory_cache() -> None:
    """Forgets in-process modules, so the next load goes to disk (tests)."""
    with _lock:
        _memory.clear()


def fingerprint_digest() -> str:
    return hashlib.sha256(_fastpath.engine_fingerprint().encode()).hexdigest()[:16]


WASM_MAGIC = b"\0asm"
# How much of a guest not_wasm looks at: enough for a comment block before "(module".
HEAD_BYTES = 4096


def not_wasm(head: bytes) -> str:
    """What a guest is when its first bytes say it can be neither a wasm binary nor
    WebAssembly text ("a text file, not a wasm plugin (...)"); "" when it may be wasm.

    One description for ``inspect`` and for a plugin's guestURL, which would otherwise
    report the WAT parser's "expected `(`" for any text file.
    """
    if head.startswith(WASM_MAGIC):
        return ""
    if not head:
        kind = "an empty file"
    else:
        try:
            # Not final: the head may end inside a multi-byte character.
            text = codecs.getincrementaldecoder("utf-8")().decode(head[:HEAD_BYTES])
        except UnicodeDecodeError:
            text = None
        stripped = (text or "").lstrip()
        while stripped.startswith(";;"):  # WAT line comments before the module
            stripped = stripped.partition("\n")[2].lstrip()
        if text is not None and stripped.startswith(("(module", "(component")):
            return ""
        kind = "a binary file" if text is None else "a text file"
    return f"{kind}, not a wasm plugin (no \\0asm header, not WebAssembly text)"


def wasm_binary(data: bytes) -> bytes:
    """``data`` as a wasm binary: binaries pass through, WebAssembly text is assembled.

    Accepting ``.wat`` lets a plugin be written and run with no toolchain at all.
    """
    if data[:4] == WASM_MAGIC:
        return data
    problem = not_wasm(data[:HEAD_BYTES])
    if problem:  # upstream's prefix, then what the file is
        raise WasmError(f"wasm: error compiling guest: {problem}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise WasmError("wasm: error compiling guest: neither a wasm binary nor WAT text") from None
    try:
        return bytes(wasmtime.wat2wasm(text))
    except wasmtime.WasmtimeError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid text"
        raise WasmError(f"wasm: error compiling guest: {first}") from None


def load_module(wasm: bytes, cache_dir: Path | None = None) -> wasmtime.Module:
    """The compiled module for ``wasm`` (a binary or WAT text): from memory, from disk, or
    compiled (and stored)."""
    wasm = wasm_binary(wasm)
    digest = hashlib.sha256(wasm).hexdigest()
    fp = fingerprint_digest()
    key = (digest, fp)
    with _lock:
        module = _memory.get(key)
    if module is not None:
        STATS.memory_hits += 1
        return module

    folder = cache_dir if cache_dir is not None else default_cache_dir()
    path = folder / f"{digest}-{fp}.cwasm"
    engine = _fastpath.engine()
    module = _read_entry(engine, path)
    if module is None:
        try:
            module = wasmtime.Module(engine, wasm)
        except wasmtime.WasmtimeError as exc:
            raise WasmError(f"wasm: error compiling guest: {exc}") from None
        STATS.compiles += 1
        _write_entry(path, module)
    with _lock:
        _memory[key] = module
    return module


def _read_entry(engine: wasmtime.Engine, path: Path) -> wasmtime.Module | None:
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    payload = blob[head:]
    if (
        len(blob) <= head
        or blob[: len(_MAGIC)] != _MAGIC
        or hashlib.sha256(payload).digest() != blob[len(_MAGIC) : head]
    ):
        STATS.corrupt += 1
        _log.warning("ignoring corrupt compiled-module cache entry %s", path)
        return None
    try:
        module = wasmtime.Module.deserialize(engine, payload)
    except wasmtime.WasmtimeError as exc:
        STATS.corrupt += 1
        _log.warning("ignoring incompatible cache entry %s: %s", path, exc)
        return None
    STATS.disk_hits += 1
    return module


def _write_entry(path: Path, module: wasmtime.Module) -> None:
    try:
        payload = bytes(module.serialize())
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".cwasm")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(_MAGIC)
                out.write(hashlib.sha256(payload).digest())
                out.write(payload)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, wasmtime.WasmtimeError) as exc:
        _log.debug("not caching compiled module at %s: %s", path, exc)
        return
    STATS.writes += 1
