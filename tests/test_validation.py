"""Tests for wasmsched.api.validation: strict schema and the API server's rules, through
the loader and through ``wasmsched simulate``."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from wasmsched.api.manifests import MAX_ERRORS, ManifestError, load_manifests
from wasmsched.api.validation import SCHEMA_KINDS, validate_object
from wasmsched.api.validation.schema import SERVED_FROM
from wasmsched.cli import app
from wasmsched.release.version import (
    SUPPORTED_VERSIONS,
    KubernetesVersion,
    parse_kubernetes_version,
)

runner = CliRunner()

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}},
            }
        ]
    },
}
NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "api", "namespace": "shop"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "api"}},
        "template": {
            "metadata": {"labels": {"app": "api"}},
            "spec": {"containers": [{"name": "app", "image": "api:1"}]},
        },
    },
}


def changed(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with the dotted ``path`` (list indexes as numbers) set."""
    out = copy.deepcopy(base)
    parts = path.split(".")
    cur: Any = out
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, {})
    last = parts[-1]
    if isinstance(cur, list):
        cur[int(last)] = value
    elif value is _DELETE:
        del cur[last]
    else:
        cur[last] = value
    return out


_DELETE = object()


def problems(kind: str, manifest: dict[str, Any]) -> list[str]:
    # The cases here are the 1.33 schema's (tests/test_validation_versions.py: the others).
    return [str(p) for p in validate_object(kind, manifest, KubernetesVersion(1, 33))]


def test_valid_objects_have_no_problems() -> None:
    assert problems("Pod", POD) == []
    assert problems("Node", NODE) == []
    assert problems("Deployment", DEPLOYMENT) == []


