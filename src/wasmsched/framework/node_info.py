"""NodeInfo, PodInfo and the per-cycle Snapshot of the cluster."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from wasmsched.api.resources import Resource
from wasmsched.release.features import SchedulerFeatures

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.columns import NodeColumns

WILDCARD_IP = "0.0.0.0"


class PodInfo:
    """A pod as the scheduler keeps it in NodeInfo and in the queue."""

    __slots__ = ("has_affinity", "has_required_anti_affinity", "pod")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        affinity = (pod.spec.get("affinity") or {}) if pod.spec else {}
        pod_affinity = affinity.get("podAffinity") or {}
        anti = affinity.get("podAntiAffinity") or {}
        self.has_required_anti_affinity = bool(
            anti.get("requiredDuringSchedulingIgnoredDuringExecution")
        )
        self.has_affinity = bool(
            pod_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
            or pod_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
            or self.has_required_anti_affinity
            or anti.get("preferredDuringSchedulingIgnoredDuringExecution")
        )

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.key})"


class ImageStateSummary:
    """An image on a node: its size, on how many nodes of the cluster it is and which (one
    object per image, shared by the NodeInfos of its nodes; the cache updates it in place)."""

    __slots__ = ("nodes", "num_nodes", "size")

    def __init__(self, size: int, num_nodes: int = 1, nodes: Iterable[str] = ()) -> None:
        self.size = size
        self.num_nodes = num_nodes
        self.nodes: set[str] = set(nodes)

    def __repr__(self) -> str:
        return f"ImageStateSummary(size={self.size}, num_nodes={self.num_nodes})"


class NodeInfo:
    """A node and what is placed on it, with the sums that Filter and Score read.

    Requested resources are kept up to date on every add/remove so that no per-node
    work is needed in a scheduling cycle. What a pod counts for follows the release
    (``features``, the default release when not given): its pod-level requests with
    PodLevelResources (PodInfo.CalculateResource), its sidecars' host ports from v1.34
    (updateUsedPorts).
    """

    __slots__ = (
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_cpu",
        "non_zero_memory",
        "pod_level_resources",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "sidecar_host_ports",
        "used_ports",
    )

    def __init__(self, node: Node, features: SchedulerFeatures | None = None) -> None:
        features = features or SchedulerFeatures.of()
        self.pod_level_resources = features.pod_level_resources
        self.sidecar_host_ports = features.sidecar_host_ports
        self.node = node
        self.name = node.name
        self.allocatable: Resource = node.allocatable
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.requested = Resource()
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        # (protocol, port) -> set of host IPs using it
        self.used_ports: dict[tuple[str, int], set[str]] = {}
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = 0

    def set_node(self, node: Node) -> None:
        """Sets (or replaces) the node."""
        self.node = node
        self.name = node.name
        self.allocatable = node.allocatable
        self.generation += 1

    def add_pod(self, pod: Pod) -> PodInfo:
        """Accounts a pod on the node; returns its PodInfo."""
        info = PodInfo(pod)
        self.add_pod_info(info)
        return info

    def add_pod_info(self, info: PodInfo) -> None:
        """Accounts an already built PodInfo on the node."""
        pod = info.pod
        self.pods.append(info)
        if info.has_affinity:
            self.pods_with_affinity.append(info)
        if info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(info)
        requests, (cpu, memory) = self._requests(pod)
        self.requested.add(requests)
        self.non_zero_cpu += cpu
        self.non_zero_memory += memory
        for ip, protocol, port in self._host_ports(pod):
            self.used_ports.setdefault((protocol, port), set()).add(ip)
        self.generation += 1

    def remove_pod(self, pod: Pod) -> bool:
        """Removes the pod with ``pod``'s uid; False when it is not here."""
        uid = pod.uid
        # From the end: the pod removed is most often the one just assumed (the cache
        # replaces it with the bound pod), and uids are unique, so the index is the same.
        pods = self.pods
        index = len(pods) - 1
        while index >= 0 and pods[index].pod.uid != uid:
            index -= 1
        if index < 0:
            return False
        info = self.pods.pop(index)
        old = info.pod
        if info.has_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.pod.uid != uid]
        if info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity = [
                p for p in self.pods_with_required_anti_affinity if p.pod.uid != uid
            ]
        requests, (cpu, memory) = self._requests(old)
        self.requested.sub(requests)
        self.non_zero_cpu -= cpu
        self.non_zero_memory -= memory
        for ip, protocol, port in self._host_ports(old):
            ips = self.used_ports.get((protocol, port))
            if ips is not None:
                ips.discard(ip)
                if not ips:
                    del self.used_ports[(protocol, port)]
        self.generation += 1
        return True

    def counted(self, pod: Pod) -> None:
        """Parses what ``pod`` counts for here (cached on the pod, carried to its copies)."""
        self._requests(pod)
        self._host_ports(pod)

    def requested_by(self, pod: Pod) -> Resource:
        """What ``pod`` adds to ``requested`` here (``_requests``' first half)."""
        return pod.pod_level_requests if self.pod_level_resources else pod.requests

    def _requests(self, pod: Pod) -> tuple[Resource, tuple[int, int]]:
        """What the pod requests here and its non-zero cpu/memory, as the release counts."""
        if self.pod_level_resources:
            return pod.pod_level_requests, pod.pod_level_node_non_zero_requests
        return pod.requests, pod.non_zero_requests

    def _host_ports(self, pod: Pod) -> tuple[tuple[str, str, int], ...]:
        return pod.host_ports if self.sidecar_host_ports else pod.container_host_ports

    def port_conflicts(self, host_ports: Sequence[tuple[str, str, int]]) -> bool:
        """Whether any (ip, protocol, port) is already used here (0.0.0.0 conflicts with all)."""
        used = self.used_ports
        for ip, protocol, port in host_ports:
            ips = used.get((protocol, port))
            if ips and (ip == WILDCARD_IP or WILDCARD_IP in ips or ip in ips):
                return True
        return False

    def _same_node(self) -> NodeInfo:
        """A copy's start: what no pod changes (the node, its allocatable and images, the
        switches), shared; ``clone`` and ``with_pods`` fill in the pods and their sums."""
        copy = NodeInfo.__new__(NodeInfo)
        copy.pod_level_resources = self.pod_level_resources
        copy.sidecar_host_ports = self.sidecar_host_ports
        copy.node = self.node
        copy.name = self.name
        copy.allocatable = self.allocatable
        copy.image_states = self.image_states
        return copy

    def clone(self) -> NodeInfo:
        """An independent copy (preemption's what-if runs change it)."""
        copy = self._same_node()
        copy.pods = list(self.pods)
        copy.pods_with_affinity = list(self.pods_with_affinity)
        copy.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        copy.requested = self.requested.copy()
        copy.non_zero_cpu = self.non_zero_cpu
        copy.non_zero_memory = self.non_zero_memory
        copy.used_ports = {k: set(v) for k, v in self.used_ports.items()}
        copy.generation = self.generation
        return copy

    def with_pods(self, infos: Sequence[PodInfo]) -> NodeInfo:
        """A copy with ``infos`` added as far as the node and its sums go (pods,
        requested, non-zero requests; ``clone`` then ``add_pod_info``), sharing this
        node's host ports, affinity lists and images, which it does not update: for
        plugins that read the node alone or its sums (framework/nominated.py)."""
        copy = self._same_node()
        copy.pods = [*self.pods, *infos]
        copy.pods_with_affinity = self.pods_with_affinity
        copy.pods_with_required_anti_affinity = self.pods_with_required_anti_affinity
        requested = self.requested.copy()
        non_zero_cpu, non_zero_memory = self.non_zero_cpu, self.non_zero_memory
        for info in infos:
            requests, (cpu, memory) = self._requests(info.pod)
            requested.add(requests)
            non_zero_cpu += cpu
            non_zero_memory += memory
        copy.requested = requested
        copy.non_zero_cpu = non_zero_cpu
        copy.non_zero_memory = non_zero_memory
        copy.used_ports = self.used_ports
        copy.generation = self.generation + len(infos)
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


