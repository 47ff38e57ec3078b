"""FitError and Diagnosis: why a pod fits no node, in kube-scheduler's message format; the
CycleError that ends a scheduling cycle on a plugin's or an extender's error."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wasmsched.errors import InternalError, WasmschedError
from wasmsched.framework.interfaces import NodeToStatus, NominatingInfo
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.runtime import Framework

_PENDING = int(Code.PENDING)
_UNSCHEDULABLE = frozenset((int(Code.UNSCHEDULABLE), int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)))
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass
class Diagnosis:
    """Why a pod fits no node (framework.Diagnosis): per-node statuses and the plugins that rejected it."""

    node_to_status: NodeToStatus = field(
        default_factory=lambda: NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    )
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    evaluated_nodes: int = 0
    # rejections_by_plugin() computed once, for a diagnosis that no longer changes
    # (a remembered failure's, see FailureMemo).
    rejections: dict[str, int] | None = None

    def rejections_by_plugin(self) -> dict[str, int]:
        """Nodes rejected per plugin: each node's status counts for the plugin that gave it
        (a PreFilter rejection covers the nodes it left out, counted as one entry)."""
        if self.rejections is not None:
            return dict(self.rejections)
        counts: dict[str, int] = {}
        for status, n in _distinct(self.node_to_status.explicit().values()):
            key = status.plugin or "(unknown)"
            counts[key] = counts.get(key, 0) + n
        absent = self.node_to_status.absent_nodes_status
        if self.pre_filter_msg and absent is not None and absent.plugin and not counts:
            counts[absent.plugin] = self.evaluated_nodes or 1
        return dict(sorted(counts.items()))

    def add_plugin_status(self, status: Status) -> None:
        """Counts the status's plugin among the unschedulable (or pending) plugins."""
        plugin = status.plugin
        if not plugin:
            return
        code = status.code
        if code == _PENDING:
            self.pending_plugins.add(plugin)
        elif code in _UNSCHEDULABLE:
            self.unschedulable_plugins.add(plugin)


def _distinct(statuses: Collection[Status]) -> list[tuple[Status, int]]:
    """Each distinct status object among ``statuses`` and how many times it occurs: the
    nodes of a cycle share a few (each plugin's rejections), counted by identity without
    a Python-level pass over the nodes."""
    objects = dict(zip(map(id, statuses), statuses, strict=True))
    return [(objects[key], n) for key, n in Counter(map(id, statuses)).items()]


