"""Batch forms of the Filter and Score extension points (framework/batch).

Upstream runs every Filter and Score plugin once per node (pkg/scheduler/framework/runtime/
framework.go: RunFilterPlugins, RunScorePlugins). A plugin may also offer ``filter_batch``
and ``score_batch``: one call over the candidate nodes that answers, node by node and in
order, exactly what its per-node form would. The framework uses them when every plugin of
the point offers one (Filter) or plugin by plugin (Score); wasm guests, extenders and
out-of-tree plugins keep the per-node protocol.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.columns import IntArray, NodeRows, verdicts
from wasmsched.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from wasmsched.framework.records import NodePluginScores
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.framework.runtime import Framework

__all__ = [
    "FilterBatch",
    "FilterColumns",
    "ScoreBatch",
    "ScoreColumns",
    "batch_forms",
    "columnar_forms",
    "columns_ready",
    "filter_batch_ready",
    "filter_chunk_floor",
    "filter_verdict",
    "out_of_range",
    "plugin_scores",
    "run_filter_plugins_batch",
    "run_filter_plugins_columns",
    "run_score_plugins_columns",
    "score_totals",
]

# A plugin's batch Score form: every node's score in the order given, or the status of the
# first node whose per-node Score would have failed.
ScoreBatch = Callable[["CycleState", "Pod", Sequence["NodeInfo"]], tuple[list[int], Status | None]]
# A plugin's batch Filter form: every node's Filter status, in the order given.
FilterBatch = Callable[["CycleState", "Pod", Sequence["NodeInfo"]], list[Status | None]]
# A plugin's columnar Filter form (framework/columns): per row, 0 when it passes, else k for
# ``statuses[k - 1]``; None when it cannot answer in columns (the caller asks per node).
FilterColumns = Callable[
    ["CycleState", "Pod", NodeRows], "tuple[IntArray, Sequence[Status]] | None"
]
# A plugin's columnar Score form: every row's raw score, or None (the caller asks per node).
ScoreColumns = Callable[["CycleState", "Pod", NodeRows], "IntArray | None"]
# A per-node Score call, as the framework's run tuples hold it.
ScoreCall = Callable[["CycleState", "Pod", "NodeInfo"], tuple[int, Status | None]]


def batch_forms(plugins: Iterable[Any], attr: str) -> dict[str, Any]:
    """Plugin name -> its bound batch form ``attr``, for the plugins that offer one."""
    forms: dict[str, Any] = {}
    for plugin in plugins:
        form = getattr(plugin, attr, None)
        if form is not None:
            forms[plugin.name] = form
    return forms


def columnar_forms(fwk: Framework) -> tuple[dict[str, FilterColumns], dict[str, ScoreColumns]]:
    """The Filter and Score plugins' columnar forms (``filter_columns``, ``score_columns``)."""
    filters = batch_forms(fwk.filter_plugins, "filter_columns")
    return filters, batch_forms([p for p, _ in fwk.score_plugins], "score_columns")


def plugin_scores(
    batch: ScoreBatch | None,
    score_fn: ScoreCall,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
) -> tuple[list[int], Status | None]:
    """One Score plugin's score of every node, by its batch form when given, else per node;
    the status, when not None, is the first failure (the error that ends the cycle)."""
    if batch is not None:
        try:
            values, status = batch(state, pod, nodes)
        except Exception as err:
            return [], Status(Code.ERROR, f"{type(err).__name__}: {err}")
        if status is not None and status.code != Code.SUCCESS:
            return [], status
        return values, None
    values = []
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


def out_of_range(name: str, values: Sequence[int]) -> Status | None:
    """The error for the first score outside [MinNodeScore, MaxNodeScore], or None
    (framework.go: RunScorePlugins)."""
    if values and (min(values) < MIN_NODE_SCORE or max(values) > MAX_NODE_SCORE):
        bad = next(v for v in values if v > MAX_NODE_SCORE or v < MIN_NODE_SCORE)
        return Status(
            Code.ERROR,
            f"plugin {name!r} returns an invalid score {bad}, it should in the "
            f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
        )
    return None


