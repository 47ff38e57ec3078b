"""The workload controllers' reconcile logic, one class per kind (see the package doc)."""

from __future__ import annotations

import copy
import json
import random
import re
import uuid
from collections.abc import Mapping
from typing import Any, Protocol

from wasmsched.api.naming import random_suffix, template_hash
from wasmsched.api.objects import DEFAULT_NAMESPACE, Node, Pod
from wasmsched.api.selectors import LabelSelector
from wasmsched.api.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated_taint

__all__ = [
    "Controller",
    "DaemonSet",
    "Deployment",
    "Job",
    "Owner",
    "ReplicaSet",
    "StatefulSet",
    "active",
    "controller_ref",
]

POD_TEMPLATE_HASH = "pod-template-hash"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STS_POD_NAME = "statefulset.kubernetes.io/pod-name"
STS_POD_INDEX = "apps.kubernetes.io/pod-index"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
DS_TEMPLATE_GENERATION = "pod-template-generation"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

_UIDS = uuid.UUID("4d0a3a5e-8c44-5b7e-9d7e-0b6f4d2f9a11")

# pkg/controller/daemon/util: AddOrUpdateDaemonPodTolerations (key, effect).
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
)
_NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", NO_SCHEDULE)


class Owner(Protocol):
    """What a controller needs from the set of controllers: the nodes, unique names."""

    nodes: dict[str, Node]

    def claim_name(self, namespace: str, name: str) -> bool: ...


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any, default: int) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def controller_ref(pod: Pod) -> Mapping[str, Any] | None:
    """metav1.GetControllerOf: the owner reference with controller: true."""
    for ref in pod.owner_references:
        if ref.get("controller") is True:
            return ref
    return None


def active(pod: Pod) -> bool:
    """controller.IsPodActive: not finished and not being deleted."""
    return not pod.is_terminal and not pod.deletion_timestamp


