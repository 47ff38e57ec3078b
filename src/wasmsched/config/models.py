"""Configuration types: the resolved dataclasses and the raw YAML shape (pydantic v2).

The raw models mirror `kubescheduler.config.k8s.io/v1` field by field (camelCase aliases,
unknown fields rejected as kube-scheduler's strict decoding does); the dataclasses are what
the rest of wasmsched consumes after defaulting, merging and validation.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from wasmsched.errors import InputError
from wasmsched.release.features import SchedulerFeatures

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"

EXTENSION_POINTS: tuple[str, ...] = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
MULTI_POINT: Final = "multiPoint"
# multiPoint is a section of `plugins`, not an extension point.
SECTIONS: tuple[str, ...] = (MULTI_POINT, *EXTENSION_POINTS)

INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

NO_VALUE: Final = object()
"""Marks a ConfigError without a value to show."""
_MAX_VALUE_CHARS: Final = 120


def format_value(value: object) -> str:
    """Render a value for an error message: JSON-like, quoted strings, always one line."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = json.dumps(repr(value), ensure_ascii=False)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


class ConfigError(InputError):
    """A configuration problem, rendered as one line: `<file>: <field path>: <problem>: <value>`."""

    def __init__(
        self, source: str | None, path: str, problem: str, value: object = NO_VALUE
    ) -> None:
        self.source = source if source else "<config>"
        self.path = path
        self.problem = " ".join(problem.split())
        self.has_value = value is not NO_VALUE
        self.value = value if self.has_value else None
        parts = [self.source]
        if path:
            parts.append(path)
        parts.append(self.problem)
        if self.has_value:
            parts.append(format_value(value))
        super().__init__(": ".join(parts))


# ---------------------------------------------------------------------------------------
# Resolved configuration (what the framework consumes)


@dataclass(frozen=True)
class PluginRef:
    """A plugin named in a `plugins` section; weight None means "not given"."""

    name: str
    weight: int | None = None


@dataclass
class PluginSet:
    """The enabled and disabled plugins of one section, after merging with the defaults."""

    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)


