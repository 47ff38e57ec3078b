"""wasmsched: a Kubernetes scheduler in Python whose plugins may be WebAssembly guests.

This module is the public Python API; everything else is private and may change.

Embedding the simulator::

    import wasmsched

    result = wasmsched.simulate("examples/nodenumber/cluster.yaml")
    for outcome in result.outcomes:
        print(outcome.pod.name, outcome.result, outcome.node)

Writing an in-process plugin: a class with a ``name`` and the methods of the extension
points it serves (``FilterPlugin``, ``ScorePlugin``...), registered in a ``Registry`` under
the name a KubeSchedulerConfiguration enables. See docs/python-api.md.

Constants and aliases: ``MIN_NODE_SCORE`` and ``MAX_NODE_SCORE`` (0 and 100) bound what a
Score plugin returns after normalization; ``PluginFactory`` is the type of a registered
factory, ``(args: dict, handle: Handle) -> Plugin``.

Names are imported on first use, so ``import wasmsched`` stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wasmsched.api.manifests import ClusterObjects, ManifestError
    from wasmsched.api.objects import Node, Pod
    from wasmsched.config.models import ConfigError, SchedulerConfig
    from wasmsched.errors import ExternalError, InputError, InternalError, WasmschedError
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import (
        MAX_NODE_SCORE,
        MIN_NODE_SCORE,
        BindPlugin,
        EnqueueExtensions,
        FilterPlugin,
        Handle,
        NodeScore,
        NodeToStatus,
        PermitPlugin,
        Plugin,
        PluginFactory,
        PostBindPlugin,
        PostFilterPlugin,
        PostFilterResult,
        PreBindPlugin,
        PreEnqueuePlugin,
        PreFilterPlugin,
        PreFilterResult,
        PreScorePlugin,
        QueueSortPlugin,
        Registry,
        ReservePlugin,
        ScoreExtensions,
        ScorePlugin,
    )
    from wasmsched.framework.node_info import NodeInfo, PodInfo
    from wasmsched.framework.records import CycleRecord
    from wasmsched.framework.status import Code, Status
    from wasmsched.framework.types import (
        ActionType,
        ClusterEvent,
        ClusterEventWithHint,
        QueueingHint,
    )
    from wasmsched.scheduler.types import PodOutcome
    from wasmsched.sim.result import SimulationResult
    from wasmsched.sim.simulation import Simulation

# Public name -> the private module that defines it.
_HOMES: dict[str, str] = {
    "ClusterObjects": "wasmsched.api.manifests",
    "ManifestError": "wasmsched.api.manifests",
    "Node": "wasmsched.api.objects",
    "Pod": "wasmsched.api.objects",
    "ConfigError": "wasmsched.config.models",
    "SchedulerConfig": "wasmsched.config.models",
    "ExternalError": "wasmsched.errors",
    "InputError": "wasmsched.errors",
    "InternalError": "wasmsched.errors",
    "WasmschedError": "wasmsched.errors",
    "CycleState": "wasmsched.framework.cycle_state",
    "NodeInfo": "wasmsched.framework.node_info",
    "PodInfo": "wasmsched.framework.node_info",
    "CycleRecord": "wasmsched.framework.records",
    "Code": "wasmsched.framework.status",
    "Status": "wasmsched.framework.status",
    "ActionType": "wasmsched.framework.types",
    "ClusterEvent": "wasmsched.framework.types",
    "ClusterEventWithHint": "wasmsched.framework.types",
    "QueueingHint": "wasmsched.framework.types",
    "PodOutcome": "wasmsched.scheduler.types",
    "Simulation": "wasmsched.sim.simulation",
    "SimulationResult": "wasmsched.sim.result",
    **{
        name: "wasmsched.framework.interfaces"
        for name in (
            "MAX_NODE_SCORE",
            "MIN_NODE_SCORE",
            "BindPlugin",
            "EnqueueExtensions",
            "FilterPlugin",
            "Handle",
            "NodeScore",
            "NodeToStatus",
            "PermitPlugin",
            "Plugin",
            "PluginFactory",
            "PostBindPlugin",
            "PostFilterPlugin",
            "PostFilterResult",
            "PreBindPlugin",
            "PreEnqueuePlugin",
            "PreFilterPlugin",
            "PreFilterResult",
            "PreScorePlugin",
            "QueueSortPlugin",
            "Registry",
            "ReservePlugin",
            "ScoreExtensions",
            "ScorePlugin",
        )
    },
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'wasmsched' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def default_registry() -> Registry:
    """A new Registry holding every in-tree plugin (and knowing wasm plugins); register
    your own plugins in it.

    ``registry.register("MyPlugin", factory)`` makes "MyPlugin" a name that a
    KubeSchedulerConfiguration may enable; ``factory(args, handle)`` gets the plugin's
    ``pluginConfig`` args (a dict, possibly empty) and the scheduler's Handle.
    """
    from wasmsched.scheduler.registry import default_registry as _default

    return _default()


def load_cluster(path: str | Path) -> ClusterObjects:
    """Nodes, Pods and other objects from a YAML/JSON file or a directory of them.

    Raises ManifestError (an InputError) naming the file and field of a bad manifest.
    """
    from wasmsched.api.manifests import load_manifests

    return load_manifests(path)


def load_configuration(
    source: str | Path | Mapping[str, Any], registry: Registry | None = None
) -> SchedulerConfig:
    """A KubeSchedulerConfiguration from a file, or from an already parsed mapping.

    Plugin names are checked against ``registry`` (the in-tree plugins by default) and the
    default plugins; wasm plugins need no registration. A mapping's relative ``file://``
    guest URLs are resolved against the current directory. Raises ConfigError.
    """
    from wasmsched.config import load_config, parse_config
    from wasmsched.scheduler.registry import as_plugin_registry

    catalog = as_plugin_registry(registry or default_registry())
    if isinstance(source, Mapping):
        return parse_config(source, "<configuration>", Path.cwd(), catalog)
    return load_config(source, catalog)


def default_configuration() -> SchedulerConfig:
    """kube-scheduler's default configuration: one profile, "default-scheduler"."""
    from wasmsched.config import default_config

    return default_config()


