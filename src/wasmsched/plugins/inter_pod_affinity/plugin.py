"""InterPodAffinity: required pod (anti-)affinity filters, preferred terms score.

k8s ``plugins/interpodaffinity`` (v1.33). PreFilter counts, per topology pair, (1) the existing
pods whose required anti-affinity terms match the incoming pod, (2) the existing pods matching
all of the incoming pod's required affinity terms and (3) those matching each of its required
anti-affinity terms; Filter then needs only dictionary lookups per node. PreScore sums, per
topology pair, the weights of the preferred terms of the incoming pod matched by existing pods,
and of existing pods' preferred terms (and, with ``hardPodAffinityWeight``, their required
affinity terms) matched by the incoming pod.

Counts are nested dicts ``{topologyKey: {value: count}}`` so that lookups allocate nothing.
They are kept across cycles per kind of incoming pod and only the nodes whose NodeInfo changed
since the previous cycle are recounted (``_Incremental``); the result equals a full recount.

The API server merges ``matchLabelKeys``/``mismatchLabelKeys`` of pod affinity terms into the
label selector when a pod is created; manifests here never went through one, so the merge is
done when a pod's terms are parsed (it is idempotent for pods that did).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.quantity import expect_int, expect_list, expect_mapping, expect_str
from wasmsched.api.selectors import IN, NOT_IN, LabelSelector
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
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
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, NodeScore
    from wasmsched.framework.node_info import NodeInfo, PodInfo

NAME = "InterPodAffinity"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_EMPTY_LABELS: Mapping[str, str] = {}

Counts = dict[str, dict[str, int]]


class AffinityTerm:
    """A parsed PodAffinityTerm (framework.AffinityTerm), with its weight when preferred."""

    __slots__ = (
        "_ns_all",
        "_ns_none",
        "namespace_selector",
        "namespaces",
        "selector",
        "topology_key",
        "weight",
    )

    def __init__(
        self,
        namespaces: frozenset[str],
        selector: LabelSelector,
        topology_key: str,
        namespace_selector: LabelSelector,
        weight: int = 0,
    ) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector
        self.weight = weight
        self._ns_all = namespace_selector.is_empty
        self._ns_none = namespace_selector.is_nothing

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        """The pod is in one of the namespaces (or its namespace's labels match the namespace
        selector) and its labels match the selector."""
        if (
            pod.namespace in self.namespaces
            or self._ns_all
            or (
                not self._ns_none
                and self.namespace_selector.matches(
                    ns_labels if ns_labels is not None else _EMPTY_LABELS
                )
            )
        ):
            return self.selector.matches(pod.labels)
        return False

    def with_namespaces(self, namespaces: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
        """mergeAffinityTermNamespacesIfNotEmpty: the namespace selector unrolled into names."""
        if self._ns_all or self._ns_none:
            return self
        sel = self.namespace_selector
        names = {n for n, labels in namespaces.items() if sel.matches(labels)}
        return _intern(
            AffinityTerm(
                self.namespaces | names,
                self.selector,
                self.topology_key,
                LabelSelector.nothing(),
                self.weight,
            )
        )

    def __repr__(self) -> str:
        return (
            f"AffinityTerm({sorted(self.namespaces)}, {self.selector!r}, {self.topology_key!r}, "
            f"ns_selector={self.namespace_selector!r}, weight={self.weight})"
        )


class PodAffinityTerms:
    """A pod's parsed pod affinity terms (what k8s keeps in PodInfo)."""

    __slots__ = (
        "error",
        "preferred_affinity",
        "preferred_anti_affinity",
        "required_affinity",
        "required_anti_affinity",
    )

    def __init__(
        self,
        required_affinity: tuple[AffinityTerm, ...] = (),
        required_anti_affinity: tuple[AffinityTerm, ...] = (),
        preferred_affinity: tuple[AffinityTerm, ...] = (),
        preferred_anti_affinity: tuple[AffinityTerm, ...] = (),
        error: str = "",
    ) -> None:
        self.required_affinity = required_affinity
        self.required_anti_affinity = required_anti_affinity
        self.preferred_affinity = preferred_affinity
        self.preferred_anti_affinity = preferred_anti_affinity
        self.error = error


