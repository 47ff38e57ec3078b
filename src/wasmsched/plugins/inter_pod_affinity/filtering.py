"""InterPodAffinity's PreFilter, Filter and PreFilterExtensions.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/filtering.go: PreFilter counts, per
topology pair, (1) the existing pods whose required anti-affinity terms match the incoming pod
(getExistingAntiAffinityCounts), (2) the existing pods matching all of the incoming pod's
required affinity terms and (3) those matching each of its required anti-affinity terms
(getIncomingAffinityAntiAffinityCounts); Filter (satisfyPodAffinity, satisfyPodAntiAffinity,
satisfyExistingPodsAntiAffinity) then needs only dictionary lookups per node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from wasmsched.framework.columns import IntArray, NodeRows, verdicts
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.inter_pod_affinity.common import (
    NAME,
    AffinityBase,
    ComputeFn,
    Contribution,
    Counts,
    _Memo,
    _not_found,
    _signature,
)
from wasmsched.plugins.inter_pod_affinity.terms import (
    _EMPTY_LABELS,
    AffinityTerm,
    matches_all,
    pod_affinity_terms,
)
from wasmsched.plugins.pod_topology_spread.columnar import Domains, domains

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo, PodInfo

PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"


def _bump(counts: Counts, labels: Mapping[str, str], key: str, delta: int) -> None:
    """Adds ``delta`` to the (key, node's value) pair; a pair down to zero is dropped."""
    value = labels.get(key)
    if value is None:
        return
    inner = counts.get(key)
    if inner is None:
        inner = counts[key] = {}
    n = inner.get(value, 0) + delta
    if n == 0:
        inner.pop(value, None)
        if not inner:
            del counts[key]
    else:
        inner[value] = n


def _positive(counts: Counts, key: str, value: str) -> bool:
    inner = counts.get(key)
    return inner is not None and inner.get(value, 0) > 0


class _PreFilterState:
    __slots__ = (
        "affinity",
        "affinity_terms",
        "anti",
        "anti_terms",
        "existing_anti",
        "ns_labels",
        "pod",
        "self_match",
        "tables",
    )

    def __init__(
        self,
        pod: Pod,
        affinity_terms: tuple[AffinityTerm, ...],
        anti_terms: tuple[AffinityTerm, ...],
        ns_labels: Mapping[str, str],
        existing_anti: Counts,
        affinity: Counts,
        anti: Counts,
    ) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_terms = anti_terms
        self.ns_labels = ns_labels
        self.existing_anti = existing_anti
        self.affinity = affinity
        self.anti = anti
        # Whether the pod matches its own affinity terms (the "first pod of a group" rule).
        self.self_match = matches_all(affinity_terms, pod)
        # (count map, topology key) -> (the rows' Domains, the counts by domain id): laid
        # out once per cycle for the columnar Filter's chunks; dropped when counts change.
        self.tables: dict[tuple[int, str], tuple[Domains, IntArray | None]] = {}

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.pod,
            self.affinity_terms,
            self.anti_terms,
            self.ns_labels,
            {k: dict(v) for k, v in self.existing_anti.items()},
            {k: dict(v) for k, v in self.affinity.items()},
            {k: dict(v) for k, v in self.anti.items()},
        )

    def by_row(
        self, which: int, key: str, found: Domains, at: npt.NDArray[np.intp]
    ) -> IntArray | None:
        """``Domains.gather`` of count map ``which`` (0 affinity, 1 anti-affinity, 2 the
        existing pods' anti-affinity) for ``key`` at rows ``at``."""
        cached = self.tables.get((which, key))
        if cached is None or cached[0] is not found:
            counts = (self.affinity, self.anti, self.existing_anti)[which].get(key, {})
            cached = self.tables[(which, key)] = (found, found.table(counts))
        table = cached[1]
        if table is None:
            return None
        out: IntArray = table[found.ids[at]]
        return out

    def update_with_pod(self, other: Pod, node: Node, delta: int) -> None:
        self.tables = {}
        labels = node.labels
        for t in pod_affinity_terms(other).required_anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                _bump(self.existing_anti, labels, t.topology_key, delta)
        if matches_all(self.affinity_terms, other):
            for t in self.affinity_terms:
                _bump(self.affinity, labels, t.topology_key, delta)
        for t in self.anti_terms:
            if t.matches(other, None):
                _bump(self.anti, labels, t.topology_key, delta)


