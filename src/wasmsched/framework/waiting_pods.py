"""Pods held at Permit (framework.WaitingPod) and the map of them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod


class WaitingPod:
    """A pod that Permit plugins asked to wait; decided by Allow from all of them or one Reject.

    Timeouts are not timers here: the scheduler owns the clock (simulated or real) and
    calls ``expire`` when the earliest deadline passes, so nothing sleeps in a simulation.
    """

    __slots__ = ("_on_decided", "deadlines", "node_name", "pod", "status")

    def __init__(
        self,
        pod: Pod,
        node_name: str,
        deadlines: dict[str, float],
        on_decided: Callable[[WaitingPod], None],
    ) -> None:
        self.pod = pod
        self.node_name = node_name
        self.deadlines = dict(deadlines)  # plugin -> absolute deadline
        self.status: Status | None = None  # set once decided
        self._on_decided = on_decided

    @property
    def decided(self) -> bool:
        """Whether the pod was allowed, rejected or timed out."""
        return self.status is not None

    def pending_plugins(self) -> list[str]:
        """The plugins still to allow the pod."""
        return list(self.deadlines)

    def allow(self, plugin: str) -> None:
        """``plugin`` allows the pod; once all have, it is bound."""
        if self.decided:
            return
        self.deadlines.pop(plugin, None)
        if not self.deadlines:
            self._decide(Status(Code.SUCCESS))

    def reject(self, plugin: str, message: str) -> None:
        """Rejects the pod; its binding cycle fails as Unschedulable."""
        if self.decided:
            return
        self._decide(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def next_deadline(self) -> float | None:
        """The earliest deadline still pending, or None."""
        return min(self.deadlines.values()) if self.deadlines else None

    def expire(self, now: float, waited: Callable[[str], float]) -> bool:
        """Rejects the pod if a plugin's deadline has passed; True when it did."""
        for plugin, deadline in sorted(self.deadlines.items(), key=lambda kv: kv[1]):
            if deadline <= now:
                self.reject(
                    plugin,
                    f"rejected due to timeout after waiting {waited(plugin)}s at plugin {plugin}",
                )
                return True
        return False

    def _decide(self, status: Status) -> None:
        self.status = status
        self._on_decided(self)


class WaitingPods:
    """The waiting pods of all profiles, by pod uid."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, wp: WaitingPod) -> None:
        """Holds a waiting pod."""
        self._pods[wp.pod.uid] = wp

    def remove(self, uid: str) -> None:
        """Releases a pod (decided or gone)."""
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        """The waiting pod with that UID, or None."""
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
