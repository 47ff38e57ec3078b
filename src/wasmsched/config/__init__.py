"""KubeSchedulerConfiguration (`kubescheduler.config.k8s.io/v1`): loading, defaulting,
validation, and the expansion of multiPoint into extension points."""

from .catalog import ArgsKind, NamesCatalog, PluginCatalog
from .defaults import DEFAULT_PLUGINS, PLUGINS_1_33, merge_plugin_set, merge_plugins
from .expand import expand_config, expand_extension_points
from .loader import (
    default_config,
    load_client_connection,
    load_config,
    load_config_or_default,
    parse_config,
)
from .models import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    SECTIONS,
    ConfigError,
    Extender,
    ManagedResource,
    PluginRef,
    PluginSet,
    Profile,
    SchedulerConfig,
)

__all__ = [
    "API_VERSION",
    "DEFAULT_PLUGINS",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "PLUGINS_1_33",
    "SECTIONS",
    "ArgsKind",
    "ConfigError",
    "Extender",
    "ManagedResource",
    "NamesCatalog",
    "PluginCatalog",
    "PluginRef",
    "PluginSet",
    "Profile",
    "SchedulerConfig",
    "default_config",
    "expand_config",
    "expand_extension_points",
    "load_client_connection",
    "load_config",
    "load_config_or_default",
    "merge_plugin_set",
    "merge_plugins",
    "parse_config",
]
