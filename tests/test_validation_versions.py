"""Validation per Kubernetes release: each release's schema, the fields that only some
releases have, and reading a version as users write it."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_validation import NODE, POD, changed
from wasmsched.api.manifests import ManifestError, load_manifests
from wasmsched.api.validation import validate_object
from wasmsched.api.validation.schema import SCHEMA_KINDS, SERVED_FROM
from wasmsched.api.validation.schema_versions import FIELD_VERSIONS, MODULES, VERSIONS
from wasmsched.release.version import (
    SUPPORTED_VERSIONS,
    KubernetesVersion,
    VersionError,
    parse_kubernetes_version,
    requested_kubernetes_version,
)

V = {str(v): v for v in SUPPORTED_VERSIONS}
ACCEPTED = None

# (kind, field path, value, release, the problem at that release or ACCEPTED)
CASES: list[tuple[str, str, Any, str, str | None]] = [
    # NodeDeclaredFeatures: every current kubelet reports it (alpha 1.35, GA 1.37).
    (
        "Node",
        "status.declaredFeatures",
        ["InPlacePodVerticalScaling"],
        "1.33",
        'status.declaredFeatures: unknown field "declaredFeatures" (not in the Kubernetes '
        "1.33 schema; Kubernetes 1.35 and later have it: --kubernetes-version 1.37)",
    ),
    ("Node", "status.declaredFeatures", ["X"], "1.34", "Kubernetes 1.35 and later have it"),
    ("Node", "status.declaredFeatures", ["X"], "1.35", ACCEPTED),
    ("Node", "status.declaredFeatures", ["X"], "1.37", ACCEPTED),
    ("Node", "status.declaredFeatures", "X", "1.37", "expected a list, got string"),
    ("Pod", "spec.hostnameOverride", "web-0", "1.33", "Kubernetes 1.34 and later have it"),
    ("Pod", "spec.hostnameOverride", "web-0", "1.34", ACCEPTED),
    # A field only one release had: 1.35's workload reference, replaced in 1.36.
    ("Pod", "spec.workloadRef", {"name": "w", "podGroup": "g"}, "1.34", "Kubernetes 1.35 has it"),
    ("Pod", "spec.workloadRef", {"name": "w", "podGroup": "g"}, "1.35", ACCEPTED),
    ("Pod", "spec.workloadRef", {"name": "w", "podGroup": "g"}, "1.36", "Kubernetes 1.35 has it"),
    ("Pod", "spec.schedulingGroup", {"podGroupName": "g"}, "1.35", "1.36 and later have it"),
    ("Pod", "spec.schedulingGroup", {"podGroupName": "g"}, "1.37", ACCEPTED),
    (
        "Pod",
        "spec.schedulingGroup",
        {"podGroupName": 3},
        "1.37",
        "expected a string, got number: 3",
    ),
    # Fields every release has, and typos, read the same at every release.
    ("Pod", "spec.priority", 5, "1.33", ACCEPTED),
    ("Pod", "spec.hostnameOveride", "x", "1.37", '(did you mean "hostnameOverride"?)'),
    ("Pod", "spec.bogus", 1, "1.36", 'unknown field "bogus" (not in the Kubernetes 1.36 schema)'),
]


@pytest.mark.parametrize(("kind", "path", "value", "release", "expected"), CASES)
def test_fields_per_release(
    kind: str, path: str, value: Any, release: str, expected: str | None
) -> None:
    base = {"Pod": POD, "Node": NODE}[kind]
    found = [str(p) for p in validate_object(kind, changed(base, path, value), V[release])]
    if expected is ACCEPTED:
        assert found == []
    else:
        assert any(expected in p for p in found), found


def test_every_release_refuses_unknown_fields_of_every_kind() -> None:
    for version in SUPPORTED_VERSIONS:
        for kind, (api_version, _, _) in SCHEMA_KINDS.items():
            found = [
                str(p)
                for p in validate_object(
                    kind, {"apiVersion": api_version, "kind": kind, "bogus": 1}, version
                )
            ]
            expected = f'bogus: unknown field "bogus" (not in the Kubernetes {version} schema)'
            first = SERVED_FROM.get(kind)
            if first is not None and str(version) < first:
                # Not served at that release (DRA's v1 kinds): nothing else is said of it.
                expected = f"apiVersion: {kind} ({api_version}) is not served by Kubernetes "
                expected += f"{version} (Kubernetes {first} and later serve it)"
            assert expected in found, (version, kind, found)


def test_loader_reads_the_chosen_release(tmp_path: Path) -> None:
    node = changed(NODE, "status.declaredFeatures", ["InPlacePodVerticalScaling"])
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(node))
    with pytest.raises(ManifestError) as info:
        load_manifests(path, kubernetes_version=V["1.33"])
    assert str(info.value) == (
        f"{path}: Node node-1: status.declaredFeatures: unknown field "
        '"declaredFeatures" (not in the Kubernetes 1.33 schema; Kubernetes 1.35 and later '
        "have it: --kubernetes-version 1.37)"
    )
    loaded = load_manifests(path, kubernetes_version=V["1.37"])
    assert [n.name for n in loaded.nodes] == ["node-1"]


def test_the_table_matches_the_pinned_models() -> None:
    """FIELD_VERSIONS was generated for the lightkube-models release that is installed:
    every field it lists for the newest release is on that release's model class, and
    every field it lists without it is not (scripts/gen_schema_versions.py rewrites it)."""
    assert tuple(str(v) for v in SUPPORTED_VERSIONS) == VERSIONS
    newest = VERSIONS[-1]
    modules_used = {module for _, module, _ in SCHEMA_KINDS.values()}
    assert modules_used <= set(MODULES)
    for qualified, fields in FIELD_VERSIONS.items():
        module, _, name = qualified.partition(".")
        cls = getattr(importlib.import_module(f"lightkube.models.{module}"), name, None)
        annotations = getattr(cls, "__annotations__", {}) if cls is not None else {}
        for field, having in fields.items():
            assert (field in annotations) == (newest in having), (qualified, field, having)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.37", (1, 37)),
        ("v1.33", (1, 33)),
        ("1.36.4", (1, 36)),
        ("v1.37.2", (1, 37)),
        ("v1.35.1-eks-4b1c3a", (1, 35)),
        ("v1.34.3+k3s1", (1, 34)),
        (" 1.34 ", (1, 34)),
    ],
)
def test_parse_kubernetes_version(text: str, expected: tuple[int, int]) -> None:
    assert parse_kubernetes_version(text) == KubernetesVersion(*expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.32", "Kubernetes version '1.32' is not supported (supported: 1.33, 1.34, 1.35"),
        ("1.38.0", "Kubernetes version '1.38.0' is not supported"),
        ("2.0", "is not supported"),
        ("latest", "Kubernetes version 'latest' is not a version (expected MAJOR.MINOR"),
        ("1", "is not a version"),
        ("", "is not a version"),
        ("1.37.x", "is not a version"),
    ],
)
def test_parse_kubernetes_version_refuses(text: str, expected: str) -> None:
    with pytest.raises(VersionError) as info:
        parse_kubernetes_version(text)
    message = str(info.value)
    assert expected in message and "\n" not in message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),  # nothing asked: the caller takes the snapshot's release or the default
        ("v1.35.1", KubernetesVersion(1, 35)),
        (KubernetesVersion(1, 34), KubernetesVersion(1, 34)),
    ],
)
def test_requested_kubernetes_version(
    value: str | KubernetesVersion | None, expected: KubernetesVersion | None
) -> None:
    assert requested_kubernetes_version(value) == expected


def test_requested_kubernetes_version_refuses_what_is_not_modelled() -> None:
    with pytest.raises(VersionError, match=r"'1\.32' is not supported"):
        requested_kubernetes_version("1.32")


def snapshot_doc(server: Any) -> dict[str, Any]:
    return {"apiVersion": "wasmsched.io/v1", "kind": "Snapshot", "serverVersion": server}


@pytest.mark.parametrize(
    ("server", "explicit", "read_as", "warning"),
    [
        (None, None, "1.37", None),  # no Snapshot document: the default release
        ("v1.37.2", None, "1.37", None),
        ("v1.36.3-eks-4b1c3a", None, "1.36", None),
        ("v1.37.2", "1.35", "1.35", None),  # the caller's choice wins
        ("v1.38.1", None, "1.37", "the objects of this v1.38.1 server are read as 1.37's"),
        ("v1.30.0", None, "1.33", "the objects of this v1.30.0 server are read as 1.33's"),
    ],
)
def test_a_snapshot_names_the_release_its_objects_are_read_as(
    tmp_path: Path, server: str | None, explicit: str | None, read_as: str, warning: str | None
) -> None:
    docs: list[Any] = [] if server is None else [snapshot_doc(server)]
    docs.append(NODE)
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    loaded = load_manifests(path, kubernetes_version=None if explicit is None else V[explicit])
    assert str(loaded.kubernetes_version) == read_as
    assert loaded.server_version == server
    assert [w for w in loaded.warnings if "Snapshot" in w] == (
        []
        if warning is None
        else [
            f"{path}: document 1: Snapshot: serverVersion: wasmsched "
            f"models Kubernetes 1.33 to 1.37; {warning}"
        ]
    )


def test_a_snapshot_of_a_current_server_loads_its_nodes(tmp_path: Path) -> None:
    node = changed(NODE, "status.declaredFeatures", ["InPlacePodVerticalScaling"])
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([snapshot_doc("v1.37.2"), node]))
    assert [n.name for n in load_manifests(path).nodes] == ["node-1"]


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        ([snapshot_doc("banana")], 'serverVersion: "banana" is not a Kubernetes version'),
        ([snapshot_doc(137)], "serverVersion: expected a version string"),
        ([{**snapshot_doc("v1.37.2"), "extra": 1}], 'Snapshot: extra: unknown field "extra"'),
        (
            [snapshot_doc("v1.37.2"), snapshot_doc("v1.36.0")],
            'serverVersion: "v1.36.0" differs from "v1.37.2" of another Snapshot document',
        ),
    ],
)
def test_snapshot_problems(tmp_path: Path, docs: list[Any], expected: str) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([*docs, NODE]))
    with pytest.raises(ManifestError) as info:
        load_manifests(path)
    assert len(info.value.lines) == 1 and expected in info.value.lines[0], info.value.lines
