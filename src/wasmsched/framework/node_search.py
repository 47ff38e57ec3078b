"""The node search: which nodes fit a pod, and how they score.

It reads as pkg/scheduler/schedule_one.go does, top to bottom: ``find_nodes_that_fit``
(findNodesThatFitPod: PreFilter and the nodes it names, the nominated node first, Filter,
the extenders), ``find_nodes_that_pass_filters`` (findNodesThatPassFilters: from where the
last search stopped, round robin, until enough nodes are feasible), then
``prioritize_nodes`` (prioritizeNodes: PreScore, Score, NormalizeScore, the weights, the
extenders' priorities). ``run_score_plugins`` is framework.go's RunScorePlugins;
RunFilterPluginsWithNominatedPods is in framework/nominated.

Each plugin runs in the best form it offers. The per-node form (``filter``, ``score``) always
exists; a plugin may add a vectorized form over node rows (framework/columns:
``filter_columns``, ``score_columns``) that answers, row by row, exactly what its per-node
form would, or None, and then the per-node form answers. The vectorized forms run plugin
by plugin over a chunk of nodes. A cycle runs node by node, as kube-scheduler does, when it
is explained (the record reads every per-node call), when a Filter plugin has no
vectorized form, or without usable columns; the nodes where nominated pods must be added go
node by node within a chunk. Either way one loop keeps the feasible nodes, stops the search
and records the rejections. Cycles sampled for plugin metrics keep them (framework/observed).
"""

from __future__ import annotations

import logging
import operator
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from wasmsched.framework.columns import IntArray, NodeList, NodeRows, verdicts
from wasmsched.framework.diagnosis import CycleError, Diagnosis
from wasmsched.framework.extender import (
    Extender,
    add_extender_scores,
    find_nodes_that_pass_extenders,
)
from wasmsched.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from wasmsched.framework.nominated import (
    NominatedPods,
    counted_nominated_pods,
    nominated_filter,
    run_filter_plugins_with_nominated_pods,
)
from wasmsched.framework.observed import observe_filter, observe_normalize, observe_score
from wasmsched.framework.search_by_node import filter_by_node, filter_node_by_node
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo, PodInfo, Snapshot
    from wasmsched.framework.runtime import Framework

__all__ = [
    "NominatedPods",
    "SearchState",
    "find_nodes_that_fit",
    "find_nodes_that_pass_filters",
    "num_feasible_nodes_to_find",
    "prioritize_nodes",
    "run_filter_plugins_with_nominated_pods",
    "run_score_plugins",
]

log = logging.getLogger("wasmsched.scheduler")

_NAME = operator.attrgetter("name")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# Nodes filtered per chunk beyond the ones still needed, when no Filter call of the chunk
# has effects: a few wasted calls on a chunk's tail cost less than many small chunks.
_MIN_FILTER_CHUNK = 32
# At most this many nodes named by PreFilter are filtered node by node (_named_nodes).
_NAMED_BY_NODE = 4

# A chunk's Filter verdicts: per position, 0 when every plugin passes the node, else k for
# ``statuses[k - 1]``, the status the node's Filter ends with (its plugin named, an error
# wrapped as RunFilterPlugins wraps it).
Verdicts = tuple[IntArray, list[Status]]


class SearchState(Protocol):
    """What the search reads, and where it starts (schedule_one.go: the Scheduler's
    extenders, nominator, percentageOfNodesToScore and nextStartNodeIndex)."""

    @property
    def extenders(self) -> Sequence[Extender]:
        """The configured extenders."""
        ...

    @property
    def nominator(self) -> NominatedPods:
        """The pods nominated to nodes."""
        ...

    @property
    def percentage_of_nodes_to_score(self) -> int:
        """The configuration's percentageOfNodesToScore (a profile's own wins)."""
        ...

    next_start_node_index: int


# --- Filter -------------------------------------------------------------------------------


