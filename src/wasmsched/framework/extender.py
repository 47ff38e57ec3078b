"""What the framework and its plugins know of a scheduler extender (framework.Extender).

kube-scheduler declares the interface in ``pkg/scheduler/framework/extender.go`` and the
HTTP client in ``pkg/scheduler/extender.go``; here too the protocol lives in the framework
so that plugins (preemption) never import the HTTP client (``wasmsched.extenders``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from wasmsched.errors import ExternalError

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.node_info import NodeInfo

# extenderv1.MaxExtenderPriority: extender scores are scaled from [0, 10] to [0, 100].
MAX_EXTENDER_PRIORITY = 10


class ExtenderError(ExternalError):
    """An extender call failed (transport, HTTP status, or an error in the reply)."""


@dataclass
class Victims:
    """Pods to preempt on one node and the PodDisruptionBudgets that would break."""

    pods: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


class NodeLookup(Protocol):
    """What preemption needs to turn pod UIDs back into pods (a Snapshot or a dict)."""

    def get(self, name: str, /) -> NodeInfo | None:
        """The node's info, or None when there is no such node."""
        ...


class Extender(Protocol):
    """A configured scheduler extender (framework.Extender): its verbs and their flags."""

    name: str
    weight: int
    ignorable: bool
    has_filter: bool
    has_prioritize: bool
    has_bind: bool
    supports_preemption: bool

    def is_interested(self, pod: Pod) -> bool:
        """Whether the extender manages a resource the pod requests (or manages none)."""
        ...

    def filter(
        self, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """(feasible nodes, failed node -> reason, failed-and-unresolvable node -> reason)."""
        ...

    def prioritize(self, pod: Pod, nodes: list[NodeInfo]) -> list[tuple[str, int]]:
        """(node name, score in [0, MAX_EXTENDER_PRIORITY]) for the nodes it scores."""
        ...

    def bind(self, pod: Pod, node_name: str) -> None:
        """Binds the pod (only when ``has_bind``); raises ExtenderError on failure."""
        ...

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], nodes: NodeLookup
    ) -> dict[str, Victims]:
        """The candidates the extender accepts, possibly with fewer victims."""
        ...

    def close(self) -> None:
        """Releases the extender's connections."""
        ...


__all__ = ["MAX_EXTENDER_PRIORITY", "Extender", "ExtenderError", "NodeLookup", "Victims"]
