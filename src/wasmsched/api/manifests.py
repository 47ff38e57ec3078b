"""Loading Nodes, Pods and other Kubernetes objects from YAML or JSON manifests.

Every object of a kind the simulation reads is validated as the API server of the chosen
Kubernetes release would (wasmsched.api.validation): strict schema (unknown fields, wrong types, required
fields) and the API server's rules (negative quantities, names, enums, ranges). Every
problem is one line naming the file, the document (when the file has several), the object,
the field and the value:

``cluster.yaml: document 3: Pod default/web: spec.containers[0].resources.requests.cpu:
Invalid value: "-1": must be greater than or equal to 0``

All problems of all files are collected (up to MAX_ERRORS, then ``... and N more``) into one
``ManifestError``. What the API server would accept but a simulation should mention (a pod
bound to a node that is not in the cluster, a CronJob) is returned as warnings.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from wasmsched.api.dra import CLUSTER_SCOPED_DRA_KINDS, DRA_KINDS, with_dra_defaults
from wasmsched.api.objects import DEFAULT_NAMESPACE, Node, ObjectError, Pod
from wasmsched.api.quantity import quote, type_name
from wasmsched.api.validation import validate_object
from wasmsched.errors import InputError, InternalError
from wasmsched.release.version import (
    DEFAULT_KUBERNETES_VERSION,
    SUPPORTED_VERSIONS,
    KubernetesVersion,
    VersionError,
    nearest_supported,
    read_kubernetes_version,
)

__all__ = [
    "KNOWN_KINDS",
    "MAX_ERRORS",
    "SNAPSHOT_API_VERSION",
    "SNAPSHOT_KIND",
    "STDIN",
    "ClusterObjects",
    "ManifestError",
    "load_manifests",
    "workload_warnings",
]

# Kinds kept raw in ClusterObjects.others: Kubernetes kinds a scheduler may consult, and
# the workload controllers whose pods the simulation creates (wasmsched.sim.workloads).
OTHER_KINDS = frozenset(
    {
        "PodDisruptionBudget",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "StorageClass",
        "CSINode",
        "CSIDriver",
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
        "CronJob",
    }
    | DRA_KINDS
)
KNOWN_KINDS = frozenset({"Node", "Pod"}) | OTHER_KINDS
# Cluster-scoped kinds: named without a namespace in messages.
_CLUSTER_SCOPED = frozenset(
    {"Node", "PersistentVolume", "StorageClass", "CSINode", "PriorityClass", "RuntimeClass"}
    | {"Namespace", "CSIDriver"}
    | CLUSTER_SCOPED_DRA_KINDS
)
# What ``wasmsched snapshot`` writes first: the server version the objects came from
# (``/version``'s gitVersion), so that they are read as that release's objects.
SNAPSHOT_API_VERSION = "wasmsched.io/v1"
SNAPSHOT_KIND = "Snapshot"
_EXTENSIONS = (".yaml", ".yml", ".json")
MAX_ERRORS = 20
STDIN = "-"

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader (C if available) that leaves timestamps as strings, as Kubernetes reads them."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


class ManifestError(InputError):
    """Manifests that cannot be loaded: one line per problem (``lines``), each naming the
    file, the object and the field; ``str()`` is the lines joined by newlines."""

    def __init__(self, problems: str | Sequence[str], omitted: int = 0) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.omitted = omitted
        self.lines = self.problems + ([f"... and {omitted} more"] if omitted else [])
        super().__init__("\n".join(self.lines))


@dataclass
class ClusterObjects:
    """The objects of a set of manifests, in file order, and the loader's warnings.

    ``kubernetes_version`` is the release the objects were read as; ``server_version`` the
    version a snapshot recorded (None when the input has no Snapshot document)."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    kubernetes_version: KubernetesVersion = DEFAULT_KUBERNETES_VERSION
    server_version: str | None = None


def _files(root: Path) -> list[Path]:
    if root.is_dir():
        return sorted(p for p in root.rglob("*") if p.suffix in _EXTENSIONS and p.is_file())
    if root.exists():
        return [root]
    raise ManifestError(f"{root}: no such file or directory")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ManifestError(f"{path}: not UTF-8 text: {e.reason} at byte {e.start}") from None
    except OSError as e:
        raise ManifestError(f"{path}: {e.strerror or e}") from None


