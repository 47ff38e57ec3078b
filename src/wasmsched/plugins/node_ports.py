"""NodePorts: a node must have the pod's host ports free (k8s ``plugins/nodeports``).

v1.33 counts the host ports of ``spec.containers`` (getContainerPorts); since v1.34 those of
restartable init containers (sidecars) too (util.GetHostPorts), for the incoming pod and,
through NodeInfo, for the pods on the node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.batching import HOST_PORTS_SIGNER, host_ports_signature
from wasmsched.framework.columns import IntArray, NodeRows, verdicts
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.helpers import features_of

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult
    from wasmsched.framework.node_info import NodeInfo

NAME = "NodePorts"
PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
WILDCARD_IP = "0.0.0.0"

HostPort = tuple[str, str, int]


class _PreFilterState:
    __slots__ = ("ports",)

    def __init__(self, ports: tuple[HostPort, ...]) -> None:
        self.ports = ports

    def clone(self) -> _PreFilterState:
        return self


def ports_conflict(wanted: Sequence[HostPort], used: Sequence[HostPort]) -> bool:
    """Whether any wanted (ip, protocol, port) collides with a used one; 0.0.0.0 hits all IPs."""
    for ip, protocol, port in wanted:
        for uip, uprotocol, uport in used:
            if (
                port == uport
                and protocol == uprotocol
                and (ip in (uip, WILDCARD_IP) or uip == WILDCARD_IP)
            ):
                return True
    return False


class NodePorts:
    """The NodePorts plugin (pkg/scheduler/framework/plugins/nodeports/node_ports.go: NodePorts)."""

    name = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        self._sidecar_ports = features_of(handle).sidecar_host_ports
        self._skip = Status(Code.SKIP)
        # Unschedulable, not unresolvable: preemption can free the ports.
        self._rejected = Status(Code.UNSCHEDULABLE, ERR_REASON)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (node_ports.go: NodePorts.PreFilter): the pod's host ports, Skip when none."""
        ports = self._host_ports(pod)
        if not ports:
            return None, self._skip
        state.write(PRE_FILTER_KEY, _PreFilterState(ports))
        return None, None

    def _host_ports(self, pod: Pod) -> tuple[HostPort, ...]:
        """The pod's host ports as the release counts them."""
        return pod.host_ports if self._sidecar_ports else pod.container_host_ports

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (node_ports.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (node_ports.go: NodePorts.Filter): rejects a node where one of the pod's host
        ports (protocol, host IP, port) is in use.
        """
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status(Code.ERROR, f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        if node_info.used_ports and node_info.port_conflicts(s.ports):
            return self._rejected
        return None

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]] | None:
        """``filter`` over the columns: only rows with host ports in use are looked at."""
        if state.get(PRE_FILTER_KEY) is None:
            return None  # the per-node form reports the error
        used = np.flatnonzero(rows.columns.uses_ports[rows.rows])
        infos = rows.columns.infos
        one = self.filter
        return verdicts(
            len(rows), ((p, one(state, pod, infos[rows.rows[p]])) for p in used.tolist())
        )

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (node_ports.go, 1.35+): the host ports."""
        return [(HOST_PORTS_SIGNER, host_ports_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (node_ports.go): Pod/Delete with isSchedulableAfterPodDeleted and
        Node/Add.
        """
        # Pod ports are immutable, so only deletions free them; Node/Add has no hint.
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.DELETE), self.is_schedulable_after_pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD)),
        ]

    def is_schedulable_after_pod_deleted(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue only when the deleted pod was placed and held a port this pod wants."""
        deleted = old_obj
        if deleted is None or not (deleted.node_name or _nominated_node_name(deleted)):
            return QueueingHint.QUEUE_SKIP
        used = self._host_ports(deleted)
        if not used:
            return QueueingHint.QUEUE_SKIP
        if ports_conflict(self._host_ports(pod), used):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _nominated_node_name(pod: Pod) -> str:
    status = pod.manifest.get("status") or {}
    return str(status.get("nominatedNodeName") or "")


def new(args: dict[str, Any], handle: Handle) -> NodePorts:
    """The registry factory (node_ports.go: New); NodePorts takes no args."""
    return NodePorts(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreFilterPlugin = &NodePorts{}`
    # (pkg/scheduler/framework/plugins/nodeports/node_ports.go).
    _pre_filter: type[PreFilterPlugin] = NodePorts
    _filter: type[FilterPlugin] = NodePorts
    _enqueue_extensions: type[EnqueueExtensions] = NodePorts
