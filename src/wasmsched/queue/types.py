"""QueuedPodInfo: a pod as the scheduling queue keeps it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod


class QueuedPodInfo:
    """A pending pod with its queue bookkeeping (framework.QueuedPodInfo)."""

    __slots__ = (
        "attempts",
        "backoff_expiry",
        "gated",
        "gated_message",
        "initial_attempt_timestamp",
        "pending_plugins",
        "pod",
        "seq",
        "timestamp",
        "unschedulable_plugins",
    )

    def __init__(self, pod: Pod, timestamp: float, seq: int = 0) -> None:
        self.pod = pod
        self.timestamp = timestamp  # last time it was added to the queue
        self.initial_attempt_timestamp: float | None = None
        self.attempts = 0
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gated = False
        self.gated_message = ""  # the PreEnqueue rejection while gated
        self.backoff_expiry = 0.0
        self.seq = seq  # insertion order, for stable heap ordering

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.key}, attempts={self.attempts})"
