"""Builders and constants shared by the InterPodAffinity tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conftest import FakeHandle, make_node, make_snapshot

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import Snapshot
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
)

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"

AFFINITY_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI_REJECTED = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING_REJECTED = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(
    key: str,
    *exprs: dict[str, Any],
    namespaces: Sequence[str] = (),
    ns_selector: Mapping[str, Any] | None = None,
    match_label_keys: Sequence[str] = (),
    mismatch_label_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """A PodAffinityTerm with topologyKey ``key`` and a selector of ``exprs``."""
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": key}
    if namespaces:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = dict(ns_selector)
    if match_label_keys:
        t["matchLabelKeys"] = list(match_label_keys)
    if mismatch_label_keys:
        t["mismatchLabelKeys"] = list(mismatch_label_keys)
    return t


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def affinity(
    req: Sequence[dict[str, Any]] = (),
    anti: Sequence[dict[str, Any]] = (),
    pref: Sequence[dict[str, Any]] = (),
    pref_anti: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if req or pref:
        out["podAffinity"] = {}
        if req:
            out["podAffinity"][REQ] = list(req)
        if pref:
            out["podAffinity"][PREF] = list(pref)
    if anti or pref_anti:
        out["podAntiAffinity"] = {}
        if anti:
            out["podAntiAffinity"][REQ] = list(anti)
        if pref_anti:
            out["podAntiAffinity"][PREF] = list(pref_anti)
    return out


_counter = iter(range(10**9))


def pod(
    labels: Mapping[str, str] | None = None,
    *,
    node: str = "",
    ns: str = "default",
    aff: Mapping[str, Any] | None = None,
    name: str = "",
) -> Pod:
    meta = {"name": name or f"p{next(_counter)}", "namespace": ns, "labels": dict(labels or {})}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    if aff is not None:
        spec["affinity"] = dict(aff)
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def node(name: str, **labels: str) -> Node:
    return make_node(name, labels=labels)


class ObjectsHandle(FakeHandle):
    def __init__(self, snapshot: Snapshot, objects: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(snapshot)
        self._objects = list(objects)

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return [o for o in self._objects if o.get("kind") == kind]


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"kind": "Namespace", "metadata": {"name": name, "labels": labels}}


NAMESPACES = [
    namespace("subteam1.team1", team="team1"),
    namespace("subteam2.team1", team="team1"),
    namespace("subteam1.team2", team="team2"),
    namespace("subteam2.team2", team="team2"),
]


def plugin(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    args: Mapping[str, Any] | None = None,
    objects: Sequence[Mapping[str, Any]] = NAMESPACES,
) -> tuple[InterPodAffinity, Snapshot]:
    snapshot = make_snapshot(nodes, pods)
    return InterPodAffinity(dict(args or {}), ObjectsHandle(snapshot, objects)), snapshot


def run_filter(pl: InterPodAffinity, snapshot: Snapshot, incoming: Pod) -> dict[str, Status | None]:
    """PreFilter then Filter on every node; a skipped PreFilter lets every node pass."""
    state = CycleState()
    result, status = pl.pre_filter(state, incoming, snapshot.list())
    assert result is None
    if status is not None:
        assert status.code == Code.SKIP, status
        return {ni.name: None for ni in snapshot}
    return {ni.name: pl.filter(state, incoming, ni) for ni in snapshot}


M1 = node("machine1", region="r1", zone="z11", hostname="machine1")
M2 = node("machine2", region="r1", zone="z12", hostname="machine2")
M3 = node("machine3", region="r2", zone="z21", hostname="machine3")
FOO_BAR = {"foo": "bar"}
FOO_IN_BAR = expr("foo", "In", "bar")
STAY_WITH_S1_IN_REGION = affinity(pref=[weighted(5, term("region", expr("security", "In", "S1")))])