def find_nodes_that_fit(
    search: SearchState,
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    snapshot: Snapshot,
    node_hint: Callable[[], str] | None = None,
) -> tuple[list[NodeInfo], Diagnosis]:
    """findNodesThatFitPod: PreFilter, the nominated node first, Filter, extenders.
    ``node_hint``: opportunistic batching's GetNodeHint (1.35+), asked after PreFilter; its
    node is tried first as a nominated node is (the nominated node wins)."""
    diagnosis = Diagnosis()
    all_nodes = snapshot.node_infos
    pre_result, status, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
    diagnosis.unschedulable_plugins = set(plugins)
    if status is not None and status.code != Code.SUCCESS:
        if not status.is_rejected():
            raise CycleError(status)
        diagnosis.node_to_status.absent_nodes_status = status
        diagnosis.pre_filter_msg = status.message
        diagnosis.add_plugin_status(status)
        return [], diagnosis

    nominated = pod.nominated_node_name
    if node_hint is not None:
        nominated = nominated or node_hint()
    if nominated:
        # evaluateNominatedNode. It leaves nextStartNodeIndex alone, but a failure is
        # written to the shared NodeToStatus and so counts below.
        node_info = snapshot.get(nominated)
        if node_info is not None:
            feasible = find_nodes_that_pass_filters(search, fwk, state, pod, diagnosis, [node_info])
            feasible = find_nodes_that_pass_extenders(search.extenders, pod, feasible, diagnosis)
            if feasible:
                return feasible, diagnosis

    nodes: Sequence[NodeInfo] = all_nodes
    rows: NodeRows | None = None
    if pre_result is not None and pre_result.node_names is not None:
        nodes, rows = _named_nodes(fwk, state, snapshot, pre_result.node_names)
        diagnosis.node_to_status.absent_nodes_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",
        )
    else:
        rows = rows_of(fwk, state, nodes, snapshot)
    try:
        feasible = find_nodes_that_pass_filters(search, fwk, state, pod, diagnosis, nodes, rows)
    finally:
        # processedNodes = len(feasibleNodes) + NodeToStatus.Len(), updated even on an
        # error, modulo the number of all nodes.
        processed = diagnosis.evaluated_nodes
        search.next_start_node_index = (search.next_start_node_index + processed) % len(all_nodes)
    feasible = find_nodes_that_pass_extenders(search.extenders, pod, feasible, diagnosis)
    return feasible, diagnosis


def _named_nodes(
    fwk: Framework, state: CycleState, snapshot: Snapshot, names: Collection[str]
) -> tuple[Sequence[NodeInfo], NodeRows | None]:
    """The nodes PreFilter named, in snapshot order, and their rows when the cycle takes
    the vectorized forms: looked up by name when they are few (a DaemonSet pod names one
    node; schedule_one.go evaluates only those nodes), else by a pass over every node.

    A handful of nodes (``_NAMED_BY_NODE``) go to the per-node forms: they give the same
    verdicts, and a plugin's vectorized form costs more per call than its per-node form
    on a node or two (the arrays are built for every call)."""
    columns = snapshot.columns
    all_nodes = snapshot.node_infos
    if columns is None or len(names) * 8 > len(all_nodes):
        nodes = [ni for ni in all_nodes if ni.name in names]
        return nodes, rows_of(fwk, state, nodes, snapshot)
    row_of = columns.row_of
    rows = sorted(map(row_of.__getitem__, filter(row_of.__contains__, names)))  # no frame
    if len(rows) <= _NAMED_BY_NODE:
        return [columns.infos[r] for r in rows], None
    at = np.array(rows, dtype=np.intp)
    named = NodeList(columns.infos[at].tolist(), at)
    return named, rows_of(fwk, state, named, snapshot)


