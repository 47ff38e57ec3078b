"""Builders for plugin tests: manifests -> api objects, NodeInfos, snapshots, a fake Handle."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import AsyncBinder, Event, NodeScore, WaitingPod
from wasmsched.framework.node_info import ImageStateSummary, NodeInfo, Snapshot
from wasmsched.framework.status import Status
from wasmsched.release.features import SchedulerFeatures

Requests = Mapping[str, str | int]


def _container(
    name: str,
    requests: Requests | None = None,
    image: str = "",
    ports: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image or "busybox"}
    if requests is not None:
        c["resources"] = {"requests": {k: str(v) for k, v in requests.items()}}
    if ports:
        c["ports"] = [dict(p) for p in ports]
    return c


def make_pod(
    name: str = "pod",
    *,
    namespace: str = "default",
    uid: str | None = None,
    node_name: str = "",
    containers: Sequence[Requests | None] | None = None,
    init_containers: Sequence[Requests | None] = (),
    images: Sequence[str] = (),
    init_images: Sequence[str] = (),
    host_ports: Sequence[tuple[str, str, int]] = (),
    tolerations: Sequence[Mapping[str, Any]] = (),
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    scheduling_gates: Sequence[str] = (),
    priority: int | None = None,
    overhead: Requests | None = None,
    nominated_node_name: str = "",
) -> Pod:
    """A pod; each entry of ``containers`` is one container's requests (None: no requests)."""
    spec: dict[str, Any] = {}
    reqs = list(containers) if containers is not None else [None]
    n = max(len(reqs), len(images))
    spec["containers"] = [
        _container(
            f"c{i}",
            reqs[i] if i < len(reqs) else None,
            images[i] if i < len(images) else "",
        )
        for i in range(n)
    ]
    if host_ports:
        spec["containers"][0]["ports"] = [
            {"containerPort": port, "hostPort": port, "hostIP": ip, "protocol": proto}
            for ip, proto, port in host_ports
        ]
    m = max(len(init_containers), len(init_images))
    if m:
        spec["initContainers"] = [
            _container(
                f"i{i}",
                init_containers[i] if i < len(init_containers) else None,
                init_images[i] if i < len(init_images) else "",
            )
            for i in range(m)
        ]
    if node_name:
        spec["nodeName"] = node_name
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = dict(affinity)
    if scheduling_gates:
        spec["schedulingGates"] = [{"name": g} for g in scheduling_gates]
    if priority is not None:
        spec["priority"] = priority
    if overhead is not None:
        spec["overhead"] = {k: str(v) for k, v in overhead.items()}
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid is not None:
        metadata["uid"] = uid
    manifest: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}
    manifest["spec"] = spec
    if nominated_node_name:
        manifest["status"] = {"nominatedNodeName": nominated_node_name}
    return Pod(manifest)


def make_node(
    name: str = "node",
    *,
    allocatable: Requests | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
    images: Sequence[tuple[Sequence[str], int]] = (),
) -> Node:
    """A node; ``allocatable`` defaults to pods: 110 (plus whatever is given)."""
    alloc: dict[str, str] = {"pods": "110"}
    if allocatable is not None:
        alloc.update({k: str(v) for k, v in allocatable.items()})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"allocatable": alloc}
    if images:
        status["images"] = [{"names": list(n), "sizeBytes": size} for n, size in images]
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    return Node(
        {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": spec, "status": status}
    )


def make_node_info(node: Node, pods: Iterable[Pod] = ()) -> NodeInfo:
    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(p)
    return ni


def make_snapshot(nodes: Sequence[Node], pods: Iterable[Pod] = ()) -> Snapshot:
    """NodeInfos with each pod on its spec.nodeName, and image states as the cache fills them."""
    infos = {n.name: NodeInfo(n) for n in nodes}
    for p in pods:
        if p.node_name in infos:
            infos[p.node_name].add_pod(p)
    holders: dict[str, set[str]] = {}
    for n in nodes:
        for names, _ in n.images:
            for image in names:
                holders.setdefault(image, set()).add(n.name)
    for n in nodes:
        infos[n.name].image_states = {
            image: ImageStateSummary(size, len(holders[image]), frozenset(holders[image]))
            for names, size in n.images
            for image in names
        }
    return Snapshot([infos[n.name] for n in nodes])


class FakeBinder:
    def __init__(self, result: Status | None = None, error: Exception | None = None) -> None:
        self.bound: list[tuple[str, str]] = []
        self.result = result
        self.error = error

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        if self.error is not None:
            raise self.error
        self.bound.append((pod.key, node_name))
        return self.result


class FakeHandle:
    """The little of framework.Handle that in-tree plugins use."""

    parallelism = 16
    features = SchedulerFeatures.of()

    def __init__(
        self,
        snapshot: Snapshot | None = None,
        binder: FakeBinder | None = None,
        features: SchedulerFeatures | None = None,
    ) -> None:
        self.features = features if features is not None else SchedulerFeatures.of()
        self._snapshot = snapshot if snapshot is not None else Snapshot()
        self._binder = binder if binder is not None else FakeBinder()
        self.events: list[Event] = []

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def now(self) -> float:
        return 0.0

    def record_event(self, event: Event) -> None:
        self.events.append(event)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return None

    def reject_waiting_pod(self, uid: str) -> bool:
        return False

    def iterate_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        return None

    def binder(self) -> FakeBinder:
        return self._binder

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        """No other cluster objects unless a test's handle holds some."""
        return []

    def async_binder(self) -> AsyncBinder | None:
        return self._binder if isinstance(self._binder, AsyncBinder) else None


def run_scores(
    plugin: Any, pod: Pod, snapshot: Snapshot, *, normalize: bool = True
) -> list[tuple[str, int]]:
    """PreScore (when the plugin has it), Score on every node, then NormalizeScore."""
    state = CycleState()
    pre_score = getattr(plugin, "pre_score", None)
    if pre_score is not None:
        status = pre_score(state, pod, snapshot.list())
        assert status is None, status
    scores = []
    for ni in snapshot:
        score, status = plugin.score(state, pod, ni)
        assert status is None, status
        scores.append(NodeScore(ni.name, score))
    ext = plugin.score_extensions()
    if normalize and ext is not None:
        assert ext.normalize_score(state, pod, scores) is None
    return [(s.name, s.score) for s in scores]
