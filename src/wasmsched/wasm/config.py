"""Wasm plugin configuration (``pluginConfig[].args``) and the load-time error type."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wasmsched.errors import InputError

__all__ = ["WasmError", "WasmPluginConfig"]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_MAX_MEMORY_MIB = 4096  # wasm32 address space
# Keys of typed plugin args that a config loader may pass through untouched.
_IGNORED_KEYS = frozenset({"apiVersion", "kind"})


class WasmError(InputError):
    """A wasm plugin could not be configured, fetched, compiled or instantiated.

    ``problem`` is the upstream-compatible message (e.g. ``wasm: guest does not export any
    plugin functions``); ``url`` is the guest it concerns, if known. ``str()`` names both.
    """

    def __init__(self, problem: str, url: str | None = None) -> None:
        super().__init__(problem if url is None else f"{url}: {problem}")
        self.problem = problem
        self.url = url


@dataclass
class WasmPluginConfig:
    """How to load one wasm plugin and the limits its guest instances run under."""

    guest_url: str
    guest_config: str = ""
    log_severity: int = 0
    args: list[str] = field(default_factory=list)
    call_timeout_ms: int = 1000
    memory_limit_mib: int = 256
    cache_dir: Path | None = None
    base_dir: Path | None = None
    """Folder that relative ``file://`` URLs resolve against (CWD when None)."""

    @classmethod
    def from_args(
        cls, args: Mapping[str, Any], *, base_dir: Path | None = None
    ) -> WasmPluginConfig:
        """Parses upstream's args (``guestURL``, ``guestConfig``, ``logSeverity``, ``Args``)
        plus ours (``callTimeoutMilliseconds``, ``memoryLimitMiB``).

        ``guestConfig`` may also be a mapping or list (as YAML invites); it is then handed
        to the guest as compact JSON.
        """
        if not isinstance(args, Mapping):
            raise WasmError(f"wasm: plugin args must be a mapping, got {type(args).__name__}")
        known = {
            "guestURL",
            "guestConfig",
            "logSeverity",
            "Args",
            "callTimeoutMilliseconds",
            "memoryLimitMiB",
        }
        for key in args:
            if key not in known and key not in _IGNORED_KEYS:
                raise WasmError(
                    f"wasm: unknown plugin arg {key!r} (known: {', '.join(sorted(known))})"
                )
        url = args.get("guestURL")
        if url is None or url == "":
            raise WasmError("wasm: guestURL is required")
        if not isinstance(url, str):
            raise WasmError(f"wasm: guestURL must be a string, got {type(url).__name__}")

        guest_config = args.get("guestConfig", "")
        if guest_config is None:
            guest_config = ""
        elif isinstance(guest_config, (Mapping, list)):
            guest_config = json.dumps(guest_config, separators=(",", ":"), ensure_ascii=False)
        elif not isinstance(guest_config, str):
            raise WasmError(
                f"wasm: guestConfig must be a string, got {type(guest_config).__name__}", url
            )

        severity = _int_arg(args, "logSeverity", 0, _INT32_MIN, _INT32_MAX, url)
        timeout = _int_arg(args, "callTimeoutMilliseconds", 1000, 1, 3_600_000, url)
        memory = _int_arg(args, "memoryLimitMiB", 256, 1, _MAX_MEMORY_MIB, url)

        argv = args.get("Args", [])
        if argv is None:
            argv = []
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise WasmError("wasm: Args must be a list of strings", url)
        return cls(
            guest_url=url,
            guest_config=guest_config,
            log_severity=severity,
            args=list(argv),
            call_timeout_ms=timeout,
            memory_limit_mib=memory,
            base_dir=base_dir,
        )


def _int_arg(args: Mapping[str, Any], key: str, default: int, low: int, high: int, url: str) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise WasmError(f"wasm: {key} must be an integer, got {value!r}", url)
    if not low <= value <= high:
        raise WasmError(f"wasm: {key} must be between {low} and {high}, got {value}", url)
    return value
