"""What InterPodAffinity does once rather than again (the anti-affinity pods' cycle of
scheduler_perf's SchedulingPodAntiAffinity): a pod's terms parsed once for it, the copies
binding makes and the other replicas of its template; one pass over the nodes' generations per cycle; each count map laid
out by topology domain once per cycle, not once per Filter chunk."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from affinity_support import term
from incremental_support import HOST, CacheHandle, cache_with, node_doc

from wasmsched.api.objects import Pod
from wasmsched.framework.columns import NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import PodInfo
from wasmsched.plugins import node_counts
from wasmsched.plugins.inter_pod_affinity import InterPodAffinity, new
from wasmsched.plugins.inter_pod_affinity.terms import pod_affinity_terms
from wasmsched.plugins.pod_topology_spread import columnar

REQ = "requiredDuringSchedulingIgnoredDuringExecution"


def anti_pod(name: str, labels: dict[str, str], keys: tuple[str, ...] = ()) -> Pod:
    t: dict[str, Any] = term(HOST, {"key": "color", "operator": "In", "values": ["green"]})
    if keys:
        t["matchLabelKeys"] = list(keys)
    spec = {"containers": [], "affinity": {"podAntiAffinity": {REQ: [t]}}}
    meta = {"name": name, "uid": name, "namespace": "default", "labels": labels}
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def test_bound_and_nominated_copies_keep_the_parsed_terms() -> None:
    p = anti_pod("p", {"color": "green"})
    terms = pod_affinity_terms(p)
    assert pod_affinity_terms(p.with_node_name("n1")) is terms
    assert pod_affinity_terms(p.with_nominated_node_name("n1")) is terms
    # The informer's copy after a binding: the same labels and spec but for nodeName.
    bound = dict(p.with_node_name("n1").manifest)
    assert pod_affinity_terms(p.updated(bound)) is terms


def test_replicas_share_one_parse() -> None:
    a, b = anti_pod("a", {"color": "green"}), anti_pod("b", {"color": "green"})
    assert pod_affinity_terms(a) is pod_affinity_terms(b)
    other = Pod({**b.manifest, "metadata": {**b.metadata, "namespace": "other"}})
    (t,) = pod_affinity_terms(other).required_anti_affinity
    assert t.namespaces == frozenset({"other"})  # the term's default namespace is the pod's


def test_a_relabelled_pod_is_parsed_again() -> None:
    p = anti_pod("p", {"color": "green", "team": "a"}, keys=("team",))
    manifest = dict(p.manifest)
    manifest["metadata"] = {**p.metadata, "labels": {"color": "green", "team": "b"}}
    relabelled = p.updated(manifest)
    (before,) = pod_affinity_terms(p).required_anti_affinity
    (after,) = pod_affinity_terms(relabelled).required_anti_affinity
    assert before.selector.matches({"color": "green", "team": "a"})
    assert not after.selector.matches({"color": "green", "team": "a"})
    assert after.selector.matches({"color": "green", "team": "b"})


def _cluster() -> tuple[CacheHandle, InterPodAffinity, Pod]:
    docs = [node_doc(i, "z0", None, True, False) for i in range(6)]
    existing = [anti_pod(f"e{i}", {"color": "green"}) for i in range(3)]
    handle = CacheHandle(cache_with(docs, existing, [1, 2, 4]))
    return handle, new({}, handle), anti_pod("p", {"color": "green"})


def test_one_pass_over_the_generations_per_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    handle, plugin, p = _cluster()
    nodes = handle.snapshot().node_infos
    reads: list[int] = []

    def generation(ni: Any) -> int:
        reads.append(1)
        return int(ni.generation)

    monkeypatch.setattr(node_counts, "_GENERATION", generation)
    state = CycleState()
    _, status = plugin.pre_filter(state, p, nodes)
    assert status is None
    plugin.pre_score(state, p, nodes)  # counts the existing pods' terms (Skip: none weighs)
    assert len(reads) == len(nodes)  # PreFilter's two counts and PreScore's share the pass
    reads.clear()
    plugin.pre_filter(CycleState(), p, nodes)  # the next cycle compares again
    assert len(reads) == len(nodes)


def test_count_maps_laid_out_once_per_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    handle, plugin, p = _cluster()
    snap = handle.snapshot()
    columns = snap.columns
    assert columns is not None
    state = CycleState()
    plugin.pre_filter(state, p, snap.node_infos)
    tables: list[int] = []
    table = columnar._table

    def counting(*args: Any) -> Any:
        tables.append(1)
        return table(*args)

    monkeypatch.setattr(columnar, "_table", counting)
    per_node = [plugin.filter(state, p, ni) for ni in snap.node_infos]
    got: list[Any] = []
    for chunk in np.array_split(columns.all_rows, 3):  # the node search's chunks
        answer = plugin.filter_columns(state, p, NodeRows(columns, chunk))
        assert answer is not None
        codes, statuses = answer
        got += [statuses[c - 1] if c else None for c in codes.tolist()]
    assert got == per_node
    # The incoming pod's anti-affinity and the existing pods', one hostname map each.
    assert len(tables) == 2

    # AddPod (preemption's what-if runs) changes the counts: laid out again.
    free = next(ni for ni, s in zip(snap.node_infos, per_node, strict=True) if s is None)
    plugin.add_pod(state, p, PodInfo(anti_pod("x", {"color": "green"})), free)
    answer = plugin.filter_columns(state, p, NodeRows(columns, columns.all_rows))
    assert answer is not None
    codes, statuses = answer
    assert [statuses[c - 1] if c else None for c in codes.tolist()] == [
        plugin.filter(state, p, ni) for ni in snap.node_infos
    ]
    assert plugin.filter(state, p, free) is not None
    assert len(tables) == 4