def find_nodes_that_pass_filters(
    search: SearchState,
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    diagnosis: Diagnosis,
    nodes: Sequence[NodeInfo],
    rows: NodeRows | None = None,
) -> list[NodeInfo]:
    """findNodesThatPassFilters: from nextStartNodeIndex round robin, until enough.

    As kube-scheduler at parallelism 1: its checkNode cancels the search when it finds one
    feasible node more than it needs (that node is dropped), so the nodes rejected before
    it are recorded too; the first error ends the search. ``diagnosis.evaluated_nodes``
    becomes len(feasible) + NodeToStatus.Len(), what findNodesThatFitPod advances the start
    by. ``rows``: the nodes' rows in the snapshot's columns, when the cycle may take the
    plugins' vectorized forms.

    The nodes go to Filter in chunks, in the round-robin order. A chunk holds the nodes
    still needed plus the one that cancels the search, so none past the stop is filtered,
    or, when no Filter call of the chunk has effects, at least a few dozen (growing with the
    nodes seen): the verdicts past the stop are dropped.
    """
    num_nodes = len(nodes)
    percentage = fwk.percentage_of_nodes_to_score
    if percentage is None:
        percentage = search.percentage_of_nodes_to_score
    to_find = num_feasible_nodes_to_find(percentage, num_nodes)
    if not fwk.has_score_plugins and not any(
        e.has_filter or e.has_prioritize for e in search.extenders
    ):
        to_find = min(to_find, 1) if num_nodes else 0
    start = search.next_start_node_index
    nts = diagnosis.node_to_status
    if not fwk.has_filter_plugins:
        chosen = [nodes[(start + i) % num_nodes] for i in range(min(to_find, num_nodes))]
        diagnosis.evaluated_nodes = len(chosen) + len(nts)
        return chosen
    if not num_nodes:
        diagnosis.evaluated_nodes = len(nts)
        return []
    if rows is None:
        return filter_node_by_node(
            search.nominator, fwk, state, pod, diagnosis, nodes, start, to_find
        )
    filter_chunk, floor = _filter_chunks(search, fwk, state, pod, nodes, rows)
    order = np.arange(num_nodes, dtype=np.intp)
    first = start % num_nodes
    grow = floor > 1
    kept: list[np.ndarray[Any, np.dtype[np.intp]]] = []
    found = 0
    processed = 0
    try:
        while processed < num_nodes:
            wanted = to_find - found + 1  # the node that cancels the search
            size = min(max(wanted, floor, processed if grow else 0), num_nodes - processed)
            lo = first + processed
            if lo >= num_nodes:
                lo -= num_nodes
            hi = lo + size
            if hi <= num_nodes:
                chunk = order[lo:hi]
            else:
                chunk = np.concatenate((order[lo:], order[: hi - num_nodes]))
            codes, statuses = filter_chunk(chunk)
            passed = np.flatnonzero(codes == 0)
            stop = size
            if len(passed) >= wanted:
                stop = int(passed[wanted - 1])  # the context is cancelled: not kept
                passed = passed[: wanted - 1]
            rejected = np.flatnonzero(codes[:stop])
            if len(rejected):
                error = _record_rejections(
                    diagnosis, statuses, codes[rejected], _names(nodes, rows, chunk[rejected])
                )
                if error is not None:
                    found += int((passed < rejected[error]).sum())
                    raise CycleError(statuses[int(codes[rejected[error]]) - 1])
            kept.append(chunk[passed])
            found += len(passed)
            processed += size
            if stop < size:
                break
    finally:
        diagnosis.evaluated_nodes = found + len(nts)
    feasible = np.concatenate(kept) if len(kept) != 1 else kept[0]
    if rows is None:
        return [nodes[i] for i in feasible.tolist()]
    feasible_rows = rows.rows[feasible]
    return NodeList(rows.columns.infos[feasible_rows].tolist(), feasible_rows)


def _names(
    nodes: Sequence[NodeInfo], rows: NodeRows | None, at: np.ndarray[Any, np.dtype[np.intp]]
) -> list[str]:
    """The names of ``nodes[i]`` for i in ``at``."""
    if rows is not None:
        names: list[str] = rows.columns.names[rows.rows[at]].tolist()
        return names
    return [nodes[i].name for i in at.tolist()]


def _record_rejections(
    diagnosis: Diagnosis, statuses: list[Status], codes: IntArray, names: list[str]
) -> int | None:
    """Records the rejected nodes ``names`` (their verdict ``codes``, all > 0) in order, as
    checkNode does node by node, up to the first error; returns that error's position
    among them, or None. Each distinct status counts its plugin once."""
    errors = [k for k, status in enumerate(statuses, 1) if not status.is_rejected()]
    first_error: int | None = None
    if errors:
        hits = np.flatnonzero(np.isin(codes, errors))
        if len(hits):
            first_error = int(hits[0])
            codes = codes[:first_error]
            names = names[:first_error]
    at = (codes - 1).tolist()
    diagnosis.node_to_status.update(zip(names, map(statuses.__getitem__, at), strict=True))
    for k in sorted(set(at)):
        diagnosis.add_plugin_status(statuses[k])
    return first_error


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