class Filtering(AffinityBase):
    """InterPodAffinity's PreFilter, Filter and AddPod/RemovePod (filtering.go)."""

    _affinity_rejected: Status
    _anti_rejected: Status
    _existing_rejected: Status

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[None, Status | None]:
        """PreFilter (interpodaffinity/filtering.go: InterPodAffinity.PreFilter): the three
        count maps Filter reads; Skip when no existing pod has required anti-affinity and the
        pod has no required terms.
        """
        terms = pod_affinity_terms(pod)
        if terms.error:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {terms.error}")
        _, with_anti = self._snapshot_lists(nodes)
        if not with_anti and not terms.required_affinity and not terms.required_anti_affinity:
            return None, self._skip  # nothing could be counted
        namespaces = self._namespaces()
        affinity_terms = tuple(t.with_namespaces(namespaces) for t in terms.required_affinity)
        anti_terms = tuple(t.with_namespaces(namespaces) for t in terms.required_anti_affinity)
        ns_labels = namespaces.get(pod.namespace, _EMPTY_LABELS)
        signature = _signature(pod, ns_labels)

        memo = _Memo(pod, ns_labels)

        def existing(ni: NodeInfo) -> tuple[Contribution, ...]:
            labels = ni.node.labels
            out = []
            for pi in ni.pods_with_required_anti_affinity:
                for t in pod_affinity_terms(pi.pod).required_anti_affinity:
                    if memo[t]:
                        value = labels.get(t.topology_key)
                        if value is not None:
                            out.append((0, t.topology_key, value, 1))
            return tuple(out)

        existing_anti: Counts = {}
        if with_anti:
            existing_anti = self._counts(
                ("existing", *signature), 1, self._tracked(with_anti), existing, state
            ).snapshot(0)

        affinity: Counts = {}
        anti: Counts = {}
        if affinity_terms or anti_terms:
            compute = _incoming_counter(affinity_terms, anti_terms)
            key = ("incoming", affinity_terms, anti_terms)
            inc = self._counts(key, 2, nodes, compute, state)
            affinity, anti = inc.snapshot(0), inc.snapshot(1)

        if not existing_anti and not affinity_terms and not anti_terms:
            return None, self._skip
        state.write(
            PRE_FILTER_KEY,
            _PreFilterState(
                pod, affinity_terms, anti_terms, ns_labels, existing_anti, affinity, anti
            ),
        )
        return None, None

    def pre_filter_extensions(self) -> Filtering:
        """PreFilterExtensions (filtering.go): the plugin itself (AddPod/RemovePod)."""
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """AddPod (filtering.go: InterPodAffinity.AddPod): counts a pod placed on ``node_info``
        (preFilterState.updateWithPod).
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        s.update_with_pod(pod_info_to_add.pod, node_info.node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """RemovePod (filtering.go: InterPodAffinity.RemovePod): uncounts a pod removed from
        ``node_info`` (preFilterState.updateWithPod).
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        s.update_with_pod(pod_info_to_remove.pod, node_info.node, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (filtering.go: InterPodAffinity.Filter): satisfyPodAffinity,
        satisfyPodAntiAffinity and satisfyExistingPodsAntiAffinity on the node's topology pairs.
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        return self._verdict(s, node_info.node.labels)

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]] | None:
        """``filter`` of every row (the framework's vectorized Filter form): a node's verdict
        depends on its values of the terms' topology keys alone, so it is found once per
        distinct combination of them. None without PreFilter's state (the per-node form
        reports the error)."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return None
        gathered = self._verdicts_by_domain(s, rows)
        if gathered is not None:
            return gathered
        keys = list(
            dict.fromkeys(
                [t.topology_key for t in s.affinity_terms]
                + [t.topology_key for t in s.anti_terms]
                + list(s.existing_anti)
            )
        )
        verdict = self._verdict
        memo: dict[tuple[str | None, ...], Status | None] = {}
        found: list[tuple[int, Status | None]] = []
        for pos, ni in enumerate(rows.infos()):
            labels = ni.node.labels
            domain = tuple(map(labels.get, keys))
            if domain in memo:
                status = memo[domain]
            else:
                status = memo[domain] = verdict(s, labels)
            if status is not None:
                found.append((pos, status))
        return verdicts(len(rows), found)

    def _verdicts_by_domain(
        self, s: _PreFilterState, rows: NodeRows
    ) -> tuple[IntArray, list[Status]] | None:
        """``_verdict`` of every row at once: each term's counts gathered by the rows'
        interned values of its topology key (shared with PodTopologySpread), in
        ``_verdict``'s order (affinity, anti-affinity, existing pods' anti-affinity); None
        for counts too large to gather exactly."""
        columns = rows.columns
        at = rows.rows
        size = len(rows)
        failing: list[tuple[Status, npt.NDArray[np.bool_]]] = []
        terms = s.affinity_terms
        if terms:
            missing = np.zeros(size, np.bool_)
            pods_exist = np.ones(size, np.bool_)
            for t in terms:
                found = domains(columns, t.topology_key)
                missing |= found.ids[at] < 0
                counts = s.by_row(0, t.topology_key, found, at)
                if counts is None:
                    return None
                pods_exist &= counts > 0
            if not s.affinity and s.self_match:
                failing.append((self._affinity_rejected, missing))
            else:
                failing.append((self._affinity_rejected, missing | ~pods_exist))
        for which, table, keys, status in (
            (1, s.anti, [t.topology_key for t in s.anti_terms], self._anti_rejected),
            (2, s.existing_anti, list(s.existing_anti), self._existing_rejected),
        ):
            if not table:
                continue
            hit = np.zeros(size, np.bool_)
            for key in keys:
                counts = s.by_row(which, key, domains(columns, key), at)
                if counts is None:
                    return None
                hit |= counts > 0
            failing.append((status, hit))
        codes = np.zeros(size, np.int64)
        statuses: list[Status] = []
        for status, rejected in reversed(failing):  # the first failing check wins
            if rejected.any():
                if status not in statuses:
                    statuses.append(status)
                codes[rejected] = statuses.index(status) + 1
        return codes, statuses

    def _verdict(self, s: _PreFilterState, labels: Mapping[str, str]) -> Status | None:
        """Filter's answer for a node with ``labels``."""
        terms = s.affinity_terms
        if terms:
            counts = s.affinity
            pods_exist = True
            for t in terms:
                value = labels.get(t.topology_key)
                if value is None:
                    return self._affinity_rejected  # every topology label must be on the node
                if pods_exist and not _positive(counts, t.topology_key, value):
                    pods_exist = False
            # The first pod of a group with affinity to itself may go anywhere when no pod in
            # the cluster matches the terms yet.
            if not pods_exist and not (not counts and s.self_match):
                return self._affinity_rejected
        anti = s.anti
        if anti:
            for t in s.anti_terms:
                value = labels.get(t.topology_key)
                if value is not None and _positive(anti, t.topology_key, value):
                    return self._anti_rejected
        existing = s.existing_anti
        if existing:
            for key, values in existing.items():
                value = labels.get(key)
                if value is not None and values.get(value, 0) > 0:
                    return self._existing_rejected
        return None


