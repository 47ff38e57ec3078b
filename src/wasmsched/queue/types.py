"""QueuedPodInfo: re-exported from ``wasmsched.framework.types`` (its home, as in
kube-scheduler's framework/types.go) so that the old import path keeps working."""

from __future__ import annotations

from wasmsched.framework.types import QueuedPodInfo

__all__ = ["QueuedPodInfo"]
