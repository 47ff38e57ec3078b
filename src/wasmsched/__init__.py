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
factory, ``(args: dict, handle: Handle) -> Plugin``. ``SUPPORTED_VERSIONS`` are the
kube-scheduler releases a run can model (``kubernetes_version=`` of ``simulate``,
``load_configuration`` and ``load_cluster``).

Names are imported on first use, so ``import wasmsched`` stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # For type checkers, which cannot follow __getattr__: the names of _HOMES below, each
    # re-exported explicitly ("X as X"). tests/test_python_api.py checks that the two say
    # the same.
    from wasmsched.api.manifests import ClusterObjects as ClusterObjects
    from wasmsched.api.manifests import ManifestError as ManifestError
    from wasmsched.api.objects import Node as Node
    from wasmsched.api.objects import Pod as Pod
    from wasmsched.config.models import ConfigError as ConfigError
    from wasmsched.config.models import SchedulerConfig as SchedulerConfig
    from wasmsched.errors import ExternalError as ExternalError
    from wasmsched.errors import InputError as InputError
    from wasmsched.errors import InternalError as InternalError
    from wasmsched.errors import WasmschedError as WasmschedError
    from wasmsched.framework.allocations import DeviceAllocation as DeviceAllocation
    from wasmsched.framework.allocations import pod_allocations as pod_allocations
    from wasmsched.framework.cycle_state import CycleState as CycleState
    from wasmsched.framework.interfaces import MAX_NODE_SCORE as MAX_NODE_SCORE
    from wasmsched.framework.interfaces import MIN_NODE_SCORE as MIN_NODE_SCORE
    from wasmsched.framework.interfaces import BindPlugin as BindPlugin
    from wasmsched.framework.interfaces import EnqueueExtensions as EnqueueExtensions
    from wasmsched.framework.interfaces import FilterPlugin as FilterPlugin
    from wasmsched.framework.interfaces import Handle as Handle
    from wasmsched.framework.interfaces import NodeScore as NodeScore
    from wasmsched.framework.interfaces import NodeToStatus as NodeToStatus
    from wasmsched.framework.interfaces import PermitPlugin as PermitPlugin
    from wasmsched.framework.interfaces import Plugin as Plugin
    from wasmsched.framework.interfaces import PluginFactory as PluginFactory
    from wasmsched.framework.interfaces import PostBindPlugin as PostBindPlugin
    from wasmsched.framework.interfaces import PostFilterPlugin as PostFilterPlugin
    from wasmsched.framework.interfaces import PostFilterResult as PostFilterResult
    from wasmsched.framework.interfaces import PreBindPlugin as PreBindPlugin
    from wasmsched.framework.interfaces import PreEnqueuePlugin as PreEnqueuePlugin
    from wasmsched.framework.interfaces import PreFilterPlugin as PreFilterPlugin
    from wasmsched.framework.interfaces import PreFilterResult as PreFilterResult
    from wasmsched.framework.interfaces import PreScorePlugin as PreScorePlugin
    from wasmsched.framework.interfaces import QueueSortPlugin as QueueSortPlugin
    from wasmsched.framework.interfaces import Registry as Registry
    from wasmsched.framework.interfaces import ReservePlugin as ReservePlugin
    from wasmsched.framework.interfaces import ScoreExtensions as ScoreExtensions
    from wasmsched.framework.interfaces import ScorePlugin as ScorePlugin
    from wasmsched.framework.node_info import NodeInfo as NodeInfo
    from wasmsched.framework.node_info import PodInfo as PodInfo
    from wasmsched.framework.records import CycleRecord as CycleRecord
    from wasmsched.framework.status import Code as Code
    from wasmsched.framework.status import Status as Status
    from wasmsched.framework.types import ActionType as ActionType
    from wasmsched.framework.types import ClusterEvent as ClusterEvent
    from wasmsched.framework.types import ClusterEventWithHint as ClusterEventWithHint
    from wasmsched.framework.types import QueueingHint as QueueingHint
    from wasmsched.release.feature_gates import FeatureGateError as FeatureGateError
    from wasmsched.release.features import SchedulerFeatures as SchedulerFeatures
    from wasmsched.release.version import SUPPORTED_VERSIONS as SUPPORTED_VERSIONS
    from wasmsched.release.version import KubernetesVersion as KubernetesVersion
    from wasmsched.release.version import VersionError as VersionError
    from wasmsched.scheduler.types import PodOutcome as PodOutcome
    from wasmsched.sim.result import SimulationResult as SimulationResult
    from wasmsched.sim.simulation import Simulation as Simulation

