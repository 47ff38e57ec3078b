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
from itertools import compress
from typing import TYPE_CHECKING, Any

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
    those nodes. A different list object (the node set changed), or one that changed length,
    starts over: the counts then check every node themselves.
    """

    __slots__ = ("_cycle", "_gens", "_log", "_nodes", "base", "epoch")

    def __init__(self) -> None:
        self._nodes: Sequence[NodeInfo] | None = None
        self._gens: list[int] = []
        self._log: list[tuple[int, list[int]]] = []
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
        if gens == self._gens and nodes is self._nodes:
            return
        if nodes is not self._nodes or len(gens) != len(self._gens):
            self._nodes = nodes
            self._gens = gens
            self._log = []
            self.epoch += 1
            self.base = self.epoch
            return
        changed = list(compress(range(len(gens)), map(operator.ne, gens, self._gens)))
        self._gens = gens
        if changed:
            self.epoch += 1
            self._log.append((self.epoch, changed))
            if len(self._log) > _LOG_LIMIT:
                del self._log[0]
                self.base = self._log[0][0] - 1

    def since(self, nodes: Sequence[NodeInfo], epoch: int) -> list[int] | None:
        """The positions changed after ``epoch`` in ``nodes``, or None when not known."""
        if nodes is not self._nodes or epoch < self.base:
            return None
        out: list[int] = []
        for e, changed in reversed(self._log):
            if e <= epoch:
                break
            out.extend(changed)
        return out


class NodeCounts:
    """Counts summed over nodes, kept across cycles for one kind of incoming pod.

    ``totals[which][key][value]`` is the sum of the amounts every node contributes; pairs down
    to zero are dropped (contributions of amount 0 only mark a node, see ``entries``).
    ``entries[name]`` is (the NodeInfo, its generation, its contribution) as last computed.
    """

    __slots__ = ("_epoch", "_nodes", "contributing", "entries", "totals")

    def __init__(self, outputs: int) -> None:
        self.totals: list[Counts] = [{} for _ in range(outputs)]
        self.entries: dict[str, tuple[NodeInfo, int, tuple[Contribution, ...]]] = {}
        self.contributing = 0  # nodes with a non-empty contribution
        # The list and NodeChanges epoch of the last update, when it was given one.
        self._nodes: Sequence[NodeInfo] | None = None
        self._epoch = -1

    def update(
        self, nodes: Sequence[NodeInfo], compute: ComputeFn, changes: NodeChanges | None = None
    ) -> None:
        """Brings the totals up to date with ``nodes`` (recomputing only changed nodes).

        With ``changes`` (advanced for ``nodes`` just before), only the positions changed
        since this counts' last update are looked at when that is known.
        """
        entries = self.entries
        scan: Sequence[NodeInfo] = nodes
        if changes is not None:
            known = changes.since(nodes, self._epoch) if self._nodes is nodes else None
            self._nodes = nodes
            self._epoch = changes.epoch
            if known is not None:
                scan = [nodes[i] for i in known]
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
