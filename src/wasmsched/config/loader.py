"""Load a KubeSchedulerConfiguration file: YAML, strict decoding, defaulting, validation.

Every problem is a one-line ConfigError naming the file, the field path and the value.
Rules follow kube-scheduler v1 (`defaults.go`, `validation.go`); the wasm plugin rule
follows kube-scheduler-wasm-extension: a `pluginConfig` entry whose args carry a
`guestURL` and whose name is enabled under `multiPoint` is a wasm plugin. That rule and the
wasm args schema are injected (a `PluginCatalog`'s args kinds): config sits below wasm.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from wasmsched.release.features import SchedulerFeatures

from .catalog import ArgsKind, PluginCatalog, as_catalog
from .defaults import (
    DEFAULT_PLUGIN_NAMES,
    REMOVED_PLUGINS,
    TYPED_ARGS_PLUGINS,
    default_plugin_args,
    default_plugin_sets,
    merge_plugins,
)
from .models import (
    API_VERSION,
    DEFAULT_BURST,
    DEFAULT_CONTENT_TYPE,
    DEFAULT_QPS,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    SECTIONS,
    ClientConnection,
    ConfigError,
    Extender,
    ManagedResource,
    PluginRef,
    PluginSet,
    Profile,
    RawClientConnection,
    RawConfig,
    RawExtender,
    RawPluginConfig,
    RawProfile,
    SchedulerConfig,
    format_value,
    validate_raw,
)

_TOP_LEVEL_DEFAULTS: Final = {
    "parallelism": 16,
    "percentageOfNodesToScore": 0,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
}


# ---------------------------------------------------------------------------------------
# YAML

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that rejects duplicate mapping keys, as strict decoding does."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if (
                not isinstance(key_node, yaml.ScalarNode)
                or key_node.tag == "tag:yaml.org,2002:merge"
            ):
                continue
            key = self.construct_object(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {format_value(key)}", key_node.start_mark
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def load_yaml(text: str, source: str) -> Any:
    """Parse one YAML document; syntax errors become ConfigError with file and line."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "malformed document"
        if isinstance(exc, yaml.composer.ComposerError) and exc.context and exc.problem:
            # "expected a single document in the stream, but found another document"
            problem = f"{exc.context}, {exc.problem}"
        raise ConfigError(source, where, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"invalid YAML: {exc}") from None


# ---------------------------------------------------------------------------------------
# Public entry points


def load_config(
    path: str | Path,
    known_plugins: PluginCatalog | Collection[str],
    features: SchedulerFeatures | None = None,
) -> SchedulerConfig:
    """Read, default and validate a KubeSchedulerConfiguration file.

    ``known_plugins``: a catalog (``wasmsched.scheduler.registry.default_registry()``), whose
    args kinds also validate out-of-tree plugins such as wasm ones, or plain names.
    ``features``: the release (and feature gates) whose default plugins and argument
    defaults apply; it travels on as ``SchedulerConfig.features``."""
    data = load_yaml_file(path, "config file")
    base_dir = Path(os.path.abspath(path)).parent
    return parse_config(data, str(path), base_dir, known_plugins, features)


def load_client_connection(path: str | Path) -> ClientConnection:
    """The file's ``clientConnection`` alone, defaulted and validated as ``load_config``
    does it. The live scheduler needs it first: it reaches the API server, whose version
    then picks the release the whole file is read as (``wasmsched run``)."""
    source = str(path)
    data = load_yaml_file(path, "config file")
    if not isinstance(data, Mapping):
        raise ConfigError(source, "", "config must be a mapping", data)
    raw = validate_raw(
        RawClientConnection, data.get("clientConnection") or {}, source, "clientConnection"
    )
    return _client_connection(raw, source)


def load_config_or_default(
    path: str | Path | None,
    known_plugins: PluginCatalog | Collection[str],
    features: SchedulerFeatures | None = None,
) -> SchedulerConfig:
    """``load_config`` of ``path``, or the default configuration when there is none (what
    every command's ``--config`` means), both for ``features``' release."""
    if path is None:
        return default_config(features)
    return load_config(path, known_plugins, features)