def simulate(
    cluster: ClusterObjects | str | Path,
    config: SchedulerConfig | str | Path | Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
    seed: int = 0,
    explain: bool = False,
) -> SimulationResult:
    """Schedules every pending pod of ``cluster`` on a simulated clock and reports.

    ``cluster`` is a ClusterObjects or a path for ``load_cluster``; ``config`` a
    SchedulerConfig, a path or mapping for ``load_configuration``, or None for the default
    configuration. ``explain=True`` keeps a CycleRecord per attempt in each outcome's
    ``cycles``. The plugins are closed when the simulation ends.
    """
    from wasmsched.api.manifests import ClusterObjects
    from wasmsched.config.models import SchedulerConfig
    from wasmsched.sim.simulation import Simulation

    registry = registry if registry is not None else default_registry()
    objects = cluster if isinstance(cluster, ClusterObjects) else load_cluster(cluster)
    if config is None:
        sched_config = default_configuration()
    elif isinstance(config, SchedulerConfig):
        sched_config = config
    else:
        sched_config = load_configuration(config, registry)
    sim = Simulation(objects, sched_config, registry, seed=seed, explain=explain)
    try:
        return sim.run()
    finally:
        sim.close()


__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "ActionType",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "ClusterObjects",
    "Code",
    "ConfigError",
    "CycleRecord",
    "CycleState",
    "EnqueueExtensions",
    "ExternalError",
    "FilterPlugin",
    "Handle",
    "InputError",
    "InternalError",
    "ManifestError",
    "Node",
    "NodeInfo",
    "NodeScore",
    "NodeToStatus",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "Pod",
    "PodInfo",
    "PodOutcome",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueueingHint",
    "Registry",
    "ReservePlugin",
    "SchedulerConfig",
    "ScoreExtensions",
    "ScorePlugin",
    "Simulation",
    "SimulationResult",
    "Status",
    "WasmschedError",
    "default_configuration",
    "default_registry",
    "load_cluster",
    "load_configuration",
    "simulate",
]
