"""Resource amounts as the scheduler counts them (``pkg/scheduler/framework`` ``Resource``).

``pod_requests`` is ``k8s.io/component-helpers/resource.PodRequests`` for a pod without
in-place resize status: the sum of the containers' requests plus restartable init
containers (sidecars), max'ed per resource against what each init container needs while it
runs; with ``pod_level`` (the PodLevelResources gate) the pod-level requests of cpu, memory
and hugepages (``spec.resources.requests``) replace that aggregate; then ``overhead``. Sums
and maxima are taken on exact quantities and converted at the end, as upstream converts the
summed ResourceList. The scheduler does not default pod-level requests from pod-level
limits (the API server does, SetDefaults_Pod; a manifest without requests has none).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from wasmsched.api.quantity import (
    FieldError,
    QuantityError,
    expect_list,
    expect_mapping,
    expect_str,
    milli_value,
    parse_quantity,
    value,
)

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "Resource",
    "ResourceError",
    "is_scalar_resource_name",
    "is_supported_pod_level_resource",
    "node_allocatable",
    "pod_level_requests",
    "pod_non_zero_requests",
    "pod_requests",
    "resource_list",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# pkg/scheduler/util/pod_resources.go: what scoring assumes for a container without requests.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


class ResourceError(FieldError):
    """A bad resource list entry; the path names the resource (``cpu: invalid quantity "x"``)."""


# A DNS-1123 subdomain prefix and a name part, as validation.IsQualifiedName checks them.
_QUALIFIED_NAME_RE = re.compile(
    r"(?:(?=.{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"(?=.{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?",
    re.ASCII,
)
_scalar_names: dict[str, bool] = {}


def is_scalar_resource_name(name: str) -> bool:
    """Whether the scheduler tracks ``name`` in ``ScalarResources`` (schedutil.IsScalarResourceName).

    True for hugepages-*, attachable-volumes-*, names under ``kubernetes.io/`` and extended
    resources (domain-qualified names outside ``kubernetes.io``); other names are ignored.
    """
    known = _scalar_names.get(name)
    if known is not None:
        return known
    if name.startswith(("hugepages-", "attachable-volumes-")) or "kubernetes.io/" in name:
        result = True
    elif "/" not in name or name.startswith("requests."):
        result = False
    else:
        result = _QUALIFIED_NAME_RE.fullmatch("requests." + name) is not None
    if len(_scalar_names) < 4096:
        _scalar_names[name] = result
    return result


class Resource:
    """Requested or allocatable amounts: milli-CPU, bytes, pod count and scalar resources."""

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: Mapping[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = dict(scalar) if scalar else {}

    @classmethod
    def from_resource_list(cls, d: Mapping[str, Any] | None) -> Resource:
        """Build from a ResourceList (``{"cpu": "500m", "memory": "1Gi", ...}``).

        Raises ResourceError whose path is the resource name.
        """
        try:
            return _from_amounts(resource_list(d, ""))
        except FieldError as e:
            raise _resource_error(e) from None

    def add(self, other: Resource) -> None:
        """Add ``other`` in place."""
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        if other.scalar:
            scalar = self.scalar
            for name, amount in other.scalar.items():
                scalar[name] = scalar.get(name, 0) + amount

    def sub(self, other: Resource) -> None:
        """Subtract ``other`` in place."""
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        if other.scalar:
            scalar = self.scalar
            for name, amount in other.scalar.items():
                scalar[name] = scalar.get(name, 0) - amount

    def copy(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            self.scalar,
        )

    def get(self, name: str) -> int:
        """The amount of resource ``name`` ("cpu" in milli-CPU; 0 when absent)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def names(self) -> tuple[str, ...]:
        """cpu, memory, ephemeral-storage and pods, then the scalar resource names."""
        return (CPU, MEMORY, EPHEMERAL_STORAGE, PODS, *self.scalar)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        for name in self.names():
            yield name, self.get(name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        # A scalar at 0 and an absent scalar are the same amount.
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and {k: v for k, v in self.scalar.items() if v}
            == {k: v for k, v in other.scalar.items() if v}
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        parts = [
            f"milli_cpu={self.milli_cpu}",
            f"memory={self.memory}",
            f"ephemeral_storage={self.ephemeral_storage}",
            f"allowed_pod_number={self.allowed_pod_number}",
        ]
        if self.scalar:
            parts.append(f"scalar={self.scalar!r}")
        return f"Resource({', '.join(parts)})"


def resource_list(d: Any, path: str) -> dict[str, Fraction]:
    """Parse a ResourceList into exact amounts; errors carry ``path`` plus the resource name."""
    m = expect_mapping(d, path)
    out: dict[str, Fraction] = {}
    for name, raw in m.items():
        if not isinstance(name, str):
            raise ResourceError(f"resource name must be a string: {name!r}", path)
        if raw is None:
            # JSON null decodes to a zero Quantity under the key.
            out[name] = Fraction(0)
            continue
        if isinstance(raw, str):
            # Quantity.UnmarshalJSON trims surrounding whitespace before parsing.
            raw = raw.strip()
        try:
            out[name] = parse_quantity(raw)
        except QuantityError as e:
            raise ResourceError(e.problem, f"{path}.{name}" if path else name) from None
    return out


def _from_amounts(amounts: Mapping[str, Fraction]) -> Resource:
    r = Resource()
    for name, q in amounts.items():
        if name == CPU:
            r.milli_cpu += milli_value(q)
        elif name == MEMORY:
            r.memory += value(q)
        elif name == EPHEMERAL_STORAGE:
            r.ephemeral_storage += value(q)
        elif name == PODS:
            r.allowed_pod_number += value(q)
        elif is_scalar_resource_name(name):
            r.scalar[name] = r.scalar.get(name, 0) + value(q)
    return r


def _add_into(total: dict[str, Fraction], amounts: Mapping[str, Fraction]) -> None:
    for name, q in amounts.items():
        total[name] = total.get(name, 0) + q


def _max_into(total: dict[str, Fraction], amounts: Mapping[str, Fraction]) -> None:
    for name, q in amounts.items():
        cur = total.get(name)
        if cur is None or q > cur:
            total[name] = q


def container_requests(
    container: Mapping[str, Any], path: str, limits_as_default: bool
) -> dict[str, Fraction]:
    """A container's requests; with ``limits_as_default`` a limit stands in for a missing request,
    as the API server's defaulting (SetDefaults_Pod) does."""
    res = expect_mapping(container.get("resources"), f"{path}.resources")
    requests = resource_list(res.get("requests"), f"{path}.resources.requests")
    if limits_as_default:
        limits = res.get("limits")
        if limits:
            for name, q in resource_list(limits, f"{path}.resources.limits").items():
                requests.setdefault(name, q)
    return requests


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* (component-helpers/resource: IsSupportedPodLevelResource)."""
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def pod_level_requests(spec: Mapping[str, Any]) -> dict[str, Fraction]:
    """The supported pod-level requests (``spec.resources.requests``), empty when none is set
    (component-helpers/resource: IsPodLevelRequestsSet)."""
    try:
        res = expect_mapping(expect_mapping(spec, "").get("resources"), "resources")
        requests = resource_list(res.get("requests"), "resources.requests")
    except FieldError as e:
        raise _resource_error(e) from None
    return {n: q for n, q in requests.items() if is_supported_pod_level_resource(n)}


def _aggregate(
    spec: Mapping[str, Any],
    non_missing: Mapping[str, Fraction] | None,
    limits_as_default: bool,
    pod_level: Mapping[str, Fraction] | None = None,
) -> dict[str, Fraction]:
    total: dict[str, Fraction] = {}
    for i, c in enumerate(expect_list(spec.get("containers"), "containers")):
        path = f"containers[{i}]"
        reqs = container_requests(expect_mapping(c, path), path, limits_as_default)
        if non_missing:
            for name, q in non_missing.items():
                reqs.setdefault(name, q)
        _add_into(total, reqs)

    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for i, c in enumerate(expect_list(spec.get("initContainers"), "initContainers")):
        path = f"initContainers[{i}]"
        cm = expect_mapping(c, path)
        reqs = container_requests(cm, path, limits_as_default)
        if non_missing:
            for name, q in non_missing.items():
                reqs.setdefault(name, q)
        if expect_str(cm.get("restartPolicy"), f"{path}.restartPolicy") == "Always":
            # A sidecar keeps running: it adds to the pod's total, and every later init
            # container runs beside all sidecars started before it.
            _add_into(total, reqs)
            _add_into(sidecars, reqs)
            _max_into(init_max, sidecars)
        else:
            _add_into(reqs, sidecars)
            _max_into(init_max, reqs)
    _max_into(total, init_max)
    if pod_level:
        # component-helpers/resource/helpers.go: PodRequests, applyPodLevelResources.
        total.update(pod_level)

    overhead = spec.get("overhead")
    if overhead is not None:
        _add_into(total, resource_list(overhead, "overhead"))
    return total


def _resource_error(e: FieldError) -> ResourceError:
    return e if isinstance(e, ResourceError) else ResourceError(e.problem, e.path)


def pod_request_amounts(
    spec: Mapping[str, Any], *, limits_as_default: bool = False, pod_level: bool = False
) -> dict[str, Fraction]:
    """PodRequests as exact amounts per resource name (including names the scheduler ignores)."""
    levels = pod_level_requests(spec) if pod_level else None
    try:
        return _aggregate(expect_mapping(spec, ""), None, limits_as_default, levels)
    except FieldError as e:
        raise _resource_error(e) from None


def pod_requests(
    spec: Mapping[str, Any], *, limits_as_default: bool = False, pod_level: bool = False
) -> Resource:
    """The pod's requests as the scheduler accounts them (PodRequests, then Resource.Add).

    ``limits_as_default`` applies the API server's defaulting of requests from limits first,
    for manifests that never went through an API server; ``pod_level`` counts the pod-level
    requests (PodLevelResources). Raises ResourceError with a path relative to the spec
    (``containers[0].resources.requests.cpu``).
    """
    return _from_amounts(
        pod_request_amounts(spec, limits_as_default=limits_as_default, pod_level=pod_level)
    )


_NON_ZERO_DEFAULTS: dict[str, Fraction] = {
    CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
}


def pod_non_zero_requests(
    spec: Mapping[str, Any],
    *,
    limits_as_default: bool = False,
    pod_level: bool = False,
    missing_only: bool = False,
) -> tuple[int, int]:
    """(milli-CPU, memory) with 100m / 200Mi for each container that has no cpu / memory request.

    As the scheduler's PodInfo.calculateResource: an explicit request of 0 stays 0, init
    containers get the same defaults, and overhead is added. With ``pod_level`` the pod-level
    cpu/memory requests replace the aggregate (scoring's calculatePodResourceRequest);
    ``missing_only`` is NodeInfo's rule for a pod with pod-level requests (framework/types.go:
    getNonMissingContainerRequests): a default only for a resource the pod's requests lack.
    """
    try:
        levels = pod_level_requests(spec) if pod_level else None
        defaults = _NON_ZERO_DEFAULTS
        if levels and missing_only:
            requests = _aggregate(expect_mapping(spec, ""), None, limits_as_default, levels)
            defaults = {k: q for k, q in _NON_ZERO_DEFAULTS.items() if k not in requests}
        amounts = _aggregate(expect_mapping(spec, ""), defaults, limits_as_default, levels)
    except FieldError as e:
        raise _resource_error(e) from None
    return milli_value(amounts.get(CPU, Fraction(0))), value(amounts.get(MEMORY, Fraction(0)))


def node_allocatable(status: Mapping[str, Any] | None) -> Resource:
    """``status.allocatable`` as a Resource; when allocatable is absent, capacity stands in
    (the API server defaults allocatable to capacity)."""
    try:
        st = expect_mapping(status, "")
        alloc = st.get("allocatable")
        if alloc is None:
            return _from_amounts(resource_list(st.get("capacity"), "capacity"))
        return _from_amounts(resource_list(alloc, "allocatable"))
    except FieldError as e:
        raise _resource_error(e) from None
