"""Where a profile's Framework is built from its configuration (pkg/scheduler/profile/
profile.go: NewMap, newProfile; framework/runtime/framework.go: NewFramework).

Building a profile takes its configuration (``config.Profile``: the plugin sets, already
merged with the defaults, and the plugin arguments, already defaulted and validated when
the file was loaded) and what every profile of one scheduler shares (``ProfileOptions``).
It settles the plugins' final arguments (``profile_plugin_args``), instantiates each plugin
once from the registry, expands multiPoint into the extension points (config/expand.py)
and hands the result to ``Framework``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wasmsched.config import ConfigError, expand_extension_points
from wasmsched.errors import InputError
from wasmsched.framework import interfaces as fi
from wasmsched.framework.runtime import Framework

if TYPE_CHECKING:
    from wasmsched.config.models import Profile, SchedulerConfig
    from wasmsched.framework.waiting_pods import WaitingPods

NODE_RESOURCES_FIT = "NodeResourcesFit"


@dataclass(frozen=True, slots=True)
class ProfileOptions:
    """What every profile of one scheduler is built with besides its own configuration
    (kube: the registry and the frameworkruntime.Options that NewMap passes to each
    NewFramework).

    This is where the Kubernetes version and the feature gates enter (issue 23): they
    become fields here, and ``build_profile`` passes them on to the plugins' arguments
    (``profile_plugin_args``) and to the plugin factories, so that no plugin compares
    versions itself.
    """

    registry: fi.Registry
    handle: fi.Handle
    waiting_pods: WaitingPods
    # The extenders' ignoredByScheduler resources (extenders.ignored_resources), which
    # NodeResourcesFit must ignore.
    ignored_resources: Sequence[str] = ()
    # Where the configuration came from, for errors that concern it as a whole.
    source: str | None = None


@dataclass(frozen=True, slots=True)
class BuiltProfile:
    """A profile's Framework, and the plugins its configuration enables that the registry
    does not have (default plugins wasmsched does not implement, reported as skipped)."""

    framework: Framework
    skipped_plugins: list[str]


def build_profiles(config: SchedulerConfig, options: ProfileOptions) -> dict[str, BuiltProfile]:
    """k8s profile.NewMap: every profile of ``config``, by scheduler name."""
    return {profile.scheduler_name: build_profile(profile, options) for profile in config.profiles}


def profile_plugin_args(profile: Profile, options: ProfileOptions) -> dict[str, dict[str, Any]]:
    """The arguments each plugin of ``profile`` is built with.

    They are the configuration's, defaulted and validated by config/ when it was loaded:
    defaulting stays there because its errors name the pluginConfig entry (file, field,
    value) and ``load_config`` returns the defaulted arguments. What depends on the
    scheduler rather than on the file is settled here: the extenders' ignoredByScheduler
    resources overwrite NodeResourcesFit's ``ignoredResources`` (kube: scheduler.go
    buildExtenders), and a profile without those arguments is refused, as kube does.
    Version-dependent defaults (issue 23) belong here as well.
    """
    args = profile.plugin_args
    if not options.ignored_resources:
        return args
    fit = args.get(NODE_RESOURCES_FIT)
    if fit is None:
        raise ConfigError(
            options.source,
            f"profiles[{profile.index}]",
            "can't find NodeResourcesFitArgs in plugin config (extenders have "
            "managedResources with ignoredByScheduler)",
        )
    return {
        **args,
        NODE_RESOURCES_FIT: {**fit, "ignoredResources": list(options.ignored_resources)},
    }


def build_profile(profile: Profile, options: ProfileOptions) -> BuiltProfile:
    """k8s newProfile and NewFramework: the profile's plugins, each built once with its
    arguments, placed at the extension points its configuration expands to.

    A plugin comes from the shared registry, else from the profile's own factories (the
    out-of-tree plugins of its configuration, e.g. wasm guests); one that cannot be built
    is a ConfigError naming the profile's file and the plugin.

    The default plugin sets and the plugin arguments' defaults are applied earlier, by
    config/ when the file is loaded (loader.py ``_parse_profile``, defaults.py
    ``default_plugin_args``): their validation errors name the pluginConfig entry, field
    and value, and ``load_config`` returns the defaulted configuration. A Kubernetes
    version (issue 23) therefore reaches the loader too, for the defaults it applies, and
    this function through ``ProfileOptions`` for everything else.
    """
    plugin_args = profile_plugin_args(profile, options)
    plugins: dict[str, fi.Plugin] = {}
    skipped: list[str] = []

    def instance(name: str) -> fi.Plugin | None:
        if name not in plugins:
            factory = options.registry.factories.get(name) or profile.plugin_factories.get(name)
            if factory is None:
                return None
            try:
                plugins[name] = factory(dict(plugin_args.get(name, {})), options.handle)
            except ConfigError:
                raise
            except InputError as exc:  # e.g. a wasm guest that cannot load
                raise ConfigError(profile.source, f'plugin "{name}"', str(exc)) from None
        return plugins[name]

    def implements(name: str, point: str) -> bool:
        plugin = instance(name)
        if plugin is None:
            if name not in skipped:
                skipped.append(name)
            return False
        return fi.implements(plugin, point)

    points = expand_extension_points(profile, implements)
    resolved = {
        point: [(plugins[name], weight) for name, weight in entries if name in plugins]
        for point, entries in points.items()
    }
    enqueue = [p for p in plugins.values() if fi.has_enqueue_extensions(p)]
    framework = Framework(
        profile.scheduler_name,
        resolved,
        profile.percentage_of_nodes_to_score,
        enqueue,
        options.waiting_pods,
    )
    return BuiltProfile(framework, skipped)


__all__ = [
    "BuiltProfile",
    "ProfileOptions",
    "build_profile",
    "build_profiles",
    "profile_plugin_args",
]
