"""ImageLocality: favours nodes that already hold the pod's images (k8s ``imagelocality``).

The score is the sum over the pod's init and regular containers (since v1.36 also its image
volumes, ``volumes[].image.reference``) of each present image's size scaled by how widely it
has spread (``size * numNodes / totalNodes``), clamped to [23 MiB, 1000 MiB * images] and
mapped linearly onto [0, 100].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.framework.batching import IMAGE_NAMES_SIGNER, image_names_signature
from wasmsched.framework.columns import SAFE_LIMIT, IntArray, NodeRows, RowValues
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.plugins.helpers import ALL_EVENTS, features_of

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import ImageStateSummary, NodeInfo
    from wasmsched.framework.status import Status
    from wasmsched.framework.types import ClusterEventWithHint

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """The CRI name of an image: ``:latest`` added when the reference has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_images(pod: Pod, image_volumes: bool = False) -> tuple[tuple[str, ...], int]:
    """(normalized image of every init and regular container, number of containers); with
    ``image_volumes`` the image volumes count too (v1.36+ image_locality.go: sumImageScores)."""
    spec = pod.spec or {}
    images: list[str] = []
    count = 0
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            count += 1
            images.append(normalized_image_name(str(container.get("image") or "")))
    if image_volumes:
        for volume in spec.get("volumes") or ():
            image = volume.get("image")
            if image is None:
                continue
            count += 1
            images.append(normalized_image_name(str(image.get("reference") or "")))
    return tuple(images), count


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """scaledImageScore (imagelocality/image_locality.go): the image's size scaled by the
    fraction of nodes that hold it.
    """
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """calculatePriority (image_locality.go): the summed image score clamped to
    [minThreshold, maxContainerThreshold * containers] and mapped onto [0, MaxNodeScore].
    """
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    """The ImageLocality Score plugin (pkg/scheduler/framework/plugins/imagelocality/
    image_locality.go: ImageLocality).
    """

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self._image_volumes = features_of(handle).image_locality_counts_image_volumes
        # (pod, its images, container count) of the last pod scored: Score runs once per
        # node for the same pod. One tuple, so that concurrent readers never mix two pods.
        self._last: tuple[Pod | None, tuple[str, ...], int] = (None, (), 0)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (image_locality.go: ImageLocality.Score): the node's score for the images of the
        pod that it already holds.
        """
        last_pod, images, count = self._last
        if last_pod is not pod:
            images, count = pod_images(pod, self._image_volumes)
            self._last = (pod, images, count)
        if count == 0:
            return 0, None
        total = len(self.handle.snapshot())
        states = node_info.image_states
        total_score = 0
        if states and total:
            for image in images:
                image_state = states.get(image)
                if image_state is not None:
                    total_score += scaled_image_score(image_state, total)
        return calculate_priority(total_score, count), None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` over the columns: each of the pod's images adds its scaled score (the
        same for every node that holds it) on the rows that hold it; then calculatePriority
        on the sums. Which rows hold an image is found once per image (then kept up to date
        by the columns), its summary (the same object on every node) from one of them."""
        images, count = pod_images(pod, self._image_volumes)
        size = len(rows)
        if count == 0:
            return np.zeros(size, np.int64)
        total = len(self.handle.snapshot())
        sums = np.zeros(size, np.int64)
        if total:
            columns = rows.columns
            for image in images:
                held: RowValues | None = columns.node_cache.get(("image", image))
                if held is None:
                    held = RowValues(_holders(columns.infos.tolist(), image), _holders_of(image))
                    columns.node_cache[("image", image)] = held
                mask = held.values
                first = int(mask.argmax())
                if not mask[first]:
                    continue
                summary = columns.infos[first].image_states[image]
                value = scaled_image_score(summary, total)
                if value >= SAFE_LIMIT:
                    return None
                sums += np.where(mask[rows.rows], value, 0)
        max_threshold = MAX_CONTAINER_THRESHOLD * count
        clamped = np.clip(sums, MIN_THRESHOLD, max_threshold)
        out: IntArray = (
            MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
        )
        return out

    def score_extensions(self) -> None:
        """ScoreExtensions (image_locality.go): none, the score is already in [0, 100]."""
        return None

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (image_locality.go, 1.35+): the distinct normalized images."""
        return [(IMAGE_NAMES_SIGNER, image_names_signature(pod, normalized_image_name))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EnqueueExtensions: every cluster event, as upstream registers for a plugin without
        EventsToRegister (pkg/scheduler/framework/runtime/framework.go: fillEventToPluginMap).
        """
        return list(ALL_EVENTS)


def _holders(infos: list[NodeInfo], image: str) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which of ``infos`` hold ``image``."""
    return np.fromiter((image in ni.image_states for ni in infos), np.bool_, len(infos))


def _holders_of(image: str) -> Callable[[list[NodeInfo]], np.ndarray[Any, np.dtype[np.bool_]]]:
    """``_holders`` of one image, for the columns to re-read rows with."""
    return lambda infos: _holders(infos, image)


def new(args: dict[str, Any], handle: Handle) -> ImageLocality:
    """The registry factory (image_locality.go: New); ImageLocality takes no args."""
    return ImageLocality(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, ScorePlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.ScorePlugin = &ImageLocality{}`
    # (pkg/scheduler/framework/plugins/imagelocality/image_locality.go).
    _score: type[ScorePlugin] = ImageLocality
    _enqueue_extensions: type[EnqueueExtensions] = ImageLocality
