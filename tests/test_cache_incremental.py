"""The scheduler cache keeps what its snapshot derives from the node set up to date as nodes
and pods come, change and go (cluster/cache.py, cluster/node_tree.py,
cluster/image_states.py, framework/columns.py): after every change the snapshot equals one
rebuilt from scratch, its node order is kube-scheduler's node tree
(pkg/scheduler/backend/cache/node_tree.go, modelled here plainly), and the per-node caches
the columns carry answer as the plugins' per-node forms do."""

from __future__ import annotations

import random
from typing import Any

import pytest

from sched_support import assert_columns_equal
from wasmsched.api.objects import Node, Pod
from wasmsched.cluster.cache import Cache
from wasmsched.framework.columns import NodeColumns, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.node_info import NodeInfo, Snapshot
from wasmsched.plugins.image_locality import ImageLocality
from wasmsched.plugins.node_affinity import NodeAffinity
from wasmsched.plugins.pod_topology_spread.columnar import domains
from wasmsched.release.features import SchedulerFeatures

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOST = "kubernetes.io/hostname"
# Each image has one size wherever it is (so that a rebuild from scratch knows it).
IMAGES = {f"registry.example.com/app-{i}:v1": (i + 1) * 40_000_000 for i in range(8)}
KINDS = ["small", "large", "gpu"]
# The extended resources whose columns are compared.
RESOURCES = ("nvidia.com/gpu", "example.com/dongle")
# Label keys whose domains (PodTopologySpread's per-row cache) are checked.
DOMAIN_KEYS = (ZONE, "kind", HOST)


# --- the cluster ----------------------------------------------------------------------------


def node_doc(
    name: str, rng: random.Random, heartbeat: int = 0, images: list[str] | None = None
) -> Node:
    labels = {HOST: name, "kind": rng.choice(KINDS)}
    zone = rng.choice(["a", "b", "c", "d", None])
    if zone is not None:
        labels[ZONE] = zone
    if rng.random() < 0.3:
        labels[REGION] = rng.choice(["r1", "r2"])
    spec: dict[str, Any] = {}
    if rng.random() < 0.2:
        spec["taints"] = [{"key": rng.choice(["t1", "t2"]), "effect": "NoSchedule"}]
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    if images is None:
        images = rng.sample(sorted(IMAGES), rng.randint(0, 4))
    alloc = {"cpu": rng.choice(["4", "8"]), "memory": "16Gi", "pods": "110"}
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {
                "allocatable": alloc,
                "images": [{"names": [i], "sizeBytes": IMAGES[i]} for i in images],
                "conditions": [{"type": "Ready", "status": "True", "heartbeat": heartbeat}],
            },
        }
    )


def changed_node(node: Node, rng: random.Random, how: str, step: int) -> Node:
    """``node`` with one thing changed: its status only, labels (perhaps its zone), taints,
    images or allocatable."""
    manifest: dict[str, Any] = {
        **node.manifest,
        "metadata": dict(node.manifest["metadata"]),
        "spec": dict(node.manifest.get("spec") or {}),
        "status": dict(node.manifest["status"]),
    }
    meta, spec, status = manifest["metadata"], manifest["spec"], manifest["status"]
    if how == "status":
        status["conditions"] = [{"type": "Ready", "status": "True", "heartbeat": step}]
    elif how == "labels":
        labels = dict(meta["labels"])
        labels["kind"] = rng.choice(KINDS)
        if rng.random() < 0.5:
            labels[ZONE] = rng.choice(["a", "b", "c", "d"])
        elif rng.random() < 0.3:
            labels.pop(ZONE, None)
        meta["labels"] = labels
    elif how == "taints":
        spec["taints"] = (
            [] if spec.get("taints") else [{"key": "t3", "value": "x", "effect": "NoSchedule"}]
        )
    elif how == "images":
        chosen = rng.sample(sorted(IMAGES), rng.randint(0, 4))
        status["images"] = [{"names": [i], "sizeBytes": IMAGES[i]} for i in chosen]
    else:
        status["allocatable"] = {**status["allocatable"], "cpu": rng.choice(["2", "16"])}
    return Node(manifest)


