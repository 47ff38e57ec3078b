"""PodTopologySpread: a pod's topologySpreadConstraints (or the cluster defaults) as filter and score.

k8s ``plugins/podtopologyspread`` (v1.33). DoNotSchedule constraints filter: PreFilter counts the
matching pods per topology domain, one count map per constraint, over the nodes that pass the
constraint's node inclusion policies; Filter rejects a node when placing the pod there would make
``matching(domain) + self - globalMin > maxSkew``. ScheduleAnyway constraints score: fewer
matching pods in the node's domains scores higher, each constraint weighted by
``log(domains + 2)``.

Pods without constraints of their own get the default constraints: with ``defaultingType:
System`` hostname (maxSkew 3) and zone (maxSkew 5), both ScheduleAnyway, selecting the pods of
the Services, ReplicationController, ReplicaSet or StatefulSet the pod belongs to. The selector is
derived from the Service/ReplicationController/ReplicaSet/StatefulSet objects the cluster holds
(``handle.objects``), exactly as kube-scheduler's ``helper.DefaultSelector`` does; a pod whose
owner object is not in the cluster is only selected through its Services.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.quantity import expect_int, expect_list, expect_mapping, expect_str
from wasmsched.api.selectors import IN, LabelSelector, LabelSelectorRequirement
from wasmsched.api.taints import find_untolerated_taint
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.taint_toleration import DO_NOT_SCHEDULE_EFFECTS
from wasmsched.queue.events import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.api.selectors import RequiredNodeAffinity
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, NodeScore
    from wasmsched.framework.node_info import NodeInfo, PodInfo

NAME = "PodTopologySpread"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

_MAX_INT32 = 2**31 - 1
_SPREAD = "topologySpreadConstraints"

ObjectsFn = Callable[[str], Sequence[Mapping[str, Any]]]


class Constraint:
    """A parsed TopologySpreadConstraint (the internal ``topologySpreadConstraint``)."""

    __slots__ = (
        "honor_node_affinity",
        "honor_node_taints",
        "max_skew",
        "min_domains",
        "selector",
        "topology_key",
    )

    def __init__(
        self,
        max_skew: int,
        topology_key: str,
        selector: LabelSelector,
        min_domains: int = 1,
        honor_node_affinity: bool = True,
        honor_node_taints: bool = False,
    ) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.honor_node_affinity = honor_node_affinity
        self.honor_node_taints = honor_node_taints

    def includes_node(self, pod: Pod, node: Node, required: RequiredNodeAffinity) -> bool:
        """matchNodeInclusionPolicies: whether ``node`` counts towards this constraint."""
        if self.honor_node_affinity and not required.matches(node.labels, node.name):
            return False
        return not (
            self.honor_node_taints
            and find_untolerated_taint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
            is not None
        )

    def __repr__(self) -> str:
        return (
            f"Constraint({self.max_skew}, {self.topology_key!r}, {self.selector!r}, "
            f"min_domains={self.min_domains}, affinity={self.honor_node_affinity}, "
            f"taints={self.honor_node_taints})"
        )


def _policy(value: Any, path: str, default: bool) -> bool:
    """A NodeInclusionPolicy as "honored?"; absent means ``default``."""
    text = expect_str(value, path)
    if not text:
        return default
    if text not in (HONOR, IGNORE):
        raise ValueError(f"{path}: unsupported value {text!r} (expected Honor or Ignore)")
    return text == HONOR


def _merge_match_labels(match: Mapping[str, str], selector: LabelSelector) -> LabelSelector:
    """mergeLabelSetWithSelector: the pod's matchLabelKeys values ANDed with the selector."""
    if selector.is_nothing:
        # A nothing selector has no requirements to carry over (labels.Nothing().Requirements()).
        return LabelSelector(match)
    exprs = [LabelSelectorRequirement(k, IN, (v,)) for k, v in selector.match_labels.items()]
    exprs.extend(selector.match_expressions)
    return LabelSelector(match, exprs)


