"""What PodTopologySpread's filtering and scoring share: parsed constraints and pod counting.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/common.go (topologySpreadConstraint,
filterTopologySpreadConstraints, buildDefaultConstraints, countPodsMatchSelector,
nodeLabelsMatchSpreadConstraints) and pkg/scheduler/framework/plugins/helper/spread.go
(DefaultSelector).

Pods without constraints of their own get the default constraints: with ``defaultingType:
System`` hostname (maxSkew 3) and zone (maxSkew 5), both ScheduleAnyway
(pkg/scheduler/apis/config/v1/defaults.go: systemDefaultConstraints), selecting the pods of the
Services, ReplicationController, ReplicaSet or StatefulSet the pod belongs to. The selector is
derived from the Service/ReplicationController/ReplicaSet/StatefulSet objects the cluster holds
(``handle.objects``), exactly as ``helper.DefaultSelector`` does; a pod whose owner object is
not in the cluster is only selected through its Services.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.quantity import expect_int, expect_list, expect_mapping, expect_str
from wasmsched.api.selectors import IN, LabelSelector, LabelSelectorRequirement
from wasmsched.api.taints import find_untolerated_taint
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.node_counts import (
    ComputeFn,
    NodeChanges,
    NodeCounts,
    counts_for,
    selector_key,
)
from wasmsched.plugins.taint_toleration import DO_NOT_SCHEDULE_EFFECTS

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.api.selectors import RequiredNodeAffinity
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.node_info import NodeInfo, PodInfo

NAME = "PodTopologySpread"

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


def _spec_key(value: Any) -> str:
    """A hashable rendering of a piece of pod spec (equal specs, equal keys)."""
    return json.dumps(value, sort_keys=True, default=str)


class SpreadBase:
    """The configuration, constraint building and counts PodTopologySpread's halves share.

    The attributes are set by ``PodTopologySpread.__init__`` (plugin.go: New upstream).
    ``incremental`` False recounts every node in each cycle, as upstream does (the tests
    compare both ways); True keeps the per-domain counts across cycles (plugins/node_counts).
    """

    handle: Handle | None
    system_defaulted: bool
    default_constraints: tuple[Mapping[str, Any], ...]
    incremental: bool = True
    _default_actions: frozenset[Any]
    _objects: ObjectsFn
    _skip: Status
    _incremental: dict[tuple[Any, ...], NodeCounts]
    _changes: NodeChanges

    def _node_counts(
        self,
        tag: str,
        pod: Pod,
        constraints: Sequence[Constraint],
        nodes: Sequence[NodeInfo],
        outputs: int,
        compute: ComputeFn,
        cycle: object = None,
    ) -> NodeCounts:
        """The counts kept for pods that count like ``pod`` under ``constraints``.

        What a node contributes depends on the constraints' keys, selectors and inclusion
        policies, the pod's namespace and, when a policy is honored, its required node
        affinity or its tolerations: all of them are in the key, so that pods that count
        differently never share counts. ``cycle`` is the cycle's state (NodeChanges.advance).
        """
        required = pod.required_node_affinity
        affinity = None
        if not required.is_empty and any(c.honor_node_affinity for c in constraints):
            spec = pod.spec
            node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
            affinity = _spec_key(
                [
                    spec.get("nodeSelector"),
                    node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"),
                ]
            )
        tolerations = None
        if any(c.honor_node_taints for c in constraints):
            tolerations = _spec_key(pod.spec.get("tolerations"))
        key = (
            tag,
            pod.namespace,
            tuple(
                (
                    c.topology_key,
                    selector_key(c.selector),
                    c.honor_node_affinity,
                    c.honor_node_taints,
                )
                for c in constraints
            ),
            affinity,
            tolerations,
        )
        self._changes.advance(nodes, cycle)
        return counts_for(self._incremental, key, outputs, nodes, compute, self._changes)

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


def _not_found(key: str) -> Status:
    return Status(Code.ERROR, f'reading "{key}" from cycleState: not found')
