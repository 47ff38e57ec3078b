"""The parts of a pod's spec that the scheduler parses, each parsed once per distinct content.

The pods of one Deployment, Job or DaemonSet carry equal containers and mostly equal
affinity, so their requests, host ports and required node affinity are equal values.
kube-scheduler decodes each pod in its informer, before it is queued; here a pod's fields
are parsed on first read, and a part of the spec (its containers, its node affinity) is
parsed once for every pod whose part has the same content, the parsed values shared
(api/objects.py: ``Pod`` reads them). Parsed values are immutable, so sharing them is safe.

The content key is ``marshal.dumps(part, 0)`` (api/cached.py: ``content_key``): marshal
writes only the exact built-in types (a subclass or another Mapping is refused, and such a
part is parsed for its pod alone), and version 0 writes neither references nor interning,
so two parts have the same key exactly when they are equal values of the same types. A part parses only a copy of
itself (``spec``), so what it computes cannot depend on anything outside the key. Errors
are those of the pod alone: nothing is kept for a part whose parse raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from wasmsched.api.cached import cached_property, content_key, kept_by_content
from wasmsched.api.quantity import expect_bool, expect_int, expect_list, expect_mapping, expect_str
from wasmsched.api.resources import (
    Resource,
    pod_level_requests,
    pod_non_zero_requests,
    pod_requests,
)
from wasmsched.api.selectors import PreferredSchedulingTerms, RequiredNodeAffinity
from wasmsched.api.taints import Toleration, tolerations_from_list

__all__ = ["PodContainers", "PodNodeAffinity", "PodTolerations", "SpecPart"]

# Distinct parts kept per kind; past it the table starts over (a cluster has few templates).
MAX_SHARED_PARTS = 4096

HostPorts = tuple[tuple[str, str, int], ...]


class SpecPart:
    """Some fields of a pod spec (``FIELDS``), parsed on first read (``cached_property``)
    and shared by the pods whose fields are equal (``of``)."""

    FIELDS: ClassVar[tuple[str, ...]] = ()
    _shared: ClassVar[dict[bytes, Any]]

    def __init_subclass__(cls) -> None:
        cls._shared = {}

    def __init__(self, fields: Mapping[str, Any]) -> None:
        # What the part parses: its own fields of a spec (``own_fields``), nothing else.
        self.spec: Mapping[str, Any] = fields

    @classmethod
    def own_fields(cls, spec: Mapping[str, Any]) -> dict[str, Any]:
        """The part's fields of ``spec`` (an absent field and a null one read alike)."""
        return {name: value for name in cls.FIELDS if (value := spec.get(name)) is not None}

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> Self:
        """The part of ``spec``: the one already parsed for equal content, or a new one."""
        fields = cls.own_fields(spec)
        key = content_key(tuple(map(fields.get, cls.FIELDS)))
        part: Self = kept_by_content(cls._shared, key, cls, fields, MAX_SHARED_PARTS)
        return part

    @classmethod
    def forget_all(cls) -> None:
        """Drops the shared parts (tests)."""
        cls._shared.clear()


# What PodContainers reads of a container (resources.py: pod_requests, and the properties
# below); anything else is not part of its copy. A field read null and one absent read alike.
_CONTAINER_FIELDS = ("image", "ports", "resources", "restartPolicy", "restartPolicyRules")
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _read_fields(container: Any) -> Any:
    """The fields of ``container`` that PodContainers reads; of its volumeMounts, only
    bindMountOptions (at the same indexes). A value of the wrong type is kept as it is, for
    the parse to report it."""
    if type(container) is not dict:
        return container
    out = {name: value for name in _CONTAINER_FIELDS if (value := container.get(name)) is not None}
    mounts = container.get("volumeMounts")
    if type(mounts) is list:
        out["volumeMounts"] = [
            {k: v for k, v in mount.items() if k == "bindMountOptions"}
            if type(mount) is dict
            else mount
            for mount in mounts
        ]
    elif mounts is not None:
        out["volumeMounts"] = mounts
    return out


