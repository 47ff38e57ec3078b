"""The conformance guests, built once per source version and shared by tests and processes.

``guest("filter")`` returns the path of ``filter.wasm``, building every guest with
``scripts/build_guests.py`` on first use. Builds are cached in the temp dir under a digest
of the guest sources, so a session (or the next one) rebuilds only when a source changed.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_guests", ROOT / "scripts" / "build_guests.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def guests_dir() -> Path:
    """The folder of built guests for the current sources (built if needed)."""
    builder = _builder()
    cache = Path(tempfile.gettempdir()) / f"wasmsched-guests-{builder.sources_digest()[:16]}"
    if (cache / ".complete").exists():
        return cache
    staging = Path(tempfile.mkdtemp(prefix="wasmsched-guests-build-"))
    try:
        builder.build(staging)
        (staging / ".complete").write_text("ok\n")
        try:
            os.rename(staging, cache)  # atomic; another process may have won the race
        except OSError:
            if not (cache / ".complete").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return cache


def guest(name: str) -> Path:
    """Path of the built guest ``name`` (a source stem, e.g. ``panic_on_filter``)."""
    path = guests_dir() / f"{name}.wasm"
    if not path.exists():
        raise FileNotFoundError(f"no guest {name!r} in {guests_dir()}")
    return path


def guest_url(name: str) -> str:
    return guest(name).as_uri()
