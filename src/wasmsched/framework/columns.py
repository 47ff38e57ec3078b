"""A columnar view of the snapshot's nodes, for the plugins' vectorized Filter/Score forms.

Row ``i`` is the snapshot's ``node_infos[i]`` (node-tree order). The arrays hold what the
default plugins read for every node (allocatable and requested per resource, pod counts,
whether a node is cordoned, tainted, uses host ports); the cache updates the rows of the
nodes a pod was assumed on, bound to, forgotten or deleted from, and of nodes updated, so
nothing is rebuilt per cycle; a new node set (a node added or removed, or moved to another
zone) builds new columns from the previous ones, reading only the nodes they did not hold.

A plugin's columnar form answers exactly what its per-node form would for each row
(pkg/scheduler/framework/runtime/framework.go: RunFilterPlugins, RunScorePlugins call
Filter and Score once per node; the arrays only evaluate the same arithmetic for many
nodes at once). Quantities beyond ``SAFE_LIMIT`` (where int64 products could overflow)
switch the columns off: the plugins then take their per-node forms.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import repeat
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from wasmsched.framework.status import Code

if TYPE_CHECKING:
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.framework.status import Status

__all__ = [
    "SAFE_LIMIT",
    "IntArray",
    "NodeColumns",
    "NodeList",
    "NodeRows",
    "RowCache",
    "RowClasses",
    "RowValues",
    "default_normalize_columns",
    "go_div_array",
    "values_by_class",
    "verdicts",
    "verdicts_by_class",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Quantities up to 2**55 keep ``quantity * MaxNodeScore`` (and sums of a few) in int64.
SAFE_LIMIT = 1 << 55

_FIELDS = (
    "alloc_cpu",
    "alloc_memory",
    "alloc_ephemeral",
    "alloc_pods",
    "req_cpu",
    "req_memory",
    "req_ephemeral",
    "non_zero_cpu",
    "non_zero_memory",
    "pod_count",
)
# What is left per node (allocatable - requested; pods: allocatable - count), which Filter
# compares with the pod's requests.
_FREE = ("free_cpu", "free_memory", "free_ephemeral", "free_pods")


_NAME = attrgetter("name")


def _taint_key(ni: NodeInfo) -> Hashable | None:
    return ni.node.taints or None


def _ports_key(ni: NodeInfo) -> Hashable | None:
    used = ni.used_ports
    if not used:
        return None
    return frozenset((key, frozenset(ips)) for key, ips in used.items())


class RowClasses:
    """The rows grouped by an equal value of what a per-node form reads (a node's taints,
    its host ports in use): ``ids[row]`` is 0 where that value is empty, else the value's
    class, so that a plugin answers once per class instead of once per row."""

    __slots__ = ("_index", "_key", "ids")

    def __init__(self, infos: Sequence[NodeInfo], key: Callable[[NodeInfo], Hashable | None]):
        self._key = key
        self._index: dict[Hashable, int] = {}
        self.ids: IntArray = np.fromiter(map(self._id_of, infos), np.int64, len(infos))

    def _id_of(self, ni: NodeInfo) -> int:
        value = self._key(ni)
        if value is None:
            return 0
        found = self._index.get(value)
        if found is None:
            found = self._index[value] = len(self._index) + 1
        return found

    def set(self, row: int, ni: NodeInfo) -> None:
        """Re-reads one row."""
        self.ids[row] = self._id_of(ni)

    def carried(self, source: npt.NDArray[np.intp]) -> RowClasses:
        """These classes for rows taken from ``source`` (rows of these), sharing the class
        numbers; the rows read anew are set afterwards."""
        new = RowClasses.__new__(RowClasses)
        new._key = self._key
        new._index = dict(self._index)
        new.ids = self.ids[source]
        return new

    def compact(self, infos: Iterable[NodeInfo]) -> None:
        """Starts the classes over when many are no longer any row's (values that changed)."""
        if len(self._index) > 2 * len(self.ids) + 64:
            self._index = {}
            self.ids[:] = list(map(self._id_of, infos))


