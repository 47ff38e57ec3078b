"""The scheduler cache: NodeInfos kept up to date as pods and nodes come and go.

Pods the scheduler has placed but the cluster has not yet confirmed are *assumed*: they
count on their node until confirmed (``add_pod``) or forgotten (``forget_pod``).
The snapshot shares the cache's NodeInfo objects: a scheduling cycle runs between
cluster changes, so nothing needs copying per cycle. What the snapshot derives from the
node set is kept up to date as nodes change, as kube-scheduler's cache does
(pkg/scheduler/backend/cache/cache.go: UpdateSnapshot): the node tree's order
(cluster/node_tree), the image states (cluster/image_states), the nodes with
(anti-)affinity pods and the columns (framework/columns), whose rows and per-node caches
are carried to a new node set and re-read only for the nodes that changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from wasmsched.cluster.image_states import ImageStates
from wasmsched.cluster.node_tree import NodeTree
from wasmsched.framework.columns import NodeColumns
from wasmsched.framework.node_info import NodeInfo, NodeInfoList, Snapshot

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.release.features import SchedulerFeatures


class Cache:
    def __init__(self, features: SchedulerFeatures | None = None) -> None:
        # What a placed pod counts for on its node follows the release (NodeInfo).
        self.features = features
        self.nodes: dict[str, NodeInfo] = {}
        self.pod_node: dict[str, str] = {}  # uid -> node of every placed (or assumed) pod
        self.pods: dict[str, Pod] = {}  # uid -> pod placed on a node
        self.assumed: set[str] = set()
        # Pods whose node is not (yet) known: kept so that they count once it appears.
        self._orphans: dict[str, list[Pod]] = {}
        self._tree = NodeTree()
        self._images = ImageStates()
        self._snapshot: Snapshot | None = None
        # The last snapshot's columns: a new node set's columns are built from them.
        self._columns: NodeColumns | None = None
        # Whether the node list changed since the last snapshot (a node added, removed or
        # moved to another zone): the snapshot then lists the node tree anew.
        self._order_changed = True
        self.generation = 0
        # NodeInfos changed since the last snapshot (their columnar rows are re-read), and
        # those whose node's labels, taints or images changed (their per-node caches too).
        self._dirty: dict[str, NodeInfo] = {}
        self._nodes_changed: dict[str, NodeInfo] = {}
        # Nodes with pods with (anti-)affinity, and whether those sets changed.
        self._affinity: set[str] = set()
        self._anti_affinity: set[str] = set()
        self._affinity_dirty = True

    # --- nodes --------------------------------------------------------------------------

    def add_node(self, node: Node) -> NodeInfo:
        """A node added (cache.go: AddNode), or updated when it is known (UpdateNode)."""
        name = node.name
        info = self.nodes.get(name)
        if info is None:
            info = NodeInfo(node, self.features)
            self.nodes[name] = info
            for pod in self._orphans.pop(name, []):
                info.add_pod(pod)
            self._track_affinity(info)
            self._tree.add(info)
            self._images.add_node(info)
            self._order_changed = True
        else:
            old = info.node
            # The image states as kube-scheduler keeps them: the old node's taken out and
            # the new one's counted, whatever changed (removeNodeImageStates, then
            # addNodeImageStates).
            self._images.remove_node(old)
            info.set_node(node)
            self._images.add_node(info)
            self._dirty[name] = info
            # Per-node caches (framework/columns: the node cache, the taint classes)
            # follow the labels, taints and images; a status update (the kubelet's
            # heartbeat, conditions) changes none of them.
            if old.labels != node.labels or old.taints != node.taints or old.images != node.images:
                self._nodes_changed[name] = info
            if self._tree.update(info):
                self._order_changed = True
        self.generation += 1
        return info

    def update_node(self, node: Node) -> NodeInfo:
        """A node changed: its row of the columns is re-read; the node list is listed anew
        only when its zone changed (its place in the node tree, nodeTree.updateNode)."""
        return self.add_node(node)

    def remove_node(self, name: str) -> None:
        info = self.nodes.pop(name, None)
        if info is not None:
            # Pods stay known (the API server deletes them separately).
            self._orphans[name] = [p.pod for p in info.pods]
            self._tree.remove(info)
            self._images.remove_node(info.node)
            self._dirty.pop(name, None)
            self._nodes_changed.pop(name, None)
            for names in (self._affinity, self._anti_affinity):
                if name in names:
                    names.discard(name)
                    self._affinity_dirty = True
            self._order_changed = True
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
        info = self.nodes.get(node_name)
        if info is not None:
            # Parsed on the pod itself, what it counts for is carried to the copy and to
            # the bound pod that confirms it (the writer's copy of the same pod).
            info.counted(pod)
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
            pod_info = info.add_pod(pod)
            self._dirty[node_name] = info
            if pod_info.has_affinity:
                self._track_affinity(info)
        self.generation += 1

    def _track_affinity(self, info: NodeInfo) -> None:
        """Keeps the sets of nodes with pods with (anti-)affinity in step with ``info``."""
        for names, has in (
            (self._affinity, bool(info.pods_with_affinity)),
            (self._anti_affinity, bool(info.pods_with_required_anti_affinity)),
        ):
            if has and info.name not in names:
                names.add(info.name)
                self._affinity_dirty = True
            elif not has and info.name in names:
                names.discard(info.name)
                self._affinity_dirty = True

    def _remove(self, uid: str) -> None:
        node_name = self.pod_node.pop(uid, None)
        pod = self.pods.pop(uid, None)
        if node_name is None or pod is None:
            return
        info = self.nodes.get(node_name)
        if info is not None:
            info.remove_pod(pod)
            self._dirty[node_name] = info
            if info.name in self._affinity or info.name in self._anti_affinity:
                self._track_affinity(info)
        else:
            orphans = self._orphans.get(node_name, [])
            self._orphans[node_name] = [p for p in orphans if p.uid != uid]
        self.generation += 1

    # --- snapshot -------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The cycle's view (cache.go: UpdateSnapshot). When the node list changed, a new
        snapshot lists the node tree, and its columns carry the last ones' rows (and
        per-node caches) and read only the nodes added; else the rows of the nodes changed
        since the last cycle are re-read in place."""
        snap = self._snapshot
        changed = list(self._nodes_changed.values())
        if snap is None or self._order_changed:
            infos = NodeInfoList(self._tree.ordered())
            previous = self._columns
            columns = NodeColumns(infos, previous)
            if snap is not None and columns.rows_before is not None:
                # The new list knows where its nodes were in the last one (only the
                # newest does: a chain of lists would keep every older one alive).
                last = snap.node_infos
                infos.previous, infos.rows_before = last, columns.rows_before
                if isinstance(last, NodeInfoList):
                    last.previous = last.rows_before = None
            snap = self._snapshot = Snapshot.of(infos, dict(self.nodes), self.generation)
            snap.columns = self._columns = columns
            if previous is not None and self._dirty:
                snap.columns.update(self._dirty.values(), changed)
            self._refresh_affinity_lists(snap)
            self._order_changed = False
        else:
            snap.generation = self.generation
            if self._affinity_dirty:
                self._refresh_affinity_lists(snap)
            if self._dirty and snap.columns is not None:
                snap.columns.update(self._dirty.values(), changed)
        self._dirty = {}
        self._nodes_changed = {}
        return snap

    def _refresh_affinity_lists(self, snap: Snapshot) -> None:
        """The snapshot's lists of nodes with (anti-)affinity pods, in snapshot order, from
        the tracked sets (Snapshot.refresh_affinity_lists without a pass over every node)."""
        columns = snap.columns
        if columns is None:
            snap.refresh_affinity_lists()
        else:
            snap.with_affinity = _in_row_order(columns, self._affinity)
            snap.with_required_anti_affinity = _in_row_order(columns, self._anti_affinity)
        self._affinity_dirty = False


def _in_row_order(columns: NodeColumns, names: set[str]) -> list[NodeInfo]:
    """The NodeInfos of ``names`` in snapshot order (a sort of their rows in numpy: the
    sets hold up to every node)."""
    rows = np.fromiter(map(columns.row_of.__getitem__, names), np.intp, len(names))
    rows.sort()
    infos: list[NodeInfo] = columns.infos[rows].tolist()
    return infos