class PodContainers(SpecPart):
    """What the containers make of a pod: requests, host ports, images, the features
    inferred from them. Paths in errors are relative to the pod (``spec.containers[0]``),
    those of the requests relative to the spec, as ``Pod`` reports them."""

    FIELDS = (
        "containers",
        "initContainers",
        "ephemeralContainers",
        "overhead",
        "resources",
        "hostNetwork",
        "hostUsers",
    )

    @classmethod
    def own_fields(cls, spec: Mapping[str, Any]) -> dict[str, Any]:
        """The part's fields, its containers cut to the fields the part reads: the pods of
        a template then share one part although admission mounts each pod's own
        service-account token volume (``kube-api-access-<random>``) in every container."""
        fields = super().own_fields(spec)
        for name in _CONTAINER_LISTS:
            containers = fields.get(name)
            if type(containers) is list:
                fields[name] = [_read_fields(c) for c in containers]
        return fields

    @cached_property
    def requests(self) -> Resource:
        """Pod.requests."""
        return pod_requests(self.spec, limits_as_default=True)

    @cached_property
    def non_zero_requests(self) -> tuple[int, int]:
        """Pod.non_zero_requests."""
        return pod_non_zero_requests(self.spec, limits_as_default=True)

    @cached_property
    def has_pod_level_requests(self) -> bool:
        """Pod.has_pod_level_requests."""
        return bool(pod_level_requests(self.spec))

    @cached_property
    def pod_level_requests(self) -> Resource:
        """Pod.pod_level_requests."""
        if not self.has_pod_level_requests:
            return self.requests
        return pod_requests(self.spec, limits_as_default=True, pod_level=True)

    @cached_property
    def pod_level_non_zero_requests(self) -> tuple[int, int]:
        """Pod.pod_level_non_zero_requests."""
        if not self.has_pod_level_requests:
            return self.non_zero_requests
        return pod_non_zero_requests(self.spec, limits_as_default=True, pod_level=True)

    @cached_property
    def pod_level_node_non_zero_requests(self) -> tuple[int, int]:
        """Pod.pod_level_node_non_zero_requests."""
        if not self.has_pod_level_requests:
            return self.non_zero_requests
        return pod_non_zero_requests(
            self.spec, limits_as_default=True, pod_level=True, missing_only=True
        )

    def containers(self, field: str) -> list[tuple[str, Mapping[str, Any]]]:
        """(path, container) of ``spec.<field>``."""
        path = f"spec.{field}"
        items = expect_list(self.spec.get(field), path)
        return [(f"{path}[{i}]", expect_mapping(c, f"{path}[{i}]")) for i, c in enumerate(items)]

    @cached_property
    def host_ports(self) -> HostPorts:
        """Pod.host_ports."""
        sidecars = [
            (p, c)
            for p, c in self.containers("initContainers")
            if expect_str(c.get("restartPolicy"), f"{p}.restartPolicy") == "Always"
        ]
        return self._host_ports(sidecars) + self.container_host_ports

    @cached_property
    def container_host_ports(self) -> HostPorts:
        """Pod.container_host_ports."""
        return self._host_ports(self.containers("containers"))

    def _host_ports(self, containers: list[tuple[str, Mapping[str, Any]]]) -> HostPorts:
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
        """Pod.host_network."""
        return expect_bool(self.spec.get("hostNetwork"), "spec.hostNetwork")

    @cached_property
    def host_users(self) -> bool | None:
        """Pod.host_users."""
        raw = self.spec.get("hostUsers")
        if raw is None:
            return None
        return expect_bool(raw, "spec.hostUsers")

    @cached_property
    def restart_rule_actions(self) -> frozenset[str]:
        """Pod.restart_rule_actions."""
        actions: set[str] = set()
        for field in ("containers", "initContainers"):
            for cpath, c in self.containers(field):
                rules = expect_list(c.get("restartPolicyRules"), f"{cpath}.restartPolicyRules")
                for j, rule in enumerate(rules):
                    rpath = f"{cpath}.restartPolicyRules[{j}]"
                    action = expect_mapping(rule, rpath).get("action")
                    actions.add(expect_str(action, f"{rpath}.action"))
        return frozenset(actions)

    @cached_property
    def uses_bind_mount_options(self) -> bool:
        """Pod.uses_bind_mount_options."""
        for field in ("containers", "initContainers", "ephemeralContainers"):
            for cpath, c in self.containers(field):
                mounts = expect_list(c.get("volumeMounts"), f"{cpath}.volumeMounts")
                for j, mount in enumerate(mounts):
                    mpath = f"{cpath}.volumeMounts[{j}]"
                    options = expect_mapping(mount, mpath).get("bindMountOptions")
                    if expect_list(options, f"{mpath}.bindMountOptions"):
                        return True
        return False

    @cached_property
    def images(self) -> tuple[str, ...]:
        """Pod.images."""
        out = []
        for field in ("containers", "initContainers"):
            for cpath, c in self.containers(field):
                image = expect_str(c.get("image"), f"{cpath}.image")
                if image:
                    out.append(image)
        return tuple(out)


class PodNodeAffinity(SpecPart):
    """spec.nodeSelector and spec.affinity's node affinity, parsed (paths relative to the
    spec, as ``Pod`` reports them)."""

    FIELDS = ("nodeSelector", "affinity")

    @cached_property
    def required(self) -> RequiredNodeAffinity:
        """Pod.required_node_affinity."""
        return RequiredNodeAffinity.from_pod_spec(self.spec)

    @cached_property
    def preferred(self) -> PreferredSchedulingTerms:
        """Pod.preferred_node_affinity."""
        return PreferredSchedulingTerms.from_pod_spec(self.spec)


class PodTolerations(SpecPart):
    """spec.tolerations, parsed (paths relative to the pod)."""

    FIELDS = ("tolerations",)

    @cached_property
    def tolerations(self) -> tuple[Toleration, ...]:
        """Pod.tolerations."""
        return tolerations_from_list(self.spec.get("tolerations"), "spec.tolerations")
