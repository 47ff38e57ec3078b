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

from wasmsched.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE
from wasmsched.framework.records import NodePluginScores
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.framework.runtime import Framework

__all__ = [
    "FilterBatch",
    "ScoreBatch",
    "batch_forms",
    "filter_batch_ready",
    "filter_chunk_floor",
    "filter_verdict",
    "out_of_range",
    "plugin_scores",
    "run_filter_plugins_batch",
    "score_totals",
]

# A plugin's batch Score form: every node's score in the order given, or the status of the
# first node whose per-node Score would have failed.
ScoreBatch = Callable[["CycleState", "Pod", Sequence["NodeInfo"]], tuple[list[int], Status | None]]
# A plugin's batch Filter form: every node's Filter status, in the order given.
FilterBatch = Callable[["CycleState", "Pod", Sequence["NodeInfo"]], list[Status | None]]
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
    # A plugin whose Filter calls have effects (``filter_batch_effects``: a wasm guest's logs
    # and state) must see exactly the nodes the per-node search shows it: it has to be the
    # only such plugin and the last one, as nodes after a later plugin's error are not
    # filtered (the chunks end at the stop node, see filter_chunk_floor).
    active = [p for p in fwk.filter_plugins if p.name not in skip]
    marked = [i for i, p in enumerate(active) if getattr(p, "filter_batch_effects", False)]
    return not marked or marked == [len(active) - 1]


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
