"""Parsed pod affinity terms, as kube-scheduler keeps them in PodInfo.

Mirrors pkg/scheduler/framework/types.go: AffinityTerm, WeightedAffinityTerm, getAffinityTerms,
getWeightedAffinityTerms and PodInfo.Update (which parses a pod's terms once and keeps the parse
error), and podMatchesAllAffinityTerms of plugins/interpodaffinity/filtering.go.

The API server merges ``matchLabelKeys``/``mismatchLabelKeys`` of pod affinity terms into the
label selector when a pod is created (pkg/registry/core/pod/strategy.go:
applyMatchLabelKeysAndMismatchLabelKeys); manifests here never went through one, so the merge is
done when a pod's terms are parsed (it is idempotent for pods that did).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.cached import derived, kept_by_content
from wasmsched.api.quantity import expect_int, expect_list, expect_mapping, expect_str
from wasmsched.api.selectors import IN, NOT_IN, LabelSelector
from wasmsched.plugins.node_counts import selector_key

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_EMPTY_LABELS: Mapping[str, str] = {}


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
# Where a pod keeps its parsed terms (api/cached.py: derived): they depend on its namespace, labels
# and spec.affinity, which its bound and status-written copies share, so the pod that
# binding writes back is not parsed again.
_TERMS_KEY = "inter_pod_affinity_terms"
# (namespace, spec.affinity as JSON, labels) -> the terms parsed from them.
_BY_CONTENT: dict[tuple[str, str, tuple[tuple[str, str], ...]], PodAffinityTerms] = {}
_BY_CONTENT_LIMIT = 10_000
# Equal terms of different pods (the replicas of a workload) share one object, so that a
# cycle matches each distinct term against the incoming pod once (see _Memo).
_INTERNED: dict[tuple[Any, ...], AffinityTerm] = {}
_INTERNED_LIMIT = 200_000


def _intern(term: AffinityTerm) -> AffinityTerm:
    key = (
        term.namespaces,
        selector_key(term.selector),
        term.topology_key,
        selector_key(term.namespace_selector),
        term.weight,
    )
    got = _INTERNED.get(key)
    if got is None:
        if len(_INTERNED) >= _INTERNED_LIMIT:
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
    """The pod's parsed terms, parsed once per pod and its copies (a pod without
    affinity answers at once and keeps nothing, as does one with node affinity alone)."""
    affinity = pod.spec.get("affinity")
    if not affinity:
        return _NO_TERMS
    if (
        type(affinity) is dict
        and affinity.get("podAffinity") is None
        and affinity.get("podAntiAffinity") is None
    ):
        # A DaemonSet pod's node pin: parse_pod_affinity_terms reads both sections as
        # empty and returns _NO_TERMS; no content key to build (a JSON of the affinity).
        return _NO_TERMS
    return derived(pod, _TERMS_KEY, _shared_terms)


def _shared_terms(pod: Pod) -> PodAffinityTerms:
    """parse_pod_affinity_terms, once for the replicas of a workload: the terms depend on
    the namespace, the labels and spec.affinity alone, and are read-only once parsed."""
    return kept_by_content(
        _BY_CONTENT, _terms_key(pod), parse_pod_affinity_terms, pod, _BY_CONTENT_LIMIT
    )


def _terms_key(pod: Pod) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
    """What a pod's terms depend on; None for an affinity that is not JSON (a manifest
    built in code: parsed alone)."""
    try:
        return (
            pod.namespace,
            json.dumps(pod.spec["affinity"], sort_keys=True),
            tuple(sorted(pod.labels.items())),
        )
    except (TypeError, ValueError):
        return None


def matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms. The namespace selectors of the incoming
    pod's terms are already unrolled, so no namespace labels are needed."""
    if not terms:
        return False
    for t in terms:  # noqa: SIM110  (a plain loop is faster on this hot path)
        if not t.matches(pod, None):
            return False
    return True