def pod_doc(i: int, rng: random.Random, node_name: str = "") -> Pod:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": rng.choice(sorted(IMAGES)),
                "resources": {"requests": {"cpu": rng.choice(["100m", "1"]), "memory": "1Gi"}},
            }
        ]
    }
    if rng.random() < 0.2:
        # Each pod its own port: NodeInfo keeps the ports in use as a set, as kube does
        # (a pod removed frees its ports even if another pod of the node has them too), so
        # shared ones would depend on the order of the changes, not only on the pods.
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8000 + i}]
    if rng.random() < 0.3:
        term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        spec["affinity"] = {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if node_name:
        spec["nodeName"] = node_name
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"p{i}",
                "namespace": "d",
                "uid": f"u{i}",
                "labels": {"app": "web"},
            },
            "spec": spec,
        }
    )


# --- kube's node tree, plainly (node_tree.go) -------------------------------------------------


def zone_of(node: Node) -> tuple[str, str]:
    return (node.labels.get(REGION, ""), node.labels.get(ZONE, ""))


class TreeModel:
    """nodeTree: zones in order, node names per zone; ``listed`` is nodeTree.list."""

    def __init__(self) -> None:
        self.zones: list[tuple[str, str]] = []
        self.tree: dict[tuple[str, str], list[str]] = {}

    def add(self, name: str, zone: tuple[str, str]) -> None:
        if zone in self.tree:
            if name not in self.tree[zone]:
                self.tree[zone].append(name)
        else:
            self.zones.append(zone)
            self.tree[zone] = [name]

    def remove(self, name: str, zone: tuple[str, str]) -> None:
        self.tree[zone].remove(name)
        if not self.tree[zone]:
            del self.tree[zone]
            self.zones.remove(zone)

    def update(self, name: str, old: tuple[str, str], new: tuple[str, str]) -> None:
        if old != new:
            self.remove(name, old)
            self.add(name, new)

    def listed(self) -> list[str]:
        out: list[str] = []
        total = sum(len(v) for v in self.tree.values())
        index = 0
        while len(out) < total:
            for zone in self.zones:
                if index < len(self.tree[zone]):
                    out.append(self.tree[zone][index])
            index += 1
        return out


# --- what the plugins keep in the columns' node cache ------------------------------------------


class _Handle:
    features = SchedulerFeatures.of()

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def snapshot(self) -> Snapshot:
        return self.cache.snapshot()


def _probes() -> list[Pod]:
    """Pods whose NodeAffinity and ImageLocality answers the columns cache."""
    selector = {"kind": "small"}
    required = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a", "b"]}]}
        ]
    }
    preferred = [
        {
            "weight": 7,
            "preference": {
                "matchExpressions": [{"key": "kind", "operator": "In", "values": ["gpu"]}]
            },
        },
        {"weight": 3, "preference": {"matchExpressions": [{"key": ZONE, "operator": "Exists"}]}},
    ]
    images = sorted(IMAGES)
    specs: list[dict[str, Any]] = [
        {"nodeSelector": selector},
        {
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
            }
        },
        {
            "affinity": {
                "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
            }
        },
    ]
    pods = []
    for i, spec in enumerate(specs):
        containers = [
            {"name": f"c{j}", "image": images[(i + 3 * j) % len(images)]} for j in range(2)
        ]
        pods.append(
            Pod(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"probe{i}", "namespace": "d", "uid": f"probe{i}"},
                    "spec": {**spec, "containers": containers},
                }
            )
        )
    return pods


