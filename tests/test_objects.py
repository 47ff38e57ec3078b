"""Tests for wasmsched.api.objects (Pod and Node views of manifests)."""

from __future__ import annotations

import copy
import datetime
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from wasmsched.api.objects import Node, ObjectError, Pod
from wasmsched.api.resources import DEFAULT_MEMORY_REQUEST, Resource
from wasmsched.api.selectors import PreferredSchedulingTerms, RequiredNodeAffinity
from wasmsched.api.taints import NO_EXECUTE, NO_SCHEDULE, Taint, Toleration

REAL = Path(__file__).resolve().parent / "fixtures" / "real"
MI = 2**20


def pod_manifest(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "prod", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec},
    }


def full_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "prod",
            "uid": "1234",
            "labels": {"app": "web"},
            "annotations": {"note": "x"},
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "ownerReferences": [{"kind": "ReplicaSet", "name": "web"}],
        },
        "spec": {
            "schedulerName": "my-scheduler",
            "priority": 1000,
            "priorityClassName": "high",
            "nodeSelector": {"zone": "a"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                                ]
                            }
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 7,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "disk", "operator": "In", "values": ["ssd"]}
                                ]
                            },
                        }
                    ],
                }
            },
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
            ],
            "schedulingGates": [{"name": "wait"}, {"name": "quota"}],
            "initContainers": [
                {
                    "name": "proxy",
                    "image": "envoy",
                    "restartPolicy": "Always",
                    "ports": [{"containerPort": 15000, "hostPort": 15000}],
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                },
                {
                    "name": "init",
                    "image": "busybox",
                    "ports": [{"containerPort": 1, "hostPort": 1}],
                    "resources": {"requests": {"cpu": "2"}},
                },
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.25",
                    "ports": [
                        {"containerPort": 80, "hostPort": 8080},
                        {
                            "containerPort": 53,
                            "hostPort": 53,
                            "protocol": "UDP",
                            "hostIP": "10.0.0.1",
                        },
                        {"containerPort": 9090},
                    ],
                    "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}},
                },
                {"name": "side", "image": ""},
            ],
        },
        "status": {"phase": "Pending", "nominatedNodeName": "n2"},
    }


def test_pod_properties() -> None:
    m = full_pod()
    original = copy.deepcopy(m)
    pod = Pod(m)
    pod.validate()
    assert pod.manifest is m
    assert pod.name == "web-1"
    assert pod.namespace == "prod"
    assert pod.uid == "1234"
    assert pod.key == "prod/web-1"
    assert pod.labels == {"app": "web"}
    assert pod.annotations == {"note": "x"}
    assert pod.creation_timestamp == "2024-01-01T00:00:00Z"
    assert pod.deletion_timestamp is None
    assert pod.owner_references == ({"kind": "ReplicaSet", "name": "web"},)
    assert pod.node_name == ""
    assert pod.scheduler_name == "my-scheduler"
    assert pod.priority == 1000
    assert pod.priority_class_name == "high"
    assert pod.nominated_node_name == "n2"
    assert pod.phase == "Pending"
    assert not pod.is_terminal
    # containers: 500m + 1Gi (from the limit) + the 100m/64Mi sidecar; the 2-CPU init
    # container runs beside the sidecar: max(600m, 2100m).
    assert pod.requests == Resource(milli_cpu=2100, memory=2**30 + 64 * MI)
    # non-zero: app 500m/1Gi, "side" gets 100m/200Mi, sidecar 100m/64Mi; init 2 + sidecar.
    assert pod.non_zero_requests == (2100, 2**30 + DEFAULT_MEMORY_REQUEST + 64 * MI)
    assert pod.tolerations == (Toleration("dedicated", "Equal", "web", NO_SCHEDULE),)
    assert pod.node_selector == {"zone": "a"}
    assert isinstance(pod.required_node_affinity, RequiredNodeAffinity)
    assert pod.required_node_affinity.node_names == frozenset({"n1"})
    assert pod.required_node_affinity.matches({"zone": "a"}, "n1")
    assert not pod.required_node_affinity.matches({"zone": "b"}, "n1")
    assert isinstance(pod.preferred_node_affinity, PreferredSchedulingTerms)
    assert pod.preferred_node_affinity.score({"disk": "ssd"}, "n1") == 7
    assert pod.scheduling_gates == ("wait", "quota")
    assert pod.host_ports == (
        ("0.0.0.0", "TCP", 15000),
        ("0.0.0.0", "TCP", 8080),
        ("10.0.0.1", "UDP", 53),
    )
    assert pod.images == ("nginx:1.25", "envoy", "busybox")
    assert pod.spec is m["spec"]
    assert m == original  # parsing never touches the manifest


