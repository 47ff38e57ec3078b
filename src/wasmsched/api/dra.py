"""Dynamic Resource Allocation objects (resource.k8s.io/v1): their kinds, and the defaults
the API server writes into them.

DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate and DeviceTaintRule are kept
as manifests (``ClusterObjects.others``), like the storage objects; the DynamicResources
plugin reads them. What the scheduler depends on of the API server's defaulting
(pkg/apis/resource/v1/defaults.go and zz_generated.defaults.go) is applied when a manifest
is loaded: a request without ``allocationMode`` is ``ExactCount``, an ``ExactCount`` request
without ``count`` asks for 1 (kube-scheduler itself refuses a claim without them:
"unsupported count mode"), and a toleration without ``operator`` is ``Equal``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = [
    "CLUSTER_SCOPED_DRA_KINDS",
    "DEVICE_CLASS",
    "DEVICE_TAINT_RULE",
    "DRA_API_VERSION",
    "DRA_KINDS",
    "RESOURCE_CLAIM",
    "RESOURCE_CLAIM_TEMPLATE",
    "RESOURCE_SLICE",
    "with_dra_defaults",
]

DRA_API_VERSION = "resource.k8s.io/v1"
DEVICE_CLASS = "DeviceClass"
RESOURCE_SLICE = "ResourceSlice"
RESOURCE_CLAIM = "ResourceClaim"
RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate"
DEVICE_TAINT_RULE = "DeviceTaintRule"
DRA_KINDS = frozenset(
    {DEVICE_CLASS, RESOURCE_SLICE, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE, DEVICE_TAINT_RULE}
)
CLUSTER_SCOPED_DRA_KINDS = frozenset({DEVICE_CLASS, RESOURCE_SLICE, DEVICE_TAINT_RULE})

EXACT_COUNT = "ExactCount"


def _request_defaults(request: MutableMapping[str, Any]) -> None:
    """SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest, and the tolerations'
    operator (zz_generated.defaults.go)."""
    if not request.get("allocationMode"):
        request["allocationMode"] = EXACT_COUNT
    if request["allocationMode"] == EXACT_COUNT and not request.get("count"):
        request["count"] = 1
    for toleration in request.get("tolerations") or ():
        if isinstance(toleration, MutableMapping) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def _claim_spec_defaults(spec: Any) -> None:
    if not isinstance(spec, MutableMapping):
        return
    devices = spec.get("devices")
    if not isinstance(devices, MutableMapping):
        return
    for request in devices.get("requests") or ():
        if not isinstance(request, MutableMapping):
            continue
        exactly = request.get("exactly")
        if isinstance(exactly, MutableMapping):
            _request_defaults(exactly)
        for sub in request.get("firstAvailable") or ():
            if isinstance(sub, MutableMapping):
                _request_defaults(sub)


def with_dra_defaults(kind: str, manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``manifest`` (a structurally valid DRA object) with the API server's
    defaults; other kinds are copied unchanged."""
    out: dict[str, Any] = copy.deepcopy(dict(manifest))
    if kind == RESOURCE_CLAIM:
        _claim_spec_defaults(out.get("spec"))
        status = out.get("status")
        allocation = status.get("allocation") if isinstance(status, Mapping) else None
        if isinstance(allocation, Mapping):
            for result in (allocation.get("devices") or {}).get("results") or ():
                for toleration in (result or {}).get("tolerations") or ():
                    if isinstance(toleration, MutableMapping) and not toleration.get("operator"):
                        toleration["operator"] = "Equal"
    elif kind == RESOURCE_CLAIM_TEMPLATE:
        spec = out.get("spec")
        if isinstance(spec, Mapping):
            _claim_spec_defaults(spec.get("spec"))
    return out
