"""The generic preemption evaluator (k8s ``framework/preemption/preemption.go``, v1.33).

A preemption plugin supplies the policy (``PreemptionPolicy``: eligibility, candidate count,
victim selection); the ``Evaluator`` runs the dry run on every node that failed with plain
Unschedulable, picks the best candidate and evicts its victims through the handle.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from wasmsched.api.selectors import LabelSelector, SelectorError
from wasmsched.framework.diagnosis import Diagnosis, FitError
from wasmsched.framework.extender import ExtenderError, Victims
from wasmsched.framework.interfaces import (
    MODE_OVERRIDE,
    NodeToStatus,
    NominatingInfo,
    PostFilterResult,
)
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo, PodInfo
    from wasmsched.framework.runtime import Framework

log = logging.getLogger("wasmsched.preemption")

NOT_HELPFUL = "Preemption is not helpful for scheduling"
_NAME = operator.attrgetter("name")
# int64(math.MaxInt32 + 1): added to every priority so that sums compare correctly.
_PRIORITY_OFFSET = 2**31


class PreemptionPolicy(Protocol):
    """The plugin side of preemption (k8s preemption.Interface)."""

    def get_offset_and_num_candidates(self, pod: Pod, num_nodes: int) -> tuple[int, int]: ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]: ...

    # Optional: ``victimless_status(pod, node_info) -> Status | None``, the status that
    # select_victims_on_node returns, without changing anything, for a node where it finds
    # no potential victim; None when it might find one (dry_run_preemption);
    # ``victimless_statuses(pod, nodes) -> list[Status] | None``, those statuses for all
    # the nodes when none of them has a potential victim, else None; and
    # ``hopeless(fwk, state, pod) -> Callable[[NodeInfo], bool] | None``, a test true for
    # nodes where select_victims_on_node surely returns no victims (its status is then
    # computed only when the dry run ends without candidates), None when none applies;
    # ``candidates_by_sums(fwk, state, pod, potential, offset, pdbs, num_candidates)
    # -> list[Candidate] | None``, the candidates the dry run below would find, in its
    # order, without running it; None (or none found) sends the dry run node by node,
    # which then also gives the statuses Preempt reports without candidates.


@dataclass
class Candidate:
    """A node where the preemptor fits once ``victims`` (most important first) are gone."""

    name: str
    victims: list[Pod]
    num_pdb_violations: int = 0
    # ``pick_key(victims, num_pdb_violations)`` when known already (the dry run by sums
    # keeps it with each node's outcome).
    pick_key: tuple[int, int, int, int, float] | None = field(
        default=None, compare=False, repr=False
    )


class DryRunCandidates:
    """The dry run's two lists (preemption.go: DryRunPreemption): candidates evicting no
    PDB-protected pod and those that do, each kept up to ``wanted``; the search stops once
    there are ``wanted`` in all with at least one non-violating."""

    __slots__ = ("non_violating", "violating", "wanted")

    def __init__(self, wanted: int) -> None:
        self.wanted = wanted
        self.non_violating: list[Candidate] = []
        self.violating: list[Candidate] = []

    def add(self, candidate: Candidate) -> bool:
        """Keeps ``candidate`` if its list has room; whether the search may stop."""
        kept = self.violating if candidate.num_pdb_violations else self.non_violating
        if len(kept) < self.wanted:
            kept.append(candidate)
        non_violating = self.non_violating
        return bool(non_violating) and len(non_violating) + len(self.violating) >= self.wanted

    def all(self) -> list[Candidate]:
        """Non-violating candidates first, each list in the order found."""
        return self.non_violating + self.violating


@dataclass
class PodDisruptionBudget:
    """What preemption reads of a policy/v1 PodDisruptionBudget."""

    namespace: str
    name: str
    selector: LabelSelector | None  # None: invalid selector, matches nothing
    disruptions_allowed: int
    disrupted_pods: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> PodDisruptionBudget:
        meta = manifest.get("metadata") or {}
        spec = manifest.get("spec") or {}
        status = manifest.get("status") or {}
        selector: LabelSelector | None
        try:
            selector = LabelSelector.from_dict(spec.get("selector"))
        except SelectorError:
            selector = None
        allowed = status.get("disruptionsAllowed")
        disrupted = status.get("disruptedPods") or {}
        return cls(
            namespace=str(meta.get("namespace") or "default"),
            name=str(meta.get("name") or ""),
            selector=selector,
            disruptions_allowed=allowed if isinstance(allowed, int) else 0,
            disrupted_pods=frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset(),
        )

    def matches(self, pod: Pod) -> bool:
        """Same namespace and a non-empty selector matching the pod's labels."""
        sel = self.selector
        if sel is None or sel.is_empty or pod.namespace != self.namespace:
            return False
        return sel.matches(pod.labels)


