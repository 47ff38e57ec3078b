"""PodTopologySpread over the snapshot's columns (framework/columns): each node's topology
domain as an interned id per row, so that Filter and Score gather per-domain counts for many
nodes at once.

Upstream evaluates the same per-node arithmetic (podtopologyspread/filtering.go:
PodTopologySpread.Filter; scoring.go: PodTopologySpread.Score, scoreForCount,
NormalizeScore); these helpers only lay the counts out by row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from wasmsched.framework.columns import IntArray, RowCache

if TYPE_CHECKING:
    from wasmsched.framework.columns import NodeColumns, NodeRows
    from wasmsched.framework.node_info import NodeInfo

FloatArray = npt.NDArray[np.float64]

# Counts beyond 2**53 would not convert to float64 exactly as Python's int * float does.
_FLOAT_EXACT = 1 << 53
_CACHE_TAG = "PodTopologySpread.domains"


class Domains(RowCache):
    """The value of one topology label on every row: ``ids[row]`` indexes ``values``, or
    is -1 when the node has no such label; ``index`` maps a value to its id.

    Kept in the columns' node cache across node changes (a RowCache): values are only
    added, so ``values`` may hold some that no row has any more, which no answer reads
    (each reads the values of rows); an entry holding many such is dropped instead."""

    __slots__ = ("ids", "index", "key", "values")

    def __init__(self, key: str, ids: IntArray, values: list[str], index: dict[str, int]) -> None:
        self.key = key
        self.ids = ids
        self.values = values
        self.index = index

    @classmethod
    def of(cls, key: str, infos: list[NodeInfo]) -> Domains:
        """The domains of every row of ``infos``."""
        found = cls(key, np.zeros(len(infos), np.int64), [], {})
        found.ids[:] = found._ids(infos)
        return found

    def _ids(self, infos: list[NodeInfo]) -> list[int]:
        key, index, values = self.key, self.index, self.values
        ids: list[int] = []
        append = ids.append
        for ni in infos:
            value = ni.node.labels.get(key)
            if value is None:
                append(-1)
                continue
            i = index.get(value)
            if i is None:
                i = index[value] = len(values)
                values.append(value)
            append(i)
        return ids

    def carried(self, source: npt.NDArray[np.intp]) -> Domains:
        """These domains for rows taken from ``source`` (RowCache.carried)."""
        return Domains(self.key, self.ids[source], list(self.values), dict(self.index))

    def reread(self, rows: npt.NDArray[np.intp], infos: list[NodeInfo]) -> bool:
        """Re-reads ``rows`` (RowCache.reread); False once many values are no row's."""
        if len(self.values) > 2 * len(self.ids) + 64:
            return False
        self.ids[rows] = self._ids(infos)
        return True

    def gather(self, counts: Mapping[str, int], rows: npt.NDArray[np.intp]) -> IntArray | None:
        """``counts.get(value, 0)`` of each row's domain (0 where the label is missing), or
        None when a count is too large for float64 to hold it exactly."""
        # The last slot stands for no label (id -1) and for values no row has.
        return _spread(counts, self.index, len(self.values), self.ids[rows])

    def table(self, counts: Mapping[str, int]) -> IntArray | None:
        """``counts.get(value, 0)`` by domain id, one slot more (0) that ``ids`` of -1
        index: ``table[ids[rows]]`` is ``gather(counts, rows)``; None as ``gather``."""
        return _table(counts, self.index, len(self.values))


def by_name(
    columns: NodeColumns, counts: Mapping[str, int], rows: npt.NDArray[np.intp]
) -> IntArray | None:
    """``counts.get(name, 0)`` of each row's node name, or None as ``Domains.gather``."""
    return _spread(counts, columns.row_of, columns.size, rows)


def _spread(
    counts: Mapping[str, int], index: Mapping[str, int], size: int, at: npt.NDArray[np.intp]
) -> IntArray | None:
    if not counts:
        return np.zeros(len(at), np.int64)
    table = _table(counts, index, size)
    if table is None:
        return None
    out: IntArray = table[at]
    return out


def _table(counts: Mapping[str, int], index: Mapping[str, int], size: int) -> IntArray | None:
    """``counts`` laid out by ``index`` in ``size`` slots, plus a last one (0) for the
    keys ``index`` lacks; None when a count is too large for float64 to hold exactly."""
    table = np.zeros(size + 1, np.int64)
    if not counts:
        return table
    slots = np.fromiter(map(index.get, counts, repeat(size)), np.intp, len(counts))
    try:
        amounts = np.fromiter(counts.values(), np.int64, len(counts))
    except OverflowError:
        return None
    if int(np.abs(amounts).max()) >= _FLOAT_EXACT:
        return None
    table[slots] = amounts
    table[size] = 0
    return table


def domains(columns: NodeColumns, key: str) -> Domains:
    """The rows' domains for ``key``, computed once and kept in the columns' node cache
    (which re-reads the rows of nodes that change)."""
    cache = columns.node_cache
    tag = (_CACHE_TAG, key)
    found: Domains | None = cache.get(tag)
    if found is None:
        found = cache[tag] = Domains.of(key, columns.infos.tolist())
    return found


def candidate_domains(
    rows: NodeRows,
    nodes: Sequence[NodeInfo],
    keys: list[str],
    by_domain: list[tuple[int, str]],
    require_all: bool,
    counts: list[dict[str, int]],
) -> set[str]:
    """PreScore's pass over the candidates (scoring.go: initPreScoreState) by rows: the
    names of the nodes missing a topology label when all are required (ignored), and a
    zero count for every domain of the others, met in node order; ``nodes`` are the rows'
    NodeInfos."""
    columns = rows.columns
    positions = rows.rows
    ignored: set[str] = set()
    if require_all:
        missing = np.zeros(len(positions), np.bool_)
        for key in keys:
            missing |= domains(columns, key).ids[positions] < 0
        if missing.any():
            ignored = {nodes[i].name for i in np.flatnonzero(missing).tolist()}
            positions = positions[~missing]
    for i, key in by_domain:
        dom = domains(columns, key)
        ids, first = np.unique(dom.ids[positions], return_index=True)
        values = dom.values
        d = counts[i]
        for j in ids[np.argsort(first)].tolist():
            # A missing label counts as the domain "" (labels.get(key, "")).
            d.setdefault(values[j] if j >= 0 else "", 0)
    return ignored


def round_half_away_array(x: FloatArray) -> IntArray:
    """``round_half_away`` (Go's math.Round) of every element, by the same float steps."""
    r = np.floor(x)
    r = r + (x - r >= 0.5)
    out: IntArray = r.astype(np.int64)
    return out