def load_yaml_file(path: str | Path, what: str) -> Any:
    """The one YAML document of a file; a missing, unreadable or empty file is a ConfigError.

    ``what`` names the file's role in the messages ("config file", "kubeconfig").
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(source, "", f"{what} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(source, "", f"cannot read {what}: {reason}") from None
    data = load_yaml(text, source)
    if data is None:
        raise ConfigError(source, "", f"{what} is empty")
    return data


def default_config(features: SchedulerFeatures | None = None) -> SchedulerConfig:
    """One profile, "default-scheduler", with the release's default plugins and args."""
    features = features or SchedulerFeatures.of()
    plugins = default_plugin_sets(features)
    profile = Profile(
        scheduler_name=DEFAULT_SCHEDULER_NAME,
        plugins=plugins,
        plugin_args=_default_args_for_enabled(plugins, {}, features),
    )
    return SchedulerConfig(profiles=[profile], features=features)


def parse_config(
    data: Mapping[str, Any],
    source: str,
    base_dir: Path,
    known_plugins: PluginCatalog | Collection[str],
    features: SchedulerFeatures | None = None,
) -> SchedulerConfig:
    """Default and validate an already parsed KubeSchedulerConfiguration mapping, as
    ``features``' release does (default: DEFAULT_KUBERNETES_VERSION's).

    `known_plugins` names the plugins the framework can build; its args kinds (if a
    catalog) add out-of-tree plugins named by the file itself, e.g. wasm plugins, whose
    relative `file://` guest URLs resolve against `base_dir`.
    """
    catalog = as_catalog(known_plugins)
    features = features or SchedulerFeatures.of()
    if not isinstance(data, Mapping):
        raise ConfigError(source, "", "config must be a mapping", data)
    _check_type_meta(data, source)
    raw = validate_raw(RawConfig, dict(data), source, "")

    parallelism = _or(raw.parallelism, "parallelism")
    if parallelism <= 0:
        raise ConfigError(
            source, "parallelism", "should be an integer value greater than zero", parallelism
        )
    percentage = _or(raw.percentage_of_nodes_to_score, "percentageOfNodesToScore")
    _check_percentage(percentage, source, "percentageOfNodesToScore")
    initial = _or(raw.pod_initial_backoff_seconds, "podInitialBackoffSeconds")
    maximum = _or(raw.pod_max_backoff_seconds, "podMaxBackoffSeconds")
    if initial <= 0:
        raise ConfigError(source, "podInitialBackoffSeconds", "must be greater than 0", initial)
    if maximum < initial:
        raise ConfigError(
            source,
            "podMaxBackoffSeconds",
            "must be greater than or equal to podInitialBackoffSeconds",
            maximum,
        )

    client_connection = _client_connection(raw.client_connection, source)
    extenders = _parse_extenders(raw.extenders or [], source)

    raw_profiles = list(raw.profiles or [RawProfile()])
    if len(raw_profiles) == 1 and raw_profiles[0].scheduler_name is None:
        raw_profiles[0] = raw_profiles[0].model_copy(
            update={"scheduler_name": DEFAULT_SCHEDULER_NAME}
        )
    known = frozenset(catalog.names())
    profiles: list[Profile] = []
    names: dict[str, int] = {}
    for i, raw_profile in enumerate(raw_profiles):
        path = f"profiles[{i}]"
        name = raw_profile.scheduler_name
        if not name:
            raise ConfigError(source, f"{path}.schedulerName", "scheduler name is required")
        if name in names:
            raise ConfigError(source, f"{path}.schedulerName", "duplicate scheduler name", name)
        names[name] = i
        profiles.append(_parse_profile(raw_profile, i, source, base_dir, known, catalog, features))
    _check_common_queue_sort(profiles, source)

    return SchedulerConfig(
        profiles=profiles,
        client_connection=client_connection,
        parallelism=parallelism,
        percentage_of_nodes_to_score=percentage,
        pod_initial_backoff_seconds=initial,
        pod_max_backoff_seconds=maximum,
        extenders=extenders,
        source=source,
        features=features,
    )


