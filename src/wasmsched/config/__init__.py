"""KubeSchedulerConfiguration (`kubescheduler.config.k8s.io/v1`): loading, defaulting,
validation, and the expansion of multiPoint into extension points."""

from .defaults import DEFAULT_PLUGINS, merge_plugin_set, merge_plugins
from .expand import expand_config, expand_extension_points
from .loader import default_config, load_config, parse_config, resolve_guest_url
from .models import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    SECTIONS,
    WASM_ARGS_KEYS,
    ConfigError,
    Extender,
    ManagedResource,
    PluginRef,
    PluginSet,
    Profile,
    SchedulerConfig,
    WasmPluginArgs,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_PLUGINS",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "SECTIONS",
    "WASM_ARGS_KEYS",
    "ConfigError",
    "Extender",
    "ManagedResource",
    "PluginRef",
    "PluginSet",
    "Profile",
    "SchedulerConfig",
    "WasmPluginArgs",
    "default_config",
    "expand_config",
    "expand_extension_points",
    "load_config",
    "merge_plugin_set",
    "merge_plugins",
    "parse_config",
    "resolve_guest_url",
]