def test_pod_defaults() -> None:
    pod = Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    pod.validate()
    assert pod.namespace == "default"
    assert pod.scheduler_name == "default-scheduler"
    assert pod.priority == 0
    assert pod.node_name == ""
    assert pod.nominated_node_name == ""
    assert pod.labels == {}
    assert pod.tolerations == ()
    assert pod.node_selector == {}
    assert pod.required_node_affinity.is_empty
    assert pod.required_node_affinity.node_names is None
    assert pod.scheduling_gates == ()
    assert pod.host_ports == ()
    assert pod.requests == Resource()
    assert pod.non_zero_requests == (100, DEFAULT_MEMORY_REQUEST)
    assert pod.creation_timestamp is None


def test_pod_uid_is_derived_deterministically() -> None:
    a = Pod({"metadata": {"name": "p", "namespace": "ns"}})
    b = Pod({"metadata": {"name": "p", "namespace": "ns"}})
    c = Pod({"metadata": {"name": "p", "namespace": "other"}})
    assert a.uid == b.uid != c.uid
    assert uuid.UUID(a.uid).version == 5
    assert Pod({"metadata": {"name": "p", "namespace": "ns"}}).with_node_name("n").uid == a.uid


@pytest.mark.parametrize(
    ("phase", "terminal"),
    [("Succeeded", True), ("Failed", True), ("Running", False), (None, False)],
)
def test_pod_is_terminal(phase: str | None, terminal: bool) -> None:
    assert Pod({"metadata": {"name": "p"}, "status": {"phase": phase}}).is_terminal is terminal


def test_host_network_ports_default_to_container_ports() -> None:
    pod = Pod(
        pod_manifest(
            hostNetwork=True,
            containers=[
                {
                    "name": "c",
                    "ports": [{"containerPort": 8081}, {"containerPort": 53, "protocol": "UDP"}],
                }
            ],
            initContainers=[
                {"name": "s", "restartPolicy": "Always", "ports": [{"containerPort": 9000}]}
            ],
        )
    )
    assert pod.host_ports == (
        ("0.0.0.0", "TCP", 9000),
        ("0.0.0.0", "TCP", 8081),
        ("0.0.0.0", "UDP", 53),
    )


def test_timestamps_from_a_resolving_yaml_loader_become_text() -> None:
    m = yaml.safe_load("metadata:\n  name: p\n  creationTimestamp: 2023-05-20T00:46:28Z\n")
    assert isinstance(m["metadata"]["creationTimestamp"], datetime.datetime)
    assert Pod(m).creation_timestamp == "2023-05-20T00:46:28Z"


def test_with_node_name_returns_a_new_pod_and_keeps_parsed_values() -> None:
    m = full_pod()
    pod = Pod(m)
    requests = pod.requests
    affinity = pod.required_node_affinity
    bound = pod.with_node_name("n1")
    assert bound is not pod
    assert bound.node_name == "n1"
    assert pod.node_name == ""
    assert "nodeName" not in m["spec"]
    assert bound.manifest["spec"]["nodeName"] == "n1"
    assert bound.manifest is not m
    assert bound.requests is requests  # carried over, not recomputed
    assert bound.required_node_affinity is affinity
    assert bound.key == pod.key and bound.uid == pod.uid
    assert bound.spec is not pod.spec
    rebound = bound.with_node_name("n2")
    assert (rebound.node_name, bound.node_name) == ("n2", "n1")


