"""The node search's batch and columnar forms (pkg/scheduler/schedule_one.go:
findNodesThatPassFilters), used by ``schedule_one.find_nodes_that_pass_filters`` when every
Filter plugin of the cycle offers one: the same round-robin order, stop rule, rejected
nodes and evaluated-node count as the per-node loop there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.batch import (
    filter_chunk_floor,
    filter_verdict,
    run_filter_plugins_batch,
    run_filter_plugins_columns,
)
from wasmsched.framework.columns import NodeList, NodeRows
from wasmsched.scheduler.types import CycleError

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.diagnosis import Diagnosis
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.framework.runtime import Framework

__all__ = ["pass_filters_batch", "pass_filters_columns"]

# Nodes filtered per batch beyond the ones still needed: a few wasted Filter calls on a
# chunk's tail are cheaper than many small batches when some nodes are rejected.
_MIN_FILTER_CHUNK = 32


def pass_filters_batch(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    diagnosis: Diagnosis,
    nodes: Sequence[NodeInfo],
    to_find: int,
    start: int,
) -> list[NodeInfo]:
    """findNodesThatPassFilters with the plugins' batch Filter forms: nodes go to Filter in
    chunks, in the same round-robin order; the verdicts are then read node by node, so the
    search stops (at one feasible node more than needed, not kept), names the rejecting
    plugin and counts the nodes exactly as the per-node loop does
    (pkg/scheduler/schedule_one.go: findNodesThatPassFilters). A chunk's nodes after the
    stop were filtered for nothing; nothing of them is kept.
    """
    feasible: list[NodeInfo] = []
    nts = diagnosis.node_to_status
    num_nodes = len(nodes)
    processed = 0
    plain = state.recorder is None  # nothing to record for a node that passes
    floor = filter_chunk_floor(fwk, state, _MIN_FILTER_CHUNK)
    try:
        while processed < num_nodes:
            wanted = to_find - len(feasible) + 1  # the node that cancels the search
            size = min(max(wanted, floor), num_nodes - processed)
            chunk = [nodes[(start + processed + i) % num_nodes] for i in range(size)]
            found = run_filter_plugins_batch(fwk, state, pod, chunk)
            for node_info, failed in zip(chunk, found, strict=True):
                processed += 1
                status = (
                    None
                    if failed is None and plain
                    else filter_verdict(fwk, state, node_info, failed)
                )
                if status is None:
                    if len(feasible) >= to_find:
                        return feasible  # the context is cancelled: this node is not kept
                    feasible.append(node_info)
                    continue
                if not status.is_rejected():
                    raise CycleError(status)
                nts.set(node_info.name, status)
                diagnosis.add_plugin_status(status)
    finally:
        diagnosis.evaluated_nodes = len(feasible) + len(nts)
    return feasible


def pass_filters_columns(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    diagnosis: Diagnosis,
    rows: NodeRows,
    to_find: int,
    start: int,
) -> list[NodeInfo]:
    """findNodesThatPassFilters over the columns (framework/columns): the rows go to
    Filter in chunks, in the same round-robin order from ``start``; the search stops at the
    feasible node after the ``to_find``-th (not kept), and the rejected nodes before the
    stop are recorded in order with their first failing plugin, exactly as the per-node
    loop does (pkg/scheduler/schedule_one.go: findNodesThatPassFilters). A chunk's rows
    after the stop were filtered for nothing; nothing of them is kept.
    """
    nts = diagnosis.node_to_status
    num_nodes = len(rows)
    if not num_nodes:
        diagnosis.evaluated_nodes = len(nts)
        return []
    base = rows.rows
    first = start % num_nodes
    kept: list[np.ndarray[Any, np.dtype[np.intp]]] = []
    found_count = 0
    processed = 0
    infos = rows.columns.infos
    # 1 when a plugin's Filter calls have effects: chunks then end where the search stops.
    floor = filter_chunk_floor(fwk, state, _MIN_FILTER_CHUNK)
    grow = floor > 1
    try:
        while processed < num_nodes:
            wanted = to_find - found_count + 1  # the node that cancels the search
            size = min(max(wanted, floor, processed if grow else 0), num_nodes - processed)
            # The round-robin order from nextStartNodeIndex, wrapping around.
            lo = first + processed
            if lo >= num_nodes:
                lo -= num_nodes
            hi = lo + size
            if hi <= num_nodes:
                chunk_rows = base[lo:hi]
            else:
                chunk_rows = np.concatenate((base[lo:], base[: hi - num_nodes]))
            chunk = NodeRows(rows.columns, chunk_rows)
            failed, found = run_filter_plugins_columns(fwk, state, pod, chunk)
            passed = np.flatnonzero(failed == 0)
            stop = size
            if len(passed) >= wanted:
                stop = int(passed[wanted - 1])  # the cancelling node, not kept
                passed = passed[: wanted - 1]
            rejected = np.flatnonzero(failed[:stop])
            for pos in rejected.tolist():
                name, raw = found[int(failed[pos]) - 1]
                node_info = infos[chunk.rows[pos]]
                status = filter_verdict(fwk, state, node_info, (name, raw))
                assert status is not None
                if not status.is_rejected():
                    kept.append(chunk.rows[passed[passed < pos]])
                    found_count += int((passed < pos).sum())
                    raise CycleError(status)
                nts.set(node_info.name, status)
                diagnosis.add_plugin_status(status)
            kept.append(chunk.rows[passed])
            found_count += len(passed)
            processed += size
            if stop < size:
                break
    finally:
        diagnosis.evaluated_nodes = found_count + len(nts)
    if not kept:
        feasible_rows = np.empty(0, np.intp)
    else:
        feasible_rows = np.concatenate(kept) if len(kept) != 1 else kept[0]
    return NodeList(infos[feasible_rows].tolist(), feasible_rows)
