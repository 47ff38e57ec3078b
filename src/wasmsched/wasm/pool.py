"""Guest instances of one plugin: which instance serves which pod (upstream's
scheduler/plugin/pool.go: guestPool, done right).

Guest-side cycle state lives in the instance, so the pool ties instances to pods:

* the *scheduling* instance serves the pod of the current scheduling cycle (PreFilter …
  NormalizeScore); sequential cycles reuse it;
* when a cycle ends with a node chosen (Reserve, or the first binding-phase call for the
  pod), that instance moves to ``binding[uid]``; every later call for the pod (Permit,
  PreBind, Bind, PostBind, Unreserve) runs on it, never on another pod's instance (upstream's
  pool.go: getForBinding can hand out another pod's instance). A binding-phase call for a pod with no instance of its own gets a fresh one
  (its cycle state is then empty) rather than stealing the next pod's;
* ``release(uid)`` returns a pod's binding instance to the free list; the plugin calls it
  on every terminal path (item 3). The binding map is bounded (oldest entries are released
  with a warning) so a framework that never reports a pod's end cannot leak instances;
* with ``park_previous`` (guests whose first binding-phase export is PreBind/Bind/PostBind,
  which the framework calls asynchronously), a new pod's cycle parks the previous pod's
  scheduling instance under that pod instead of reusing it;
* ``discard`` drops a trapped instance everywhere and closes it (item 8); the next call
  creates a fresh one. Creating an instance happens outside the pool lock, and a failure
  concerns only that call (item 6).

Only the bookkeeping is locked here; each ``Guest`` has its own call lock. A caller that
finds its guest ``dead`` after taking that lock asks the pool again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable

from wasmsched.wasm.guest import Guest

__all__ = ["GuestPool"]

_log = logging.getLogger("wasmsched.wasm.pool")


class GuestPool:
    # Slots: the compiled Filter/Score (native/hot.h) read scheduled and scheduled_uid.
    __slots__ = (
        "__weakref__",
        "_closed",
        "_factory",
        "_lock",
        "binding",
        "created",
        "free",
        "max_binding",
        "park_previous",
        "scheduled",
        "scheduled_uid",
    )

    def __init__(
        self,
        factory: Callable[[], Guest],
        *,
        max_binding: int = 64,
        park_previous: bool = False,
    ) -> None:
        self._factory = factory
        self.park_previous = park_previous
        self._lock = threading.Lock()
        self.free: deque[Guest] = deque()
        self.scheduled: Guest | None = None
        self.scheduled_uid: str | None = None
        self.binding: dict[str, Guest] = {}
        self.max_binding = max_binding
        self.created = 0
        self._closed = False

    def _create(self) -> Guest:
        guest = self._factory()
        with self._lock:
            self.created += 1
        return guest

    def prime(self) -> None:
        """Creates the first instance now ("fail fast")."""
        guest = self._create()
        with self._lock:
            self.free.append(guest)

    def any(self) -> Guest:
        """An instance for pod-independent calls (``enqueue``): the scheduling one or a free
        one; a new one joins the free list."""
        with self._lock:
            if self.scheduled is not None:
                return self.scheduled
            if self.free:
                return self.free[0]
        guest = self._create()
        with self._lock:
            self.free.append(guest)
        return guest

    def scheduling(self, uid: str) -> Guest:
        """The instance of the current scheduling cycle, now serving ``uid``.

        A new scheduling cycle of a pod that still holds a binding instance (its previous
        cycle stopped after Reserve without Unreserve) releases that stale instance, so the
        new cycle's binding-phase calls follow the new cycle."""
        with self._lock:
            stale = self.binding.pop(uid, None)
            if stale is not None and not stale.dead:
                self.free.append(stale)
            guest = self.scheduled
            if guest is not None:
                previous = self.scheduled_uid
                if not self.park_previous or previous is None or previous == uid:
                    self.scheduled_uid = uid
                    return guest
                # The previous pod may still bind on this instance (its first binding-phase
                # call is asynchronous): park it under that pod.
                self._bind(previous, guest)
                self.scheduled = None
            if self.free:
                guest = self.scheduled = self.free.popleft()
                self.scheduled_uid = uid
                return guest
        guest = self._create()
        with self._lock:
            if self.scheduled is None:
                self.scheduled = guest
            else:  # another thread installed one meanwhile
                self.free.append(guest)
                guest = self.scheduled
            self.scheduled_uid = uid
            return guest

    def for_binding(self, uid: str) -> Guest:
        """The instance bound to ``uid``: its own, else the scheduling instance if that is
        serving ``uid`` (moved to binding), else a free or new one."""
        with self._lock:
            guest = self.binding.get(uid)
            if guest is not None:
                return guest
            if self.scheduled is not None and self.scheduled_uid == uid:
                guest = self.scheduled
                self.scheduled = None
                self.scheduled_uid = None
            elif self.free:
                guest = self.free.popleft()
            if guest is not None:
                self._bind(uid, guest)
                return guest
        guest = self._create()
        with self._lock:
            other = self.binding.get(uid)
            if other is not None:
                self.free.append(guest)
                return other
            self._bind(uid, guest)
            return guest

    def _bind(self, uid: str, guest: Guest) -> None:
        self.binding[uid] = guest
        while len(self.binding) > self.max_binding:
            oldest = next(iter(self.binding))
            _log.warning("wasm instance of pod %s was never released; reclaiming it", oldest)
            self.free.append(self.binding.pop(oldest))

    def claim(self, uid: str) -> None:
        """Moves the scheduling instance to ``binding[uid]`` if it is serving ``uid``."""
        with self._lock:
            guest = self.scheduled
            if guest is not None and self.scheduled_uid == uid and uid not in self.binding:
                self.scheduled = None
                self.scheduled_uid = None
                self._bind(uid, guest)

    def bound(self, uid: str) -> Guest | None:
        with self._lock:
            return self.binding.get(uid)

    def release(self, uid: str) -> None:
        """Returns ``uid``'s binding instance to the free list (no-op if it has none)."""
        with self._lock:
            guest = self.binding.pop(uid, None)
            if guest is not None and not guest.dead:
                self.free.append(guest)

    def forget(self, uid: str) -> None:
        """The pod's lifecycle ended: release its instance and unpin the scheduling one."""
        with self._lock:
            guest = self.binding.pop(uid, None)
            if guest is not None and not guest.dead:
                self.free.append(guest)
            if self.scheduled_uid == uid:
                self.scheduled_uid = None

    def discard(self, guest: Guest) -> None:
        """Drops a broken instance from every slot and closes it."""
        with self._lock:
            if self.scheduled is guest:
                self.scheduled = None
                self.scheduled_uid = None
            for uid, bound in list(self.binding.items()):
                if bound is guest:
                    del self.binding[uid]
            with contextlib.suppress(ValueError):
                self.free.remove(guest)
        guest.close()

    def instances(self) -> list[Guest]:
        with self._lock:
            found = list(self.free) + list(self.binding.values())
            if self.scheduled is not None:
                found.append(self.scheduled)
        return found

    def close(self) -> None:
        with self._lock:
            guests = list(self.free) + list(self.binding.values())
            if self.scheduled is not None:
                guests.append(self.scheduled)
            self.free.clear()
            self.binding.clear()
            self.scheduled = None
            self.scheduled_uid = None
        for guest in guests:
            with guest.lock:
                guest.close()
