"""What configuration loading needs to know about plugins, injected from above.

The config layer sits below the plugins and the wasm host, so it cannot import them: the
caller hands ``load_config`` a :class:`PluginCatalog` (``wasmsched.scheduler.registry``'s
``default_registry()`` is one). It names the plugins that have a factory and offers the
:class:`ArgsKind` s, families of out-of-tree plugins recognised by their args; the only
one today is kube-scheduler-wasm-extension's: a ``pluginConfig`` entry whose args carry a
``guestURL`` and whose name is enabled under ``multiPoint``. Upstream's
``cmd/scheduler/main.go`` registers ``wasm.PluginFactory(name)`` for each such name; here
the kind's factory for the name goes into the profile's own registry,
``Profile.plugin_factories``, which the scheduler consults after the shared one.
A plain collection of names is accepted too: it knows no kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

__all__ = ["ArgsKind", "NamesCatalog", "PluginCatalog", "as_catalog"]


@runtime_checkable
class ArgsKind(Protocol):
    """A family of out-of-tree plugins whose ``pluginConfig`` args identify them."""

    @property
    def kind(self) -> str:
        """Short name used in messages ("wasm")."""
        ...

    @property
    def model(self) -> type[BaseModel]:
        """The pydantic model the args must satisfy; validated with the context
        ``{"base_dir": <the config file's folder>}``."""
        ...

    def claims(self, args: Mapping[str, Any], *, exact: bool = False) -> bool:
        """Whether the args are meant for this kind. For a plugin without a factory: a key
        of the kind or a near miss of one (so that a typo is reported as such); with
        ``exact`` (a plugin that has a factory), only the kind's identifying key."""
        ...

    def factory(self, name: str) -> Callable[[dict[str, Any], Any], Any]:
        """The plugin factory ``(args, handle) -> plugin`` of plugin ``name`` of this kind;
        it lands in the profile's registry (``Profile.plugin_factories``)."""
        ...


@runtime_checkable
class PluginCatalog(Protocol):
    """The plugins a configuration may name, and the out-of-tree kinds it may configure."""

    def names(self) -> Collection[str]:
        """Plugins that have a factory (in-tree and registered out-of-tree ones)."""
        ...

    def args_kinds(self) -> Sequence[ArgsKind]:
        """Out-of-tree kinds, tried in order on args of a plugin without a factory."""
        ...


class NamesCatalog:
    """A catalog from a plain collection of plugin names: no out-of-tree kinds."""

    def __init__(self, names: Collection[str]) -> None:
        self._names = frozenset(names)

    def names(self) -> Collection[str]:
        """The names given."""
        return self._names

    def args_kinds(self) -> Sequence[ArgsKind]:
        """None."""
        return ()


def as_catalog(plugins: PluginCatalog | Collection[str]) -> PluginCatalog:
    """``plugins`` itself if it is a catalog, else a :class:`NamesCatalog` of the names."""
    if isinstance(plugins, PluginCatalog):
        return plugins
    return NamesCatalog(plugins)