_NO_TERMS = PodAffinityTerms()
# id(pod) -> (pod, terms). The entry holds the pod, so its id cannot be reused while cached.
_TERMS_CACHE: dict[int, tuple[Pod, PodAffinityTerms]] = {}
_TERMS_CACHE_LIMIT = 200_000
# Equal terms of different pods (the replicas of a workload) share one object, so that a
# cycle matches each distinct term against the incoming pod once (see _Memo).
_INTERNED: dict[tuple[Any, ...], AffinityTerm] = {}


def _selector_key(sel: LabelSelector) -> tuple[Any, ...]:
    return (
        sel.is_nothing,
        tuple(sorted(sel.match_labels.items())),
        tuple((r.key, r.operator, r.values) for r in sel.match_expressions),
    )


def _intern(term: AffinityTerm) -> AffinityTerm:
    key = (
        term.namespaces,
        _selector_key(term.selector),
        term.topology_key,
        _selector_key(term.namespace_selector),
        term.weight,
    )
    got = _INTERNED.get(key)
    if got is None:
        if len(_INTERNED) >= _TERMS_CACHE_LIMIT:
            _INTERNED.clear()
        got = _INTERNED[key] = term
    return got


def _apply_label_keys(
    raw_selector: Any, match_keys: Sequence[Any], mismatch_keys: Sequence[Any], labels: Any
) -> Any:
    """The API server's merge of (mis)matchLabelKeys into a term's (non-null) label selector."""
    if raw_selector is None or not isinstance(raw_selector, Mapping):
        return raw_selector
    extra = [
        {"key": k, "operator": IN, "values": [labels[k]]} for k in match_keys if k in labels
    ] + [
        {"key": k, "operator": NOT_IN, "values": [labels[k]]} for k in mismatch_keys if k in labels
    ]
    if not extra:
        return raw_selector
    merged = dict(raw_selector)
    merged["matchExpressions"] = list(raw_selector.get("matchExpressions") or []) + extra
    return merged