def test_with_nominated_node_name_and_status_condition() -> None:
    m = full_pod()
    pod = Pod(m)
    assert pod.nominated_node_name == "n2"
    nominated = pod.with_nominated_node_name("n3")
    assert nominated.nominated_node_name == "n3"
    assert pod.nominated_node_name == "n2"
    assert m["status"]["nominatedNodeName"] == "n2"
    assert nominated.with_nominated_node_name("").nominated_node_name == ""
    cond = pod.with_status_condition("PodScheduled", "False", "Unschedulable", "0/3 nodes")
    cond2 = cond.with_status_condition("PodScheduled", "True")
    assert cond.status["conditions"] == [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes",
        }
    ]
    assert cond2.status["conditions"] == [{"type": "PodScheduled", "status": "True"}]
    assert "conditions" not in m["status"]
    done = pod.with_phase("Succeeded")
    assert done.is_terminal and not pod.is_terminal


@pytest.mark.parametrize(
    ("manifest", "attribute", "message"),
    [
        (
            pod_manifest(containers=[{"name": "c", "resources": {"requests": {"cpu": "12x"}}}]),
            "requests",
            'spec.containers[0].resources.requests.cpu: invalid quantity "12x"',
        ),
        (
            pod_manifest(initContainers=[{"name": "c", "resources": {"limits": {"memory": "1K"}}}]),
            "non_zero_requests",
            'spec.initContainers[0].resources.limits.memory: invalid quantity "1K": unknown suffix',
        ),
        (
            pod_manifest(tolerations=[{"key": "k", "operator": "Maybe"}]),
            "tolerations",
            'spec.tolerations[0].operator: unsupported operator "Maybe" (expected Equal or Exists)',
        ),
        (
            pod_manifest(nodeSelector={"zone": 1}),
            "node_selector",
            "spec.nodeSelector.zone: expected a string, got number: 1",
        ),
        (
            pod_manifest(
                affinity={
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 500, "preference": {}}
                        ]
                    }
                }
            ),
            "preferred_node_affinity",
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
            "weight must be in the range 1-100: 500",
        ),
        (
            pod_manifest(priority="high"),
            "priority",
            'spec.priority: expected an integer, got string: "high"',
        ),
        (
            pod_manifest(containers=[{"name": "c", "ports": [{"hostPort": "80"}]}]),
            "host_ports",
            'spec.containers[0].ports[0].hostPort: expected an integer, got string: "80"',
        ),
        (
            pod_manifest(schedulingGates=["g"]),
            "scheduling_gates",
            'spec.schedulingGates[0]: expected a mapping, got string: "g"',
        ),
        (
            {"metadata": {"name": "p", "labels": {"v": 1}}},
            "labels",
            "metadata.labels.v: expected a string, got number: 1",
        ),
        ({"metadata": {}}, "name", "metadata.name: required field is missing"),
        ({"metadata": []}, "name", "metadata: expected a mapping, got list: []"),
        (
            {"metadata": {"name": "p"}, "spec": "x"},
            "node_name",
            'spec: expected a mapping, got string: "x"',
        ),
    ],
)
def test_pod_errors_name_the_field(manifest: dict[str, Any], attribute: str, message: str) -> None:
    pod = Pod(manifest)
    with pytest.raises(ObjectError) as info:
        getattr(pod, attribute)
    assert str(info.value) == message
    with pytest.raises(ObjectError) as info:
        pod.validate()
    assert str(info.value) == message


def test_pod_constructor_checks_the_manifest() -> None:
    with pytest.raises(ObjectError, match=r"^Pod manifest must be a mapping, got list$"):
        Pod([])  # type: ignore[arg-type]
    with pytest.raises(ObjectError, match=r'^kind: expected kind Pod, got "Node"$'):
        Pod({"kind": "Node"})
    assert repr(Pod({"metadata": {"name": "p"}})) == "Pod(default/p)"


def node_manifest(**status: Any) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "spec": {
            "unschedulable": True,
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        },
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "nvidia.com/gpu": "2"},
            "images": [{"names": ["nginx:1.25", "nginx@sha256:abc"], "sizeBytes": 1000}],
            "conditions": [{"type": "Ready", "status": "True"}],
            **status,
        },
    }


