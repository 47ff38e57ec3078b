"""Strict structural validation against one Kubernetes release's object schema.

The schema is the one lightkube-models 1.37 ships (typed models generated from the
Kubernetes 1.37 OpenAPI document, pinned in pyproject.toml): every field name, its type and
whether the OpenAPI marks it required. An older release's schema is that one less the fields
the release lacks, plus the few it had that 1.37 dropped (schema_versions.py, generated from
each release's lightkube-models). Unknown fields are errors, as the API server's strict
field validation (``kubectl apply --validate=strict``, k8s.io/apimachinery
pkg/runtime/serializer/json: strict decoding) reports them; a value of the wrong JSON type
is an error, as the API server's JSON decoder refuses it.

Two details the models flatten are restored here: ``resource.Quantity`` is a string in the
models but the API server also decodes a JSON number into it (Quantity.UnmarshalJSON), and
``Time`` decodes from an RFC 3339 string.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import msgspec.inspect as mi

from wasmsched.api.quantity import join_path, quote, type_name
from wasmsched.api.validation.problems import Problem
from wasmsched.api.validation.schema_versions import FIELD_VERSIONS, VERSIONS
from wasmsched.release.version import KubernetesVersion

__all__ = ["SCHEMA_KINDS", "SERVED_FROM", "schema_problems"]

# kind -> (apiVersion served by Kubernetes 1.33 to 1.37, lightkube-models module, class name)
SCHEMA_KINDS: dict[str, tuple[str, str, str]] = {
    "Pod": ("v1", "core_v1", "Pod"),
    "Node": ("v1", "core_v1", "Node"),
    "Namespace": ("v1", "core_v1", "Namespace"),
    "ConfigMap": ("v1", "core_v1", "ConfigMap"),
    "Service": ("v1", "core_v1", "Service"),
    "PersistentVolume": ("v1", "core_v1", "PersistentVolume"),
    "PersistentVolumeClaim": ("v1", "core_v1", "PersistentVolumeClaim"),
    "Deployment": ("apps/v1", "apps_v1", "Deployment"),
    "ReplicaSet": ("apps/v1", "apps_v1", "ReplicaSet"),
    "StatefulSet": ("apps/v1", "apps_v1", "StatefulSet"),
    "DaemonSet": ("apps/v1", "apps_v1", "DaemonSet"),
    "Job": ("batch/v1", "batch_v1", "Job"),
    "CronJob": ("batch/v1", "batch_v1", "CronJob"),
    "PodDisruptionBudget": ("policy/v1", "policy_v1", "PodDisruptionBudget"),
    "PriorityClass": ("scheduling.k8s.io/v1", "scheduling_v1", "PriorityClass"),
    "RuntimeClass": ("node.k8s.io/v1", "node_v1", "RuntimeClass"),
    "StorageClass": ("storage.k8s.io/v1", "storage_v1", "StorageClass"),
    "CSINode": ("storage.k8s.io/v1", "storage_v1", "CSINode"),
    "CSIDriver": ("storage.k8s.io/v1", "storage_v1", "CSIDriver"),
    # Dynamic Resource Allocation: resource.k8s.io/v1 is served from 1.34 (DRA GA).
    "DeviceClass": ("resource.k8s.io/v1", "resource_v1", "DeviceClass"),
    "ResourceSlice": ("resource.k8s.io/v1", "resource_v1", "ResourceSlice"),
    "ResourceClaim": ("resource.k8s.io/v1", "resource_v1", "ResourceClaim"),
    "ResourceClaimTemplate": ("resource.k8s.io/v1", "resource_v1", "ResourceClaimTemplate"),
    "DeviceTaintRule": ("resource.k8s.io/v1", "resource_v1", "DeviceTaintRule"),
}
# Kinds that not every modelled release serves at their apiVersion: the first that does
# (resource.k8s.io/v1 from 1.34, DRA GA; its DeviceTaintRule from 1.37).
SERVED_FROM: dict[str, str] = {
    "DeviceClass": "1.34",
    "ResourceSlice": "1.34",
    "ResourceClaim": "1.34",
    "ResourceClaimTemplate": "1.34",
    "DeviceTaintRule": "1.37",
}

# Beyond this many problems in one object the rest is not worth walking.
_MAX_PROBLEMS = 50


@dataclass(frozen=True)
class _Field:
    type: Any
    quantity: bool
    required: bool


@cache
def _model(kind: str) -> Any:
    _, module, name = SCHEMA_KINDS[kind]
    return getattr(importlib.import_module(f"lightkube.models.{module}"), name)


_ANY = _Field(mi.AnyType(), quantity=False, required=False)


@cache
def _fields_at(cls: Any, version: KubernetesVersion) -> dict[str, _Field]:
    """The fields of model class ``cls`` that ``version`` has: the model's own (1.37) less
    those the release lacks, plus those it had that 1.37 dropped (untyped: any value)."""
    fields = dict(_fields(cls))
    release = str(version)
    for name, having in _field_versions(cls).items():
        if release not in having:
            fields.pop(name, None)
        elif name not in fields:
            fields[name] = _ANY
    return fields


def _field_versions(cls: Any) -> dict[str, tuple[str, ...]]:
    """FIELD_VERSIONS' entry for model class ``cls`` (lightkube.models.MODULE.Class)."""
    return FIELD_VERSIONS.get(f"{cls.__module__.rpartition('.')[2]}.{cls.__name__}", {})