def _parse_term(pod: Pod, raw: Any, path: str, weight: int = 0) -> AffinityTerm:
    m = expect_mapping(raw, path)
    selector_raw = _apply_label_keys(
        m.get("labelSelector"),
        expect_list(m.get("matchLabelKeys"), f"{path}.matchLabelKeys"),
        expect_list(m.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"),
        pod.labels,
    )
    selector = LabelSelector.from_dict(selector_raw, f"{path}.labelSelector")
    ns_list = expect_list(m.get("namespaces"), f"{path}.namespaces")
    ns_selector_raw = m.get("namespaceSelector")
    if not ns_list and ns_selector_raw is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(expect_str(n, f"{path}.namespaces") for n in ns_list)
    ns_selector = LabelSelector.from_dict(ns_selector_raw, f"{path}.namespaceSelector")
    return _intern(
        AffinityTerm(
            namespaces,
            selector,
            expect_str(m.get("topologyKey"), f"{path}.topologyKey"),
            ns_selector,
            weight,
        )
    )


def _parse_terms(pod: Pod, raw: Any, path: str, weighted: bool) -> tuple[AffinityTerm, ...]:
    out = []
    for i, item in enumerate(expect_list(raw, path)):
        p = f"{path}[{i}]"
        if weighted:
            w = expect_mapping(item, p)
            weight = expect_int(w.get("weight"), f"{p}.weight") or 0
            out.append(_parse_term(pod, w.get("podAffinityTerm"), f"{p}.podAffinityTerm", weight))
        else:
            out.append(_parse_term(pod, item, p))
    return tuple(out)


def parse_pod_affinity_terms(pod: Pod) -> PodAffinityTerms:
    """PodInfo.Update's term parsing: a list that fails to parse is dropped and reported."""
    raw = pod.spec.get("affinity")
    if not raw:
        return _NO_TERMS
    try:
        affinity = expect_mapping(raw, "spec.affinity")
        pa = expect_mapping(affinity.get("podAffinity"), "spec.affinity.podAffinity")
        anti = expect_mapping(affinity.get("podAntiAffinity"), "spec.affinity.podAntiAffinity")
    except ValueError as e:
        return PodAffinityTerms(error=str(e))
    if not pa and not anti:
        return _NO_TERMS
    errors: list[str] = []

    def parse(
        section: Mapping[str, Any], field: str, name: str, kind: str, weighted: bool
    ) -> tuple[AffinityTerm, ...]:
        try:
            return _parse_terms(pod, section.get(field), f"spec.affinity.{kind}.{field}", weighted)
        except ValueError as e:
            errors.append(f"{name}: {e}")
            return ()

    terms = PodAffinityTerms(
        parse(pa, _REQUIRED, "requiredAffinityTerms", "podAffinity", False),
        parse(anti, _REQUIRED, "requiredAntiAffinityTerms", "podAntiAffinity", False),
        parse(pa, _PREFERRED, "preferredAffinityTerms", "podAffinity", True),
        parse(anti, _PREFERRED, "preferredAntiAffinityTerms", "podAntiAffinity", True),
    )
    terms.error = ", ".join(errors)
    return terms


def pod_affinity_terms(pod: Pod) -> PodAffinityTerms:
    """The pod's parsed terms, parsed once per Pod object."""
    entry = _TERMS_CACHE.get(id(pod))
    if entry is not None and entry[0] is pod:
        return entry[1]
    terms = parse_pod_affinity_terms(pod)
    if terms is _NO_TERMS:
        return terms
    if len(_TERMS_CACHE) >= _TERMS_CACHE_LIMIT:
        _TERMS_CACHE.clear()
    _TERMS_CACHE[id(pod)] = (pod, terms)
    return terms


def matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms. The namespace selectors of the incoming
    pod's terms are already unrolled, so no namespace labels are needed."""
    if not terms:
        return False
    for t in terms:  # noqa: SIM110  (a plain loop is faster on this hot path)
        if not t.matches(pod, None):
            return False
    return True


def _bump(counts: Counts, labels: Mapping[str, str], key: str, delta: int) -> None:
    """Adds ``delta`` to the (key, node's value) pair; a pair down to zero is dropped."""
    value = labels.get(key)
    if value is None:
        return
    inner = counts.get(key)
    if inner is None:
        inner = counts[key] = {}
    n = inner.get(value, 0) + delta
    if n == 0:
        inner.pop(value, None)
        if not inner:
            del counts[key]
    else:
        inner[value] = n


def _positive(counts: Counts, key: str, value: str) -> bool:
    inner = counts.get(key)
    return inner is not None and inner.get(value, 0) > 0


class _Memo(dict[AffinityTerm, bool]):
    """Whether each (interned) term of existing pods matches the incoming pod, for one cycle."""

    __slots__ = ("ns_labels", "pod")

    def __init__(self, pod: Pod, ns_labels: Mapping[str, str]) -> None:
        super().__init__()
        self.pod = pod
        self.ns_labels = ns_labels

    def __missing__(self, term: AffinityTerm) -> bool:
        hit = self[term] = term.matches(self.pod, self.ns_labels)
        return hit


# (which count map, topology key, topology value, amount) that one node adds.
Contribution = tuple[int, str, str, int]
ComputeFn = Callable[["NodeInfo"], tuple[Contribution, ...]]
_INCREMENTAL_LIMIT = 16


class _Incremental:
    """Counts summed over nodes, kept across cycles for one kind of incoming pod.

    k8s recomputes every node's contribution in each cycle (in parallel); here a node's
    contribution is recomputed only when its NodeInfo changed (a new object or generation),
    and the totals are adjusted by the difference. Pairs down to zero are dropped.
    """

    __slots__ = ("contributing", "entries", "totals")

    def __init__(self, outputs: int) -> None:
        self.totals: list[Counts] = [{} for _ in range(outputs)]
        self.entries: dict[str, tuple[NodeInfo, int, tuple[Contribution, ...]]] = {}
        self.contributing = 0  # nodes with a non-empty contribution

    def update(self, nodes: Sequence[NodeInfo], compute: ComputeFn) -> None:
        entries = self.entries
        for ni in nodes:
            e = entries.get(ni.name)
            if e is not None and e[0] is ni and e[1] == ni.generation:
                continue
            contrib = compute(ni)
            if e is not None and e[2]:
                self._apply(e[2], -1)
            if contrib:
                self._apply(contrib, 1)
            entries[ni.name] = (ni, ni.generation, contrib)
        # Every listed node has an entry now: more entries means nodes that left the list.
        if len(entries) > len(nodes):
            names = {ni.name for ni in nodes}
            for name in [n for n in entries if n not in names]:
                contrib = entries.pop(name)[2]
                if contrib:
                    self._apply(contrib, -1)

    def _apply(self, contrib: tuple[Contribution, ...], sign: int) -> None:
        self.contributing += sign
        totals = self.totals
        for which, key, value, n in contrib:
            counts = totals[which]
            inner = counts.get(key)
            if inner is None:
                inner = counts[key] = {}
            total = inner.get(value, 0) + sign * n
            if total == 0:
                del inner[value]
                if not inner:
                    del counts[key]
            else:
                inner[value] = total

    def snapshot(self, which: int) -> Counts:
        """A copy of one count map, for a cycle's state."""
        return {k: dict(v) for k, v in self.totals[which].items()}


class _PreFilterState:
    __slots__ = (
        "affinity",
        "affinity_terms",
        "anti",
        "anti_terms",
        "existing_anti",
        "ns_labels",
        "pod",
        "self_match",
    )

    def __init__(
        self,
        pod: Pod,
        affinity_terms: tuple[AffinityTerm, ...],
        anti_terms: tuple[AffinityTerm, ...],
        ns_labels: Mapping[str, str],
        existing_anti: Counts,
        affinity: Counts,
        anti: Counts,
    ) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_terms = anti_terms
        self.ns_labels = ns_labels
        self.existing_anti = existing_anti
        self.affinity = affinity
        self.anti = anti
        # Whether the pod matches its own affinity terms (the "first pod of a group" rule).
        self.self_match = matches_all(affinity_terms, pod)

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.pod,
            self.affinity_terms,
            self.anti_terms,
            self.ns_labels,
            {k: dict(v) for k, v in self.existing_anti.items()},
            {k: dict(v) for k, v in self.affinity.items()},
            {k: dict(v) for k, v in self.anti.items()},
        )

    def update_with_pod(self, other: Pod, node: Node, delta: int) -> None:
        labels = node.labels
        for t in pod_affinity_terms(other).required_anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                _bump(self.existing_anti, labels, t.topology_key, delta)
        if matches_all(self.affinity_terms, other):
            for t in self.affinity_terms:
                _bump(self.affinity, labels, t.topology_key, delta)
        for t in self.anti_terms:
            if t.matches(other, None):
                _bump(self.anti, labels, t.topology_key, delta)