class RowCache:
    """An entry of the columns' node cache answering per row from that row's node alone
    (its name, labels, taints and images): carried to the columns of a new node set and
    re-read for the rows whose node changed, so that it equals the entry computed afresh
    over every row."""

    __slots__ = ()

    def carried(self, source: npt.NDArray[np.intp]) -> RowCache:
        """This entry for rows taken from ``source`` (rows of these); the rows read anew
        are re-read afterwards."""
        raise NotImplementedError

    def reread(self, rows: npt.NDArray[np.intp], infos: list[NodeInfo]) -> bool:
        """Re-reads ``rows`` from their NodeInfos ``infos``; False when it cannot (the entry
        is then dropped)."""
        raise NotImplementedError


class RowValues(RowCache):
    """A RowCache of one value per row: ``compute`` answers for a list of NodeInfos (an
    array, or None when it cannot)."""

    __slots__ = ("_compute", "values")

    def __init__(self, values: npt.NDArray[Any], compute: Callable[[list[NodeInfo]], Any]) -> None:
        self.values = values
        self._compute = compute

    @classmethod
    def of(
        cls, infos: list[NodeInfo], compute: Callable[[list[NodeInfo]], Any]
    ) -> RowValues | None:
        """The values of every row (None when ``compute`` cannot)."""
        values = compute(infos)
        return None if values is None else cls(values, compute)

    def carried(self, source: npt.NDArray[np.intp]) -> RowValues:
        """The values of the rows taken from ``source`` (RowCache.carried)."""
        return RowValues(self.values[source], self._compute)

    def reread(self, rows: npt.NDArray[np.intp], infos: list[NodeInfo]) -> bool:
        """``compute`` for ``rows`` (RowCache.reread)."""
        values = self._compute(infos)
        if values is None:
            return False
        self.values[rows] = values
        return True


def _row_values(ni: NodeInfo) -> tuple[int, ...]:
    alloc = ni.allocatable
    used = ni.requested
    return (
        alloc.milli_cpu,
        alloc.memory,
        alloc.ephemeral_storage,
        alloc.allowed_pod_number,
        used.milli_cpu,
        used.memory,
        used.ephemeral_storage,
        ni.non_zero_cpu,
        ni.non_zero_memory,
        len(ni.pods),
    )


