"""Builders and constants shared by the PodTopologySpread tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conftest import FakeHandle, make_node, make_snapshot

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.node_info import Snapshot
from wasmsched.framework.status import Code
from wasmsched.plugins.pod_topology_spread import (
    LABEL_HOSTNAME,
    PodTopologySpread,
)

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HN = LABEL_HOSTNAME
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
NO_SCHEDULE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
S = Code.SUCCESS
LIST_ARGS = {"defaultingType": "List"}


def sc(
    max_skew: int,
    key: str,
    when: str,
    selector: Mapping[str, Any] | None,
    *,
    min_domains: int | None = None,
    affinity_policy: str | None = None,
    taints_policy: str | None = None,
    match_label_keys: Sequence[str] = (),
) -> dict[str, Any]:
    """A TopologySpreadConstraint, argument order as st.MakePod().SpreadConstraint."""
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = dict(selector)
    if min_domains is not None:
        c["minDomains"] = min_domains
    if affinity_policy is not None:
        c["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        c["nodeTaintsPolicy"] = taints_policy
    if match_label_keys:
        c["matchLabelKeys"] = list(match_label_keys)
    return c


def pod(
    name: str = "p",
    *,
    node: str = "",
    labels: Mapping[str, str] | None = None,
    spread: Sequence[Mapping[str, Any]] = (),
    ns: str = "default",
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    owner: Mapping[str, Any] | None = None,
    terminating: bool = False,
    tolerations: Sequence[Mapping[str, Any]] = (),
) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": dict(labels or {})}
    if owner is not None:
        meta["ownerReferences"] = [dict(owner)]
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = [dict(c) for c in spread]
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    if affinity is not None:
        spec["affinity"] = dict(affinity)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def n(name: str, taints: Sequence[Mapping[str, str]] = (), **labels: str) -> Node:
    """A node; keyword labels, with ``hostname`` standing for kubernetes.io/hostname."""
    lbl = {(HN if k == "hostname" else k): v for k, v in labels.items()}
    return make_node(name, labels=lbl, taints=taints)


def zn(name: str, zone: str) -> Node:
    """st.MakeNode().Name(name).Label("zone", zone).Label("node", name)."""
    return n(name, zone=zone, node=name)


def node_affinity(key: str, op: str, *values: str) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}
                ]
            }
        }
    }


class ObjectsHandle(FakeHandle):
    """FakeHandle plus the cluster objects (Services, ReplicaSets...) plugins may read."""

    def __init__(self, snapshot: Snapshot, objects: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(snapshot)
        self._objects = list(objects)

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return [o for o in self._objects if o.get("kind") == kind]


def service(selector: Mapping[str, str] | None, ns: str = "default") -> dict[str, Any]:
    spec = {} if selector is None else {"selector": dict(selector)}
    return {"kind": "Service", "metadata": {"name": "svc", "namespace": ns}, "spec": spec}


def plugin(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    args: Mapping[str, Any] = LIST_ARGS,
    objects: Sequence[Mapping[str, Any]] = (),
) -> tuple[PodTopologySpread, Snapshot]:
    snapshot = make_snapshot(nodes, pods)
    return PodTopologySpread(dict(args), ObjectsHandle(snapshot, objects)), snapshot


# 2/1/0/3 on node-a/b/x/y (zones 1 and 2), all with label foo
FOUR_NODES = [
    zn("node-a", "zone1"),
    zn("node-b", "zone1"),
    zn("node-x", "zone2"),
    zn("node-y", "zone2"),
]


def foo_pods(**per_node: int) -> list[Pod]:
    return [
        pod(f"p-{node[-1]}{i}", node=node.replace("_", "-"), labels={"foo": ""})
        for node, count in per_node.items()
        for i in range(1, count + 1)
    ]