# ---------------------------------------------------------------------------------------
# Top level


def _or(value: int | None, key: str) -> int:
    return _TOP_LEVEL_DEFAULTS[key] if value is None else value


def _check_type_meta(data: Mapping[str, Any], source: str) -> None:
    for key, want in (("apiVersion", API_VERSION), ("kind", KIND)):
        if key not in data:
            raise ConfigError(source, key, "required field is missing")
        if data[key] != want:
            raise ConfigError(source, key, f"unsupported {key}, want {want}", data[key])


def _check_percentage(value: int, source: str, path: str) -> None:
    if not 0 <= value <= 100:
        raise ConfigError(source, path, "not in valid range [0-100]", value)


# ---------------------------------------------------------------------------------------
# Extenders

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = re.compile(
    rf"^(?P<prefix>{_DNS_LABEL}(\.{_DNS_LABEL})*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{{0,61}}[A-Za-z0-9])?$"
)


def _client_connection(raw: RawClientConnection | None, source: str) -> ClientConnection:
    """clientConnection defaulted as kube-scheduler does (0 qps or burst: 50 and 100; no
    contentType: protobuf) and validated as component-base does (burst non-negative)."""
    raw = raw or RawClientConnection()
    if raw.burst < 0:
        raise ConfigError(source, "clientConnection.burst", "must be non-negative", raw.burst)
    return ClientConnection(
        qps=raw.qps or DEFAULT_QPS,
        burst=raw.burst or DEFAULT_BURST,
        kubeconfig=raw.kubeconfig,
        content_type=raw.content_type or DEFAULT_CONTENT_TYPE,
        accept_content_types=raw.accept_content_types,
    )


def parse_duration(text: str) -> float | None:
    """Seconds of a non-negative Go duration ("30s", "1m30s", "500ms", "0"); None if invalid."""
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    return total if pos == len(text) and pos > 0 else None


def _is_extended_resource_name(name: str) -> bool:
    # v1helper.IsExtendedResourceName: qualified, domain-prefixed, not kubernetes.io, not quota
    match = _QUALIFIED_NAME.match(name)
    if match is None or len(name.split("/", 1)[0]) > 253:
        return False
    return (
        match.group("prefix") is not None
        and "kubernetes.io/" not in name
        and not name.startswith("requests.")
    )


def _parse_extenders(raw: list[RawExtender], source: str) -> list[Extender]:
    extenders: list[Extender] = []
    binders = 0
    seen_resources: set[str] = set()
    for i, ext in enumerate(raw):
        path = f"extenders[{i}]"
        weight = ext.weight
        if ext.prioritize_verb and (weight is None or weight <= 0):
            raise ConfigError(
                source,
                f"{path}.weight",
                "must have a positive weight applied to it",
                0 if weight is None else weight,
            )
        if ext.bind_verb:
            binders += 1
        timeout = 5.0
        if ext.http_timeout is not None:
            parsed = parse_duration(ext.http_timeout)
            if parsed is None:
                raise ConfigError(
                    source,
                    f"{path}.httpTimeout",
                    'must be a duration such as "30s"',
                    ext.http_timeout,
                )
            # zero means "unset": kube-scheduler then uses its 5 s default
            timeout = parsed or timeout
        resources: list[ManagedResource] = []
        for j, res in enumerate(ext.managed_resources or []):
            res_path = f"{path}.managedResources[{j}].name"
            if not _is_extended_resource_name(res.name):
                raise ConfigError(
                    source, res_path, "is an invalid extended resource name", res.name
                )
            if res.name in seen_resources:
                raise ConfigError(
                    source, res_path, "duplicate extender managed resource name", res.name
                )
            seen_resources.add(res.name)
            resources.append(ManagedResource(res.name, res.ignored_by_scheduler))
        extenders.append(
            Extender(
                url_prefix=ext.url_prefix,
                filter_verb=ext.filter_verb,
                preempt_verb=ext.preempt_verb,
                prioritize_verb=ext.prioritize_verb,
                bind_verb=ext.bind_verb,
                weight=1 if weight is None else weight,
                enable_https=ext.enable_https,
                http_timeout_seconds=timeout,
                node_cache_capable=ext.node_cache_capable,
                managed_resources=resources,
                ignorable=ext.ignorable,
                tls_config=(
                    ext.tls_config.model_dump(by_alias=True) if ext.tls_config is not None else None
                ),
            )
        )
    if binders > 1:
        raise ConfigError(source, "extenders", "only one extender can implement bind", binders)
    return extenders


