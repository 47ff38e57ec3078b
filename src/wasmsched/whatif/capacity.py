"""How much more fits: copies of pod templates scheduled one at a time on a cluster.

Like kubernetes-sigs/cluster-capacity, but with several templates (in sequence or
interleaved), desired replica counts, and the real profile, wasm plugins included. Each
copy goes through the whole scheduler (queue, filters, scores, binding) on top of the
cluster's running pods and the copies placed before it; a template stops at its first
copy that does not fit, and the reason is that copy's FitError message.

Copies are fed one at a time, far apart on the simulated clock, so each is settled
(bound, or unschedulable with nothing left to retry) before the next arrives.
"""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from wasmsched.api.admission import admit_pods
from wasmsched.api.dra import RESOURCE_CLAIM_TEMPLATE
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Pod
from wasmsched.config import SchedulerConfig
from wasmsched.errors import InputError
from wasmsched.framework.interfaces import Registry
from wasmsched.sim.simulation import Simulation

# Simulated seconds between two copies: more than the longest backoff (10 s) and the
# unschedulable pool's flush (5 min), so a copy has been retried as often as the real
# scheduler would before the next one arrives.
COPY_SPACING = 1000.0
DEFAULT_MAX = 100_000

Order = Literal["sequential", "round-robin"]
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")


class CapacityError(InputError):
    """A template that cannot be used; the message names the file and the field."""


@dataclass
class Template:
    """A pod template: a Pod, or the pod template of a workload manifest."""

    name: str
    manifest: Mapping[str, Any]
    replicas: int | None = None  # desired count; None: as many as fit (up to --max)
    source: str = ""


def template_from_manifest(doc: Mapping[str, Any], source: str) -> Template:
    """A Template from a Pod or workload manifest (CronJob: its job template's pods)."""
    kind = doc.get("kind")
    meta = doc.get("metadata") or {}
    name = str(meta.get("name") or "")
    if not name:
        raise CapacityError(f"{source}: metadata.name: required")
    if kind == "Pod":
        return Template(name, doc, source=source)
    if kind not in WORKLOAD_KINDS:
        raise CapacityError(
            f"{source}: kind: expected Pod or a workload ({', '.join(WORKLOAD_KINDS)}), got {kind!r}"
        )
    spec = doc.get("spec") or {}
    path = "spec.template"
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
        path = "spec.jobTemplate.spec.template"
    template = spec.get("template")
    if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
        raise CapacityError(f"{source}: {path}.spec: required in a {kind}")
    tmeta = dict(template.get("metadata") or {})
    tmeta.setdefault("namespace", meta.get("namespace", "default"))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": tmeta, "spec": template["spec"]}
    return Template(name, pod, source=source)


def _check_claim_templates(template: Template, known: set[str]) -> None:
    """Every ResourceClaimTemplate the copies name is in the cluster (without it, a copy
    would wait at DynamicResources' PreEnqueue for a claim that is never made)."""
    spec = template.manifest.get("spec") or {}
    namespace = (template.manifest.get("metadata") or {}).get("namespace") or "default"
    for i, entry in enumerate(spec.get("resourceClaims") or ()):
        name = entry.get("resourceClaimTemplateName") if isinstance(entry, Mapping) else None
        if name and f"{namespace}/{name}" not in known:
            raise CapacityError(
                f"{template.source}: spec.resourceClaims[{i}].resourceClaimTemplateName: "
                f"ResourceClaimTemplate {namespace}/{name} is not in the cluster"
            )


@dataclass
class TemplateResult:
    """What one template got: copies placed, where, and why the next did not fit."""

    template: Template
    placed: int = 0
    stop_reason: str = ""
    stopped: bool = False
    nodes: Counter[str] = field(default_factory=Counter)

    @property
    def fits(self) -> bool:
        if self.template.replicas is not None:
            return self.placed >= self.template.replicas
        return not self.stop_reason  # reached --max without a copy that did not fit

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.template.name,
            "replicas": self.placed,
            "desired": self.template.replicas,
            "fits": self.fits,
            "stopReason": self.stop_reason or None,
            "nodes": dict(sorted(self.nodes.items())),
        }


