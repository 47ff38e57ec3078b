"""Tests for wasmsched.api.manifests (loading YAML/JSON manifests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.manifests import ClusterObjects, ManifestError, load_manifests
from wasmsched.api.resources import Resource

REAL = Path(__file__).resolve().parent / "fixtures" / "real"

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: {name}
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  creationTimestamp: 2024-01-01T00:00:00Z
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.9
    resources:
      requests: {{cpu: {cpu}}}
"""


SPEC: dict[str, Any] = {"spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause"}]}}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_multi_document_file(tmp_path: Path) -> None:
    f = write(
        tmp_path / "cluster.yaml",
        "---\n"
        + NODE.format(name="n1")
        + "---\n"
        + POD.format(name="p1", cpu="500m")
        + "---\n"
        + "# only a comment\n"
        + "---\n"
        + "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n",
    )
    objs = load_manifests(f)
    assert isinstance(objs, ClusterObjects)
    assert [n.name for n in objs.nodes] == ["n1"]
    assert objs.nodes[0].allocatable == Resource(
        milli_cpu=4000, memory=8 * 2**30, allowed_pod_number=110
    )
    assert [p.key for p in objs.pods] == ["default/p1"]
    assert objs.pods[0].requests == Resource(milli_cpu=500)
    # Timestamps stay text, as Kubernetes' YAML decoding leaves them.
    assert objs.pods[0].manifest["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"
    assert objs.others == [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    ]


def test_lists_are_expanded(tmp_path: Path) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "a"}}
            | SPEC,
            {"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "p2"}} | SPEC]},
        ],
    }
    f = write(tmp_path / "list.json", json.dumps(doc))
    objs = load_manifests(f)
    assert [n.name for n in objs.nodes] == ["n1"]
    assert [p.key for p in objs.pods] == ["a/p1", "default/p2"]

    f2 = write(
        tmp_path / "typed.yaml",
        "kind: NodeList\napiVersion: v1\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n"
        "---\nkind: PersistentVolumeList\nitems:\n- metadata: {name: pv1}\n",
    )
    objs = load_manifests(f2)
    assert [n.name for n in objs.nodes] == ["a", "b"]
    assert objs.others == [{"metadata": {"name": "pv1"}, "kind": "PersistentVolume"}]
    empty = write(tmp_path / "empty.yaml", "kind: List\nitems: null\n")
    assert load_manifests(empty, require_nodes=False) == ClusterObjects()


def test_directory_is_read_recursively_in_sorted_order(tmp_path: Path) -> None:
    write(tmp_path / "b" / "pods.yml", POD.format(name="p2", cpu="1"))
    write(tmp_path / "a.yaml", NODE.format(name="n1") + "---\n" + POD.format(name="p1", cpu="1"))
    write(
        tmp_path / "c" / "d" / "nodes.json",
        json.dumps({"kind": "Node", "metadata": {"name": "n2"}}),
    )
    write(tmp_path / "README.md", "not a manifest: [")
    write(tmp_path / "notes.txt", "kind: Bogus")
    objs = load_manifests(str(tmp_path))
    assert [n.name for n in objs.nodes] == ["n1", "n2"]
    assert [p.name for p in objs.pods] == ["p1", "p2"]
    assert [n.name for n in load_manifests(tmp_path / "c").nodes] == ["n2"]


def errors_of(path: Path | str, **kwargs: Any) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load_manifests(path, **kwargs)
    assert str(info.value) == "\n".join(info.value.lines)
    return info.value.lines


def error_of(path: Path) -> str:
    lines = errors_of(path)
    assert len(lines) == 1, lines
    return lines[0]


def test_bad_quantity_names_file_document_field_and_value(tmp_path: Path) -> None:
    f = write(
        tmp_path / "cluster.yaml",
        NODE.format(name="n1")
        + "---\n"
        + NODE.format(name="n2")
        + "---\n"
        + POD.format(name="p1", cpu="12x"),
    )
    assert error_of(f) == (
        f"{f}: document 3: Pod default/p1: spec.containers[0].resources.requests.cpu: "
        'invalid quantity "12x"'
    )


def test_single_document_error_has_no_document_index(tmp_path: Path) -> None:
    f = write(tmp_path / "pod.yaml", POD.format(name="p1", cpu="1.2.3"))
    assert (
        error_of(f)
        == f'{f}: Pod default/p1: spec.containers[0].resources.requests.cpu: invalid quantity "1.2.3"'
    )


