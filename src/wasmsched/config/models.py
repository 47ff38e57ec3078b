"""Configuration types: the resolved dataclasses and the raw YAML shape (pydantic v2).

The raw models mirror `kubescheduler.config.k8s.io/v1` field by field (camelCase aliases,
unknown fields rejected as kube-scheduler's strict decoding does); the dataclasses are what
the rest of wasmsched consumes after defaulting, merging and validation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from wasmsched.errors import InputError

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

_NO_VALUE: Final = object()
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
        self, source: str | None, path: str, problem: str, value: object = _NO_VALUE
    ) -> None:
        self.source = source if source else "<config>"
        self.path = path
        self.problem = " ".join(problem.split())
        self.has_value = value is not _NO_VALUE
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
class WasmPluginArgs:
    """Arguments of one wasm plugin (`pluginConfig[].args` with a `guestURL`).

    Accepted keys: `guestURL`, `guestConfig`, `logSeverity`, `Args` (upstream's
    kube-scheduler-wasm-extension), and our limits `callTimeoutMilliseconds`,
    `memoryLimitMiB`. Any other key is an error.
    """

    guest_url: str
    guest_config: str = ""
    log_severity: int = 0
    args: list[str] = field(default_factory=list)
    call_timeout_ms: int = 1000
    memory_limit_mib: int = 256


WASM_ARGS_KEYS: tuple[str, ...] = (
    "guestURL",
    "guestConfig",
    "logSeverity",
    "Args",
    "callTimeoutMilliseconds",
    "memoryLimitMiB",
)


@dataclass
class Profile:
    """One scheduling profile with its plugin sections merged with the defaults."""

    scheduler_name: str
    # keys: "multiPoint" and every EXTENSION_POINTS entry
    plugins: dict[str, PluginSet]
    # pluginConfig name -> args; in-tree kinds strictly decoded and defaulted
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    # pluginConfig entries with a guestURL whose name is enabled in multiPoint
    wasm_plugins: dict[str, WasmPluginArgs] = field(default_factory=dict)
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


@dataclass
class SchedulerConfig:
    """A validated KubeSchedulerConfiguration."""

    profiles: list[Profile]
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    extenders: list[Extender] = field(default_factory=list)
    source: str | None = None

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


class RawConfig(RawModel):
    """The top level; apiVersion and kind are checked before this model runs."""

    api_version: str
    kind: str
    parallelism: Int32 | None = None
    leader_election: dict[str, Any] | None = None
    client_connection: dict[str, Any] | None = None
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


class RawWasmArgs(RawModel):
    """`pluginConfig[].args` of a wasm plugin; guestURL presence is checked before this."""

    guest_url: str = Field(alias="guestURL")
    guest_config: str = ""
    log_severity: Annotated[int, Field(ge=0, le=3)] = 0
    args: list[str] | None = Field(None, alias="Args")
    call_timeout_milliseconds: Annotated[int, Field(ge=1, le=INT32_MAX)] = 1000
    # wasm32 memories stop at 4 GiB
    memory_limit_mi_b: Annotated[int, Field(ge=1, le=4096)] = Field(256, alias="memoryLimitMiB")


assert tuple(f.alias for f in RawWasmArgs.model_fields.values()) == WASM_ARGS_KEYS


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


def validate_raw(model: type[M], data: Any, source: str | None, prefix: str) -> M:
    """Validate `data` against a raw model; the first problem becomes a one-line ConfigError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = tuple(err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden":
            raise ConfigError(
                source, join_path(prefix, loc[:-1]), "unknown field", loc[-1]
            ) from None
        if kind == "missing":
            raise ConfigError(source, join_path(prefix, loc), _TYPE_PROBLEMS[kind]) from None
        problem = _TYPE_PROBLEMS.get(kind)
        if problem is None:
            ctx = err.get("ctx") or {}
            bounds = {
                "greater_than": "must be greater than {gt}",
                "greater_than_equal": "must be greater than or equal to {ge}",
                "less_than": "must be less than {lt}",
                "less_than_equal": "must be less than or equal to {le}",
            }
            template = bounds.get(kind)
            if template is not None:
                problem = template.format(**ctx)
            else:
                msg = str(err["msg"])
                problem = msg[:1].lower() + msg[1:]
        raise ConfigError(source, join_path(prefix, loc), problem, err["input"]) from None
