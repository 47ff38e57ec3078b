"""PodTopologySpread's PreScore, Score and NormalizeScore.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/scoring.go: ScheduleAnyway constraints
score. Fewer matching pods in the node's domains scores higher, each constraint weighted by
``log(domains + 2)`` (topologyNormalizingWeight).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from wasmsched.framework.columns import NodeRows
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.node_counts import Contribution
from wasmsched.plugins.pod_topology_spread.columnar import (
    by_name,
    candidate_domains,
    domains,
    round_half_away_array,
)
from wasmsched.plugins.pod_topology_spread.common import (
    _SPREAD,
    LABEL_HOSTNAME,
    NAME,
    SCHEDULE_ANYWAY,
    Constraint,
    SpreadBase,
    _has_all_keys,
    _not_found,
    count_matching,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.api.selectors import LabelSelector
    from wasmsched.framework.columns import BoolArray, IntArray
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import NodeScore
    from wasmsched.framework.node_info import NodeInfo

PRE_SCORE_KEY = "PreScore" + NAME
_NONE: dict[str, int] = {}


def round_half_away(x: float) -> int:
    """math.Round of Go: halves round away from zero."""
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1
    return int(r)


# How Score finds a constraint's count for a node: its domain's count, the node's own
# matching pods counted at Score (as upstream), or those kept across cycles, by node name.
_DOMAIN = 0
_HOST = 1
_HOST_KEPT = 2


class _ScoredConstraints:
    """PodTopologySpread's PreScore state (scoring.go ``preScoreState``): the pod's soft
    constraints, their weights, the matching pods per domain, the nodes left out."""

    __slots__ = ("constraints", "counts", "ignored", "namespace", "rows", "weights")

    def __init__(
        self,
        constraints: list[Constraint],
        counts: list[dict[str, int]],
        weights: list[float],
        ignored: set[str],
        namespace: str,
        host_counts: dict[int, dict[str, int]] | None = None,
    ) -> None:
        self.constraints = constraints
        self.counts = counts
        self.weights = weights
        self.ignored = ignored
        self.namespace = namespace
        self.rows: list[tuple[str, int, LabelSelector, dict[str, int], float, float]] = []
        for i, c in enumerate(constraints):
            mode = _DOMAIN
            d = counts[i]
            if c.topology_key == LABEL_HOSTNAME:
                mode = _HOST
                if host_counts is not None:
                    mode, d = _HOST_KEPT, host_counts[i]
            self.rows.append(
                (c.topology_key, mode, c.selector, d, weights[i], float(c.max_skew - 1))
            )

    def clone(self) -> _ScoredConstraints:
        return self


def _node_score(s: _ScoredConstraints, node_info: NodeInfo) -> int:
    """scoring.go: Score of a node that PreScore did not ignore."""
    labels = node_info.node.labels
    total = 0.0
    for key, mode, selector, counts, weight, skew_bonus in s.rows:
        value = labels.get(key)
        if value is None:
            continue
        if mode == _DOMAIN:
            cnt = counts.get(value, 0)
        elif mode == _HOST_KEPT:
            cnt = counts.get(node_info.name, 0)
        else:
            cnt = count_matching(node_info.pods, selector, s.namespace)
        # scoreForCount: cnt * weight + (maxSkew - 1), summed in constraint order.
        total += cnt * weight + skew_bonus
    return round_half_away(total)


# Scores below 2**40 keep ``MaxNodeScore * (max + min - score)`` well inside int64.
_INT_SAFE = 1 << 40


def _ignored_rows(s: _ScoredConstraints, rows: NodeRows) -> BoolArray | None:
    """Which rows PreScore ignored (by node name, as Score), or None when none."""
    if not s.ignored:
        return None
    row_of = rows.columns.row_of
    found = [r for r in map(row_of.get, s.ignored) if r is not None]
    mask: BoolArray = np.isin(rows.rows, np.array(found, np.intp))
    return mask


class Scoring(SpreadBase):
    """PodTopologySpread's PreScore, Score and NormalizeScore (scoring.go)."""

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (podtopologyspread/scoring.go: PodTopologySpread.PreScore): the pod's
        ScheduleAnyway constraints, their weights and the matching pods per candidate domain
        (initPreScoreState); Skip when there are none.
        """
        all_nodes = self.handle.snapshot().node_infos if self.handle is not None else nodes
        if not all_nodes:
            return self._skip
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        except ValueError as e:
            return Status(
                Code.ERROR,
                f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}",
            )
        if not constraints:
            return self._skip
        # Only non-system-default spreading requires every topology label: this lets nodes
        # without a zone label still get hostname spreading.
        require_all = bool(pod.spec.get(_SPREAD)) or not self.system_defaulted
        keys = [c.topology_key for c in constraints]
        counts: list[dict[str, int]] = [{} for _ in constraints]
        by_domain = [
            (i, c.topology_key)
            for i, c in enumerate(constraints)
            if c.topology_key != LABEL_HOSTNAME
        ]
        ignored: set[str] = set()
        columns = self._candidate_columns(nodes)
        if columns is not None:
            ignored = candidate_domains(columns, nodes, keys, by_domain, require_all, counts)
        for ni in nodes if columns is None else ():
            labels = ni.node.labels
            if require_all:
                for k in keys:
                    if k not in labels:
                        break
                else:
                    for i, key in by_domain:
                        counts[i].setdefault(labels.get(key, ""), 0)
                    continue
                ignored.add(ni.name)
                continue
            for i, key in by_domain:
                counts[i].setdefault(labels.get(key, ""), 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(counts[i])
            if c.topology_key == LABEL_HOSTNAME:
                size = len(nodes) - len(ignored)
            weights.append(math.log(size + 2))
        host_counts = None
        if not self.incremental:
            if by_domain:
                self._count_domains(pod, constraints, by_domain, counts, all_nodes, require_all)
        else:
            host_counts = self._kept_counts(pod, constraints, counts, all_nodes, require_all, state)
        state.write(
            PRE_SCORE_KEY,
            _ScoredConstraints(constraints, counts, weights, ignored, pod.namespace, host_counts),
        )
        return None

    def _candidate_columns(self, nodes: Sequence[NodeInfo]) -> NodeRows | None:
        """The candidates as rows of the snapshot's columns, when the Filter search found
        them there (a NodeList, framework/columns), else None."""
        positions = getattr(nodes, "rows", None)
        if self.handle is None or positions is None or len(positions) != len(nodes):
            return None
        columns = self.handle.snapshot().columns
        if columns is None or not len(nodes):
            return None
        infos = columns.infos
        if infos[positions[0]] is not nodes[0] or infos[positions[-1]] is not nodes[-1]:
            return None
        return NodeRows(columns, positions)

    def _kept_counts(
        self,
        pod: Pod,
        constraints: list[Constraint],
        counts: list[dict[str, int]],
        all_nodes: Sequence[NodeInfo],
        require_all: bool,
        cycle: object = None,
    ) -> dict[int, dict[str, int]]:
        """``_count_domains`` and Score's per-node counts from the counts kept across
        cycles; returns the hostname constraints' matching pods per node name."""
        keys = [c.topology_key for c in constraints]
        required = pod.required_node_affinity
        always_affinity = required.is_empty
        ns = pod.namespace
        hosts = [
            (i, c.selector) for i, c in enumerate(constraints) if c.topology_key == LABEL_HOSTNAME
        ]
        rows = [
            (
                i,
                c.topology_key,
                c.selector,
                (c.honor_node_affinity and not always_affinity) or c.honor_node_taints,
                c,
            )
            for i, c in enumerate(constraints)
            if c.topology_key != LABEL_HOSTNAME
        ]

        def contribution(ni: NodeInfo) -> tuple[Contribution, ...]:
            """Score's own count of the node's matching pods for each hostname constraint
            (map i, by node name), and what PreScore's processAllNode adds to the node's
            domain for the others (map i)."""
            pods = ni.pods
            if not pods:
                return ()
            out: list[Contribution] = []
            for i, selector in hosts:
                out.append((i, LABEL_HOSTNAME, ni.name, count_matching(pods, selector, ns)))
            node = ni.node
            labels = node.labels
            if rows and (not require_all or _has_all_keys(labels, keys)):
                for i, key, selector, check, c in rows:
                    if check and not c.includes_node(pod, node, required):
                        continue
                    value = labels.get(key, "")
                    out.append((i, key, value, count_matching(pods, selector, ns)))
            return tuple(out)

        tag = SCHEDULE_ANYWAY + (" all" if require_all else "")
        inc = self._node_counts(
            tag, pod, constraints, all_nodes, len(constraints), contribution, cycle
        )
        totals = inc.totals
        for i, key, *_ in rows:
            matched = totals[i].get(key)
            if matched:
                d = counts[i]
                for value in d:
                    d[value] = matched.get(value, 0)
        return {i: dict(totals[i].get(LABEL_HOSTNAME, _NONE)) for i, _ in hosts}

    @staticmethod
    def _count_domains(
        pod: Pod,
        constraints: list[Constraint],
        by_domain: list[tuple[int, str]],
        counts: list[dict[str, int]],
        all_nodes: Sequence[NodeInfo],
        require_all: bool,
    ) -> None:
        """Adds the matching pods of every eligible node to its (candidate) domains."""
        keys = [c.topology_key for c in constraints]
        required = pod.required_node_affinity
        always_affinity = required.is_empty
        ns = pod.namespace
        for ni in all_nodes:
            pods = ni.pods
            if not pods:
                continue
            node = ni.node
            labels = node.labels
            if require_all and not _has_all_keys(labels, keys):
                continue
            for i, key in by_domain:
                d = counts[i]
                value = labels.get(key, "")
                if value not in d:
                    continue  # a domain of no candidate node does not matter
                c = constraints[i]
                if (
                    (c.honor_node_affinity and not always_affinity) or c.honor_node_taints
                ) and not c.includes_node(pod, node, required):
                    continue
                d[value] += count_matching(pods, c.selector, ns)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (scoring.go: PodTopologySpread.Score): the weighted matching pods in the node's
        domains (fewer is better after NormalizeScore).
        """
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, _not_found(PRE_SCORE_KEY)
        if node_info.name in s.ignored:
            return 0, None
        return _node_score(s, node_info), None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` over the columns (the framework's columnar Score form): each
        constraint's count gathered by the rows' domains (or node names), then the same
        float steps as Score; None when a count is taken at Score time or too large for
        float64 (the per-node form answers)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        columns = rows.columns
        positions = rows.rows
        total = np.zeros(len(positions), np.float64)
        for key, mode, _, counts, weight, skew_bonus in s.rows:
            if mode == _HOST:
                return None
            dom = domains(columns, key)
            cnt = (
                dom.gather(counts, positions)
                if mode == _DOMAIN
                else by_name(columns, counts, positions)
            )
            if cnt is None:
                return None
            # scoreForCount summed in constraint order, skipping a node without the label.
            total = np.where(dom.ids[positions] >= 0, total + (cnt * weight + skew_bonus), total)
        scores = round_half_away_array(total)
        ignored = _ignored_rows(s, rows)
        if ignored is not None:
            scores[ignored] = 0
        return scores

    def normalize_rows(
        self, state: CycleState, pod: Pod, rows: NodeRows, values: IntArray
    ) -> IntArray | None:
        """``normalize_score`` over the columnar Score form's array; None without a
        PreScore state or for scores too large for int64 (the per-node form answers)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        if len(values) and (int(values.max()) >= _INT_SAFE or int(values.min()) <= -_INT_SAFE):
            return None
        ignored = _ignored_rows(s, rows)
        kept = values if ignored is None else values[~ignored]
        if not len(kept):
            return np.zeros(len(values), np.int64)
        min_score = int(kept.min())
        max_score = max(0, int(kept.max()))
        if max_score == 0:
            out = np.full(len(values), MAX_NODE_SCORE, np.int64)
        else:
            # Fewer matching pods is better: invert within [min, max] (Python's // on ints).
            out = (MAX_NODE_SCORE * (max_score + min_score - values)) // max_score
        if ignored is not None:
            out[ignored] = 0
        return out

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """NormalizeScore (scoring.go: PodTopologySpread.NormalizeScore): inverts the scores
        within [min, max] onto [0, MaxNodeScore]; ignored nodes get 0.
        """
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return _not_found(PRE_SCORE_KEY)
        ignored = s.ignored
        min_score = math.inf
        max_score = 0
        values = [ns.score for ns in scores if ns.name not in ignored] if ignored else None
        if values is None:
            values = [ns.score for ns in scores]
        if values:
            min_score = min(values)
            max_score = max(0, max(values))
        if not ignored:
            if max_score == 0:
                for ns in scores:
                    ns.score = MAX_NODE_SCORE
                return None
            base = max_score + int(min_score)
            for ns in scores:
                ns.score = MAX_NODE_SCORE * (base - ns.score) // max_score
            return None
        for ns in scores:
            if ns.name in ignored:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                # Fewer matching pods is better: invert within [min, max].
                ns.score = MAX_NODE_SCORE * (max_score + int(min_score) - ns.score) // max_score
        return None

    def score_extensions(self) -> Scoring:
        """ScoreExtensions (scoring.go): the plugin itself (NormalizeScore)."""
        return self
