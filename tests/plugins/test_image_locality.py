"""ImageLocality scores (image_locality_test.go cases, with the v1.33 per-container threshold)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_pod, make_snapshot, run_scores

from wasmsched.api.objects import Pod
from wasmsched.framework.columns import NodeColumns, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.plugins.image_locality import (
    ImageLocality,
    calculate_priority,
    normalized_image_name,
)
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

MB = 1024 * 1024

NODE_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
]
NODE_250_10 = [
    (["gcr.io/250:latest"], 250 * MB),
    (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB),
]

CASES = [
    (
        # node1: 40M/2 = 20M < 23M -> 0; node2: 100 * (250M/2 - 23M) / (2000M - 23M) = 5
        "two images spread on two nodes, prefer the larger image one",
        {"images": ["gcr.io/40", "gcr.io/250"]},
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    (
        # node1: 100 * ((40M + 300M)/2 - 23M) / (2000M - 23M) = 7
        "two images on one node, prefer this node",
        {"images": ["gcr.io/40", "gcr.io/300"]},
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
    ),
    (
        # node1: 100 * (2000M/2 - 23M) / (2000M - 23M) = 49; node2: 10M/2 < 23M -> 0
        "large image on one node",
        {"images": ["gcr.io/2000", "gcr.io/10"]},
        [NODE_40_300_2000, NODE_250_10],
        [49, 0],
    ),
    (
        # node1: 100 * (2000M/3 - 23M) / (2000M - 23M) = 32
        "large image spread over a third of the nodes",
        {"images": ["gcr.io/2000", "gcr.io/10"]},
        [NODE_40_300_2000, NODE_250_10, []],
        [32, 0, 0],
    ),
    (
        # one container: 100 * (2000M/2 - 23M) / (1000M - 23M) = 100 (clamped)
        "if exceed limit, use limit",
        {"images": ["gcr.io/2000"]},
        [NODE_40_300_2000, NODE_250_10],
        [100, 0],
    ),
    (
        # init and regular containers count: (300M/2 + 2000M/2 - 23M) / (2000M - 23M) -> 57
        "init container images are included",
        {"images": ["gcr.io/2000"], "init_images": ["gcr.io/300"]},
        [NODE_40_300_2000, NODE_250_10],
        [57, 0],
    ),
    (
        "tagged images match their tag",
        {"images": ["gcr.io/300:v1", "gcr.io/10:v2"]},
        [NODE_40_300_2000, NODE_250_10],
        [6, 0],
    ),
]


@pytest.mark.parametrize(
    ("pod_kw", "node_images", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_score(pod_kw: dict[str, Any], node_images: Any, want: list[int]) -> None:
    nodes = [make_node(f"node{i}", images=imgs) for i, imgs in enumerate(node_images)]
    snapshot = make_snapshot(nodes)
    plugin = ImageLocality(FakeHandle(snapshot))
    pod = make_pod(**pod_kw)
    assert [s for _, s in run_scores(plugin, pod, snapshot)] == want
    # A second pod through the same plugin is not confused with the first.
    other = make_pod("other", images=["gcr.io/none"])
    assert {s for _, s in run_scores(plugin, other, snapshot)} == {0}


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:" + "a" * 64, "root@sha256:" + "a" * 64),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


@pytest.mark.parametrize(
    ("total", "containers", "want"),
    [(0, 1, 0), (23 * MB, 1, 0), (1000 * MB, 1, 100), (5000 * MB, 2, 100), (0, 0, 0)],
)
def test_calculate_priority(total: int, containers: int, want: int) -> None:
    assert calculate_priority(total, containers) == want


# --- v1.36+: image volumes count -----------------------------------------------------------
# image_locality.go (v1.37.2) sumImageScores: volumes[].image.reference images on the node
# add their scaled score, and each image volume adds to imageCount (the max threshold).

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


@pytest.mark.parametrize(
    ("features", "want"),
    [
        # node0 holds the volume's image (and node1 not): 500M * 1/2 = 250M over 2 images:
        # 100 * (250M - 23M) / (2000M - 23M) = 11. The container's image is on no node.
        (V137, [11, 0]),
        # 1.33: the container's image alone, held nowhere.
        (V133, [0, 0]),
    ],
    ids=["1.37", "1.33"],
)
def test_image_volumes_count_since_1_36(features: SchedulerFeatures, want: list[int]) -> None:
    nodes = [
        make_node("node0", images=[(["gcr.io/vol:v1"], 500 * MB)]),
        make_node("node1", images=[(["gcr.io/other:v1"], 500 * MB)]),
    ]
    snapshot = make_snapshot(nodes)
    pod = make_pod(images=["gcr.io/absent:v1"])
    pod = Pod(
        {
            **pod.manifest,
            "spec": {
                **pod.spec,
                "volumes": [
                    {"name": "v", "image": {"reference": "gcr.io/vol:v1"}},
                    {"name": "e", "emptyDir": {}},
                ],
            },
        }
    )
    plugin = ImageLocality(FakeHandle(snapshot, features=features))
    assert [s for _, s in run_scores(plugin, pod, snapshot)] == want
    columns = NodeColumns(snapshot.list())
    by_columns = plugin.score_columns(CycleState(), pod, NodeRows(columns, columns.all_rows))
    assert by_columns is not None and by_columns.tolist() == want
