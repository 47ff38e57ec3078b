"""Builders for the volume plugin tests: claims, volumes, classes, CSINodes and a handle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conftest import FakeHandle, make_node, make_snapshot

from wasmsched.api.objects import Node, Pod
from wasmsched.framework.node_info import Snapshot

WFFC = "WaitForFirstConsumer"


def pvc(
    name: str,
    sc: str | None = "",
    *,
    volume: str = "",
    bound: bool = False,
    namespace: str = "default",
    modes: Sequence[str] = ("ReadWriteOnce",),
    storage: str | None = None,
    annotations: Mapping[str, str] | None = None,
    phase: str = "",
    selector: Mapping[str, Any] | None = None,
    owner_uid: str = "",
) -> dict[str, Any]:
    """A claim; ``sc=None`` leaves spec.storageClassName out (the default class applies)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    if ann:
        meta["annotations"] = ann
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}
        ]
    spec: dict[str, Any] = {"accessModes": list(modes)}
    if sc is not None:
        spec["storageClassName"] = sc
    if volume:
        spec["volumeName"] = volume
    if storage:
        spec["resources"] = {"requests": {"storage": storage}}
    if selector is not None:
        spec["selector"] = dict(selector)
    manifest: dict[str, Any] = {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}
    if phase:
        manifest["status"] = {"phase": phase}
    return manifest


def pv(
    name: str,
    sc: str = "",
    *,
    affinity: Mapping[str, Sequence[str]] | None = None,
    labels: Mapping[str, str] | None = None,
    capacity: str = "1Gi",
    modes: Sequence[str] = ("ReadWriteOnce",),
    claim: str = "",
    phase: str = "",
    source: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A volume; ``affinity`` maps label keys to allowed values (one required term)."""
    spec: dict[str, Any] = {
        "storageClassName": sc,
        "capacity": {"storage": capacity},
        "accessModes": list(modes),
    }
    if affinity is not None:
        exprs = [{"key": k, "operator": "In", "values": list(v)} for k, v in affinity.items()]
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    if claim:
        spec["claimRef"] = {"name": claim, "namespace": "default"}
    if source is not None:
        spec.update(source)
    manifest: dict[str, Any] = {
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
    }
    if phase:
        manifest["status"] = {"phase": phase}
    return manifest


def storage_class(
    name: str,
    mode: str | None = "Immediate",
    provisioner: str = "kubernetes.io/no-provisioner",
    *,
    default: bool = False,
    allowed_topologies: Sequence[Mapping[str, Sequence[str]]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    manifest: dict[str, Any] = {
        "kind": "StorageClass",
        "metadata": meta,
        "provisioner": provisioner,
    }
    if mode is not None:
        manifest["volumeBindingMode"] = mode
    if allowed_topologies is not None:
        manifest["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in t.items()]}
            for t in allowed_topologies
        ]
    return manifest


def csi_node(name: str, drivers: Mapping[str, int | None]) -> dict[str, Any]:
    return {
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {
            "drivers": [
                {
                    "name": d,
                    "nodeID": name,
                    **({"allocatable": {"count": c}} if c is not None else {}),
                }
                for d, c in drivers.items()
            ]
        },
    }


def vol_pod(
    name: str = "p",
    *,
    claims: Sequence[str] = (),
    volumes: Sequence[Mapping[str, Any]] = (),
    node_name: str = "",
    namespace: str = "default",
    uid: str = "",
    ephemeral: Sequence[str] = (),
) -> Pod:
    """A pod with a persistentVolumeClaim volume per claim, then ``volumes`` as given."""
    vols: list[dict[str, Any]] = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    vols += [dict(v) for v in volumes]
    vols += [{"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for e in ephemeral]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], "volumes": vols}
    if node_name:
        spec["nodeName"] = node_name
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid:
        meta["uid"] = uid
    return Pod({"kind": "Pod", "metadata": meta, "spec": spec})


def zone_node(name: str, labels: Mapping[str, str] | None = None, **alloc: str) -> Node:
    return make_node(name, labels=labels, allocatable=alloc or None)


class VolumeHandle(FakeHandle):
    """A FakeHandle that also serves ``objects(kind)``."""

    def __init__(
        self,
        objects: Sequence[Mapping[str, Any]] = (),
        snapshot: Snapshot | None = None,
    ) -> None:
        super().__init__(snapshot)
        self._objects: dict[str, list[Mapping[str, Any]]] = {}
        for m in objects:
            self._objects.setdefault(str(m["kind"]), []).append(m)

    def objects(self, kind: str) -> list[Mapping[str, Any]]:
        return list(self._objects.get(kind, []))


def handle_for(
    objects: Sequence[Mapping[str, Any]] = (),
    nodes: Sequence[Node] = (),
    pods: Sequence[Pod] = (),
) -> VolumeHandle:
    return VolumeHandle(objects, make_snapshot(nodes, pods))
