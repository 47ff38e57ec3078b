"""The failure handler both cycles end in (pkg/scheduler/schedule_one.go:
handleSchedulingFailure).

A scheduling cycle that finds no node, a Reserve or Permit rejection, and a binding cycle
that fails all requeue the pod the same way. Neither cycle calls the other to get here:
the scheduling cycle returns a ``SchedulingFailure`` to ``Scheduler.schedule_one``, the
binding cycle's error path (binding.py) calls ``handle_scheduling_failure`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wasmsched.framework.diagnosis import Diagnosis, FitError
from wasmsched.framework.interfaces import MODE_OVERRIDE, NominatingInfo
from wasmsched.framework.status import Status
from wasmsched.scheduler.types import ERROR, UNSCHEDULABLE, PodOutcome, pod_event

if TYPE_CHECKING:
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.types import QueuedPodInfo
    from wasmsched.scheduler.scheduler import Scheduler


def clear_nominated_node() -> NominatingInfo:
    """The nomination a failure writes unless PostFilter chose one (schedule_one.go:
    ``clearNominatedNode``): drop any earlier nominated node."""
    return NominatingInfo("", MODE_OVERRIDE)


@dataclass(slots=True)
class SchedulingFailure:
    """Why an attempt failed, as handleSchedulingFailure receives it: the status (for a
    rejection, the FitError's message), the diagnosis behind a FitError, and the
    nomination to write (kube's ``ScheduleResult.nominatingInfo``; None: leave it)."""

    status: Status
    diagnosis: Diagnosis | None = None
    nominating: NominatingInfo | None = field(default_factory=clear_nominated_node)


def rejection(host: str, status: Status) -> SchedulingFailure:
    """A failure on the chosen node (Reserve, Permit, WaitOnPermit): a rejection becomes
    a one-node FitError, as in kube-scheduler's schedulingCycle and bindingCycle."""
    if not status.is_rejected():
        return SchedulingFailure(status)
    diagnosis = Diagnosis()
    diagnosis.node_to_status.set(host, status)
    diagnosis.add_plugin_status(status)
    fit = Status(status.code, str(FitError(1, diagnosis)), plugin=status.plugin)
    return SchedulingFailure(fit, diagnosis)


def handle_scheduling_failure(
    sched: Scheduler,
    fwk: Framework,
    info: QueuedPodInfo,
    failure: SchedulingFailure,
    outcome: PodOutcome,
) -> None:
    """k8s handleSchedulingFailure: requeue (as the cluster has the pod now), nominate,
    record the FailedScheduling event and the PodScheduled condition."""
    status, diagnosis, nominating = failure.status, failure.diagnosis, failure.nominating
    pod = info.pod
    rejected = status.is_rejected()
    latest = sched.writer.current_pod(pod.uid)
    if latest is None or latest.node_name:
        # A pod gone meanwhile, or bound (by another replica, an extender), is not
        # requeued, and nothing is written about it.
        fwk.forget_pod(pod.uid)
        outcome.result = UNSCHEDULABLE if rejected else ERROR
        outcome.node = None
        outcome.message = status.message
        sched.queue.done(pod.uid)
        sched.attempt_ended(fwk, pod, outcome)
        return
    # Requeued as the cluster has it now (its latest labels, nomination...).
    info.pod = pod = latest
    if diagnosis is not None and rejected:
        info.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
        info.pending_plugins = set(diagnosis.pending_plugins)
    else:
        info.unschedulable_plugins = set()
        info.pending_plugins = set()
    message = status.message
    fwk.forget_pod(pod.uid)
    outcome.rejected_by = diagnosis.rejections_by_plugin() if diagnosis and rejected else {}
    outcome.result = UNSCHEDULABLE if rejected else ERROR
    outcome.node = None
    outcome.message = message
    sched.queue.add_unschedulable(info)
    if nominating is not None and nominating.mode == MODE_OVERRIDE:
        sched.nominator.add(pod, nominating.nominated_node_name)
        if nominating.nominated_node_name or outcome.nominated_node:
            outcome.nominated_node = nominating.nominated_node_name or None
            sched.write_nomination(pod, nominating.nominated_node_name)
    sched.writer.record_event(
        pod_event(sched.now(), pod, "Warning", "FailedScheduling", "Scheduling", message)
    )
    sched.writer.set_unschedulable(pod, "Unschedulable" if rejected else "SchedulerError", message)
    sched.attempt_ended(fwk, pod, outcome)


__all__ = ["SchedulingFailure", "clear_nominated_node", "handle_scheduling_failure", "rejection"]