class Controller:
    """What every workload controller shares: identity, owned pods, pod construction."""

    api_version = "apps/v1"
    adopts = True  # ClaimPods adopts orphans matching the selector

    def __init__(self, kind: str, manifest: Mapping[str, Any], owner: Owner) -> None:
        self.kind = kind
        self.manifest = manifest
        meta = _m(manifest.get("metadata"))
        self.name = str(meta.get("name") or "")
        self.namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
        self.explicit_uid = bool(meta.get("uid"))
        self.uid = str(meta.get("uid") or uuid.uuid5(_UIDS, f"{kind}/{self.namespace}/{self.name}"))
        self.spec = _m(manifest.get("spec"))
        self.template: Mapping[str, Any] = _m(self.spec.get("template"))
        self.selector = LabelSelector.from_dict(self.spec.get("selector"))
        self.rng = random.Random(self.uid)
        self.owner = owner
        self.pods: dict[str, Pod] = {}  # uid -> the controller's active pods
        self.created = 0

    # --- ownership --------------------------------------------------------------------

    def owns(self, pod: Pod) -> bool:
        """Whether ``pod``'s controller owner reference names this controller."""
        ref = controller_ref(pod)
        if pod.namespace != self.namespace:
            return False
        if ref is None:
            return False
        if ref.get("uid") == self.uid:
            return True
        # A hand-written controller has no uid its pods could name: match kind and name.
        return (
            not self.explicit_uid and ref.get("kind") == self.kind and ref.get("name") == self.name
        )

    def may_adopt(self, pod: Pod) -> bool:
        """Whether ClaimPods would adopt ``pod``: an orphan its selector matches."""
        return (
            self.adopts
            and pod.namespace == self.namespace
            and controller_ref(pod) is None
            and not self.selector.is_empty
            and self.selector.matches(pod.labels)
        )

    # --- pods -------------------------------------------------------------------------

    def reconcile(self) -> list[Pod]:
        """The pods the controller creates now (recorded as its own)."""
        raise NotImplementedError

    def _new_pod(
        self,
        name: str,
        *,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        spec_updates: Mapping[str, Any] | None = None,
        generate_name: str = "",
    ) -> Pod:
        """controller.GetPodFromTemplate: the template's labels, annotations, finalizers and
        spec, the controller as owner."""
        meta = _m(self.template.get("metadata"))
        self.created += 1
        metadata: dict[str, Any] = {
            "name": name,
            "namespace": self.namespace,
            "uid": str(uuid.uuid5(_UIDS, f"{self.uid}/{name}/{self.created}")),
            "labels": {**_m(meta.get("labels")), **(labels or {})},
            "ownerReferences": [
                {
                    "apiVersion": self.api_version,
                    "kind": self.kind,
                    "name": self.name,
                    "uid": self.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        if generate_name:
            metadata["generateName"] = generate_name
        notes = {**_m(meta.get("annotations")), **(annotations or {})}
        if notes:
            metadata["annotations"] = notes
        if meta.get("finalizers"):
            metadata["finalizers"] = list(meta["finalizers"])
        spec = copy.deepcopy(dict(_m(self.template.get("spec"))))
        spec.update(spec_updates or {})
        return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})

    def _generated_name(self, prefix: str) -> str:
        while True:
            name = f"{prefix}{random_suffix(self.rng)}"[:253]
            if self.owner.claim_name(self.namespace, name):
                return name

    def _record(self, pods: list[Pod]) -> list[Pod]:
        for pod in pods:
            self.pods[pod.uid] = pod
        return pods

    def pods_to_come(self) -> int:
        """Pods this controller will create later without any deletion (0 for most)."""
        return 0


class ReplicaSet(Controller):
    """pkg/controller/replicaset manageReplicas: create pods up to ``replicas`` (or what
    its Deployment wants of it)."""

    def __init__(self, manifest: Mapping[str, Any], owner: Owner) -> None:
        super().__init__("ReplicaSet", manifest, owner)
        self.replicas = _int(self.spec.get("replicas"), 1)
        self.deployment: Deployment | None = None

    def wanted(self) -> int:
        """How many active pods this ReplicaSet should have now."""
        if self.deployment is not None:
            return self.deployment.wanted_for(self)
        return self.replicas

    def reconcile(self) -> list[Pod]:
        missing = self.wanted() - len(self.pods)
        return self._record(
            [
                self._new_pod(self._generated_name(f"{self.name}-"), generate_name=f"{self.name}-")
                for _ in range(max(0, missing))
            ]
        )


class Deployment(Controller):
    """Owns ReplicaSets; the newest (same template) gets the pods that are missing."""

    adopts = False  # a Deployment adopts ReplicaSets, not pods

    def __init__(self, manifest: Mapping[str, Any], owner: Owner) -> None:
        super().__init__("Deployment", manifest, owner)
        self.replicas = _int(self.spec.get("replicas"), 1)
        self.replica_sets: list[ReplicaSet] = []
        self.new_rs: ReplicaSet | None = None

    def attach(self, replica_sets: list[ReplicaSet]) -> ReplicaSet | None:
        """Take the input's ReplicaSets this Deployment owns; make the new one if none has
        its template. Returns a ReplicaSet the controllers must now also drive."""
        for rs in replica_sets:
            ref = next(
                (
                    r
                    for r in _m(rs.manifest.get("metadata")).get("ownerReferences") or []
                    if _m(r).get("controller") is True
                ),
                None,
            )
            if rs.namespace != self.namespace or ref is None:
                continue
            if ref.get("uid") == self.uid or (
                not self.explicit_uid
                and ref.get("kind") == "Deployment"
                and ref.get("name") == self.name
            ):
                rs.deployment = self
                self.replica_sets.append(rs)
                if _without_hash(rs.template) == _without_hash(self.template):
                    self.new_rs = rs  # deployment util: EqualIgnoreHash
        if self.new_rs is not None:
            return None
        status = _m(self.manifest.get("status"))
        pth = template_hash(self.template, _int(status.get("collisionCount"), 0) or None)
        labels = {**_m(_m(self.template.get("metadata")).get("labels")), POD_TEMPLATE_HASH: pth}
        selector = copy.deepcopy(dict(_m(self.spec.get("selector"))))
        selector["matchLabels"] = {**_m(selector.get("matchLabels")), POD_TEMPLATE_HASH: pth}
        template = {
            **self.template,
            "metadata": {**_m(self.template.get("metadata")), "labels": labels},
        }
        rs_name = f"{self.name}-{pth}"
        rs = ReplicaSet(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": rs_name,
                    "namespace": self.namespace,
                    "uid": str(uuid.uuid5(_UIDS, f"{self.uid}/{rs_name}")),
                    "labels": labels,
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": self.name,
                            "uid": self.uid,
                            "controller": True,
                        }
                    ],
                },
                "spec": {"replicas": self.replicas, "selector": selector, "template": template},
            },
            self.owner,
        )
        rs.deployment = self
        self.replica_sets.append(rs)
        self.new_rs = rs
        return rs

    def wanted_for(self, rs: ReplicaSet) -> int:
        """What the Deployment wants of ``rs``: the rest of ``replicas`` for the new one."""
        if rs is not self.new_rs:
            return len(rs.pods)  # old ReplicaSets keep what they have, no more
        others = sum(len(r.pods) for r in self.replica_sets if r is not rs)
        return max(0, self.replicas - others)

    def reconcile(self) -> list[Pod]:
        return []


def _without_hash(template: Mapping[str, Any]) -> Any:
    meta = dict(_m(template.get("metadata")))
    labels = {k: v for k, v in _m(meta.get("labels")).items() if k != POD_TEMPLATE_HASH}
    meta["labels"] = labels
    return json.dumps({**template, "metadata": meta}, sort_keys=True, default=str)