class CycleError(InternalError):
    """A plugin or extender error that ends the scheduling cycle with its status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class FitError(WasmschedError):
    """No node fits; ``str()`` is kube-scheduler's FitError.Error() text."""

    def __init__(self, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            histogram = self.reason_histogram()
            if histogram:
                msg += " " + ", ".join(f"{n} {reason}" for reason, n in histogram) + "."
        if d.post_filter_msg:
            # v1.33 appends the PostFilter message as it is, without a period
            # (pkg/scheduler/framework/types.go: FitError.Error).
            msg += f" {d.post_filter_msg}"
        return msg

    def reason_histogram(self) -> list[tuple[str, int]]:
        """(reason, node count), sorted as kube-scheduler sorts the "N reason" strings."""
        counts: dict[str, int] = {}
        nts = self.diagnosis.node_to_status
        # Nodes share few distinct statuses: count those, then their reasons.
        for status, n in _distinct(nts.explicit().values()):
            for reason in status.reasons:
                counts[reason] = counts.get(reason, 0) + n
        absent = self.num_all_nodes - len(nts)
        if absent > 0 and nts.absent_nodes_status is not None:
            for reason in nts.absent_nodes_status.reasons:
                counts[reason] = counts.get(reason, 0) + absent
        return sorted(counts.items(), key=lambda kv: f"{kv[1]} {kv[0]}")


# --- failed cycles remembered while nothing changes -----------------------------------------


@dataclass
class RememberedFailure:
    """What a failed scheduling cycle produced: the failure message (FitError text with
    the PostFilter message), its diagnosis, the PostFilter's nomination, and how far the
    cycle moved the next node search start (modulo the number of nodes)."""

    message: str
    diagnosis: Diagnosis
    nominating: NominatingInfo | None
    start_advance: int


# Only in-tree plugins are known to compute Filter and PostFilter from the pod, the
# snapshot and the cluster's objects alone; a wasm guest or an out-of-tree plugin may keep
# state of its own, so a profile with one is never remembered.
_IN_TREE = "wasmsched.plugins."
_MAX_SIGNATURES = 8192


class FailureMemo:
    """Failed scheduling cycles, remembered for as long as the cluster does not change.

    A cycle whose Filter rejects every node and whose PostFilter finds nothing to preempt
    is a function of the pod's scheduling-relevant fields and of the cluster state: the
    same pod shape tried again on the same state fails with the same diagnosis, message
    and nomination (pkg/scheduler/schedule_one.go: schedulingCycle, schedulePod and
    findNodesThatFitPod; a failed search visits every node, so its outcome does not
    depend on where it started). When many waiting pods of a few shapes are retried after
    one cluster event (a deleted pod moves them all: NodeResourcesFit's queueing hint
    isSchedulableAfterPodEvent answers Queue for any deleted scheduled pod), each shape is
    filtered once per cluster state instead of once per pod. The cluster state is the
    pair of generations (the scheduler cache's: pods and nodes; the scheduler's: every
    informer event, other objects included) given by the caller; a new state forgets
    everything remembered.

    Not remembered (``signature`` gives None): profiles with a plugin that is not in-tree,
    extenders, nominated pods anywhere (the nominator changes what Filter sees), a
    nominated pod itself, explained or observed cycles, and pods with volume or resource
    claims.
    """

    def __init__(self) -> None:
        self._state: tuple[int, ...] | None = None
        self._failures: dict[str, RememberedFailure] = {}
        self._pure: dict[int, bool] = {}
        self._signatures: dict[str, tuple[Pod, str | None]] = {}
        self.hits = 0  # failures answered from memory (for tests and benchmarks)

    def signature(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        *,
        nominations: bool,
        extenders: bool,
    ) -> str | None:
        """The key of the pod's failures, or None when its cycle must run in full."""
        if nominations or extenders or state.recorder is not None or state.observer is not None:
            return None
        if pod.nominated_node_name:
            return None
        pure = self._pure.get(id(fwk))
        if pure is None:
            pure = self._pure[id(fwk)] = all(
                type(p).__module__.startswith(_IN_TREE) for p in fwk.all_plugins
            )
        if not pure:
            return None
        cached = self._signatures.get(pod.uid)
        if cached is not None and cached[0] is pod:
            return cached[1]
        if len(self._signatures) >= _MAX_SIGNATURES:
            self._signatures.clear()
        sig = _pod_signature(fwk, pod)
        self._signatures[pod.uid] = (pod, sig)
        return sig

    def recall(
        self, cluster: tuple[int, ...], signature: Callable[[], str | None]
    ) -> RememberedFailure | None:
        """The failure remembered for the pod's ``signature`` on this cluster state; the
        pod is signed only when some failure is remembered for this state."""
        if cluster != self._state:
            self._state = cluster
            self._failures.clear()
            return None
        if not self._failures:
            return None
        signed = signature()
        if signed is None:
            return None
        known = self._failures.get(signed)
        if known is not None:
            self.hits += 1
        return known

    def remember(
        self,
        cluster_before: tuple[int, ...],
        cluster_after: tuple[int, ...],
        signature: str,
        failure: RememberedFailure,
        post_filter_status: Status | None,
    ) -> None:
        """Keeps a failure when the cycle changed nothing (no eviction, no nomination) and
        its PostFilter, if any, ended with plain Unschedulable."""
        if cluster_before != cluster_after or cluster_after != self._state:
            return
        if post_filter_status is not None and post_filter_status.code != Code.UNSCHEDULABLE:
            return
        nominating = failure.nominating
        if nominating is not None and nominating.nominated_node_name:
            return
        self._failures[signature] = failure


def _pod_signature(fwk: Framework, pod: Pod) -> str | None:
    """What of a pod the in-tree Filter and PostFilter plugins read: its namespace,
    labels, annotations, owners, spec and phase (not its name, uid or conditions)."""
    spec = pod.spec
    for volume in spec.get("volumes") or ():
        if isinstance(volume, Mapping) and (
            "persistentVolumeClaim" in volume or "ephemeral" in volume
        ):
            return None  # VolumeBinding keeps per-pod state of its own
    if spec.get("resourceClaims"):
        return None  # so does DynamicResources (in-flight allocations)
    meta = pod.manifest.get("metadata") or {}
    status = pod.manifest.get("status") or {}
    key = [
        id(fwk),
        pod.namespace,
        meta.get("labels"),
        meta.get("annotations"),
        meta.get("ownerReferences"),
        meta.get("deletionTimestamp"),
        status.get("phase"),
        spec,
    ]
    return json.dumps(key, sort_keys=True, separators=(",", ":"), default=str)
