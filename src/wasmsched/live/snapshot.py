"""``wasmsched snapshot``: the cluster as manifests that ``simulate --cluster`` reads.

First a Snapshot document with the server's version (``/version``), so that the objects are
read as that release's; then Nodes, non-terminal pods (what the live scheduler sees) and the
other kinds the scheduler consults (Dynamic Resource Allocation's among them: device
classes, slices, taint rules, claim templates and claims with their allocations), without server bookkeeping: managedFields,
resourceVersion, generation, selfLink and the last-applied annotation. uids are kept: they
identify pods in the simulator too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from wasmsched.api.dra import (
    DEVICE_CLASS,
    DEVICE_TAINT_RULE,
    DRA_API_VERSION,
    RESOURCE_CLAIM,
    RESOURCE_CLAIM_TEMPLATE,
    RESOURCE_SLICE,
)
from wasmsched.api.manifests import SNAPSHOT_API_VERSION, SNAPSHOT_KIND
from wasmsched.live.client import OPTIONAL_KINDS, RESOURCES, ApiClient, ApiError, ResourceType

log = logging.getLogger("wasmsched.live.snapshot")

# resource.k8s.io/v1 (served from 1.34; DeviceTaintRule from 1.37): an older server answers
# 404, and the kinds are left out like any optional kind it refuses.
DRA_RESOURCES: tuple[ResourceType, ...] = (
    ResourceType(DEVICE_CLASS, DRA_API_VERSION, "deviceclasses", namespaced=False),
    ResourceType(RESOURCE_SLICE, DRA_API_VERSION, "resourceslices", namespaced=False),
    ResourceType(DEVICE_TAINT_RULE, DRA_API_VERSION, "devicetaintrules", namespaced=False),
    ResourceType(
        RESOURCE_CLAIM_TEMPLATE, DRA_API_VERSION, "resourceclaimtemplates", namespaced=True
    ),
    ResourceType(RESOURCE_CLAIM, DRA_API_VERSION, "resourceclaims", namespaced=True),
)
SNAPSHOT_KINDS = (
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PodDisruptionBudget",
    *(r.kind for r in DRA_RESOURCES),
    "Node",
    "Pod",
)
_NOISY_METADATA = ("managedFields", "resourceVersion", "generation", "selfLink")
_NOISY_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_OPTIONAL = {r.kind for r in (*OPTIONAL_KINDS, *DRA_RESOURCES)}
_RESOURCES = {**RESOURCES, **{r.kind: r for r in DRA_RESOURCES}}


def clean(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy without server bookkeeping (top-level keys ordered as kubectl prints them)."""
    out: dict[str, Any] = {
        "apiVersion": manifest.get("apiVersion"),
        "kind": manifest.get("kind"),
    }
    meta = dict(manifest.get("metadata") or {})
    for key in _NOISY_METADATA:
        meta.pop(key, None)
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k not in _NOISY_ANNOTATIONS
    }
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    for key, value in manifest.items():
        if key not in out:
            out[key] = value
    return out


def snapshot(api: ApiClient, kinds: Iterable[str] = SNAPSHOT_KINDS) -> list[dict[str, Any]]:
    """The Snapshot document, then every kind listed; an optional kind the server refuses
    (403/404) is left out, and so is the Snapshot document when ``/version`` is refused."""
    objects: list[dict[str, Any]] = []
    version = api.server_version()
    if version is None:
        log.warning("no server version: the snapshot has no Snapshot document")
    else:
        objects.append(
            {
                "apiVersion": SNAPSHOT_API_VERSION,
                "kind": SNAPSHOT_KIND,
                "metadata": {},
                "serverVersion": version,
            }
        )
    for kind in kinds:
        resource = _RESOURCES[kind]
        try:
            items, _ = api.list(resource)
        except ApiError as err:
            if kind in _OPTIONAL and err.status in (403, 404):
                log.warning("skipping kind=%s error=%r", kind, str(err))
                continue
            raise
        if kind == "Pod":
            items = [
                i
                for i in items
                if (i.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
            ]
        items.sort(key=lambda m: _sort_key(m))
        objects.extend(clean(i) for i in items)
    return objects


def _sort_key(manifest: Mapping[str, Any]) -> tuple[str, str]:
    meta = manifest.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def dump(objects: Iterable[Mapping[str, Any]]) -> str:
    """Multi-document YAML."""
    return yaml.safe_dump_all(
        [dict(o) for o in objects], sort_keys=False, default_flow_style=False, explicit_start=True
    )