# ---------------------------------------------------------------------------------------
# Profiles


def _parse_profile(
    raw: RawProfile,
    index: int,
    source: str,
    base_dir: Path,
    known: frozenset[str],
    catalog: PluginCatalog,
    features: SchedulerFeatures,
) -> Profile:
    path = f"profiles[{index}]"
    if raw.percentage_of_nodes_to_score is not None:
        _check_percentage(
            raw.percentage_of_nodes_to_score, source, f"{path}.percentageOfNodesToScore"
        )

    custom = _custom_plugin_sets(raw, path, source)
    plugins = merge_plugins(default_plugin_sets(features), custom)

    # pluginConfig: typed in-tree args, out-of-tree candidates (claimed by a kind), the rest
    plugin_args: dict[str, dict[str, Any]] = {}
    claimed: dict[str, tuple[int, ArgsKind]] = {}
    seen: set[str] = set()
    for j, entry in enumerate(raw.plugin_config or []):
        entry_path = f"{path}.pluginConfig[{j}]"
        if entry.name in seen:
            raise ConfigError(
                source, f"{entry_path}.name", "duplicate pluginConfig name", entry.name
            )
        seen.add(entry.name)
        args, kind = _decode_plugin_config(entry, entry_path, source, known, catalog, features)
        if kind is not None:
            model = validate_raw(
                kind.model, args, source, f"{entry_path}.args", {"base_dir": base_dir}
            )
            claimed[entry.name] = (j, kind)
            dump = getattr(model, "dump", None)
            args = dump() if callable(dump) else model.model_dump(by_alias=True)
        plugin_args[entry.name] = args

    multi_point = {p.name for p in plugins["multiPoint"].enabled}
    kinds = {name: kind.kind for name, (_, kind) in claimed.items() if name in multi_point}
    conflicts = sorted(set(kinds) & known, key=lambda n: claimed[n][0])
    if conflicts:
        raise ConfigError(
            source,
            f"{path}.pluginConfig[{claimed[conflicts[0]][0]}].name",
            f"{kinds[conflicts[0]]} plugin name conflicts with a built-in plugin",
            conflicts[0],
        )
    candidates = {name: kind.kind for name, (_, kind) in claimed.items()}
    _check_enabled_names(custom, path, source, known, kinds, candidates)

    plugin_args.update(_default_args_for_enabled(plugins, plugin_args, features))
    return Profile(
        scheduler_name=raw.scheduler_name or DEFAULT_SCHEDULER_NAME,
        plugins=plugins,
        plugin_args=plugin_args,
        plugin_kinds=kinds,
        plugin_factories={name: claimed[name][1].factory(name) for name in kinds},
        percentage_of_nodes_to_score=raw.percentage_of_nodes_to_score,
        index=index,
        source=source,
    )


def _custom_plugin_sets(raw: RawProfile, path: str, source: str) -> dict[str, PluginSet]:
    """The profile's own sections; a name twice in one enabled list is an error."""
    custom: dict[str, PluginSet] = {}
    for section in SECTIONS:
        raw_set = raw.plugins.section(section) if raw.plugins is not None else None
        if raw_set is None:
            continue
        enabled: list[PluginRef] = []
        names: set[str] = set()
        for j, p in enumerate(raw_set.enabled or []):
            entry = f"{path}.plugins.{section}.enabled[{j}]"
            if p.name in names:
                raise ConfigError(source, f"{entry}.name", "duplicate plugin", p.name)
            names.add(p.name)
            # upstream silently turns 0 into 1; a non-positive weight is almost surely a mistake
            if p.weight is not None and p.weight <= 0:
                raise ConfigError(
                    source, f"{entry}.weight", "weight must be greater than 0", p.weight
                )
            enabled.append(PluginRef(p.name, p.weight))
        disabled = [PluginRef(p.name) for p in raw_set.disabled or []]
        custom[section] = PluginSet(enabled=enabled, disabled=disabled)
    return custom