def score_totals(
    nodes: Sequence[NodeInfo], names: list[str], columns: list[list[int]]
) -> list[NodePluginScores]:
    """Each node's weighted scores (one column per plugin, in order) and their sum, as
    RunScorePlugins' NodePluginScores; the per-plugin list is built when read."""
    sums = columns[0]
    for column in columns[1:]:
        sums = list(map(operator.add, sums, column))
    return [
        NodePluginScores(ni.name, [], total, (names, columns, i))
        for i, (ni, total) in enumerate(zip(nodes, sums, strict=True))
    ]


def filter_batch_ready(fwk: Framework, state: CycleState) -> bool:
    """Whether this cycle's Filter plugins (those PreFilter did not skip) all offer a batch
    form, so that ``run_filter_plugins_batch`` may stand for the per-node runner. Observed
    cycles keep the per-node calls, which the observer times one by one.
    """
    if not fwk.use_batch or state.observer is not None:
        return False
    skip = state.skip_filter_plugins
    batches = fwk.filter_batches
    if not all(name in batches for name, _ in fwk.filter_calls if name not in skip):
        return False
    return _effects_last(fwk, state)


def filter_chunk_floor(fwk: Framework, state: CycleState, floor: int) -> int:
    """The fewest nodes a batch Filter chunk may hold beyond those the search still needs:
    ``floor``, or 1 when a Filter plugin's calls have effects (``filter_batch_effects``), so
    that no chunk goes past the node where the search stops."""
    skip = state.skip_filter_plugins
    for plugin in fwk.filter_plugins:
        if plugin.name not in skip and getattr(plugin, "filter_batch_effects", False):
            return 1
    return floor


