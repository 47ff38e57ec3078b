"""PodTopologySpread's counts kept across cycles (plugins/node_counts) against a recount of
every node (``incremental = False``, as upstream's calPreFilterState and PreScore do), on
random clusters that change between cycles: the same PreFilter/PreScore statuses, the same
per-domain counts in the same order, critical paths, Filter statuses and messages (per node,
batch and columnar), AddPod/RemovePod results, and scores (per node, batch and columnar,
normalized per node and columnar); and the
same placements batch vs per node and kept vs recounted in whole simulations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from incremental_support import (
    HOST,
    RACK,
    ZONE,
    CacheHandle,
    Step,
    apply,
    cache_with,
    node_doc,
    nodes,
    steps,
)
from spread_support import sc

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.cluster.cache import Cache
from wasmsched.config import default_config
from wasmsched.framework.columns import NodeList, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.node_info import PodInfo, Snapshot
from wasmsched.framework.runtime import Framework
from wasmsched.framework.status import Status
from wasmsched.plugins.pod_topology_spread import (
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    PodTopologySpread,
    round_half_away,
)
from wasmsched.plugins.pod_topology_spread.columnar import round_half_away_array
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.simulation import Simulation

SELECTORS: list[Mapping[str, Any] | None] = [
    {"matchLabels": {"app": "a"}},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["x"]}]},
    {},
    None,
]


@st.composite
def existing_pods(draw: st.DrawFn, uid: int) -> Pod:
    labels: dict[str, str] = {}
    app = draw(st.sampled_from(["a", "b", None]))
    if app is not None:
        labels["app"] = app
    if draw(st.booleans()):
        labels["tier"] = "x"
    meta: dict[str, Any] = {
        "name": f"p{uid}",
        "uid": f"u{uid}",
        "namespace": draw(st.sampled_from(["default", "default", "other"])),
        "labels": labels,
    }
    if draw(st.integers(0, 5)) == 0:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": []}})


@st.composite
def constraints(draw: st.DrawFn) -> dict[str, Any]:
    return sc(
        draw(st.integers(1, 3)),
        draw(st.sampled_from([ZONE, HOST, RACK])),
        draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
        draw(st.sampled_from(SELECTORS)),
        min_domains=draw(st.sampled_from([None, 1, 2, 4])),
        affinity_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
        taints_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
        match_label_keys=draw(st.sampled_from([(), ("app",), ("tier", "app")])),
    )


@st.composite
def incoming_pods(draw: st.DrawFn, n: int, pool: Sequence[list[dict[str, Any]]]) -> Pod:
    """A pod with one of the example's few constraint lists (so that cycles share counts),
    its labels, namespace, node selector and tolerations drawn anew."""
    labels = {"app": draw(st.sampled_from(["a", "b"]))}
    if draw(st.booleans()):
        labels["tier"] = "x"
    spec: dict[str, Any] = {"containers": []}
    spread = draw(st.sampled_from(pool))
    if spread:
        spec["topologySpreadConstraints"] = spread
    if draw(st.integers(0, 2)) == 0:
        spec["nodeSelector"] = {"kind": draw(st.sampled_from(["odd", "even"]))}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
    meta = {
        "name": f"in{n}",
        "uid": f"in{n}",
        "namespace": draw(st.sampled_from(["default", "default", "other"])),
        "labels": labels,
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True}
        ],
    }
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


REPLICA_SET = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "rs", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "a"}}},
}


class ObjectsCacheHandle(CacheHandle):
    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return [REPLICA_SET] if kind == "ReplicaSet" else []


def verdict(status: Status | None) -> tuple[Any, ...] | None:
    return None if status is None else (status.code, tuple(status.reasons))


def filter_view(plugin: PodTopologySpread, pod: Pod, snap: Snapshot) -> list[Any]:
    """PreFilter's status and state, then every node's Filter verdict per node and over rows."""
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap.node_infos)
    out: list[Any] = [verdict(status)]
    s = state.get(PRE_FILTER_KEY)
    if s is None:
        return out
    out.append([list(d.items()) for d in s.counts])
    out.append([p.as_tuple() for p in s.paths])
    per_node = [verdict(plugin.filter(state, pod, ni)) for ni in snap.node_infos]
    columns = snap.columns
    assert columns is not None
    answer = plugin.filter_columns(state, pod, NodeRows(columns, columns.all_rows))
    assert answer is not None
    codes, table = answer
    # The very status objects of the per-node form, row by row.
    per_node_ids = [id(plugin.filter(state, pod, ni)) for ni in snap.node_infos]
    assert [id(table[c - 1]) if c else id(None) for c in codes.tolist()] == per_node_ids
    out.append(per_node)
    return out


def add_remove_view(
    plugin: PodTopologySpread, pod: Pod, snap: Snapshot, other: Pod, where: int
) -> list[Any]:
    """AddPod of ``other`` on a node then RemovePod of an existing pod, on cloned states."""
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snap.node_infos)
    if state.get(PRE_FILTER_KEY) is None or not snap.node_infos:
        return [verdict(status)]
    ni = snap.node_infos[where % len(snap.node_infos)]
    added = state.clone()
    out: list[Any] = [
        verdict(plugin.add_pod(added, pod, PodInfo(other.with_node_name(ni.name)), ni))
    ]
    out.append([verdict(plugin.filter(added, pod, n)) for n in snap.node_infos])
    out.append([p.as_tuple() for p in added.get(PRE_FILTER_KEY).paths])
    if ni.pods:
        removed = state.clone()
        out.append(verdict(plugin.remove_pod(removed, pod, ni.pods[0], ni)))
        out.append([verdict(plugin.filter(removed, pod, n)) for n in snap.node_infos])
    return out


def score_view(plugin: PodTopologySpread, pod: Pod, snap: Snapshot, mask: int) -> list[Any]:
    """PreScore over a subset of the nodes, then raw (per node and over rows) and normalized."""
    candidates = [ni for i, ni in enumerate(snap.node_infos) if (mask >> (i % 16)) & 1]
    state = CycleState()
    status = plugin.pre_score(state, pod, candidates)
    out: list[Any] = [verdict(status)]
    columns = snap.columns
    assert columns is not None
    rows = NodeRows(columns, np.array([columns.row_of[ni.name] for ni in candidates], np.intp))
    # PreScore over the Filter search's NodeList takes the candidates' domains from the rows.
    by_rows = CycleState()
    assert verdict(plugin.pre_score(by_rows, pod, NodeList(candidates, rows.rows))) == out[0]
    s = state.get(PRE_SCORE_KEY)
    if s is None:
        return out
    s_rows = by_rows.get(PRE_SCORE_KEY)
    assert [list(d.items()) for d in s_rows.counts] == [list(d.items()) for d in s.counts]
    assert (s_rows.ignored, s_rows.weights) == (s.ignored, s.weights)
    out.append([sorted(d.items()) for d in s.counts])
    out.append(sorted(s.ignored))
    raw = []
    for ni in candidates:
        value, st_ = plugin.score(state, pod, ni)
        assert st_ is None
        raw.append(value)
    scores = [NodeScore(ni.name, v) for ni, v in zip(candidates, raw, strict=True)]
    assert plugin.normalize_score(state, pod, scores) is None
    by_columns = plugin.score_columns(state, pod, rows)
    if by_columns is not None:  # None: counts taken at Score time (the per-node form)
        assert by_columns.tolist() == raw
    normalized = plugin.normalize_rows(state, pod, rows, np.array(raw, np.int64))
    assert normalized is not None
    assert normalized.tolist() == [x.score for x in scores]
    out.append(raw)
    out.append([x.score for x in scores])
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 7).flatmap(lambda n: st.tuples(*(nodes(i) for i in range(n)))),
    st.lists(st.integers(0, 10**6), min_size=1, max_size=20),
    st.lists(st.tuples(st.lists(steps, max_size=4), st.integers(0, 2**16 - 1)), max_size=8),
    st.data(),
)
def test_kept_counts_equal_a_recount_of_every_node(
    node_tuple: tuple[Node, ...],
    pod_seeds: list[int],
    cycles: list[tuple[list[Step], int]],
    data: st.DataObject,
) -> None:
    node_docs = list(node_tuple)
    pods = [data.draw(existing_pods(i)) for i in range(len(pod_seeds))]
    cache = cache_with(node_docs, pods, pod_seeds)
    handle = ObjectsCacheHandle(cache)
    args: dict[str, Any] = {"defaultingType": data.draw(st.sampled_from(["System", "List"]))}
    if args["defaultingType"] == "List":
        args["defaultConstraints"] = [
            sc(1, ZONE, "DoNotSchedule", None),
            sc(2, HOST, "ScheduleAnyway", None),
        ]
    pool = data.draw(st.lists(st.lists(constraints(), max_size=3), min_size=1, max_size=3))
    kept = PodTopologySpread(dict(args), handle)
    recount = PodTopologySpread(dict(args), handle)
    recount.incremental = False
    for n, (changes, mask) in enumerate(cycles):
        for step in changes:
            apply(cache, step, pods, node_docs)
        snap = cache.snapshot()
        pod = data.draw(incoming_pods(n, pool))
        assert filter_view(kept, pod, snap) == filter_view(recount, pod, snap)
        other = pods[mask % len(pods)]
        assert add_remove_view(kept, pod, snap, other, mask) == add_remove_view(
            recount, pod, snap, other, mask
        )
        assert score_view(kept, pod, snap, mask) == score_view(recount, pod, snap, mask)


def test_counts_follow_a_pod_added_between_cycles() -> None:
    # The same kind of pod twice: the second cycle sees the pod placed in between.
    cache = Cache()
    for i in range(3):
        cache.add_node(node_doc(i, f"z{i}", None, True, False))
    handle = CacheHandle(cache)
    plugin = PodTopologySpread({"defaultingType": "List"}, handle)
    pod = Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "in", "namespace": "default", "labels": {"app": "a"}},
            "spec": {
                "topologySpreadConstraints": [sc(1, ZONE, "DoNotSchedule", SELECTORS[0])],
            },
        }
    )
    state = CycleState()
    plugin.pre_filter(state, pod, cache.snapshot().node_infos)
    assert state.get(PRE_FILTER_KEY).counts == [{"z0": 0, "z1": 0, "z2": 0}]
    cache.add_pod(pod.with_node_name("n1"))
    state = CycleState()
    plugin.pre_filter(state, pod, cache.snapshot().node_infos)
    assert state.get(PRE_FILTER_KEY).counts == [{"z0": 0, "z1": 1, "z2": 0}]
    # n1 is now one over the minimum: with maxSkew 1 the pod may not go there again.
    verdicts = [plugin.filter(state, pod, ni) for ni in cache.snapshot().node_infos]
    assert [v is None for v in verdicts] == [True, False, True]


# --- whole simulations ----------------------------------------------------------------


def sim_pod(i: int, spread: Sequence[Mapping[str, Any]], node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}
        ],
        "topologySpreadConstraints": [dict(c) for c in spread],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"p{i}",
            "namespace": "default",
            "labels": {"app": "a" if i % 3 else "b"},
        },
        "spec": spec,
    }


@st.composite
def sim_clusters(draw: st.DrawFn) -> tuple[list[Node], list[dict[str, Any]]]:
    n = draw(st.integers(1, 9))
    node_list = [draw(nodes(i)) for i in range(n)]
    pod_docs = []
    for i in range(draw(st.integers(1, 20))):
        spread = draw(st.lists(constraints(), max_size=2))
        placed = f"n{draw(st.integers(0, n - 1))}" if draw(st.integers(0, 3)) == 0 else ""
        pod_docs.append(sim_pod(i, spread, placed))
    return node_list, pod_docs


def simulate(cluster: tuple[list[Node], list[dict[str, Any]]], seed: int) -> list[Any]:
    node_list, pod_docs = cluster
    objects = ClusterObjects(nodes=node_list, pods=[Pod(d) for d in pod_docs], others=[])
    sim = Simulation(objects, default_config(), in_tree_registry(), seed=seed)
    result = sim.run()
    sim.close()
    return [(o.pod.name, o.result, o.node, o.message) for o in result.outcomes]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sim_clusters(), st.integers(0, 3))
def test_placements_alike_batch_per_node_kept_and_recounted(
    cluster: tuple[list[Node], list[dict[str, Any]]], seed: int
) -> None:
    expected = simulate(cluster, seed)
    try:
        Framework.use_batch = False
        assert simulate(cluster, seed) == expected
        PodTopologySpread.incremental = False
        assert simulate(cluster, seed) == expected
    finally:
        Framework.use_batch = True
        PodTopologySpread.incremental = True


@given(
    st.lists(
        st.floats(-1e9, 1e9, allow_nan=False) | st.integers(-(10**6), 10**6).map(lambda n: n / 2)
    )
)
def test_round_half_away_array_rounds_as_round_half_away(xs: list[float]) -> None:
    got = round_half_away_array(np.array(xs, np.float64)).tolist()
    assert got == [round_half_away(x) for x in xs]