_ORDINAL = re.compile(r"(.*)-([0-9]+)")


class StatefulSet(Controller):
    """pkg/controller/statefulset: pods by ordinal, OrderedReady one at a time."""

    def __init__(self, manifest: Mapping[str, Any], owner: Owner) -> None:
        super().__init__("StatefulSet", manifest, owner)
        self.replicas = _int(self.spec.get("replicas"), 1)
        self.start = _int(_m(self.spec.get("ordinals")).get("start"), 0)
        self.parallel = self.spec.get("podManagementPolicy") == "Parallel"
        self.revision = f"{self.name}-{template_hash(self.template)}"

    def ordinal(self, pod: Pod) -> int | None:
        """The ordinal in ``<sts>-<ordinal>``, or None for another name."""
        m = _ORDINAL.fullmatch(pod.name)
        return int(m.group(2)) if m and m.group(1) == self.name else None

    def owns(self, pod: Pod) -> bool:
        return super().owns(pod) and self.ordinal(pod) is not None

    def reconcile(self) -> list[Pod]:
        by_ordinal = {self.ordinal(p): p for p in self.pods.values()}
        out: list[Pod] = []
        for ordinal in range(self.start, self.start + self.replicas):
            pod = by_ordinal.get(ordinal)
            if pod is None:
                out.append(self._stateful_pod(ordinal))
                if not self.parallel:
                    break  # OrderedReady: wait for it to be Running and Ready
            elif not pod.node_name and not self.parallel:
                break  # a bound pod counts as running in a simulation
        return self._record(out)

    def _stateful_pod(self, ordinal: int) -> Pod:
        name = f"{self.name}-{ordinal}"
        self.owner.claim_name(self.namespace, name)
        updates: dict[str, Any] = {"hostname": name}
        service = self.spec.get("serviceName")
        if service:
            updates["subdomain"] = service
        claims = self.claim_templates()
        if claims:
            volumes = [
                v
                for v in _m(self.template.get("spec")).get("volumes") or []
                if _m(v).get("name") not in {c[0] for c in claims}
            ]
            for claim_name, _ in claims:
                volumes.append(
                    {
                        "name": claim_name,
                        "persistentVolumeClaim": {"claimName": f"{claim_name}-{name}"},
                    }
                )
            updates["volumes"] = volumes
        return self._new_pod(
            name,
            labels={
                STS_POD_NAME: name,
                STS_POD_INDEX: str(ordinal),
                CONTROLLER_REVISION_HASH: self.revision,
            },
            spec_updates=updates,
        )

    def claim_templates(self) -> list[tuple[str, Mapping[str, Any]]]:
        """(name, template) of each volumeClaimTemplate."""
        out = []
        for t in self.spec.get("volumeClaimTemplates") or []:
            name = _m(_m(t).get("metadata")).get("name")
            if isinstance(name, str) and name:
                out.append((name, _m(t)))
        return out

    def claims(self, default_class: str | None) -> list[dict[str, Any]]:
        """stateful_set_utils getPersistentVolumeClaims, for every ordinal."""
        out = []
        match = _m(_m(self.spec.get("selector")).get("matchLabels"))
        for ordinal in range(self.start, self.start + self.replicas):
            for claim_name, t in self.claim_templates():
                spec = copy.deepcopy(dict(_m(t.get("spec"))))
                if default_class and not spec.get("storageClassName"):
                    spec["storageClassName"] = default_class  # DefaultStorageClass admission
                meta = _m(t.get("metadata"))
                out.append(
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {
                            "name": f"{claim_name}-{self.name}-{ordinal}",
                            "namespace": self.namespace,
                            "labels": {**_m(meta.get("labels")), **match},
                        },
                        "spec": spec,
                        "status": {"phase": "Pending"},
                    }
                )
        return out

    def pods_to_come(self) -> int:
        return max(0, self.replicas - len(self.pods))