class NodeInfoList(list["NodeInfo"]):
    """A snapshot's node list that knows the list of the snapshot before it: ``previous``,
    and ``rows_before[i]``, the position there of this list's ``i``-th node (-1 for a node
    it did not hold), so that what plugins keep across cycles (plugins/node_counts) follows
    a new node set without matching the two lists. The scheduler cache sets them on the
    newest list only (None otherwise), so that lists do not keep older ones alive."""

    __slots__ = ("previous", "rows_before")

    def __init__(self, infos: Iterable[NodeInfo] = ()) -> None:
        super().__init__(infos)
        self.previous: list[NodeInfo] | None = None
        self.rows_before: npt.NDArray[np.intp] | None = None


class Snapshot:
    """The cluster as one scheduling cycle sees it: NodeInfos in node-tree order."""

    __slots__ = (
        "_by_name",
        "columns",
        "generation",
        "node_infos",
        "with_affinity",
        "with_required_anti_affinity",
    )

    def __init__(self, node_infos: Sequence[NodeInfo] = (), generation: int = 0) -> None:
        self.node_infos: list[NodeInfo] = list(node_infos)
        self._by_name = {ni.name: ni for ni in self.node_infos}
        self.generation = generation
        self.with_affinity: list[NodeInfo] = []
        self.with_required_anti_affinity: list[NodeInfo] = []
        # The columnar view (framework/columns), kept up to date by the scheduler cache;
        # None for a snapshot built elsewhere, whose plugins then run per node.
        self.columns: NodeColumns | None = None
        self.refresh_affinity_lists()

    @classmethod
    def of(
        cls, node_infos: list[NodeInfo], by_name: dict[str, NodeInfo], generation: int
    ) -> Snapshot:
        """A snapshot of ``node_infos`` (kept, not copied) and ``by_name``, their index by
        name, whose caller sets the lists of nodes with (anti-)affinity pods (the scheduler
        cache keeps them itself)."""
        snap = cls.__new__(cls)
        snap.node_infos = node_infos
        snap._by_name = by_name
        snap.generation = generation
        snap.with_affinity = []
        snap.with_required_anti_affinity = []
        snap.columns = None
        return snap

    def refresh_affinity_lists(self) -> None:
        """Recomputes the lists of nodes with (anti-)affinity pods."""
        self.with_affinity = [ni for ni in self.node_infos if ni.pods_with_affinity]
        self.with_required_anti_affinity = [
            ni for ni in self.node_infos if ni.pods_with_required_anti_affinity
        ]

    def get(self, name: str) -> NodeInfo | None:
        """The NodeInfo of a node by name, or None."""
        return self._by_name.get(name)

    def list(self) -> list[NodeInfo]:
        """Every NodeInfo, in snapshot order."""
        return self.node_infos

    def __len__(self) -> int:
        return len(self.node_infos)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_infos)