def columnar_answers(cache: Cache, snap: Snapshot) -> dict[str, Any]:
    """Every probe's columnar NodeAffinity Filter/Score and ImageLocality Score over all rows
    (from the columns' node cache, filled on the first call and kept from then on), and
    every checked label's domains, as plain per-row values."""
    columns = snap.columns
    assert columns is not None
    rows = NodeRows(columns, columns.all_rows)
    affinity = NodeAffinity(None, None)
    images = ImageLocality(_Handle(cache))  # type: ignore[arg-type]
    out: dict[str, Any] = {}
    for pod in _probes():
        state = CycleState()
        affinity.pre_filter(state, pod, snap.node_infos)
        found = affinity.filter_columns(state, pod, rows)
        assert found is not None
        codes, statuses = found
        out[f"{pod.name} filter"] = [
            None if c == 0 else statuses[c - 1].message for c in codes.tolist()
        ]
        if affinity.pre_score(state, pod, snap.node_infos) is None:
            scores = affinity.score_columns(state, pod, rows)
            assert scores is not None
            out[f"{pod.name} score"] = scores.tolist()
        locality = images.score_columns(state, pod, rows)
        assert locality is not None
        out[f"{pod.name} images"] = locality.tolist()
    for key in DOMAIN_KEYS:
        dom = domains(columns, key)
        out[f"domains {key}"] = [dom.values[i] if i >= 0 else None for i in dom.ids.tolist()]
    return out


def per_node_answers(cache: Cache, snap: Snapshot) -> dict[str, Any]:
    """``columnar_answers`` from the per-node forms (and the labels themselves)."""
    affinity = NodeAffinity(None, None)
    images = ImageLocality(_Handle(cache))  # type: ignore[arg-type]
    infos = snap.node_infos
    out: dict[str, Any] = {}
    for pod in _probes():
        state = CycleState()
        affinity.pre_filter(state, pod, infos)
        verdicts = [affinity.filter(state, pod, ni) for ni in infos]
        out[f"{pod.name} filter"] = [None if v is None else v.message for v in verdicts]
        if affinity.pre_score(state, pod, infos) is None:
            out[f"{pod.name} score"] = [affinity.score(state, pod, ni)[0] for ni in infos]
        out[f"{pod.name} images"] = [images.score(state, pod, ni)[0] for ni in infos]
    for key in DOMAIN_KEYS:
        out[f"domains {key}"] = [ni.node.labels.get(key) for ni in infos]
    return out


# --- the comparisons -----------------------------------------------------------------------------


def image_view(ni: NodeInfo) -> dict[str, tuple[int, int, list[str]]]:
    return {name: (s.size, s.num_nodes, sorted(s.nodes)) for name, s in ni.image_states.items()}


def rebuilt(cache: Cache, model: TreeModel) -> Cache:
    """A new cache of the same nodes and pods, its nodes added zone by zone in the tree's
    order (so that its node tree is the same)."""
    fresh = Cache()
    for zone in model.zones:
        for name in model.tree[zone]:
            fresh.add_node(cache.nodes[name].node)
    for pod in cache.pods.values():
        fresh.add_pod(pod)
    return fresh


def check(cache: Cache, model: TreeModel) -> None:
    snap = cache.snapshot()
    names = [ni.name for ni in snap.node_infos]
    assert names == model.listed()
    assert all(snap.get(n) is cache.nodes[n] for n in names) and len(cache.nodes) == len(names)
    fresh_cache = rebuilt(cache, model)
    fresh = fresh_cache.snapshot()
    assert [ni.name for ni in fresh.node_infos] == names
    assert [image_view(ni) for ni in snap.node_infos] == [image_view(ni) for ni in fresh.node_infos]
    for kind in ("with_affinity", "with_required_anti_affinity"):
        got = [ni.name for ni in getattr(snap, kind)]
        assert got == [ni.name for ni in getattr(fresh, kind)], kind
    assert snap.with_affinity == [ni for ni in snap.node_infos if ni.pods_with_affinity]
    assert snap.with_required_anti_affinity == [
        ni for ni in snap.node_infos if ni.pods_with_required_anti_affinity
    ]
    assert snap.columns is not None and fresh.columns is not None
    assert list(snap.columns.infos) == snap.node_infos
    assert_columns_equal(snap.columns, NodeColumns(snap.node_infos), RESOURCES)
    assert_columns_equal(snap.columns, fresh.columns, RESOURCES)
    # The node cache's entries, carried and re-read since they were first filled, answer
    # as the per-node forms do and as entries filled afresh.
    kept = columnar_answers(cache, snap)
    assert kept == per_node_answers(cache, snap)
    assert kept == columnar_answers(fresh_cache, fresh)