class _PreScoreState:
    __slots__ = ("topology_score",)

    def __init__(self, topology_score: Counts) -> None:
        self.topology_score = topology_score

    def clone(self) -> _PreScoreState:
        return self


class InterPodAffinity:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = dict(args or {})
        self.handle = handle
        weight = args.get("hardPodAffinityWeight")
        self.hard_pod_affinity_weight = (
            DEFAULT_HARD_POD_AFFINITY_WEIGHT if weight is None else int(weight)
        )
        if not 0 <= self.hard_pod_affinity_weight <= 100:
            raise ValueError(
                "InterPodAffinityArgs: hardPodAffinityWeight: not in valid range [0, 100]"
            )
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False)
        )
        # Per kind of incoming pod (its terms, namespace and labels): counts kept across cycles.
        self._incremental: dict[tuple[Any, ...], _Incremental] = {}
        self._skip = Status(Code.SKIP)
        self._affinity_rejected = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
        )
        # Anti-affinity rejections are Unschedulable: evicting the matching pods can help.
        self._anti_rejected = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        self._existing_rejected = Status(
            Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
        )

    # --- cluster lookups ------------------------------------------------------------------

    def _namespaces(self) -> dict[str, Mapping[str, str]]:
        """Namespace name -> labels, from the Namespace objects the cluster holds."""
        objects = getattr(self.handle, "objects", None)
        if not callable(objects):
            return {}
        out: dict[str, Mapping[str, str]] = {}
        for ns in objects("Namespace"):
            meta = ns.get("metadata") or {}
            name = meta.get("name")
            if isinstance(name, str):
                labels = meta.get("labels")
                out[name] = labels if isinstance(labels, Mapping) else _EMPTY_LABELS
        return out

    def _snapshot_lists(self, nodes: Sequence[NodeInfo]) -> tuple[list[NodeInfo], list[NodeInfo]]:
        """(nodes with pods with affinity, nodes with pods with required anti-affinity)."""
        if self.handle is not None:
            snap = self.handle.snapshot()
            return snap.with_affinity, snap.with_required_anti_affinity
        return (
            [ni for ni in nodes if ni.pods_with_affinity],
            [ni for ni in nodes if ni.pods_with_required_anti_affinity],
        )

    def _counts(
        self, key: tuple[Any, ...], outputs: int, nodes: Sequence[NodeInfo], compute: ComputeFn
    ) -> _Incremental:
        """The incremental counts for ``key``, brought up to date with ``nodes``."""
        inc = self._incremental.pop(key, None)
        if inc is None:
            inc = _Incremental(outputs)
            if len(self._incremental) >= _INCREMENTAL_LIMIT:
                del self._incremental[next(iter(self._incremental))]
        self._incremental[key] = inc  # most recently used last
        inc.update(nodes, compute)
        return inc

    # --- PreFilter / Filter -----------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[None, Status | None]:
        terms = pod_affinity_terms(pod)
        if terms.error:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {terms.error}")
        _, with_anti = self._snapshot_lists(nodes)
        if not with_anti and not terms.required_affinity and not terms.required_anti_affinity:
            return None, self._skip  # nothing could be counted
        namespaces = self._namespaces()
        affinity_terms = tuple(t.with_namespaces(namespaces) for t in terms.required_affinity)
        anti_terms = tuple(t.with_namespaces(namespaces) for t in terms.required_anti_affinity)
        ns_labels = namespaces.get(pod.namespace, _EMPTY_LABELS)
        signature = _signature(pod, ns_labels)

        memo = _Memo(pod, ns_labels)

        def existing(ni: NodeInfo) -> tuple[Contribution, ...]:
            labels = ni.node.labels
            out = []
            for pi in ni.pods_with_required_anti_affinity:
                for t in pod_affinity_terms(pi.pod).required_anti_affinity:
                    if memo[t]:
                        value = labels.get(t.topology_key)
                        if value is not None:
                            out.append((0, t.topology_key, value, 1))
            return tuple(out)

        existing_anti = self._counts(("existing", *signature), 1, with_anti, existing).snapshot(0)

        affinity: Counts = {}
        anti: Counts = {}
        if affinity_terms or anti_terms:
            compute = _incoming_counter(affinity_terms, anti_terms)
            inc = self._counts(("incoming", affinity_terms, anti_terms), 2, nodes, compute)
            affinity, anti = inc.snapshot(0), inc.snapshot(1)

        if not existing_anti and not affinity_terms and not anti_terms:
            return None, self._skip
        state.write(
            PRE_FILTER_KEY,
            _PreFilterState(
                pod, affinity_terms, anti_terms, ns_labels, existing_anti, affinity, anti
            ),
        )
        return None, None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        s.update_with_pod(pod_info_to_add.pod, node_info.node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        s.update_with_pod(pod_info_to_remove.pod, node_info.node, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return _not_found(PRE_FILTER_KEY)
        labels = node_info.node.labels
        terms = s.affinity_terms
        if terms:
            counts = s.affinity
            pods_exist = True
            for t in terms:
                value = labels.get(t.topology_key)
                if value is None:
                    return self._affinity_rejected  # every topology label must be on the node
                if pods_exist and not _positive(counts, t.topology_key, value):
                    pods_exist = False
            # The first pod of a group with affinity to itself may go anywhere when no pod in
            # the cluster matches the terms yet.
            if not pods_exist and not (not counts and s.self_match):
                return self._affinity_rejected
        anti = s.anti
        if anti:
            for t in s.anti_terms:
                value = labels.get(t.topology_key)
                if value is not None and _positive(anti, t.topology_key, value):
                    return self._anti_rejected
        existing = s.existing_anti
        if existing:
            for key, values in existing.items():
                value = labels.get(key)
                if value is not None and values.get(value, 0) > 0:
                    return self._existing_rejected
        return None

    # --- PreScore / Score ---------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = pod.spec.get("affinity") or {}
        has_constraints = bool(
            ((affinity.get("podAffinity") or {}).get(_PREFERRED))
            or ((affinity.get("podAntiAffinity") or {}).get(_PREFERRED))
        )
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return self._skip
        terms = pod_affinity_terms(pod)
        if terms.error:
            return Status(Code.ERROR, f"failed to parse pod: {terms.error}")
        # Unless the pod has preferred terms, only pods with affinity matter.
        if has_constraints:
            to_process: Sequence[NodeInfo] = (
                self.handle.snapshot().node_infos if self.handle is not None else nodes
            )
        else:
            to_process, _ = self._snapshot_lists(nodes)
        if not to_process:
            return self._skip  # no node contributes
        namespaces = self._namespaces()
        preferred = tuple(t.with_namespaces(namespaces) for t in terms.preferred_affinity)
        preferred_anti = tuple(t.with_namespaces(namespaces) for t in terms.preferred_anti_affinity)
        ns_labels = namespaces.get(pod.namespace, _EMPTY_LABELS)
        hard_weight = self.hard_pod_affinity_weight
        memo = _Memo(pod, ns_labels)

        def contribution(ni: NodeInfo) -> tuple[Contribution, ...]:
            labels = ni.node.labels
            if not labels:
                return ()
            out: list[Contribution] = []
            for pi in ni.pods if has_constraints else ni.pods_with_affinity:
                existing = pi.pod
                if has_constraints:
                    for t in preferred:
                        if t.matches(existing, None):
                            _contribute(out, labels, t.topology_key, t.weight)
                    for t in preferred_anti:
                        if t.matches(existing, None):
                            _contribute(out, labels, t.topology_key, -t.weight)
                if not pi.has_affinity:
                    continue
                eterms = pod_affinity_terms(existing)
                if hard_weight > 0:
                    for t in eterms.required_affinity:
                        if memo[t]:
                            _contribute(out, labels, t.topology_key, hard_weight)
                for t in eterms.preferred_affinity:
                    if memo[t]:
                        _contribute(out, labels, t.topology_key, t.weight)
                for t in eterms.preferred_anti_affinity:
                    if memo[t]:
                        _contribute(out, labels, t.topology_key, -t.weight)
            return tuple(out)

        key = ("score", has_constraints, preferred, preferred_anti, *_signature(pod, ns_labels))
        inc = self._counts(key, 1, to_process, contribution)
        # k8s skips when no node had a matching term (index == -1).
        if not inc.contributing:
            return self._skip
        state.write(PRE_SCORE_KEY, _PreScoreState(inc.snapshot(0)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, _not_found(PRE_SCORE_KEY)
        labels = node_info.node.labels
        total = 0
        for key, values in s.topology_score.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total, None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return _not_found(PRE_SCORE_KEY)
        if not s.topology_score or not scores:
            return None
        lo = min(ns.score for ns in scores)
        hi = max(ns.score for ns in scores)
        diff = hi - lo
        for ns in scores:
            # As k8s: float64(MaxNodeScore) * (float64(score-min) / float64(max-min)), truncated.
            ns.score = int(float(MAX_NODE_SCORE) * ((ns.score - lo) / diff)) if diff > 0 else 0
        return None

    def score_extensions(self) -> InterPodAffinity:
        return self

    # --- queueing hints -------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Node UpdateNodeTaint catches nodes that were added while not ready (k8s #110175).
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
                ),
                is_schedulable_after_node_change,
            ),
        ]


def _signature(pod: Pod, ns_labels: Mapping[str, str]) -> tuple[Any, ...]:
    """What matching existing pods' terms against ``pod`` depends on."""
    return (pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items()))