class NodeColumns:
    """The snapshot's nodes as arrays (see the module docstring); ``usable`` is False
    when a quantity is too large for int64 arithmetic.

    With ``previous`` (usable columns of an earlier node set), the rows of the NodeInfos it
    holds are carried over and only the other nodes are read: the same columns as a full
    build when ``previous`` is up to date for the nodes it holds (the cache re-reads the
    nodes changed since with ``update``)."""

    def __init__(self, node_infos: Sequence[NodeInfo], previous: NodeColumns | None = None) -> None:
        n = len(node_infos)
        self.size = n
        # fromiter: no per-element sequence probing, as slice assignment does.
        self.infos: npt.NDArray[Any] = np.fromiter(node_infos, object, n)
        names = list(map(_NAME, node_infos))
        self.names: npt.NDArray[Any] = np.fromiter(names, object, n)
        self.row_of: dict[str, int] = dict(zip(names, range(n), strict=True))
        self.all_rows: npt.NDArray[np.intp] = np.arange(n, dtype=np.intp)
        self.usable = True
        # For columns carried from earlier ones: each row's row there (-1: read anew).
        self.rows_before: npt.NDArray[np.intp] | None = None
        # Per-pod caches keyed by what the answer depends on (e.g. a nodeSelector's terms).
        # A RowCache entry answers per row from that row's node alone: it is carried to a
        # new node set and re-read for the nodes that changed; any other entry is dropped
        # whenever a node's labels, taints or images may have changed.
        self.node_cache: dict[Any, Any] = {}
        if previous is not None and previous.usable and n:
            self._carry(previous, names)
            return
        # One table with a column per field, column-major so that each named array is a
        # contiguous view of it, and a row is re-read in one assignment (``_read_row``).
        self._set_table(np.zeros((n, len(_FIELDS) + len(_FREE)), np.int64, order="F"))
        self.unschedulable: BoolArray = np.zeros(n, np.bool_)
        self.tainted: BoolArray = np.zeros(n, np.bool_)
        self.uses_ports: BoolArray = np.zeros(n, np.bool_)
        # Extended (scalar) resources: name -> (allocatable, requested), built when a plugin
        # first asks for the name, then kept up to date with the other rows.
        self._scalars: dict[str, tuple[IntArray, IntArray]] = {}
        values = [_row_values(ni) for ni in node_infos]
        if values:
            try:
                table = np.array(values, dtype=np.int64)
            except OverflowError:
                self.usable = False
            else:
                self._check(table)
                self._table[:, : len(_FIELDS)] = table
        self.free_cpu[:] = self.alloc_cpu - self.req_cpu
        self.free_memory[:] = self.alloc_memory - self.req_memory
        self.free_ephemeral[:] = self.alloc_ephemeral - self.req_ephemeral
        self.free_pods[:] = self.alloc_pods - self.pod_count
        for i, ni in enumerate(node_infos):
            node = ni.node
            self.unschedulable[i] = bool(node.unschedulable)
            self.tainted[i] = bool(node.taints)
            self.uses_ports[i] = bool(ni.used_ports)
        # The rows by their taints and by their host ports in use (TaintToleration's and
        # NodePorts' inputs).
        self.taint_classes = RowClasses(node_infos, _taint_key)
        self.port_classes = RowClasses(node_infos, _ports_key)

    def _set_table(self, table: npt.NDArray[np.int64]) -> None:
        """The table (column-major) and the named views of its columns."""
        self._table = table
        self.alloc_cpu, self.alloc_memory, self.alloc_ephemeral, self.alloc_pods = (
            table[:, j] for j in range(4)
        )
        self.req_cpu, self.req_memory, self.req_ephemeral = (table[:, j] for j in range(4, 7))
        self.non_zero_cpu, self.non_zero_memory, self.pod_count = (
            table[:, j] for j in range(7, 10)
        )
        self.free_cpu, self.free_memory, self.free_ephemeral, self.free_pods = (
            table[:, j] for j in range(10, 14)
        )

    def _carry(self, previous: NodeColumns, names: list[str]) -> None:
        """The rows of ``previous`` for the NodeInfos it holds, in the new order; the
        other nodes read as ``update`` reads a row. Row caches of the node cache are
        carried the same way."""
        n = self.size
        source = np.fromiter(map(previous.row_of.get, names, repeat(-1)), np.intp, n)
        # A node held under the same name may be another NodeInfo (removed, then added).
        held = np.flatnonzero(source >= 0)
        same = map(is_, previous.infos[source[held]].tolist(), self.infos[held].tolist())
        kept = np.zeros(n, np.bool_)
        kept[held] = np.fromiter(same, np.bool_, len(held))
        fresh = np.flatnonzero(~kept)
        source[fresh] = -1
        self.rows_before = source
        source = source.copy()
        source[fresh] = 0
        self._set_table(np.asfortranarray(previous._table[source]))
        self.unschedulable = previous.unschedulable[source]
        self.tainted = previous.tainted[source]
        self.uses_ports = previous.uses_ports[source]
        self._scalars = {
            name: (alloc[source], req[source]) for name, (alloc, req) in previous._scalars.items()
        }
        self.taint_classes = previous.taint_classes.carried(source)
        self.port_classes = previous.port_classes.carried(source)
        infos = self.infos
        fresh_infos: list[NodeInfo] = infos[fresh].tolist()
        for i, ni in zip(fresh.tolist(), fresh_infos, strict=True):
            self._read_row(i, ni)
            self.taint_classes.set(i, ni)
        self.taint_classes.compact(infos)
        self.port_classes.compact(infos)
        for key, entry in previous.node_cache.items():
            if isinstance(entry, RowCache):
                carried = entry.carried(source)
                if not len(fresh) or carried.reread(fresh, fresh_infos):
                    self.node_cache[key] = carried

    def _check(self, table: IntArray) -> None:
        if table.size and (int(table.max()) >= SAFE_LIMIT or int(table.min()) <= -SAFE_LIMIT):
            self.usable = False

    def update(self, infos: Iterable[NodeInfo], nodes_changed: Sequence[NodeInfo] = ()) -> None:
        """Re-reads the rows of ``infos`` (pods placed or removed, or the node updated);
        ``nodes_changed``, nodes whose labels, taints or images changed, also have their
        taint class and the node cache's rows re-read (its other entries dropped)."""
        row_of, held = self.row_of, self.infos
        for ni in infos:
            i = row_of.get(ni.name)
            if i is not None and held[i] is ni:
                self._read_row(i, ni)
        if nodes_changed:
            rows: list[int] = []
            changed: list[NodeInfo] = []
            for ni in nodes_changed:
                i = row_of.get(ni.name)
                if i is not None and held[i] is ni:
                    self.taint_classes.set(i, ni)
                    rows.append(i)
                    changed.append(ni)
            at = np.array(rows, dtype=np.intp)
            cache = self.node_cache
            for key, entry in list(cache.items()):
                if not isinstance(entry, RowCache) or (rows and not entry.reread(at, changed)):
                    del cache[key]
        self.taint_classes.compact(self.infos)
        self.port_classes.compact(self.infos)

    def _read_row(self, i: int, ni: NodeInfo) -> None:
        """Reads row ``i`` from ``ni`` (not its taint class: RowClasses.set)."""
        values = _row_values(ni)
        if max(values) >= SAFE_LIMIT or min(values) <= -SAFE_LIMIT:
            self.usable = False
            return
        free = (values[0] - values[4], values[1] - values[5], values[2] - values[6])
        self._table[i] = (*values, *free, values[3] - values[9])
        node = ni.node
        self.unschedulable[i] = bool(node.unschedulable)
        self.tainted[i] = bool(node.taints)
        self.uses_ports[i] = bool(ni.used_ports)
        self.port_classes.set(i, ni)
        for name, (alloc, req) in self._scalars.items():
            a = ni.allocatable.scalar.get(name, 0)
            r = ni.requested.scalar.get(name, 0)
            if max(abs(a), abs(r)) >= SAFE_LIMIT:
                self.usable = False
                continue
            alloc[i] = a
            req[i] = r

    def scalar(self, name: str) -> tuple[IntArray, IntArray]:
        """(allocatable, requested) of an extended resource for every row (0 if absent)."""
        found = self._scalars.get(name)
        if found is None:
            infos = self.infos
            try:
                alloc = np.array(
                    [ni.allocatable.scalar.get(name, 0) for ni in infos], dtype=np.int64
                )
                req = np.array([ni.requested.scalar.get(name, 0) for ni in infos], dtype=np.int64)
            except OverflowError:
                self.usable = False
                alloc = np.zeros(self.size, np.int64)
                req = np.zeros(self.size, np.int64)
            else:
                self._check(alloc)
                self._check(req)
            found = (alloc, req)
            self._scalars[name] = found
        return found