def run_steps(size: int, seed: int, steps: int, check_every: int) -> None:
    rng = random.Random(seed)
    cache, model = Cache(), TreeModel()
    next_node = next_pod = 0
    removed: list[Node] = []
    for _ in range(size):
        node = node_doc(f"n{next_node}", rng)
        next_node += 1
        cache.add_node(node)
        model.add(node.name, zone_of(node))
    for _ in range(size):
        pod = pod_doc(next_pod, rng, rng.choice(sorted(cache.nodes)))
        next_pod += 1
        cache.add_pod(pod)
    check(cache, model)
    for step in range(steps):
        action = rng.random()
        names = sorted(cache.nodes)
        if action < 0.15:
            if removed and rng.random() < 0.4:  # the same name again: a new NodeInfo
                node = removed.pop(rng.randrange(len(removed)))
                node = node_doc(node.name, rng)
            else:
                node = node_doc(f"n{next_node}", rng)
                next_node += 1
            cache.add_node(node)
            model.add(node.name, zone_of(node))
        elif action < 0.27 and len(names) > 1:
            name = rng.choice(names)
            node = cache.nodes[name].node
            cache.remove_node(name)
            model.remove(name, zone_of(node))
            removed.append(node)
        elif action < 0.55:
            old = cache.nodes[rng.choice(names)].node
            how = rng.choice(["status", "labels", "taints", "images", "allocatable"])
            new = changed_node(old, rng, how, step)
            if rng.random() < 0.5:
                cache.update_node(new)
            else:
                cache.add_node(new)  # an add of a known node updates it
            model.update(new.name, zone_of(old), zone_of(new))
        elif action < 0.75 or not cache.pods:
            pod = pod_doc(next_pod, rng)
            next_pod += 1
            if rng.random() < 0.5:
                cache.assume_pod(pod, rng.choice(names))
            else:
                cache.add_pod(pod.with_node_name(rng.choice(names)))
        else:
            uid = rng.choice(sorted(cache.pods))
            pod = cache.pods[uid]
            if cache.is_assumed(uid) and rng.random() < 0.5:
                cache.forget_pod(pod)
            else:
                cache.remove_pod(pod)
        if step % check_every == check_every - 1:
            check(cache, model)
    check(cache, model)


@pytest.mark.parametrize("seed", range(12))
def test_small_clusters_follow_every_change(seed: int) -> None:
    run_steps(size=8, seed=seed, steps=80, check_every=1)


@pytest.mark.parametrize("seed", range(4))
def test_clusters_follow_batches_of_changes(seed: int) -> None:
    run_steps(size=60, seed=100 + seed, steps=120, check_every=4)


@pytest.mark.parametrize("seed", range(2))
def test_500_nodes_follow_changes(seed: int) -> None:
    run_steps(size=500, seed=500 + seed, steps=60, check_every=6)


# --- tables -----------------------------------------------------------------------------------


def plain_node(name: str, zone: str | None = None, images: dict[str, int] | None = None) -> Node:
    labels = {HOST: name, **({ZONE: zone} if zone is not None else {})}
    status: dict[str, Any] = {"allocatable": {"pods": "110"}}
    status["images"] = [{"names": [i], "sizeBytes": s} for i, s in (images or {}).items()]
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": status,
        }
    )


def listed(cache: Cache) -> list[str]:
    return [ni.name for ni in cache.snapshot().node_infos]


def test_node_order_is_the_node_trees() -> None:
    cache = Cache()
    for name, zone in [
        ("a1", "a"),
        ("b1", "b"),
        ("a2", "a"),
        ("c1", "c"),
        ("a3", "a"),
        ("b2", "b"),
    ]:
        cache.add_node(plain_node(name, zone))
    # Round robin over the zones in the order they first held a node.
    assert listed(cache) == ["a1", "b1", "c1", "a2", "b2", "a3"]
    # A node moved to another zone goes to the end of that zone (nodeTree.updateNode).
    cache.update_node(plain_node("a1", "b"))
    assert listed(cache) == ["a2", "b1", "c1", "a3", "b2", "a1"]
    # An emptied zone is dropped; when it holds a node again it comes last.
    cache.remove_node("c1")
    cache.add_node(plain_node("c2", "c"))
    assert listed(cache) == ["a2", "b1", "c2", "a3", "b2", "a1"]
    cache.remove_node("a2")
    cache.remove_node("a3")
    cache.add_node(plain_node("a4", "a"))
    assert listed(cache) == ["b1", "c2", "a4", "b2", "a1"]
    # The first node of the first zone removed: its zone keeps its place (it is not empty).
    cache.remove_node("b1")
    assert listed(cache) == ["b2", "c2", "a4", "a1"]
    # A status update leaves the order (and the snapshot's list) as it was.
    before = cache.snapshot().node_infos
    cache.update_node(plain_node("c2", "c"))
    assert cache.snapshot().node_infos is before


