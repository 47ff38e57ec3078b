"""The result document of a simulation, and its only owner: ``simulate --output json``, the
explain JSON lines of ``--explain-output``, and the data the HTML report renders
(docs/output.md is the contract). The command line writes or renders what this builds.

``document`` is the whole document as a dict; ``write_document`` prints the same
document as ``json.dumps(document(...), indent=2)`` would, except that a pod's explain
``cycles`` are on one line: the record of 200 pods on 500 nodes is tens of megabytes,
and only unindented JSON has the C encoder. ``record_json`` writes a CycleRecord that
way, from its recorded rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from wasmsched.framework.interfaces import Event

# verdict: the record's own formatting of a Status, so that both encodings agree.
from wasmsched.framework.records import CycleRecord
from wasmsched.framework.records import verdict as _verdict
from wasmsched.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE
from wasmsched.sim.result import PREEMPTED, RUNNING, SKIPPED, NodeUsage, PodResult, SimulationResult

__all__ = [
    "document",
    "event_entry",
    "format_amount",
    "node_entry",
    "pod_entry",
    "record_json",
    "summary",
    "write_document",
    "write_explain_lines",
]

_BYTES = ("memory", "ephemeral-storage")
_BINARY_SUFFIXES = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def format_amount(resource: str, amount: int) -> str:
    """A quantity string as Kubernetes writes it: cpu in cores or millicores, bytes with the
    largest binary suffix that divides them exactly, counts as integers."""
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount and (resource in _BYTES or resource.startswith("hugepages-")):
        for suffix, size in _BINARY_SUFFIXES:
            if amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)


def document(
    result: SimulationResult, explain: bool = False, explain_pods: frozenset[str] | None = None
) -> dict[str, Any]:
    """The whole document; with ``explain``, the attempts and cycles of each pod (of
    ``explain_pods`` only, when given) and the events."""
    explained = _explained(explain, explain_pods)
    return {
        "pods": [pod_entry(p, explained(p)) for p in result.pods],
        **_after_pods(result, explain),
    }


def pod_entry(pod: PodResult, explain: bool = False) -> dict[str, Any]:
    """A pod's entry; ``explain`` adds its attempts and the record of each cycle."""
    data = _pod_fields(pod, explain)
    if explain and pod.outcome is not None:
        data["cycles"] = [c.to_dict() for c in pod.outcome.cycles]
    return data


def node_entry(node: NodeUsage) -> dict[str, Any]:
    """A node's entry: what its bound pods request of what it has."""
    return {
        "name": node.name,
        "allocatable": {k: format_amount(k, v) for k, v in node.allocatable.items()},
        "requested": {k: format_amount(k, v) for k, v in node.requested.items()},
        "pods": node.pods,
    }


def event_entry(event: Event) -> dict[str, Any]:
    """A Kubernetes Event the scheduler recorded."""
    regarding = event.regarding
    return {
        "time": event.time,
        "object": f"{regarding.namespace}/{regarding.name}"
        if regarding.namespace
        else regarding.name,
        "type": event.type,
        "reason": event.reason,
        "action": event.action,
        "note": event.note,
    }


def summary(result: SimulationResult) -> dict[str, Any]:
    """The run's counters (``SimulationResult.summary()``)."""
    counts = result.counts()
    return {
        "pods": len(result.outcomes),
        "scheduled": counts.get(SCHEDULED, 0),
        "unschedulable": counts.get(UNSCHEDULABLE, 0),
        "error": counts.get(ERROR, 0),
        "pending": counts.get("Pending", 0),
        "totalPods": len(result.pods),
        **{
            key: sum(1 for r in result.pods if r.result == value)
            for key, value in _OTHER_RESULT_KEYS
        },
        "nodes": result.nodes,
        "schedulingCycles": result.cycles,
        "simulatedSeconds": round(result.simulated_seconds, 3),
        "wallSeconds": round(result.wall_seconds, 3),
        "podsPerSecond": round(len(result.outcomes) / result.wall_seconds, 1)
        if result.wall_seconds > 0
        else None,
        "otherSchedulers": [
            {"namespace": p.namespace, "name": p.name, "schedulerName": p.scheduler_name}
            for p in result.other_scheduler_pods
        ],
        "preemptions": [
            {"victim": p.victim, "node": p.node, "preemptor": p.preemptor, "time": p.time}
            for p in result.preemptions
        ],
        "pluginsNotImplemented": result.skipped_plugins,
        "stoppedEarly": result.stopped_early or None,
        "kubernetesVersion": result.kubernetes_version,
        "featureGates": result.feature_gates,
    }


_OTHER_RESULT_KEYS = (
    ("running", RUNNING),
    ("skipped", SKIPPED),
    ("preempted", PREEMPTED),
    ("succeeded", "Succeeded"),
    ("failed", "Failed"),
)


def _explained(explain: bool, explain_pods: frozenset[str] | None) -> Callable[[PodResult], bool]:
    if not explain:
        return lambda p: False
    if explain_pods is None:
        return lambda p: True
    return lambda p: p.pod.key in explain_pods