def test_error_inside_a_list_names_the_item(tmp_path: Path) -> None:
    doc = {
        "kind": "List",
        "items": [
            {"kind": "Node", "metadata": {"name": "n1"}},
            {
                "kind": "Node",
                "metadata": {"name": "n2"},
                "status": {"allocatable": {"memory": "lots"}},
            },
        ],
    }
    f = write(tmp_path / "nodes.json", json.dumps(doc))
    assert (
        error_of(f) == f'{f}: items[1]: Node n2: status.allocatable.memory: invalid quantity "lots"'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Pod\nmetadata:\n  name: p\n  labels: {a: b\n", "line 5, column 1: invalid YAML: "),
        ("a: b\n c: d\n", "line 2, column 3: invalid YAML: mapping values are not allowed"),
        ("kind: Pod\n\tmetadata: x\n", "line 2, column 1: invalid YAML: "),
    ],
)
def test_malformed_yaml_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    f = write(tmp_path / "bad.yaml", text)
    assert error_of(f).startswith(f"{f}: {message}")


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    f = write(tmp_path / "bad.json", '{"kind": "Pod",\n "metadata": }')
    assert error_of(f) == f"{f}: line 2, column 14: invalid JSON: Expecting value"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "---\nkind: Node\nmetadata: {name: n}\n---\n- a\n- b\n",
            "document 2: expected a mapping, got list",
        ),
        (
            "---\nkind: Node\nmetadata: {name: n}\n---\nmetadata: {name: x}\n",
            "document 2: missing kind",
        ),
        (
            "---\nkind: Node\nmetadata: {name: n}\n---\nkind: Ingress\n",
            'document 2: unknown kind "Ingress" (expected one of ',
        ),
        ("kind: 5\n", "kind must be a string: 5"),
        ("kind: List\nitems: {a: 1}\n", "items: expected a list, got mapping"),
        ("kind: List\nitems:\n- kind: Widget\n", 'items[0]: unknown kind "Widget"'),
        (
            "kind: Pod\nmetadata: {namespace: x}\nspec: {containers: [{name: c, image: i}]}\n",
            "Pod x/(no name): metadata.name: Required value: name or generateName is required",
        ),
        ("just a string\n", "expected a mapping, got string"),
    ],
)
def test_documents_that_are_not_objects(tmp_path: Path, text: str, problem: str) -> None:
    f = write(tmp_path / "x.yaml", text)
    assert error_of(f).startswith(f"{f}: {problem}")


def test_duplicates_are_rejected(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", NODE.format(name="n1"))
    write(
        tmp_path / "b.yaml",
        "---\n" + POD.format(name="p", cpu="1") + "---\n" + NODE.format(name="n1"),
    )
    message = error_of(tmp_path)
    assert message == (
        f'{tmp_path / "b.yaml"}: document 2: duplicate node "n1" (first in {tmp_path / "a.yaml"})'
    )
    f = write(
        tmp_path / "pods" / "p.yaml",
        "kind: PodList\nitems:\n- {metadata: {name: p, namespace: ns}, spec: &s {containers: [{name: c, image: i}]}}\n"
        "- {metadata: {name: p, namespace: other}, spec: *s}\n- {metadata: {name: p, namespace: ns}, spec: *s}\n",
    )
    assert error_of(f) == f'{f}: items[2]: duplicate pod "ns/p" (first in {f}: items[0])'


def test_empty_documents_are_skipped(tmp_path: Path) -> None:
    f = write(tmp_path / "e.yaml", "---\n---\n\n---\n" + NODE.format(name="n") + "---\n")
    assert [n.name for n in load_manifests(f).nodes] == ["n"]
    blank = write(tmp_path / "blank.yaml", "")
    assert load_manifests(blank, require_nodes=False) == ClusterObjects()


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert error_of(missing) == f"{missing}: no such file or directory"


def test_real_fixtures_load() -> None:
    objs = load_manifests(REAL)
    assert [n.name for n in objs.nodes] == ["gke-sanposhiho-default-pool-1d5a4320-eklb"]
    assert [p.key for p in objs.pods] == [
        "sanposhiho-pr-rc-lab/hoge-custom-controller-d87b6785d-c8bqf"
    ]
    assert objs.others == []
    node, pod = objs.nodes[0], objs.pods[0]
    assert node.allocatable.milli_cpu == 940
    assert node.allocatable.memory == 2949140480
    assert node.allocatable.allowed_pod_number == 110
    assert node.taints == ()
    assert pod.requests == Resource(milli_cpu=1000, memory=2_000_000_000)
    assert [t.key for t in pod.tolerations] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    # YAML timestamps stay strings in the stored manifest.
    assert pod.manifest["metadata"]["creationTimestamp"] == "2023-05-20T00:46:28Z"
    assert node.manifest["status"]["conditions"][0]["lastHeartbeatTime"] == "2023-05-30T02:42:13Z"