class Capacity:
    """Schedules copies of templates until each stops; see the module's docstring."""

    def __init__(
        self,
        cluster: ClusterObjects,
        templates: Sequence[Template],
        config: SchedulerConfig,
        registry: Registry,
        *,
        order: Order = "sequential",
        max_copies: int | None = None,
        allow_preemption: bool = False,
        seed: int = 0,
    ) -> None:
        if not templates:
            raise CapacityError("capacity: give at least one --pod template")
        if order not in ("sequential", "round-robin"):
            raise CapacityError(f"--order: expected sequential or round-robin, got {order!r}")
        claim_templates = {
            f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
            for o in cluster.others
            if o.get("kind") == RESOURCE_CLAIM_TEMPLATE
            for meta in [o.get("metadata") or {}]
        }
        for t in templates:
            _check_claim_templates(t, claim_templates)
        # The question is about room next to what runs now: pending pods of the cluster
        # file are left out (they would compete with the copies).
        running = [p for p in cluster.pods if p.node_name]
        self.ignored_pending = len(cluster.pods) - len(running)
        base = ClusterObjects(list(cluster.nodes), running, list(cluster.others))
        self.sim = Simulation(base, config, registry, seed=seed, max_simulated_seconds=float("inf"))
        self.others = list(cluster.others)
        self.results = [TemplateResult(t) for t in templates]
        self.order = order
        self.max_copies = DEFAULT_MAX if max_copies is None else max_copies
        self.allow_preemption = allow_preemption
        self._counter = itertools.count(1)
        self._current: tuple[TemplateResult, Pod] | None = None
        self._turn = 0
        self.preempted: list[str] = []
        self._copies: dict[str, TemplateResult] = {}  # uid of a bound copy -> its template
        self.sim.store.subscribe(on_bound=self._bound, on_deleted=self._deleted)
        self.sim.at(0.0, self._next)

    def _copy(self, result: TemplateResult) -> Pod:
        manifest = copy.deepcopy(dict(result.template.manifest))
        meta = manifest.setdefault("metadata", {})
        meta["name"] = f"{result.template.name}-copy-{result.placed + 1}"
        meta.pop("uid", None)
        meta.pop("generateName", None)
        spec = manifest["spec"]
        spec.pop("nodeName", None)
        # Each copy gets claims of its own from the templates (the resourceclaim controller,
        # Simulation.add_pod): not those of the pod it was copied from.
        status = manifest.get("status")
        if isinstance(status, dict):
            status.pop("resourceClaimStatuses", None)
        (pod,) = admit_pods([Pod(manifest)], self.others)
        if not self.allow_preemption:
            spec = dict(pod.spec)
            spec["preemptionPolicy"] = "Never"
            pod = Pod({**pod.manifest, "spec": spec})
        return pod

    def _pick(self) -> TemplateResult | None:
        live = [
            r
            for r in self.results
            if not r.stopped
            and (r.template.replicas is None or r.placed < r.template.replicas)
            and r.placed < self.max_copies
        ]
        if not live:
            return None
        if self.order == "sequential":
            return live[0]
        # Round robin over the templates still going, in the order given.
        for _ in range(len(self.results)):
            candidate = self.results[self._turn % len(self.results)]
            self._turn += 1
            if candidate in live:
                return candidate
        return live[0]

    def _next(self) -> None:
        """Settles the previous copy and feeds the next one."""
        if self._current is not None:
            result, pod = self._current
            self._current = None
            current = self.sim.pod(pod.uid)
            if current is not None and not current.node_name:
                outcome = self.sim.outcome(pod.uid)
                reason = outcome.message if outcome is not None else "not scheduled"
                if not self.allow_preemption:
                    # The copies carry preemptionPolicy Never only to keep preemption off:
                    # report the message of a profile without it (no "preemption:" part).
                    head, sep, _ = reason.partition(" preemption: ")
                    reason = head if sep else reason
                result.stop_reason = reason
                result.stopped = True
                self.sim.store.remove_pod(pod.uid)
        result_next = self._pick()
        if result_next is None:
            return
        pod = self._copy(result_next)
        self._current = (result_next, pod)
        self.sim.add_pod(pod)
        self.sim.at(self.sim.now() + COPY_SPACING, self._next)

    def _bound(self, pod: Pod) -> None:
        if self._current is not None and self._current[1].uid == pod.uid:
            result = self._current[0]
            result.placed += 1
            result.nodes[pod.node_name] += 1
            self._copies[pod.uid] = result

    def _deleted(self, pod: Pod, reason: str) -> None:
        if not reason:
            return
        # A preemption victim (only with --allow-preemption): a running pod of the
        # cluster, or a copy placed earlier, which then no longer counts.
        self.preempted.append(pod.key)
        result = self._copies.pop(pod.uid, None)
        if result is not None:
            result.nodes[pod.node_name] -= 1
            result.placed -= 1

    def run(self) -> dict[str, Any]:
        """Runs to the end; the JSON document of ``wasmsched capacity``."""
        try:
            sim_result = self.sim.run()
        finally:
            self.sim.close()
        per_node: Counter[str] = Counter()
        for r in self.results:
            per_node.update(r.nodes)
        return {
            "templates": [r.to_dict() for r in self.results],
            "summary": {
                "order": self.order,
                "placed": sum(r.placed for r in self.results),
                "allFit": all(r.fits for r in self.results),
                "nodes": dict(sorted((k, v) for k, v in per_node.items() if v)),
                "preempted": self.preempted,
                "pendingPodsIgnored": self.ignored_pending,
                "schedulingCycles": sim_result.cycles,
                "wallSeconds": round(sim_result.wall_seconds, 3),
            },
        }
