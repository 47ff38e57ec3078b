"""Per-node contributions summed over the cluster, kept across scheduling cycles.

kube-scheduler's InterPodAffinity and PodTopologySpread recount every node in each cycle, in
parallel (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go:
getExistingAntiAffinityCounts; podtopologyspread/filtering.go: calPreFilterState). Here a
node's contribution is recomputed only when its NodeInfo changed since the previous cycle (a
new object, or a new generation: the cache bumps it on every pod add/remove and node update,
framework/node_info.py), and the totals are adjusted by the difference; the result equals a
full recount. Both plugins keep one ``NodeCounts`` per kind of incoming pod (what the counts
depend on), in a small most-recently-used table (``counts_for``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from wasmsched.api.selectors import LabelSelector
    from wasmsched.framework.node_info import NodeInfo

Counts = dict[str, dict[str, int]]
# (which count map, topology key, topology value, amount) that one node adds.
Contribution = tuple[int, str, str, int]
ComputeFn = Callable[["NodeInfo"], tuple[Contribution, ...]]
# How many kinds of incoming pod keep their counts at once.
COUNTS_LIMIT = 16
# How many cycles of changes NodeChanges remembers.
_LOG_LIMIT = 64
_GENERATION = operator.attrgetter("generation")


class NodeChanges:
    """Which positions of one node list changed, cycle after cycle, for a plugin's counts.

    ``advance`` compares every node's generation with the previous call's (one C-level pass,
    no Python call per node) and logs the positions that differ under a new epoch; a
    ``NodeCounts`` last brought up to date at an epoch still in the log then recomputes only
    those nodes. A different list object (the node set changed: the scheduler cache lists
    its nodes anew) is matched against the previous one by NodeInfo: the nodes it did not
    hold, and those whose generation changed, are logged, the log's earlier positions are
    carried to the new list, and the nodes that left are logged too (``left_since``). A
    list that changed length in place starts over: the counts then check every node.
    """

    __slots__ = ("_cycle", "_gens", "_log", "_members", "_nodes", "base", "epoch")

    def __init__(self) -> None:
        self._nodes: Sequence[NodeInfo] | None = None
        self._members: list[NodeInfo] = []  # the tracked list's nodes when it was first seen
        self._gens: list[int] = []
        # (epoch, positions changed, NodeInfos that left the list) per epoch.
        self._log: list[tuple[int, list[int], list[NodeInfo]]] = []
        self.epoch = 0
        self.base = 0  # the first epoch whose changes since are known
        self._cycle: object = None

    def advance(self, nodes: Sequence[NodeInfo], cycle: object = None) -> None:
        """Records what changed in ``nodes`` since the previous call.

        ``cycle`` (the scheduling cycle's state, when given) marks calls of one cycle: the
        snapshot does not change during a cycle (pkg/scheduler/schedule_one.go:
        schedulePod updates it once, before PreFilter), so a second call for the same
        list in the same cycle has nothing to compare.
        """
        if cycle is not None and cycle is self._cycle and nodes is self._nodes:
            return
        self._cycle = cycle
        gens = list(map(_GENERATION, nodes))
        left: list[NodeInfo] = []
        if nodes is self._nodes:
            if gens == self._gens:
                return
            if len(gens) != len(self._gens):
                self._start_over(nodes, gens)
                return
            changed = list(compress(range(len(gens)), map(operator.ne, gens, self._gens)))
        elif self._nodes is None:
            self._start_over(nodes, gens)
            return
        else:
            changed, left = self._relist(nodes, gens)
        self._gens = gens
        if changed or left:
            self.epoch += 1
            self._log.append((self.epoch, changed, left))
            if len(self._log) > _LOG_LIMIT:
                del self._log[0]
                self.base = self._log[0][0] - 1

    def _start_over(self, nodes: Sequence[NodeInfo], gens: list[int]) -> None:
        self._nodes = nodes
        self._members = list(nodes)
        self._gens = gens
        self._log = []
        self.epoch += 1
        self.base = self.epoch

    def _relist(
        self, nodes: Sequence[NodeInfo], gens: list[int]
    ) -> tuple[list[int], list[NodeInfo]]:
        """Moves the tracking to a new list: the positions in it of nodes new or changed
        since the previous list, and the nodes that left; the log's positions are carried
        to the new list (those of nodes that left dropped)."""
        old = self._members
        before = getattr(nodes, "rows_before", None)
        if before is None or getattr(nodes, "previous", None) is not self._nodes:
            # Where each node was in the previous list (-1: it was not); ids are unique,
            # both lists holding their nodes alive.
            position = dict(zip(map(id, old), range(len(old)), strict=True))
            before = np.fromiter(map(position.get, map(id, nodes), repeat(-1)), np.intp, len(nodes))
        held = np.flatnonzero(before >= 0)
        moved = np.full(len(old), -1, np.intp)  # where each node of the previous list went
        moved[before[held]] = held
        previous = np.full(len(nodes), -1, np.int64)  # generations start at 0
        previous[held] = np.array(self._gens, np.int64)[before[held]]
        changed: list[int] = np.flatnonzero(previous != np.array(gens, np.int64)).tolist()
        left = [old[i] for i in np.flatnonzero(moved < 0).tolist()]
        log = []
        for epoch, positions, gone in self._log:
            carried = moved[np.array(positions, np.intp)]
            log.append((epoch, carried[carried >= 0].tolist(), gone))
        self._log = log
        self._nodes = nodes
        self._members = list(nodes)
        return changed, left

    def tracks(self, nodes: Sequence[NodeInfo]) -> bool:
        """Whether ``nodes`` is the list advanced last."""
        return nodes is self._nodes

    def since(self, nodes: Sequence[NodeInfo], epoch: int) -> list[int] | None:
        """The positions changed after ``epoch`` in ``nodes``, or None when not known."""
        if nodes is not self._nodes or epoch < self.base:
            return None
        out: list[int] = []
        for e, changed, _ in reversed(self._log):
            if e <= epoch:
                break
            out.extend(changed)
        return out

    def left_since(self, epoch: int) -> list[NodeInfo]:
        """The NodeInfos that left the list after ``epoch`` (known when ``since`` is)."""
        out: list[NodeInfo] = []
        for e, _, gone in reversed(self._log):
            if e <= epoch:
                break
            out.extend(gone)
        return out


class NodeCounts:
    """Counts summed over nodes, kept across cycles for one kind of incoming pod.

    ``totals[which][key][value]`` is the sum of the amounts every node contributes; pairs down
    to zero are dropped (contributions of amount 0 only mark a node, see ``entries``).
    ``entries[name]`` is (the NodeInfo, its generation, its contribution) as last computed.
    """

    __slots__ = ("_epoch", "contributing", "entries", "totals")

    def __init__(self, outputs: int) -> None:
        self.totals: list[Counts] = [{} for _ in range(outputs)]
        self.entries: dict[str, tuple[NodeInfo, int, tuple[Contribution, ...]]] = {}
        self.contributing = 0  # nodes with a non-empty contribution
        # The NodeChanges epoch of the last update, when it was given one for its list.
        self._epoch = -1

    def update(
        self, nodes: Sequence[NodeInfo], compute: ComputeFn, changes: NodeChanges | None = None
    ) -> None:
        """Brings the totals up to date with ``nodes`` (recomputing only changed nodes).

        With ``changes`` (advanced for ``nodes`` just before), only the positions changed
        since this counts' last update are looked at when that is known, and the nodes
        that left since are taken out.
        """
        entries = self.entries
        scan: Sequence[NodeInfo] = nodes
        if changes is not None:
            known = changes.since(nodes, self._epoch) if self._epoch >= 0 else None
            if known is not None:
                for gone in changes.left_since(self._epoch):
                    e = entries.get(gone.name)
                    if e is not None and e[0] is gone:
                        del entries[gone.name]
                        if e[2]:
                            self._apply(e[2], -1)
                scan = [nodes[i] for i in known]
            self._epoch = changes.epoch if changes.tracks(nodes) else -1
        else:
            self._epoch = -1  # brought up to date with a list no NodeChanges tracks
        for ni in scan:
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
            if not n:
                continue
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

    def contribution(self, name: str) -> tuple[Contribution, ...]:
        """What node ``name`` contributed at the last update (empty when unknown)."""
        e = self.entries.get(name)
        return e[2] if e is not None else ()


def counts_for(
    table: dict[tuple[Any, ...], NodeCounts],
    key: tuple[Any, ...],
    outputs: int,
    nodes: Sequence[NodeInfo],
    compute: ComputeFn,
    changes: NodeChanges | None = None,
) -> NodeCounts:
    """The counts kept in ``table`` for ``key``, brought up to date with ``nodes``; the
    least recently used entry is dropped beyond COUNTS_LIMIT kinds."""
    inc = table.pop(key, None)
    if inc is None:
        inc = NodeCounts(outputs)
        if len(table) >= COUNTS_LIMIT:
            del table[next(iter(table))]
    table[key] = inc  # most recently used last
    inc.update(nodes, compute, changes)
    return inc


def selector_key(sel: LabelSelector) -> tuple[Any, ...]:
    """A hashable value equal for selectors that select the same objects by construction."""
    return (
        sel.is_nothing,
        tuple(sorted(sel.match_labels.items())),
        tuple((r.key, r.operator, r.values) for r in sel.match_expressions),
    )
