"""The scheduling queue: activeQ, backoffQ and the unschedulable pool (k8s PriorityQueue).

Time comes from the scheduler's clock, so the same queue runs on a simulated clock (nothing
sleeps) or a real one. The scheduler calls ``flush`` when time advances.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

from wasmsched.framework.status import Status
from wasmsched.framework.types import (
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    ClusterEvent,
    QueuedPodInfo,
    QueueingHint,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.runtime import Framework

log = logging.getLogger("wasmsched.queue")

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 5 * 60.0
BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0


class Strategy(Enum):
    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


class _LessKey:
    """An activeQ key ordered by the QueueSort plugin's ``less`` (a plugin without
    ``sort_key``): it reads the pod's queue bookkeeping at each comparison."""

    __slots__ = ("info", "less")

    def __init__(self, info: QueuedPodInfo, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]):
        self.info = info
        self.less = less

    def __lt__(self, other: _LessKey) -> bool:
        return self.less(self.info, other.info)


# An activeQ entry: [key, info], compared by key (heapq compares lists in C). Keys are
# distinct (a key's order is less's, whose last tie-break is the unique seq), so the info
# is never compared. The key is rebuilt when the entry's pod is replaced (update).
_Entry = list[Any]


# Hint registrations: (plugin name, registered event or None for "all", hint fn or None).
HintEntry = tuple[str, ClusterEvent | None, Any]


class _Interested:
    """A profile's (plugin, hint) entries registered for the events one event matches, in
    order, and their plugins' names (a pod none of them rejected is skipped at once)."""

    __slots__ = ("entries", "plugins")

    def __init__(self, entries: list[tuple[str, Any]]) -> None:
        self.entries = entries
        self.plugins = frozenset(plugin for plugin, _ in entries)