def _incoming_counter(
    affinity_terms: tuple[AffinityTerm, ...], anti_terms: tuple[AffinityTerm, ...]
) -> ComputeFn:
    """A node's pods matching all the incoming pod's affinity terms (output 0) and each of
    its anti-affinity terms (output 1)."""
    # The terms' namespace selectors are unrolled: a term matches a pod when it selects
    # every namespace or the pod's, and its label selector matches.
    aff = [(t._ns_all, t.namespaces, t.selector) for t in affinity_terms]
    aff_keys = [t.topology_key for t in affinity_terms]
    anti_m = [(t._ns_all, t.namespaces, t.selector, t.topology_key) for t in anti_terms]

    def compute(ni: NodeInfo) -> tuple[Contribution, ...]:
        pods = ni.pods
        if not pods:
            return ()
        labels = ni.node.labels
        out: list[Contribution] = []
        n_aff = 0
        for pi in pods:
            p = pi.pod
            ns = p.namespace
            pod_labels = p.labels
            if aff:
                for all_ns, names, sel in aff:
                    if not ((all_ns or ns in names) and sel.matches(pod_labels)):
                        break
                else:
                    n_aff += 1
            for all_ns, names, sel, key in anti_m:
                if (all_ns or ns in names) and sel.matches(pod_labels):
                    value = labels.get(key)
                    if value is not None:
                        out.append((1, key, value, 1))
        if n_aff:
            for key in aff_keys:
                value = labels.get(key)
                if value is not None:
                    out.append((0, key, value, n_aff))
        return tuple(out)

    return compute