def filter_constraints(
    raw: Sequence[Any], pod_labels: Mapping[str, str], action: str, path: str = _SPREAD
) -> list[Constraint]:
    """filterTopologySpreadConstraints: the constraints with ``whenUnsatisfiable == action``.

    Raises ValueError (with the field path) for a constraint that does not parse.
    """
    out: list[Constraint] = []
    for i, item in enumerate(raw):
        p = f"{path}[{i}]"
        c = expect_mapping(item, p)
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = LabelSelector.from_dict(c.get("labelSelector"), f"{p}.labelSelector")
        keys = expect_list(c.get("matchLabelKeys"), f"{p}.matchLabelKeys")
        if keys:
            match = {k: pod_labels[k] for k in keys if k in pod_labels}
            if match:
                selector = _merge_match_labels(match, selector)
        min_domains = expect_int(c.get("minDomains"), f"{p}.minDomains")
        out.append(
            Constraint(
                expect_int(c.get("maxSkew"), f"{p}.maxSkew") or 0,
                expect_str(c.get("topologyKey"), f"{p}.topologyKey"),
                selector,
                1 if min_domains is None else min_domains,
                _policy(c.get("nodeAffinityPolicy"), f"{p}.nodeAffinityPolicy", True),
                _policy(c.get("nodeTaintsPolicy"), f"{p}.nodeTaintsPolicy", False),
            )
        )
    return out


def _namespace_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default")


def _controller_ref(pod: Pod) -> Mapping[str, Any] | None:
    for ref in pod.owner_references:
        if ref.get("controller") is True:
            return ref
    return None


def default_selector(pod: Pod, objects: ObjectsFn) -> LabelSelector:
    """helper.DefaultSelector: the selectors of the pod's Services and controlling owner, ANDed.

    Services in the pod's namespace whose (non-null) selector matches the pod contribute their
    selector; a ReplicationController (``v1``) its selector map; a ReplicaSet or StatefulSet
    (``apps/v1``) the requirements of its label selector.
    """
    ns = pod.namespace
    labels = pod.labels
    label_set: dict[str, str] = {}
    for svc in objects("Service"):
        if _namespace_of(svc) != ns:
            continue
        sel = (svc.get("spec") or {}).get("selector")
        if not isinstance(sel, Mapping):
            continue  # a Service with a null selector selects nothing
        if all(labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)
    exprs: list[LabelSelectorRequirement] = []
    owner = _controller_ref(pod)
    if owner is not None:
        kind = (owner.get("apiVersion"), owner.get("kind"))
        target = None
        if kind == ("v1", "ReplicationController"):
            target = "ReplicationController"
        elif kind in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
            target = str(kind[1])
        if target is not None:
            obj = _find(objects(target), ns, owner.get("name"))
            if obj is not None:
                sel = (obj.get("spec") or {}).get("selector")
                if target == "ReplicationController":
                    if isinstance(sel, Mapping):
                        label_set.update({str(k): str(v) for k, v in sel.items()})
                else:
                    try:
                        parsed = LabelSelector.from_dict(sel)
                    except ValueError:
                        parsed = LabelSelector.nothing()
                    if not parsed.is_nothing:
                        exprs.extend(
                            LabelSelectorRequirement(k, IN, (v,))
                            for k, v in parsed.match_labels.items()
                        )
                        exprs.extend(parsed.match_expressions)
    return LabelSelector(label_set, exprs)


def _find(objs: Sequence[Mapping[str, Any]], ns: str, name: Any) -> Mapping[str, Any] | None:
    for obj in objs:
        if _namespace_of(obj) == ns and (obj.get("metadata") or {}).get("name") == name:
            return obj
    return None


def _no_objects(kind: str) -> Sequence[Mapping[str, Any]]:
    return ()


def count_matching(pods: Sequence[PodInfo], selector: LabelSelector, ns: str) -> int:
    """countPodsMatchSelector: pods of namespace ``ns``, not terminating, matching ``selector``."""
    n = 0
    for pi in pods:
        p = pi.pod
        if p.namespace != ns or p.deletion_timestamp:
            continue
        if selector.matches(p.labels):
            n += 1
    return n


def _has_all_keys(labels: Mapping[str, str], keys: Sequence[str]) -> bool:
    for k in keys:  # noqa: SIM110  (a plain loop is faster on this hot path)
        if k not in labels:
            return False
    return True


def round_half_away(x: float) -> int:
    """math.Round of Go: halves round away from zero."""
    r = math.floor(x)
    if x - r >= 0.5:
        r += 1
    return int(r)


