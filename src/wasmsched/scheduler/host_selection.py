"""selectHost over an array of totals (pkg/scheduler/schedule_one.go: selectHost): the
node with the highest total, ties broken by reservoir sampling with the seeded generator,
with the same draws as selectHost's loop over the nodes.
"""

from __future__ import annotations

import random

import numpy as np

from wasmsched.framework.columns import IntArray

__all__ = ["select_host_index"]


def select_host_index(totals: IntArray, rng: random.Random) -> int:
    """selectHost over an array of totals: the index its loop would pick, with the same
    draws from ``rng`` (the seeded choice stays identical).

    The reservoir draws ``randrange(count)`` for each node that ties the best so far (count
    restarting at each new best) and keeps the node when the draw is 0. For random.Random
    itself, each draw is ``getrandbits(count.bit_length())`` until below count, one 32-bit
    word each (random.Random._randbelow_with_getrandbits): the words are taken in bulk and
    the generator is advanced by exactly the words the draws used.
    """
    n = len(totals)
    if n == 1:
        return 0
    before = np.maximum.accumulate(totals)[:-1]  # the best before each node but the first
    rest = totals[1:]
    tie = rest == before
    if not tie.any():
        return int(np.argmax(totals))  # the first node with the highest total
    new = rest > before
    ties = np.flatnonzero(tie)
    if not new.any():
        # One best throughout (the usual case): counts 2, 3, ... for the ties in order.
        counts = np.arange(2, len(ties) + 2, dtype=np.int64)
        first_final = 0
        chosen = 0
    else:
        seg = np.cumsum(new)  # which run of one best each node belongs to (0: the first)
        tie_cum = np.cumsum(tie)
        starts = np.flatnonzero(new)
        base = np.zeros(len(starts) + 1, np.int64)
        base[1:] = tie_cum[starts]
        counts = tie_cum[ties] - base[seg[ties]] + 1
        first_final = int(base[-1])  # the draws from here are the last best's ties
        chosen = int(starts[-1]) + 1
    if type(rng) is not random.Random or len(counts) < _FEW_DRAWS:
        zeros = [i for i, c in enumerate(counts.tolist()) if rng.randrange(c) == 0]
    else:
        zeros = _reservoir_zeros(counts, rng)
    kept = [i for i in zeros if i >= first_final]
    if kept:
        chosen = int(ties[kept[-1]]) + 1
    return chosen


# Below this many draws, randrange itself costs less than the arrays.
_FEW_DRAWS = 48

_POWERS_OF_TWO = np.array([1 << k for k in range(63)], np.int64)


def _reservoir_zeros(counts: IntArray, rng: random.Random) -> list[int]:
    """The indices i where ``rng.randrange(counts[i])`` is 0, drawing as
    random.Random._randbelow_with_getrandbits does: ``getrandbits(c.bit_length())``, one
    32-bit word's top bits per try, until below c. As many words as there are draws are
    taken at once (each draw needs one at least, so none is taken that is not used); the
    draws left when they run out take theirs one by one."""
    bit_lengths = np.searchsorted(_POWERS_OF_TWO, counts, side="right")
    total = len(counts)
    raw = rng.getrandbits(32 * total).to_bytes(4 * total, "little")
    words = np.frombuffer(raw, dtype="<u4")
    # Optimistic: draw i on word i. Up to the first draw that needs a second word, that is
    # exactly what happens; the rest is walked from there.
    tops = (words >> (32 - bit_lengths).astype(np.uint32)).astype(np.int64)
    rejected = np.flatnonzero(tops >= counts)
    stop = int(rejected[0]) if len(rejected) else total
    zeros: list[int] = np.flatnonzero(tops[:stop] == 0).tolist()
    if stop == total:
        return zeros
    values = counts.tolist()
    shifts = (32 - bit_lengths).tolist()
    rest = words.tolist()
    getrandbits = rng.getrandbits
    j = stop
    for i in range(stop, total):
        c = values[i]
        shift = shifts[i]
        bits = 32 - shift
        r = (rest[j] >> shift) if j < total else getrandbits(bits)
        j += 1
        while r >= c:
            r = (rest[j] >> shift) if j < total else getrandbits(bits)
            j += 1
        if not r:
            zeros.append(i)
    return zeros