class NodeRows:
    """The nodes a vectorized form is asked about: rows of the columns, in order."""

    __slots__ = ("_infos", "columns", "rows")

    def __init__(self, columns: NodeColumns, rows: npt.NDArray[np.intp]) -> None:
        self.columns = columns
        self.rows = rows
        self._infos: list[NodeInfo] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def infos(self) -> list[NodeInfo]:
        """The NodeInfos of the rows, in order (for per-node work on few of them)."""
        if self._infos is None:
            self._infos = self.columns.infos[self.rows].tolist()
        return self._infos

    def names(self) -> list[str]:
        """The node names of the rows, in order."""
        names: list[str] = self.columns.names[self.rows].tolist()
        return names

    def take(self, positions: npt.NDArray[np.intp]) -> NodeRows:
        """The rows at ``positions`` (indices into this selection)."""
        return NodeRows(self.columns, self.rows[positions])


def verdicts(
    size: int, found: Iterable[tuple[int, Status | None]]
) -> tuple[IntArray, list[Status]]:
    """A columnar Filter answer from (position, status) pairs of the few rows that need a
    per-node answer: codes (0 passes, k > 0 is ``statuses[k - 1]``) and the statuses."""
    codes = np.zeros(size, np.int64)
    statuses: list[Status] = []
    index: dict[int, int] = {}
    for pos, status in found:
        if status is None or status.code == Code.SUCCESS:
            continue
        code = index.get(id(status))
        if code is None:
            statuses.append(status)
            code = index[id(status)] = len(statuses)
        codes[pos] = code
    return codes, statuses


