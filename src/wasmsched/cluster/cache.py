"""The scheduler cache: NodeInfos kept up to date as pods and nodes come and go.

Pods the scheduler has placed but the cluster has not yet confirmed are *assumed*: they
count on their node until confirmed (``add_pod``) or forgotten (``forget_pod``).
The snapshot shares the cache's NodeInfo objects: a scheduling cycle runs between
cluster changes, so nothing needs copying per cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wasmsched.framework.node_info import ImageStateSummary, NodeInfo, Snapshot

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def zone_key(node: Node) -> str:
    """kube-scheduler's node tree groups nodes by region:zone."""
    labels = node.labels
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


class Cache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.pod_node: dict[str, str] = {}  # uid -> node of every placed (or assumed) pod
        self.pods: dict[str, Pod] = {}  # uid -> pod placed on a node
        self.assumed: set[str] = set()
        # Pods whose node is not (yet) known: kept so that they count once it appears.
        self._orphans: dict[str, list[Pod]] = {}
        self._snapshot: Snapshot | None = None
        self._images_dirty = True
        self.generation = 0

    # --- nodes --------------------------------------------------------------------------

    def add_node(self, node: Node) -> NodeInfo:
        info = self.nodes.get(node.name)
        if info is None:
            info = NodeInfo(node)
            self.nodes[node.name] = info
            for pod in self._orphans.pop(node.name, []):
                info.add_pod(pod)
            self._snapshot = None
        else:
            info.set_node(node)
        self._images_dirty = True
        self.generation += 1
        return info

    def update_node(self, node: Node) -> NodeInfo:
        info = self.add_node(node)
        self._snapshot = None  # zone may have changed
        return info

    def remove_node(self, name: str) -> None:
        info = self.nodes.pop(name, None)
        if info is not None:
            # Pods stay known (the API server deletes them separately).
            self._orphans[name] = [p.pod for p in info.pods]
            self._snapshot = None
            self._images_dirty = True
            self.generation += 1

    # --- pods -----------------------------------------------------------------------------

    def add_pod(self, pod: Pod) -> None:
        """A pod bound to ``pod.node_name`` (confirms an assumed pod)."""
        uid = pod.uid
        if uid in self.pod_node:
            self._remove(uid)
        self.assumed.discard(uid)
        self._place(pod, pod.node_name)

    def assume_pod(self, pod: Pod, node_name: str) -> Pod:
        """Places a copy of ``pod`` bound to ``node_name``; returns that copy."""
        assumed = pod.with_node_name(node_name)
        self._place(assumed, node_name)
        self.assumed.add(assumed.uid)
        return assumed

    def forget_pod(self, pod: Pod) -> None:
        if pod.uid in self.assumed:
            self.assumed.discard(pod.uid)
            self._remove(pod.uid)

    def remove_pod(self, pod: Pod) -> None:
        self.assumed.discard(pod.uid)
        self._remove(pod.uid)

    def is_assumed(self, uid: str) -> bool:
        return uid in self.assumed

    def _place(self, pod: Pod, node_name: str) -> None:
        self.pod_node[pod.uid] = node_name
        self.pods[pod.uid] = pod
        info = self.nodes.get(node_name)
        if info is None:
            self._orphans.setdefault(node_name, []).append(pod)
        else:
            info.add_pod(pod)
        self.generation += 1

    def _remove(self, uid: str) -> None:
        node_name = self.pod_node.pop(uid, None)
        pod = self.pods.pop(uid, None)
        if node_name is None or pod is None:
            return
        info = self.nodes.get(node_name)
        if info is not None:
            info.remove_pod(pod)
        else:
            orphans = self._orphans.get(node_name, [])
            self._orphans[node_name] = [p for p in orphans if p.uid != uid]
        self.generation += 1

    # --- snapshot -------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The cycle's view; rebuilt only when the node set changed."""
        if self._snapshot is None:
            self._snapshot = Snapshot(self._node_tree_order(), self.generation)
        else:
            self._snapshot.generation = self.generation
            self._snapshot.refresh_affinity_lists()
        if self._images_dirty:
            self._refresh_image_states()
        return self._snapshot

    def _node_tree_order(self) -> list[NodeInfo]:
        """Zones interleaved round-robin, nodes in each zone in arrival order (k8s nodeTree)."""
        zones: dict[str, list[NodeInfo]] = {}
        for info in self.nodes.values():
            zones.setdefault(zone_key(info.node), []).append(info)
        if len(zones) <= 1:
            return list(self.nodes.values())
        ordered: list[NodeInfo] = []
        lists = list(zones.values())
        for i in range(max(len(z) for z in lists)):
            for zone_nodes in lists:
                if i < len(zone_nodes):
                    ordered.append(zone_nodes[i])
        return ordered

    def _refresh_image_states(self) -> None:
        sizes: dict[str, int] = {}
        holders: dict[str, set[str]] = {}
        for info in self.nodes.values():
            for names, size in info.node.images:
                for name in names:
                    sizes[name] = size
                    holders.setdefault(name, set()).add(info.name)
        summaries = {
            name: ImageStateSummary(sizes[name], len(nodes), frozenset(nodes))
            for name, nodes in holders.items()
        }
        for info in self.nodes.values():
            info.image_states = {
                name: summaries[name] for names, _ in info.node.images for name in names
            }
        self._images_dirty = False