def _parse(name: str, text: str, as_json: bool) -> list[Any]:
    if as_json:
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            raise ManifestError(
                f"{name}: line {e.lineno}, column {e.colno}: invalid JSON: {e.msg}"
            ) from None
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = _one_line(" ".join(p for p in (e.context, e.problem) if p))
        raise ManifestError(f"{name}: {where}invalid YAML: {problem}") from None
    except yaml.YAMLError as e:
        raise ManifestError(f"{name}: invalid YAML: {_one_line(str(e))}") from None


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
    if kind == SNAPSHOT_KIND and doc.get("apiVersion") == SNAPSHOT_API_VERSION:
        yield path, kind, doc
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


def object_label(kind: str, obj: Mapping[str, Any]) -> str:
    """``Pod default/web`` or ``Node n1``: how messages name an object."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    name = name if isinstance(name, str) and name else "(no name)"
    if kind in _CLUSTER_SCOPED:
        return f"{kind} {name}"
    namespace = meta.get("namespace")
    namespace = namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE
    return f"{kind} {namespace}/{name}"


class _Problems:
    """Problem lines collected up to MAX_ERRORS; the rest only counted."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.omitted = 0

    def add(self, line: str) -> None:
        if len(self.lines) < MAX_ERRORS:
            self.lines.append(line)
        else:
            self.omitted += 1

    def raise_any(self) -> None:
        if self.lines:
            raise ManifestError(self.lines, self.omitted)


@dataclass
class _State:
    out: ClusterObjects = field(default_factory=ClusterObjects)
    problems: _Problems = field(default_factory=_Problems)
    node_where: dict[str, str] = field(default_factory=dict)
    pod_where: dict[str, str] = field(default_factory=dict)


def _sources(path: str | Path, stdin: TextIO | None) -> list[tuple[str, str, bool]]:
    """(name, text, is JSON) of every file to read."""
    if str(path) == STDIN:
        stream = stdin if stdin is not None else sys.stdin
        return [("<stdin>", stream.read(), False)]
    root = Path(path)
    files = _files(root)
    if not files:
        raise ManifestError(f"{root}: no manifest files (*.yaml, *.yml, *.json) in the directory")
    out = []
    for file in files:
        out.append((str(file), _read_text(file), file.suffix == ".json"))
    return out


def load_manifests(
    path: str | Path,
    *,
    stdin: TextIO | None = None,
    require_nodes: bool = True,
    kubernetes_version: KubernetesVersion | None = None,
) -> ClusterObjects:
    """Load and validate every Node, Pod and other known object from a file or a directory
    (``"-"``: standard input, read as YAML, which also reads JSON).

    A directory is searched recursively for ``*.yaml``, ``*.yml`` and ``*.json`` files, read
    in sorted order. Files may hold several YAML documents; ``List`` / ``NodeList`` /
    ``PodList`` documents are expanded. Empty documents are skipped. Input without any Node
    is an error unless ``require_nodes`` is false. Objects are validated against the schema
    of ``kubernetes_version``; without one, of the server version a Snapshot document
    records (``wasmsched snapshot`` writes it), else of DEFAULT_KUBERNETES_VERSION. Raises
    ManifestError listing every problem found; warnings are in the result's ``warnings``.
    """
    state = _State()
    sources: list[tuple[str, str, bool]] = []
    try:
        sources = _sources(path, stdin)
    except ManifestError as e:
        for line in e.lines:
            state.problems.add(line)
    # (where, field path, kind, object) of every object, in file order: the version they
    # are read as may come from any of them (a Snapshot document).
    found: list[tuple[str, str, str, Mapping[str, Any]]] = []
    for name, text, as_json in sources:
        try:
            docs = _parse(name, text, as_json)
        except ManifestError as e:
            for line in e.lines:
                state.problems.add(line)
            continue
        multi = len(docs) > 1
        for index, doc in enumerate(docs, start=1):
            if doc is None:
                continue
            where = f"{name}: document {index}" if multi else name
            try:
                for fpath, kind, obj in _items(doc, ""):
                    found.append((where, fpath, kind, obj))
            except _Located as e:
                prefix = f"{where}: {e.path}" if e.path else where
                state.problems.add(f"{prefix}: {e.problem}")
    out = state.out
    _read_snapshots(state, [(w, p, o) for w, p, k, o in found if k == SNAPSHOT_KIND])
    if kubernetes_version is not None:
        out.kubernetes_version = kubernetes_version
    for where, fpath, kind, obj in found:
        if kind != SNAPSHOT_KIND:
            _add(state, kind, obj, where, fpath)
    if require_nodes and not out.nodes and not state.problems.lines:
        state.problems.add(
            f"{path if str(path) != STDIN else '<stdin>'}: no Node objects: "
            "a cluster needs at least one node"
        )
    state.problems.raise_any()
    nodes = {n.name for n in out.nodes}
    for pod in out.pods:
        if pod.node_name and pod.node_name not in nodes:
            out.warnings.append(
                f"{state.pod_where[pod.key]}: Pod {pod.key}: spec.nodeName: node "
                f"{quote(pod.node_name)} is not in the cluster (the pod is kept, bound to it)"
            )
    out.warnings.extend(workload_warnings(out.others))
    return out


