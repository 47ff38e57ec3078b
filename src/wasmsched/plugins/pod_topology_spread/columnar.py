"""PodTopologySpread over the snapshot's columns (framework/columns): each node's topology
domain as an interned id per row, so that Filter and Score gather per-domain counts for many
nodes at once.

Upstream evaluates the same per-node arithmetic (podtopologyspread/filtering.go:
PodTopologySpread.Filter; scoring.go: PodTopologySpread.Score, scoreForCount,
NormalizeScore); these helpers only lay the counts out by row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from wasmsched.framework.columns import IntArray

if TYPE_CHECKING:
    from wasmsched.framework.columns import NodeColumns

FloatArray = npt.NDArray[np.float64]

# Counts beyond 2**53 would not convert to float64 exactly as Python's int * float does.
_FLOAT_EXACT = 1 << 53
_CACHE_TAG = "PodTopologySpread.domains"


class Domains:
    """The value of one topology label on every row: ``ids[row]`` indexes ``values``, or
    is -1 when the node has no such label; ``index`` maps a value to its id."""

    __slots__ = ("ids", "index", "values")

    def __init__(self, ids: IntArray, values: list[str], index: dict[str, int]) -> None:
        self.ids = ids
        self.values = values
        self.index = index

    def gather(self, counts: Mapping[str, int], rows: npt.NDArray[np.intp]) -> IntArray:
        """``counts.get(value, 0)`` of each row's domain (0 where the label is missing)."""
        by_id = np.zeros(len(self.values) + 1, np.int64)  # the last slot: no label
        index = self.index
        for value, n in counts.items():
            i = index.get(value)
            if i is not None:
                by_id[i] = n
        return by_id[self.ids[rows]]


def domains(columns: NodeColumns, key: str) -> Domains:
    """The rows' domains for ``key``, computed once per node set and kept in the columns'
    node cache (dropped whenever a node's labels may have changed)."""
    cache = columns.node_cache
    tag = (_CACHE_TAG, key)
    found: Domains | None = cache.get(tag)
    if found is None:
        index: dict[str, int] = {}
        ids: list[int] = []
        append = ids.append
        for ni in columns.infos.tolist():
            value = ni.node.labels.get(key)
            if value is None:
                append(-1)
                continue
            i = index.get(value)
            if i is None:
                i = index[value] = len(index)
            append(i)
        found = Domains(np.array(ids, dtype=np.int64), list(index), index)
        cache[tag] = found
    return found


def counts_exact(counts: Mapping[Any, int]) -> bool:
    """Whether every count converts to float64 exactly (the Score arithmetic in arrays)."""
    return all(-_FLOAT_EXACT < n < _FLOAT_EXACT for n in counts.values())


def round_half_away_array(x: FloatArray) -> IntArray:
    """``round_half_away`` (Go's math.Round) of every element, by the same float steps."""
    r = np.floor(x)
    r = r + (x - r >= 0.5)
    out: IntArray = r.astype(np.int64)
    return out
