"""Wasm plugin configuration: the one schema of ``pluginConfig[].args`` (:class:`WasmArgs`),
the resolved :class:`WasmPluginConfig`, and the load-time error type.

Both entry points use :class:`WasmArgs`: configuration loading (through
``wasmsched.wasm.factory.WASM_ARGS_KIND``, errors naming the file and field path) and direct
use of the host (``WasmPluginConfig.from_args``, errors as :class:`WasmError`), so a given
mapping gets the same verdict and the same problem text from both.

The rules follow how kube-scheduler-wasm-extension decodes its args
(scheduler/plugin/config.go ``PluginConfig``, decoded by kube-scheduler's
pkg/scheduler/framework/runtime/registry.go ``DecodeInto``): ``guestURL`` (required,
``file://`` or ``http(s)://``), ``guestConfig`` (a string: a mapping does not decode into
Go's ``string``), ``logSeverity`` (an int32; 0 info .. 3 fatal, larger silences more) and
``Args`` (strings). Ours: ``callTimeoutMilliseconds`` (1 ms .. 1 h) and ``memoryLimitMiB``
(1 .. 4096, the total of all memories and tables of one instance). ``apiVersion`` and
``kind`` are type metadata and ignored, as upstream ignores them. Unlike Go's
case-insensitive, lenient ``encoding/json``, any other key is an error (kube-scheduler's
strict decoding of typed args), with the closest known key suggested.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from wasmsched.config.models import NO_VALUE, REQUIRED, describe_validation_error, format_value
from wasmsched.errors import InputError

__all__ = [
    "DEFAULT_CALL_TIMEOUT_MS",
    "DEFAULT_MEMORY_LIMIT_MIB",
    "WasmArgs",
    "WasmError",
    "WasmPluginConfig",
    "resolve_guest_url",
]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
DEFAULT_CALL_TIMEOUT_MS: Final = 1000
DEFAULT_MEMORY_LIMIT_MIB: Final = 256
MAX_CALL_TIMEOUT_MS: Final = 3_600_000
MAX_MEMORY_LIMIT_MIB: Final = 4096  # wasm32 address space


class WasmError(InputError):
    """A wasm plugin could not be configured, fetched, compiled or instantiated.

    ``problem`` is the upstream-compatible message (e.g. ``wasm: guest does not export any
    plugin functions``); ``url`` is the guest it concerns, if known. ``str()`` names both:
    ``guestURL <url>: <detail>`` where ``detail`` defaults to ``problem``.
    """

    def __init__(self, problem: str, url: str | None = None, detail: str | None = None) -> None:
        text = detail if detail is not None else problem
        super().__init__(text if url is None else f"guestURL {url}: {text}")
        self.problem = problem
        self.url = url
        self.detail = text


def resolve_guest_url(url: str, base_dir: Path | None) -> str:
    """Check a guest URL's shape and make a relative ``file://`` path absolute.

    ``file://plugin.wasm`` and ``file://./x/plugin.wasm`` resolve against ``base_dir`` (left
    relative when None: the host then resolves against its own base); ``file:///...`` and
    ``http(s)://`` URLs are returned unchanged. Raises ValueError naming the problem.
    """
    scheme, colon, _ = url.partition(":")
    if not colon:
        raise ValueError("invalid URL")
    if scheme in ("http", "https"):
        return url
    if scheme != "file":
        raise ValueError("unsupported URL scheme")
    if not url.startswith("file://"):
        raise ValueError("invalid URL")
    # upstream's getURL reads everything after "file://" as an OS path, no percent-decoding
    file_path = url[len("file://") :]
    if not file_path:
        raise ValueError("invalid URL")
    if file_path.startswith("/") or base_dir is None:
        return url
    return "file://" + os.path.normpath(os.path.join(os.path.abspath(base_dir), file_path))


Int32 = Annotated[int, Field(ge=_INT32_MIN, le=_INT32_MAX)]


class WasmArgs(BaseModel):
    """``pluginConfig[].args`` of one wasm plugin (see the module docstring for the rules)."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False, frozen=True)

    guest_url: str | None = Field(None, alias="guestURL", validate_default=True)
    guest_config: str | None = Field(None, alias="guestConfig")
    log_severity: Int32 | None = Field(None, alias="logSeverity")
    args: list[str] | None = Field(None, alias="Args")
    call_timeout_milliseconds: Annotated[int, Field(ge=1, le=MAX_CALL_TIMEOUT_MS)] | None = Field(
        None, alias="callTimeoutMilliseconds"
    )
    memory_limit_mib: Annotated[int, Field(ge=1, le=MAX_MEMORY_LIMIT_MIB)] | None = Field(
        None, alias="memoryLimitMiB"
    )
    api_version: str | None = Field(None, alias="apiVersion", exclude=True)
    kind: str | None = Field(None, alias="kind", exclude=True)

    @field_validator("guest_url")
    @classmethod
    def _check_url(cls, value: str | None, info: ValidationInfo) -> str:
        if not value:
            raise PydanticCustomError(REQUIRED, "guestURL is required")
        context = info.context or {}
        base_dir = context.get("base_dir")
        return resolve_guest_url(value, Path(base_dir) if base_dir is not None else None)

    def dump(self) -> dict[str, Any]:
        """The args with every default filled in, under their YAML keys."""
        return {
            "guestURL": self.guest_url,
            "guestConfig": self.guest_config or "",
            "logSeverity": self.log_severity or 0,
            "Args": list(self.args or []),
            "callTimeoutMilliseconds": self.call_timeout_milliseconds or DEFAULT_CALL_TIMEOUT_MS,
            "memoryLimitMiB": self.memory_limit_mib or DEFAULT_MEMORY_LIMIT_MIB,
        }