class CriticalPaths:
    """The two domains with the fewest matching pods; ``n0`` is always the minimum.

    Kept exactly as k8s keeps its ``criticalPaths`` so that AddPod/RemovePod during preemption
    move the minimum the same way.
    """

    __slots__ = ("n0", "n1", "v0", "v1")

    def __init__(self) -> None:
        self.v0 = ""
        self.n0 = _MAX_INT32
        self.v1 = ""
        self.n1 = _MAX_INT32

    def update(self, value: str, num: int) -> None:
        if value == self.v0:
            self.n0 = num
        elif value == self.v1:
            self.n1 = num
        else:
            if num < self.n0:
                self.v1, self.n1 = self.v0, self.n0
                self.v0, self.n0 = value, num
            elif num < self.n1:
                self.v1, self.n1 = value, num
            return
        if self.n0 > self.n1:
            self.v0, self.n0, self.v1, self.n1 = self.v1, self.n1, self.v0, self.n0

    def copy(self) -> CriticalPaths:
        c = CriticalPaths()
        c.v0, c.n0, c.v1, c.n1 = self.v0, self.n0, self.v1, self.n1
        return c

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.v0, self.n0), (self.v1, self.n1)


class _PreFilterState:
    """Counts per constraint (domain value -> matching pods) and each constraint's minimum."""

    __slots__ = ("constraints", "counts", "paths", "rows", "self_match")

    def __init__(
        self,
        constraints: list[Constraint],
        counts: list[dict[str, int]],
        paths: list[CriticalPaths],
        self_match: list[int],
    ) -> None:
        self.constraints = constraints
        self.counts = counts
        self.paths = paths
        self.self_match = self_match
        # What Filter reads per constraint, hoisted so that a node costs dict lookups only.
        self.rows = [
            (c.topology_key, c.max_skew - self_match[i], c.min_domains, counts[i], paths[i])
            for i, c in enumerate(constraints)
        ]

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.constraints,
            [dict(d) for d in self.counts],
            [p.copy() for p in self.paths],
            self.self_match,
        )


class _PreScoreState:
    __slots__ = ("constraints", "counts", "ignored", "namespace", "rows", "weights")

    def __init__(
        self,
        constraints: list[Constraint],
        counts: list[dict[str, int]],
        weights: list[float],
        ignored: set[str],
        namespace: str,
    ) -> None:
        self.constraints = constraints
        self.counts = counts
        self.weights = weights
        self.ignored = ignored
        self.namespace = namespace
        self.rows = [
            (
                c.topology_key,
                c.topology_key == LABEL_HOSTNAME,
                c.selector,
                counts[i],
                weights[i],
                float(c.max_skew - 1),
            )
            for i, c in enumerate(constraints)
        ]

    def clone(self) -> _PreScoreState:
        return self