@pytest.mark.parametrize(
    ("kind", "path", "value", "expected"),
    [
        # Item 2: negative quantities (ValidateResourceRequirements, ValidateNode).
        (
            "Pod",
            "spec.containers.0.resources.requests.cpu",
            "-1",
            'spec.containers[0].resources.requests.cpu: Invalid value: "-1": must be greater '
            "than or equal to 0",
        ),
        (
            "Pod",
            "spec.containers.0.resources.limits",
            {"memory": -5},
            "spec.containers[0].resources.limits.memory: Invalid value: -5: must be greater "
            "than or equal to 0",
        ),
        (
            "Node",
            "status.allocatable.cpu",
            "-4",
            'status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0',
        ),
        (
            "Node",
            "status.capacity",
            {"memory": "-1Gi"},
            'status.capacity.memory: Invalid value: "-1Gi": must be greater than or equal to 0',
        ),
        (
            "Pod",
            "spec.overhead",
            {"cpu": "-100m"},
            'spec.overhead.cpu: Invalid value: "-100m": must be greater than or equal to 0',
        ),
        # Strict schema: unknown fields and wrong types, from the 1.33 models.
        (
            "Pod",
            "spec.nodeSelectr",
            {"zone": "a"},
            'spec.nodeSelectr: unknown field "nodeSelectr" (did you mean "nodeSelector"?)',
        ),
        ("Pod", "spek", {}, 'spek: unknown field "spek" (did you mean "spec"?)'),
        (
            "Pod",
            "spec.containers.0.resources.request",
            {},
            'spec.containers[0].resources.request: unknown field "request" (did you mean '
            '"requests"?)',
        ),
        ("Pod", "spec.priority", "high", 'spec.priority: expected an integer, got string: "high"'),
        (
            "Pod",
            "spec.containers.0.ports",
            [{"containerPort": "80"}],
            'spec.containers[0].ports[0].containerPort: expected an integer, got string: "80"',
        ),
        (
            "Pod",
            "spec.hostNetwork",
            "yes",
            'spec.hostNetwork: expected a boolean, got string: "yes"',
        ),
        ("Pod", "spec.tolerations", {"key": "a"}, "spec.tolerations: expected a list, got mapping"),
        (
            "Pod",
            "spec.containers.0.resources.requests.cpu",
            True,
            "spec.containers[0].resources.requests.cpu: invalid quantity true",
        ),
        (
            "Pod",
            "apiVersion",
            "v2",
            'apiVersion: Pod is served as "v1" by Kubernetes 1.33, not "v2"',
        ),
        # Required fields.
        ("Pod", "spec.containers", [], "spec.containers: Required value"),
        ("Pod", "spec.containers.0", {"image": "x"}, "spec.containers[0].name: Required value"),
        ("Pod", "spec.containers.0", {"name": "c"}, "spec.containers[0].image: Required value"),
        (
            "Pod",
            "spec.topologySpreadConstraints",
            [{"maxSkew": 1, "topologyKey": "zone"}],
            "spec.topologySpreadConstraints[0].whenUnsatisfiable: Required value",
        ),
        # DNS-1123 names.
        (
            "Pod",
            "metadata.name",
            "Web_1",
            'metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain',
        ),
        ("Node", "metadata.name", "node_1", 'metadata.name: Invalid value: "node_1": a lowercase'),
        (
            "Pod",
            "spec.containers.0.name",
            "my.app",
            'spec.containers[0].name: Invalid value: "my.app": a lowercase RFC 1123 label',
        ),
        ("Pod", "metadata.namespace", "Shop", 'metadata.namespace: Invalid value: "Shop"'),
        # int32 ranges.
        (
            "Pod",
            "spec.priority",
            2**31,
            "spec.priority: Invalid value: 2147483648: must be between -2147483648 and "
            "2147483647, inclusive",
        ),
        # Enums.
        (
            "Pod",
            "spec.topologySpreadConstraints",
            [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}],
            'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes"'
            ': supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        (
            "Pod",
            "spec.affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "z", "operator": "Is", "values": ["a"]}]}
                        ]
                    }
                }
            },
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            '.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Is"',
        ),
        (
            "Pod",
            "spec.tolerations",
            [{"key": "k", "operator": "Matches", "value": "v"}],
            'spec.tolerations[0].operator: Unsupported value: "Matches": supported values: '
            '"Equal", "Exists"',
        ),
        (
            "Pod",
            "spec.tolerations",
            [{"key": "k", "effect": "NoRun"}],
            'spec.tolerations[0].effect: Unsupported value: "NoRun"',
        ),
        (
            "Node",
            "spec",
            {"taints": [{"key": "k", "effect": "Never"}]},
            'spec.taints[0].effect: Unsupported value: "Never": supported values: '
            '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        ),
        (
            "Node",
            "spec",
            {"taints": [{"key": "k"}]},
            "spec.taints[0].effect: Required value",
        ),
        (
            "Pod",
            "spec.affinity",
            {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "zone",
                            "labelSelector": {
                                "matchExpressions": [{"key": "app", "operator": "Has"}]
                            },
                        }
                    ]
                }
            },
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            '.labelSelector.matchExpressions[0].operator: Unsupported value: "Has"',
        ),
        # maxSkew >= 1.
        (
            "Pod",
            "spec.topologySpreadConstraints",
            [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater "
            "than zero",
        ),
        # limits >= requests; extended resources must request their limit.
        (
            "Pod",
            "spec.containers.0.resources",
            {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            'spec.containers[0].resources.requests.cpu: Invalid value: "2": must be less than '
            'or equal to cpu limit of "1"',
        ),
        (
            "Pod",
            "spec.containers.0.resources",
            {"requests": {"example.com/gpu": 1}, "limits": {"example.com/gpu": 2}},
            "spec.containers[0].resources.requests.example.com/gpu: Invalid value: 1: must be "
            "equal to example.com/gpu limit of 2",
        ),
        # Workloads.
        (
            "Deployment",
            "spec.replicas",
            -1,
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "Deployment",
            "spec.template.metadata.labels",
            {"app": "other"},
            'spec.template.metadata.labels: Invalid value: {"app": "other"}: `selector` does '
            "not match template `labels`",
        ),
        (
            "Deployment",
            "spec.template.spec.containers.0",
            {"name": "app"},
            "spec.template.spec.containers[0].image: Required value",
        ),
        (
            "Deployment",
            "spec.template.spec.nodeSelectr",
            {},
            'spec.template.spec.nodeSelectr: unknown field "nodeSelectr"',
        ),
        (
            "Deployment",
            "spec.selector",
            _DELETE,
            "spec.selector: Required value",
        ),
    ],
)
def test_problems(kind: str, path: str, value: Any, expected: str) -> None:
    base = {"Pod": POD, "Node": NODE, "Deployment": DEPLOYMENT}[kind]
    found = problems(kind, changed(base, path, value))
    assert any(p.startswith(expected) for p in found), found