def verdicts_by_class(
    ids: IntArray, rows: NodeRows, one: Callable[[NodeInfo], Status | None]
) -> tuple[IntArray, list[Status]]:
    """A columnar Filter answer from one per-node answer per class (``ids``: the rows'
    classes, see RowClasses; class 0 passes), asked of the class's first row: exact when
    the per-node form reads nothing of the node but what the classes group by."""
    codes = np.zeros(len(ids), np.int64)
    statuses: list[Status] = []
    present = np.flatnonzero(ids)
    if not len(present):
        return codes, statuses
    classes, first = np.unique(ids[present], return_index=True)
    lookup = np.zeros(int(classes[-1]) + 1, np.int64)
    infos = rows.columns.infos
    at = rows.rows[present[first]]
    for c, row in zip(classes.tolist(), at.tolist(), strict=True):
        status = one(infos[row])
        if status is not None and status.code != Code.SUCCESS:
            statuses.append(status)
            lookup[c] = len(statuses)
    if statuses:
        codes = lookup[ids]
    return codes, statuses


def values_by_class(ids: IntArray, rows: NodeRows, one: Callable[[NodeInfo], int]) -> IntArray:
    """A columnar Score answer from one per-node answer per class (class 0 scores 0), asked
    of the class's first row, as ``verdicts_by_class``."""
    present = np.flatnonzero(ids)
    if not len(present):
        return np.zeros(len(ids), np.int64)
    classes, first = np.unique(ids[present], return_index=True)
    lookup = np.zeros(int(classes[-1]) + 1, np.int64)
    infos = rows.columns.infos
    at = rows.rows[present[first]]
    lookup[classes] = [one(infos[row]) for row in at.tolist()]
    out: IntArray = lookup[ids]
    return out


def go_div_array(a: IntArray, b: int) -> IntArray:
    """Go's truncating integer division of every element by ``b`` (> 0)."""
    q: IntArray = np.floor_divide(a, b)
    fix = (q < 0) & (q * b != a)
    if fix.any():
        q = q + fix
    return q


class NodeList(list["NodeInfo"]):
    """Nodes found feasible, with their rows in the columns (for the vectorized Score
    forms)."""

    __slots__ = ("rows",)

    def __init__(self, infos: Iterable[NodeInfo], rows: npt.NDArray[np.intp]) -> None:
        super().__init__(infos)
        self.rows = rows


def default_normalize_columns(max_priority: int, reverse: bool, values: IntArray) -> IntArray:
    """helper.DefaultNormalizeScore (pkg/scheduler/framework/plugins/helper/normalize_score.go)
    over an array: scores scaled from [0, max] onto [0, max_priority], reversed if asked."""
    max_count = int(values.max()) if len(values) else 0
    if max_count <= 0:
        if reverse:
            return np.full(len(values), max_priority, np.int64)
        return values
    if abs(max_priority * max_count) >= SAFE_LIMIT or int(values.min()) <= -SAFE_LIMIT:
        raise OverflowError("scores too large for the columnar normalization")
    score = go_div_array(values * max_priority, max_count)
    return max_priority - score if reverse else score