class PodTopologySpread:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = dict(args or {})
        self.handle = handle
        defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ValueError(f"PodTopologySpreadArgs: defaultingType: unsupported {defaulting!r}")
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[Mapping[str, Any], ...] = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            self.default_constraints = tuple(args.get("defaultConstraints") or ())
        # Which actions the defaults have at all: a pod without constraints of its own needs
        # no Service lookup for an action no default constraint has.
        self._default_actions = frozenset(
            c.get("whenUnsatisfiable") for c in self.default_constraints if isinstance(c, Mapping)
        )
        objects = getattr(handle, "objects", None)
        self._objects: ObjectsFn = objects if callable(objects) else _no_objects
        self._skip = Status(Code.SKIP)
        self._unschedulable = Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        self._missing_label = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH
        )

    # --- constraints ------------------------------------------------------------------

    def constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's constraints with ``action``, or the default ones when it has none.

        Raises ValueError for constraints that do not parse.
        """
        raw = pod.spec.get(_SPREAD)
        if raw:
            return filter_constraints(expect_list(raw, _SPREAD), pod.labels, action)
        return self.build_default_constraints(pod, action)

    def build_default_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """buildDefaultConstraints: the defaults with ``action``, selecting the pod's workload."""
        if action not in self._default_actions:
            return []
        constraints = filter_constraints(
            self.default_constraints, pod.labels, action, "defaultConstraints"
        )
        if not constraints:
            return constraints
        selector = default_selector(pod, self._objects)
        if selector.is_empty:
            return []
        for c in constraints:
            c.selector = selector
        return constraints

    # --- PreFilter / Filter -----------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[None, Status | None]:
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ValueError as e:
            return None, Status(
                Code.ERROR,
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}",
            )
        if not constraints:
            return None, self._skip
        state.write(PRE_FILTER_KEY, self._pre_filter_state(pod, constraints, nodes))
        return None, None

    def _pre_filter_state(
        self, pod: Pod, constraints: list[Constraint], nodes: Sequence[NodeInfo]
    ) -> _PreFilterState:
        keys = [c.topology_key for c in constraints]
        counts: list[dict[str, int]] = [{} for _ in constraints]
        required = pod.required_node_affinity
        always_affinity = required.is_empty
        ns = pod.namespace
        # (count map, key, selector, whether the node inclusion policies need checking)
        rows = [
            (
                counts[i],
                c.topology_key,
                c.selector,
                (c.honor_node_affinity and not always_affinity) or c.honor_node_taints,
                c,
            )
            for i, c in enumerate(constraints)
        ]
        for ni in nodes:
            node = ni.node
            labels = node.labels
            for k in keys:
                if k not in labels:
                    break
            else:
                pods = ni.pods
                for d, key, selector, check, c in rows:
                    if check and not c.includes_node(pod, node, required):
                        continue
                    value = labels[key]
                    d[value] = d.get(value, 0) + (count_matching(pods, selector, ns) if pods else 0)
        paths = []
        for d in counts:
            cp = CriticalPaths()
            for value, num in d.items():
                cp.update(value, num)
            paths.append(cp)
        labels = pod.labels
        self_match = [1 if c.selector.matches(labels) else 0 for c in constraints]
        return _PreFilterState(constraints, counts, paths, self_match)

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod, pod_info_to_add.pod, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod, pod_info_to_remove.pod, node_info, -1)

    def _update_with_pod(
        self, state: CycleState, pod: Pod, updated: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        if updated.namespace != pod.namespace:
            return None
        node = node_info.node
        labels = node.labels
        constraints = s.constraints
        if not _has_all_keys(labels, [c.topology_key for c in constraints]):
            return None
        required = pod.required_node_affinity
        pod_labels = updated.labels
        for i, c in enumerate(constraints):
            if not c.selector.matches(pod_labels):
                continue
            if not c.includes_node(pod, node, required):
                continue
            value = labels[c.topology_key]
            d = s.counts[i]
            d[value] = d.get(value, 0) + delta
            s.paths[i].update(value, d[value])
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        labels = node_info.node.labels
        for key, budget, min_domains, counts, paths in s.rows:
            value = labels.get(key)
            if value is None:
                return self._missing_label
            # Fewer eligible domains than minDomains: the global minimum counts as 0.
            min_match = paths.n0 if len(counts) >= min_domains else 0
            # matching + selfMatch - minMatch > maxSkew, with selfMatch folded into budget.
            if counts.get(value, 0) - min_match > budget:
                return self._unschedulable
        return None

    # --- PreScore / Score ---------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self.handle.snapshot().node_infos if self.handle is not None else nodes
        if not all_nodes:
            return self._skip
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        except ValueError as e:
            return Status(
                Code.ERROR,
                f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}",
            )
        if not constraints:
            return self._skip
        # Only non-system-default spreading requires every topology label: this lets nodes
        # without a zone label still get hostname spreading.
        require_all = bool(pod.spec.get(_SPREAD)) or not self.system_defaulted
        keys = [c.topology_key for c in constraints]
        counts: list[dict[str, int]] = [{} for _ in constraints]
        by_domain = [
            (i, c.topology_key)
            for i, c in enumerate(constraints)
            if c.topology_key != LABEL_HOSTNAME
        ]
        ignored: set[str] = set()
        for ni in nodes:
            labels = ni.node.labels
            if require_all and not _has_all_keys(labels, keys):
                ignored.add(ni.name)
                continue
            for i, key in by_domain:
                counts[i].setdefault(labels.get(key, ""), 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(counts[i])
            if c.topology_key == LABEL_HOSTNAME:
                size = len(nodes) - len(ignored)
            weights.append(math.log(size + 2))
        if by_domain:
            self._count_domains(pod, constraints, by_domain, counts, all_nodes, require_all)
        state.write(
            PRE_SCORE_KEY, _PreScoreState(constraints, counts, weights, ignored, pod.namespace)
        )
        return None

    @staticmethod
    def _count_domains(
        pod: Pod,
        constraints: list[Constraint],
        by_domain: list[tuple[int, str]],
        counts: list[dict[str, int]],
        all_nodes: Sequence[NodeInfo],
        require_all: bool,
    ) -> None:
        """Adds the matching pods of every eligible node to its (candidate) domains."""
        keys = [c.topology_key for c in constraints]
        required = pod.required_node_affinity
        always_affinity = required.is_empty
        ns = pod.namespace
        for ni in all_nodes:
            pods = ni.pods
            if not pods:
                continue
            node = ni.node
            labels = node.labels
            if require_all and not _has_all_keys(labels, keys):
                continue
            for i, key in by_domain:
                d = counts[i]
                value = labels.get(key, "")
                if value not in d:
                    continue  # a domain of no candidate node does not matter
                c = constraints[i]
                if (
                    (c.honor_node_affinity and not always_affinity) or c.honor_node_taints
                ) and not c.includes_node(pod, node, required):
                    continue
                d[value] += count_matching(pods, c.selector, ns)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, _not_found(PRE_SCORE_KEY)
        if node_info.name in s.ignored:
            return 0, None
        labels = node_info.node.labels
        total = 0.0
        for key, is_host, selector, counts, weight, skew_bonus in s.rows:
            value = labels.get(key)
            if value is None:
                continue
            if is_host:
                cnt = count_matching(node_info.pods, selector, s.namespace)
            else:
                cnt = counts.get(value, 0)
            total += cnt * weight + skew_bonus
        return round_half_away(total), None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return _not_found(PRE_SCORE_KEY)
        ignored = s.ignored
        min_score = math.inf
        max_score = 0
        for ns in scores:
            if ns.name in ignored:
                continue
            if ns.score < min_score:
                min_score = ns.score
            if ns.score > max_score:
                max_score = ns.score
        for ns in scores:
            if ns.name in ignored:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                # Fewer matching pods is better: invert within [min, max].
                ns.score = MAX_NODE_SCORE * (max_score + int(min_score) - ns.score) // max_score
        return None

    def score_extensions(self) -> PodTopologySpread:
        return self

    # --- queueing hints -------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = (
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE
        )
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, node_actions), self.is_schedulable_after_node_change
            ),
        ]

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: Pod | None, new_obj: Pod | None
    ) -> QueueingHint:
        """Queue for an assigned pod in the namespace that starts or stops matching a selector."""
        if (new_obj is not None and not _involved(new_obj, pod)) or (
            old_obj is not None and not _involved(old_obj, pod)
        ):
            return QueueingHint.QUEUE_SKIP
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ValueError:
            return QueueingHint.QUEUE
        if new_obj is not None and old_obj is not None:
            if (
                new_obj.uid == pod.uid
                and new_obj.tolerations != old_obj.tolerations
                and any(c.honor_node_taints for c in constraints)
            ):
                return QueueingHint.QUEUE
            if new_obj.labels == old_obj.labels:
                return QueueingHint.QUEUE_SKIP
            for c in constraints:
                if c.selector.matches(old_obj.labels) != c.selector.matches(new_obj.labels):
                    return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        changed = new_obj if new_obj is not None else old_obj
        if changed is not None and any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Node | None, new_obj: Node | None
    ) -> QueueingHint:
        """Queue when a node gains, loses or changes the constraints' topology labels."""
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ValueError:
            return QueueingHint.QUEUE
        keys = [c.topology_key for c in constraints]
        old_match = old_obj is not None and _has_all_keys(old_obj.labels, keys)
        new_match = new_obj is not None and _has_all_keys(new_obj.labels, keys)
        if old_obj is not None and new_obj is not None:
            if old_match != new_match:
                return QueueingHint.QUEUE
            if new_match and (
                any(old_obj.labels.get(k) != new_obj.labels.get(k) for k in keys)
                or old_obj.taints != new_obj.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new_obj is not None:
            return QueueingHint.QUEUE if new_match else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_match else QueueingHint.QUEUE_SKIP


def _involved(changed: Pod, pod: Pod) -> bool:
    """involvedInTopologySpreading: the pod itself, or an assigned pod of its namespace."""
    return changed.uid == pod.uid or (
        bool(changed.node_name) and changed.namespace == pod.namespace
    )


def _not_found(key: str) -> Status:
    return Status(Code.ERROR, f'reading "{key}" from cycleState: not found')


def new(args: dict[str, Any], handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args, handle)
