"""The binding cycle and bindings in flight (pkg/scheduler/schedule_one.go: bindingCycle,
handleBindingCycleError).

``Scheduler.schedule_one`` starts a binding cycle with the pod a scheduling cycle assumed.
A pod that Permit plugins asked to wait binds once it is allowed, rejected or timed out
(WaitOnPermit, here a timer on the scheduler's clock). A failed binding cycle ends in the
failure handler (failure.py), as a failed scheduling cycle does.

A Bind plugin may answer ``BindingPending``: the binding goes on elsewhere (the live
mode's API call on a worker) and ``complete_binding`` finishes the cycle when its answer
arrives, on the scheduling thread, while the pod stays assumed in the cache. A PreBind
plugin may answer ``PreBindWaiting`` (DynamicResources, for devices' binding
conditions): the cycle polls it on the scheduler's clock, timers between cycles, and
goes on once it decides, while the pod stays assumed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wasmsched.framework import types as ev
from wasmsched.framework.extender import ExtenderError
from wasmsched.framework.records import BindingPending, PreBindWaiting
from wasmsched.framework.status import Code, Status
from wasmsched.framework.waiting_pods import WaitingPod
from wasmsched.scheduler.failure import SchedulingFailure, handle_scheduling_failure, rejection
from wasmsched.scheduler.types import ERROR, SCHEDULED, AssumedPod, PodOutcome, pod_event

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.types import QueuedPodInfo
    from wasmsched.scheduler.scheduler import Scheduler


@dataclass(slots=True)
class _BindingCycle:
    """A binding cycle's inputs, kept while a PreBind plugin waits."""

    fwk: Framework
    state: CycleState
    info: QueuedPodInfo
    assumed: Pod
    host: str
    outcome: PodOutcome
    pods_to_activate: dict[str, Pod]

    def parts(
        self,
    ) -> tuple[Framework, CycleState, QueuedPodInfo, Pod, str, PodOutcome, dict[str, Pod]]:
        return (
            self.fwk,
            self.state,
            self.info,
            self.assumed,
            self.host,
            self.outcome,
            self.pods_to_activate,
        )


@dataclass(slots=True)
class BindingInFlight(_BindingCycle):
    """A binding cycle parked while a Bind plugin's asynchronous binding runs."""

    plugin: str
    started: float


