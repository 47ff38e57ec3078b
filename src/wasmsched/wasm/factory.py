"""The wasm plugin factory and its args kind, for a plugin registry.

kube-scheduler-wasm-extension's ``cmd/scheduler/main.go`` registers one
``wasm.PluginFactory(name)`` (scheduler/plugin/plugin.go) per ``pluginConfig`` entry that
decodes as its ``PluginConfig`` and whose name is enabled under ``multiPoint``.
:data:`WASM_ARGS_KIND` gives configuration loading the same rule (which entries are wasm
plugins, and the :class:`~wasmsched.wasm.config.WasmArgs` schema their args must satisfy);
:func:`wasm_plugin_factory` builds the plugin from the validated args.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel

from wasmsched.wasm.config import WASM_ARGS_KEYS, WasmArgs, WasmPluginConfig
from wasmsched.wasm.plugin import WasmPlugin

if TYPE_CHECKING:
    from wasmsched.framework.interfaces import Handle, PluginFactory

__all__ = ["WASM_ARGS_KIND", "WasmArgsKind", "WasmPluginFactory", "wasm_plugin_factory"]

# Keys that mark args as wasm args: every wasm key but the generic "Args".
_MARKERS: Final = tuple(k for k in WASM_ARGS_KEYS if k != "Args")
_MARKERS_LOWER: Final = frozenset(k.lower() for k in _MARKERS)


@dataclass(frozen=True)
class WasmPluginFactory:
    """The registry factory of wasm plugin ``name``: ``(args, handle) -> WasmPlugin``, the
    args checked against :class:`WasmArgs` (WasmError naming the key). Compares by value,
    so profiles loaded twice from one file are equal."""

    name: str
    base_dir: Path | None = None

    def __call__(self, args: Mapping[str, Any], handle: Handle) -> WasmPlugin:
        config = WasmPluginConfig.from_args(args, base_dir=self.base_dir)
        return WasmPlugin(self.name, config, handle)


def wasm_plugin_factory(name: str, *, base_dir: Path | None = None) -> PluginFactory:
    """A registry factory: ``(args, handle) -> WasmPlugin`` for plugin ``name``."""
    return WasmPluginFactory(name, base_dir)


class WasmArgsKind:
    """The wasm plugin kind: args with a ``guestURL`` (or a near miss of a wasm key)."""

    kind: Final = "wasm"

    @property
    def model(self) -> type[BaseModel]:
        """:class:`WasmArgs`."""
        return WasmArgs

    def claims(self, args: Mapping[str, Any], *, exact: bool = False) -> bool:
        """Whether any key is a wasm key, or a near miss of one (``guestUrl``), so that a
        misspelling is reported as an unknown field rather than an unknown plugin. With
        ``exact`` (the name has a factory of its own) only ``guestURL`` counts: the key
        upstream requires of every wasm plugin (scheduler/plugin/plugin.go:
        NewFromConfig)."""
        if exact:
            return "guestURL" in args
        for key in args:
            text = str(key)
            if text.lower() in _MARKERS_LOWER:
                return True
            if difflib.get_close_matches(text, _MARKERS, n=1, cutoff=0.75):
                return True
        return False

    def factory(self, name: str) -> WasmPluginFactory:
        """The factory of wasm plugin ``name``."""
        return WasmPluginFactory(name)


WASM_ARGS_KIND: Final = WasmArgsKind()
"""The one wasm kind, contributed to ``default_registry()``."""