def pod_disruption_budgets(manifests: Iterable[Mapping[str, Any]]) -> list[PodDisruptionBudget]:
    return [PodDisruptionBudget.from_manifest(m) for m in manifests]


def pod_start_time(pod: Pod) -> float:
    """status.startTime in seconds; a pod that has not started counts as starting now (+inf)."""
    raw = pod.status.get("startTime") if pod.status else None
    if isinstance(raw, str) and raw:
        return _timestamp(raw)
    return math.inf


@functools.lru_cache(maxsize=4096)
def _timestamp(raw: str) -> float:
    """An RFC 3339 time in seconds (+inf when it does not parse), parsed once per string:
    the dry run sorts every candidate node's pods by it, and pickOneNodeForPreemption
    compares the victims' (pods started in the same second share the string)."""
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return math.inf


def importance_key(pod: Pod) -> tuple[int, float]:
    """Sort key putting the most important pod first (util.MoreImportantPod):
    higher priority, then the one that started earlier."""
    return (-pod.priority, pod_start_time(pod))


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """(violating, non-violating), each in input order: a pod violates a PDB when evicting it,
    after the pods before it, takes the budget's allowed disruptions below zero."""
    allowed = [p.disruptions_allowed for p in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in pod_infos:
        pod = info.pod
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not pdb.matches(pod):
                    continue
                # Already counted by the API server's eviction: not a new disruption.
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating


def nodes_for_status_code(
    node_to_status: NodeToStatus, node_infos: Sequence[NodeInfo], code: int
) -> list[NodeInfo]:
    """The nodes whose status (recorded or absent) has ``code``, in snapshot order."""
    absent = node_to_status.absent_nodes_status
    absent_code = Code.SUCCESS if absent is None else absent.code
    explicit = node_to_status.explicit()
    if absent_code == code and not explicit:
        return list(node_infos)
    # The nodes share a few status objects: the ones with ``code`` by identity (None for
    # a node without a recorded status), then one pass over the nodes without Python
    # code per node.
    recorded = explicit.values()
    distinct = dict(zip(map(id, recorded), recorded, strict=True))
    wanted = {key for key, status in distinct.items() if status.code == code}
    if absent_code == code:
        wanted.add(id(None))
    statuses = map(explicit.get, map(_NAME, node_infos))
    return list(itertools.compress(node_infos, map(wanted.__contains__, map(id, statuses))))


def _earliest_start_of_highest_priority(victims: Sequence[Pod]) -> float:
    """util.GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    best_priority = victims[0].priority
    earliest = pod_start_time(victims[0])
    for pod in victims:
        prio = pod.priority
        if prio == best_priority:
            earliest = min(earliest, pod_start_time(pod))
        elif prio > best_priority:
            best_priority = prio
            earliest = pod_start_time(pod)
    return earliest


def pick_key(victims: Sequence[Pod], num_pdb_violations: int) -> tuple[int, int, int, int, float]:
    """A candidate's scores under pickOneNodeForPreemption's criteria, most significant
    first, each the larger the better: fewest PDB violations, lowest highest-victim
    priority, lowest sum of priorities, fewest victims, latest start of the
    highest-priority victims."""
    return (
        -num_pdb_violations,
        -victims[0].priority,
        -sum(p.priority + _PRIORITY_OFFSET for p in victims),
        -len(victims),
        _earliest_start_of_highest_priority(victims),
    )


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> str:
    """pickOneNodeForPreemption: each criterion decides among the ties of the previous
    one, then the first candidate wins; that is the first candidate with the greatest
    ``pick_key``."""
    best = ""
    best_key: tuple[int, int, int, int, float] | None = None
    for c in candidates:
        key = c.pick_key or pick_key(c.victims, c.num_pdb_violations)
        if best_key is None or key > best_key:
            best, best_key = c.name, key
    return best


def _aggregate(errors: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or "[a, b]" for several."""
    if len(errors) == 1:
        return errors[0]
    return "[" + ", ".join(errors) + "]"


class Evaluator:
    """Runs one preemption attempt (k8s Evaluator.Preempt) for a PostFilter plugin."""

    def __init__(self, plugin_name: str, handle: Handle, policy: PreemptionPolicy):
        self.plugin_name = plugin_name
        self.handle = handle
        self.policy = policy

    def preempt(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """(result, status) as in k8s: (None, Unschedulable) when not eligible, a cleared
        nomination plus an Unschedulable FitError when no node helps, (nomination, None)
        after evicting the victims of the chosen node."""
        nominated_status = (
            node_to_status.get(pod.nominated_node_name) if pod.nominated_node_name else None
        )
        eligible, reason = self.policy.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, Status(Code.UNSCHEDULABLE, reason)

        fwk = self.handle.framework_for(pod)
        if fwk is None:
            return None, Status(Code.ERROR, f"no profile for scheduler {pod.scheduler_name!r}")
        all_nodes = self.handle.snapshot().list()
        if not all_nodes:
            return None, Status(Code.ERROR, "no nodes available")
        candidates, statuses, errors = self.find_candidates(
            fwk, state, all_nodes, pod, node_to_status
        )
        if errors and not candidates:
            return None, Status(Code.ERROR, _aggregate(errors))
        if not candidates:
            statuses.absent_nodes_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL)
            fit = FitError(len(all_nodes), Diagnosis(node_to_status=statuses))
            return (
                PostFilterResult(NominatingInfo("", MODE_OVERRIDE)),
                Status(Code.UNSCHEDULABLE, str(fit)),
            )
        candidates, status = self.call_extenders(pod, candidates)
        if status is not None:
            return None, status
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, "no candidate node for preemption")
        status = self.prepare_candidate(best, pod)
        if status is not None:
            return None, status
        return PostFilterResult(NominatingInfo(best.name, MODE_OVERRIDE)), None

    def call_extenders(
        self, pod: Pod, candidates: list[Candidate]
    ) -> tuple[list[Candidate], Status | None]:
        """k8s callExtenders: extenders that support preemption may narrow the candidates."""
        extenders = self.handle.extenders()
        if not extenders or not candidates:
            return candidates, None
        victims = {c.name: Victims(list(c.victims), c.num_pdb_violations) for c in candidates}
        nodes = self.handle.snapshot()
        for extender in extenders:
            if not extender.supports_preemption or not extender.is_interested(pod):
                continue
            try:
                result = extender.process_preemption(pod, victims, nodes)
            except ExtenderError as err:
                if extender.ignorable:
                    continue
                return [], Status(Code.ERROR, str(err))
            for node_name, node_victims in list(result.items()):
                if not node_victims.pods:
                    if extender.ignorable:
                        del result[node_name]
                        continue
                    return [], Status(
                        Code.ERROR, f'expected at least one victim pod on node "{node_name}"'
                    )
            victims = result
            if not victims:
                break
        # Keep the dry run's order (k8s iterates a map: any order is faithful).
        order = {c.name: i for i, c in enumerate(candidates)}
        return [
            Candidate(name, list(v.pods), v.num_pdb_violations)
            for name, v in sorted(victims.items(), key=lambda kv: order.get(kv[0], len(order)))
        ], None

    def find_candidates(
        self,
        fwk: Framework,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: Pod,
        node_to_status: NodeToStatus,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Dry-runs preemption on the nodes that failed with plain Unschedulable."""
        potential = nodes_for_status_code(node_to_status, all_nodes, Code.UNSCHEDULABLE)
        if not potential:
            return [], NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)), []
        pdbs = pod_disruption_budgets(self.handle.objects("PodDisruptionBudget"))
        offset, num_candidates = self.policy.get_offset_and_num_candidates(pod, len(potential))
        return self.dry_run_preemption(fwk, state, pod, potential, pdbs, offset, num_candidates)

    def dry_run_preemption(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        potential: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Candidates (non-violating first), statuses of the nodes that cannot help, errors.

        Nodes are tried from ``offset`` round the list and the search stops once there are
        ``num_candidates`` candidates including at least one that violates no PDB. The
        statuses and errors are what Preempt reports when there is no candidate; with
        candidates they leave out the nodes the policy's ``hopeless`` test ruled out, and
        are empty when the policy's ``candidates_by_sums`` found them.
        """
        kept = DryRunCandidates(num_candidates)
        statuses = NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        n = len(potential)
        # A node without a lower-priority pod gets select_victims_on_node's "no victims"
        # status straight away: it would return it before changing the (cloned) node or
        # state (defaultpreemption's SelectVictimsOnNode returns as soon as it finds no
        # potential victim), so the two clones are skipped.
        victimless = getattr(self.policy, "victimless_status", None)
        many = getattr(self.policy, "victimless_statuses", None)
        if many is not None:
            order = [potential[(offset + i) % n] for i in range(n)]
            every = many(pod, order)
            if every is not None:
                # No node has a potential victim (e.g. every pod has the preemptor's
                # priority): the loop below would record exactly these, in this order.
                found = statuses.explicit()
                for node_info, status in zip(order, every, strict=True):
                    found[node_info.name] = status
                return [], statuses, []
        by_sums = getattr(self.policy, "candidates_by_sums", None)
        if by_sums is not None:
            found = by_sums(fwk, state, pod, potential, offset, pdbs, num_candidates)
            if found:
                return found, statuses, []
        hopeless_test = getattr(self.policy, "hopeless", None)
        hopeless = hopeless_test(fwk, state, pod) if hopeless_test is not None else None
        # The nodes that cannot help, in the order tried, with their status (None: ruled
        # out by ``hopeless``, the status found only if it is reported).
        failed: list[tuple[NodeInfo, Status | None]] = []
        for i in range(n):
            node_info = potential[(offset + i) % n]
            if victimless is not None:
                quick = victimless(pod, node_info)
                if quick is not None:
                    failed.append((node_info, quick))
                    continue
            if hopeless is not None and hopeless(node_info):
                failed.append((node_info, None))
                continue
            candidate, status = self._select_victims(fwk, state, pod, node_info, pdbs)
            if candidate is None:
                failed.append((node_info, status))
                continue
            if kept.add(candidate):
                break
        candidates = kept.all()
        errors: list[str] = []
        explicit = statuses.explicit()
        for node_info, status in failed:
            if status is None:
                if candidates:
                    continue  # not reported
                _, status = self._select_victims(fwk, state, pod, node_info, pdbs)
            if status is not None:
                if status.code == Code.ERROR:
                    errors.append(status.message)
                explicit[node_info.name] = status
        return candidates, statuses, errors

    def _select_victims(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[Candidate | None, Status | None]:
        """The policy's select_victims_on_node on clones of the node and the state: a
        candidate, or the node's status."""
        victims, num_violations, status = self.policy.select_victims_on_node(
            fwk, state.clone(), pod, node_info.clone(), pdbs
        )
        if status is None and victims:
            return Candidate(node_info.name, victims, num_violations), None
        if status is None:
            status = Status(
                Code.ERROR, f'expected at least one victim pod on node "{node_info.name}"'
            )
        return None, status

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        name = pick_one_node_for_preemption(candidates)
        for c in candidates:
            if c.name == name:
                return c
        return candidates[0]

    def prepare_candidate(self, candidate: Candidate, pod: Pod) -> Status | None:
        """Evicts the victims (rejecting waiting ones) and clears the nominations of
        lower-priority pods on the node, which may no longer fit there."""
        handle = self.handle
        for victim in candidate.victims:
            if victim.deletion_timestamp:
                continue  # graceful deletion already started
            waiting = handle.get_waiting_pod(victim.uid)
            if waiting is not None:
                waiting.reject(self.plugin_name, "preempted")
                continue
            handle.delete_pod(victim, pod.key)
        priority = pod.priority
        for info in handle.nominated_pods_for_node(candidate.name):
            if info.pod.priority < priority and info.pod.uid != pod.uid:
                handle.set_nominated_node(info.pod, "")
        return None


__all__ = [
    "NOT_HELPFUL",
    "Candidate",
    "Evaluator",
    "PodDisruptionBudget",
    "PreemptionPolicy",
    "filter_pods_with_pdb_violation",
    "importance_key",
    "nodes_for_status_code",
    "pick_key",
    "pick_one_node_for_preemption",
    "pod_disruption_budgets",
    "pod_start_time",
]
