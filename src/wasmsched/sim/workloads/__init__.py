"""Workload controllers: the pods that Deployments, ReplicaSets, StatefulSets, DaemonSets and
Jobs would have created, for a simulation that has only their manifests.

``WorkloadControllers`` is pure (it knows no simulator): the simulator asks it for the pods
to add at load (``initial_pods``), and tells it when a pod is bound (``on_pod_bound``: a
StatefulSet with OrderedReady makes its next ordinal once the previous one runs, and in a
simulation a bound pod counts as Running and Ready), deleted (``on_pod_deleted``: the
replacement a controller makes) or when a node appears (``on_node_added``: DaemonSet pods).
Every pod it returns has been through admission (PriorityClass, RuntimeClass).

What each controller does, and the upstream code it follows:

- ReplicaSet (pkg/controller/replicaset: manageReplicas): ``spec.replicas`` pods named
  ``<rs>-<5 random chars>``; pods it already owns (controller owner reference) and orphans
  its selector matches (ClaimPods adopts them) count.
- Deployment (pkg/controller/deployment): makes a ReplicaSet ``<deploy>-<pod-template-hash>``
  whose pods carry the ``pod-template-hash`` label. A ReplicaSet of the input owned by the
  Deployment with the same template (EqualIgnoreHash) is that ReplicaSet; pods of its other
  ReplicaSets count towards ``replicas`` (a rollout frozen at that moment).
- StatefulSet (pkg/controller/statefulset): ``<sts>-<ordinal>`` for ordinals from
  ``spec.ordinals.start``; OrderedReady creates one at a time, Parallel all at once. PVCs
  ``<claim>-<sts>-<ordinal>`` from volumeClaimTemplates are in ``objects``.
- DaemonSet (pkg/controller/daemon): one pod for each node where nodeShouldRunDaemonPod
  holds (node selector and required node affinity match, no untolerated NoSchedule or
  NoExecute taint once the default DaemonSet tolerations are added), pinned to the node by
  the ``matchFields metadata.name`` affinity (util.ReplaceDaemonSetPodNodeNameNodeAffinity).
- Job (pkg/controller/job: manageJob): ``parallelism`` pods, at most ``completions`` minus
  the succeeded ones; Indexed jobs name their pods ``<job>-<index>-<suffix>``.
- CronJob: no pods until its schedule fires, which a static simulation never reaches
  (a warning).

Names are deterministic: each controller draws its suffixes from a random generator seeded
with its uid, in Kubernetes' alphabet (k8s.io/apimachinery pkg/util/rand: String).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from wasmsched.api.admission import admit_pods
from wasmsched.api.naming import ALPHANUMS, random_suffix, safe_encode, template_hash
from wasmsched.api.objects import DEFAULT_NAMESPACE, Node, Pod
from wasmsched.sim.workloads.controllers import (
    DEFAULT_CLASS_ANNOTATION,
    Controller,
    DaemonSet,
    Deployment,
    Job,
    Owner,
    ReplicaSet,
    StatefulSet,
    active,
    controller_ref,
)

__all__ = [
    "ALPHANUMS",
    "WorkloadControllers",
    "random_suffix",
    "safe_encode",
    "template_hash",
]


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


_KINDS: dict[str, Callable[[Mapping[str, Any], Owner], Controller]] = {
    "ReplicaSet": ReplicaSet,
    "Deployment": Deployment,
    "StatefulSet": StatefulSet,
    "DaemonSet": DaemonSet,
    "Job": Job,
}


class WorkloadControllers:
    """The workload controllers of a cluster, driven by a simulator (see the module doc).

    ``nodes``, ``pods`` and ``others`` are what the loader returned (ClusterObjects); pods
    that already exist for a controller (same controller owner reference, or an orphan its
    selector adopts) count towards it, so a cluster dump is not doubled.
    """

    def __init__(
        self, nodes: Iterable[Node], pods: Iterable[Pod], others: Iterable[Mapping[str, Any]]
    ) -> None:
        self.others = [dict(o) for o in others]
        self.nodes: dict[str, Node] = {n.name: n for n in nodes}
        existing = list(pods)
        self._names: set[tuple[str, str]] = {(p.namespace, p.name) for p in existing}
        self.controllers: list[Controller] = []
        slots: list[Controller] = []
        for obj in self.others:
            kind = obj.get("kind")
            if kind in _KINDS:
                slots.append(_KINDS[kind](obj, self))
        replica_sets: list[ReplicaSet] = [c for c in slots if isinstance(c, ReplicaSet)]
        for c in slots:
            if isinstance(c, Deployment):
                # The Deployment's new ReplicaSet takes its place in input order.
                made = c.attach(replica_sets)
                if made is not None:
                    self.controllers.append(made)
            else:
                self.controllers.append(c)
        self._by_uid = {c.uid: c for c in self.controllers}
        for pod in existing:
            self._claim(pod)
        default_class = next(
            (
                str(_m(o.get("metadata")).get("name"))
                for o in self.others
                if o.get("kind") == "StorageClass"
                and _m(_m(o.get("metadata")).get("annotations")).get(DEFAULT_CLASS_ANNOTATION)
                == "true"
            ),
            None,
        )
        have = {
            (
                _m(o.get("metadata")).get("namespace") or DEFAULT_NAMESPACE,
                _m(o.get("metadata")).get("name"),
            )
            for o in self.others
            if o.get("kind") == "PersistentVolumeClaim"
        }
        self.objects: list[dict[str, Any]] = []
        """Objects the controllers create besides pods (StatefulSet PVCs), to add at load."""
        for c in self.controllers:
            if isinstance(c, StatefulSet):
                for claim in c.claims(default_class):
                    meta = claim["metadata"]
                    if (meta["namespace"], meta["name"]) not in have:
                        self.objects.append(claim)

    def claim_name(self, namespace: str, name: str) -> bool:
        """Reserve a pod name; False when it is taken."""
        if (namespace, name) in self._names:
            return False
        self._names.add((namespace, name))
        return True

    def _claim(self, pod: Pod) -> Controller | None:
        owner = self.controller_of(pod)
        if owner is None:
            owner = next((c for c in self.controllers if c.may_adopt(pod)), None)
        if owner is None:
            return None
        if active(pod):
            owner.pods[pod.uid] = pod
        elif isinstance(owner, Job) and pod.phase == "Succeeded":
            owner.done_pods += 1
        return owner

    def controller_of(self, pod: Pod) -> Controller | None:
        """The controller that owns ``pod`` (by its controller owner reference)."""
        ref = controller_ref(pod)
        if ref is None:
            return None
        found = self._by_uid.get(str(ref.get("uid")))
        if found is not None and found.owns(pod):
            return found
        return next((c for c in self.controllers if c.owns(pod)), None)

    def _admit(self, pods: list[Pod]) -> list[Pod]:
        if not pods:
            return pods
        admitted = admit_pods(pods, self.others)
        for pod in admitted:
            owner = self.controller_of(pod)
            if owner is not None:
                owner.pods[pod.uid] = pod
        return admitted

    def initial_pods(self) -> list[Pod]:
        """The pods every controller creates at load, in input order."""
        out: list[Pod] = []
        for c in self.controllers:
            out.extend(c.reconcile())
        return self._admit(out)

    def on_pod_bound(self, pod: Pod) -> list[Pod]:
        """``pod`` (as bound) now runs: the pods its controller creates in response."""
        owner = self.controller_of(pod)
        if owner is None:
            return []
        owner.pods[pod.uid] = pod
        if not isinstance(owner, StatefulSet):
            return []  # only OrderedReady waits for its pods to run
        return self._admit(owner.reconcile())

    def on_pod_deleted(self, pod: Pod) -> list[Pod]:
        """``pod`` is gone (preempted, evicted, deleted): its controller's replacements."""
        owner = self.controller_of(pod)
        if owner is None or owner.pods.pop(pod.uid, None) is None:
            return []
        if isinstance(owner, StatefulSet):
            self._names.discard((pod.namespace, pod.name))  # the same name comes back
        return self._admit(owner.reconcile())

    def on_node_added(self, node: Node) -> list[Pod]:
        """A node joins: the DaemonSet pods it should run."""
        self.nodes[node.name] = node
        out: list[Pod] = []
        for c in self.controllers:
            if isinstance(c, DaemonSet):
                out.extend(c.reconcile())
        return self._admit(out)

    def pods_to_come(self) -> int:
        """Pods the controllers will still create as pods are bound (OrderedReady ordinals)."""
        return sum(c.pods_to_come() for c in self.controllers)
