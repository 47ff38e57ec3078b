"""The node search node by node: without rows (framework/node_search's
``find_nodes_that_pass_filters`` when the cycle has no columns: a DaemonSet pod's named
node, an explained cycle), and a plugin without a vectorized form inside a chunk of rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from wasmsched.framework.columns import IntArray, verdicts
from wasmsched.framework.diagnosis import CycleError, Diagnosis
from wasmsched.framework.nominated import NominatedPods, run_filter_plugins_with_nominated_pods
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo
    from wasmsched.framework.runtime import Framework

__all__ = ["filter_by_node", "filter_node_by_node"]


def filter_node_by_node(
    nominator: NominatedPods,
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    diagnosis: Diagnosis,
    nodes: Sequence[NodeInfo],
    start: int,
    to_find: int,
) -> list[NodeInfo]:
    """The search without rows (a DaemonSet pod's named node, an explained cycle): node by
    node from ``start``, round robin, as the chunks filter without rows, minus their
    arrays. A node that passes when ``to_find`` are found cancels the search and is not
    kept; rejections are recorded as they come; the first error ends the search."""
    nts = diagnosis.node_to_status
    num_nodes = len(nodes)
    at = start % num_nodes
    feasible: list[NodeInfo] = []
    try:
        for _ in range(num_nodes):
            node_info = nodes[at]
            at = at + 1 if at + 1 < num_nodes else 0
            if nominator:
                status = run_filter_plugins_with_nominated_pods(
                    nominator, fwk, state, pod, node_info
                )
            else:
                status = fwk.run_filter_plugins(state, pod, node_info)
            if status is None or status.code == Code.SUCCESS:
                if len(feasible) == to_find:
                    break
                feasible.append(node_info)
            elif status.is_rejected():
                nts.set(node_info.name, status)
                diagnosis.add_plugin_status(status)
            else:
                raise CycleError(status)
    finally:
        diagnosis.evaluated_nodes = len(feasible) + len(nts)
    return feasible


def filter_by_node(
    filter_fn: Callable[[CycleState, Pod, NodeInfo], Status | None],
    state: CycleState,
    pod: Pod,
    infos: list[NodeInfo],
) -> tuple[IntArray, list[Status]]:
    """A plugin's per-node Filter of every node, up to its first error (a plugin without
    a vectorized form, in a chunk of the search with rows)."""
    statuses: list[Status | None] = []
    for node_info in infos:
        try:
            status = filter_fn(state, pod, node_info)
        except Exception as err:
            status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
        statuses.append(status)
        if status is not None and status.code != Code.SUCCESS and not status.is_rejected():
            break
    return verdicts(len(infos), enumerate(statuses))
