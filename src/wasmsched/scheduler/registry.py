"""The default plugin registry: the in-tree plugins and the wasm plugin kind.

It lives above both ``plugins`` and ``wasm`` (which must not import each other). Loading a
configuration with it (``load_config(path, default_registry())``) recognises wasm plugins
and validates their args with the wasm schema; each profile then carries the wasm factory
of each of its wasm plugins in its own registry (``Profile.plugin_factories``), as
kube-scheduler-wasm-extension's ``cmd/scheduler/main.go`` registers
``wasm.PluginFactory(name)`` per configured wasm plugin, so the scheduler builds them like
any plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wasmsched.config.catalog import ArgsKind
from wasmsched.framework.interfaces import Registry
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.wasm.factory import WASM_ARGS_KIND

__all__ = ["PluginRegistry", "as_plugin_registry", "default_registry"]


@dataclass
class PluginRegistry(Registry):
    """A Registry that also offers out-of-tree args kinds to configuration loading."""

    kinds: tuple[ArgsKind, ...] = ()

    def args_kinds(self) -> Sequence[ArgsKind]:
        """The out-of-tree kinds (wasm)."""
        return self.kinds


def default_registry() -> PluginRegistry:
    """The in-tree plugins and the wasm kind, in a fresh registry."""
    registry = PluginRegistry(kinds=(WASM_ARGS_KIND,))
    for name, factory in in_tree_registry().factories.items():
        registry.register(name, factory)
    return registry


def as_plugin_registry(registry: Registry) -> PluginRegistry:
    """``registry`` with the wasm kind: a plain Registry (a user's own, with in-tree and
    Python plugins) becomes a PluginRegistry with the same factories."""
    if isinstance(registry, PluginRegistry):
        return registry
    return PluginRegistry(factories=dict(registry.factories), kinds=(WASM_ARGS_KIND,))
