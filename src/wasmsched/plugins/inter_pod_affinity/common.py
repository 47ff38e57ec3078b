"""What InterPodAffinity's filtering and scoring share: per-topology counts kept across cycles.

Counts are nested dicts ``{topologyKey: {value: count}}`` so that lookups allocate nothing.
Upstream (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go:
getExistingAntiAffinityCounts, getIncomingAffinityAntiAffinityCounts; scoring.go: PreScore)
recounts every node in each cycle; here the counts are kept across cycles per kind of incoming
pod and only the nodes whose NodeInfo changed since the previous cycle are recounted
(``_Incremental``); the result equals a full recount.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.framework.status import Code, Status
from wasmsched.plugins.inter_pod_affinity.terms import _EMPTY_LABELS, AffinityTerm

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo

NAME = "InterPodAffinity"

Counts = dict[str, dict[str, int]]


class _Memo(dict[AffinityTerm, bool]):
    """Whether each (interned) term of existing pods matches the incoming pod, for one cycle."""

    __slots__ = ("ns_labels", "pod")

    def __init__(self, pod: Pod, ns_labels: Mapping[str, str]) -> None:
        super().__init__()
        self.pod = pod
        self.ns_labels = ns_labels

    def __missing__(self, term: AffinityTerm) -> bool:
        hit = self[term] = term.matches(self.pod, self.ns_labels)
        return hit


# (which count map, topology key, topology value, amount) that one node adds.
Contribution = tuple[int, str, str, int]
ComputeFn = Callable[["NodeInfo"], tuple[Contribution, ...]]
_INCREMENTAL_LIMIT = 16


class _Incremental:
    """Counts summed over nodes, kept across cycles for one kind of incoming pod.

    k8s recomputes every node's contribution in each cycle (in parallel); here a node's
    contribution is recomputed only when its NodeInfo changed (a new object or generation),
    and the totals are adjusted by the difference. Pairs down to zero are dropped.
    """

    __slots__ = ("contributing", "entries", "totals")

    def __init__(self, outputs: int) -> None:
        self.totals: list[Counts] = [{} for _ in range(outputs)]
        self.entries: dict[str, tuple[NodeInfo, int, tuple[Contribution, ...]]] = {}
        self.contributing = 0  # nodes with a non-empty contribution

    def update(self, nodes: Sequence[NodeInfo], compute: ComputeFn) -> None:
        entries = self.entries
        for ni in nodes:
            e = entries.get(ni.name)
            if e is not None and e[0] is ni and e[1] == ni.generation:
                continue
            contrib = compute(ni)
            if e is not None and e[2]:
                self._apply(e[2], -1)
            if contrib:
                self._apply(contrib, 1)
            entries[ni.name] = (ni, ni.generation, contrib)
        # Every listed node has an entry now: more entries means nodes that left the list.
        if len(entries) > len(nodes):
            names = {ni.name for ni in nodes}
            for name in [n for n in entries if n not in names]:
                contrib = entries.pop(name)[2]
                if contrib:
                    self._apply(contrib, -1)

    def _apply(self, contrib: tuple[Contribution, ...], sign: int) -> None:
        self.contributing += sign
        totals = self.totals
        for which, key, value, n in contrib:
            counts = totals[which]
            inner = counts.get(key)
            if inner is None:
                inner = counts[key] = {}
            total = inner.get(value, 0) + sign * n
            if total == 0:
                del inner[value]
                if not inner:
                    del counts[key]
            else:
                inner[value] = total

    def snapshot(self, which: int) -> Counts:
        """A copy of one count map, for a cycle's state."""
        return {k: dict(v) for k, v in self.totals[which].items()}


class AffinityBase:
    """The state and cluster lookups InterPodAffinity's filtering and scoring halves share.

    The attributes are set by ``InterPodAffinity.__init__`` (plugin.py: New upstream).
    """

    handle: Handle | None
    hard_pod_affinity_weight: int
    ignore_preferred_terms_of_existing_pods: bool
    _incremental: dict[tuple[Any, ...], _Incremental]
    _skip: Status

    def _namespaces(self) -> dict[str, Mapping[str, str]]:
        """Namespace name -> labels, from the Namespace objects the cluster holds."""
        if self.handle is None:
            return {}
        out: dict[str, Mapping[str, str]] = {}
        for ns in self.handle.objects("Namespace"):
            meta = ns.get("metadata") or {}
            name = meta.get("name")
            if isinstance(name, str):
                labels = meta.get("labels")
                out[name] = labels if isinstance(labels, Mapping) else _EMPTY_LABELS
        return out

    def _snapshot_lists(self, nodes: Sequence[NodeInfo]) -> tuple[list[NodeInfo], list[NodeInfo]]:
        """(nodes with pods with affinity, nodes with pods with required anti-affinity)."""
        if self.handle is not None:
            snap = self.handle.snapshot()
            return snap.with_affinity, snap.with_required_anti_affinity
        return (
            [ni for ni in nodes if ni.pods_with_affinity],
            [ni for ni in nodes if ni.pods_with_required_anti_affinity],
        )

    def _counts(
        self, key: tuple[Any, ...], outputs: int, nodes: Sequence[NodeInfo], compute: ComputeFn
    ) -> _Incremental:
        """The incremental counts for ``key``, brought up to date with ``nodes``."""
        inc = self._incremental.pop(key, None)
        if inc is None:
            inc = _Incremental(outputs)
            if len(self._incremental) >= _INCREMENTAL_LIMIT:
                del self._incremental[next(iter(self._incremental))]
        self._incremental[key] = inc  # most recently used last
        inc.update(nodes, compute)
        return inc


def _signature(pod: Pod, ns_labels: Mapping[str, str]) -> tuple[Any, ...]:
    """What matching existing pods' terms against ``pod`` depends on."""
    return (pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items()))


def _not_found(key: str) -> Status:
    return Status(Code.ERROR, f'error reading "{key}" from cycleState: not found')