def _incoming_counter(
    affinity_terms: tuple[AffinityTerm, ...], anti_terms: tuple[AffinityTerm, ...]
) -> ComputeFn:
    """A node's pods matching all the incoming pod's affinity terms (output 0) and each of
    its anti-affinity terms (output 1)."""
    # The terms' namespace selectors are unrolled: a term matches a pod when it selects
    # every namespace or the pod's, and its label selector matches.
    aff = [(t._ns_all, t.namespaces, t.selector) for t in affinity_terms]
    aff_keys = [t.topology_key for t in affinity_terms]
    anti_m = [(t._ns_all, t.namespaces, t.selector, t.topology_key) for t in anti_terms]

    def compute(ni: NodeInfo) -> tuple[Contribution, ...]:
        pods = ni.pods
        if not pods:
            return ()
        labels = ni.node.labels
        out: list[Contribution] = []
        n_aff = 0
        for pi in pods:
            p = pi.pod
            ns = p.namespace
            pod_labels = p.labels
            if aff:
                for all_ns, names, sel in aff:
                    if not ((all_ns or ns in names) and sel.matches(pod_labels)):
                        break
                else:
                    n_aff += 1
            for all_ns, names, sel, key in anti_m:
                if (all_ns or ns in names) and sel.matches(pod_labels):
                    value = labels.get(key)
                    if value is not None:
                        out.append((1, key, value, 1))
        if n_aff:
            for key in aff_keys:
                value = labels.get(key)
                if value is not None:
                    out.append((0, key, value, n_aff))
        return tuple(out)

    return compute
