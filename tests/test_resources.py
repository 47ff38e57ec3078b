"""Tests for wasmsched.api.resources (Resource, PodRequests, non-zero requests)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from wasmsched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Resource,
    ResourceError,
    is_scalar_resource_name,
    node_allocatable,
    pod_level_requests,
    pod_non_zero_requests,
    pod_requests,
)

GI = 2**30
MI = 2**20


def ctr(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": "c", "resources": res, **kw}


def sidecar(requests: dict[str, Any]) -> dict[str, Any]:
    return ctr(requests, restartPolicy="Always")


def test_from_resource_list_maps_names() -> None:
    r = Resource.from_resource_list(
        {
            "cpu": "940m",
            "memory": "2880020Ki",
            "ephemeral-storage": "17060071478",
            "pods": "110",
            "nvidia.com/gpu": 2,
            "hugepages-2Mi": "4Mi",
            "attachable-volumes-gce-pd": "15",
            "kubernetes.io/batteries": "3",
        }
    )
    assert r.milli_cpu == 940
    assert r.memory == 2880020 * 1024
    assert r.ephemeral_storage == 17060071478
    assert r.allowed_pod_number == 110
    assert r.scalar == {
        "nvidia.com/gpu": 2,
        "hugepages-2Mi": 4 * MI,
        "attachable-volumes-gce-pd": 15,
        "kubernetes.io/batteries": 3,
    }


def test_from_resource_list_ignores_names_the_scheduler_ignores() -> None:
    # Resource.Add only keeps scalar resource names (IsScalarResourceName).
    r = Resource.from_resource_list({"storage": "1Gi", "requests.foo/bar": "1", "cpu": "1"})
    assert r == Resource(milli_cpu=1000)
    assert r.scalar == {}


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        ("nvidia.com/gpu", True),
        ("example.com/foo", True),
        ("hugepages-1Gi", True),
        ("attachable-volumes-aws-ebs", True),
        ("kubernetes.io/something", True),
        ("cpu", False),
        ("storage", False),
        ("foo", False),
        ("requests.example.com/foo", False),
        ("Example.com/foo", False),  # the domain must be lower case
        ("example.com/", False),
        ("example.com/-foo", False),
    ],
)
def test_is_scalar_resource_name(name: str, scalar: bool) -> None:
    assert is_scalar_resource_name(name) is scalar


@pytest.mark.parametrize(
    ("rl", "message"),
    [
        ({"cpu": "12x"}, 'cpu: invalid quantity "12x"'),
        ({"memory": "1 Gi"}, 'memory: invalid quantity "1 Gi"'),
        ({"nvidia.com/gpu": True}, "nvidia.com/gpu: invalid quantity true"),
        ({"cpu": [1]}, "cpu: invalid quantity [1]"),
    ],
)
def test_from_resource_list_errors_name_the_resource(rl: dict[str, Any], message: str) -> None:
    with pytest.raises(ResourceError) as info:
        Resource.from_resource_list(rl)
    assert str(info.value) == message


def test_from_resource_list_trims_like_unmarshal_json_and_reads_null_as_zero() -> None:
    assert Resource.from_resource_list({"cpu": " 250m ", "memory": None}) == Resource(milli_cpu=250)
    assert Resource.from_resource_list(None) == Resource()


def test_resource_arithmetic_and_accessors() -> None:
    a = Resource(milli_cpu=100, memory=10, scalar={"x.io/y": 1})
    b = Resource(
        milli_cpu=50, memory=5, ephemeral_storage=7, allowed_pod_number=1, scalar={"x.io/z": 2}
    )
    c = a.copy()
    c.add(b)
    assert c == Resource(150, 15, 7, 1, {"x.io/y": 1, "x.io/z": 2})
    assert a == Resource(milli_cpu=100, memory=10, scalar={"x.io/y": 1})  # copy is independent
    c.sub(b)
    assert c == a  # x.io/z back at 0 compares equal to absent
    assert c.scalar["x.io/z"] == 0
    assert c.get("cpu") == 100
    assert c.get("memory") == 10
    assert c.get("ephemeral-storage") == 0
    assert c.get("pods") == 0
    assert c.get("x.io/y") == 1
    assert c.get("missing.io/r") == 0
    assert c.names() == ("cpu", "memory", "ephemeral-storage", "pods", "x.io/y", "x.io/z")
    assert dict(c)["cpu"] == 100
    assert repr(Resource(milli_cpu=1)) == (
        "Resource(milli_cpu=1, memory=0, ephemeral_storage=0, allowed_pod_number=0)"
    )
    assert Resource() != Resource(memory=1)
    assert Resource().__eq__(object()) is NotImplemented


# Cases from k8s.io/component-helpers/resource helpers_test.go and the sidecar KEP (753).
POD_REQUEST_CASES: list[tuple[str, dict[str, Any], Resource]] = [
    (
        "just limit, no overhead (no defaulting)",
        {"containers": [ctr(limits={"cpu": "9"})]},
        Resource(),
    ),
    (
        "just overhead",
        {"containers": [ctr()], "overhead": {"cpu": "5", "memory": "5"}},
        Resource(milli_cpu=5000, memory=5),
    ),
    (
        "requests and overhead",
        {
            "containers": [ctr({"cpu": "1", "memory": "10"}, {"cpu": "2"})],
            "overhead": {"cpu": "5", "memory": "5"},
        },
        Resource(milli_cpu=6000, memory=15),
    ),
    (
        "two containers are summed",
        {"containers": [ctr({"cpu": "1", "memory": "5"}), ctr({"cpu": "4", "memory": "12"})]},
        Resource(milli_cpu=5000, memory=17),
    ),
    (
        "massive init container wins, overhead added",
        {
            "containers": [ctr({"cpu": "1", "memory": "5"}), ctr({"cpu": "4", "memory": "12"})],
            "initContainers": [
                ctr({"cpu": "1", "memory": "5"}),
                ctr({"cpu": "40", "memory": "120"}),
            ],
            "overhead": {"cpu": "3", "memory": "8"},
        },
        Resource(milli_cpu=43000, memory=128),
    ),
    (
        "larger init container",
        {"containers": [ctr({"cpu": "1"})], "initContainers": [ctr({"cpu": "4"})]},
        Resource(milli_cpu=4000),
    ),
    (
        "larger containers",
        {
            "containers": [ctr({"cpu": "2"}), ctr({"cpu": "3"})],
            "initContainers": [ctr({"cpu": "2"})],
        },
        Resource(milli_cpu=5000),
    ),
    (
        "overhead included",
        {
            "containers": [ctr({"cpu": "2"}), ctr({"cpu": "3"})],
            "initContainers": [ctr({"cpu": "2"}, {"cpu": "2"})],
            "overhead": {"cpu": "1", "memory": "1Gi"},
        },
        Resource(milli_cpu=6000, memory=GI),
    ),
    (
        "init max is per resource",
        {
            "containers": [ctr({"cpu": "1", "memory": "1Gi"})],
            "initContainers": [ctr({"cpu": "3"}), ctr({"memory": "2Gi"})],
        },
        Resource(milli_cpu=3000, memory=2 * GI),
    ),
    (
        "restartable init container adds to the containers",
        {"containers": [ctr({"cpu": "1"})], "initContainers": [sidecar({"cpu": "1"})]},
        Resource(milli_cpu=2000),
    ),
    (
        "regular init container after a sidecar runs beside it",
        {
            "containers": [ctr({"cpu": "1"})],
            "initContainers": [sidecar({"cpu": "1"}), ctr({"cpu": "2"})],
        },
        Resource(milli_cpu=3000),
    ),
    (
        "regular init container before a sidecar does not",
        {
            "containers": [ctr({"cpu": "1"})],
            "initContainers": [ctr({"cpu": "2"}), sidecar({"cpu": "1"})],
        },
        Resource(milli_cpu=2000),
    ),
    (
        "multiple sidecars and regular init containers",
        {
            "containers": [ctr({"cpu": "1"})],
            "initContainers": [
                sidecar({"cpu": "1"}),
                sidecar({"cpu": "2"}),
                ctr({"cpu": "1"}),
                ctr({"cpu": "5"}),
            ],
        },
        Resource(milli_cpu=8000),
    ),
    (
        "sidecar memory and init cpu combine per resource",
        {
            "containers": [ctr({"cpu": "500m", "memory": "100Mi"})],
            "initContainers": [sidecar({"memory": "50Mi"}), ctr({"cpu": "1", "memory": "10Mi"})],
        },
        Resource(milli_cpu=1000, memory=150 * MI),
    ),
    (
        "restartPolicy other than Always is a regular init container",
        {
            "containers": [ctr({"cpu": "1"})],
            "initContainers": [ctr({"cpu": "1"}, restartPolicy="OnFailure")],
        },
        Resource(milli_cpu=1000),
    ),
    (
        "quantities are summed exactly before rounding to milli",
        {"containers": [ctr({"cpu": "0.0004"}), ctr({"cpu": "0.0004"})]},
        Resource(milli_cpu=1),
    ),
    (
        "extended and hugepages resources",
        {
            "containers": [ctr({"nvidia.com/gpu": "1", "hugepages-2Mi": "2Mi"})],
            "initContainers": [ctr({"nvidia.com/gpu": "2"})],
        },
        Resource(scalar={"nvidia.com/gpu": 2, "hugepages-2Mi": 2 * MI}),
    ),
    ("empty spec", {}, Resource()),
]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [(s, e) for _, s, e in POD_REQUEST_CASES],
    ids=[n for n, _, _ in POD_REQUEST_CASES],
)
def test_pod_requests(spec: dict[str, Any], expected: Resource) -> None:
    assert pod_requests(spec) == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"containers": [ctr(limits={"cpu": "9", "memory": "1Gi"})]}, Resource(9000, GI)),
        ({"containers": [ctr({"cpu": "1"}, {"cpu": "9", "memory": "1Gi"})]}, Resource(1000, GI)),
        ({"initContainers": [ctr(limits={"cpu": "3"})]}, Resource(3000)),
    ],
)
def test_pod_requests_with_api_defaulting_from_limits(
    spec: dict[str, Any], expected: Resource
) -> None:
    assert pod_requests(spec, limits_as_default=True) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"containers": [ctr({"cpu": "12x"})]},
            'containers[0].resources.requests.cpu: invalid quantity "12x"',
        ),
        (
            {"containers": [ctr()], "initContainers": [ctr(limits={"memory": "1K"})]},
            'initContainers[0].resources.limits.memory: invalid quantity "1K": unknown suffix',
        ),
        ({"overhead": {"cpu": "x"}}, 'overhead.cpu: invalid quantity "x"'),
        ({"containers": {"a": 1}}, 'containers: expected a list, got mapping: {"a": 1}'),
        ({"containers": ["c"]}, 'containers[0]: expected a mapping, got string: "c"'),
        (
            {"containers": [{"resources": {"requests": ["cpu"]}}]},
            'containers[0].resources.requests: expected a mapping, got list: ["cpu"]',
        ),
    ],
)
def test_pod_requests_errors_have_paths(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ResourceError) as info:
        pod_requests(spec, limits_as_default=True)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"containers": [ctr()]}, (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST)),
        ({"containers": [ctr(), ctr()]}, (200, 2 * DEFAULT_MEMORY_REQUEST)),
        ({"containers": [ctr({"cpu": "0", "memory": "0"})]}, (0, 0)),
        ({"containers": [ctr({"cpu": "250m"})]}, (250, DEFAULT_MEMORY_REQUEST)),
        ({"containers": [ctr({"memory": "1Gi"})]}, (100, GI)),
        (
            {"containers": [ctr({"cpu": "1", "memory": "1Gi"})], "initContainers": [ctr()]},
            (1000, GI),
        ),
        (
            {"containers": [ctr({"cpu": "50m", "memory": "1Mi"})], "initContainers": [ctr()]},
            (100, DEFAULT_MEMORY_REQUEST),
        ),
        (
            {"containers": [ctr({"cpu": "1", "memory": "1Gi"})], "initContainers": [sidecar({})]},
            (1100, GI + DEFAULT_MEMORY_REQUEST),
        ),
        (
            {"containers": [ctr()], "overhead": {"cpu": "10m", "memory": "1Mi"}},
            (110, DEFAULT_MEMORY_REQUEST + MI),
        ),
        ({}, (0, 0)),
    ],
)
def test_pod_non_zero_requests(spec: dict[str, Any], expected: tuple[int, int]) -> None:
    assert pod_non_zero_requests(spec) == expected


def test_node_allocatable_falls_back_to_capacity() -> None:
    assert node_allocatable({"capacity": {"cpu": "2", "pods": "110"}}) == Resource(
        milli_cpu=2000, allowed_pod_number=110
    )
    assert node_allocatable(
        {"capacity": {"cpu": "2"}, "allocatable": {"cpu": "1500m"}}
    ) == Resource(milli_cpu=1500)
    # An explicit empty allocatable is not missing.
    assert node_allocatable({"capacity": {"cpu": "2"}, "allocatable": {}}) == Resource()
    assert node_allocatable(None) == Resource()


def test_node_allocatable_error_path() -> None:
    with pytest.raises(ResourceError, match=r'^allocatable\.memory: invalid quantity "lots"$'):
        node_allocatable({"allocatable": {"memory": "lots"}})


# --- pod-level resources (PodLevelResources) ------------------------------------------------
# component-helpers/resource/helpers.go (v0.37.2) PodRequests: the container aggregate, then
# each supported pod-level request (cpu, memory, hugepages-*) replaces its entry
# (applyPodLevelResources), then overhead.


def _c(**requests: str) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": dict(requests)}}


POD_LEVEL_SPEC: dict[str, Any] = {
    "resources": {
        "requests": {"cpu": "1", "hugepages-2Mi": "4Mi", "ephemeral-storage": "9Gi"},
    },
    "containers": [
        _c(cpu="100m", memory="1Gi", **{"ephemeral-storage": "1Gi"}),
        _c(cpu="200m", **{"hugepages-2Mi": "2Mi"}),
    ],
    "overhead": {"cpu": "50m"},
}


def test_pod_level_requests_replace_the_aggregate() -> None:
    assert pod_requests(POD_LEVEL_SPEC, pod_level=True) == Resource(
        milli_cpu=1050,  # pod-level 1 replaces 300m, then the overhead
        memory=1 << 30,  # not set at the pod level: the containers' sum
        ephemeral_storage=1 << 30,  # not a supported pod-level resource
        scalar={"hugepages-2Mi": 4 << 20},
    )
    # Without the gate the pod level is ignored (SkipPodLevelResources).
    assert pod_requests(POD_LEVEL_SPEC) == Resource(
        milli_cpu=350, memory=1 << 30, ephemeral_storage=1 << 30, scalar={"hugepages-2Mi": 2 << 20}
    )
    assert pod_level_requests(POD_LEVEL_SPEC) == {
        "cpu": Fraction(1),
        "hugepages-2Mi": Fraction(4 << 20),
    }
    assert pod_level_requests({"containers": [_c(cpu="1")]}) == {}


@pytest.mark.parametrize(
    ("spec", "scoring", "node_info"),
    [
        # A container with a cpu request, one without; memory only at the pod level.
        # Scoring (resource_allocation.go: calculatePodResourceRequest) gives every
        # container without cpu 100m; NodeInfo (types.go: PodInfo.CalculateResource,
        # getNonMissingContainerRequests) only when the pod's requests lack cpu altogether.
        (
            {
                "resources": {"requests": {"memory": "1Gi"}},
                "containers": [_c(cpu="300m"), {"name": "d"}],
            },
            (400, 1 << 30),
            (300, 1 << 30),
        ),
        # cpu at the pod level, no container requests: memory defaults either way.
        (
            {"resources": {"requests": {"cpu": "500m"}}, "containers": [{"name": "c"}]},
            (500, DEFAULT_MEMORY_REQUEST),
            (500, DEFAULT_MEMORY_REQUEST),
        ),
    ],
    ids=["cpu from one container", "cpu at the pod level"],
)
def test_pod_level_non_zero_requests(
    spec: dict[str, Any], scoring: tuple[int, int], node_info: tuple[int, int]
) -> None:
    assert pod_non_zero_requests(spec, pod_level=True) == scoring
    assert pod_non_zero_requests(spec, pod_level=True, missing_only=True) == node_info