@dataclass
class Profile:
    """One scheduling profile with its plugin sections merged with the defaults."""

    scheduler_name: str
    # keys: "multiPoint" and every EXTENSION_POINTS entry
    plugins: dict[str, PluginSet]
    # pluginConfig name -> args; in-tree kinds strictly decoded and defaulted, args of
    # out-of-tree kinds (wasm) validated by the kind's model and dumped with its defaults
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    # out-of-tree plugins recognised by their args and enabled in multiPoint: name -> kind
    # (e.g. "wasm" for kube-scheduler-wasm-extension's guestURL entries)
    plugin_kinds: dict[str, str] = field(default_factory=dict)
    # the profile's own registry: the factory of each of those plugins, from its kind
    plugin_factories: dict[str, Callable[[dict[str, Any], Any], Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    # where the profile came from, for error messages raised after loading
    index: int = 0
    source: str | None = None


@dataclass
class ManagedResource:
    """An extended resource managed by an extender."""

    name: str
    ignored_by_scheduler: bool = False


@dataclass
class Extender:
    """A scheduler extender (HTTP webhook) shared by all profiles."""

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 1
    enable_https: bool = False
    # kube-scheduler's DefaultExtenderTimeout is 5 s when httpTimeout is unset or zero
    http_timeout_seconds: float = 5.0
    node_cache_capable: bool = False
    managed_resources: list[ManagedResource] = field(default_factory=list)
    ignorable: bool = False
    tls_config: dict[str, Any] | None = None


# kube-scheduler's defaults (pkg/scheduler/apis/config/v1/defaults.go:
# SetDefaults_KubeSchedulerConfiguration), its own rather than client-go's 5 and 10.
DEFAULT_QPS = 50.0
DEFAULT_BURST = 100
DEFAULT_CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class ClientConnection:
    """clientConnection: how the live scheduler talks to the API server. ``qps`` below 0
    means no client-side rate limit (client-go: rest.RESTClientFor makes none)."""

    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    kubeconfig: str = ""
    content_type: str = DEFAULT_CONTENT_TYPE
    accept_content_types: str = ""


@dataclass
class SchedulerConfig:
    """A validated KubeSchedulerConfiguration."""

    profiles: list[Profile]
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    extenders: list[Extender] = field(default_factory=list)
    source: str | None = None
    # The release (and feature gates) the configuration was defaulted for; the scheduler
    # built from it follows the same release (scheduler/profile.py: ProfileOptions).
    features: SchedulerFeatures = field(default_factory=SchedulerFeatures.of)

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile whose schedulerName matches, if any."""
        for prof in self.profiles:
            if prof.scheduler_name == scheduler_name:
                return prof
        return None


# ---------------------------------------------------------------------------------------
# Raw YAML shape (strict, as kube-scheduler decodes it)

Int32 = Annotated[int, Field(ge=INT32_MIN, le=INT32_MAX)]
Int64 = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]


class RawModel(BaseModel):
    """Base of the raw models: camelCase keys, strict types, unknown keys rejected."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        populate_by_name=False,
    )


class RawPlugin(RawModel):
    name: str
    weight: Int32 | None = None


class RawPluginSet(RawModel):
    enabled: list[RawPlugin] | None = None
    disabled: list[RawPlugin] | None = None


class RawPlugins(RawModel):
    multi_point: RawPluginSet | None = None
    pre_enqueue: RawPluginSet | None = None
    queue_sort: RawPluginSet | None = None
    pre_filter: RawPluginSet | None = None
    filter: RawPluginSet | None = None
    post_filter: RawPluginSet | None = None
    pre_score: RawPluginSet | None = None
    score: RawPluginSet | None = None
    reserve: RawPluginSet | None = None
    permit: RawPluginSet | None = None
    pre_bind: RawPluginSet | None = None
    bind: RawPluginSet | None = None
    post_bind: RawPluginSet | None = None

    def section(self, name: str) -> RawPluginSet | None:
        """The section by its YAML name (e.g. "preFilter")."""
        value: RawPluginSet | None = getattr(self, _SECTION_ATTRS[name])
        return value


_SECTION_ATTRS: dict[str, str] = {to_camel(attr): attr for attr in RawPlugins.model_fields}
assert set(_SECTION_ATTRS) == set(SECTIONS)


class RawPluginConfig(RawModel):
    name: str
    # kept raw: its shape depends on the plugin, decoded later
    args: Any = None


class RawProfile(RawModel):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    plugins: RawPlugins | None = None
    plugin_config: list[RawPluginConfig] | None = None


class RawManagedResource(RawModel):
    name: str
    ignored_by_scheduler: bool = False


class RawTLSConfig(RawModel):
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = Field("", alias="caFile")
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = Field("", alias="caData")


class RawExtender(RawModel):
    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: Int64 | None = None
    bind_verb: str = ""
    enable_https: bool = Field(False, alias="enableHTTPS")
    tls_config: RawTLSConfig | None = None
    http_timeout: str | None = None
    node_cache_capable: bool = False
    managed_resources: list[RawManagedResource] | None = None
    ignorable: bool = False


class RawClientConnection(RawModel):
    """componentbaseconfig ClientConnectionConfiguration."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = ""
    qps: float = 0.0
    burst: Int32 = 0


class RawConfig(RawModel):
    """The top level; apiVersion and kind are checked before this model runs."""

    api_version: str
    kind: str
    parallelism: Int32 | None = None
    leader_election: dict[str, Any] | None = None
    client_connection: RawClientConnection | None = None
    healthz_bind_address: str | None = None
    metrics_bind_address: str | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    delay_cache_until_active: bool | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    pod_initial_backoff_seconds: Int64 | None = None
    pod_max_backoff_seconds: Int64 | None = None
    profiles: list[RawProfile] | None = None
    extenders: list[RawExtender] | None = None


# ---------------------------------------------------------------------------------------
# pydantic errors -> ConfigError

M = TypeVar("M", bound=BaseModel)

_TYPE_PROBLEMS: dict[str, str] = {
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "bool_type": "must be a boolean",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
    "missing": "required field is missing",
}


def join_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """Append a pydantic location to a dotted field path: `a.b[0].c`."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def describe_validation_error(
    exc: ValidationError, model: type[BaseModel], prefix: str = ""
) -> tuple[str, str, object]:
    """The first problem of a pydantic error as ``(field path, problem, value)``; the value
    is ``NO_VALUE`` when there is none to show. Shared by every pydantic schema (the config
    file's raw models and plugin args models such as wasm's), so one rule gives one text."""
    errors = exc.errors(include_url=False)
    # an unknown key first: a misspelled key explains the "required" error of the right one
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    raw_loc = tuple(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":  # the last part is the input's key, not a field name
        loc = (*_aliased(model, raw_loc[:-1]), raw_loc[-1])
    else:
        loc = _aliased(model, raw_loc)
    if kind == "extra_forbidden":
        key = loc[-1]
        suggestion = _suggest(str(key), _field_aliases(model, loc[:-1]))
        if suggestion is not None:
            hint = f"unknown field {key} (did you mean {suggestion}?)"
            return join_path(prefix, loc[:-1]), hint, NO_VALUE
        return join_path(prefix, loc[:-1]), "unknown field", key
    if kind == "missing":
        return join_path(prefix, loc), _TYPE_PROBLEMS[kind], NO_VALUE
    if kind == REQUIRED:
        return join_path(prefix, loc), str(err["msg"]), NO_VALUE
    problem = _TYPE_PROBLEMS.get(kind)
    ctx = err.get("ctx") or {}
    if problem is None:
        template = _BOUNDS.get(kind)
        if template is not None:
            problem = template.format(**ctx)
        elif kind == "value_error" and "error" in ctx:
            problem = str(ctx["error"])
        else:
            msg = str(err["msg"])
            problem = msg[:1].lower() + msg[1:]
    return join_path(prefix, loc), problem, err["input"]


def validate_raw(
    model: type[M],
    data: Any,
    source: str | None,
    prefix: str,
    context: Mapping[str, Any] | None = None,
) -> M:
    """Validate `data` against a raw model; the first problem becomes a one-line ConfigError.

    ``context`` reaches the model's validators (e.g. ``base_dir``, the config file's folder,
    against which relative paths resolve)."""
    try:
        return model.model_validate(data, context=dict(context) if context else None)
    except ValidationError as exc:
        path, problem, value = describe_validation_error(exc, model, prefix)
        raise ConfigError(source, path, problem, value) from None


REQUIRED: Final = "required"
"""Error type for ``PydanticCustomError(REQUIRED, "<field> is required")``: a field that is
present but empty; reported without its value."""

_BOUNDS: Final = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be greater than or equal to {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be less than or equal to {le}",
}


def field_aliases(model: type[BaseModel]) -> list[str]:
    """The keys a model accepts (aliases where given)."""
    return [f.alias or name for name, f in model.model_fields.items()]


def _field_aliases(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    # walk nested models along the location (lists and dicts of models included)
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return []
        nested = _nested_model(field.annotation)
        if nested is None:
            return []
        model = nested
    return field_aliases(model)


def _aliased(model: type[BaseModel] | None, loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` with field names replaced by their aliases (errors of defaults name fields)."""
    out: list[int | str] = []
    for part in loc:
        if isinstance(part, str) and model is not None:
            field = model.model_fields.get(part)
            if field is not None:
                out.append(field.alias or part)
                model = _nested_model(field.annotation)
                continue
            by_alias = next((f for f in model.model_fields.values() if f.alias == part), None)
            model = _nested_model(by_alias.annotation) if by_alias is not None else None
        out.append(part)
    return tuple(out)


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


def _suggest(key: str, known: list[str]) -> str | None:
    """The known key a misspelled one most likely meant: same letters ignoring case, else
    the closest by difflib's ratio (kubectl's strict validation names no candidate; ours
    does, as a typo in a plugin's args is the usual cause)."""
    for candidate in known:
        if candidate.lower() == key.lower():
            return candidate
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return close[0] if close else None
