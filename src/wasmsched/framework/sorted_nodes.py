"""The scored nodes as kube-scheduler 1.35+ orders them (pkg/scheduler/framework/sorted_nodes.go):
a ``container/heap`` max-heap over the feasible nodes' scores, built in their feasible order,
``Less(i, j) = total_i > total_j || (total_i == total_j && randomizer_i > randomizer_j)``.
The Randomizer is 0 unless an extender scored the node (schedule_one.go: prioritizeNodes), so
among equal totals the winner is whichever node ``heap.Init`` leaves on top: not the first in
order, not random.

``heap_top_index`` is that winner without building the heap; ``ScoredNodeHeap`` is the heap
itself, for the opportunistic batching that keeps the rest of it for the next pod.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wasmsched.framework.columns import IntArray

__all__ = ["ScoredNodeHeap", "heap_top_index"]


def heap_top_index(totals: IntArray, randomizers: IntArray | None = None) -> int:
    """The index (into the feasible order) that ``heap.Init`` then ``heap.Pop`` returns.

    Init sifts each inner position down, bottom up; a child replaces its parent only when
    strictly greater, and the right child is taken only when strictly greater than the
    left. So at every position the subtree's first maximum stays on top when it is already
    there, else the top comes from the left subtree when that holds a maximum, else from
    the right: the winner is the maximum whose path from the root, read as bits (left 0,
    right 1), is smallest, a shallower one first when one path extends the other with
    left turns only. A position p's path is the binary of p + 1 after its leading 1;
    aligning every path to the deepest level makes that a comparison of integers.
    """
    n = len(totals)
    if n == 1:
        return 0
    best = totals == totals.max()
    if randomizers is not None:
        tied = np.where(best, randomizers, -1)
        best = tied == tied.max()
    positions = np.flatnonzero(best)
    if len(positions) == 1:
        return int(positions[0])
    labels = (
        positions + 1
    )  # heap positions as 1-based labels: the path is the bits after the top one
    depth = _bit_length(labels) - 1
    deepest = n.bit_length() - 1
    aligned = labels << (deepest - depth)
    # The smallest aligned path, equal ones going to the shallower: one key (depth < 64),
    # distinct for distinct positions.
    return int(positions[np.argmin(aligned * 64 + depth)])


def _bit_length(values: IntArray) -> IntArray:
    return np.floor(np.log2(values)).astype(np.int64) + 1


class ScoredNodeHeap:
    """sorted_nodes.go's sortedNodeScores: Go's container/heap on (total, randomizer, name),
    sifting exactly as heap.Init, heap.Pop and heap.Push do, so that the order in which equal
    nodes come out is kube-scheduler's."""

    __slots__ = ("_items",)

    def __init__(self, items: Sequence[tuple[int, int, str]]) -> None:
        self._items = list(items)
        n = len(self._items)
        for i in range(n // 2 - 1, -1, -1):
            self._down(i, n)

    def __len__(self) -> int:
        return len(self._items)

    def pop(self) -> tuple[int, int, str]:
        """heap.Pop: the top (highest total, then highest randomizer)."""
        items = self._items
        last = len(items) - 1
        items[0], items[last] = items[last], items[0]
        self._down(0, last)
        return items.pop()

    def push(self, item: tuple[int, int, str]) -> None:
        """heap.Push: append, then sift up."""
        items = self._items
        items.append(item)
        j = len(items) - 1
        while j > 0:
            i = (j - 1) // 2
            if not _less(items[j], items[i]):
                break
            items[i], items[j] = items[j], items[i]
            j = i

    def unordered(self) -> list[tuple[int, int, str]]:
        """UnorderedList: the items in the heap's own order."""
        return list(self._items)

    def _down(self, i: int, n: int) -> None:
        items = self._items
        while True:
            j = 2 * i + 1
            if j >= n:
                return
            if j + 1 < n and _less(items[j + 1], items[j]):
                j += 1
            if not _less(items[j], items[i]):
                return
            items[i], items[j] = items[j], items[i]
            i = j


def _less(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """nodeScoreHeap.Less: a comes out before b."""
    return a[0] > b[0] or (a[0] == b[0] and a[1] > b[1])