def _iter_enabled(custom: Mapping[str, PluginSet], path: str) -> Iterator[tuple[str, str, str]]:
    for section in SECTIONS:
        if section in custom:
            for j, p in enumerate(custom[section].enabled):
                yield section, f"{path}.plugins.{section}.enabled[{j}].name", p.name


def _check_enabled_names(
    custom: Mapping[str, PluginSet],
    path: str,
    source: str,
    known: frozenset[str],
    enabled_kinds: Mapping[str, str],
    candidates: Mapping[str, str],
) -> None:
    for _, field_path, name in _iter_enabled(custom, path):
        if name in REMOVED_PLUGINS:
            raise ConfigError(source, field_path, f"plugin was removed in {API_VERSION}", name)
        if name in known or name in enabled_kinds:
            continue
        if name in candidates:
            problem = f"{candidates[name]} plugin must be enabled in multiPoint"
            raise ConfigError(source, field_path, problem, name)
        raise ConfigError(source, field_path, "unknown plugin", name)


def _decode_plugin_config(
    entry: RawPluginConfig,
    path: str,
    source: str,
    known: frozenset[str],
    catalog: PluginCatalog,
    features: SchedulerFeatures,
) -> tuple[dict[str, Any], ArgsKind | None]:
    """The args of one pluginConfig entry: typed in-tree kinds decoded and defaulted,
    anything else as the raw mapping, with the out-of-tree kind that claims it if any."""
    name, args = entry.name, entry.args
    if name in REMOVED_PLUGINS:
        raise ConfigError(source, f"{path}.name", f"plugin was removed in {API_VERSION}", name)
    if name in TYPED_ARGS_PLUGINS:
        return default_plugin_args(name, args, source, f"{path}.args", features), None
    if args is not None and not isinstance(args, Mapping):
        raise ConfigError(source, f"{path}.args", "must be a mapping", args)
    decoded = dict(args or {})
    exact = name in known or name in DEFAULT_PLUGIN_NAMES
    kind = next((k for k in catalog.args_kinds() if k.claims(decoded, exact=exact)), None)
    if kind is None and name not in known and name not in DEFAULT_PLUGIN_NAMES:
        raise ConfigError(source, f"{path}.name", "unknown plugin", name)
    return decoded, kind


def _default_args_for_enabled(
    plugins: Mapping[str, PluginSet],
    existing: Mapping[str, dict[str, Any]],
    features: SchedulerFeatures,
) -> dict[str, dict[str, Any]]:
    """Default args of every enabled in-tree plugin that has an args kind but no entry."""
    names = {p.name for section in plugins.values() for p in section.enabled}
    return {
        name: default_plugin_args(name, None, features=features)
        for name in sorted(names & TYPED_ARGS_PLUGINS)
        if name not in existing
    }


def _check_common_queue_sort(profiles: list[Profile], source: str) -> None:
    """All profiles share the queueSort section and its args (k8s validateCommonQueueSort)."""
    first = profiles[0].plugins["queueSort"]
    names = [p.name for p in first.enabled]
    first_args = profiles[0].plugin_args.get(names[0]) if names else None
    for prof in profiles[1:]:
        current = prof.plugins["queueSort"]
        if current != first:
            raise ConfigError(
                source,
                f"profiles[{prof.index}].plugins.queueSort",
                "queueSort must be the same for all profiles",
                [p.name for p in current.enabled],
            )
        if names and prof.plugin_args.get(names[0]) != first_args:
            raise ConfigError(
                source,
                f"profiles[{prof.index}].pluginConfig",
                "queueSort plugin args must be the same for all profiles",
                names[0],
            )
