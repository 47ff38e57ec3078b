"""PodTopologySpread's PreFilter, Filter and PreFilterExtensions.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/filtering.go: DoNotSchedule constraints
filter. PreFilter (calPreFilterState) counts the matching pods per topology domain, one count
map per constraint, over the nodes that pass the constraint's node inclusion policies, and keeps
each constraint's two smallest domains (criticalPaths); Filter rejects a node when placing the
pod there would make ``matching(domain) + self - globalMin > maxSkew``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from wasmsched.framework.status import Code, Status
from wasmsched.plugins.node_counts import Contribution
from wasmsched.plugins.pod_topology_spread.columnar import domains
from wasmsched.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    NAME,
    Constraint,
    SpreadBase,
    _has_all_keys,
    _not_found,
    count_matching,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.columns import BoolArray, IntArray, NodeRows
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo, PodInfo

PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_MAX_INT32 = 2**31 - 1
_NONE: dict[str, int] = {}


class CriticalPaths:
    """The two domains with the fewest matching pods; ``n0`` is always the minimum.

    Kept exactly as k8s keeps its ``criticalPaths`` so that AddPod/RemovePod during preemption
    move the minimum the same way.
    """

    __slots__ = ("n0", "n1", "v0", "v1")

    def __init__(self) -> None:
        self.v0 = ""
        self.n0 = _MAX_INT32
        self.v1 = ""
        self.n1 = _MAX_INT32

    def update(self, value: str, num: int) -> None:
        """criticalPaths.update (podtopologyspread/filtering.go): records ``num`` pods in
        domain ``value``, keeping the two smallest domains in order.
        """
        if value == self.v0:
            self.n0 = num
        elif value == self.v1:
            self.n1 = num
        else:
            if num < self.n0:
                self.v1, self.n1 = self.v0, self.n0
                self.v0, self.n0 = value, num
            elif num < self.n1:
                self.v1, self.n1 = value, num
            return
        if self.n0 > self.n1:
            self.v0, self.n0, self.v1, self.n1 = self.v1, self.n1, self.v0, self.n0

    def copy(self) -> CriticalPaths:
        """A copy, for preFilterState.Clone."""
        c = CriticalPaths()
        c.v0, c.n0, c.v1, c.n1 = self.v0, self.n0, self.v1, self.n1
        return c

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        """((value, count), (value, count)) of the two smallest domains."""
        return (self.v0, self.n0), (self.v1, self.n1)


class _PreFilterState:
    """Counts per constraint (domain value -> matching pods) and each constraint's minimum."""

    __slots__ = ("constraints", "counts", "paths", "rows", "self_match")

    def __init__(
        self,
        constraints: list[Constraint],
        counts: list[dict[str, int]],
        paths: list[CriticalPaths],
        self_match: list[int],
    ) -> None:
        self.constraints = constraints
        self.counts = counts
        self.paths = paths
        self.self_match = self_match
        # What Filter reads per constraint, hoisted so that a node costs dict lookups only.
        self.rows = [
            (c.topology_key, c.max_skew - self_match[i], c.min_domains, counts[i], paths[i])
            for i, c in enumerate(constraints)
        ]

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.constraints,
            [dict(d) for d in self.counts],
            [p.copy() for p in self.paths],
            self.self_match,
        )


