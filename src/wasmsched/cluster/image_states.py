"""Which nodes hold each image (pkg/scheduler/backend/cache/cache.go: imageStates,
addNodeImageStates, removeNodeImageStates), kept as nodes come, change and go.

One ImageStateSummary per image name, shared by the NodeInfos of every node that holds it
and updated in place, so that a node's change touches only its own images: the summary's
size is the one reported by the node that made the image known (kube keeps it until no
node holds the image), its node count the number of nodes holding it now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wasmsched.framework.node_info import ImageStateSummary

if TYPE_CHECKING:
    from wasmsched.api.objects import Node
    from wasmsched.framework.node_info import NodeInfo


class ImageStates:
    """Every image of the cluster's nodes by name (cache.imageStates)."""

    __slots__ = ("_states",)

    def __init__(self) -> None:
        self._states: dict[str, ImageStateSummary] = {}

    def __len__(self) -> int:
        return len(self._states)

    def get(self, name: str) -> ImageStateSummary | None:
        """The summary of an image held by some node, or None."""
        return self._states.get(name)

    def add_node(self, info: NodeInfo) -> None:
        """addNodeImageStates: counts ``info``'s node on its images and points its
        ``image_states`` at their summaries."""
        states = self._states
        held: dict[str, ImageStateSummary] = {}
        name = info.name
        for names, size in info.node.images:
            for image in names:
                state = states.get(image)
                if state is None:
                    state = states[image] = ImageStateSummary(size, 0)
                nodes = state.nodes
                nodes.add(name)
                state.num_nodes = len(nodes)
                held.setdefault(image, state)
        info.image_states = held

    def remove_node(self, node: Node) -> None:
        """removeNodeImageStates: ``node`` no longer counts on its images; an image no node
        holds is forgotten."""
        states = self._states
        name = node.name
        for names, _ in node.images:
            for image in names:
                state = states.get(image)
                if state is None:
                    continue
                nodes = state.nodes
                nodes.discard(name)
                state.num_nodes = len(nodes)
                if not nodes:
                    del states[image]
