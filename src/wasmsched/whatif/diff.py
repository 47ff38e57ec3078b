"""What changes when the scheduler configuration changes: two runs of the same input,
compared pod by pod, with the deltas of their summary metrics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from wasmsched.api.objects import Node, Pod
from wasmsched.replay.metrics import resource_amounts

ZONE_LABEL = "topology.kubernetes.io/zone"


def placement_metrics(nodes: Iterable[Node], pods: Iterable[Pod]) -> dict[str, Any]:
    """Allocation per resource (requested over allocatable on schedulable nodes) and
    running pods per zone, for the cluster as a run left it."""
    node_list = list(nodes)
    zone_of = {n.name: n.labels.get(ZONE_LABEL, "") for n in node_list}
    allocatable: Counter[str] = Counter()
    schedulable = set()
    for n in node_list:
        if not n.unschedulable:
            schedulable.add(n.name)
            allocatable.update({k: v for k, v in resource_amounts(n.allocatable).items() if v})
    requested: Counter[str] = Counter()
    zones: Counter[str] = Counter()
    for p in pods:
        if not p.node_name or p.is_terminal or p.node_name not in zone_of:
            continue
        zones[zone_of[p.node_name] or "(no zone)"] += 1
        if p.node_name in schedulable:
            requested.update(resource_amounts(p.requests))
    return {
        "allocation": {
            k: round(requested[k] / total, 6) for k, total in sorted(allocatable.items()) if total
        },
        "podsPerZone": dict(sorted(zones.items())),
    }


def _key(pod: Mapping[str, Any]) -> tuple[str, str]:
    return (str(pod.get("namespace", "")), str(pod.get("name", "")))


def _side(pod: Mapping[str, Any] | None) -> dict[str, Any]:
    if pod is None:
        return {"node": None, "result": None}
    return {"node": pod.get("node"), "result": pod.get("result")}


def summary_metrics(run: Mapping[str, Any]) -> dict[str, Any]:
    """The comparable numbers of a run: results, allocation, pods per zone, waits."""
    summary: Mapping[str, Any] = run.get("summary") or {}
    pods = run.get("pods") or []
    results: Counter[str] = Counter(str(p.get("result")) for p in pods)
    # Placed by this run: simulate's Scheduled; a replay's pods that were bound (Running or
    # Completed), but not simulate's pods that were running before (wasPending false).
    placed = sum(
        1 for p in pods if p.get("result") in ("Running", "Completed") and p.get("wasPending", True)
    )
    out: dict[str, Any] = {
        "pods": len(pods),
        "scheduled": results["Scheduled"] + placed,
        "unschedulable": results["Unschedulable"],
        "error": results["Error"],
        "preempted": results["Preempted"],
    }
    metrics: Mapping[str, Any] = run.get("metrics") or {}
    for name, value in (metrics.get("allocation") or {}).items():
        out[f"allocation.{name}"] = value
    for zone, count in (metrics.get("podsPerZone") or {}).items():
        out[f"podsPerZone.{zone}"] = count
    waits = summary.get("waitSeconds")
    if isinstance(waits, Mapping):
        for q, value in waits.items():
            out[f"waitSeconds.{q}"] = value
    return out


def diff_runs(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Every pod whose node or result differs between run ``a`` and run ``b`` (a pod in
    only one of them counts as changed), and both runs' summary metrics with deltas."""
    pods_a = {_key(p): p for p in a.get("pods") or []}
    pods_b = {_key(p): p for p in b.get("pods") or []}
    changed = []
    for key in sorted(set(pods_a) | set(pods_b)):
        sa, sb = _side(pods_a.get(key)), _side(pods_b.get(key))
        if sa != sb:
            changed.append({"namespace": key[0], "name": key[1], "a": sa, "b": sb})
    summary_a, summary_b = summary_metrics(a), summary_metrics(b)
    deltas = {
        k: round(float(summary_b.get(k) or 0) - float(summary_a.get(k) or 0), 6)
        for k in sorted(set(summary_a) | set(summary_b))
        if isinstance(summary_a.get(k, 0), int | float)
        and isinstance(summary_b.get(k, 0), int | float)
        and summary_a.get(k) != summary_b.get(k)
    }
    return {
        "changed": changed,
        "summary": {"changed": len(changed), "a": summary_a, "b": summary_b, "delta": deltas},
    }