@cache
def _fields(cls: Any) -> dict[str, _Field]:
    info: Any = mi.type_info(cls)
    annotations: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        annotations.update(getattr(klass, "__annotations__", {}))
    out: dict[str, _Field] = {}
    for f in info.fields:
        annotation = str(annotations.get(f.name, ""))
        out[f.encode_name] = _Field(f.type, "Quantity" in annotation, f.required)
    return out


def _strip_optional(t: Any) -> Any:
    if isinstance(t, mi.UnionType):
        types = [x for x in t.types if not isinstance(x, mi.NoneType)]
        if len(types) == 1:
            return types[0]
        return mi.UnionType(tuple(types))
    return t


def _expected(t: Any, quantity: bool) -> str:
    if quantity:
        return "a quantity (string or number)"
    if isinstance(t, mi.StructType | mi.DictType):
        return "a mapping"
    if isinstance(t, mi.ListType):
        return "a list"
    if isinstance(t, mi.StrType | mi.DateTimeType):
        return "a string"
    if isinstance(t, mi.IntType):
        return "an integer"
    if isinstance(t, mi.FloatType):
        return "a number"
    if isinstance(t, mi.BoolType):
        return "a boolean"
    if isinstance(t, mi.UnionType):
        return " or ".join(_expected(x, False) for x in t.types)
    return "a value"


def _accepts_scalar(t: Any, value: Any, quantity: bool) -> bool:
    if quantity:
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    if isinstance(t, mi.StrType):
        return isinstance(value, str)
    if isinstance(t, mi.DateTimeType):
        # Our YAML loader keeps timestamps as text; another loader may hand a datetime.
        return isinstance(value, str) or hasattr(value, "isoformat")
    if isinstance(t, mi.IntType):
        # sigs.k8s.io/yaml turns 3.0 into the JSON number 3, which decodes into an int.
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if isinstance(t, mi.FloatType):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(t, mi.BoolType):
        return isinstance(value, bool)
    return False