WASM_ARGS_KEYS: Final = tuple(
    f.alias for f in WasmArgs.model_fields.values() if f.alias and not f.exclude
)
"""The keys of wasm plugin args (type metadata aside)."""


def validate_wasm_args(args: object, base_dir: Path | None = None) -> WasmArgs:
    """``args`` checked against :class:`WasmArgs`; raises WasmError naming the key."""
    if not isinstance(args, Mapping):
        raise WasmError(f"wasm: plugin args must be a mapping, got {format_value(args)}")
    context = {"base_dir": base_dir} if base_dir is not None else None
    try:
        return WasmArgs.model_validate(dict(args), context=context)
    except ValidationError as exc:
        path, problem, value = describe_validation_error(exc, WasmArgs)
        text = problem if problem.startswith(path) else f"{path}: {problem}"
        if value is not NO_VALUE:
            text = f"{text}: {format_value(value)}"
        raise WasmError(f"wasm: {text}") from None


@dataclass
class WasmPluginConfig:
    """How to load one wasm plugin and the limits its guest instances run under."""

    guest_url: str
    guest_config: str = ""
    log_severity: int = 0
    args: list[str] = field(default_factory=list)
    call_timeout_ms: int = DEFAULT_CALL_TIMEOUT_MS
    memory_limit_mib: int = DEFAULT_MEMORY_LIMIT_MIB
    """Total bytes (MiB) of all memories and tables of one guest instance."""
    cache_dir: Path | None = None
    base_dir: Path | None = None
    """Folder that relative ``file://`` URLs resolve against (CWD when None)."""

    @classmethod
    def from_args(
        cls, args: Mapping[str, Any], *, base_dir: Path | None = None
    ) -> WasmPluginConfig:
        """The config of validated :class:`WasmArgs` (raises WasmError); relative
        ``file://`` URLs resolve against ``base_dir`` (the current directory when None)."""
        parsed = validate_wasm_args(args, base_dir)
        assert parsed.guest_url is not None  # the validator requires it
        values = parsed.dump()
        return cls(
            guest_url=parsed.guest_url,
            guest_config=values["guestConfig"],
            log_severity=values["logSeverity"],
            args=values["Args"],
            call_timeout_ms=values["callTimeoutMilliseconds"],
            memory_limit_mib=values["memoryLimitMiB"],
            base_dir=base_dir,
        )
