"""The scheduling algorithm and the scheduling cycle (pkg/scheduler/schedule_one.go).

``schedule_pod`` finds the nodes that fit and scores them (framework/node_search:
``find_nodes_that_fit``, ``prioritize_nodes``), then picks one (host_selection:
``select_host_index``; since 1.35 the top of a heap over them, framework/sorted_nodes). ``scheduling_cycle`` runs it for one pod, then Reserve and
Permit, and returns the assumed pod for the binding cycle (binding.py) or the failure
for the failure handler (failure.py).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from wasmsched.framework.diagnosis import (
    NO_NODES_AVAILABLE,
    CycleError,
    Diagnosis,
    FailureMemo,
    FitError,
    RememberedFailure,
)
from wasmsched.framework.extender import Extender
from wasmsched.framework.interfaces import NominatingInfo
from wasmsched.framework.node_search import find_nodes_that_fit, prioritize_nodes
from wasmsched.framework.sorted_nodes import ScoredNodeHeap, heap_top_index
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler.failure import SchedulingFailure, rejection
from wasmsched.scheduler.host_selection import select_host_index
from wasmsched.scheduler.types import AssumedPod, NoNodes

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.batching import OpportunisticBatch, PodSignature
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import Snapshot
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.types import QueuedPodInfo
    from wasmsched.queue.nominator import Nominator
    from wasmsched.scheduler.scheduler import Scheduler

log = logging.getLogger("wasmsched.scheduler")


@dataclass
class Algorithm:
    """What the algorithm uses besides the framework and the snapshot: the extenders, the
    nominator, the tie-breaking generator, and where the next node search starts
    (schedule_one.go's ``sched.nextStartNodeIndex``); the node search's SearchState."""

    extenders: Sequence[Extender]
    nominator: Nominator
    rng: random.Random
    percentage_of_nodes_to_score: int
    # Since 1.35 the winner is the top of a heap over the scored nodes, not a random pick
    # among the best (SchedulerFeatures.host_from_sorted_nodes).
    host_from_sorted_nodes: bool = False
    # The scheduler's clock (opportunistic batching's state expires on it).
    now: Callable[[], float] = float
    next_start_node_index: int = 0
    # Failed cycles kept while the cluster does not change (framework/diagnosis).
    failure_memo: FailureMemo = field(default_factory=FailureMemo)


@dataclass
class ScheduleResult:
    """The chosen node and how many nodes were looked at (k8s ScheduleResult)."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


# --- the algorithm -----------------------------------------------------------------------


def schedule_pod(
    alg: Algorithm,
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    snapshot: Snapshot,
    cycle: int = 0,
) -> ScheduleResult:
    """k8s schedulePod: fit, score, select; FitError when no node fits. ``cycle``: the
    queue's scheduling cycle (opportunistic batching reads it)."""
    if len(snapshot) == 0:
        raise NoNodes()
    if fwk.batch is not None:
        return _schedule_pod_batched(alg, fwk, fwk.batch, state, pod, snapshot, cycle)
    feasible, diagnosis = find_nodes_that_fit(alg, fwk, state, pod, snapshot)
    if not feasible:
        raise FitError(len(snapshot), diagnosis)
    evaluated = diagnosis.evaluated_nodes
    if len(feasible) == 1:
        return ScheduleResult(feasible[0].name, evaluated, 1)
    if not alg.host_from_sorted_nodes:
        totals = prioritize_nodes(alg, fwk, state, pod, feasible, snapshot)
        host = feasible[select_host_index(totals, alg.rng)].name
        return ScheduleResult(host, evaluated, len(feasible))
    # schedule_one.go (1.35+): NewSortedScoredNodes(priorityList).Pop(); prioritizeNodes
    # gives the nodes an extender scored a Randomizer of rand.Int(), the others 0.
    scored: list[int] = []
    totals = prioritize_nodes(alg, fwk, state, pod, feasible, snapshot, scored)
    randomizers = None
    if scored:
        randomizers = np.zeros(len(totals), np.int64)
        for i in scored:
            randomizers[i] = alg.rng.getrandbits(63)
    host = feasible[heap_top_index(totals, randomizers)].name
    return ScheduleResult(host, evaluated, len(feasible))


def _schedule_pod_batched(
    alg: Algorithm,
    fwk: Framework,
    batch: OpportunisticBatch,
    state: CycleState,
    pod: Pod,
    snapshot: Snapshot,
    cycle: int,
) -> ScheduleResult:
    """schedulePod with OpportunisticBatching (1.35+, a profile whose plugins all sign
    pods and no extenders): the hinted node first, the results stored for the next pod.

    The pod is signed only when the signature is read: by GetNodeHint when a batch is
    kept, and after a cycle with more than one feasible node (a DaemonSet pod's cycle,
    one node, reads it never). Signing has no effects, so when it runs does not matter."""
    now = alg.now()
    hint = ""
    signed: list[PodSignature | None] = []

    def signature() -> PodSignature | None:
        if not signed:
            signed.append(batch.sign(pod))
        return signed[0]

    def node_hint() -> str:
        nonlocal hint
        hint = batch.node_hint(state, pod, signature, cycle, now, snapshot)
        return hint

    feasible, diagnosis = find_nodes_that_fit(alg, fwk, state, pod, snapshot, node_hint)
    if not feasible:
        raise FitError(len(snapshot), diagnosis)
    evaluated = diagnosis.evaluated_nodes
    if len(feasible) == 1:
        host = feasible[0].name
        # Without a heap of other nodes nothing is kept: the signature is not needed.
        batch.store_results(None, hint, host, None, None, cycle, now)
        return ScheduleResult(host, evaluated, 1)
    signed_as = signature()
    if signed_as is None:
        # Nothing is kept for the next pod: no heap to build, only its top.
        totals = prioritize_nodes(alg, fwk, state, pod, feasible, snapshot)
        host = feasible[heap_top_index(totals)].name
        batch.store_results(None, hint, host, None, None, cycle, now)
        return ScheduleResult(host, evaluated, len(feasible))
    by_plugin: dict[str, list[int]] = {}
    totals = prioritize_nodes(alg, fwk, state, pod, feasible, snapshot, None, by_plugin)
    names = [ni.name for ni in feasible]
    heap = ScoredNodeHeap([(t, 0, n) for t, n in zip(totals.tolist(), names, strict=True)])
    host = heap.pop()[2]
    raw = {n: {p: scores[i] for p, scores in by_plugin.items()} for i, n in enumerate(names)}
    batch.store_results(signed_as, hint, host, heap, raw, cycle, now)
    return ScheduleResult(host, evaluated, len(feasible))


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
    nominations, extenders = bool(alg.nominator), bool(alg.extenders)

    def signature() -> str | None:
        # Signed only when read: when failures are remembered for this cluster state, or
        # to remember this one (a pod that is placed is never signed).
        return memo.signature(fwk, state, pod, nominations=nominations, extenders=extenders)

    cluster = (sched.cache.generation, sched.cluster_generation)
    start = alg.next_start_node_index
    try:
        snapshot = sched.current_snapshot = sched.cache.snapshot()
        known = memo.recall(cluster, signature)
        if known is not None and len(snapshot):
            # The same pod shape failed on this very cluster state: same outcome.
            alg.next_start_node_index = (start + known.start_advance) % len(snapshot)
            failure = Status(Code.UNSCHEDULABLE, known.message)
            return SchedulingFailure(failure, known.diagnosis, known.nominating)
        result = schedule_pod(alg, fwk, state, pod, snapshot, sched.queue.scheduling_cycle)
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
        signed = signature()
        if signed is not None:
            fit.diagnosis.rejections = fit.diagnosis.rejections_by_plugin()
            advance = (alg.next_start_node_index - start) % len(snapshot)
            remembered = RememberedFailure(failure.message, fit.diagnosis, nominating, advance)
            after = (sched.cache.generation, sched.cluster_generation)
            memo.remember(cluster, after, signed, remembered, pf_status)
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