def _filter_chunks(
    search: SearchState,
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    rows: NodeRows | None,
) -> tuple[Callable[[np.ndarray[Any, np.dtype[np.intp]]], Verdicts], int]:
    """How this cycle filters a chunk (positions in ``nodes``), and the fewest nodes a chunk
    holds: plugin by plugin over the rows when every Filter plugin of the cycle has a
    vectorized form and at most the last one's calls have effects (a wasm guest's logs and
    state: it must see exactly the nodes the node-by-node search shows it); else node by
    node, with the nominated pods when there are any.

    Nominated pods count only on their own node, and only those of the pod's priority or
    higher (framework.go: RunFilterPluginsWithNominatedPods, addGENominatedPods): the other
    nodes are filtered as without nominations, so only the nodes with such pods leave the
    vectorized forms (node by node, with the pods added), unless a plugin has effects."""
    nominator = search.nominator
    skip = state.skip_filter_plugins
    active = [p for p in fwk.filter_plugins if p.name not in skip]
    effects = [i for i, p in enumerate(active) if p.name in fwk.filter_effects]
    if (
        rows is not None
        and all(p.name in fwk.filter_columns for p in active)
        and (not effects or effects == [len(active) - 1])
    ):
        special = _nominated_positions(nominator, pod, rows) if nominator else None
        if special is None:

            def by_plugin(chunk: np.ndarray[Any, np.dtype[np.intp]]) -> Verdicts:
                return _run_filter_plugins_on_rows(fwk, state, pod, rows.take(chunk))

            return by_plugin, 1 if effects else _MIN_FILTER_CHUNK
        if not effects:
            with_pods = nominated_filter(fwk, state, pod)

            def by_plugin_and_node(chunk: np.ndarray[Any, np.dtype[np.intp]]) -> Verdicts:
                return _filter_with_nominated_nodes(
                    with_pods, fwk, state, pod, nodes, rows, chunk, special
                )

            return by_plugin_and_node, _MIN_FILTER_CHUNK

    def by_node(chunk: np.ndarray[Any, np.dtype[np.intp]]) -> Verdicts:
        statuses: list[Status | None] = []
        for i in chunk.tolist():
            node_info = nodes[i]
            if nominator:
                status = run_filter_plugins_with_nominated_pods(
                    nominator, fwk, state, pod, node_info
                )
            else:
                status = fwk.run_filter_plugins(state, pod, node_info)
            statuses.append(status)
            if status is not None and not status.is_rejected():
                break  # the error ends the search: no later node is filtered
        return verdicts(len(chunk), enumerate(statuses))

    return by_node, 1


def _nominated_positions(
    nominator: NominatedPods, pod: Pod, rows: NodeRows
) -> tuple[np.ndarray[Any, np.dtype[np.bool_]], dict[int, list[PodInfo]]] | None:
    """Which of ``rows`` have nominated pods that count for ``pod``, and those pods by
    row (``counted_nominated_pods``), or None when none has."""
    row_of = rows.columns.row_of
    found: dict[int, list[PodInfo]] = {}
    for name in nominator.nominated_nodes():
        if name in row_of and (counted := counted_nominated_pods(nominator, pod, name)):
            found[row_of[name]] = counted
    if not found:
        return None
    special = np.isin(rows.rows, np.fromiter(found, np.intp, len(found)))
    return (special, found) if special.any() else None


def _filter_with_nominated_nodes(
    with_pods: Callable[[NodeInfo, list[PodInfo]], Status | None],
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    rows: NodeRows,
    chunk: np.ndarray[Any, np.dtype[np.intp]],
    special: tuple[np.ndarray[Any, np.dtype[np.bool_]], dict[int, list[PodInfo]]],
) -> Verdicts:
    """A chunk's verdicts: the plugins' vectorized forms on the rows without nominated pods
    that count, RunFilterPluginsWithNominatedPods (``with_pods``) node by node on the
    others, given their pods that count."""
    marked = special[0][chunk]
    if not marked.any():
        return _run_filter_plugins_on_rows(fwk, state, pod, rows.take(chunk))
    codes = np.zeros(len(chunk), np.int64)
    statuses: list[Status] = []
    plain = np.flatnonzero(~marked)
    if len(plain):
        plain_codes, plain_statuses = _run_filter_plugins_on_rows(
            fwk, state, pod, rows.take(chunk[plain])
        )
        codes[plain] = plain_codes
        statuses.extend(plain_statuses)
    counted = special[1]
    for pos in np.flatnonzero(marked).tolist():
        status = with_pods(nodes[chunk[pos]], counted[int(rows.rows[chunk[pos]])])
        if status is not None and status.code != Code.SUCCESS:
            statuses.append(status)
            codes[pos] = len(statuses)
    return codes, statuses


