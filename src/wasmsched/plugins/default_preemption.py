"""DefaultPreemption: evict lower-priority pods so that an unschedulable pod fits
(k8s ``plugins/defaultpreemption/default_preemption.go``, v1.33, async preemption off)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.resources import Resource
from wasmsched.framework.nominated import counted
from wasmsched.framework.status import Code, Status
from wasmsched.plugins import node_resources_fit as fit
from wasmsched.plugins.preemption import (
    Candidate,
    DryRunCandidates,
    Evaluator,
    PodDisruptionBudget,
    filter_pods_with_pdb_violation,
    importance_key,
    pick_key,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, NodeToStatus, PostFilterResult
    from wasmsched.framework.node_info import NodeInfo, PodInfo
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.types import ClusterEventWithHint

NAME = "DefaultPreemption"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted with a DisruptionTarget=True condition set by the scheduler."""
    if not pod.deletion_timestamp:
        return False
    for cond in pod.status.get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == "DisruptionTarget":
            return bool(
                cond.get("status") == "True" and cond.get("reason") == "PreemptionByScheduler"
            )
    return False


class DefaultPreemption:
    name = NAME

    def __init__(self, min_percentage: int, min_absolute: int, handle: Handle) -> None:
        self.min_candidate_nodes_percentage = min_percentage
        self.min_candidate_nodes_absolute = min_absolute
        self.handle = handle
        self.evaluator = Evaluator(NAME, handle, self)
        # One status for every node without potential victims (read-only: the dry run
        # only counts its reason into the "preemption: 0/N nodes are available" message).
        self._no_victims = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
        # node name -> (the NodeInfo, its generation, the lowest priority of its pods)
        self._lowest: dict[str, tuple[NodeInfo, int, int | float]] = {}
        # The last _FitBound and what it was made of (the dry run's clones of the state
        # share the cycle's skip set and Fit's request).
        self._bound: tuple[tuple[object, ...], _FitBound | None] = ((), None)
        # node name -> (the NodeInfo, its generation, what the outcome was computed for,
        # the outcome): the dry run by sums of the previous preemptions, node by node.
        self._outcomes: dict[str, tuple[NodeInfo, int, tuple[object, ...], _Outcome]] = {}

    # --- PostFilter ---------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = self.evaluator.preempt(state, pod, filtered_node_status)
        if status is not None and status.message:
            return result, Status(status.code, "preemption: " + status.message)
        return result, status

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Without async preemption the plugin never rejects a pod: nothing to register.
        return []

    # --- the policy the evaluator calls -------------------------------------------------

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, pod: Pod, num_nodes: int) -> tuple[int, int]:
        # k8s draws the offset from a global source; a generator seeded by the pod keeps
        # simulations reproducible.
        offset = random.Random(f"{pod.uid}/{num_nodes}").randrange(num_nodes)
        return offset, self.calculate_num_candidates(num_nodes)

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        if pod.spec.get("preemptionPolicy") == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            # An unresolvable nominated node means the pod must look elsewhere.
            if (
                nominated_node_status is not None
                and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            node_info = self.handle.snapshot().get(nominated)
            if node_info is not None:
                priority = pod.priority
                for info in node_info.pods:
                    p = info.pod
                    if p.priority < priority and pod_terminating_by_preemption(p):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def victimless_status(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        """select_victims_on_node's answer for a node where no pod has a lower priority
        than ``pod`` (no potential victims: it returns before touching the node or the
        state, as SelectVictimsOnNode in
        pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go does);
        None when some pod there could be a victim."""
        return self._no_victims if pod.priority <= self._lowest_priority(node_info) else None

    def victimless_statuses(self, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Status] | None:
        """victimless_status of every node, in order, when none has a potential victim;
        None as soon as one has."""
        priority = pod.priority
        cache = self._lowest
        for node_info in nodes:
            cached = cache.get(node_info.name)
            if cached is not None and cached[0] is node_info and cached[1] == node_info.generation:
                lowest = cached[2]
            else:
                lowest = self._lowest_priority(node_info)
            if priority > lowest:
                return None
        return [self._no_victims] * len(nodes)

    def _lowest_priority(self, node_info: NodeInfo) -> int | float:
        """The lowest priority of the pods on the node (inf when none), kept per node until
        its NodeInfo changes (every pod added or removed bumps its generation)."""
        cached = self._lowest.get(node_info.name)
        if cached is not None and cached[0] is node_info and cached[1] == node_info.generation:
            return cached[2]
        lowest: int | float = min((i.pod.priority for i in node_info.pods), default=math.inf)
        self._lowest[node_info.name] = (node_info, node_info.generation, lowest)
        return lowest

    def hopeless(
        self, fwk: Framework, state: CycleState, pod: Pod
    ) -> Callable[[NodeInfo], bool] | None:
        """A test for the dry run: True for a node where ``select_victims_on_node`` would
        find that ``pod`` does not fit even with every lower-priority pod gone, because
        NodeResourcesFit's Filter would reject it (see ``_FitBound``); then no Filter or
        PreFilterExtensions call is needed there (its status only when the dry run ends
        without candidates). None when the test does not apply to this cycle."""
        bound = self._fit_bound(fwk, state, pod)
        if bound is None:
            return None
        priority = pod.priority

        def test(node_info: NodeInfo) -> bool:
            lower = [info for info in node_info.pods if info.pod.priority < priority]
            return bound.rejects(node_info, lower, bound.nominated(node_info))

        return test

    def _fit_bound(self, fwk: Framework, state: CycleState, pod: Pod) -> _FitBound | None:
        """_FitBound.of, made once per dry run."""
        key, bound = self._bound
        request = state.get(fit.PRE_FILTER_KEY)
        if not (
            key
            and key[0] is fwk
            and key[1] is pod
            and key[2] is state.skip_filter_plugins
            and key[3] is request
            and key[4] is state.recorder
            and key[5] is state.observer
        ):
            bound = _FitBound.of(fwk, state, pod, self.handle)
            made_of = (fwk, pod, state.skip_filter_plugins, request, state.recorder, state.observer)
            self._bound = (made_of, bound)
        return bound

    def candidates_by_sums(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        potential: Sequence[NodeInfo],
        offset: int,
        pdbs: Sequence[PodDisruptionBudget],
        num_candidates: int,
    ) -> list[Candidate] | None:
        """The dry run's candidates, in its order, computed on numbers: None when this
        cycle's Filter is not NodeResourcesFit plus plugins that read the node alone, or
        when a PreFilterExtensions plugin is active (its AddPod/RemovePod state would
        change with the victims). The dry run then goes node by node.

        Each node's SelectVictimsOnNode is then Fit's arithmetic (fit.go: fitsRequest,
        the same ``insufficient_amounts`` Filter calls) on the node's sums less its
        lower-priority pods, plus the nominated pods that count in
        RunFilterPluginsWithNominatedPods' first pass and without them in its second,
        each reprieve tried in SelectVictimsOnNode's order; the other plugins' verdict
        is the node's as it stands (they do not read its pods). A node's outcome is kept
        until the node, the preemptor's priority or request, or its nominated pods
        change, so a preemption recomputes only the nodes the previous ones touched.
        """
        bound = self._fit_bound(fwk, state, pod)
        if bound is None or bound.extensions or bound.request.delegated:
            return None
        skip = state.skip_filter_plugins
        others: list[Callable[[CycleState, Pod, NodeInfo], Status | None]] = []
        calls = dict(fwk.filter_calls)
        for plugin in fwk.filter_plugins:
            name = plugin.name
            if name in skip or name == fit.NAME:
                continue
            if not getattr(plugin, "filter_reads_node_alone", False):
                return None
            others.append(calls[name])
        request = bound.request
        priority = pod.priority
        # What every node's outcome depends on besides the node and its nominated pods.
        asked: tuple[object, ...] = (
            priority,
            request.milli_cpu,
            request.memory,
            request.ephemeral_storage,
            request.scalars,
        )
        cache = self._outcomes if not pdbs else {}
        nominated_pods = self.handle.nominated_pods_for_node
        lowest = self._lowest_priority
        found = DryRunCandidates(num_candidates)
        n = len(potential)
        for i in range(n):
            node_info = potential[(offset + i) % n]
            if priority <= lowest(node_info):
                continue  # no potential victim
            name = node_info.name
            nominated = nominated_pods(name)
            if nominated:
                nominated = counted(nominated, pod)
            added = _sums(node_info, nominated) if nominated else None
            key = asked if added is None else (*asked, added)
            cached = cache.get(name)
            if (
                cached is not None
                and cached[0] is node_info
                and cached[1] == node_info.generation
                and cached[2] == key
            ):
                outcome = cached[3]
            else:
                outcome = _victims_by_sums(bound, node_info, nominated, pdbs)
                cache[name] = (node_info, node_info.generation, key, outcome)
            if outcome is None or not _passes(others, state, pod, node_info):
                continue
            victims, num_violating, key = outcome
            if found.add(Candidate(name, list(victims), num_violating, key)):
                break
        return found.all()

    def select_victims_on_node(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest lower-priority pods to evict from ``node_info`` (a clone, as is
        ``state``): remove them all, check the pod fits, then add back as many as possible,
        PDB-violating ones first, most important first."""
        handle = self.handle
        # When no PreFilterExtensions plugin is active, the state needs no AddPod/RemovePod
        # calls, and a pod whose return NodeResourcesFit would reject stays a victim
        # without being added, filtered and removed again (which would leave the node and
        # the state as they were).
        bound = self._fit_bound(fwk, state, pod)
        if bound is not None and bound.extensions:
            bound = None
        extensions = bound is None
        # The nominated pods that count here (unchanged during the dry run).
        nominated = bound.nominated(node_info) if bound is not None else []

        def remove(info: PodInfo) -> Status | None:
            node_info.remove_pod(info.pod)
            if not extensions:
                return None
            return fwk.run_pre_filter_extension_remove_pod(state, pod, info, node_info)

        def add(info: PodInfo) -> Status | None:
            node_info.add_pod_info(info)
            if not extensions:
                return None
            return fwk.run_pre_filter_extension_add_pod(state, pod, info, node_info)

        priority = pod.priority
        potential = [info for info in node_info.pods if info.pod.priority < priority]
        for info in potential:
            status = remove(info)
            if status is not None:
                return [], 0, Status(Code.ERROR, status.message)
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)

        status = handle.run_filter_plugins_with_nominated_pods(fwk, state, pod, node_info)
        if status is not None:
            return [], 0, status

        potential.sort(key=lambda info: importance_key(info.pod))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        def reprieve(info: PodInfo) -> tuple[bool, Status | None]:
            if bound is not None and bound.rejects(node_info, (), [info, *nominated]):
                victims.append(info)
                return False, None
            err = add(info)
            if err is not None:
                return False, err
            fits = handle.run_filter_plugins_with_nominated_pods(fwk, state, pod, node_info)
            if fits is None:
                return True, None
            err = remove(info)
            if err is not None:
                return False, err
            victims.append(info)
            return False, None

        num_violating = 0
        for info in violating:
            fits, err = reprieve(info)
            if err is not None:
                return [], 0, Status(Code.ERROR, err.message)
            if not fits:
                num_violating += 1
        for info in non_violating:
            _, err = reprieve(info)
            if err is not None:
                return [], 0, Status(Code.ERROR, err.message)
        if violating and non_violating:
            victims.sort(key=lambda info: importance_key(info.pod))
        return [info.pod for info in victims], num_violating, None


# A node's dry run by sums: its victims (most important first), how many of them violate
# a PDB and the candidate's pick_key, or None when it yields no candidate.
_Outcome = tuple[tuple["Pod", ...], int, tuple[int, int, int, int, float]] | None


def _sums(node_info: NodeInfo, pods: Sequence[PodInfo]) -> tuple[object, ...]:
    """What ``pods`` add to ``node_info``'s requested sums and pod count, as a key."""
    total = Resource()
    requested_by = node_info.requested_by
    for info in pods:
        total.add(requested_by(info.pod))
    scalars = tuple(sorted(total.scalar.items()))
    return (total.milli_cpu, total.memory, total.ephemeral_storage, scalars, len(pods))


def _passes(
    filters: Sequence[Callable[[CycleState, Pod, NodeInfo], Status | None]],
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
) -> bool:
    """Whether every one of ``filters`` passes the node (RunFilterPlugins' verdict; a
    raised exception is an error status there)."""
    for filter_fn in filters:
        try:
            status = filter_fn(state, pod, node_info)
        except Exception:
            return False
        if status is not None and status.code != Code.SUCCESS:
            return False
    return True


def _victims_by_sums(
    bound: _FitBound,
    node_info: NodeInfo,
    nominated: Sequence[PodInfo],
    pdbs: Sequence[PodDisruptionBudget],
) -> _Outcome:
    """select_victims_on_node when NodeResourcesFit alone can reject the pod (see
    DefaultPreemption.candidates_by_sums): the same steps on the node's sums."""
    priority = bound.pod.priority
    potential = [info for info in node_info.pods if info.pod.priority < priority]
    if not potential:
        return None
    requested_by = node_info.requested_by
    request, alloc = bound.request, node_info.allocatable
    used = node_info.requested.copy()
    for info in potential:
        used.sub(requested_by(info.pod))
    count = len(node_info.pods) - len(potential)
    with_nominated: Resource | None = None
    if nominated:
        with_nominated = Resource()
        for info in nominated:
            with_nominated.add(requested_by(info.pod))
    extra = len(nominated)

    def fits() -> bool:
        # RunFilterPluginsWithNominatedPods: with the nominated pods, then without.
        if with_nominated is not None:
            both = used.copy()
            both.add(with_nominated)
            if fit.insufficient_amounts(request, alloc, both, count + extra) is not None:
                return False
        return fit.insufficient_amounts(request, alloc, used, count) is None

    if not fits():
        return None
    potential.sort(key=lambda info: importance_key(info.pod))
    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
    victims: list[PodInfo] = []
    num_violating = 0
    for group in (violating, non_violating):
        for info in group:
            amount = requested_by(info.pod)
            used.add(amount)
            count += 1
            if fits():
                continue
            used.sub(amount)
            count -= 1
            victims.append(info)
            if group is violating:
                num_violating += 1
    if not victims:
        return None  # SelectVictimsOnNode's "expected at least one victim": an error
    if violating and non_violating:
        victims.sort(key=lambda info: importance_key(info.pod))
    pods = tuple(info.pod for info in victims)
    return pods, num_violating, pick_key(pods, num_violating)


class _FitBound:
    """NodeResourcesFit's Filter verdict on a node's sums with some pods taken away and
    others added (fit.go: fitsRequest over the NodeInfo that SelectVictimsOnNode and
    RunFilterPluginsWithNominatedPods would build), without building it.

    When Fit would reject that node, the Filter run there fails whatever the other
    plugins say (the first failure wins), so its verdict is known. Used only where
    skipping the calls shows nowhere: no plugin with effects (a wasm guest's logs and
    state), no explain recorder or metrics observer on the cycle.
    """

    __slots__ = ("extensions", "handle", "pod", "request")

    def __init__(self, request: fit.PodRequest, pod: Pod, handle: Handle, extensions: bool) -> None:
        self.request = request
        self.pod = pod
        self.handle = handle
        # Whether a PreFilterExtensions plugin is active in this cycle.
        self.extensions = extensions

    @classmethod
    def of(cls, fwk: Framework, state: CycleState, pod: Pod, handle: Handle) -> _FitBound | None:
        """The bound for this cycle, or None when it does not apply."""
        if state.recorder is not None or state.observer is not None or fwk.filter_effects:
            return None
        skip = state.skip_filter_plugins
        if fit.NAME in skip or not any(
            p.name == fit.NAME and isinstance(p, fit.NodeResourcesFit) for p in fwk.filter_plugins
        ):
            return None
        extensions = False
        for p in fwk.pre_filter_plugins:
            if p.name in skip:
                continue
            if getattr(p, "filter_has_effects", False):
                return None
            if p.pre_filter_extensions() is not None:
                extensions = True
        request = state.get(fit.PRE_FILTER_KEY)
        if not isinstance(request, fit.PodRequest):
            return None
        return cls(request, pod, handle, extensions)

    def nominated(self, node_info: NodeInfo) -> list[PodInfo]:
        """The pods nominated to the node that count for the pod there: Filter runs with
        them added first (framework/nominated.py)."""
        return counted(self.handle.nominated_pods_for_node(node_info.name), self.pod)

    def rejects(
        self, node_info: NodeInfo, removed: Sequence[PodInfo], added: Sequence[PodInfo]
    ) -> bool:
        """Whether Fit rejects the pod on ``node_info`` less ``removed`` plus ``added``."""
        requested_by = node_info.requested_by
        used = node_info.requested.copy()
        for info in removed:
            used.sub(requested_by(info.pod))
        for info in added:
            used.add(requested_by(info.pod))
        count = len(node_info.pods) - len(removed) + len(added)
        found = fit.insufficient_amounts(self.request, node_info.allocatable, used, count)
        return found is not None


def new(args: dict[str, Any], handle: Handle) -> DefaultPreemption:
    pct = args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
    absolute = args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
    return DefaultPreemption(int(pct), int(absolute), handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, PostFilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PostFilterPlugin = &DefaultPreemption{}`
    # (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go).
    _post_filter: type[PostFilterPlugin] = DefaultPreemption
    _enqueue_extensions: type[EnqueueExtensions] = DefaultPreemption
