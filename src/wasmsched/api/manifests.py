"""Loading Nodes, Pods and other Kubernetes objects from YAML or JSON manifests.

Every problem is a one-line ``ManifestError`` naming the file, the document (when the file
has several), the field and the value:
``cluster.yaml: document 3: spec.containers[0].resources.requests.cpu: invalid quantity "12x"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wasmsched.api.objects import Node, ObjectError, Pod
from wasmsched.api.quantity import quote, type_name
from wasmsched.errors import InputError, InternalError

__all__ = ["KNOWN_KINDS", "ClusterObjects", "ManifestError", "load_manifests"]

# Kinds kept raw in ClusterObjects.others: Kubernetes kinds a scheduler may consult.
OTHER_KINDS = frozenset(
    {
        "PodDisruptionBudget",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "StorageClass",
        "CSINode",
        "PriorityClass",
        "RuntimeClass",
        "Namespace",
        "ConfigMap",
        "Service",
        "ReplicaSet",
        "Deployment",
        "DaemonSet",
        "StatefulSet",
        "Job",
    }
)
KNOWN_KINDS = frozenset({"Node", "Pod"}) | OTHER_KINDS
_EXTENSIONS = (".yaml", ".yml", ".json")

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader (C if available) that leaves timestamps as strings, as Kubernetes reads them."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


class ManifestError(InputError):
    """A manifest that cannot be loaded; the message is one line naming file and field."""


@dataclass
class ClusterObjects:
    """The objects of a set of manifests, in file order."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)


def _files(root: Path) -> list[Path]:
    if root.is_dir():
        return sorted(p for p in root.rglob("*") if p.suffix in _EXTENSIONS and p.is_file())
    if root.exists():
        return [root]
    raise ManifestError(f"{root}: no such file or directory")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read_documents(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ManifestError(f"{path}: not UTF-8 text: {e.reason} at byte {e.start}") from None
    except OSError as e:
        raise ManifestError(f"{path}: {e.strerror or e}") from None
    if path.suffix == ".json":
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            raise ManifestError(
                f"{path}: line {e.lineno}, column {e.colno}: invalid JSON: {e.msg}"
            ) from None
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = _one_line(" ".join(p for p in (e.context, e.problem) if p))
        raise ManifestError(f"{path}: {where}invalid YAML: {problem}") from None
    except yaml.YAMLError as e:
        raise ManifestError(f"{path}: invalid YAML: {_one_line(str(e))}") from None


def _items(doc: Any, path: str) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Yield (field path, kind, object) for a document, expanding List kinds."""
    if not isinstance(doc, Mapping):
        raise _Located(path, f"expected a mapping, got {type_name(doc)}")
    kind = doc.get("kind")
    if kind is None or kind == "":
        raise _Located(path, "missing kind")
    if not isinstance(kind, str):
        raise _Located(path, f"kind must be a string: {quote(kind)}")
    if kind == "List" or (kind.endswith("List") and kind[: -len("List")] in KNOWN_KINDS):
        item_kind = kind[: -len("List")] or None
        items = doc.get("items")
        if items is None:
            items = []
        if not isinstance(items, list):
            raise _Located(_join(path, "items"), f"expected a list, got {type_name(items)}")
        for i, item in enumerate(items):
            ipath = _join(path, f"items[{i}]")
            if item_kind is not None and isinstance(item, Mapping) and not item.get("kind"):
                # Items of a typed list (PodList from the API) often omit their kind.
                item = {**item, "kind": item_kind}
            yield from _items(item, ipath)
        return
    if kind not in KNOWN_KINDS:
        raise _Located(
            path,
            f"unknown kind {quote(kind)} (expected one of {', '.join(sorted(KNOWN_KINDS))}, "
            "or a List of them)",
        )
    yield path, kind, doc


def _join(prefix: str, path: str) -> str:
    return f"{prefix}.{path}" if prefix else path


class _Located(InternalError):
    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem


def load_manifests(path: str | Path) -> ClusterObjects:
    """Load every Node, Pod and other known object from a file or a directory.

    A directory is searched recursively for ``*.yaml``, ``*.yml`` and ``*.json`` files, read
    in sorted order. Files may hold several YAML documents; ``List`` / ``NodeList`` /
    ``PodList`` documents are expanded. Empty documents are skipped. Raises ManifestError.
    """
    root = Path(path)
    out = ClusterObjects()
    node_where: dict[str, str] = {}
    pod_where: dict[str, str] = {}
    for file in _files(root):
        docs = _read_documents(file)
        multi = len(docs) > 1
        for index, doc in enumerate(docs, start=1):
            if doc is None:
                continue
            where = f"{file}: document {index}" if multi else str(file)
            try:
                for fpath, kind, obj in _items(doc, ""):
                    _add(out, kind, obj, where, fpath, node_where, pod_where)
            except _Located as e:
                prefix = f"{where}: {e.path}" if e.path else where
                raise ManifestError(f"{prefix}: {e.problem}") from None
    return out


def _add(
    out: ClusterObjects,
    kind: str,
    obj: Mapping[str, Any],
    where: str,
    fpath: str,
    node_where: dict[str, str],
    pod_where: dict[str, str],
) -> None:
    here = f"{where}: {fpath}" if fpath else where
    if kind == "Node":
        node = Node(obj)
        _validate(node, fpath)
        first = node_where.get(node.name)
        if first is not None:
            raise _Located(fpath, f"duplicate node {quote(node.name)} (first in {first})")
        node_where[node.name] = here
        out.nodes.append(node)
    elif kind == "Pod":
        pod = Pod(obj)
        _validate(pod, fpath)
        first = pod_where.get(pod.key)
        if first is not None:
            raise _Located(fpath, f"duplicate pod {quote(pod.key)} (first in {first})")
        pod_where[pod.key] = here
        out.pods.append(pod)
    else:
        out.others.append(dict(obj))


def _validate(obj: Pod | Node, fpath: str) -> None:
    try:
        obj.validate()
    except ObjectError as e:
        raise _Located(_join(fpath, e.path), e.problem) from None
