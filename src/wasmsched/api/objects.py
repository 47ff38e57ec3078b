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
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from wasmsched.api.cached import cached_property
from wasmsched.api.dra import PodResourceClaim
from wasmsched.api.pod_spec import PodContainers, PodNodeAffinity, PodTolerations
from wasmsched.api.pod_versions import only_bound_or_status
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
from wasmsched.api.resources import Resource, node_allocatable
from wasmsched.api.selectors import PreferredSchedulingTerms, RequiredNodeAffinity
from wasmsched.api.taints import Taint, Toleration, taints_from_list

_T = TypeVar("_T")

__all__ = ["DEFAULT_SCHEDULER_NAME", "Node", "ObjectError", "Pod", "PodResourceClaim"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_NAMESPACE = "default"

# Objects without a uid get one derived from their name, so runs are reproducible.
_UID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://wasmsched.invalid/objects")


class ObjectError(FieldError):
    """A bad field in a Pod or Node: ``"<field path>: <problem>"``."""


class _ParsedProperty(cached_property[_T]):
    """A ``cached_property`` whose FieldError is reported as an ObjectError under
    ``prefix``: every parsed property has one, so the conversion is in the descriptor (a
    with block in each property cost two calls at every first read)."""

    catch = (FieldError,)

    def __init__(self, func: Callable[[Any], _T], prefix: str) -> None:
        super().__init__(func)
        self.prefix = prefix

    def convert(self, err: Exception) -> Exception | None:
        if not isinstance(err, FieldError) or isinstance(err, ObjectError):
            return None
        return ObjectError(err.problem, join_path(self.prefix, err.path))


def _parsed(prefix: str = "") -> Callable[[Callable[[Any], _T]], _ParsedProperty[_T]]:
    """A parsed property: its field errors are ObjectErrors under ``prefix``."""

    def wrap(func: Callable[[Any], _T]) -> _ParsedProperty[_T]:
        return _ParsedProperty(func, prefix)

    return wrap


def _check_manifest(manifest: Any, kind: str) -> None:
    if type(manifest) is not dict and not isinstance(manifest, Mapping):
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

    @_parsed()
    def metadata(self) -> Mapping[str, Any]:
        return expect_mapping(self.manifest.get("metadata"), "metadata")

    @_parsed()
    def spec(self) -> Mapping[str, Any]:
        """The raw spec mapping (empty when absent)."""
        return expect_mapping(self.manifest.get("spec"), "spec")

    @_parsed()
    def status(self) -> Mapping[str, Any]:
        """The raw status mapping (empty when absent)."""
        return expect_mapping(self.manifest.get("status"), "status")

    @_parsed()
    def name(self) -> str:
        return _name(self.metadata)

    @_parsed()
    def labels(self) -> dict[str, str]:
        return expect_str_map(self.metadata.get("labels"), "metadata.labels")

    @_parsed()
    def annotations(self) -> dict[str, str]:
        return expect_str_map(self.metadata.get("annotations"), "metadata.annotations")

    @_parsed()
    def creation_timestamp(self) -> str | None:
        return expect_timestamp(
            self.metadata.get("creationTimestamp"), "metadata.creationTimestamp"
        )

    @_parsed()
    def deletion_timestamp(self) -> str | None:
        return expect_timestamp(
            self.metadata.get("deletionTimestamp"), "metadata.deletionTimestamp"
        )

    @_parsed()
    def owner_references(self) -> tuple[Mapping[str, Any], ...]:
        refs = expect_list(self.metadata.get("ownerReferences"), "metadata.ownerReferences")
        return tuple(
            expect_mapping(r, f"metadata.ownerReferences[{i}]") for i, r in enumerate(refs)
        )

    def _derive(self, manifest: Mapping[str, Any], stale: frozenset[str]) -> Any:
        """A new object of the same class on ``manifest``, keeping parsed values not in
        ``stale``. ``manifest`` is checked by the caller: a copy of this one's (a dict of
        the same kind) needs no check."""
        new = object.__new__(type(self))
        carried = self.__dict__.copy()  # the parsed values, then the stale ones dropped
        for k in stale:
            carried.pop(k, None)
        carried["manifest"] = manifest
        new.__dict__ = carried
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
_STALE_ON_UPDATE = _STALE_ON_BIND | _STALE_ON_STATUS | {"metadata", "labels"}


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

    @_parsed()
    def namespace(self) -> str:
        return expect_str(self.metadata.get("namespace"), "metadata.namespace") or (
            DEFAULT_NAMESPACE
        )

    @_parsed()
    def uid(self) -> str:
        """metadata.uid, or a uuid5 of namespace/name when the manifest has none."""
        uid = expect_str(self.metadata.get("uid"), "metadata.uid")
        return uid or str(uuid.uuid5(_UID_NAMESPACE, f"pod/{self.namespace}/{self.name}"))

    @cached_property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @_parsed()
    def node_name(self) -> str:
        return expect_str(self.spec.get("nodeName"), "spec.nodeName")

    @_parsed()
    def scheduler_name(self) -> str:
        return (
            expect_str(self.spec.get("schedulerName"), "spec.schedulerName")
            or DEFAULT_SCHEDULER_NAME
        )

    @_parsed()
    def priority(self) -> int:
        return expect_int(self.spec.get("priority"), "spec.priority") or 0

    @_parsed()
    def priority_class_name(self) -> str:
        return expect_str(self.spec.get("priorityClassName"), "spec.priorityClassName")

    @_parsed()
    def nominated_node_name(self) -> str:
        return expect_str(self.status.get("nominatedNodeName"), "status.nominatedNodeName")

    @_parsed()
    def phase(self) -> str:
        return expect_str(self.status.get("phase"), "status.phase")

    @cached_property
    def is_terminal(self) -> bool:
        """Whether the pod has finished (phase Succeeded or Failed)."""
        return self.phase in ("Succeeded", "Failed")

    @cached_property
    def containers_part(self) -> PodContainers:
        """The containers' part of the spec, parsed once per distinct content (api/pod_spec):
        one object for the pods whose containers are equal, on which a plugin may keep what
        it computes from them alone (api/cached.py: ``derived``)."""
        return PodContainers.of(self.spec)

    @cached_property
    def _node_affinity(self) -> PodNodeAffinity:
        """nodeSelector and affinity, parsed once per distinct content (api/pod_spec)."""
        return PodNodeAffinity.of(self.spec)

    @_parsed("spec")
    def requests(self) -> Resource:
        """The pod's requests as the scheduler counts them (PodRequests). Do not mutate."""
        return self.containers_part.requests

    @_parsed("spec")
    def non_zero_requests(self) -> tuple[int, int]:
        """(milli-CPU, memory) with the scheduler's non-zero defaults, for scoring."""
        return self.containers_part.non_zero_requests

    # With the PodLevelResources gate the pod-level requests (spec.resources.requests)
    # count; a pod without them has the same amounts either way.

    @_parsed("spec")
    def has_pod_level_requests(self) -> bool:
        """Whether spec.resources.requests sets cpu, memory or hugepages
        (component-helpers/resource: IsPodLevelRequestsSet)."""
        return self.containers_part.has_pod_level_requests

    @_parsed("spec")
    def pod_level_requests(self) -> Resource:
        """``requests`` with the pod-level requests counted (PodRequests,
        SkipPodLevelResources false). Do not mutate."""
        return self.containers_part.pod_level_requests

    @_parsed("spec")
    def pod_level_non_zero_requests(self) -> tuple[int, int]:
        """``non_zero_requests`` with the pod-level requests counted, as scoring computes
        the incoming pod's (noderesources/resource_allocation.go: calculatePodResourceRequest)."""
        return self.containers_part.pod_level_non_zero_requests

    @_parsed("spec")
    def pod_level_node_non_zero_requests(self) -> tuple[int, int]:
        """``non_zero_requests`` with the pod-level requests counted, as NodeInfo sums a
        placed pod's (framework/types.go: PodInfo.CalculateResource): defaults only for a
        resource neither the containers nor the pod level request."""
        return self.containers_part.pod_level_node_non_zero_requests

    @_parsed()
    def tolerations(self) -> tuple[Toleration, ...]:
        return PodTolerations.of(self.spec).tolerations

    @_parsed("spec")
    def required_node_affinity(self) -> RequiredNodeAffinity:
        """spec.nodeSelector AND required node affinity."""
        return self._node_affinity.required

    @cached_property
    def node_selector(self) -> dict[str, str]:
        """spec.nodeSelector (empty when absent)."""
        return self.required_node_affinity.node_selector or {}

    @_parsed("spec")
    def preferred_node_affinity(self) -> PreferredSchedulingTerms:
        return self._node_affinity.preferred

    @_parsed()
    def scheduling_gates(self) -> tuple[str, ...]:
        gates = expect_list(self.spec.get("schedulingGates"), "spec.schedulingGates")
        out = []
        for i, g in enumerate(gates):
            path = f"spec.schedulingGates[{i}]"
            out.append(expect_str(expect_mapping(g, path).get("name"), f"{path}.name"))
        return tuple(out)

    @_parsed()
    def host_ports(self) -> tuple[tuple[str, str, int], ...]:
        """(hostIP, protocol, hostPort) of every port with a host port, as v1.34+
        util.GetHostPorts counts them.

        Restartable init containers (sidecars) come first, then containers; hostIP defaults
        to 0.0.0.0 and protocol to TCP. A hostNetwork pod's ports default hostPort to
        containerPort, as the API server does.
        """
        return self.containers_part.host_ports

    @_parsed()
    def container_host_ports(self) -> tuple[tuple[str, str, int], ...]:
        """``host_ports`` of spec.containers alone, as v1.33 counts them (nodeports:
        getContainerPorts, NodeInfo.updateUsedPorts)."""
        return self.containers_part.container_host_ports

    @_parsed()
    def host_network(self) -> bool:
        """spec.hostNetwork."""
        return self.containers_part.host_network

    @_parsed()
    def host_users(self) -> bool | None:
        """spec.hostUsers; None when unset (the pod then uses the host's user namespace)."""
        return self.containers_part.host_users

    @_parsed()
    def restart_rule_actions(self) -> frozenset[str]:
        """The actions of the containers' and init containers' restartPolicyRules (v1.34+,
        ContainerRestartRules)."""
        return self.containers_part.restart_rule_actions

    @_parsed()
    def uses_bind_mount_options(self) -> bool:
        """Whether a volume mount of a container, init container or ephemeral container sets
        bindMountOptions (v1.37, VolumeBindMountOptions)."""
        return self.containers_part.uses_bind_mount_options

    @_parsed()
    def images(self) -> tuple[str, ...]:
        """Image names of the containers, then of the init containers (empty ones skipped)."""
        return self.containers_part.images

    @_parsed()
    def resource_claims(self) -> tuple[PodResourceClaim, ...]:
        """spec.resourceClaims: the DRA claims the pod references (empty when none)."""
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

    @_parsed()
    def resource_claim_statuses(self) -> dict[str, str | None]:
        """status.resourceClaimStatuses: pod claim name -> the name of the ResourceClaim the
        resourceclaim controller made from its template (None: none is needed)."""
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
        parsed when only its binding (spec.nodeName and the topology labels it copies from
        the node), its status and its resourceVersion and managedFields differ, as in an
        informer's update after a binding or a status patch; parsed anew otherwise."""
        if only_bound_or_status(self.manifest, manifest):
            _check_manifest(manifest, self._kind)
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

    @_parsed()
    def uid(self) -> str:
        """metadata.uid, or a uuid5 of the name when the manifest has none."""
        uid = expect_str(self.metadata.get("uid"), "metadata.uid")
        return uid or str(uuid.uuid5(_UID_NAMESPACE, f"node/{self.name}"))

    @_parsed()
    def unschedulable(self) -> bool:
        return expect_bool(self.spec.get("unschedulable"), "spec.unschedulable")

    @_parsed()
    def declared_features(self) -> tuple[str, ...]:
        """status.declaredFeatures (v1.35+): the features the node's kubelet declares, in
        the listed order (the API server requires it sorted)."""
        features = expect_list(self.status.get("declaredFeatures"), "status.declaredFeatures")
        return tuple(expect_str(f, f"status.declaredFeatures[{i}]") for i, f in enumerate(features))

    @_parsed()
    def taints(self) -> tuple[Taint, ...]:
        return taints_from_list(self.spec.get("taints"), "spec.taints")

    @_parsed("status")
    def allocatable(self) -> Resource:
        """status.allocatable (capacity when absent), pods included. Do not mutate."""
        return node_allocatable(self.status)

    @_parsed()
    def images(self) -> tuple[tuple[tuple[str, ...], int], ...]:
        """status.images as (names, sizeBytes) pairs."""
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

    @_parsed()
    def conditions(self) -> tuple[Mapping[str, Any], ...]:
        items = expect_list(self.status.get("conditions"), "status.conditions")
        return tuple(expect_mapping(c, f"status.conditions[{i}]") for i, c in enumerate(items))

    def condition_status(self, type: str) -> str | None:
        """The status ("True", "False", "Unknown") of condition ``type``, or None."""
        for c in self.conditions:
            if c.get("type") == type:
                status = c.get("status")
                return status if isinstance(status, str) else None
        return None
