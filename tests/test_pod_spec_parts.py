"""A pod's containers and node affinity are parsed once per distinct content and shared by
the pods that carry it (api/pod_spec; issue 25, item 2): the pods of one template do not
each parse their requests and affinity again."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from sched_support import count_calls
from wasmsched.api import resources, selectors, taints
from wasmsched.api.objects import ObjectError, Pod
from wasmsched.api.pod_spec import PodContainers, PodNodeAffinity, PodTolerations


@pytest.fixture(autouse=True)
def _fresh_parts() -> Iterator[None]:
    for part in (PodContainers, PodNodeAffinity, PodTolerations):
        part.forget_all()
    yield
    for part in (PodContainers, PodNodeAffinity, PodTolerations):
        part.forget_all()


def _manifest(name: str, target: str = "node-1", **spec: Any) -> dict[str, Any]:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [target]}]}
    body = {
        "containers": [
            {
                "name": "c",
                "image": "img",
                "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080}],
            }
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        },
        **spec,
    }
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns"}, "spec": body}


def _decoded(manifest: dict[str, Any]) -> Pod:
    """The pod as an informer decodes it: its own objects, nothing shared with another."""
    return Pod(json.loads(json.dumps(manifest)))


def test_pods_of_one_template_parse_their_requests_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = count_calls(monkeypatch, resources, "_aggregate")
    pods = [_decoded(_manifest(f"p{i}")) for i in range(20)]
    got = {(p.requests.milli_cpu, p.requests.memory, p.non_zero_requests) for p in pods}
    assert got == {(100, 200 * 2**20, (100, 200 * 2**20))}
    # One aggregate for the requests and one for the non-zero requests, not 2 per pod.
    assert parsed[0] == 2
    assert all(p.requests is pods[0].requests for p in pods)
    assert {p.host_ports for p in pods} == {(("0.0.0.0", "TCP", 8080),)}


def test_pods_of_one_template_parse_their_node_affinity_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed = count_calls(monkeypatch, selectors.NodeSelector, "from_dict")
    pods = [_decoded(_manifest(f"p{i}")) for i in range(20)]
    assert {p.required_node_affinity.node_names for p in pods} == {frozenset({"node-1"})}
    assert parsed[0] == 1


def test_pods_of_one_template_parse_their_tolerations_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed = count_calls(monkeypatch, taints.Toleration, "from_dict")
    toleration = {"key": "k", "operator": "Exists", "effect": "NoSchedule"}
    pods = [_decoded(_manifest(f"p{i}", tolerations=[toleration])) for i in range(20)]
    assert {p.tolerations for p in pods} == {(taints.Toleration("k", "Exists", "", "NoSchedule"),)}
    assert parsed[0] == 1


def test_a_daemonsets_pods_share_their_containers_not_their_pins() -> None:
    # The DaemonSet controller pins each pod to its node: the affinity differs, the
    # containers do not.
    a, b = _decoded(_manifest("a", "node-1")), _decoded(_manifest("b", "node-2"))
    assert a.requests is b.requests
    assert a.required_node_affinity.node_names == frozenset({"node-1"})
    assert b.required_node_affinity.node_names == frozenset({"node-2"})


@pytest.mark.parametrize(
    "change",
    [
        # Equal under ==, but not the same JSON: never taken for one another.
        lambda s: s["containers"][0]["ports"][0].update(hostPort=8080.0),
        lambda s: s.update(hostNetwork=1),
        lambda s: s["containers"][0]["resources"]["requests"].update(cpu="0.1"),
        lambda s: s["containers"][0].update(ports=({"containerPort": 80, "hostPort": 8080},)),
    ],
)
def test_only_equal_content_of_the_same_types_is_shared(change: Any) -> None:
    manifest = _manifest("b")
    change(manifest["spec"])
    a, b = _decoded(_manifest("a")), Pod(manifest)
    assert a.requests is not b.requests or a.host_ports is not b.host_ports
    fresh = Pod(copy.deepcopy(manifest))
    PodContainers.forget_all()
    alone = Pod(copy.deepcopy(manifest))
    for field in ("requests", "non_zero_requests", "host_ports", "host_network"):
        try:
            want: Any = repr(getattr(alone, field))
        except ObjectError as err:
            want = str(err)
        try:
            got: Any = repr(getattr(fresh, field))
        except ObjectError as err:
            got = str(err)
        assert got == want, field


def test_a_bad_part_raises_for_every_pod_that_has_it() -> None:
    manifest = _manifest("a")
    manifest["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "12x"
    for name in ("a", "b"):
        with pytest.raises(ObjectError) as err:
            _ = Pod(copy.deepcopy(manifest) | {"metadata": {"name": name}}).requests
        assert str(err.value) == (
            'spec.containers[0].resources.requests.cpu: invalid quantity "12x"'
        )


def test_a_part_reads_only_its_own_fields() -> None:
    # Fields outside the part (priority here) cannot leak into what the part computes.
    part = PodContainers.of(_manifest("a", priority=5)["spec"])
    assert set(part.spec) == {"containers"}


def _served(name: str, volume: str, **spec: Any) -> dict[str, Any]:
    """A pod of the template as the API server stores it: admission gives each pod its own
    service-account token volume, mounted in every container, and defaults fields the
    containers' part does not read."""
    manifest = _manifest(name, **spec)
    for c in manifest["spec"]["containers"]:
        c["volumeMounts"] = [
            {"name": volume, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io"}
        ]
        c["terminationMessagePath"] = "/dev/termination-log"
        c["env"] = [{"name": "POD", "value": name}]
    manifest["spec"]["volumes"] = [{"name": volume, "projected": {"sources": []}}]
    return manifest


def test_pods_with_their_own_token_volumes_share_their_containers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed = count_calls(monkeypatch, resources, "_aggregate")
    pods = [_decoded(_served(f"p{i}", f"kube-api-access-{i:05d}")) for i in range(20)]
    assert all(p.containers_part is pods[0].containers_part for p in pods)
    assert {(p.requests.milli_cpu, p.host_ports) for p in pods} == {
        (100, (("0.0.0.0", "TCP", 8080),))
    }
    assert parsed[0] == 1
    assert not any(p.uses_bind_mount_options for p in pods)


_CONTAINER_VALUES: list[Any] = [
    None,
    "x",
    3,
    [],
    {},
    [{"hostPort": 81, "containerPort": 80, "protocol": "UDP"}],
    [{"bindMountOptions": ["rbind"], "name": "v"}],
    [{"name": "v", "bindMountOptions": None}],
    ["not-a-mount"],
    {"requests": {"cpu": "250m"}, "limits": {"memory": "1Gi"}},
    {"requests": {"cpu": "12x"}},
    [{"action": "RestartAllContainers"}],
    "Always",
]
_CONTAINER_KEYS = [
    "image",
    "ports",
    "resources",
    "restartPolicy",
    "restartPolicyRules",
    "volumeMounts",
    "env",
    "name",
    "securityContext",
]


@pytest.mark.parametrize("seed", range(40))
def test_a_part_of_the_read_fields_parses_as_the_whole_containers(seed: int) -> None:
    # Every property of the part, value or error, is the same whether the containers are
    # cut to the fields the part reads (the shared part) or parsed whole.
    rng = random.Random(seed)

    def container() -> Any:
        if rng.random() < 0.05:
            return rng.choice(["c", 1, None])
        return {k: rng.choice(_CONTAINER_VALUES) for k in _CONTAINER_KEYS if rng.random() < 0.6}

    spec: dict[str, Any] = {
        field: [container() for _ in range(rng.randint(0, 2))]
        for field in ("containers", "initContainers", "ephemeralContainers")
        if rng.random() < 0.8
    }
    if rng.random() < 0.3:
        spec["hostNetwork"] = rng.choice([True, False, "yes"])
    cut = PodContainers.of(spec)
    whole = PodContainers(spec)  # the spec holds only the part's fields, containers whole
    assert cut is not whole
    for prop in (
        "requests",
        "non_zero_requests",
        "has_pod_level_requests",
        "pod_level_requests",
        "host_ports",
        "container_host_ports",
        "host_network",
        "host_users",
        "restart_rule_actions",
        "uses_bind_mount_options",
        "images",
    ):
        outcomes = []
        for part in (cut, whole):
            try:
                outcomes.append(repr(getattr(part, prop)))
            except Exception as err:
                outcomes.append(f"{type(err).__name__}: {err}")
        assert outcomes[0] == outcomes[1], prop
