"""Workload traces: what happens to a cluster over time.

A trace is a list of timed events. Three sources give one:

- our JSON-lines format, one event per line::

      {"at": 12.5, "create": <Pod or workload manifest>, "duration": 3600}
      {"at": 90, "delete": "ns/name"}
      {"at": 100, "node": <Node manifest>}
      {"at": 200, "cordon": "node-7"}
      {"at": 300, "deleteNode": "node-7"}

- plain manifests with the annotations ``wasmsched.io/arrival`` and
  ``wasmsched.io/duration`` (Go duration strings such as ``90s`` or ``2h``), so that a
  cluster YAML is a trace;
- public trace formats, converted by an importer (``wasmsched.replay.alibaba``).

Every problem is one line naming the file, the line (or document) and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wasmsched.config.loader import parse_duration
from wasmsched.errors import InputError

ARRIVAL_ANNOTATION = "wasmsched.io/arrival"
DURATION_ANNOTATION = "wasmsched.io/duration"

# The manifest kinds a "create" may carry: a Pod, or a workload whose controller makes pods.
WORKLOAD_KINDS = frozenset({"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"})


class TraceError(InputError):
    """A trace that cannot be read; the message names the file, the line and the field."""


@dataclass(frozen=True, slots=True)
class CreateObject:
    """A Pod or workload manifest created at ``at``; its pods run ``duration`` seconds once
    bound (None: until deleted, or forever)."""

    at: float
    manifest: Mapping[str, Any]
    duration: float | None = None
    delete_at: float | None = None


@dataclass(frozen=True, slots=True)
class DeletePod:
    """The pod ``namespace/name`` is deleted at ``at`` (bound or not)."""

    at: float
    key: str


@dataclass(frozen=True, slots=True)
class AddNode:
    """A Node joins the cluster at ``at``."""

    at: float
    manifest: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CordonNode:
    """The node is marked unschedulable at ``at`` (its pods keep running)."""

    at: float
    node: str


@dataclass(frozen=True, slots=True)
class DeleteNode:
    """The node leaves at ``at``; its pods are deleted with it."""

    at: float
    node: str


TraceEvent = CreateObject | DeletePod | AddNode | CordonNode | DeleteNode


def parse_go_duration(text: str) -> float:
    """Seconds in a non-negative Go duration string (``90s``, ``1h30m``, ``1.5h``,
    ``300ms``, ``0``), as Go's time.ParseDuration reads it. Raises ValueError."""
    seconds = parse_duration(text.strip())
    if seconds is None:
        raise ValueError(f'invalid duration "{text}"')
    return seconds


def _seconds(value: Any, where: str, field: str, *, allow_none: bool = True) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TraceError(
            f"{where}: {field}: expected seconds (a number or a Go duration), got {value!r}"
        )
    if isinstance(value, str):
        try:
            seconds = parse_go_duration(value)
        except ValueError as e:
            raise TraceError(f"{where}: {field}: {e}") from None
    else:
        seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0:
        raise TraceError(f"{where}: {field}: must be a finite number >= 0, got {value!r}")
    return seconds


def _string(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise TraceError(f"{where}: {field}: expected a non-empty string, got {value!r}")
    return value


def _manifest(value: Any, where: str, field: str, kinds: Iterable[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TraceError(f"{where}: {field}: expected a Kubernetes object, got {value!r}")
    kind = value.get("kind")
    allowed = sorted(kinds)
    if kind not in allowed:
        raise TraceError(
            f"{where}: {field}.kind: expected one of {', '.join(allowed)}, got {kind!r}"
        )
    return value


_EVENT_KEYS = ("create", "delete", "node", "cordon", "deleteNode")
_ALLOWED = {
    "create": {"at", "create", "duration", "deleteAt"},
    "delete": {"at", "delete"},
    "node": {"at", "node"},
    "cordon": {"at", "cordon"},
    "deleteNode": {"at", "deleteNode"},
}


def parse_event(record: Any, where: str) -> TraceEvent:
    """One JSON-lines record as a trace event."""
    if not isinstance(record, Mapping):
        raise TraceError(f"{where}: expected a JSON object, got {record!r}")
    kinds = [k for k in _EVENT_KEYS if k in record]
    if len(kinds) != 1:
        raise TraceError(
            f"{where}: expected exactly one of {', '.join(_EVENT_KEYS)}, got "
            f"{', '.join(sorted(map(str, record))) or 'none'}"
        )
    kind = kinds[0]
    unknown = sorted(set(map(str, record)) - _ALLOWED[kind])
    if unknown:
        raise TraceError(f"{where}: unknown field {unknown[0]} in a {kind!r} event")
    at = _seconds(record.get("at"), where, "at", allow_none=False)
    assert at is not None
    if kind == "create":
        return CreateObject(
            at,
            _manifest(record["create"], where, "create", WORKLOAD_KINDS),
            _seconds(record.get("duration"), where, "duration"),
            _seconds(record.get("deleteAt"), where, "deleteAt"),
        )
    if kind == "delete":
        key = _string(record["delete"], where, "delete")
        if key.count("/") != 1:
            raise TraceError(f'{where}: delete: expected "namespace/name", got {key!r}')
        return DeletePod(at, key)
    if kind == "node":
        return AddNode(at, _manifest(record["node"], where, "node", ("Node",)))
    if kind == "cordon":
        return CordonNode(at, _string(record["cordon"], where, "cordon"))
    return DeleteNode(at, _string(record["deleteNode"], where, "deleteNode"))


def read_jsonl(path: Path, text: str | None = None) -> list[TraceEvent]:
    """The events of a JSON-lines trace, in file order (blank lines and ``#`` comments are
    skipped)."""
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise TraceError(f"{path}: {e.strerror or e}") from None
    events: list[TraceEvent] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise TraceError(f"{where}: invalid JSON: {e.msg} (column {e.colno})") from None
        events.append(parse_event(record, where))
    return events


def events_from_annotations(
    manifests: Iterable[Mapping[str, Any]], where: str
) -> tuple[list[TraceEvent], list[Mapping[str, Any]]]:
    """Splits manifests into trace events (those annotated with an arrival or a duration;
    a Node's arrival is when it joins) and the rest, which stand from time 0."""
    events: list[TraceEvent] = []
    rest: list[Mapping[str, Any]] = []
    for manifest in manifests:
        meta = manifest.get("metadata") or {}
        notes = meta.get("annotations") or {} if isinstance(meta, Mapping) else {}
        if not isinstance(notes, Mapping) or not (
            ARRIVAL_ANNOTATION in notes or DURATION_ANNOTATION in notes
        ):
            rest.append(manifest)
            continue
        name = f"{manifest.get('kind')} {meta.get('namespace', 'default')}/{meta.get('name')}"
        here = f"{where}: {name}"
        field = "metadata.annotations"
        at = _seconds(notes.get(ARRIVAL_ANNOTATION, 0), here, f"{field}[{ARRIVAL_ANNOTATION}]")
        duration = _seconds(notes.get(DURATION_ANNOTATION), here, f"{field}[{DURATION_ANNOTATION}]")
        if manifest.get("kind") == "Node":
            events.append(AddNode(at or 0.0, manifest))
            continue
        if manifest.get("kind") not in WORKLOAD_KINDS:
            raise TraceError(f"{here}: {ARRIVAL_ANNOTATION} applies to Nodes, Pods and workloads")
        events.append(CreateObject(at or 0.0, manifest, duration))
    return events, rest


def sort_events(events: Iterable[TraceEvent]) -> list[TraceEvent]:
    """Events in time order; events at the same time keep their order in the trace."""
    return sorted(events, key=lambda e: e.at)
