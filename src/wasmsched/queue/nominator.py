"""Pods nominated to nodes by preemption (kube-scheduler's nominator,
pkg/scheduler/backend/queue/nominator.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from wasmsched.framework.node_info import PodInfo

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod


class Nominator:
    """Which pod is nominated to which node; filters count those pods on their node."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pod: Pod, node_name: str) -> None:
        """Nominates ``pod`` to ``node_name`` ("" only removes its nomination)."""
        self.delete(pod.uid)
        if not node_name:
            return
        self._by_node.setdefault(node_name, {})[pod.uid] = PodInfo(pod)
        self._node_of[pod.uid] = node_name

    def update(self, old: Pod, new: Pod) -> None:
        """A pending pod changed (nominator.go: UpdateNominatedPod).

        ``status.nominatedNodeName`` is the source of truth, except when neither version
        has one: then a nomination made in memory (not written back yet) stays. Either
        way the entry is refreshed so that filters see the pod's latest version.
        """
        node = new.nominated_node_name
        if not old.nominated_node_name and not node:
            node = self._node_of.get(old.uid, "")
        self.add(new, node)

    def delete(self, uid: str) -> None:
        """Drops the pod's nomination, if any."""
        node = self._node_of.pop(uid, None)
        if node is not None:
            pods = self._by_node.get(node)
            if pods is not None:
                pods.pop(uid, None)
                if not pods:
                    del self._by_node[node]

    def node_of(self, uid: str) -> str | None:
        """The node the pod is nominated to, or None."""
        return self._node_of.get(uid)

    def pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``."""
        pods = self._by_node.get(node_name)
        return list(pods.values()) if pods else []

    def nominated_nodes(self) -> list[str]:
        """The nodes with pods nominated to them."""
        return list(self._by_node)

    def __bool__(self) -> bool:
        return bool(self._by_node)


__all__ = ["Nominator"]
