"""Defaults of kubescheduler.config.k8s.io/v1: the default plugins, the merge of a custom
plugin set into the defaults, and the typed args of in-tree plugins (strict decoding,
defaulting and validation as `defaults.go` and `validation_pluginargs.go` do them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from pydantic import BaseModel

from wasmsched.release.features import SchedulerFeatures

from .models import (
    API_VERSION,
    SECTIONS,
    ConfigError,
    Int32,
    Int64,
    PluginRef,
    PluginSet,
    RawModel,
    validate_raw,
)

# MultiPoint defaults of v1.33 in order (`default_plugins.go`; the DynamicResources gate off),
# from which every later release's list is made (``default_plugins``).
PLUGINS_1_33: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)
DYNAMIC_RESOURCES = "DynamicResources"
NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"
# Every plugin that some modelled release has in its default set.
DEFAULT_PLUGIN_NAMES: frozenset[str] = frozenset(p.name for p in PLUGINS_1_33) | {
    DYNAMIC_RESOURCES,
    NODE_DECLARED_FEATURES,
}


def default_plugins(features: SchedulerFeatures) -> tuple[PluginRef, ...]:
    """The multiPoint defaults of ``features``' release, in order
    (apis/config/v1/default_plugins.go: getDefaultPlugins, applyFeatureGates)."""
    plugins = list(PLUGINS_1_33)
    if features.node_name_before_node_unschedulable:
        plugins[2], plugins[3] = plugins[3], plugins[2]
    if features.dynamic_resource_allocation:
        # Before DefaultPreemption; with a Score extension and weight 2 from 1.35
        # (default_plugins.go: applyFeatureGates).
        at = next(i for i, p in enumerate(plugins) if p.name == "DefaultPreemption")
        weight = 2 if features.dynamic_resources_scores else None
        plugins.insert(at, PluginRef(DYNAMIC_RESOURCES, weight))
    if features.node_declared_features:
        plugins.append(PluginRef(NODE_DECLARED_FEATURES))
    return tuple(plugins)


# The multiPoint defaults of the default release (DEFAULT_KUBERNETES_VERSION).
DEFAULT_PLUGINS: tuple[PluginRef, ...] = default_plugins(SchedulerFeatures.of())

# Plugins that v1 rejects by name (`invalidPluginsByVersion` in validation.go).
REMOVED_PLUGINS: frozenset[str] = frozenset(
    {"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"}
)


def default_plugin_sets(features: SchedulerFeatures | None = None) -> dict[str, PluginSet]:
    """Every section empty except multiPoint, which holds the default plugins of
    ``features``' release (default: DEFAULT_KUBERNETES_VERSION's)."""
    sets = {name: PluginSet() for name in SECTIONS}
    sets["multiPoint"] = PluginSet(
        enabled=list(default_plugins(features or SchedulerFeatures.of()))
    )
    return sets


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Merge a custom section into its defaults (k8s `mergePluginSet`).

    `disabled: [{name: "*"}]` drops every default; a default named in `disabled` is
    dropped; a custom enabled entry naming a remaining default replaces it in place (its
    weight wins); the other custom entries follow the defaults in their own order.
    """
    disabled = [PluginRef(p.name) for p in custom.disabled]
    disabled += [PluginRef(p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    # the last custom entry of a name wins, as in upstream's map
    custom_by_name = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            index = custom_by_name.get(plugin.name)
            if index is not None:
                plugin = custom.enabled[index]
                replaced.add(index)
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(
    default: Mapping[str, PluginSet], custom: Mapping[str, PluginSet]
) -> dict[str, PluginSet]:
    """Merge every section (k8s `mergePlugins`); missing sections count as empty."""
    return {
        name: merge_plugin_set(default.get(name, PluginSet()), custom.get(name, PluginSet()))
        for name in SECTIONS
    }


# ---------------------------------------------------------------------------------------
# Typed args of in-tree plugins


class _TypedArgs(RawModel):
    api_version: str | None = None
    kind: str | None = None


class _ResourceSpec(RawModel):
    name: str
    weight: Int64 = 0


class _ShapePoint(RawModel):
    utilization: Int32
    score: Int32


class _RequestedToCapacityRatio(RawModel):
    shape: list[_ShapePoint] | None = None


class _ScoringStrategy(RawModel):
    type: str = ""
    resources: list[_ResourceSpec] | None = None
    requested_to_capacity_ratio: _RequestedToCapacityRatio | None = None


class NodeResourcesFitArgs(_TypedArgs):
    ignored_resources: list[str] | None = None
    ignored_resource_groups: list[str] | None = None
    scoring_strategy: _ScoringStrategy | None = None


class DefaultPreemptionArgs(_TypedArgs):
    min_candidate_nodes_percentage: Int32 | None = None
    min_candidate_nodes_absolute: Int32 | None = None


class InterPodAffinityArgs(_TypedArgs):
    hard_pod_affinity_weight: Int32 | None = None
    ignore_preferred_terms_of_existing_pods: bool = False


class PodTopologySpreadArgs(_TypedArgs):
    # core/v1 TopologySpreadConstraint objects, kept as mappings
    default_constraints: list[dict[str, Any]] | None = None
    defaulting_type: str = ""


class NodeResourcesBalancedAllocationArgs(_TypedArgs):
    resources: list[_ResourceSpec] | None = None


class VolumeBindingArgs(_TypedArgs):
    bind_timeout_seconds: Int64 | None = None
    shape: list[_ShapePoint] | None = None


class NodeAffinityArgs(_TypedArgs):
    # a core/v1 NodeAffinity object, kept as a mapping
    added_affinity: dict[str, Any] | None = None


def _default_resources() -> list[_ResourceSpec]:
    return [_ResourceSpec(name="cpu", weight=1), _ResourceSpec(name="memory", weight=1)]


_SCORING_TYPES: Final = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
_MAX_CUSTOM_PRIORITY_SCORE: Final = 10
_LABEL_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)

Fail = Callable[[str, str, object], ConfigError]


def _check_shape(shape: list[_ShapePoint], path: str, fail: Fail) -> None:
    if not shape:
        raise fail(path, "at least one point must be specified", [])
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            raise fail(
                f"{path}[{i}].utilization",
                "values must be sorted in increasing order",
                shape[i].utilization,
            )
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            raise fail(f"{path}[{i}].utilization", "not in valid range [0, 100]", point.utilization)
        if not 0 <= point.score <= _MAX_CUSTOM_PRIORITY_SCORE:
            raise fail(f"{path}[{i}].score", "not in valid range [0, 10]", point.score)


def _fit(args: NodeResourcesFitArgs, fail: Fail, features: SchedulerFeatures) -> None:
    for i, ignored in enumerate(args.ignored_resources or []):
        if not _LABEL_NAME.match(ignored):
            raise fail(f"ignoredResources[{i}]", "must be a valid label name", ignored)
    for i, group in enumerate(args.ignored_resource_groups or []):
        if "/" in group:
            raise fail(
                f"ignoredResourceGroups[{i}]", "resource group name can't contain '/'", group
            )
        if not _LABEL_NAME.match(group):
            raise fail(f"ignoredResourceGroups[{i}]", "must be a valid label name", group)
    if args.scoring_strategy is None:
        args.scoring_strategy = _ScoringStrategy(type="LeastAllocated")
    strategy = args.scoring_strategy
    if not strategy.resources:
        strategy.resources = _default_resources()
    for res in strategy.resources:
        if res.weight == 0:
            res.weight = 1
    if strategy.type not in _SCORING_TYPES:
        raise fail(
            "scoringStrategy.type", f"must be one of {', '.join(_SCORING_TYPES)}", strategy.type
        )
    for i, res in enumerate(strategy.resources):
        if not 0 < res.weight <= 100:
            raise fail(
                f"scoringStrategy.resources[{i}].weight",
                f"resource weight of {res.name} not in valid range (0, 100]",
                res.weight,
            )
    ratio = strategy.requested_to_capacity_ratio
    if strategy.type == "RequestedToCapacityRatio":
        if ratio is None:
            raise fail(
                "scoringStrategy.requestedToCapacityRatio",
                "must be specified when type is RequestedToCapacityRatio",
                None,
            )
        _check_shape(ratio.shape or [], "scoringStrategy.requestedToCapacityRatio.shape", fail)
    elif ratio is not None:
        raise fail(
            "scoringStrategy.requestedToCapacityRatio",
            "must be nil when type is not RequestedToCapacityRatio",
            ratio.model_dump(by_alias=True, exclude_none=True),
        )


def _preemption(args: DefaultPreemptionArgs, fail: Fail, features: SchedulerFeatures) -> None:
    if args.min_candidate_nodes_percentage is None:
        args.min_candidate_nodes_percentage = 10
    if args.min_candidate_nodes_absolute is None:
        args.min_candidate_nodes_absolute = 100
    pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    if not 0 <= pct <= 100:
        raise fail("minCandidateNodesPercentage", "not in valid range [0, 100]", pct)
    if absolute < 0:
        raise fail("minCandidateNodesAbsolute", "not in valid range [0, inf)", absolute)
    if pct == 0 and absolute == 0:
        raise fail(
            "minCandidateNodesPercentage",
            "cannot be zero at the same time as minCandidateNodesAbsolute",
            pct,
        )


def _inter_pod_affinity(
    args: InterPodAffinityArgs, fail: Fail, features: SchedulerFeatures
) -> None:
    if args.hard_pod_affinity_weight is None:
        args.hard_pod_affinity_weight = 1
    if not 0 <= args.hard_pod_affinity_weight <= 100:
        raise fail(
            "hardPodAffinityWeight", "not in valid range [0, 100]", args.hard_pod_affinity_weight
        )


def _topology_spread(args: PodTopologySpreadArgs, fail: Fail, features: SchedulerFeatures) -> None:
    if not args.defaulting_type:
        args.defaulting_type = "System"
    constraints = args.default_constraints or []
    if args.defaulting_type not in ("System", "List"):
        raise fail("defaultingType", "must be one of System, List", args.defaulting_type)
    if args.defaulting_type == "System" and constraints:
        raise fail("defaultingType", "must be List when defaultConstraints are given", "System")
    seen: set[tuple[Any, Any]] = set()
    for i, c in enumerate(constraints):
        path = f"defaultConstraints[{i}]"
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or isinstance(skew, bool) or skew <= 0:
            raise fail(f"{path}.maxSkew", "not in valid range (0, inf)", skew)
        key = c.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise fail(f"{path}.topologyKey", "can not be empty", key)
        action = c.get("whenUnsatisfiable")
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            raise fail(
                f"{path}.whenUnsatisfiable", "must be one of DoNotSchedule, ScheduleAnyway", action
            )
        if c.get("labelSelector") is not None:
            raise fail(
                f"{path}.labelSelector",
                "constraint must not define a selector, as they are deduced for each pod",
                c["labelSelector"],
            )
        if (key, action) in seen:
            raise fail(path, "duplicate constraint", f"{{{key}, {action}}}")
        seen.add((key, action))


def _balanced(
    args: NodeResourcesBalancedAllocationArgs, fail: Fail, features: SchedulerFeatures
) -> None:
    if not args.resources:
        args.resources = _default_resources()
    seen: set[str] = set()
    for i, res in enumerate(args.resources):
        if res.weight == 0:
            res.weight = 1
        if res.name in seen:
            raise fail(f"resources[{i}].name", "duplicate resource", res.name)
        seen.add(res.name)
        if res.weight != 1:
            raise fail(f"resources[{i}].weight", "must be 1", res.weight)


def _volume_binding(args: VolumeBindingArgs, fail: Fail, features: SchedulerFeatures) -> None:
    if args.bind_timeout_seconds is None:
        args.bind_timeout_seconds = 600
    if args.bind_timeout_seconds < 0:
        raise fail(
            "bindTimeoutSeconds", "should not be a negative value", args.bind_timeout_seconds
        )
    if not args.shape and features.storage_capacity_scoring:
        # v1/defaults.go: SetDefaults_VolumeBindingArgs: with StorageCapacityScoring, an
        # empty shape prefers the node with the most free capacity.
        args.shape = [
            _ShapePoint(utilization=0, score=_MAX_CUSTOM_PRIORITY_SCORE),
            _ShapePoint(utilization=100, score=0),
        ]
    if args.shape is not None:
        _check_shape(args.shape, "shape", fail)


def _node_affinity(args: NodeAffinityArgs, fail: Fail, features: SchedulerFeatures) -> None:
    return None


_TYPED_ARGS: dict[str, tuple[type[_TypedArgs], Callable[[Any, Fail, SchedulerFeatures], None]]] = {
    "NodeResourcesFit": (NodeResourcesFitArgs, _fit),
    "DefaultPreemption": (DefaultPreemptionArgs, _preemption),
    "InterPodAffinity": (InterPodAffinityArgs, _inter_pod_affinity),
    "PodTopologySpread": (PodTopologySpreadArgs, _topology_spread),
    "NodeResourcesBalancedAllocation": (NodeResourcesBalancedAllocationArgs, _balanced),
    "VolumeBinding": (VolumeBindingArgs, _volume_binding),
    "NodeAffinity": (NodeAffinityArgs, _node_affinity),
}
# plugin names whose args have a registered `<Name>Args` kind
TYPED_ARGS_PLUGINS: frozenset[str] = frozenset(_TYPED_ARGS)


def default_plugin_args(
    name: str,
    raw: Any,
    source: str | None = None,
    path: str = "",
    features: SchedulerFeatures | None = None,
) -> dict[str, Any]:
    """Strictly decode, default and validate the args of an in-tree plugin, as
    ``features``' release does (default: DEFAULT_KUBERNETES_VERSION's).

    `raw` is the `args` mapping from the file (None for "not given"); the result uses
    the YAML (camelCase) keys with every default filled, without apiVersion/kind.
    """
    model_cls, finish = _TYPED_ARGS[name]

    def fail(sub: str, problem: str, value: object) -> ConfigError:
        full = f"{path}.{sub}" if path and sub else path or sub
        return ConfigError(source, full, problem, value)

    if raw is None:
        raw = {}
    args = validate_raw(model_cls, raw, source, path)
    if args.api_version is not None and args.api_version != API_VERSION:
        raise fail("apiVersion", f"must be {API_VERSION}", args.api_version)
    if args.kind is not None and args.kind != f"{name}Args":
        raise fail("kind", f"must be {name}Args", args.kind)
    finish(args, fail, features or SchedulerFeatures.of())
    out = _dump(args)
    out.pop("apiVersion", None)
    out.pop("kind", None)
    return out


def _dump(model: BaseModel) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True)
    return dumped