def test_every_schema_kind_has_a_model() -> None:
    """Every kind is checked against its model at every release that serves it (a kind
    added after 1.33, such as DRA's, from its first release); an earlier release refuses
    its apiVersion."""
    for kind, (api_version, _, _) in SCHEMA_KINDS.items():
        manifest = {"apiVersion": api_version, "kind": kind, "bogus": 1}
        first = parse_kubernetes_version(SERVED_FROM.get(kind, str(SUPPORTED_VERSIONS[0])))
        for version in SUPPORTED_VERSIONS:
            found = [str(p) for p in validate_object(kind, manifest, version)]
            if version < first:
                assert found == [
                    f"apiVersion: {kind} ({api_version}) is not served by Kubernetes "
                    f"{version} (Kubernetes {first} and later serve it)"
                ], (kind, version, found)
                continue
            unknown = f'bogus: unknown field "bogus" (not in the Kubernetes {version} schema)'
            assert unknown in found, (kind, version, found)


def test_several_problems_of_one_object_are_all_reported() -> None:
    pod = changed(POD, "spec.nodeSelectr", {})
    pod = changed(pod, "spec.priority", "x")
    pod = changed(pod, "spec.containers.0.nmae", "c")
    found = problems("Pod", pod)
    assert len(found) == 3, found


def test_null_fields_read_as_absent() -> None:
    assert problems("Pod", changed(POD, "spec.nodeSelector", None)) == []
    assert problems("Pod", changed(POD, "status", None)) == []


def test_quantities_may_be_numbers_and_integral_floats_are_integers() -> None:
    pod = changed(POD, "spec.containers.0.resources", {"requests": {"cpu": 0.5, "memory": 100}})
    pod = changed(pod, "spec.priority", 10.0)
    assert problems("Pod", pod) == []


# --- through the loader -----------------------------------------------------------------


