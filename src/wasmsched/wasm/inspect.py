"""``inspect_wasm``: what a guest exports and imports, and whether this host can load it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wasmsched.wasm.abi import POINT_ORDER
from wasmsched.wasm.cache import load_module
from wasmsched.wasm.config import WasmError, WasmPluginConfig
from wasmsched.wasm.fetch import fetch_guest
from wasmsched.wasm.guest import (
    CompiledGuest,
    InstantiateError,
    describe_type,
    exports_of,
    module_imports,
)
from wasmsched.wasm.host import PluginEnv

__all__ = ["ENQUEUE_EXTENSIONS", "InspectReport", "inspect_wasm"]

ENQUEUE_EXTENSIONS = "enqueueExtensions"


@dataclass
class InspectReport:
    """The result of ``inspect_wasm``; ``loadable`` is False exactly when ``problems``."""

    source: str
    size: int
    sha256: str
    exports: list[tuple[str, str]] = field(default_factory=list)
    imports: list[tuple[str, str, str]] = field(default_factory=list)
    extension_points: list[str] = field(default_factory=list)
    loadable: bool = False
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "size": self.size,
            "sha256": self.sha256,
            "exports": [{"name": n, "signature": s} for n, s in self.exports],
            "imports": [{"module": m, "name": n, "signature": s} for m, n, s in self.imports],
            "extensionPoints": list(self.extension_points),
            "loadable": self.loadable,
            "problems": list(self.problems),
        }

    def to_text(self) -> str:
        lines = [
            f"guest: {self.source}",
            f"size: {self.size} bytes, sha256 {self.sha256}",
            "extension points: " + (", ".join(self.extension_points) or "none"),
            "exports:",
        ]
        lines += [f"  {name} {sig}" for name, sig in self.exports] or ["  (none)"]
        lines.append("imports:")
        lines += [f"  {m}.{n} {sig}" for m, n, sig in self.imports] or ["  (none)"]
        lines.append("loadable: " + ("yes" if self.loadable else "no"))
        lines += [f"  problem: {p}" for p in self.problems]
        return "\n".join(lines)


def inspect_wasm(
    path_or_bytes: str | Path | bytes,
    *,
    instantiate: bool = True,
    config: WasmPluginConfig | None = None,
) -> InspectReport:
    """Reports a guest given as bytes, a file path or a guest URL.

    With ``instantiate`` (the default) and no static problem, one instance is created (its
    ``_start`` runs, with ``config``'s guestConfig and Args, without a scheduler handle), so
    a guest that fails at start-up is reported as not loadable. Raises WasmError only when
    the source cannot be read.
    """
    if isinstance(path_or_bytes, (bytes, bytearray)):
        wasm, source = bytes(path_or_bytes), "<bytes>"
    else:
        source = str(path_or_bytes)
        if "://" in source:
            wasm = fetch_guest(source)
        else:
            try:
                wasm = Path(source).read_bytes()
            except OSError as exc:
                raise WasmError(f"read {source}: {exc.strerror or exc}") from None
    report = InspectReport(source, len(wasm), hashlib.sha256(wasm).hexdigest())
    cfg = config or WasmPluginConfig(guest_url=source)
    try:
        module = load_module(wasm, cfg.cache_dir)
    except WasmError as exc:
        report.problems.append(exc.problem)
        return report
    report.exports = [(name, describe_type(ty)) for name, ty in exports_of(module)]
    report.imports = [(m, n, describe_type(ty)) for m, n, ty in module_imports(module)]
    compiled, problems = CompiledGuest.check(
        module, memory_limit=cfg.memory_limit_mib << 20, timeout_ms=cfg.call_timeout_ms
    )
    points = compiled.analysis.extension_points
    # enqueue gives EnqueueExtensions (abi.md §2.1: the events EventsToRegister returns),
    # which is not a point of the scheduling cycle; it comes first, as the queue does.
    queueing = [ENQUEUE_EXTENSIONS] if "enqueue" in compiled.analysis.exports else []
    report.extension_points = queueing + [p for p in POINT_ORDER if p in points]
    report.problems.extend(problems)
    if not problems and instantiate:
        env = PluginEnv("inspect", None, cfg.guest_config, cfg.log_severity, cfg.args, [])
        try:
            compiled.instantiate(env).close()
        except InstantiateError as exc:
            report.problems.append(f"failed to create a guest pool: {exc}")
    report.loadable = not report.problems
    return report