def test_image_states_follow_kube_as_nodes_come_change_and_go() -> None:
    # cache.go: addNodeImageStates / removeNodeImageStates: an image's size is the one
    # reported by the node that made it known, kept while any node holds it.
    cache = Cache()
    cache.add_node(plain_node("a", images={"img": 10, "other": 5}))
    cache.add_node(plain_node("b", images={"img": 20}))
    snap = cache.snapshot()
    a, b = snap.get("a"), snap.get("b")
    assert a is not None and b is not None
    assert image_view(a) == {"img": (10, 2, ["a", "b"]), "other": (5, 1, ["a"])}
    assert a.image_states["img"] is b.image_states["img"]  # one summary per image
    cache.remove_node("a")
    cache.snapshot()
    assert image_view(b) == {"img": (10, 1, ["b"])}
    # An update takes the node's images out and counts them again: the image no other node
    # holds is made known anew, with this node's size.
    cache.update_node(plain_node("b", images={"img": 20}))
    cache.snapshot()
    assert image_view(b) == {"img": (20, 1, ["b"])}
    cache.add_node(plain_node("c", images={"img": 30}))
    cache.update_node(plain_node("b", images={}))
    snap = cache.snapshot()
    c = snap.get("c")
    assert c is not None
    assert image_view(b) == {} and image_view(c) == {"img": (20, 1, ["c"])}


def test_node_changes_keep_the_node_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # A status update keeps the snapshot, its columns and every per-node cache as they
    # are; a label update re-reads the node's row of each; a node added or removed carries
    # them to the new columns, reading only the new node.
    from wasmsched.plugins.pod_topology_spread import columnar

    rng = random.Random(7)
    cache, model = Cache(), TreeModel()
    for i in range(40):
        node = node_doc(f"n{i}", rng)
        cache.add_node(node)
        model.add(node.name, zone_of(node))
    snap = cache.snapshot()
    columnar_answers(cache, snap)
    assert snap.columns is not None
    entries = dict(snap.columns.node_cache)
    assert len(entries) >= 9
    read: list[int] = []
    original = columnar.Domains._ids

    def spy(self: Any, infos: list[NodeInfo]) -> list[int]:
        read.append(len(infos))
        return original(self, infos)

    monkeypatch.setattr(columnar.Domains, "_ids", spy)
    old = cache.nodes["n3"].node
    cache.update_node(changed_node(old, rng, "status", 1))
    assert cache.snapshot() is snap and snap.columns.node_cache == entries and not read
    cache.update_node(changed_node(old, rng, "labels", 2))
    model.update("n3", zone_of(old), zone_of(cache.nodes["n3"].node))
    new_snap = cache.snapshot()
    assert new_snap.columns is not None
    assert new_snap.columns.node_cache.keys() == entries.keys()
    assert read == [1] * len(DOMAIN_KEYS)
    read.clear()
    node = node_doc("n99", rng)
    cache.add_node(node)
    model.add(node.name, zone_of(node))
    snap = cache.snapshot()
    assert snap.columns is not None and snap.columns is not new_snap.columns
    assert snap.columns.node_cache.keys() == entries.keys()
    assert read == [1] * len(DOMAIN_KEYS)
    read.clear()
    gone = cache.nodes["n5"].node
    cache.remove_node("n5")
    model.remove("n5", zone_of(gone))
    snap = cache.snapshot()
    assert snap.columns is not None and snap.columns.node_cache.keys() == entries.keys()
    assert not read
    check(cache, model)