def _run_filter_plugins_on_rows(
    fwk: Framework, state: CycleState, pod: Pod, rows: NodeRows
) -> Verdicts:
    """RunFilterPlugins of every row, plugin by plugin: each plugin's vectorized form (the
    per-node form where it answers None), on the rows no earlier plugin rejected. A row's
    status is its first failing plugin's, named, an error wrapped as RunFilterPlugins does;
    no row after an error is shown to the later plugins."""
    skip = state.skip_filter_plugins
    forms = fwk.filter_columns
    failed = np.zeros(len(rows), np.int64)
    found: list[Status] = []
    alive: np.ndarray[Any, np.dtype[np.intp]] | None = None  # None: every row
    for name, filter_fn in fwk.filter_calls:
        if skip and name in skip:
            continue
        subset = rows if alive is None else rows.take(alive)
        if not len(subset):
            break
        start = time.perf_counter()
        answer = None
        try:
            answer = forms[name](state, pod, subset)
        except Exception:
            answer = None  # the per-node calls say which node raised, and with which message
        if answer is None:
            answer = filter_by_node(filter_fn, state, pod, subset.infos())
        codes, table = answer
        if state.observer is not None:
            observe_filter(state.observer, name, codes, table, start)
        if not table:
            continue
        rejected = np.flatnonzero(codes)
        if not len(rejected):
            continue
        offset = len(found)
        found.extend(_named(name, status) for status in table)
        where = rejected if alive is None else alive[rejected]
        failed[where] = codes[rejected] + offset
        alive = np.flatnonzero(failed == 0)
        errors = [k for k, status in enumerate(table, 1) if not status.is_rejected()]
        if errors:
            first_error = int(where[np.flatnonzero(np.isin(codes[rejected], errors))[0]])
            alive = alive[alive < first_error]
    return failed, found


def _named(plugin: str, status: Status) -> Status:
    """A Filter plugin's failing status as RunFilterPlugins returns it: a rejection names
    its plugin, anything else becomes that plugin's error."""
    if not status.is_rejected():
        return _error(f'running "{plugin}" filter plugin: {status.message}', plugin)
    status.plugin = plugin
    return status


# --- Score --------------------------------------------------------------------------------


def prioritize_nodes(
    search: SearchState,
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: list[NodeInfo],
    snapshot: Snapshot,
    extender_scored: list[int] | None = None,
    raw_scores: dict[str, list[int]] | None = None,
) -> IntArray:
    """prioritizeNodes: PreScore, Score (normalized, weighted), the extenders' scores;
    every node's total, in order. ``extender_scored``, when given, receives the indices of
    the nodes an extender scored (1.35+ gives them a random tie-breaker); ``raw_scores``
    each Score plugin's scores before NormalizeScore (opportunistic batching keeps them)."""
    prioritizers = [e for e in search.extenders if e.has_prioritize]
    if not fwk.has_score_plugins and not prioritizers:
        return np.ones(len(nodes), np.int64)
    status = fwk.run_pre_score_plugins(state, pod, nodes)
    if status is not None:
        raise CycleError(status)
    totals, status = run_score_plugins(
        fwk, state, pod, nodes, rows_of(fwk, state, nodes, snapshot), raw_scores
    )
    if status is not None:
        raise CycleError(status)
    if prioritizers:
        scored = add_extender_scores(prioritizers, pod, nodes, totals)
        if extender_scored is not None:
            extender_scored.extend(sorted(scored))
    return totals


def run_score_plugins(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    rows: NodeRows | None = None,
    raw_scores: dict[str, list[int]] | None = None,
) -> tuple[IntArray, Status | None]:
    """RunScorePlugins: each plugin's scores (its vectorized form over ``rows`` when given
    and offered, else per node), NormalizeScore, the range check and the weights, summed
    per node; or the error that ends the cycle. An explained cycle records each plugin's
    raw and normalized scores; ``raw_scores``, when given, receives them by plugin."""
    skip = state.skip_score_plugins
    totals = np.zeros(len(nodes), np.int64)
    rec = state.recorder
    forms = fwk.score_columns
    for name, score_fn, weight, extensions in fwk.score_calls_of(state):
        if skip and name in skip:
            continue
        values: Any = None
        form = forms.get(name) if rows is not None else None
        if form is not None and rows is not None:
            start = time.perf_counter()
            try:
                values = form(state, pod, rows)
            except Exception:
                values = None  # the per-node form reports the error
            observe_score(state.observer, name, values, len(nodes), start)
        if isinstance(values, Status):
            return totals, _error(f"running Score plugin {name!r}: {values.message}", name)
        if values is None:
            values, status = _scores_by_node(score_fn, state, pod, nodes)
            if status is not None:
                return totals, _error(f"running Score plugin {name!r}: {status.message}", name)
        raw: list[int] = list(values) if rec is not None else []
        if raw_scores is not None:
            raw_scores[name] = [int(v) for v in values]
        if extensions is not None:
            values, status = _normalize(extensions, state, pod, nodes, rows, values, name)
            if status is not None:
                return totals, _error(
                    f"running Normalize on Score plugin {name!r}: {status.message}", name
                )
        if isinstance(values, np.ndarray):
            if len(values) and (
                int(values.min()) < MIN_NODE_SCORE or int(values.max()) > MAX_NODE_SCORE
            ):
                return totals, _out_of_range(name, values.tolist())
        else:
            if values and (min(values) < MIN_NODE_SCORE or max(values) > MAX_NODE_SCORE):
                return totals, _out_of_range(name, values)
            values = np.array(values, dtype=np.int64)
        totals += values if weight == 1 else values * weight
        if rec is not None:
            names = [ni.name for ni in nodes]
            rec.score_rows.append((name, weight, names, raw, values.tolist()))
    return totals, None