def test_node_properties() -> None:
    node = Node(node_manifest())
    node.validate()
    assert node.name == "n1"
    assert node.labels == {"zone": "a"}
    assert node.unschedulable
    assert node.taints == (Taint("dedicated", "gpu", NO_SCHEDULE),)
    assert node.allocatable == Resource(
        milli_cpu=4000, memory=8 * 2**30, allowed_pod_number=110, scalar={"nvidia.com/gpu": 2}
    )
    assert node.images == ((("nginx:1.25", "nginx@sha256:abc"), 1000),)
    assert node.conditions == ({"type": "Ready", "status": "True"},)
    assert node.condition_status("Ready") == "True"
    assert node.condition_status("DiskPressure") is None
    assert uuid.UUID(node.uid).version == 5
    assert Node({"metadata": {"name": "n1"}}).uid == node.uid
    assert Node({"metadata": {"name": "n2"}}).uid != node.uid
    assert repr(node) == "Node(n1)"


def test_node_defaults() -> None:
    node = Node({"metadata": {"name": "bare"}})
    node.validate()
    assert not node.unschedulable
    assert node.taints == ()
    assert node.allocatable == Resource()
    assert node.images == ()
    assert node.conditions == ()


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (
            node_manifest(allocatable={"cpu": "four"}),
            'status.allocatable.cpu: invalid quantity "four"',
        ),
        (
            {"metadata": {"name": "n"}, "spec": {"taints": [{"key": "k", "effect": "Never"}]}},
            'spec.taints[0].effect: unsupported effect "Never" (expected one of NoSchedule, '
            "PreferNoSchedule, NoExecute)",
        ),
        (
            {"metadata": {"name": "n"}, "spec": {"unschedulable": "yes"}},
            'spec.unschedulable: expected a boolean, got string: "yes"',
        ),
        (
            node_manifest(images=[{"names": "nginx", "sizeBytes": 1}]),
            'status.images[0].names: expected a list, got string: "nginx"',
        ),
    ],
)
def test_node_errors_name_the_field(manifest: dict[str, Any], message: str) -> None:
    with pytest.raises(ObjectError) as info:
        Node(manifest).validate()
    assert str(info.value) == message


def load_real(name: str) -> dict[str, Any]:
    data = yaml.safe_load((REAL / name).read_text())
    assert isinstance(data, dict)
    return data


def test_real_pod_fixture() -> None:
    pod = Pod(load_real("pod.yaml"))
    pod.validate()
    assert pod.key == "sanposhiho-pr-rc-lab/hoge-custom-controller-d87b6785d-c8bqf"
    assert pod.uid == "3ba2f153-7785-4c13-9d2d-d1661572f930"
    # container 1 CPU / 2G; the regular init container (100m / 8M) is smaller.
    assert pod.requests == Resource(milli_cpu=1000, memory=2 * 10**9)
    assert pod.non_zero_requests == (1000, 2 * 10**9)
    assert pod.tolerations == (
        Toleration("node.kubernetes.io/not-ready", "Exists", "", NO_EXECUTE, 300),
        Toleration("node.kubernetes.io/unreachable", "Exists", "", NO_EXECUTE, 300),
    )
    assert pod.images == (
        "gcr.io/sanposhiho-hogehoge/hoge-custom-controller:latest",
        "curlimages/curl:7.78.0",
    )
    assert pod.host_ports == ()
    assert pod.node_name == ""
    assert pod.priority == 0
    assert pod.phase == "Running"
    assert pod.owner_references[0]["kind"] == "ReplicaSet"


def test_real_node_fixture() -> None:
    node = Node(load_real("node.yaml"))
    node.validate()
    assert node.name == "gke-sanposhiho-default-pool-1d5a4320-eklb"
    assert node.uid == "859128e9-4a10-404b-a3c0-58dd11a97d6f"
    assert node.allocatable == Resource(
        milli_cpu=940,
        memory=2880020 * 1024,
        ephemeral_storage=17060071478,
        allowed_pod_number=110,
        scalar={"attachable-volumes-gce-pd": 15},
    )
    assert node.allocatable.scalar == {
        "attachable-volumes-gce-pd": 15,
        "hugepages-1Gi": 0,
        "hugepages-2Mi": 0,
    }
    assert node.taints == ()
    assert not node.unschedulable
    assert node.images == (
        (("k8s.gcr.io/kube-proxy-amd64:v1.24.11-gke.1000",), 114493979),
        (("test-image:v1",), 114493979),
    )
    assert node.condition_status("Ready") == "True"
    assert node.labels["topology.kubernetes.io/zone"] == "asia-northeast1-b"