# The public names, by the private module that defines them: the one list of them.
# __getattr__ imports each from its home on first use, and __all__ is these names and
# the functions defined below.
_HOMES: dict[str, tuple[str, ...]] = {
    "wasmsched.api.manifests": ("ClusterObjects", "ManifestError"),
    "wasmsched.api.objects": ("Node", "Pod"),
    "wasmsched.config.models": ("ConfigError", "SchedulerConfig"),
    "wasmsched.errors": ("ExternalError", "InputError", "InternalError", "WasmschedError"),
    "wasmsched.framework.allocations": ("DeviceAllocation", "pod_allocations"),
    "wasmsched.framework.cycle_state": ("CycleState",),
    "wasmsched.framework.interfaces": (
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
    ),
    "wasmsched.framework.node_info": ("NodeInfo", "PodInfo"),
    "wasmsched.framework.records": ("CycleRecord",),
    "wasmsched.framework.status": ("Code", "Status"),
    "wasmsched.framework.types": (
        "ActionType",
        "ClusterEvent",
        "ClusterEventWithHint",
        "QueueingHint",
    ),
    "wasmsched.release.feature_gates": ("FeatureGateError",),
    "wasmsched.release.features": ("SchedulerFeatures",),
    "wasmsched.release.version": ("SUPPORTED_VERSIONS", "KubernetesVersion", "VersionError"),
    "wasmsched.scheduler.types": ("PodOutcome",),
    "wasmsched.sim.result": ("SimulationResult",),
    "wasmsched.sim.simulation": ("Simulation",),
}
_HOME_OF: dict[str, str] = {name: home for home, names in _HOMES.items() for name in names}
_FUNCTIONS = (
    "default_configuration",
    "default_registry",
    "load_cluster",
    "load_configuration",
    "simulate",
)
__all__ = sorted([*_HOME_OF, *_FUNCTIONS])


def __getattr__(name: str) -> Any:
    home = _HOME_OF.get(name)
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


def _features(
    version: str | KubernetesVersion | None, feature_gates: str | Mapping[str, bool] | None
) -> SchedulerFeatures:
    from wasmsched.release.features import SchedulerFeatures
    from wasmsched.release.version import (
        DEFAULT_KUBERNETES_VERSION,
        requested_kubernetes_version,
    )

    return SchedulerFeatures.of(
        requested_kubernetes_version(version) or DEFAULT_KUBERNETES_VERSION, feature_gates or ""
    )


def load_cluster(
    path: str | Path, *, kubernetes_version: str | KubernetesVersion | None = None
) -> ClusterObjects:
    """Nodes, Pods and other objects from a YAML/JSON file or a directory of them.

    The objects are validated against the schema of ``kubernetes_version`` ("1.37", or a
    KubernetesVersion); without one, of the server version a ``wasmsched snapshot``
    recorded, else of DEFAULT_KUBERNETES_VERSION. The result's ``kubernetes_version`` says
    which. Raises ManifestError (an InputError) naming the file and field of a bad manifest,
    VersionError for a version wasmsched does not model.
    """
    from wasmsched.api.manifests import load_manifests
    from wasmsched.release.version import requested_kubernetes_version

    return load_manifests(path, kubernetes_version=requested_kubernetes_version(kubernetes_version))


