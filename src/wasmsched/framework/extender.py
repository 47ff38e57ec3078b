"""What the framework and its plugins know of a scheduler extender (framework.Extender).

kube-scheduler declares the interface in ``pkg/scheduler/framework/extender.go`` and the
HTTP client in ``pkg/scheduler/extender.go``; here too the protocol lives in the framework
so that plugins (preemption) never import the HTTP client (``wasmsched.extenders``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from wasmsched.errors import ExternalError
from wasmsched.framework.diagnosis import CycleError, Diagnosis
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.columns import IntArray
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


# --- the search's extender steps (schedule_one.go) ------------------------------------


def find_nodes_that_pass_extenders(
    extenders: Sequence[Extender], pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
) -> list[NodeInfo]:
    """findNodesThatPassExtenders: extenders filter in turn; unresolvable wins."""
    nts = diagnosis.node_to_status
    for extender in extenders:
        if not feasible:
            break
        if not extender.has_filter or not extender.is_interested(pod):
            continue
        try:
            feasible, failed, unresolvable = extender.filter(pod, feasible)
        except ExtenderError as err:
            if extender.ignorable:
                log.info("skipping ignorable extender %s: %s", extender.name, err)
                continue
            raise CycleError(Status(Code.ERROR, str(err))) from None
        for node_name, msg in unresolvable.items():
            nts.set(node_name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg))
        for node_name, msg in failed.items():
            if node_name not in unresolvable:
                nts.set(node_name, Status(Code.UNSCHEDULABLE, msg))
    return feasible


def add_extender_scores(
    extenders: Sequence[Extender], pod: Pod, nodes: list[NodeInfo], totals: IntArray
) -> set[int]:
    """Extender scores, scaled by weight * MaxNodeScore / MaxExtenderPriority (10); the
    indices of the nodes some extender scored."""
    index = {ni.name: i for i, ni in enumerate(nodes)}
    scored: set[int] = set()
    for extender in extenders:
        if not extender.is_interested(pod):
            continue
        try:
            priorities = extender.prioritize(pod, nodes)
        except ExtenderError as err:
            # kube-scheduler ignores prioritization errors: other scores decide.
            log.info("extender %s prioritize failed: %s", extender.name, err)
            continue
        for node_name, score in priorities:
            i = index.get(node_name)
            if i is not None:
                totals[i] += score * extender.weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
                scored.add(i)
    return scored
