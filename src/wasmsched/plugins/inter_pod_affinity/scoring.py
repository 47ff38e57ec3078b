"""InterPodAffinity's PreScore, Score and NormalizeScore.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/scoring.go: PreScore sums, per topology
pair, the weights of the preferred terms of the incoming pod matched by existing pods, and of
existing pods' preferred terms (and, with ``hardPodAffinityWeight``, their required affinity
terms) matched by the incoming pod (processExistingPod); Score adds up the node's pairs and
NormalizeScore scales them to [0, MaxNodeScore].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from wasmsched.framework.columns import IntArray, NodeRows
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.inter_pod_affinity.common import (
    NAME,
    AffinityBase,
    Contribution,
    Counts,
    _Memo,
    _not_found,
    _signature,
)
from wasmsched.plugins.inter_pod_affinity.terms import _EMPTY_LABELS, _PREFERRED, pod_affinity_terms
from wasmsched.plugins.pod_topology_spread.columnar import domains

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import NodeScore
    from wasmsched.framework.node_info import NodeInfo

PRE_SCORE_KEY = "PreScore" + NAME
# Integers below 2**53 convert to float64 exactly, so numpy's division rounds as Python's.
_FLOAT_EXACT = 1 << 53


class _TopologyScores:
    """InterPodAffinity's PreScore state (scoring.go ``preScoreState.topologyScore``):
    the score each topology pair earns (``{topologyKey: {value: score}}``) from the
    terms of the pod and of the existing pods."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: Counts) -> None:
        self.topology_score = topology_score

    def clone(self) -> _TopologyScores:
        return self


class Scoring(AffinityBase):
    """InterPodAffinity's PreScore, Score and NormalizeScore (scoring.go)."""

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (interpodaffinity/scoring.go: InterPodAffinity.PreScore): the summed term
        weights per topology pair; Skip when no node contributes.
        """
        affinity = pod.spec.get("affinity") or {}
        has_constraints = bool(
            ((affinity.get("podAffinity") or {}).get(_PREFERRED))
            or ((affinity.get("podAntiAffinity") or {}).get(_PREFERRED))
        )
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return self._skip
        terms = pod_affinity_terms(pod)
        if terms.error:
            return Status(Code.ERROR, f"failed to parse pod: {terms.error}")
        # Unless the pod has preferred terms, only pods with affinity matter.
        if has_constraints:
            to_process: Sequence[NodeInfo] = (
                self.handle.snapshot().node_infos if self.handle is not None else nodes
            )
        else:
            to_process, _ = self._snapshot_lists(nodes)
        if not to_process:
            return self._skip  # no node contributes
        namespaces = self._namespaces()
        preferred = tuple(t.with_namespaces(namespaces) for t in terms.preferred_affinity)
        preferred_anti = tuple(t.with_namespaces(namespaces) for t in terms.preferred_anti_affinity)
        ns_labels = namespaces.get(pod.namespace, _EMPTY_LABELS)
        hard_weight = self.hard_pod_affinity_weight
        memo = _Memo(pod, ns_labels)

        def contribution(ni: NodeInfo) -> tuple[Contribution, ...]:
            labels = ni.node.labels
            if not labels:
                return ()
            out: list[Contribution] = []
            for pi in ni.pods if has_constraints else ni.pods_with_affinity:
                existing = pi.pod
                if has_constraints:
                    for t in preferred:
                        if t.matches(existing, None):
                            _contribute(out, labels, t.topology_key, t.weight)
                    for t in preferred_anti:
                        if t.matches(existing, None):
                            _contribute(out, labels, t.topology_key, -t.weight)
                if not pi.has_affinity:
                    continue
                eterms = pod_affinity_terms(existing)
                if hard_weight > 0:
                    for t in eterms.required_affinity:
                        if memo[t]:
                            _contribute(out, labels, t.topology_key, hard_weight)
                for t in eterms.preferred_affinity:
                    if memo[t]:
                        _contribute(out, labels, t.topology_key, t.weight)
                for t in eterms.preferred_anti_affinity:
                    if memo[t]:
                        _contribute(out, labels, t.topology_key, -t.weight)
            return tuple(out)

        key = ("score", has_constraints, preferred, preferred_anti, *_signature(pod, ns_labels))
        inc = self._counts(key, 1, self._tracked(to_process), contribution, state)
        # k8s skips when no node had a matching term (index == -1).
        if not inc.contributing:
            return self._skip
        state.write(PRE_SCORE_KEY, _TopologyScores(inc.snapshot(0)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (scoring.go: InterPodAffinity.Score): the sum of the node's topology pairs."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, _not_found(PRE_SCORE_KEY)
        labels = node_info.node.labels
        total = 0
        for key, values in s.topology_score.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total, None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` of every row (the framework's vectorized Score form): a node's score
        depends on its values of the scored topology keys alone, so each key's scores are
        gathered by the rows' values (or, for counts too large, summed once per distinct
        combination of them). None without PreScore's state (the per-node form
        reports the error)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        # Each key's counts gathered by the rows' interned label values (shared with
        # PodTopologySpread), when they fit float64 exactly; else row by row.
        out_array = np.zeros(len(rows), np.int64)
        for key, values in s.topology_score.items():
            gathered = domains(rows.columns, key).gather(values, rows.rows)
            if gathered is None:
                break
            out_array += gathered
        else:
            return out_array
        pairs = list(s.topology_score.items())
        keys = [key for key, _ in pairs]
        memo: dict[tuple[str | None, ...], int] = {}
        out: list[int] = []
        append = out.append
        for ni in rows.infos():
            domain = tuple(map(ni.node.labels.get, keys))
            total = memo.get(domain)
            if total is None:
                total = 0
                for value, (_, values) in zip(domain, pairs, strict=True):
                    if value is not None:
                        total += values.get(value, 0)
                memo[domain] = total
            append(total)
        return np.array(out, dtype=np.int64)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """NormalizeScore (scoring.go: InterPodAffinity.NormalizeScore): min-max scaling onto
        [0, MaxNodeScore].
        """
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return _not_found(PRE_SCORE_KEY)
        if not s.topology_score or not scores:
            return None
        lo = min(ns.score for ns in scores)
        hi = max(ns.score for ns in scores)
        diff = hi - lo
        for ns in scores:
            # As k8s: float64(MaxNodeScore) * (float64(score-min) / float64(max-min)), truncated.
            ns.score = int(float(MAX_NODE_SCORE) * ((ns.score - lo) / diff)) if diff > 0 else 0
        return None

    def normalize_rows(
        self, state: CycleState, pod: Pod, rows: NodeRows, values: IntArray
    ) -> IntArray | None:
        """``normalize_score`` over the columnar Score form's array: the same float64 steps
        (float64 division of exact integers, times MaxNodeScore, truncated); None without
        PreScore's state or for scores whose differences float64 would round (the per-node
        form answers)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        if not s.topology_score or not len(values):
            return values
        lo = int(values.min())
        diff = int(values.max()) - lo
        if diff >= _FLOAT_EXACT:
            return None
        if diff <= 0:
            return np.zeros(len(values), np.int64)
        shares = (values - lo).astype(np.float64) / float(diff)
        out: IntArray = (float(MAX_NODE_SCORE) * shares).astype(np.int64)
        return out

    def score_extensions(self) -> Scoring:
        """ScoreExtensions (scoring.go): the plugin itself (NormalizeScore)."""
        return self


def _contribute(out: list[Contribution], labels: Mapping[str, str], key: str, weight: int) -> None:
    value = labels.get(key)
    if value is not None:
        out.append((0, key, value, weight))