def _read_snapshots(state: _State, found: list[tuple[str, str, Mapping[str, Any]]]) -> None:
    """The server version of the input's Snapshot documents (all must agree): recorded, and
    the release the input is read as. A release wasmsched does not model is read as the
    nearest one that it does, with a warning."""
    out = state.out
    for where, fpath, doc in found:
        here = f"{where}: {fpath}" if fpath else where
        extra = sorted(set(doc) - {"apiVersion", "kind", "metadata", "serverVersion"})
        if extra:
            state.problems.add(f"{here}: Snapshot: {extra[0]}: unknown field {quote(extra[0])}")
            continue
        server = doc.get("serverVersion")
        if not isinstance(server, str) or not server:
            state.problems.add(
                f"{here}: Snapshot: serverVersion: expected a version string such as "
                f'"v1.37.2", got {type_name(server)}: {quote(server)}'
            )
            continue
        if out.server_version is not None and server != out.server_version:
            state.problems.add(
                f"{here}: Snapshot: serverVersion: {quote(server)} differs from "
                f"{quote(out.server_version)} of another Snapshot document"
            )
            continue
        try:
            version = read_kubernetes_version(server)
        except VersionError:
            state.problems.add(
                f"{here}: Snapshot: serverVersion: {quote(server)} is not a Kubernetes "
                'version (expected one such as "v1.37.2")'
            )
            continue
        first = out.server_version is None
        out.server_version = server
        out.kubernetes_version = nearest_supported(version)
        if first and out.kubernetes_version != version:
            out.warnings.append(
                f"{here}: Snapshot: serverVersion: wasmsched models Kubernetes "
                f"{SUPPORTED_VERSIONS[0]} to {SUPPORTED_VERSIONS[-1]}; the objects of this "
                f"{server} server are read as {out.kubernetes_version}'s"
            )


def _add(state: _State, kind: str, obj: Mapping[str, Any], where: str, fpath: str) -> None:
    here = f"{where}: {fpath}" if fpath else where
    label = object_label(kind, obj)
    if kind in DRA_KINDS:
        # The API server's defaults (api/dra.py) before its validation, as it applies them.
        obj = with_dra_defaults(kind, obj)
    problems = validate_object(kind, obj, state.out.kubernetes_version)
    if problems:
        for p in problems:
            state.problems.add(f"{here}: {label}: {p}")
        return
    if kind == "Node":
        node = Node(obj)
        if not _parsed(state, node, here, label):
            return
        first = state.node_where.get(node.name)
        if first is not None:
            state.problems.add(f"{here}: duplicate node {quote(node.name)} (first in {first})")
            return
        state.node_where[node.name] = here
        state.out.nodes.append(node)
    elif kind == "Pod":
        pod = Pod(obj)
        if not _parsed(state, pod, here, label):
            return
        first = state.pod_where.get(pod.key)
        if first is not None:
            state.problems.add(f"{here}: duplicate pod {quote(pod.key)} (first in {first})")
            return
        state.pod_where[pod.key] = here
        state.out.pods.append(pod)
    else:
        state.out.others.append(dict(obj))


def _parsed(state: _State, obj: Pod | Node, here: str, label: str) -> bool:
    """Parse every field the scheduler reads; a failure is a problem line."""
    try:
        obj.validate()
    except ObjectError as e:
        state.problems.add(f"{here}: {label}: {e}")
        return False
    return True


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _workload_label(kind: str, obj: Mapping[str, Any]) -> str:
    meta = _mapping(obj.get("metadata"))
    return f"{kind} {meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name')}"


def workload_warnings(others: Iterable[Mapping[str, Any]]) -> list[str]:
    """What the loader should say about workload objects that create no pods now."""
    out = []
    for obj in others:
        kind = obj.get("kind")
        spec = _mapping(obj.get("spec"))
        if kind == "CronJob":
            out.append(
                f"{_workload_label('CronJob', obj)}: creates no pods until its schedule "
                f'"{spec.get("schedule")}" fires, which the simulation does not run'
            )
        elif kind == "Job" and spec.get("suspend") is True:
            out.append(
                f"{_workload_label('Job', obj)}: suspended (spec.suspend), so it creates no pods"
            )
    return out
