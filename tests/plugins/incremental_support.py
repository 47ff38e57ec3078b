"""Random clusters that change between cycles, for the tests of counts kept across cycles
(plugins/node_counts): nodes with zone/rack/hostname labels and taints in a real Cache, and
the changes (pods added, removed, relabelled; nodes relabelled, added, removed)."""

from __future__ import annotations

from typing import Any

from conftest import FakeHandle
from hypothesis import strategies as st

from wasmsched.api.objects import Node, Pod
from wasmsched.cluster.cache import Cache
from wasmsched.framework.node_info import Snapshot

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"


class CacheHandle(FakeHandle):
    """A handle whose snapshot is the live cache's, as the scheduler's is."""

    def __init__(self, cache: Cache) -> None:
        super().__init__()
        self.cache = cache

    def snapshot(self) -> Snapshot:
        return self.cache.snapshot()


def node_doc(i: int, zone: str | None, rack: str | None, host: bool, taint: bool) -> Node:
    labels: dict[str, str] = {"kind": "odd" if i % 2 else "even"}
    if zone is not None:
        labels[ZONE] = zone
    if rack is not None:
        labels[RACK] = rack
    if host:
        labels[HOST] = f"n{i}"
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "t", "effect": "NoSchedule"}]
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": labels},
            "spec": spec,
            "status": {"allocatable": {"pods": "110"}},
        }
    )


@st.composite
def nodes(draw: st.DrawFn, i: int) -> Node:
    zone = draw(st.sampled_from(["z0", "z1", "z2", None]))
    rack = draw(st.sampled_from(["r0", "r1", None]))
    return node_doc(i, zone, rack, draw(st.integers(0, 5)) > 0, draw(st.integers(0, 3)) == 0)


def cache_with(node_docs: list[Node], pods: list[Pod], pod_seeds: list[int]) -> Cache:
    """A Cache of the nodes and of the pods whose seed is not a multiple of 3, each bound to
    the node its seed picks (the others stay out, for the cycles to add)."""
    cache = Cache()
    for node in node_docs:
        cache.add_node(node)
    for i, p in enumerate(pods):
        if pod_seeds[i] % 3:
            cache.add_pod(p.with_node_name(node_docs[pod_seeds[i] % len(node_docs)].name))
    return cache


# A change to the cluster between cycles.
Step = tuple[str, int, int]


def apply(cache: Cache, step: Step, pods: list[Pod], node_docs: list[Node]) -> None:
    kind, a, b = step
    names = sorted(cache.nodes)
    if kind == "add-pod" and names:
        p = pods[a % len(pods)]
        if p.uid not in cache.pod_node:
            cache.add_pod(p.with_node_name(names[b % len(names)]))
    elif kind == "remove-pod" and cache.pods:
        uid = sorted(cache.pods)[a % len(cache.pods)]
        cache.remove_pod(cache.pods[uid])
    elif kind == "relabel-pod" and cache.pods:
        uid = sorted(cache.pods)[a % len(cache.pods)]
        old = cache.pods[uid]
        manifest = dict(old.manifest)
        labels = dict(old.labels)
        labels["app"] = "b" if labels.get("app") == "a" else "a"
        manifest["metadata"] = {**manifest["metadata"], "labels": labels}
        cache.add_pod(Pod(manifest))  # an update: the cache replaces the pod
    elif kind == "relabel-node" and names:
        old_node = cache.nodes[names[a % len(names)]].node
        i = int(old_node.name[1:])
        zones = ["z0", "z1", "z2", None]
        cache.update_node(
            node_doc(i, zones[b % 4], old_node.labels.get(RACK), b % 5 > 0, b % 3 == 0)
        )
    elif kind == "add-node":
        i = len(node_docs)
        node_docs.append(node_doc(i, ["z0", "z1", "z2"][a % 3], None, True, b % 4 == 0))
        cache.add_node(node_docs[-1])
    elif kind == "remove-node" and len(names) > 1:
        cache.remove_node(names[a % len(names)])


steps = st.tuples(
    st.sampled_from(
        [
            "add-pod",
            "add-pod",
            "remove-pod",
            "relabel-pod",
            "relabel-node",
            "add-node",
            "remove-node",
        ]
    ),
    st.integers(0, 40),
    st.integers(0, 40),
)