class DaemonSet(Controller):
    """pkg/controller/daemon: one pod per node that should run it, pinned to the node."""

    def __init__(self, manifest: Mapping[str, Any], owner: Owner) -> None:
        super().__init__("DaemonSet", manifest, owner)
        self.revision = template_hash(self.template)
        generation = _m(manifest.get("metadata")).get("generation")
        self.generation = str(generation) if isinstance(generation, int) else ""

    def tolerations(self) -> list[Any]:
        """The template's tolerations with AddOrUpdateDaemonPodTolerations' added."""
        spec = _m(self.template.get("spec"))
        tolerations = list(spec.get("tolerations") or [])
        wanted = list(_DAEMON_TOLERATIONS)
        if spec.get("hostNetwork") is True:
            wanted.append(_NETWORK_UNAVAILABLE)
        for key, effect in wanted:
            tol = {"key": key, "operator": "Exists", "effect": effect}
            if not any(
                _m(t).get("key") == key
                and _m(t).get("effect") == effect
                and (_m(t).get("operator") or "Equal") == "Exists"
                and not _m(t).get("tolerationSeconds")
                for t in tolerations
            ):
                tolerations.append(tol)
        return tolerations

    def target(self, pod: Pod) -> str:
        """util.GetTargetNodeName: spec.nodeName, else the matchFields metadata.name value."""
        if pod.node_name:
            return pod.node_name
        affinity = pod.required_node_affinity.affinity
        for term in affinity.terms if affinity is not None else ():
            names = term.node_names()
            if names is not None and len(names) == 1:
                return next(iter(names))
        return ""

    def should_run(self, node: Node, candidate: Pod) -> bool:
        """nodeShouldRunDaemonPod's predicates: node affinity and taints."""
        if not candidate.required_node_affinity.matches(node.labels, node.name):
            return False
        taint = find_untolerated_taint(
            node.taints, candidate.tolerations, frozenset({NO_SCHEDULE, NO_EXECUTE})
        )
        return taint is None

    def reconcile(self) -> list[Pod]:
        covered = {self.target(p) for p in self.pods.values()}
        probe = self._new_pod(
            f"{self.name}-probe", spec_updates={"tolerations": self.tolerations()}
        )
        self.created -= 1
        out = []
        for node in self.owner.nodes.values():
            if node.name in covered or not self.should_run(node, probe):
                continue
            out.append(self._daemon_pod(node.name))
        return self._record(out)

    def _daemon_pod(self, node_name: str) -> Pod:
        spec = _m(self.template.get("spec"))
        affinity = copy.deepcopy(dict(_m(spec.get("affinity"))))
        node_affinity = dict(_m(affinity.get("nodeAffinity")))
        required = dict(_m(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")))
        # util.ReplaceDaemonSetPodNodeNameNodeAffinity: the node terms become one matchFields.
        required["nodeSelectorTerms"] = [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
        affinity["nodeAffinity"] = node_affinity
        labels = {CONTROLLER_REVISION_HASH: self.revision}
        if self.generation:
            labels[DS_TEMPLATE_GENERATION] = self.generation
        return self._new_pod(
            self._generated_name(f"{self.name}-"),
            labels=labels,
            spec_updates={"affinity": affinity, "tolerations": self.tolerations()},
            generate_name=f"{self.name}-",
        )


class Job(Controller):
    """pkg/controller/job manageJob: ``parallelism`` active pods, bounded by completions."""

    api_version = "batch/v1"
    adopts = False  # a Job's selector names its controller-uid

    def __init__(self, manifest: Mapping[str, Any], owner: Owner) -> None:
        super().__init__("Job", manifest, owner)
        self.parallelism = _int(self.spec.get("parallelism"), 1)
        completions = self.spec.get("completions")
        self.completions = _int(completions, 0) if completions is not None else None
        self.indexed = self.spec.get("completionMode") == "Indexed"
        status = _m(manifest.get("status"))
        self.succeeded = _int(status.get("succeeded"), 0)
        self.finished = any(
            _m(c).get("type") in ("Complete", "Failed") and _m(c).get("status") == "True"
            for c in status.get("conditions") or []
        )
        self.done_pods = 0

    def wanted(self) -> int:
        """How many active pods the Job should have now."""
        if self.spec.get("suspend") is True or self.finished:
            return 0
        succeeded = max(self.succeeded, self.done_pods)
        if self.completions is None:
            return 0 if succeeded else self.parallelism
        return max(0, min(self.parallelism, self.completions - succeeded))

    def reconcile(self) -> list[Pod]:
        missing = self.wanted() - len(self.pods)
        # The API server's Job defaulting labels the template with the job's identity.
        labels = {
            "batch.kubernetes.io/controller-uid": self.uid,
            "batch.kubernetes.io/job-name": self.name,
            "controller-uid": self.uid,
            "job-name": self.name,
        }
        out = []
        used = {p.annotations.get(JOB_COMPLETION_INDEX) for p in self.pods.values()}
        index = 0
        for _ in range(max(0, missing)):
            if not self.indexed:
                out.append(
                    self._new_pod(
                        self._generated_name(f"{self.name}-"),
                        labels=labels,
                        generate_name=f"{self.name}-",
                    )
                )
                continue
            while str(index) in used:
                index += 1
            used.add(str(index))
            prefix = f"{self.name}-{index}-"
            out.append(
                self._new_pod(
                    self._generated_name(prefix),
                    labels={**labels, JOB_COMPLETION_INDEX: str(index)},
                    annotations={JOB_COMPLETION_INDEX: str(index)},
                    spec_updates={"hostname": f"{self.name}-{index}"},
                    generate_name=prefix,
                )
            )
        return self._record(out)
