"""The order in which the scheduler lists nodes (pkg/scheduler/backend/cache/node_tree.go).

kube-scheduler keeps its nodes grouped by zone (region and zone labels): the zones in the
order they first held a node (a zone left empty is dropped, and comes back last), the
nodes of each zone in the order they were added. Its snapshot lists them round robin over
the zones: the first node of every zone, then the second of every zone, and so on
(nodeTree.list). A node whose zone changes leaves its zone and is added to the end of the
new one (nodeTree.updateNode).
"""

from __future__ import annotations

from itertools import zip_longest
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wasmsched.api.objects import Node
    from wasmsched.framework.node_info import NodeInfo

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def zone_key(node: Node) -> str:
    """The node's zone as the tree groups it (component-helpers node/topology: GetZoneKey)."""
    labels = node.labels
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


class NodeTree:
    """The nodes by zone (nodeTree.tree, its zones list as the dict's order)."""

    __slots__ = ("_zone_of", "_zones")

    def __init__(self) -> None:
        self._zones: dict[str, list[NodeInfo]] = {}
        self._zone_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._zone_of)

    def add(self, info: NodeInfo) -> None:
        """nodeTree.addNode: at the end of its zone (a new zone comes last)."""
        zone = zone_key(info.node)
        self._zone_of[info.name] = zone
        members = self._zones.get(zone)
        if members is None:
            self._zones[zone] = [info]
        else:
            members.append(info)

    def remove(self, info: NodeInfo) -> None:
        """nodeTree.removeNode: the others keep their order; an empty zone is dropped."""
        zone = self._zone_of.pop(info.name)
        members = self._zones[zone]
        # By identity: NodeInfo compares so anyway, and a list holds a node once.
        del members[next(i for i, m in enumerate(members) if m is info)]
        if not members:
            del self._zones[zone]

    def update(self, info: NodeInfo) -> bool:
        """nodeTree.updateNode, after ``info``'s node changed: True when its zone changed
        (it moved to the end of its new zone, so the order changed)."""
        if zone_key(info.node) == self._zone_of[info.name]:
            return False
        self.remove(info)
        self.add(info)
        return True

    def ordered(self) -> list[NodeInfo]:
        """nodeTree.list: round robin over the zones, in a new list."""
        lists = list(self._zones.values())
        if len(lists) <= 1:
            return list(lists[0]) if lists else []
        return [ni for group in zip_longest(*lists) for ni in group if ni is not None]
