"""What InterPodAffinity's filtering and scoring share: per-topology counts kept across cycles.

Counts are nested dicts ``{topologyKey: {value: count}}`` so that lookups allocate nothing.
Upstream (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go:
getExistingAntiAffinityCounts, getIncomingAffinityAntiAffinityCounts; scoring.go: PreScore)
recounts every node in each cycle; here the counts are kept across cycles per kind of incoming
pod and only the nodes whose NodeInfo changed since the previous cycle are recounted
(``plugins/node_counts.NodeCounts``); the result equals a full recount.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.framework.status import Code, Status
from wasmsched.plugins.inter_pod_affinity.terms import _EMPTY_LABELS, AffinityTerm
from wasmsched.plugins.node_counts import (
    ComputeFn,
    Contribution,
    Counts,
    NodeChanges,
    NodeCounts,
    counts_for,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo

NAME = "InterPodAffinity"


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


class AffinityBase:
    """The state and cluster lookups InterPodAffinity's filtering and scoring halves share.

    The attributes are set by ``InterPodAffinity.__init__`` (plugin.py: New upstream).
    """

    handle: Handle | None
    hard_pod_affinity_weight: int
    ignore_preferred_terms_of_existing_pods: bool
    _incremental: dict[tuple[Any, ...], NodeCounts]
    _changes: NodeChanges
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

    def _tracked(self, subset: Sequence[NodeInfo]) -> Sequence[NodeInfo]:
        """The snapshot's whole node list, which NodeChanges tracks, to count in place of
        ``subset`` (a list of the nodes with affinity pods, a new object in each cycle):
        the other nodes contribute nothing, so the counts are the same."""
        return self.handle.snapshot().node_infos if self.handle is not None else subset

    def _counts(
        self,
        key: tuple[Any, ...],
        outputs: int,
        nodes: Sequence[NodeInfo],
        compute: ComputeFn,
        cycle: CycleState,
    ) -> NodeCounts:
        """The incremental counts for ``key``, brought up to date with ``nodes``.

        Only the snapshot's own node list is tracked by NodeChanges: the lists of nodes with
        affinity pods are new objects in each cycle, and those counts check every node.
        NodeChanges compares the generations once per ``cycle`` (PreFilter's two counts and
        PreScore's read the same snapshot).
        """
        changes = None
        if self.handle is not None and nodes is self.handle.snapshot().node_infos:
            changes = self._changes
            changes.advance(nodes, cycle)
        return counts_for(self._incremental, key, outputs, nodes, compute, changes)


def _signature(pod: Pod, ns_labels: Mapping[str, str]) -> tuple[Any, ...]:
    """What matching existing pods' terms against ``pod`` depends on."""
    return (pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items()))


__all__ = [
    "NAME",
    "AffinityBase",
    "ComputeFn",
    "Contribution",
    "Counts",
    "NodeChanges",
    "NodeCounts",
]


def _not_found(key: str) -> Status:
    return Status(Code.ERROR, f'error reading "{key}" from cycleState: not found')