class _Walker:
    def __init__(self, version: KubernetesVersion) -> None:
        self.version = version
        self.problems: list[Problem] = []

    def add(self, path: str, detail: str) -> None:
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(Problem(path, detail))

    def value(self, t: Any, value: Any, path: str, quantity: bool = False) -> None:
        if value is None or len(self.problems) >= _MAX_PROBLEMS:
            # null is an absent optional field to the API server's decoder.
            return
        t = _strip_optional(t)
        if isinstance(t, mi.AnyType):
            return
        if isinstance(t, mi.UnionType):
            # IntOrString and the like: any member that takes the value will do.
            if not any(_accepts_scalar(x, value, quantity) for x in t.types):
                self._wrong_type(t, value, path, quantity)
            return
        if isinstance(t, mi.StructType):
            self.struct(t.cls, value, path)
        elif isinstance(t, mi.DictType):
            if not isinstance(value, Mapping):
                self._wrong_type(t, value, path, quantity)
                return
            for k in value:
                if not isinstance(k, str):
                    self.add(path, f"expected a string key, got {type_name(k)}: {quote(k)}")
        elif isinstance(t, mi.ListType):
            if not isinstance(value, list | tuple):
                self._wrong_type(t, value, path, quantity)
                return
            for i, item in enumerate(value):
                self.value(t.item_type, item, f"{path}[{i}]", quantity)
        elif not _accepts_scalar(t, value, quantity):
            self._wrong_type(t, value, path, quantity)

    def _wrong_type(self, t: Any, value: Any, path: str, quantity: bool) -> None:
        self.add(path, f"expected {_expected(t, quantity)}, got {type_name(value)}: {quote(value)}")

    def struct(self, cls: Any, value: Any, path: str, skip: frozenset[str] = frozenset()) -> None:
        if not isinstance(value, Mapping):
            self.add(path, f"expected a mapping, got {type_name(value)}: {quote(value)}")
            return
        fields = _fields_at(cls, self.version)
        for key, item in value.items():
            if not isinstance(key, str):
                self.add(path, f"expected a string key, got {type_name(key)}: {quote(key)}")
                continue
            if key in skip:
                continue
            f = fields.get(key)
            if f is None:
                self.add(join_path(path, key), self._unknown(cls, key, fields))
                continue
            self.value(f.type, item, join_path(path, key), f.quantity)
        for key, f in fields.items():
            if f.required and value.get(key) is None:
                self.add(join_path(path, key), "Required value")

    def _unknown(self, cls: Any, key: str, fields: Mapping[str, _Field]) -> str:
        having = _field_versions(cls).get(key)
        if having:
            # A field of another release: say which, so the input's version can be chosen.
            return (
                f"unknown field {quote(key)} (not in the Kubernetes {self.version} schema; "
                f"Kubernetes {_releases(having)} {'has' if len(having) == 1 else 'have'} it: "
                f"--kubernetes-version {having[-1]})"
            )
        close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.75)
        hint = (
            f" (did you mean {quote(close[0])}?)"
            if close
            else f" (not in the Kubernetes {self.version} schema)"
        )
        return f"unknown field {quote(key)}{hint}"


def _releases(having: tuple[str, ...]) -> str:
    """The releases, oldest first, as ``1.35``, ``1.35 and later``, ``1.34 to 1.36`` or a
    list."""
    if len(having) == 1:
        return having[0]
    first = VERSIONS.index(having[0])
    if having != VERSIONS[first : first + len(having)]:
        return ", ".join(having)
    if having[-1] == VERSIONS[-1]:
        return f"{having[0]} and later"
    return f"{having[0]} to {having[-1]}"


def schema_problems(
    kind: str, manifest: Mapping[str, Any], version: KubernetesVersion
) -> list[Problem]:
    """Every structural problem of ``manifest`` (a ``kind`` from SCHEMA_KINDS) against the
    schema of Kubernetes ``version``: unknown fields, wrong types, required fields missing,
    and an apiVersion that the release does not serve for the kind. A missing apiVersion is
    accepted (hand-written manifests often leave it out)."""
    api_version, _, _ = SCHEMA_KINDS[kind]
    walker = _Walker(version)
    first = SERVED_FROM.get(kind)
    if first is not None and VERSIONS.index(str(version)) < VERSIONS.index(first):
        walker.add(
            "apiVersion",
            f"{kind} ({api_version}) is not served by Kubernetes {version} "
            f"(Kubernetes {first} and later serve it)",
        )
        return walker.problems
    got = manifest.get("apiVersion")
    if got is not None and got != api_version:
        walker.add(
            "apiVersion",
            f"{kind} is served as {quote(api_version)} by Kubernetes {version}, not {quote(got)}",
        )
    walker.struct(_model(kind), manifest, "", skip=frozenset({"apiVersion"}))
    return walker.problems
