"""The resource table of the double: paths, scopes, field labels and server-side defaults."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

Obj = dict[str, Any]
FieldGetter = Callable[[Obj], str]


def _path(*keys: str, default: str = "") -> FieldGetter:
    """Getter for a dotted field; missing values read as `default`, like the real field sets."""

    def get(obj: Obj) -> str:
        cur: Any = obj
        for key in keys:
            if not isinstance(cur, dict):
                return default
            cur = cur.get(key)
        if cur is None:
            return default
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


_META_FIELDS: dict[str, FieldGetter] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}

# Field labels each real registry accepts (pkg/registry/*/strategy.go ...FieldsSet);
# anything else is a 400 "field label not supported".
_POD_FIELDS: dict[str, FieldGetter] = {
    "spec.nodeName": _path("spec", "nodeName"),
    "spec.restartPolicy": _path("spec", "restartPolicy"),
    "spec.schedulerName": _path("spec", "schedulerName"),
    "spec.serviceAccountName": _path("spec", "serviceAccountName"),
    "spec.hostNetwork": _path("spec", "hostNetwork", default="false"),
    "status.phase": _path("status", "phase"),
    "status.podIP": _path("status", "podIP"),
    "status.nominatedNodeName": _path("status", "nominatedNodeName"),
}
_NODE_FIELDS: dict[str, FieldGetter] = {
    "spec.unschedulable": _path("spec", "unschedulable", default="false"),
}
_CORE_EVENT_FIELDS: dict[str, FieldGetter] = {
    **{
        f"involvedObject.{k}": _path("involvedObject", k)
        for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    "source": _path("source", "component"),
    "type": _path("type"),
}
_EVENTS_V1_FIELDS: dict[str, FieldGetter] = {
    **{
        f"regarding.{k}": _path("regarding", k)
        for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reason": _path("reason"),
    "reportingController": _path("reportingController"),
    "type": _path("type"),
}
_NAMESPACE_FIELDS: dict[str, FieldGetter] = {"status.phase": _path("status", "phase")}


@dataclass(frozen=True)
class Resource:
    """One REST resource as the real server exposes it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str] = frozenset()
    fields: Mapping[str, FieldGetter] = field(default_factory=dict)
    # genericregistry.Store.ReturnDeletedObject: DELETE answers the object, not a Status.
    return_deleted: bool = False
    # RESTUpdateStrategy.AllowCreateOnUpdate / AllowUnconditionalUpdate.
    create_on_update: bool = False
    unconditional_update: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """`plural` for core, `plural.group` otherwise: what error messages call the resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def singular(self) -> str:
        return self.kind.lower()

    def field_getter(self, label: str) -> FieldGetter | None:
        if label == "metadata.name" or (label == "metadata.namespace" and self.namespaced):
            return _META_FIELDS[label]
        return self.fields.get(label)


def _res(group: str, kind: str, plural: str, namespaced: bool, **kw: Any) -> Resource:
    return Resource(group, "v1", kind, plural, namespaced, **kw)


RESOURCES: tuple[Resource, ...] = (
    _res(
        "",
        "Namespace",
        "namespaces",
        False,
        subresources=frozenset({"status"}),
        fields=_NAMESPACE_FIELDS,
    ),
    _res("", "Node", "nodes", False, subresources=frozenset({"status"}), fields=_NODE_FIELDS),
    _res(
        "",
        "Pod",
        "pods",
        True,
        subresources=frozenset({"status", "binding"}),
        fields=_POD_FIELDS,
        return_deleted=True,
    ),
    _res("", "Event", "events", True, fields=_CORE_EVENT_FIELDS, create_on_update=True),
    _res(
        "",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        True,
        subresources=frozenset({"status"}),
        return_deleted=True,
    ),
    _res(
        "",
        "PersistentVolume",
        "persistentvolumes",
        False,
        subresources=frozenset({"status"}),
        return_deleted=True,
    ),
    _res(
        "policy",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        True,
        subresources=frozenset({"status"}),
    ),
    _res("storage.k8s.io", "StorageClass", "storageclasses", False),
    _res("storage.k8s.io", "CSINode", "csinodes", False),
    _res("scheduling.k8s.io", "PriorityClass", "priorityclasses", False),
    _res(
        "coordination.k8s.io",
        "Lease",
        "leases",
        True,
        create_on_update=True,
        unconditional_update=False,
    ),
    _res("events.k8s.io", "Event", "events", True, fields=_EVENTS_V1_FIELDS, create_on_update=True),
    # Dynamic Resource Allocation (resource.k8s.io/v1, served from 1.34).
    _res("resource.k8s.io", "DeviceClass", "deviceclasses", False),
    _res("resource.k8s.io", "ResourceSlice", "resourceslices", False),
    _res("resource.k8s.io", "DeviceTaintRule", "devicetaintrules", False),
    _res("resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates", True),
    _res(
        "resource.k8s.io",
        "ResourceClaim",
        "resourceclaims",
        True,
        subresources=frozenset({"status"}),
    ),
)

BY_PATH: dict[tuple[str, str, str], Resource] = {
    (r.group, r.version, r.plural): r for r in RESOURCES
}
BY_KIND: dict[tuple[str, str], Resource] = {(r.api_version, r.kind): r for r in RESOURCES}
GROUP_VERSIONS: tuple[tuple[str, str], ...] = tuple(
    dict.fromkeys((r.group, r.version) for r in RESOURCES)
)
EVENT_KEYS = frozenset({"events", "events.events.k8s.io"})


def lookup(name: str) -> Resource:
    """Resolve 'Pod', 'pods', 'leases.coordination.k8s.io' or 'events.k8s.io/Event'."""
    for r in RESOURCES:
        if name in (r.key, f"{r.api_version}/{r.kind}", f"{r.group}/{r.kind}"):
            return r
    # A bare Kind or plural picks the core resource first (so 'Event' is core/v1 Event).
    for r in RESOURCES:
        if name in (r.kind, r.plural):
            return r
    raise KeyError(f"unknown resource {name!r}")


_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def name_error(res: Resource, name: str) -> str | None:
    """The validation message for an invalid object name, or None when it is valid."""
    if res.kind == "Namespace":
        ok, msg, limit = _DNS_LABEL.match(name) is not None, _LABEL_MSG, 63
    else:
        ok, msg, limit = _DNS_SUBDOMAIN.match(name) is not None, _SUBDOMAIN_MSG, 253
    if len(name) > limit:
        return f"must be no more than {limit} characters"
    return None if ok else msg


# --- server-side defaulting (the parts of SetDefaults_* a scheduler can observe) ---

_SUFFIX = {
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")


def _quantity(value: Any) -> Decimal | None:
    m = _QUANTITY.match(str(value).strip())
    if m is None or (m.group(2) and m.group(2) not in _SUFFIX):
        return None
    try:
        return Decimal(m.group(1)) * _SUFFIX.get(m.group(2), Decimal(1))
    except InvalidOperation:
        return None


def _containers(spec: Obj) -> list[Obj]:
    return [
        c
        for key in ("initContainers", "containers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]


def _qos_class(spec: Obj) -> str:
    """BestEffort / Guaranteed / Burstable as pkg/apis/core/helper/qos computes it (cpu, memory)."""
    containers = _containers(spec)
    tracked = ("cpu", "memory")
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        requests, limits = res.get("requests") or {}, res.get("limits") or {}
        for name in tracked:
            req, lim = requests.get(name), limits.get(name)
            if (req is not None and _quantity(req) != 0) or (
                lim is not None and _quantity(lim) != 0
            ):
                any_set = True
            if lim is None or req is None or _quantity(req) != _quantity(lim):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def default_pod(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for c in _containers(spec):
        res = c.setdefault("resources", {})
        limits = res.get("limits") or {}
        if limits:
            # A limit without a request defaults the request to the limit.
            requests = res.setdefault("requests", {})
            for name, value in limits.items():
                requests.setdefault(name, value)
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("imagePullPolicy", "IfNotPresent")
    status = pod.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", _qos_class(spec))


def default_node(node: Obj) -> None:
    status = node.setdefault("status", {})
    if "allocatable" not in status and "capacity" in status:
        status["allocatable"] = dict(status["capacity"])


def default_namespace(ns: Obj) -> None:
    ns.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    ns.setdefault("status", {}).setdefault("phase", "Active")


def default_priority_class(pc: Obj) -> None:
    pc.setdefault("preemptionPolicy", "PreemptLowerPriority")


def default_storage_class(sc: Obj) -> None:
    sc.setdefault("reclaimPolicy", "Delete")
    sc.setdefault("volumeBindingMode", "Immediate")


def default_pvc(pvc: Obj) -> None:
    pvc.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    pvc.setdefault("status", {}).setdefault("phase", "Pending")


def default_pv(pv: Obj) -> None:
    spec = pv.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    pv.setdefault("status", {}).setdefault("phase", "Pending")


DEFAULTERS: dict[str, Callable[[Obj], None]] = {
    "pods": default_pod,
    "nodes": default_node,
    "namespaces": default_namespace,
    "priorityclasses.scheduling.k8s.io": default_priority_class,
    "storageclasses.storage.k8s.io": default_storage_class,
    "persistentvolumeclaims": default_pvc,
    "persistentvolumes": default_pv,
}

BOOTSTRAP: tuple[Obj, ...] = (
    *(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
        for n in ("default", "kube-system", "kube-public", "kube-node-lease")
    ),
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "system-node-critical"},
        "value": 2000001000,
        "description": "Used for system critical pods that must not be moved from their current node.",
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "system-cluster-critical"},
        "value": 2000000000,
        "description": "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    },
)