class BindingCycles:
    """Runs binding cycles for one Scheduler and keeps the asynchronous ones in flight."""

    def __init__(self, sched: Scheduler) -> None:
        self._sched = sched
        self.in_flight: dict[str, BindingInFlight] = {}
        # Pods whose PreBind plugin waits (PreBindWaiting): uid -> (plugin, node).
        self.waiting_in_pre_bind: dict[str, tuple[str, str]] = {}
        self._nominate_for_expectation = sched.config.features.nominated_node_name_for_expectation

    def start(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        scheduled: AssumedPod,
        outcome: PodOutcome,
        pods_to_activate: dict[str, Pod],
    ) -> None:
        """Starts the binding cycle of a pod its scheduling cycle assumed (k8s ScheduleOne's
        ``go bindingCycle``): now, or once the pod stops waiting at Permit."""
        assumed, host = scheduled.pod, scheduled.host
        sched = self._sched
        if self._nominate_for_expectation:
            # bindingCycle (1.35+): when PreBind has work or the pod waits at Permit, the
            # chosen node is written as nominatedNodeName first (for the autoscaler).
            pre_flight = run_pre_bind_pre_flights(fwk, state, assumed, host)
            if pre_flight is not None and pre_flight.code != Code.SKIP:
                failure = SchedulingFailure(pre_flight)
                self.binding_failure(fwk, state, info, assumed, host, failure, outcome)
                return
            if (pre_flight is None or scheduled.waits) and assumed.nominated_node_name != host:
                sched.writer.set_nominated_node(assumed, host)
        if not scheduled.waits:
            self.binding_cycle(fwk, state, info, assumed, host, outcome, None, pods_to_activate)
            return
        now = sched.now()
        deadlines = {plugin: now + timeout for plugin, timeout in scheduled.waits.items()}
        waited = dict(scheduled.waits)

        def decided(wp: WaitingPod) -> None:
            sched.waiting_pods.remove(wp.pod.uid)
            sched.run_soon(
                lambda: self.binding_cycle(
                    fwk, state, info, assumed, host, outcome, wp, pods_to_activate
                )
            )

        wp = WaitingPod(assumed, host, deadlines, decided)
        sched.waiting_pods.add(wp)
        sched.add_timer(
            min(deadlines.values()),
            lambda: wp.expire(sched.now(), lambda p: waited.get(p, 0.0)),
        )

    def binding_cycle(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        assumed: Pod,
        host: str,
        outcome: PodOutcome,
        wp: WaitingPod | None,
        pods_to_activate: dict[str, Pod],
    ) -> None:
        """k8s bindingCycle: WaitOnPermit's verdict, PreBind, extenders' or plugins' Bind."""
        if wp is not None and wp.status is not None and wp.status.code != Code.SUCCESS:
            failure = rejection(host, wp.status)
            self.binding_failure(fwk, state, info, assumed, host, failure, outcome)
            return
        cycle = _BindingCycle(fwk, state, info, assumed, host, outcome, pods_to_activate)
        self._after_pre_bind(cycle, fwk.run_pre_bind_plugins(state, assumed, host))

    def _after_pre_bind(self, cycle: _BindingCycle, status: Status | None) -> None:
        """The binding cycle from PreBind's answer on: a PreBind plugin's wait, or the
        extenders' and Bind plugins' binding."""
        if isinstance(status, PreBindWaiting):
            self._wait_in_pre_bind(cycle, status)
            return
        fwk, state, info, assumed, host, outcome, pods_to_activate = cycle.parts()
        if status is None:
            bound, status = self._extenders_bind(assumed, host)
            if not bound:
                status = fwk.run_bind_plugins(state, assumed, host)
                if isinstance(status, BindingPending):
                    # Finished by complete_binding; the pod stays assumed meanwhile.
                    self.in_flight[assumed.uid] = BindingInFlight(
                        fwk,
                        state,
                        info,
                        assumed,
                        host,
                        outcome,
                        pods_to_activate,
                        status.plugin,
                        time.perf_counter(),
                    )
                    return
            if status is not None and status.code == Code.SKIP:
                status = Status(Code.ERROR, "no bind plugin bound the pod (all returned Skip)")
        if status is not None:
            self.binding_failure(
                fwk, state, info, assumed, host, SchedulingFailure(status), outcome
            )
            return
        self.bound(fwk, state, assumed, host, outcome, pods_to_activate)

    def _wait_in_pre_bind(self, cycle: _BindingCycle, waiting: PreBindWaiting) -> None:
        """A PreBind plugin waits (PreBindWaiting): its poll every ``interval`` on the
        scheduler's clock until it decides or ``timeout`` is reached, then the binding
        cycle goes on from the next PreBind plugin (or fails) before the next cycle."""
        sched = self._sched
        plugin = waiting.plugin or ""
        started = sched.now()
        deadline = started + waiting.timeout
        uid = cycle.assumed.uid
        self.waiting_in_pre_bind[uid] = (plugin, cycle.host)

        def go_on(status: Status | None) -> None:
            self.waiting_in_pre_bind.pop(uid, None)
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                status = Status(Code.ERROR, f"running PreBind plugin {plugin!r}: {status.message}")
                status.plugin = plugin
            else:
                status = cycle.fwk.run_pre_bind_plugins(
                    cycle.state, cycle.assumed, cycle.host, waiting.resume_at
                )
            self._after_pre_bind(cycle, status)

        def poll(when: float) -> None:
            if when >= deadline:
                sched.run_soon(lambda: go_on(Status(Code.ERROR, waiting.timeout_message)))
                return
            done, status = waiting.poll()
            if done:
                sched.run_soon(lambda: go_on(status))
                return
            following = when + waiting.interval
            sched.add_timer(min(following, deadline), lambda: poll(min(following, deadline)))

        first = started + waiting.interval
        sched.add_timer(min(first, deadline), lambda: poll(min(first, deadline)))

    def complete_binding(
        self,
        uid: str,
        node_name: str,
        status: Status | None,
        *,
        conflict: bool = False,
        seconds: float | None = None,
    ) -> bool:
        """The answer to a Bind plugin's ``BindingPending`` (see Scheduler.complete_binding)."""
        p = self.in_flight.get(uid)
        if p is None or p.host != node_name:
            return False
        del self.in_flight[uid]
        sched = self._sched
        fwk, state, assumed, host = p.fwk, p.state, p.assumed, p.host
        if seconds is None:
            seconds = time.perf_counter() - p.started
        failed = status is not None or conflict
        fwk.observe(
            state, "Bind", p.plugin, status or (Status(Code.ERROR) if failed else None), seconds
        )
        if not failed:
            self.bound(fwk, state, assumed, host, p.outcome, p.pods_to_activate)
        elif conflict:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            sched.cache.forget_pod(assumed)
            fwk.forget_pod(assumed.uid)
            sched.queue.on_event(ev.ASSIGNED_POD_DELETE, assumed, None, lambda q: q.uid != uid)
            sched.queue.done(uid)
            p.outcome.result = ERROR
            p.outcome.node = None
            p.outcome.message = status.message if status is not None else "binding conflict"
            sched.attempt_ended(fwk, assumed, p.outcome)
        else:
            assert status is not None
            failure = Status(
                Code.ERROR,
                f"running Bind plugin {p.plugin!r}: {status.message}",
                plugin=p.plugin,
            )
            self.binding_failure(
                fwk, state, p.info, assumed, host, SchedulingFailure(failure), p.outcome
            )
        return True

    def bound(
        self,
        fwk: Framework,
        state: CycleState,
        assumed: Pod,
        host: str,
        outcome: PodOutcome,
        pods_to_activate: dict[str, Pod],
    ) -> None:
        """The end of a successful binding cycle: PostBind, the Scheduled event, done."""
        sched = self._sched
        fwk.run_post_bind_plugins(state, assumed, host)
        fwk.forget_pod(assumed.uid)
        outcome.result = SCHEDULED
        sched.scheduled_pods += 1
        outcome.node = host
        outcome.message = ""
        outcome.scheduled_at = sched.now()
        sched.nominator.delete(assumed.uid)
        sched.writer.record_event(
            pod_event(
                sched.now(),
                assumed,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
            )
        )
        if pods_to_activate:
            sched.queue.activate(pods_to_activate.values())
            pods_to_activate.clear()
        sched.queue.done(assumed.uid)
        sched.attempt_ended(fwk, assumed, outcome)

    def _extenders_bind(self, pod: Pod, host: str) -> tuple[bool, Status | None]:
        """An interested binder extender binds instead of the Bind plugins."""
        sched = self._sched
        for extender in sched.extenders:
            if not extender.has_bind or not extender.is_interested(pod):
                continue
            try:
                extender.bind(pod, host)
            except ExtenderError as err:
                if extender.ignorable:
                    continue
                return True, Status(Code.ERROR, str(err))
            # The extender wrote the binding to its API server; the simulator's store
            # has to be told (a live writer sees it through its watch).
            return True, sched.writer.extender_bound(pod, host)
        return False, None

    def binding_failure(
        self,
        fwk: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        assumed: Pod,
        host: str,
        failure: SchedulingFailure,
        outcome: PodOutcome,
    ) -> None:
        """k8s handleBindingCycleError: Unreserve, forget, wake pods that waited for the
        room, then the failure handler (requeue)."""
        sched = self._sched
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        sched.cache.forget_pod(assumed)
        fwk.forget_pod(assumed.uid)
        # No cluster generation change: the pod was only assumed, never bound.
        uid = assumed.uid
        if failure.status.is_rejected():
            sched.queue.on_event(ev.ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid)
        else:
            sched.queue.on_event(ev.ASSIGNED_POD_DELETE, assumed, None)
        handle_scheduling_failure(sched, fwk, info, failure, outcome)


def run_pre_bind_pre_flights(
    fwk: Framework, state: CycleState, pod: Pod, node_name: str
) -> Status | None:
    """framework.go: RunPreBindPreFlights (1.35+): None (Success) when some PreBind plugin
    has work for the pod, Skip when none has, an Error when one fails. A plugin without a
    ``pre_bind_pre_flight`` method counts as Skip."""
    result: Status | None = Status(Code.SKIP)
    for name, pre_flight in fwk.pre_bind_pre_flights:
        try:
            status = pre_flight(state, pod, node_name)
        except Exception as err:
            status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
        if status is None or status.code == Code.SUCCESS:
            result = None
        elif status.code != Code.SKIP:
            # Anything but Success and Skip is unsupported there: an error.
            message = f"running PreBindPreFlight {name!r}: {status.message}"
            return Status(Code.ERROR, message, plugin=name)
    return result


__all__ = ["BindingCycles", "BindingInFlight", "run_pre_bind_pre_flights"]