def _contribute(out: list[Contribution], labels: Mapping[str, str], key: str, weight: int) -> None:
    value = labels.get(key)
    if value is not None:
        out.append((0, key, value, weight))


def is_schedulable_after_pod_change(
    pod: Pod, old_obj: Pod | None, new_obj: Pod | None
) -> QueueingHint:
    """Queue for an assigned pod that starts matching the affinity or stops (or is deleted
    while) matching the anti-affinity."""
    if (new_obj is not None and not new_obj.node_name) or (
        old_obj is not None and not old_obj.node_name
    ):
        return QueueingHint.QUEUE_SKIP
    terms = pod_affinity_terms(pod)
    if new_obj is not None and old_obj is not None:
        if not matches_all(terms.required_affinity, old_obj) and matches_all(
            terms.required_affinity, new_obj
        ):
            return QueueingHint.QUEUE
        if matches_all(terms.required_anti_affinity, old_obj) and not matches_all(
            terms.required_anti_affinity, new_obj
        ):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if new_obj is not None:
        if matches_all(terms.required_affinity, new_obj):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if old_obj is not None and matches_all(terms.required_anti_affinity, old_obj):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_node_change(
    pod: Pod, old_obj: Node | None, new_obj: Node | None
) -> QueueingHint:
    """Queue for a node that has the topology key of one of the pod's required terms."""
    if new_obj is None:
        return QueueingHint.QUEUE_SKIP
    terms = pod_affinity_terms(pod)
    labels = new_obj.labels
    for t in terms.required_affinity:
        if t.topology_key in labels:
            return QueueingHint.QUEUE
    for t in terms.required_anti_affinity:
        if t.topology_key in labels:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _not_found(key: str) -> Status:
    return Status(Code.ERROR, f'error reading "{key}" from cycleState: not found')


def new(args: dict[str, Any], handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args, handle)