def run_filter_plugins_batch(
    fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> list[tuple[str, Status] | None]:
    """Per node, in order: None when every Filter passes it, else (the first plugin whose
    status is not a success, that status), as ``run_filter_plugins`` would find it on its
    own; a node that one plugin rejects is not shown to the plugins after it. The statuses
    are raw: the caller names the plugin, records, and wraps errors exactly as
    ``run_filter_plugins`` does, for the nodes that the sampled search reaches.
    """
    skip = state.skip_filter_plugins
    batches = fwk.filter_batches
    out: list[tuple[str, Status] | None] = [None] * len(nodes)
    alive = list(range(len(nodes)))
    for name, filter_fn in fwk.filter_calls:
        if skip and name in skip:
            continue
        if not alive:
            break
        subset = [nodes[i] for i in alive] if len(alive) != len(nodes) else nodes
        try:
            statuses = batches[name](state, pod, subset)
        except Exception:
            # The per-node calls say which node raised, and with which message.
            statuses = []
            for node_info in subset:
                try:
                    statuses.append(filter_fn(state, pod, node_info))
                except Exception as err:
                    statuses.append(Status(Code.ERROR, f"{type(err).__name__}: {err}"))
        still: list[int] = []
        for i, status in zip(alive, statuses, strict=True):
            if status is None or status.code == Code.SUCCESS:
                still.append(i)
            else:
                out[i] = (name, status)
                if not status.is_rejected():
                    break  # the search ends at this node: no later node is filtered
        alive = still
    return out


def filter_verdict(
    fwk: Framework, state: CycleState, node_info: NodeInfo, found: tuple[str, Status] | None
) -> Status | None:
    """What ``run_filter_plugins`` returns (and records) for a node, from the first failing
    plugin and status that ``run_filter_plugins_batch`` found for it."""
    rec = state.recorder
    if rec is not None and rec.filter_order is None:
        skip = state.skip_filter_plugins
        rec.filter_order = tuple(n for n, _ in fwk.filter_calls if n not in skip)
    if found is None:
        if rec is not None:
            rec.filter_rows.append((node_info.name, None, None))
        return None
    name, status = found
    if rec is not None:
        rec.filter_rows.append((node_info.name, name, status))
    if not status.is_rejected():
        error = Status(Code.ERROR, f"running {name!r} filter plugin: {status.message}")
        error.plugin = name
        return error
    status.plugin = name
    return status


# --- columnar forms (framework/columns) ---------------------------------------------------


def columns_ready(fwk: Framework, state: CycleState, rows: NodeRows | None) -> bool:
    """Whether the columnar runners may stand for the per-node ones this cycle: batch forms
    on, the cycle neither observed nor explained (both read every per-node call), and
    columns usable for the snapshot."""
    return (
        rows is not None
        and fwk.use_batch
        and state.observer is None
        and state.recorder is None
        and rows.columns.usable
    )


def filter_columns_ready(fwk: Framework, state: CycleState) -> bool:
    """Whether every Filter plugin of this cycle has a batch or columnar form. Those are
    free of side effects, so filtering a few nodes past the search's stop changes nothing,
    except one whose calls have effects (a wasm guest's): it must be the last, and the
    search then cuts its chunks at the stop (an extender is called exactly on the nodes
    the search reaches)."""
    skip = state.skip_filter_plugins
    cols = fwk.filter_columns
    batches = fwk.filter_batches
    if not all(name in cols or name in batches for name, _ in fwk.filter_calls if name not in skip):
        return False
    return _effects_last(fwk, state)


def _effects_last(fwk: Framework, state: CycleState) -> bool:
    # A plugin whose Filter calls have effects (``filter_batch_effects``: a wasm guest's logs
    # and state) must see exactly the nodes the per-node search shows it: it has to be the
    # only such plugin and the last one, as nodes after a later plugin's error are not
    # filtered (the searches' chunks end at the stop node, see filter_chunk_floor).
    skip = state.skip_filter_plugins
    active = [p for p in fwk.filter_plugins if p.name not in skip]
    marked = [i for i, p in enumerate(active) if getattr(p, "filter_batch_effects", False)]
    return not marked or marked == [len(active) - 1]


def _filter_per_node(
    batch: FilterBatch | None,
    filter_fn: Callable[[CycleState, Pod, NodeInfo], Status | None],
    state: CycleState,
    pod: Pod,
    infos: list[NodeInfo],
) -> list[Status | None]:
    if batch is not None:
        try:
            return batch(state, pod, infos)
        except Exception:
            pass  # the per-node calls say which node raised, and with which message
    statuses: list[Status | None] = []
    for node_info in infos:
        try:
            statuses.append(filter_fn(state, pod, node_info))
        except Exception as err:
            statuses.append(Status(Code.ERROR, f"{type(err).__name__}: {err}"))
    return statuses


def run_filter_plugins_columns(
    fwk: Framework, state: CycleState, pod: Pod, rows: NodeRows
) -> tuple[IntArray, list[tuple[str, Status]]]:
    """``run_filter_plugins_batch`` over columns: per row, 0 when every Filter passes it,
    else k for ``found[k - 1]``, (the first plugin whose status is not a success, that
    status). A row that one plugin rejects is not shown to the plugins after it."""
    skip = state.skip_filter_plugins
    cols = fwk.filter_columns
    batches = fwk.filter_batches
    size = len(rows)
    failed = np.zeros(size, np.int64)
    found: list[tuple[str, Status]] = []
    alive: np.ndarray[Any, np.dtype[np.intp]] | None = None  # None: every row
    for name, filter_fn in fwk.filter_calls:
        if skip and name in skip:
            continue
        subset = rows if alive is None else rows.take(alive)
        if not len(subset):
            break
        answer = None
        form = cols.get(name)
        if form is not None:
            try:
                answer = form(state, pod, subset)
            except Exception:
                answer = None
        if answer is None:
            statuses = _filter_per_node(batches.get(name), filter_fn, state, pod, subset.infos())
            answer = verdicts(len(subset), enumerate(statuses))
        codes, table = answer
        if not table:
            continue
        rejected = np.flatnonzero(codes)
        if not len(rejected):
            continue
        offset = len(found)
        found.extend((name, status) for status in table)
        where = rejected if alive is None else alive[rejected]
        failed[where] = codes[rejected] + offset
        alive = np.flatnonzero(failed == 0)
        errors = [k for k, status in enumerate(table, 1) if not status.is_rejected()]
        if errors:
            # The search ends at the first error: no row after it is shown to later plugins.
            first_error = int(where[np.flatnonzero(np.isin(codes[rejected], errors))[0]])
            alive = alive[alive < first_error]
    return failed, found


def run_score_plugins_columns(
    fwk: Framework, state: CycleState, pod: Pod, rows: NodeRows
) -> tuple[IntArray, Status | None]:
    """``Framework.run_score_plugins`` over columns, totals only: Score (columnar form, else
    batch, else per node), NormalizeScore, the range check and the weights, with the same
    errors (pkg/scheduler/framework/runtime/framework.go: RunScorePlugins)."""
    skip = state.skip_score_plugins
    totals = np.zeros(len(rows), np.int64)
    cols = fwk.score_columns
    batches = fwk.score_batches
    for name, score_fn, weight, extensions in fwk.score_calls:
        if skip and name in skip:
            continue
        values: Any = None
        form = cols.get(name)
        if form is not None:
            try:
                values = form(state, pod, rows)
            except Exception:
                values = None
        if values is None:
            listed, status = plugin_scores(batches.get(name), score_fn, state, pod, rows.infos())
            if status is not None:
                return totals, _error(f"running Score plugin {name!r}: {status.message}", name)
            values = listed
        if extensions is not None:
            values, status = _normalize(extensions, state, pod, rows, values)
            if status is not None:
                return totals, _error(
                    f"running Normalize on Score plugin {name!r}: {status.message}", name
                )
        if not isinstance(values, np.ndarray):
            invalid = out_of_range(name, values)
            if invalid is not None:
                invalid.plugin = name
                return totals, invalid
            values = np.array(values, dtype=np.int64)
        elif len(values) and (
            int(values.min()) < MIN_NODE_SCORE or int(values.max()) > MAX_NODE_SCORE
        ):
            invalid = out_of_range(name, values.tolist())
            assert invalid is not None
            invalid.plugin = name
            return totals, invalid
        totals += values if weight == 1 else values * weight
    return totals, None


def _error(message: str, plugin: str) -> Status:
    status = Status(Code.ERROR, message)
    status.plugin = plugin
    return status


def _normalize(
    extensions: Any, state: CycleState, pod: Pod, rows: NodeRows, values: Any
) -> tuple[Any, Status | None]:
    """NormalizeScore by the plugin's columnar form when it has one (``normalize_columns``
    of the values, or ``normalize_rows`` of the cycle, which may answer None), else over
    NodeScores."""
    by_rows = getattr(extensions, "normalize_rows", None)
    if by_rows is not None and isinstance(values, np.ndarray):
        try:
            normalized = by_rows(state, pod, rows, values)
        except Exception:
            normalized = None  # the per-node form reports the error
        if normalized is not None:
            return normalized, None
    norm = getattr(extensions, "normalize_columns", None)
    if norm is not None and isinstance(values, np.ndarray):
        try:
            return norm(values), None
        except Exception as err:
            return values, Status(Code.ERROR, f"{type(err).__name__}: {err}")
    raw = values.tolist() if isinstance(values, np.ndarray) else values
    scores = [NodeScore(ni.name, v) for ni, v in zip(rows.infos(), raw, strict=True)]
    try:
        status = extensions.normalize_score(state, pod, scores)
    except Exception as err:
        status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
    if status is not None and status.code != Code.SUCCESS:
        return values, status
    return [s.score for s in scores], None