def dump(*objects: dict[str, Any]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_loader_names_file_object_field_and_value(tmp_path: Path) -> None:
    bad_node = changed(NODE, "status.allocatable.cpu", "-4")
    bad_pod = changed(POD, "spec.containers.0.resources.requests.cpu", "-1")
    f = write(tmp_path / "c.yaml", dump(bad_node, bad_pod))
    with pytest.raises(ManifestError) as info:
        load_manifests(f)
    assert info.value.lines == [
        f'{f}: document 1: Node node-1: status.allocatable.cpu: Invalid value: "-4": must be '
        "greater than or equal to 0",
        f"{f}: document 2: Pod shop/web: spec.containers[0].resources.requests.cpu: Invalid "
        'value: "-1": must be greater than or equal to 0',
    ]


def test_loader_lists_errors_up_to_the_limit(tmp_path: Path) -> None:
    pods = [changed(POD, "metadata.name", f"p{i}") for i in range(MAX_ERRORS + 5)]
    pods = [changed(p, "spec.nodeSelectr", {}) for p in pods]
    f = write(tmp_path / "c.yaml", dump(NODE, *pods))
    with pytest.raises(ManifestError) as info:
        load_manifests(f)
    lines = info.value.lines
    assert len(lines) == MAX_ERRORS + 1
    assert lines[-1] == "... and 5 more"
    assert all("spec.nodeSelectr: unknown field" in line for line in lines[:-1])


def test_errors_of_several_files_are_collected(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "a: [1\n")
    write(tmp_path / "b.yaml", dump(changed(NODE, "spec", {"unschedulable": "no"})))
    with pytest.raises(ManifestError) as info:
        load_manifests(tmp_path)
    assert len(info.value.lines) == 2
    assert info.value.lines[0].startswith(f"{tmp_path / 'a.yaml'}: line")
    assert info.value.lines[1] == (
        f"{tmp_path / 'b.yaml'}: Node node-1: spec.unschedulable: expected a boolean, got "
        'string: "no"'
    )


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, "no manifest files (*.yaml, *.yml, *.json) in the directory"),
        ({"p.yaml": dump(POD)}, "no Node objects: a cluster needs at least one node"),
        ({"e.yaml": ""}, "no Node objects"),
    ],
)
def test_empty_input_is_an_error(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(ManifestError) as info:
        load_manifests(tmp_path)
    assert expected in str(info.value)


def test_stdin(tmp_path: Path) -> None:
    objs = load_manifests("-", stdin=io.StringIO(dump(NODE, POD)))
    assert [n.name for n in objs.nodes] == ["node-1"]
    assert [p.key for p in objs.pods] == ["shop/web"]
    with pytest.raises(ManifestError) as info:
        load_manifests("-", stdin=io.StringIO(dump(changed(NODE, "spek", 1))))
    assert info.value.lines[0].startswith('<stdin>: Node node-1: spek: unknown field "spek"')


def test_pod_on_a_missing_node_is_a_warning_and_the_pod_is_kept(tmp_path: Path) -> None:
    bound = changed(POD, "spec.nodeName", "node-9")
    f = write(tmp_path / "c.yaml", dump(NODE, bound))
    objs = load_manifests(f)
    assert [p.key for p in objs.pods] == ["shop/web"]
    assert objs.warnings == [
        f'{f}: document 2: Pod shop/web: spec.nodeName: node "node-9" is not in the cluster '
        "(the pod is kept, bound to it)"
    ]


def test_unknown_kinds_are_still_errors(tmp_path: Path) -> None:
    f = write(tmp_path / "c.yaml", dump(NODE, {"apiVersion": "v1", "kind": "Gadget"}))
    with pytest.raises(ManifestError) as info:
        load_manifests(f)
    assert 'document 2: unknown kind "Gadget"' in str(info.value)


# --- through the command line ------------------------------------------------------------


def simulate(tmp_path: Path, text: str, stdin: str | None = None) -> Any:
    cluster = "-" if stdin is not None else str(write(tmp_path / "c.yaml", text))
    return runner.invoke(app, ["simulate", "--cluster", cluster, "--output", "json"], input=stdin)


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        (
            [NODE, changed(POD, "spec.containers.0.resources.requests.cpu", "-1")],
            [
                'Pod shop/web: spec.containers[0].resources.requests.cpu: Invalid value: "-1": '
                "must be greater than or equal to 0"
            ],
        ),
        (
            [changed(NODE, "status.allocatable.cpu", "-4"), POD],
            ['Node node-1: status.allocatable.cpu: Invalid value: "-4"'],
        ),
        (
            [NODE, changed(changed(POD, "spec.nodeSelectr", {}), "spec.priority", 2**40)],
            ['Pod shop/web: spec.nodeSelectr: unknown field "nodeSelectr"'],
        ),
        (
            [
                changed(NODE, "spec", {"taints": [{"key": "a", "effect": "Nope"}]}),
                changed(POD, "spec.containers.0.name", "App"),
            ],
            [
                "Node node-1: spec.taints[0].effect: Unsupported value",
                'Pod shop/web: spec.containers[0].name: Invalid value: "App"',
            ],
        ),
        ([POD], ["no Node objects"]),
    ],
)
def test_cli_errors_one_line_each_exit_2(
    tmp_path: Path, objects: list[dict[str, Any]], expected: list[str]
) -> None:
    result = simulate(tmp_path, dump(*objects))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(expected), lines
    for line, want in zip(lines, expected, strict=True):
        assert line.startswith("wasmsched: error: ")
        assert want in line
    assert "Traceback" not in result.output


def test_cli_reads_stdin_and_warns_about_missing_nodes(tmp_path: Path) -> None:
    pending = changed(POD, "metadata.name", "pending")
    bound = changed(POD, "spec.nodeName", "node-9")
    result = simulate(tmp_path, "", stdin=dump(NODE, bound, pending))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # Every pod is reported: the one bound to the missing node as Running there.
    assert [(p["name"], p["node"], p["result"]) for p in data["pods"]] == [
        ("web", "node-9", "Running"),
        ("pending", "node-1", "Scheduled"),
    ]
    assert result.stderr.strip().splitlines() == [
        'wasmsched: warning: <stdin>: document 2: Pod shop/web: spec.nodeName: node "node-9" '
        "is not in the cluster (the pod is kept, bound to it)"
    ]


def test_cli_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["simulate", "--cluster", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"wasmsched: error: {tmp_path / 'empty'}: no manifest files (*.yaml, *.yml, *.json) "
        "in the directory"
    )