class Filtering(SpreadBase):
    """PodTopologySpread's PreFilter, Filter and AddPod/RemovePod (filtering.go)."""

    _unschedulable: Status
    _missing_label: Status

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[None, Status | None]:
        """PreFilter (podtopologyspread/filtering.go: PodTopologySpread.PreFilter): the pod's
        DoNotSchedule constraints and the per-domain counts (calPreFilterState); Skip when none.
        """
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ValueError as e:
            return None, Status(
                Code.ERROR,
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}",
            )
        if not constraints:
            return None, self._skip
        state.write(PRE_FILTER_KEY, self._pre_filter_state(pod, constraints, nodes, state))
        return None, None

    def _pre_filter_state(
        self,
        pod: Pod,
        constraints: list[Constraint],
        nodes: Sequence[NodeInfo],
        cycle: object = None,
    ) -> _PreFilterState:
        if not self.incremental:
            return self._pre_filter_state_full(pod, constraints, nodes)
        keys = [c.topology_key for c in constraints]
        required = pod.required_node_affinity
        always_affinity = required.is_empty
        ns = pod.namespace
        # (constraint index, key, selector, whether the node inclusion policies need checking)
        rows = [
            (
                i,
                c.topology_key,
                c.selector,
                (c.honor_node_affinity and not always_affinity) or c.honor_node_taints,
                c,
            )
            for i, c in enumerate(constraints)
        ]

        def contribution(ni: NodeInfo) -> tuple[Contribution, ...]:
            """What calPreFilterState's processNode counts for one node: per constraint,
            the node's domain (map 2i+1, amount 1) and its matching pods (map 2i)."""
            node = ni.node
            labels = node.labels
            for k in keys:
                if k not in labels:
                    return ()
            pods = ni.pods
            out: list[Contribution] = []
            for i, key, selector, check, c in rows:
                if check and not c.includes_node(pod, node, required):
                    continue
                value = labels[key]
                out.append((2 * i + 1, key, value, 1))
                if pods:
                    out.append((2 * i, key, value, count_matching(pods, selector, ns)))
            return tuple(out)

        inc = self._node_counts(
            DO_NOT_SCHEDULE, pod, constraints, nodes, 2 * len(constraints), contribution, cycle
        )
        totals = inc.totals
        counts: list[dict[str, int]] = [{} for _ in constraints]
        matched = [totals[2 * i].get(k, _NONE) for i, k in enumerate(keys)]
        # The domains in the order a full recount meets them (the first of their nodes in
        # snapshot order), so that CriticalPaths breaks ties as it does: stop once every
        # domain has been met.
        missing = sum(len(totals[2 * i + 1].get(k, _NONE)) for i, k in enumerate(keys))
        if missing:
            contribution_of = inc.contribution
            for ni in nodes:
                for which, _, value, _ in contribution_of(ni.name):
                    if which & 1:
                        i = which >> 1
                        d = counts[i]
                        if value not in d:
                            d[value] = matched[i].get(value, 0)
                            missing -= 1
                if not missing:
                    break
        return self._with_paths(pod, constraints, counts)

    def _pre_filter_state_full(
        self, pod: Pod, constraints: list[Constraint], nodes: Sequence[NodeInfo]
    ) -> _PreFilterState:
        """calPreFilterState recounting every node, as upstream does in each cycle."""
        keys = [c.topology_key for c in constraints]
        counts: list[dict[str, int]] = [{} for _ in constraints]
        required = pod.required_node_affinity
        always_affinity = required.is_empty
        ns = pod.namespace
        # (count map, key, selector, whether the node inclusion policies need checking)
        rows = [
            (
                counts[i],
                c.topology_key,
                c.selector,
                (c.honor_node_affinity and not always_affinity) or c.honor_node_taints,
                c,
            )
            for i, c in enumerate(constraints)
        ]
        for ni in nodes:
            node = ni.node
            labels = node.labels
            for k in keys:
                if k not in labels:
                    break
            else:
                pods = ni.pods
                for d, key, selector, check, c in rows:
                    if check and not c.includes_node(pod, node, required):
                        continue
                    value = labels[key]
                    d[value] = d.get(value, 0) + (count_matching(pods, selector, ns) if pods else 0)
        return self._with_paths(pod, constraints, counts)

    @staticmethod
    def _with_paths(
        pod: Pod, constraints: list[Constraint], counts: list[dict[str, int]]
    ) -> _PreFilterState:
        """The state with each constraint's critical paths (two smallest domains)."""
        paths = []
        for d in counts:
            cp = CriticalPaths()
            for value, num in d.items():
                cp.update(value, num)
            paths.append(cp)
        labels = pod.labels
        self_match = [1 if c.selector.matches(labels) else 0 for c in constraints]
        return _PreFilterState(constraints, counts, paths, self_match)

    def pre_filter_extensions(self) -> Filtering:
        """PreFilterExtensions (filtering.go): the plugin itself (AddPod/RemovePod)."""
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """AddPod (filtering.go: PodTopologySpread.AddPod): counts a pod placed on ``node_info``."""
        return self._update_with_pod(state, pod, pod_info_to_add.pod, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """RemovePod (filtering.go: PodTopologySpread.RemovePod): uncounts a removed pod."""
        return self._update_with_pod(state, pod, pod_info_to_remove.pod, node_info, -1)

    def _update_with_pod(
        self, state: CycleState, pod: Pod, updated: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        if updated.namespace != pod.namespace:
            return None
        node = node_info.node
        labels = node.labels
        constraints = s.constraints
        if not _has_all_keys(labels, [c.topology_key for c in constraints]):
            return None
        required = pod.required_node_affinity
        pod_labels = updated.labels
        for i, c in enumerate(constraints):
            if not c.selector.matches(pod_labels):
                continue
            if not c.includes_node(pod, node, required):
                continue
            value = labels[c.topology_key]
            d = s.counts[i]
            d[value] = d.get(value, 0) + delta
            s.paths[i].update(value, d[value])
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (filtering.go: PodTopologySpread.Filter): rejects a node missing a topology
        label, or one where the pod would make a domain's skew exceed maxSkew.
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        labels = node_info.node.labels
        for key, budget, min_domains, counts, paths in s.rows:
            value = labels.get(key)
            if value is None:
                return self._missing_label
            # Fewer eligible domains than minDomains: the global minimum counts as 0.
            min_match = paths.n0 if len(counts) >= min_domains else 0
            # matching + selfMatch - minMatch > maxSkew, with selfMatch folded into budget.
            if counts.get(value, 0) - min_match > budget:
                return self._unschedulable
        return None

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]] | None:
        """``filter`` over the columns (the framework's columnar Filter form): per
        constraint in order, a row without the topology label is rejected as missing it,
        else one whose domain's count is over the limit; None without a PreFilter state
        (the per-node form reports the error)."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return None
        columns = rows.columns
        positions = rows.rows
        codes = np.zeros(len(positions), np.int64)
        open_rows: BoolArray | None = None  # None: no row decided yet
        for key, budget, min_domains, counts, paths in s.rows:
            # As Filter's matching + selfMatch - minMatch > maxSkew (selfMatch in budget).
            limit = budget + (paths.n0 if len(counts) >= min_domains else 0)
            dom = domains(columns, key)
            missing = dom.ids[positions] < 0
            cnt = dom.gather(counts, positions)
            if cnt is None:
                return None
            over = ~missing & (cnt > limit)
            if open_rows is not None:
                missing &= open_rows
                over &= open_rows
            codes[missing] = 1
            codes[over] = 2
            still = ~(missing | over)
            open_rows = still if open_rows is None else open_rows & still
        return codes, [self._missing_label, self._unschedulable]
