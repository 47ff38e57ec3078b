"""The scheduling algorithm and the scheduling cycle (pkg/scheduler/schedule_one.go).

The algorithm is a set of functions over a framework, a snapshot and the extenders:
``schedule_pod`` finds the nodes that fit (``find_nodes_that_fit``), scores them
(``prioritize_nodes``) and picks one (``select_host``). ``scheduling_cycle`` runs it for
one pod, then Reserve and Permit, and returns the assumed pod for the binding cycle
(binding.py) or the failure for the failure handler (failure.py).
"""

from __future__ import annotations

import logging
import operator
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from wasmsched.framework.batch import (
    columns_ready,
    filter_batch_ready,
    filter_columns_ready,
    run_score_plugins_columns,
)
from wasmsched.framework.columns import IntArray, NodeList, NodeRows
from wasmsched.framework.diagnosis import (
    NO_NODES_AVAILABLE,
    Diagnosis,
    FailureMemo,
    FitError,
    RememberedFailure,
)
from wasmsched.framework.extender import MAX_EXTENDER_PRIORITY, Extender, ExtenderError
from wasmsched.framework.interfaces import MAX_NODE_SCORE, NominatingInfo
from wasmsched.framework.records import NodePluginScores, PluginScore
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler.failure import SchedulingFailure, rejection
from wasmsched.scheduler.filter_search import pass_filters_batch, pass_filters_columns
from wasmsched.scheduler.host_selection import select_host_index
from wasmsched.scheduler.types import AssumedPod, CycleError, NoNodes

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo, Snapshot
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.types import QueuedPodInfo
    from wasmsched.queue.nominator import Nominator
    from wasmsched.scheduler.scheduler import Scheduler

log = logging.getLogger("wasmsched.scheduler")

_NAME = operator.attrgetter("name")

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (k8s numFeasibleNodesToFind)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class Algorithm:
    """What the algorithm uses besides the framework and the snapshot: the extenders, the
    nominator, the tie-breaking generator, and where the next node search starts
    (schedule_one.go's ``sched.nextStartNodeIndex``)."""

    extenders: Sequence[Extender]
    nominator: Nominator
    rng: random.Random
    percentage_of_nodes_to_score: int
    next_start_node_index: int = 0
    # Failed cycles kept while the cluster does not change (framework/diagnosis).
    failure_memo: FailureMemo = field(default_factory=FailureMemo)