def _scores_by_node(
    score_fn: Callable[[CycleState, Pod, NodeInfo], tuple[int, Status | None]],
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
) -> tuple[list[int], Status | None]:
    """A plugin's per-node Score of every node, or the first failure."""
    values: list[int] = []
    append = values.append
    for node_info in nodes:
        try:
            value, status = score_fn(state, pod, node_info)
        except Exception as err:
            return [], Status(Code.ERROR, f"{type(err).__name__}: {err}")
        if status is not None and status.code != Code.SUCCESS:
            return [], status
        append(value)
    return values, None


def _normalize(
    extensions: Any,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    rows: NodeRows | None,
    values: Any,
    plugin: str,
) -> tuple[Any, Status | None]:
    """NormalizeScore by the plugin's vectorized form when it has one and the scores are an
    array (``normalize_rows`` of the cycle, which may answer None, or ``normalize_columns``
    of the values), else over NodeScores; a sampled cycle observes either as one call."""
    if isinstance(values, np.ndarray) and rows is not None:
        start = time.perf_counter()
        by_rows = getattr(extensions, "normalize_rows", None)
        if by_rows is not None:
            try:
                normalized = by_rows(state, pod, rows, values)
            except Exception:
                normalized = None  # the per-node form reports the error
            if normalized is not None:
                observe_normalize(state.observer, plugin, None, start)
                return normalized, None
        by_values = getattr(extensions, "normalize_columns", None)
        if by_values is not None:
            status = None
            try:
                values = by_values(values)
            except Exception as err:
                status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
            observe_normalize(state.observer, plugin, status, start)
            return values, status
    raw = values.tolist() if isinstance(values, np.ndarray) else values
    scores = [NodeScore(ni.name, v) for ni, v in zip(nodes, raw, strict=True)]
    try:
        status = extensions.normalize_score(state, pod, scores)
    except Exception as err:
        status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
    if status is not None and status.code != Code.SUCCESS:
        return values, status
    return [s.score for s in scores], None


def _out_of_range(name: str, values: list[int]) -> Status:
    """The error for the first score outside [MinNodeScore, MaxNodeScore]."""
    bad = next(v for v in values if v > MAX_NODE_SCORE or v < MIN_NODE_SCORE)
    return _error(
        f"plugin {name!r} returns an invalid score {bad}, it should in the "
        f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
        name,
    )


def _error(message: str, plugin: str) -> Status:
    status = Status(Code.ERROR, message)
    status.plugin = plugin
    return status


# --- the nodes' rows ----------------------------------------------------------------------


def rows_of(
    fwk: Framework, state: CycleState, nodes: Sequence[NodeInfo], snapshot: Snapshot
) -> NodeRows | None:
    """The nodes' rows in the snapshot's columns, or None when the cycle takes the per-node
    forms alone (vectorized forms switched off, an explained cycle, no usable columns) or
    the nodes are not the snapshot's own NodeInfos."""
    columns = snapshot.columns
    if columns is None or not columns.usable or not fwk.use_batch or state.recorder is not None:
        return None
    if isinstance(nodes, NodeList):
        return NodeRows(columns, nodes.rows)
    if nodes is snapshot.node_infos:
        return NodeRows(columns, columns.all_rows)
    # By name, then by identity (a clone with a nominated pod is not the snapshot's row).
    try:
        rows = np.fromiter(map(columns.row_of.__getitem__, map(_NAME, nodes)), np.intp, len(nodes))
    except KeyError:
        return None
    given = np.empty(len(nodes), dtype=object)
    given[:] = list(nodes)
    return NodeRows(columns, rows) if (columns.infos[rows] == given).all() else None
