"""Pod and Node: read-only views of manifests, parsed lazily and cached.

An object never changes: binding a pod or nominating it makes a NEW ``Pod`` (``with_node_name``)
whose manifest is a copy, so anything keyed on the object (encoded protobuf bytes, parsed
affinity) stays valid. Parsed values that do not depend on the changed field are carried over
to the new object, so binding does not recompute requests.

Each parsed property is computed on first access and then read as a plain attribute
(``functools.cached_property``). A bad field raises ``ObjectError`` naming its path:
``spec.containers[0].resources.requests.cpu: invalid quantity "12x"``. ``validate()`` touches
every property so that loaders fail early.

Where a manifest was never through an API server, the API server's defaulting that the
scheduler depends on is applied when reading: requests default to limits, host ports of a
hostNetwork pod default to the container ports, namespace "default", schedulerName
"default-scheduler".
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from wasmsched.api.cached import cached_property
from wasmsched.api.dra import PodResourceClaim
from wasmsched.api.quantity import (
    FieldError,
    expect_bool,
    expect_int,
    expect_list,
    expect_mapping,
    expect_str,
    expect_str_map,
    expect_timestamp,
    join_path,
    quote,
    type_name,
)
from wasmsched.api.resources import (
    Resource,
    node_allocatable,
    pod_level_requests,
    pod_non_zero_requests,
    pod_requests,
)
from wasmsched.api.selectors import PreferredSchedulingTerms, RequiredNodeAffinity
from wasmsched.api.taints import Taint, Toleration, taints_from_list, tolerations_from_list

__all__ = ["DEFAULT_SCHEDULER_NAME", "Node", "ObjectError", "Pod", "PodResourceClaim"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_NAMESPACE = "default"

# Objects without a uid get one derived from their name, so runs are reproducible.
_UID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://wasmsched.invalid/objects")


class ObjectError(FieldError):
    """A bad field in a Pod or Node: ``"<field path>: <problem>"``."""


class _fields:
    """Turn any FieldError raised inside into an ObjectError under ``prefix`` (a class:
    every parsed property enters one, and contextlib's generators cost more)."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def __enter__(self) -> None: ...

    def __exit__(self, kind: object, err: BaseException | None, tb: object) -> None:
        if isinstance(err, FieldError) and not isinstance(err, ObjectError):
            raise ObjectError(err.problem, join_path(self.prefix, err.path)) from None


def _check_manifest(manifest: Any, kind: str) -> None:
    if not isinstance(manifest, Mapping):
        raise ObjectError(f"{kind} manifest must be a mapping, got {type_name(manifest)}")
    got = manifest.get("kind")
    if got is not None and got != kind:
        raise ObjectError(f"expected kind {kind}, got {quote(got)}", "kind")


def _name(metadata: Mapping[str, Any]) -> str:
    name = expect_str(metadata.get("name"), "metadata.name")
    if not name:
        raise ObjectError("required field is missing", "metadata.name")
    return name


class _Object:
    """What Pod and Node share: the manifest and its metadata."""

    _kind = ""

    def __init__(self, manifest: Mapping[str, Any]) -> None:
        _check_manifest(manifest, self._kind)
        self.manifest: Mapping[str, Any] = manifest

    @cached_property
    def metadata(self) -> Mapping[str, Any]:
        with _fields():
            return expect_mapping(self.manifest.get("metadata"), "metadata")

    @cached_property
    def spec(self) -> Mapping[str, Any]:
        """The raw spec mapping (empty when absent)."""
        with _fields():
            return expect_mapping(self.manifest.get("spec"), "spec")

    @cached_property
    def status(self) -> Mapping[str, Any]:
        """The raw status mapping (empty when absent)."""
        with _fields():
            return expect_mapping(self.manifest.get("status"), "status")

    @cached_property
    def name(self) -> str:
        with _fields():
            return _name(self.metadata)

    @cached_property
    def labels(self) -> dict[str, str]:
        with _fields():
            return expect_str_map(self.metadata.get("labels"), "metadata.labels")

    @cached_property
    def annotations(self) -> dict[str, str]:
        with _fields():
            return expect_str_map(self.metadata.get("annotations"), "metadata.annotations")

    @cached_property
    def creation_timestamp(self) -> str | None:
        with _fields():
            return expect_timestamp(
                self.metadata.get("creationTimestamp"), "metadata.creationTimestamp"
            )

    @cached_property
    def deletion_timestamp(self) -> str | None:
        with _fields():
            return expect_timestamp(
                self.metadata.get("deletionTimestamp"), "metadata.deletionTimestamp"
            )

    @cached_property
    def owner_references(self) -> tuple[Mapping[str, Any], ...]:
        with _fields():
            refs = expect_list(self.metadata.get("ownerReferences"), "metadata.ownerReferences")
            return tuple(
                expect_mapping(r, f"metadata.ownerReferences[{i}]") for i, r in enumerate(refs)
            )

    def _derive(self, manifest: Mapping[str, Any], stale: frozenset[str]) -> Any:
        """A new object of the same class on ``manifest``, keeping parsed values not in ``stale``."""
        new = type(self)(manifest)
        carried = {k: v for k, v in self.__dict__.items() if k not in stale and k != "manifest"}
        new.__dict__.update(carried)
        return new

    def _validate(self, names: tuple[str, ...]) -> None:
        for n in names:
            getattr(self, n)


_POD_PROPERTIES = (
    "metadata",
    "spec",
    "status",
    "name",
    "namespace",
    "uid",
    "key",
    "labels",
    "annotations",
    "creation_timestamp",
    "deletion_timestamp",
    "owner_references",
    "node_name",
    "scheduler_name",
    "priority",
    "priority_class_name",
    "nominated_node_name",
    "phase",
    "is_terminal",
    "requests",
    "non_zero_requests",
    "tolerations",
    "node_selector",
    "required_node_affinity",
    "preferred_node_affinity",
    "scheduling_gates",
    "host_ports",
    "container_host_ports",
    "images",
    "resource_claims",
    "resource_claim_statuses",
)
_STALE_ON_BIND = frozenset({"spec", "node_name"})
_STALE_ON_STATUS = frozenset(
    {"status", "nominated_node_name", "phase", "is_terminal", "resource_claim_statuses"}
)
_STALE_ON_UPDATE = _STALE_ON_BIND | _STALE_ON_STATUS | {"metadata"}
_META_BOOKKEEPING = frozenset({"resourceVersion", "managedFields"})
_SPEC_BINDING = frozenset({"nodeName"})


def _same_except(old: Any, new: Mapping[str, Any], ignored: frozenset[str]) -> bool:
    """``old`` is a mapping with the same entries as ``new`` but for the ``ignored`` keys."""
    if not isinstance(old, Mapping):
        return False
    for key, value in new.items():
        if key not in ignored and (key not in old or old[key] != value):
            return False
    return all(key in new or key in ignored for key in old)


class Pod(_Object):
    """A Pod manifest with its scheduling-relevant fields parsed on demand."""

    _kind = "Pod"

    def __repr__(self) -> str:
        meta = self.manifest.get("metadata")
        if isinstance(meta, Mapping):
            return f"Pod({meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name')})"
        return "Pod(?)"

    def validate(self) -> None:
        """Parse every field now; raises ObjectError for the first bad one."""
        self._validate(_POD_PROPERTIES)

    @cached_property
    def namespace(self) -> str:
        with _fields():
            return expect_str(self.metadata.get("namespace"), "metadata.namespace") or (
                DEFAULT_NAMESPACE
            )

    @cached_property
    def uid(self) -> str:
        """metadata.uid, or a uuid5 of namespace/name when the manifest has none."""
        with _fields():
            uid = expect_str(self.metadata.get("uid"), "metadata.uid")
        return uid or str(uuid.uuid5(_UID_NAMESPACE, f"pod/{self.namespace}/{self.name}"))

    @cached_property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @cached_property
    def node_name(self) -> str:
        with _fields():
            return expect_str(self.spec.get("nodeName"), "spec.nodeName")

    @cached_property
    def scheduler_name(self) -> str:
        with _fields():
            return (
                expect_str(self.spec.get("schedulerName"), "spec.schedulerName")
                or DEFAULT_SCHEDULER_NAME
            )

    @cached_property
    def priority(self) -> int:
        with _fields():
            return expect_int(self.spec.get("priority"), "spec.priority") or 0

    @cached_property
    def priority_class_name(self) -> str:
        with _fields():
            return expect_str(self.spec.get("priorityClassName"), "spec.priorityClassName")

    @cached_property
    def nominated_node_name(self) -> str:
        with _fields():
            return expect_str(self.status.get("nominatedNodeName"), "status.nominatedNodeName")

    @cached_property
    def phase(self) -> str:
        with _fields():
            return expect_str(self.status.get("phase"), "status.phase")

    @cached_property
    def is_terminal(self) -> bool:
        """Whether the pod has finished (phase Succeeded or Failed)."""
        return self.phase in ("Succeeded", "Failed")

    @cached_property
    def requests(self) -> Resource:
        """The pod's requests as the scheduler counts them (PodRequests). Do not mutate."""
        with _fields("spec"):
            return pod_requests(self.spec, limits_as_default=True)

    @cached_property
    def non_zero_requests(self) -> tuple[int, int]:
        """(milli-CPU, memory) with the scheduler's non-zero defaults, for scoring."""
        with _fields("spec"):
            return pod_non_zero_requests(self.spec, limits_as_default=True)

    # With the PodLevelResources gate the pod-level requests (spec.resources.requests)
    # count; a pod without them has the same amounts either way.

    @cached_property
    def has_pod_level_requests(self) -> bool:
        """Whether spec.resources.requests sets cpu, memory or hugepages
        (component-helpers/resource: IsPodLevelRequestsSet)."""
        with _fields("spec"):
            return bool(pod_level_requests(self.spec))

    @cached_property
    def pod_level_requests(self) -> Resource:
        """``requests`` with the pod-level requests counted (PodRequests,
        SkipPodLevelResources false). Do not mutate."""
        if not self.has_pod_level_requests:
            return self.requests
        with _fields("spec"):
            return pod_requests(self.spec, limits_as_default=True, pod_level=True)

    @cached_property
    def pod_level_non_zero_requests(self) -> tuple[int, int]:
        """``non_zero_requests`` with the pod-level requests counted, as scoring computes
        the incoming pod's (noderesources/resource_allocation.go: calculatePodResourceRequest)."""
        if not self.has_pod_level_requests:
            return self.non_zero_requests
        with _fields("spec"):
            return pod_non_zero_requests(self.spec, limits_as_default=True, pod_level=True)

    @cached_property
    def pod_level_node_non_zero_requests(self) -> tuple[int, int]:
        """``non_zero_requests`` with the pod-level requests counted, as NodeInfo sums a
        placed pod's (framework/types.go: PodInfo.CalculateResource): defaults only for a
        resource neither the containers nor the pod level request."""
        if not self.has_pod_level_requests:
            return self.non_zero_requests
        with _fields("spec"):
            return pod_non_zero_requests(
                self.spec, limits_as_default=True, pod_level=True, missing_only=True
            )

    @cached_property
    def tolerations(self) -> tuple[Toleration, ...]:
        with _fields():
            return tolerations_from_list(self.spec.get("tolerations"), "spec.tolerations")

    @cached_property
    def required_node_affinity(self) -> RequiredNodeAffinity:
        """spec.nodeSelector AND required node affinity."""
        with _fields("spec"):
            return RequiredNodeAffinity.from_pod_spec(self.spec)

    @cached_property
    def node_selector(self) -> dict[str, str]:
        """spec.nodeSelector (empty when absent)."""
        return self.required_node_affinity.node_selector or {}

    @cached_property
    def preferred_node_affinity(self) -> PreferredSchedulingTerms:
        with _fields("spec"):
            return PreferredSchedulingTerms.from_pod_spec(self.spec)

    @cached_property
    def scheduling_gates(self) -> tuple[str, ...]:
        with _fields():
            gates = expect_list(self.spec.get("schedulingGates"), "spec.schedulingGates")
            out = []
            for i, g in enumerate(gates):
                path = f"spec.schedulingGates[{i}]"
                out.append(expect_str(expect_mapping(g, path).get("name"), f"{path}.name"))
            return tuple(out)

    def _containers(self, field: str) -> list[tuple[str, Mapping[str, Any]]]:
        path = f"spec.{field}"
        items = expect_list(self.spec.get(field), path)
        return [(f"{path}[{i}]", expect_mapping(c, f"{path}[{i}]")) for i, c in enumerate(items)]

    @cached_property
    def host_ports(self) -> tuple[tuple[str, str, int], ...]:
        """(hostIP, protocol, hostPort) of every port with a host port, as v1.34+
        util.GetHostPorts counts them.

        Restartable init containers (sidecars) come first, then containers; hostIP defaults
        to 0.0.0.0 and protocol to TCP. A hostNetwork pod's ports default hostPort to
        containerPort, as the API server does.
        """
        with _fields():
            sidecars = [
                (p, c)
                for p, c in self._containers("initContainers")
                if expect_str(c.get("restartPolicy"), f"{p}.restartPolicy") == "Always"
            ]
            return self._host_ports(sidecars) + self.container_host_ports

    @cached_property
    def container_host_ports(self) -> tuple[tuple[str, str, int], ...]:
        """``host_ports`` of spec.containers alone, as v1.33 counts them (nodeports:
        getContainerPorts, NodeInfo.updateUsedPorts)."""
        with _fields():
            return self._host_ports(self._containers("containers"))

    def _host_ports(
        self, containers: list[tuple[str, Mapping[str, Any]]]
    ) -> tuple[tuple[str, str, int], ...]:
        host_network = expect_bool(self.spec.get("hostNetwork"), "spec.hostNetwork")
        out: list[tuple[str, str, int]] = []
        for cpath, c in containers:
            ports = expect_list(c.get("ports"), f"{cpath}.ports")
            for j, raw in enumerate(ports):
                ppath = f"{cpath}.ports[{j}]"
                port = expect_mapping(raw, ppath)
                host_port = expect_int(port.get("hostPort"), f"{ppath}.hostPort") or 0
                if host_network and host_port == 0:
                    host_port = expect_int(port.get("containerPort"), f"{ppath}.containerPort") or 0
                if host_port <= 0:
                    continue
                host_ip = expect_str(port.get("hostIP"), f"{ppath}.hostIP") or "0.0.0.0"
                protocol = expect_str(port.get("protocol"), f"{ppath}.protocol") or "TCP"
                out.append((host_ip, protocol, host_port))
        return tuple(out)

    @cached_property
    def host_network(self) -> bool:
        """spec.hostNetwork."""
        with _fields():
            return expect_bool(self.spec.get("hostNetwork"), "spec.hostNetwork")

    @cached_property
    def host_users(self) -> bool | None:
        """spec.hostUsers; None when unset (the pod then uses the host's user namespace)."""
        raw = self.spec.get("hostUsers")
        if raw is None:
            return None
        with _fields():
            return expect_bool(raw, "spec.hostUsers")

    @cached_property
    def restart_rule_actions(self) -> frozenset[str]:
        """The actions of the containers' and init containers' restartPolicyRules (v1.34+,
        ContainerRestartRules)."""
        with _fields():
            actions: set[str] = set()
            for field in ("containers", "initContainers"):
                for cpath, c in self._containers(field):
                    rules = expect_list(c.get("restartPolicyRules"), f"{cpath}.restartPolicyRules")
                    for j, rule in enumerate(rules):
                        rpath = f"{cpath}.restartPolicyRules[{j}]"
                        action = expect_mapping(rule, rpath).get("action")
                        actions.add(expect_str(action, f"{rpath}.action"))
            return frozenset(actions)

    @cached_property
    def uses_bind_mount_options(self) -> bool:
        """Whether a volume mount of a container, init container or ephemeral container sets
        bindMountOptions (v1.37, VolumeBindMountOptions)."""
        with _fields():
            for field in ("containers", "initContainers", "ephemeralContainers"):
                for cpath, c in self._containers(field):
                    mounts = expect_list(c.get("volumeMounts"), f"{cpath}.volumeMounts")
                    for j, mount in enumerate(mounts):
                        mpath = f"{cpath}.volumeMounts[{j}]"
                        options = expect_mapping(mount, mpath).get("bindMountOptions")
                        if expect_list(options, f"{mpath}.bindMountOptions"):
                            return True
            return False

    @cached_property
    def images(self) -> tuple[str, ...]:
        """Image names of the containers, then of the init containers (empty ones skipped)."""
        with _fields():
            out = []
            for field in ("containers", "initContainers"):
                for cpath, c in self._containers(field):
                    image = expect_str(c.get("image"), f"{cpath}.image")
                    if image:
                        out.append(image)
            return tuple(out)

    @cached_property
    def resource_claims(self) -> tuple[PodResourceClaim, ...]:
        """spec.resourceClaims: the DRA claims the pod references (empty when none)."""
        with _fields():
            items = expect_list(self.spec.get("resourceClaims"), "spec.resourceClaims")
            out = []
            for i, raw in enumerate(items):
                path = f"spec.resourceClaims[{i}]"
                entry = expect_mapping(raw, path)
                claim = entry.get("resourceClaimName")
                template = entry.get("resourceClaimTemplateName")
                out.append(
                    PodResourceClaim(
                        expect_str(entry.get("name"), f"{path}.name"),
                        None if claim is None else expect_str(claim, f"{path}.resourceClaimName"),
                        None
                        if template is None
                        else expect_str(template, f"{path}.resourceClaimTemplateName"),
                    )
                )
            return tuple(out)

    @cached_property
    def resource_claim_statuses(self) -> dict[str, str | None]:
        """status.resourceClaimStatuses: pod claim name -> the name of the ResourceClaim the
        resourceclaim controller made from its template (None: none is needed)."""
        with _fields():
            items = expect_list(
                self.status.get("resourceClaimStatuses"), "status.resourceClaimStatuses"
            )
            out: dict[str, str | None] = {}
            for i, raw in enumerate(items):
                path = f"status.resourceClaimStatuses[{i}]"
                entry = expect_mapping(raw, path)
                claim = entry.get("resourceClaimName")
                out[expect_str(entry.get("name"), f"{path}.name")] = (
                    None if claim is None else expect_str(claim, f"{path}.resourceClaimName")
                )
            return out

    def with_resource_claim_statuses(self, statuses: Mapping[str, str | None]) -> Pod:
        """A copy of this pod with status.resourceClaimStatuses set to ``statuses`` (pod
        claim name -> claim name), as the resourceclaim controller writes it."""
        manifest = dict(self.manifest)
        st = dict(self.status)
        st["resourceClaimStatuses"] = [
            {"name": name} if claim is None else {"name": name, "resourceClaimName": claim}
            for name, claim in statuses.items()
        ]
        manifest["status"] = st
        new: Pod = self._derive(manifest, _STALE_ON_STATUS)
        return new

    def updated(self, manifest: Mapping[str, Any]) -> Pod:
        """The pod as ``manifest``, a newer version of it, shows it: keeping what this one
        parsed when only its binding (spec.nodeName), its status and its resourceVersion
        and managedFields differ, as in an informer's update after a binding or a status
        patch; parsed anew otherwise."""
        new_meta, new_spec = manifest.get("metadata"), manifest.get("spec")
        if (
            isinstance(new_meta, Mapping)
            and isinstance(new_spec, Mapping)
            and _same_except(self.manifest.get("metadata"), new_meta, _META_BOOKKEEPING)
            and _same_except(self.manifest.get("spec"), new_spec, _SPEC_BINDING)
        ):
            new: Pod = self._derive(manifest, _STALE_ON_UPDATE)
            return new
        return Pod(manifest)

    def with_node_name(self, node: str) -> Pod:
        """A copy of this pod bound to ``node`` (spec.nodeName set)."""
        manifest = dict(self.manifest)
        spec = dict(self.spec)
        spec["nodeName"] = node
        manifest["spec"] = spec
        new: Pod = self._derive(manifest, _STALE_ON_BIND)
        return new

    def with_nominated_node_name(self, node: str) -> Pod:
        """A copy of this pod with status.nominatedNodeName set ("" clears it)."""
        manifest = dict(self.manifest)
        status = dict(self.status)
        if node:
            status["nominatedNodeName"] = node
        else:
            status.pop("nominatedNodeName", None)
        manifest["status"] = status
        new: Pod = self._derive(manifest, _STALE_ON_STATUS)
        return new

    def with_status_condition(
        self, type: str, status: str, reason: str = "", message: str = ""
    ) -> Pod:
        """A copy of this pod with the status condition ``type`` set (replaced or appended)."""
        manifest = dict(self.manifest)
        st = dict(self.status)
        cond: dict[str, Any] = {"type": type, "status": status}
        if reason:
            cond["reason"] = reason
        if message:
            cond["message"] = message
        conditions = [
            c
            for c in (st.get("conditions") or [])
            if not (isinstance(c, Mapping) and c.get("type") == type)
        ]
        conditions.append(cond)
        st["conditions"] = conditions
        manifest["status"] = st
        new: Pod = self._derive(manifest, _STALE_ON_STATUS)
        return new

    def with_phase(self, phase: str) -> Pod:
        """A copy of this pod with status.phase set."""
        manifest = dict(self.manifest)
        st = dict(self.status)
        st["phase"] = phase
        manifest["status"] = st
        new: Pod = self._derive(manifest, _STALE_ON_STATUS)
        return new


_NODE_PROPERTIES = (
    "metadata",
    "spec",
    "status",
    "name",
    "uid",
    "labels",
    "annotations",
    "creation_timestamp",
    "deletion_timestamp",
    "owner_references",
    "unschedulable",
    "declared_features",
    "taints",
    "allocatable",
    "images",
    "conditions",
)


class Node(_Object):
    """A Node manifest with its scheduling-relevant fields parsed on demand."""

    _kind = "Node"

    def __repr__(self) -> str:
        meta = self.manifest.get("metadata")
        return f"Node({meta.get('name') if isinstance(meta, Mapping) else '?'})"

    def validate(self) -> None:
        """Parse every field now; raises ObjectError for the first bad one."""
        self._validate(_NODE_PROPERTIES)

    @cached_property
    def uid(self) -> str:
        """metadata.uid, or a uuid5 of the name when the manifest has none."""
        with _fields():
            uid = expect_str(self.metadata.get("uid"), "metadata.uid")
        return uid or str(uuid.uuid5(_UID_NAMESPACE, f"node/{self.name}"))

    @cached_property
    def unschedulable(self) -> bool:
        with _fields():
            return expect_bool(self.spec.get("unschedulable"), "spec.unschedulable")

    @cached_property
    def declared_features(self) -> tuple[str, ...]:
        """status.declaredFeatures (v1.35+): the features the node's kubelet declares, in
        the listed order (the API server requires it sorted)."""
        with _fields():
            features = expect_list(self.status.get("declaredFeatures"), "status.declaredFeatures")
            return tuple(
                expect_str(f, f"status.declaredFeatures[{i}]") for i, f in enumerate(features)
            )

    @cached_property
    def taints(self) -> tuple[Taint, ...]:
        with _fields():
            return taints_from_list(self.spec.get("taints"), "spec.taints")

    @cached_property
    def allocatable(self) -> Resource:
        """status.allocatable (capacity when absent), pods included. Do not mutate."""
        with _fields("status"):
            return node_allocatable(self.status)

    @cached_property
    def images(self) -> tuple[tuple[tuple[str, ...], int], ...]:
        """status.images as (names, sizeBytes) pairs."""
        with _fields():
            items = expect_list(self.status.get("images"), "status.images")
            out = []
            for i, raw in enumerate(items):
                path = f"status.images[{i}]"
                img = expect_mapping(raw, path)
                names = expect_list(img.get("names"), f"{path}.names")
                out.append(
                    (
                        tuple(expect_str(n, f"{path}.names[{j}]") for j, n in enumerate(names)),
                        expect_int(img.get("sizeBytes"), f"{path}.sizeBytes") or 0,
                    )
                )
            return tuple(out)

    @cached_property
    def conditions(self) -> tuple[Mapping[str, Any], ...]:
        with _fields():
            items = expect_list(self.status.get("conditions"), "status.conditions")
            return tuple(expect_mapping(c, f"status.conditions[{i}]") for i, c in enumerate(items))

    def condition_status(self, type: str) -> str | None:
        """The status ("True", "False", "Unknown") of condition ``type``, or None."""
        for c in self.conditions:
            if c.get("type") == type:
                status = c.get("status")
                return status if isinstance(status, str) else None
        return None