def _pod_fields(pod: PodResult, attempts: bool) -> dict[str, Any]:
    """A pod's entry up to its ``cycles``; ``attempts`` adds how many it took."""
    data: dict[str, Any] = {
        "namespace": pod.pod.namespace,
        "name": pod.pod.name,
        "node": pod.node,
        "result": pod.result,
        "message": pod.message,
        "nominatedNode": pod.nominated_node,
        "preemptedBy": pod.preempted_by,
        "wasPending": pod.was_pending,
    }
    outcome = pod.outcome
    if outcome is not None and outcome.rejected_by and pod.result == UNSCHEDULABLE:
        data["rejectedBy"] = outcome.rejected_by
    if attempts and outcome is not None:
        data["attempts"] = outcome.attempts
    if pod.extended_resource_claim is not None:
        data["extendedResourceClaim"] = pod.extended_resource_claim
    return data


def _after_pods(result: SimulationResult, explain: bool) -> dict[str, Any]:
    """The document's keys after ``pods``."""
    rest: dict[str, Any] = {"nodes": [node_entry(n) for n in result.node_usage]}
    if result.devices is not None:
        rest["devices"] = result.devices
    rest["summary"] = summary(result)
    if explain:
        rest["events"] = [event_entry(e) for e in result.events]
    return rest


def write_document(
    result: SimulationResult,
    out: IO[str],
    explain: bool = False,
    explain_pods: frozenset[str] | None = None,
) -> None:
    """``document(...)`` printed as ``json.dumps(..., indent=2)`` prints it, one pod at a
    time, with each pod's ``cycles`` on one line (see the module doc)."""
    explained = _explained(explain, explain_pods)
    out.write('{\n  "pods": [')
    for i, p in enumerate(result.pods):
        outcome = p.outcome if explained(p) else None  # None: no explain record to print
        out.write(",\n    " if i else "\n    ")
        # json.dumps escapes newlines inside strings: every newline here is indentation.
        text = json.dumps(_pod_fields(p, outcome is not None), indent=2).replace("\n", "\n    ")
        if outcome is not None:
            cycles_json = ",".join(record_json(c) for c in outcome.cycles)
            text = f'{text[:-6]},\n      "cycles": [{cycles_json}]\n    }}'
        out.write(text)
    out.write("\n  ]" if result.pods else "]")
    for key, value in _after_pods(result, explain).items():
        out.write(f",\n  {json.dumps(key)}: ")
        out.write(json.dumps(value, indent=2).replace("\n", "\n  "))
    out.write("\n}\n")


def record_json(record: CycleRecord) -> str:
    """``json.dumps(record.to_dict())`` (compact), written from the recorded tuples.

    Most nodes share a verdict prefix ("passed" up to the rejecting plugin) and most
    verdicts repeat: building the strings directly is several times faster than building
    a dict per node for the encoder.
    """
    dumps = json.dumps
    order = record.filter_order or ()
    keys = [dumps(name) for name in order]
    passed = [f'{key}:"passed"' for key in keys]
    all_passed = "{" + ",".join(passed) + "}"
    index = {name: i for i, name in enumerate(order)}
    verdicts: dict[int, str] = {}  # id(status) -> its JSON, statuses are often shared
    filters: dict[str, str] = {}  # the last run on a node wins, as in CycleRecord.filter
    for node, rejector, status in record.filter_rows:
        i = index.get(rejector, -1) if rejector is not None else -1
        if i < 0:
            filters[node] = all_passed
            continue
        text = verdicts.get(id(status))
        if text is None:
            text = verdicts[id(status)] = dumps(_verdict(status))
        filters[node] = "{" + ",".join([*passed[:i], f"{keys[i]}:{text}"]) + "}"
    scores: dict[str, list[str]] = {}
    for name, weight, nodes, raw, normalized in record.score_rows:
        key = dumps(name)
        for j, node in enumerate(nodes):
            n = normalized[j]
            scores.setdefault(node, []).append(
                f'{key}:{{"raw":{raw[j]},"normalized":{n},"weighted":{n * weight}}}'
            )
    parts = [
        f'"preFilter":{dumps(record.pre_filter)}',
        '"filter":{' + ",".join(f"{dumps(n)}:{v}" for n, v in filters.items()) + "}",
        f'"postFilter":{dumps(record.post_filter)}',
        f'"preScore":{dumps(record.pre_score)}',
        '"score":{' + ",".join(f"{dumps(n)}:{{{','.join(v)}}}" for n, v in scores.items()) + "}",
        f'"reserve":{dumps(record.reserve)}',
        f'"permit":{dumps(record.permit)}',
        f'"bind":{dumps(record.bind)}',
        f'"selectedNode":{dumps(record.selected_node)}',
        f'"nominatedNode":{dumps(record.nominated_node)}',
        f'"victims":{dumps(record.victims)}',
    ]
    if record.devices:
        parts.append(f'"devices":{dumps(record.devices)}')
    return "{" + ",".join(parts) + "}"


def write_explain_lines(result: SimulationResult, out: IO[str]) -> int:
    """One JSON object per scheduling attempt of every explained pod; returns the count."""
    lines = 0
    for p in result.pods:
        outcome = p.outcome
        if outcome is None:
            continue
        for attempt, record in enumerate(outcome.cycles, 1):
            head = json.dumps(
                {"pod": p.pod.key, "attempt": attempt, "finalResult": p.result},
                separators=(",", ":"),
            )
            out.write(f"{head[:-1]},{record_json(record)[1:]}\n")
            lines += 1
    return lines