def load_configuration(
    source: str | Path | Mapping[str, Any],
    registry: Registry | None = None,
    *,
    kubernetes_version: str | KubernetesVersion | None = None,
    feature_gates: str | Mapping[str, bool] | None = None,
) -> SchedulerConfig:
    """A KubeSchedulerConfiguration from a file, or from an already parsed mapping, defaulted
    as the kube-scheduler of ``kubernetes_version`` (default DEFAULT_KUBERNETES_VERSION)
    with ``feature_gates`` ("Name=true,..." or a mapping) defaults it; the scheduler built
    from it follows that release (``config.features``).

    Plugin names are checked against ``registry`` (the in-tree plugins by default) and the
    default plugins; wasm plugins need no registration. A mapping's relative ``file://``
    guest URLs are resolved against the current directory. Raises ConfigError,
    VersionError or FeatureGateError.
    """
    from wasmsched.config import load_config, parse_config
    from wasmsched.scheduler.registry import as_plugin_registry

    features = _features(kubernetes_version, feature_gates)
    catalog = as_plugin_registry(registry or default_registry())
    if isinstance(source, Mapping):
        return parse_config(source, "<configuration>", Path.cwd(), catalog, features)
    return load_config(source, catalog, features)


def default_configuration(
    *,
    kubernetes_version: str | KubernetesVersion | None = None,
    feature_gates: str | Mapping[str, bool] | None = None,
) -> SchedulerConfig:
    """kube-scheduler's default configuration: one profile, "default-scheduler", as the
    release ``kubernetes_version`` (default DEFAULT_KUBERNETES_VERSION) has it."""
    from wasmsched.config import default_config

    return default_config(_features(kubernetes_version, feature_gates))


def simulate(
    cluster: ClusterObjects | str | Path,
    config: SchedulerConfig | str | Path | Mapping[str, Any] | None = None,
    *,
    registry: Registry | None = None,
    seed: int = 0,
    explain: bool = False,
    kubernetes_version: str | KubernetesVersion | None = None,
    feature_gates: str | Mapping[str, bool] | None = None,
) -> SimulationResult:
    """Schedules every pending pod of ``cluster`` on a simulated clock and reports.

    ``cluster`` is a ClusterObjects or a path for ``load_cluster``; ``config`` a
    SchedulerConfig, a path or mapping for ``load_configuration``, or None for the default
    configuration. The run models kube-scheduler ``kubernetes_version`` with
    ``feature_gates``; without a version, the cluster's (the server version a snapshot
    recorded, else DEFAULT_KUBERNETES_VERSION). A SchedulerConfig already carries its
    release: giving another version or gates with one is an InputError.
    ``explain=True`` keeps a CycleRecord per attempt in each outcome's ``cycles``. The
    plugins are closed when the simulation ends.
    """
    from wasmsched.api.manifests import ClusterObjects
    from wasmsched.config.models import SchedulerConfig
    from wasmsched.errors import InputError
    from wasmsched.release.version import requested_kubernetes_version
    from wasmsched.sim.simulation import Simulation

    registry = registry if registry is not None else default_registry()
    version = requested_kubernetes_version(kubernetes_version)
    objects = (
        cluster
        if isinstance(cluster, ClusterObjects)
        else load_cluster(cluster, kubernetes_version=version)
    )
    release = version or objects.kubernetes_version
    if isinstance(config, SchedulerConfig):
        if (version is not None and version != config.features.version) or feature_gates:
            raise InputError(
                f"simulate: the configuration was loaded for Kubernetes "
                f"{config.features.version}; give kubernetes_version and feature_gates to "
                "load_configuration instead"
            )
        sched_config = config
    elif config is None:
        sched_config = default_configuration(
            kubernetes_version=release, feature_gates=feature_gates
        )
    else:
        sched_config = load_configuration(
            config, registry, kubernetes_version=release, feature_gates=feature_gates
        )
    sim = Simulation(objects, sched_config, registry, seed=seed, explain=explain)
    try:
        return sim.run()
    finally:
        sim.close()