class SchedulingQueue:
    def __init__(
        self,
        now: Callable[[], float],
        frameworks: Mapping[str, Framework],
        initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE,
        backoff_by_unschedulable_count: bool = False,
        pop_from_backoff: bool = False,
    ) -> None:
        self.now = now
        # SchedulerPopFromBackoffQ: with activeQ empty, Pop takes the head of backoffQ
        # (backend/queue/active_queue.go: unlockedPop).
        self.pop_from_backoff = pop_from_backoff
        # 1.34+: the backoff doubles per rejection (or per consecutive error), not per
        # attempt (SchedulerFeatures.backoff_by_unschedulable_count).
        self.backoff_by_unschedulable_count = backoff_by_unschedulable_count
        self.frameworks = frameworks
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        first = next(iter(frameworks.values()))
        # The QueueSort plugin's own Less, not Framework.less: the heap's comparisons read
        # its truth value either way. A plugin with a sort key (PrioritySort) is compared
        # without a Python call at all: about ten comparisons per pop.
        self._less = first.queue_sort.less
        self._sort_key: Callable[[QueuedPodInfo], Any] | None = getattr(
            first.queue_sort, "sort_key", None
        )
        self._active: list[_Entry] = []
        self._active_uids: set[str] = set()
        self._backoff: list[tuple[float, int, QueuedPodInfo]] = []
        self._backoff_uids: set[str] = set()
        # The rejected pods of backoffQ as Pop takes them: by backoff expiry aligned to the
        # second, then the QueueSort order (backoff_queue.go:
        # lessBackoffCompletedWithPriority). A pod that errored (no plugin to blame) waits
        # in podErrorBackoffQ, which Pop does not take from.
        self._backoff_by_priority: list[tuple[int, Any, int, float, QueuedPodInfo]] = []
        self.unschedulable: dict[str, QueuedPodInfo] = {}
        self._seq = itertools.count()
        self._event_seq = itertools.count()
        self._in_flight: dict[str, int] = {}  # uid -> first event seq it must see
        self._in_flight_events: list[tuple[int, ClusterEvent, Any, Any]] = []
        self._hints: dict[str, list[HintEntry]] = {
            name: [
                (plugin, None if ewh is None else ewh.event, None if ewh is None else ewh.hint)
                for plugin, ewh in fwk.events_to_register()
            ]
            for name, fwk in frameworks.items()
        }
        # Per incoming event, per profile: the entries whose registered event matches it,
        # in order (the hints' matching done once per kind of event, not once per pod).
        self._interested: dict[ClusterEvent, dict[str, _Interested]] = {}
        self.moves = 0  # pods moved out of the unschedulable pool by events
        # Pops so far (active_queue.go: schedCycle, what Scheduler.CurrentCycle reads).
        self.scheduling_cycle = 0

    # --- adding and popping ------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        """A new pending pod: PreEnqueue decides between activeQ and the unschedulable pool."""
        info = QueuedPodInfo(pod, self.now(), next(self._seq))
        self._move_to_active(info)

    def _key(self, info: QueuedPodInfo) -> Any:
        """The activeQ key of ``info``: the plugin's sort key, else one that calls less."""
        if self._sort_key is not None:
            return self._sort_key(info)
        return _LessKey(info, self._less)

    def _framework(self, info: QueuedPodInfo) -> Framework | None:
        return self.frameworks.get(info.pod.scheduler_name)

    def _move_to_active(self, info: QueuedPodInfo) -> bool:
        fwk = self._framework(info)
        status = fwk.run_pre_enqueue_plugins(info.pod) if fwk is not None else None
        if status is not None:
            info.gated = True
            info.gated_message = status.message
            info.unschedulable_plugins = {status.plugin} if status.plugin else set()
            self.unschedulable[info.pod.uid] = info
            return False
        info.gated = False
        info.gated_message = ""
        self.unschedulable.pop(info.pod.uid, None)
        self._drop_from_backoff(info.pod.uid)
        if info.pod.uid not in self._active_uids:
            heapq.heappush(self._active, [self._key(info), info])
            self._active_uids.add(info.pod.uid)
        return True

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when activeQ (and, with
        SchedulerPopFromBackoffQ, backoffQ's rejected pods) is empty."""
        while self._active:
            info: QueuedPodInfo = heapq.heappop(self._active)[1]
            uid = info.pod.uid
            if uid not in self._active_uids:
                continue  # removed while queued
            self._active_uids.discard(uid)
            return self._popped(info)
        if self.pop_from_backoff:
            while self._backoff_by_priority:
                _, _, _, expiry, info = heapq.heappop(self._backoff_by_priority)
                if info.pod.uid not in self._backoff_uids or expiry != info.backoff_expiry:
                    continue  # a stale entry: the pod left backoff or was re-added since
                self._backoff_uids.discard(info.pod.uid)
                return self._popped(info)
        return None

    def _popped(self, info: QueuedPodInfo) -> QueuedPodInfo:
        self.scheduling_cycle += 1
        info.attempts += 1
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.now()
        self._in_flight[info.pod.uid] = next(self._event_seq)
        return info

    def done(self, uid: str) -> None:
        """The pod's scheduling (and binding) attempt is over: stop recording events for it."""
        self._in_flight.pop(uid, None)
        if not self._in_flight:
            self._in_flight_events.clear()
        else:
            oldest = min(self._in_flight.values())
            self._in_flight_events = [e for e in self._in_flight_events if e[0] >= oldest]

    # --- failures ------------------------------------------------------------------------

    def backoff_duration(self, info: QueuedPodInfo) -> float:
        """calculateBackoffDuration: the initial backoff doubled per earlier attempt (1.33)
        or, since 1.34, per earlier rejection (per consecutive error after an error),
        capped at the maximum; none before the first rejection or error."""
        count = info.attempts
        if self.backoff_by_unschedulable_count:
            count = info.consecutive_errors_count or info.unschedulable_count
            if count == 0:
                return 0.0
        duration = self.initial_backoff
        for _ in range(1, count):
            duration *= 2
            if duration >= self.max_backoff:
                return self.max_backoff
        return min(duration, self.max_backoff)

    def is_backing_off(self, info: QueuedPodInfo) -> bool:
        return info.timestamp + self.backoff_duration(info) > self.now()

    def add_unschedulable(self, info: QueuedPodInfo) -> str:
        """k8s AddUnschedulableIfNotPresent; returns the queue the pod went to."""
        info.timestamp = self.now()
        if not info.unschedulable_plugins and not info.pending_plugins:
            info.consecutive_errors_count += 1  # an error, no plugin rejected it
        else:
            info.unschedulable_count += 1
            info.consecutive_errors_count = 0
        strategy = self._hint_for_in_flight(info)
        queue = self._requeue(info, strategy)
        self.done(info.pod.uid)
        return queue

    def _hint_for_in_flight(self, info: QueuedPodInfo) -> Strategy:
        if not info.unschedulable_plugins and not info.pending_plugins:
            # An error with no plugin to blame: retry after backoff.
            return Strategy.AFTER_BACKOFF
        start = self._in_flight.get(info.pod.uid)
        strategy = Strategy.SKIP
        if start is None:
            return strategy
        for seq, event, old, new in self._in_flight_events:
            if seq < start:
                continue
            s = self._worth_requeuing(info, event, old, new, self._interested_in(event))
            if s is Strategy.IMMEDIATELY:
                return s
            if s is Strategy.AFTER_BACKOFF:
                strategy = s
                if not info.pending_plugins:
                    return s
        return strategy

    def _requeue(self, info: QueuedPodInfo, strategy: Strategy) -> str:
        if strategy is Strategy.SKIP:
            self.unschedulable[info.pod.uid] = info
            return "unschedulable"
        if strategy is Strategy.AFTER_BACKOFF and self.is_backing_off(info):
            self._push_backoff(info)
            return "backoff"
        if self._move_to_active(info):
            return "active"
        return "unschedulable"

    def _push_backoff(self, info: QueuedPodInfo) -> None:
        uid = info.pod.uid
        self.unschedulable.pop(uid, None)
        info.backoff_expiry = info.timestamp + self.backoff_duration(info)
        seq = next(self._seq)
        heapq.heappush(self._backoff, (info.backoff_expiry, seq, info))
        self._backoff_uids.add(uid)
        if self.pop_from_backoff and (info.unschedulable_plugins or info.pending_plugins):
            aligned = math.floor(info.backoff_expiry)  # backoff_queue.go: alignToWindow
            entry = (aligned, self._key(info), seq, info.backoff_expiry, info)
            heapq.heappush(self._backoff_by_priority, entry)

    def _drop_from_backoff(self, uid: str) -> None:
        self._backoff_uids.discard(uid)  # lazily skipped when popped

    # --- cluster events -------------------------------------------------------------------

    def _worth_requeuing(
        self,
        info: QueuedPodInfo,
        event: ClusterEvent,
        old: Any,
        new: Any,
        interested: dict[str, _Interested],
    ) -> Strategy:
        """isPodWorthRequeuing; ``interested``: ``_interested_in(event)``."""
        rejected, pending = info.unschedulable_plugins, info.pending_plugins
        if (not rejected and not pending) or event.resource == WILDCARD:
            return Strategy.AFTER_BACKOFF
        found = interested.get(info.pod.scheduler_name)
        if found is None:
            return Strategy.AFTER_BACKOFF
        strategy = Strategy.SKIP
        if found.plugins.isdisjoint(rejected) and found.plugins.isdisjoint(pending):
            return strategy  # no entry of a plugin that rejected the pod
        for plugin, hint_fn in found.entries:
            if plugin not in rejected and plugin not in pending:
                continue
            hint = QueueingHint.QUEUE
            if hint_fn is not None:
                try:
                    hint = hint_fn(info.pod, old, new)
                except Exception:  # k8s: a failing hint queues the pod
                    log.exception("queueing hint of plugin %s failed", plugin)
                    hint = QueueingHint.QUEUE
            if hint == QueueingHint.QUEUE_SKIP:
                continue
            if plugin in info.pending_plugins:
                return Strategy.IMMEDIATELY
            if not info.pending_plugins:
                return Strategy.AFTER_BACKOFF
            strategy = Strategy.AFTER_BACKOFF
        return strategy

    def _interested_in(self, event: ClusterEvent) -> dict[str, _Interested]:
        """Per profile, the (plugin, hint) entries registered for events ``event`` matches."""
        found = self._interested.get(event)
        if found is None:
            found = self._interested[event] = {
                name: _Interested(
                    [
                        (plugin, hint_fn)
                        for plugin, registered, hint_fn in entries
                        if registered is None or registered.matches(event)
                    ]
                )
                for name, entries in self._hints.items()
            }
        return found

    def on_event(
        self,
        event: ClusterEvent,
        old: Any = None,
        new: Any = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> int:
        """k8s MoveAllToActiveOrBackoffQueue; returns how many pods moved."""
        if self._in_flight:
            self._in_flight_events.append((next(self._event_seq), event, old, new))
        if not self.unschedulable:
            return 0  # no pod to move (every binding's AssignedPodAdd, most often)
        moved = 0
        # Scheduling gates are lifted only by the pod's own updates (PreEnqueue re-run);
        # other PreEnqueue plugins (DynamicResources waiting for a claim) hear their events
        # (movePodsToActiveOrBackoffQueue: only pods gated by SchedulingGates are skipped).
        forced = event == FORCE_ACTIVATE
        pool = [
            i for i in self.unschedulable.values() if forced or not (i.gated and _gated_for_good(i))
        ]
        interested = self._interested_in(event)
        for info in pool:
            if pre_check is not None and not pre_check(info.pod):
                continue
            strategy = self._worth_requeuing(info, event, old, new, interested)
            if strategy is Strategy.SKIP:
                continue
            del self.unschedulable[info.pod.uid]
            if info.gated:
                # PreEnqueue runs again (moveToActiveQ); still gated, it stays in the pool.
                if not self._move_to_active(info):
                    continue
            elif strategy is Strategy.AFTER_BACKOFF and self.is_backing_off(info):
                self._push_backoff(info)
            else:
                self._move_to_active(info)
            moved += 1
        self.moves += moved
        return moved

    def update(self, old: Pod, new: Pod) -> None:
        """A pending pod changed (labels, gates...): re-run PreEnqueue for gated pods."""
        uid = new.uid
        info = self.unschedulable.get(uid)
        if info is not None:
            info.pod = new
            if info.gated:
                self._move_to_active(info)
            return
        for entry in self._active:
            queued: QueuedPodInfo = entry[1]
            if queued.pod.uid == uid:
                queued.pod = new
                entry[0] = self._key(queued)  # what less would read from now on
                return
        for _, _, binfo in self._backoff:
            if binfo.pod.uid == uid:
                binfo.pod = new
                return

    def delete(self, pod: Pod) -> None:
        uid = pod.uid
        self.unschedulable.pop(uid, None)
        self._active_uids.discard(uid)
        self._backoff_uids.discard(uid)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Moves the given pods from backoff or the unschedulable pool straight to activeQ."""
        for pod in pods:
            info = self.unschedulable.pop(pod.uid, None)
            if info is None and pod.uid in self._backoff_uids:
                self._backoff_uids.discard(pod.uid)
                info = next((i for _, _, i in self._backoff if i.pod.uid == pod.uid), None)
            if info is not None:
                self._move_to_active(info)

    # --- periodic flushes -------------------------------------------------------------------

    def flush_backoff_completed(self) -> int:
        now = self.now()
        moved = 0
        while self._backoff and self._backoff[0][0] <= now:
            expiry, _, info = heapq.heappop(self._backoff)
            if info.pod.uid not in self._backoff_uids or expiry != info.backoff_expiry:
                continue  # a stale entry: the pod left backoff or was re-added since
            self._backoff_uids.discard(info.pod.uid)
            self._move_to_active(info)
            moved += 1
        # The pods moved above left their entries there: drop the ones now due.
        by_priority = self._backoff_by_priority
        while by_priority and by_priority[0][3] <= now:
            heapq.heappop(by_priority)
        return moved

    def flush_unschedulable_leftover(self) -> int:
        now = self.now()
        stale = [
            info
            for info in self.unschedulable.values()
            if not info.gated and now - info.timestamp > self.max_in_unschedulable
        ]
        for info in stale:
            del self.unschedulable[info.pod.uid]
            if self.is_backing_off(info):
                self._push_backoff(info)
            else:
                self._move_to_active(info)
        if stale:
            log.debug("moved %d pods after %s", len(stale), UNSCHEDULABLE_TIMEOUT)
        return len(stale)

    def next_backoff_expiry(self) -> float | None:
        while self._backoff and (
            self._backoff[0][2].pod.uid not in self._backoff_uids
            or self._backoff[0][0] != self._backoff[0][2].backoff_expiry
        ):
            heapq.heappop(self._backoff)
        return self._backoff[0][0] if self._backoff else None

    def next_leftover_flush(self) -> float | None:
        candidates = [i.timestamp for i in self.unschedulable.values() if not i.gated]
        if not candidates:
            return None
        return min(candidates) + self.max_in_unschedulable

    # --- introspection -----------------------------------------------------------------

    def active_len(self) -> int:
        return len(self._active_uids)

    def backoff_infos(self) -> list[QueuedPodInfo]:
        return [
            i
            for e, _, i in self._backoff
            if i.pod.uid in self._backoff_uids and e == i.backoff_expiry
        ]

    def pending(self) -> Sequence[QueuedPodInfo]:
        active = [e[1] for e in self._active if e[1].pod.uid in self._active_uids]
        return active + self.backoff_infos() + list(self.unschedulable.values())

    def __len__(self) -> int:
        return self.active_len() + len(self._backoff_uids) + len(self.unschedulable)


def rejected_plugins(status: Status) -> set[str]:
    return {status.plugin} if status.plugin else set()


# names.SchedulingGates: the PreEnqueue plugin whose gated pods no cluster event moves.
_SCHEDULING_GATES = "SchedulingGates"


def _gated_for_good(info: QueuedPodInfo) -> bool:
    """A gated pod that cluster events cannot move: gated by SchedulingGates, or by a
    plugin not named (nothing registered to hear)."""
    return not info.unschedulable_plugins or _SCHEDULING_GATES in info.unschedulable_plugins