@dataclass
class ScheduleResult:
    """The chosen node and how many nodes were looked at (k8s ScheduleResult)."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    top: list[NodePluginScores] = field(default_factory=list)


# --- the algorithm -----------------------------------------------------------------------


def schedule_pod(
    alg: Algorithm, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
) -> ScheduleResult:
    """k8s schedulePod: fit, score, select; FitError when no node fits."""
    if len(snapshot) == 0:
        raise NoNodes()
    feasible, diagnosis = find_nodes_that_fit(alg, fwk, state, pod, snapshot)
    if not feasible:
        raise FitError(len(snapshot), diagnosis)
    evaluated = diagnosis.evaluated_nodes
    if len(feasible) == 1:
        return ScheduleResult(feasible[0].name, evaluated, 1)
    rows = _rows_of(fwk, state, feasible, snapshot)
    if (
        rows is not None
        and columns_ready(fwk, state, rows)
        and not any(e.has_prioritize for e in alg.extenders)
    ):
        totals = prioritize_nodes_columns(fwk, state, pod, feasible, rows)
        host = feasible[select_host_index(totals, alg.rng)].name
    else:
        priorities = prioritize_nodes(alg.extenders, fwk, state, pod, feasible)
        host = select_host(priorities, alg.rng)
    return ScheduleResult(host, evaluated, len(feasible))


def _rows_of(
    fwk: Framework, state: CycleState, nodes: Sequence[NodeInfo], snapshot: Snapshot
) -> NodeRows | None:
    """The nodes' rows in the snapshot's columns, or None when the cycle takes the per-node
    path (see framework/batch: columns_ready) or they are not the snapshot's own NodeInfos
    (or it has no columns)."""
    columns = snapshot.columns
    if (
        columns is None
        or not columns.usable
        or not fwk.use_batch
        or state.observer is not None
        or state.recorder is not None
    ):
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


def find_nodes_that_fit(
    alg: Algorithm, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
) -> tuple[list[NodeInfo], Diagnosis]:
    """k8s findNodesThatFitPod: PreFilter, the nominated node first, Filter, extenders."""
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
    if nominated:
        # schedule_one.go: evaluateNominatedNode. It leaves nextStartNodeIndex alone, but
        # a failure is written to the shared NodeToStatus and so counts below.
        node_info = snapshot.get(nominated)
        if node_info is not None:
            feasible = find_nodes_that_pass_filters(alg, fwk, state, pod, diagnosis, [node_info])
            if alg.extenders and feasible:
                feasible = find_nodes_that_pass_extenders(alg.extenders, pod, feasible, diagnosis)
            if feasible:
                return feasible, diagnosis

    nodes: Sequence[NodeInfo] = all_nodes
    if pre_result is not None and pre_result.node_names is not None:
        names = pre_result.node_names
        nodes = [ni for ni in all_nodes if ni.name in names]
        diagnosis.node_to_status.absent_nodes_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",
        )
    try:
        feasible = find_nodes_that_pass_filters(
            alg, fwk, state, pod, diagnosis, nodes, _rows_of(fwk, state, nodes, snapshot)
        )
    finally:
        # findNodesThatFitPod: processedNodes = len(feasibleNodes) + NodeToStatus.Len(),
        # updated even on an error, modulo the number of all nodes.
        processed = diagnosis.evaluated_nodes
        alg.next_start_node_index = (alg.next_start_node_index + processed) % len(all_nodes)
    if alg.extenders and feasible:
        feasible = find_nodes_that_pass_extenders(alg.extenders, pod, feasible, diagnosis)
    return feasible, diagnosis


def find_nodes_that_pass_extenders(
    extenders: Sequence[Extender], pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
) -> list[NodeInfo]:
    """k8s findNodesThatPassExtenders: extenders filter in turn; unresolvable wins."""
    nts = diagnosis.node_to_status
    for extender in extenders:
        if not feasible:
            break
        if not extender.has_filter or not extender.is_interested(pod):
            continue
        try:
            feasible, failed, unresolvable = extender.filter(pod, feasible)
        except ExtenderError as err:
            if extender.ignorable:
                log.info("skipping ignorable extender %s: %s", extender.name, err)
                continue
            raise CycleError(Status(Code.ERROR, str(err))) from None
        for node_name, msg in unresolvable.items():
            nts.set(node_name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg))
        for node_name, msg in failed.items():
            if node_name not in unresolvable:
                nts.set(node_name, Status(Code.UNSCHEDULABLE, msg))
    return feasible


def find_nodes_that_pass_filters(
    alg: Algorithm,
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    diagnosis: Diagnosis,
    nodes: Sequence[NodeInfo],
    rows: NodeRows | None = None,
) -> list[NodeInfo]:
    """k8s findNodesThatPassFilters: from nextStartNodeIndex round-robin, until enough.

    As kube-scheduler at parallelism 1: its checkNode cancels the search when it finds
    one feasible node more than it needs (that node is dropped), so the nodes rejected
    before it are recorded too. ``diagnosis.evaluated_nodes`` becomes
    len(feasible) + NodeToStatus.Len(), what findNodesThatFitPod advances the start by.
    """
    num_nodes = len(nodes)
    percentage = fwk.percentage_of_nodes_to_score
    if percentage is None:
        percentage = alg.percentage_of_nodes_to_score
    to_find = num_feasible_nodes_to_find(percentage, num_nodes)
    if not fwk.has_score_plugins and not any(
        e.has_filter or e.has_prioritize for e in alg.extenders
    ):
        to_find = min(to_find, 1) if num_nodes else 0
    start = alg.next_start_node_index
    nts = diagnosis.node_to_status
    if not fwk.has_filter_plugins:
        chosen = [nodes[(start + i) % num_nodes] for i in range(min(to_find, num_nodes))]
        diagnosis.evaluated_nodes = len(chosen) + len(nts)
        return chosen
    feasible: list[NodeInfo] = []
    if not alg.nominator:
        if columns_ready(fwk, state, rows) and filter_columns_ready(fwk, state):
            assert rows is not None
            return pass_filters_columns(fwk, state, pod, diagnosis, rows, to_find, start)
        if filter_batch_ready(fwk, state):
            return pass_filters_batch(fwk, state, pod, diagnosis, nodes, to_find, start)
    run_filters = fwk.run_filter_plugins
    nominator = alg.nominator
    try:
        for i in range(num_nodes):
            node_info = nodes[(start + i) % num_nodes]
            if nominator:
                status = run_filter_plugins_with_nominated_pods(
                    nominator, fwk, state, pod, node_info
                )
            else:
                status = run_filters(state, pod, node_info)
            if status is None:
                if len(feasible) >= to_find:
                    break  # the context is cancelled: this node is not kept
                feasible.append(node_info)
                continue
            if not status.is_rejected():
                raise CycleError(status)
            nts.set(node_info.name, status)
            diagnosis.add_plugin_status(status)
    finally:
        diagnosis.evaluated_nodes = len(feasible) + len(nts)
    return feasible


def run_filter_plugins_with_nominated_pods(
    nominator: Nominator, fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo
) -> Status | None:
    """k8s RunFilterPluginsWithNominatedPods: filter with and without nominated pods."""
    nominated = [
        pi
        for pi in nominator.pods_for_node(node_info.name)
        if pi.pod.uid != pod.uid and pi.pod.priority >= pod.priority
    ]
    if not nominated:
        return fwk.run_filter_plugins(state, pod, node_info)
    state_with = state.clone()
    info_with = node_info.clone()
    for pi in nominated:
        info_with.add_pod_info(pi)
        status = fwk.run_pre_filter_extension_add_pod(state_with, pod, pi, info_with)
        if status is not None:
            return status
    status = fwk.run_filter_plugins(state_with, pod, info_with)
    if status is not None:
        return status
    return fwk.run_filter_plugins(state, pod, node_info)


def prioritize_nodes(
    extenders: Sequence[Extender],
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    nodes: list[NodeInfo],
) -> list[NodePluginScores]:
    """k8s prioritizeNodes: PreScore, Score (normalized, weighted), extender scores."""
    prioritizers = [e for e in extenders if e.has_prioritize]
    if not fwk.has_score_plugins and not prioritizers:
        return [NodePluginScores(ni.name, [], 1) for ni in nodes]
    status = fwk.run_pre_score_plugins(state, pod, nodes)
    if status is not None:
        raise CycleError(status)
    scores, status = fwk.run_score_plugins(state, pod, nodes)
    if status is not None:
        raise CycleError(status)
    if prioritizers:
        add_extender_scores(prioritizers, pod, nodes, scores)
    return scores


def add_extender_scores(
    extenders: Sequence[Extender],
    pod: Pod,
    nodes: list[NodeInfo],
    scores: list[NodePluginScores],
) -> None:
    """Extender scores, scaled by weight * MaxNodeScore / MaxExtenderPriority (10)."""
    by_name = {entry.name: entry for entry in scores}
    for extender in extenders:
        if not extender.is_interested(pod):
            continue
        try:
            priorities = extender.prioritize(pod, nodes)
        except ExtenderError as err:
            # kube-scheduler ignores prioritization errors: other scores decide.
            log.info("extender %s prioritize failed: %s", extender.name, err)
            continue
        for node_name, score in priorities:
            entry = by_name.get(node_name)
            if entry is None:
                continue
            final = score * extender.weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
            entry.scores.append(PluginScore(extender.name, final))
            entry.total_score += final


def prioritize_nodes_columns(
    fwk: Framework, state: CycleState, pod: Pod, nodes: list[NodeInfo], rows: NodeRows
) -> IntArray:
    """``prioritize_nodes`` without extender scores, totals only, by the columnar Score
    runner (framework/batch: run_score_plugins_columns)."""
    if not fwk.has_score_plugins:
        return np.ones(len(nodes), np.int64)
    status = fwk.run_pre_score_plugins(state, pod, nodes)
    if status is not None:
        raise CycleError(status)
    totals, status = run_score_plugins_columns(fwk, state, pod, rows)
    if status is not None:
        raise CycleError(status)
    return totals


def select_host(scores: list[NodePluginScores], rng: random.Random) -> str:
    """The highest total; ties broken by reservoir sampling with the seeded generator."""
    best = scores[0]
    count = 1
    for entry in scores[1:]:
        if entry.total_score > best.total_score:
            best = entry
            count = 1
        elif entry.total_score == best.total_score:
            count += 1
            if rng.randrange(count) == 0:
                best = entry
    return best.name


# --- the scheduling cycle ---------------------------------------------------------------


def scheduling_cycle(
    sched: Scheduler,
    fwk: Framework,
    state: CycleState,
    info: QueuedPodInfo,
    pods_to_activate: dict[str, Pod],
) -> AssumedPod | SchedulingFailure:
    """k8s schedulingCycle: the algorithm (PostFilter on a FitError), Reserve, Permit.

    Returns the pod assumed on its node, for the binding cycle, or why it failed, for the
    failure handler; ``Scheduler.schedule_one`` runs the one or the other."""
    pod = info.pod
    alg = sched.algorithm
    memo = alg.failure_memo
    signature = memo.signature(
        fwk, state, pod, nominations=bool(alg.nominator), extenders=bool(alg.extenders)
    )
    cluster = (sched.cache.generation, sched.cluster_generation)
    start = alg.next_start_node_index
    try:
        snapshot = sched.current_snapshot = sched.cache.snapshot()
        known = memo.recall(cluster, signature) if signature is not None else None
        if known is not None and len(snapshot):
            # The same pod shape failed on this very cluster state: same outcome.
            alg.next_start_node_index = (start + known.start_advance) % len(snapshot)
            failure = Status(Code.UNSCHEDULABLE, known.message)
            return SchedulingFailure(failure, known.diagnosis, known.nominating)
        result = schedule_pod(alg, fwk, state, pod, snapshot)
    except FitError as fit:
        nominating: NominatingInfo | None = None
        pf_status: Status | None = None
        if fwk.has_post_filter_plugins:
            pf_result, pf_status = fwk.run_post_filter_plugins(
                state, pod, fit.diagnosis.node_to_status
            )
            if pf_status is not None:
                fit.diagnosis.post_filter_msg = pf_status.message
            if pf_result is not None:
                nominating = pf_result.nominating_info
        failure = Status(Code.UNSCHEDULABLE, str(fit))
        if signature is not None:
            fit.diagnosis.rejections = fit.diagnosis.rejections_by_plugin()
            advance = (alg.next_start_node_index - start) % len(snapshot)
            remembered = RememberedFailure(failure.message, fit.diagnosis, nominating, advance)
            after = (sched.cache.generation, sched.cluster_generation)
            memo.remember(cluster, after, signature, remembered, pf_status)
        return SchedulingFailure(failure, fit.diagnosis, nominating)
    except NoNodes:
        no_nodes = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_AVAILABLE)
        return SchedulingFailure(no_nodes, Diagnosis())
    except CycleError as err:
        return SchedulingFailure(err.status)

    host = result.suggested_host
    if state.recorder is not None:
        state.recorder.selected_node = host
    assumed = sched.cache.assume_pod(pod, host)
    waits: dict[str, float] = {}
    status = fwk.run_reserve_plugins_reserve(state, assumed, host)
    if status is None:
        status, waits = fwk.run_permit_plugins(state, assumed, host)
        if status is not None and status.code == Code.WAIT:
            status = None  # the binding cycle waits on Permit (WaitOnPermit)
    if status is not None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        sched.cache.forget_pod(assumed)
        fwk.forget_pod(assumed.uid)
        return rejection(host, status)
    # At the end of a successful scheduling cycle, the pods its plugins asked for move up.
    if pods_to_activate:
        sched.queue.activate(pods_to_activate.values())
        pods_to_activate.clear()
    return AssumedPod(assumed, host, waits)
