"""Expand a profile's multiPoint section into per-extension-point plugin lists.

Semantics of kube-scheduler's `frameworkImpl.expandMultiPointPlugins` and
`getScoreWeights` (pkg/scheduler/framework/runtime/framework.go). For each extension
point the final order is:

1. plugins enabled both in the point's own list and in multiPoint ("overrides"), in the
   point's order;
2. multiPoint plugins that implement the point and are not disabled there (a "*" in
   the point's disabled list skips multiPoint expansion for that point);
3. the rest of the point's own list.

Score weights: a plugin listed under `score` takes the weight of that entry, otherwise
its multiPoint weight; an unset weight counts as 1. As upstream, a `score` entry without
a weight gets 1, not the weight its multiPoint entry has.
"""

from __future__ import annotations

from collections.abc import Callable

from .models import EXTENSION_POINTS, ConfigError, PluginRef, PluginSet, Profile, SchedulerConfig

Implements = Callable[[str, str], bool]
Expanded = dict[str, list[tuple[str, int]]]


def expand_extension_points(profile: Profile, implements: Implements) -> Expanded:
    """For every extension point, the ordered `(plugin name, weight)` list of a profile.

    `implements(name, point)` says whether the plugin has that extension point. Weights
    are meaningful for "score" only; other points report 1.
    """
    source = profile.source
    base = f"profiles[{profile.index}].plugins"
    multi_point = profile.plugins.get("multiPoint", PluginSet()).enabled
    result: Expanded = {}
    for point in EXTENSION_POINTS:
        own = profile.plugins.get(point, PluginSet())
        own_names: set[str] = set()
        for j, ref in enumerate(own.enabled):
            path = f"{base}.{point}.enabled[{j}].name"
            if not implements(ref.name, point):
                raise ConfigError(source, path, f"plugin does not extend {point}", ref.name)
            if ref.name in own_names:
                raise ConfigError(source, path, "duplicate plugin", ref.name)
            own_names.add(ref.name)

        disabled = {ref.name for ref in own.disabled}
        overrides: set[str] = set()
        from_multi_point: list[PluginRef] = []
        if "*" not in disabled:
            expanded: set[str] = set()
            for ref in multi_point:
                if not implements(ref.name, point) or ref.name in disabled:
                    continue
                if ref.name in own_names:
                    overrides.add(ref.name)
                    continue
                if ref.name in expanded:
                    raise ConfigError(
                        source,
                        f"{base}.multiPoint.enabled",
                        f"plugin registered twice for {point}",
                        ref.name,
                    )
                expanded.add(ref.name)
                from_multi_point.append(ref)

        ordered = [r for r in own.enabled if r.name in overrides]
        ordered += from_multi_point
        ordered += [r for r in own.enabled if r.name not in overrides]
        if point == "score":
            result[point] = [(r.name, _score_weight(r, source, base)) for r in ordered]
        else:
            result[point] = [(r.name, 1) for r in ordered]

    queue_sort = [name for name, _ in result["queueSort"]]
    if len(queue_sort) > 1:
        raise ConfigError(
            source, f"{base}.queueSort", "only one queue sort plugin can be enabled", queue_sort
        )
    if not queue_sort:
        raise ConfigError(source, f"{base}.queueSort", "one queue sort plugin is required", [])
    if not result["bind"]:
        raise ConfigError(source, f"{base}.bind", "at least one bind plugin is needed", [])
    return result


def _score_weight(ref: PluginRef, source: str | None, base: str) -> int:
    if ref.weight is None:
        return 1
    if ref.weight <= 0:
        # the loader rejects these; profiles built in code get the same rule
        raise ConfigError(source, f"{base}.score", "weight must be greater than 0", ref.name)
    return ref.weight


def expand_config(config: SchedulerConfig, implements: Implements) -> dict[str, Expanded]:
    """Expand every profile (keyed by scheduler name); all must share one queue sort plugin."""
    out: dict[str, Expanded] = {}
    first: list[tuple[str, int]] | None = None
    for profile in config.profiles:
        expanded = expand_extension_points(profile, implements)
        if first is None:
            first = expanded["queueSort"]
        elif expanded["queueSort"] != first:
            raise ConfigError(
                profile.source or config.source,
                f"profiles[{profile.index}].plugins.queueSort",
                "queue sort plugin must be the same for all profiles",
                expanded["queueSort"][0][0],
            )
        out[profile.scheduler_name] = expanded
    return out
