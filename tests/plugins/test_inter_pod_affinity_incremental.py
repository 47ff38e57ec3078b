"""InterPodAffinity's counts kept across cycles (plugins/node_counts, with NodeChanges on the
snapshot's node list) against a fresh plugin in every cycle (which counts every node, as
upstream's PreFilter and PreScore do), on random clusters that change between cycles: the
same PreFilter/PreScore statuses, Filter verdicts (per node and batch) and scores (per node
and batch, normalized); and the same placements batch vs per node in whole simulations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from affinity_support import term, weighted
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from incremental_support import HOST, RACK, ZONE, CacheHandle, Step, apply, cache_with, nodes, steps

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.framework.columns import NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.node_info import Snapshot
from wasmsched.framework.runtime import Framework
from wasmsched.framework.status import Status
from wasmsched.plugins.inter_pod_affinity import PRE_FILTER_KEY, PRE_SCORE_KEY, InterPodAffinity
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.simulation import Simulation

SELECTORS = [
    {"key": "app", "operator": "In", "values": ["a"]},
    {"key": "app", "operator": "Exists"},
    {"key": "tier", "operator": "In", "values": ["x"]},
]
REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"


@st.composite
def terms(draw: st.DrawFn) -> dict[str, Any]:
    namespaces = draw(st.sampled_from([(), ("default", "other")]))
    return term(
        draw(st.sampled_from([ZONE, HOST, RACK])),
        draw(st.sampled_from(SELECTORS)),
        namespaces=namespaces,
    )


@st.composite
def affinities(draw: st.DrawFn) -> dict[str, Any]:
    """podAffinity / podAntiAffinity with required and preferred terms, each maybe empty."""
    out: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        section: dict[str, Any] = {}
        req = draw(st.lists(terms(), max_size=2))
        if req:
            section[REQ] = req
        pref = draw(st.lists(st.tuples(st.integers(1, 100), terms()), max_size=2))
        if pref:
            section[PREF] = [weighted(w, t) for w, t in pref]
        if section:
            out[kind] = section
    return out


def pod_doc(name: str, ns: str, labels: dict[str, str], affinity: dict[str, Any]) -> Pod:
    spec: dict[str, Any] = {"containers": []}
    if affinity:
        spec["affinity"] = affinity
    meta = {"name": name, "uid": name, "namespace": ns, "labels": labels}
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


@st.composite
def labelled(draw: st.DrawFn) -> dict[str, str]:
    labels: dict[str, str] = {}
    app = draw(st.sampled_from(["a", "b", None]))
    if app is not None:
        labels["app"] = app
    if draw(st.booleans()):
        labels["tier"] = "x"
    return labels


@st.composite
def existing_pods(draw: st.DrawFn, uid: int) -> Pod:
    affinity = draw(affinities()) if draw(st.integers(0, 2)) == 0 else {}
    ns = draw(st.sampled_from(["default", "default", "other"]))
    return pod_doc(f"u{uid}", ns, draw(labelled()), affinity)


def verdict(status: Status | None) -> tuple[Any, ...] | None:
    return None if status is None else (status.code, tuple(status.reasons))


def view(plugin: InterPodAffinity, pod: Pod, snap: Snapshot, mask: int) -> list[Any]:
    """PreFilter, Filter (per node and over rows), PreScore over a subset, Score (per node
    and over rows) and Normalize."""
    out: list[Any] = []
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap.node_infos)
    out.append(verdict(status))
    if state.get(PRE_FILTER_KEY) is not None:
        per_node = [verdict(plugin.filter(state, pod, ni)) for ni in snap.node_infos]
        columns = snap.columns
        assert columns is not None
        answer = plugin.filter_columns(state, pod, NodeRows(columns, columns.all_rows))
        assert answer is not None
        codes, table = answer
        assert [verdict(table[c - 1]) if c else None for c in codes.tolist()] == per_node
        out.append(per_node)
    candidates = [ni for i, ni in enumerate(snap.node_infos) if (mask >> (i % 16)) & 1]
    state = CycleState()
    out.append(verdict(plugin.pre_score(state, pod, candidates)))
    if state.get(PRE_SCORE_KEY) is not None:
        raw = [plugin.score(state, pod, ni)[0] for ni in candidates]
        columns = snap.columns
        assert columns is not None
        rows = np.array([columns.row_of[ni.name] for ni in candidates], np.intp)
        batch_scores = plugin.score_columns(state, pod, NodeRows(columns, rows))
        assert batch_scores is not None
        assert batch_scores.tolist() == raw
        scores = [NodeScore(ni.name, v) for ni, v in zip(candidates, raw, strict=True)]
        assert plugin.normalize_score(state, pod, scores) is None
        normalized = plugin.normalize_rows(state, pod, NodeRows(columns, rows), batch_scores)
        assert normalized is not None
        assert normalized.tolist() == [x.score for x in scores]
        out.append((raw, [x.score for x in scores]))
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 7).flatmap(lambda n: st.tuples(*(nodes(i) for i in range(n)))),
    st.lists(st.integers(0, 10**6), min_size=1, max_size=16),
    st.lists(st.tuples(st.lists(steps, max_size=4), st.integers(0, 2**16 - 1)), max_size=8),
    st.data(),
)
def test_kept_counts_equal_a_fresh_count_in_every_cycle(
    node_tuple: tuple[Node, ...],
    pod_seeds: list[int],
    cycles: list[tuple[list[Step], int]],
    data: st.DataObject,
) -> None:
    node_docs = list(node_tuple)
    pods = [data.draw(existing_pods(i)) for i in range(len(pod_seeds))]
    cache = cache_with(node_docs, pods, pod_seeds)
    handle = CacheHandle(cache)
    # A few kinds of incoming pod, so that cycles share kept counts.
    pool: Sequence[dict[str, Any]] = data.draw(st.lists(affinities(), min_size=1, max_size=3))
    kept = InterPodAffinity({}, handle)
    for n, (changes, mask) in enumerate(cycles):
        for step in changes:
            apply(cache, step, pods, node_docs)
        snap = cache.snapshot()
        pod = pod_doc(
            f"in{n}",
            data.draw(st.sampled_from(["default", "other"])),
            data.draw(labelled()),
            data.draw(st.sampled_from(list(pool))),
        )
        assert view(kept, pod, snap, mask) == view(InterPodAffinity({}, handle), pod, snap, mask)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 7).flatmap(lambda n: st.tuples(*(nodes(i) for i in range(n)))),
    st.lists(st.tuples(affinities(), labelled(), st.integers(0, 20)), min_size=1, max_size=16),
    st.integers(0, 3),
)
def test_placements_alike_batch_and_per_node(
    node_tuple: tuple[Node, ...],
    specs: list[tuple[dict[str, Any], dict[str, str], int]],
    seed: int,
) -> None:
    pod_list = []
    for i, (affinity, labels, where) in enumerate(specs):
        p = pod_doc(f"p{i}", "default", labels, affinity)
        if where < len(node_tuple):  # some pods already run, the rest are scheduled
            p = p.with_node_name(node_tuple[where].name)
        pod_list.append(p)
    cluster = ClusterObjects(nodes=list(node_tuple), pods=pod_list, others=[])

    def simulate() -> list[Any]:
        sim = Simulation(cluster, default_config(), in_tree_registry(), seed=seed)
        result = sim.run()
        sim.close()
        return [(o.pod.name, o.result, o.node, o.message) for o in result.outcomes]

    expected = simulate()
    try:
        Framework.use_batch = False
        assert simulate() == expected
    finally:
        Framework.use_batch = True
