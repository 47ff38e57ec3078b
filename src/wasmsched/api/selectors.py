"""Label selectors and node affinity, with the semantics of Kubernetes v1.33.

``LabelSelector`` is ``metav1.LabelSelector`` turned into a ``labels.Selector``
(``metav1.LabelSelectorAsSelector``). ``NodeSelector``, ``PreferredSchedulingTerms`` and
``RequiredNodeAffinity`` follow ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``.

Validation is split the way Kubernetes splits it. What the API server rejects (unknown
operators, In without values, bad label keys) raises ``SelectorError`` at parse time. What
only ``labels.NewRequirement`` rejects in a node selector term (a Gt value that is not an
integer, a value that is not a valid label value) makes that term match no node, as the
scheduler's lazy-error selector does; the problem is kept in ``NodeSelectorTerm.error``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from wasmsched.api.quantity import (
    FieldError,
    expect_int,
    expect_list,
    expect_mapping,
    expect_str,
    expect_str_map,
    join_path,
    quote,
)

__all__ = [
    "LabelSelector",
    "LabelSelectorRequirement",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "SelectorError",
    "is_qualified_name",
    "is_valid_label_value",
]


class SelectorError(FieldError):
    """An invalid selector; the path names the field (``matchExpressions[0].operator``)."""


IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"
OBJECT_NAME_FIELD = "metadata.name"

_LABEL_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
_NODE_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)

_NAME_PART = r"(?=.{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = rf"(?=.{{1,253}}$){_DNS_LABEL}(?:\.{_DNS_LABEL})*"
_NAME_PART_RE = re.compile(_NAME_PART, re.ASCII)
_DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN, re.ASCII)
_LABEL_VALUE_RE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?", re.ASCII)
_INT64_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def is_qualified_name(name: str) -> bool:
    """validation.IsQualifiedName: an optional DNS-subdomain prefix and "/", then a name part."""
    prefix, slash, rest = name.rpartition("/")
    if slash:
        if not _DNS_SUBDOMAIN_RE.fullmatch(prefix):
            return False
        name = rest
    return _NAME_PART_RE.fullmatch(name) is not None


def is_valid_label_value(value: str) -> bool:
    """validation.IsValidLabelValue: empty, or up to 63 alphanumerics with -_. inside."""
    return len(value) <= 63 and _LABEL_VALUE_RE.fullmatch(value) is not None


def is_dns_subdomain(value: str) -> bool:
    return _DNS_SUBDOMAIN_RE.fullmatch(value) is not None


def parse_int64(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64): ASCII digits with an optional sign, within int64."""
    if _INT64_RE.fullmatch(s) is None:
        return None
    n = int(s)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


def _key(value: Any, path: str) -> str:
    key = expect_str(value, path)
    if not is_qualified_name(key):
        raise SelectorError(f"invalid label key: {quote(key)}", path)
    return key


def _values(value: Any, path: str) -> tuple[str, ...]:
    return tuple(expect_str(v, f"{path}[{i}]") for i, v in enumerate(expect_list(value, path)))


def _check_label_map(m: Mapping[str, str], path: str) -> None:
    for k, v in m.items():
        if not is_qualified_name(k):
            raise SelectorError(f"invalid label key: {quote(k)}", path)
        if not is_valid_label_value(v):
            raise SelectorError(f"invalid label value: {quote(v)}", join_path(path, k))


def _unsupported(op: str, allowed: Iterable[str]) -> str:
    return f"unsupported operator {quote(op)} (expected one of {', '.join(allowed)})"


class LabelSelectorRequirement:
    """One ``matchExpressions`` entry of a LabelSelector."""

    __slots__ = ("key", "operator", "value_set", "values")

    def __init__(self, key: str, operator: str, values: Iterable[str] = ()) -> None:
        self.key = key
        self.operator = operator
        self.values = tuple(values)
        self.value_set = frozenset(self.values)

    @classmethod
    def from_dict(cls, d: Any, path: str = "") -> LabelSelectorRequirement:
        """Parse and validate ``{key, operator, values}``; raises SelectorError."""
        try:
            m = expect_mapping(d, path)
            key = _key(m.get("key"), join_path(path, "key"))
            op = expect_str(m.get("operator"), join_path(path, "operator"))
            values = _values(m.get("values"), join_path(path, "values"))
        except SelectorError:
            raise
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        if op in (IN, NOT_IN):
            if not values:
                raise SelectorError(
                    f"values must be non-empty for operator {op}", join_path(path, "values")
                )
        elif op in (EXISTS, DOES_NOT_EXIST):
            if values:
                raise SelectorError(
                    f"values must be empty for operator {op}: {quote(list(values))}",
                    join_path(path, "values"),
                )
        else:
            raise SelectorError(_unsupported(op, _LABEL_OPERATORS), join_path(path, "operator"))
        for i, v in enumerate(values):
            if not is_valid_label_value(v):
                raise SelectorError(
                    f"invalid label value: {quote(v)}", join_path(path, f"values[{i}]")
                )
        return cls(key, op, values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == IN:
            v = labels.get(self.key)
            return v is not None and v in self.value_set
        if op == NOT_IN:
            v = labels.get(self.key)
            return v is None or v not in self.value_set
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        return False

    def __repr__(self) -> str:
        return f"LabelSelectorRequirement({self.key!r}, {self.operator!r}, {list(self.values)!r})"


class LabelSelector:
    """A parsed ``metav1.LabelSelector``.

    The two edge cases follow ``metav1.LabelSelectorAsSelector``: a null selector
    (``from_dict(None)``, ``LabelSelector.nothing()``) matches no object, while an empty one
    (``{}``, ``LabelSelector.everything()``) matches every object.
    """

    __slots__ = ("_equals", "_exprs", "_nothing", "match_expressions", "match_labels")

    def __init__(
        self,
        match_labels: Mapping[str, str] | None = None,
        match_expressions: Iterable[LabelSelectorRequirement] = (),
        *,
        nothing: bool = False,
    ) -> None:
        self.match_labels: dict[str, str] = dict(match_labels) if match_labels else {}
        self.match_expressions: tuple[LabelSelectorRequirement, ...] = tuple(match_expressions)
        self._nothing = nothing
        self._equals = tuple(self.match_labels.items())
        self._exprs = self.match_expressions

    @classmethod
    def nothing(cls) -> LabelSelector:
        """The selector that matches no object (a null LabelSelector)."""
        return cls(nothing=True)

    @classmethod
    def everything(cls) -> LabelSelector:
        """The selector that matches every object (an empty LabelSelector)."""
        return cls()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None, path: str = "") -> LabelSelector:
        """Parse ``{matchLabels, matchExpressions}``; None gives the match-nothing selector."""
        if d is None:
            return cls.nothing()
        try:
            m = expect_mapping(d, path)
            labels_path = join_path(path, "matchLabels")
            match_labels = expect_str_map(m.get("matchLabels"), labels_path)
            exprs_path = join_path(path, "matchExpressions")
            raw_exprs = expect_list(m.get("matchExpressions"), exprs_path)
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        _check_label_map(match_labels, labels_path)
        exprs = [
            LabelSelectorRequirement.from_dict(e, f"{exprs_path}[{i}]")
            for i, e in enumerate(raw_exprs)
        ]
        return cls(match_labels, exprs)

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> LabelSelector:
        """The selector requiring every given label (labels.SelectorFromSet)."""
        return cls(labels)

    @property
    def is_empty(self) -> bool:
        """True for the match-everything selector (no requirements)."""
        return not self._nothing and not self._equals and not self._exprs

    @property
    def is_nothing(self) -> bool:
        return self._nothing

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self._nothing:
            return False
        for key, want in self._equals:
            if labels.get(key) != want:
                return False
        for req in self._exprs:  # noqa: SIM110  (a plain loop is faster on this hot path)
            if not req.matches(labels):
                return False
        return True

    def __repr__(self) -> str:
        if self._nothing:
            return "LabelSelector.nothing()"
        return f"LabelSelector({self.match_labels!r}, {list(self.match_expressions)!r})"


class NodeSelectorRequirement:
    """One ``matchExpressions`` or ``matchFields`` entry of a NodeSelectorTerm.

    ``error`` is set when ``labels.NewRequirement`` would reject the requirement although the
    API server accepts it; such a requirement never matches.
    """

    __slots__ = ("error", "int_value", "key", "operator", "value_set", "values")

    def __init__(
        self, key: str, operator: str, values: Iterable[str] = (), error: str | None = None
    ) -> None:
        self.key = key
        self.operator = operator
        self.values = tuple(values)
        self.value_set = frozenset(self.values)
        self.error = error
        self.int_value: int | None = None
        if operator in (GT, LT) and len(self.values) == 1:
            self.int_value = parse_int64(self.values[0])

    @classmethod
    def from_dict(cls, d: Any, path: str = "", *, field: bool = False) -> NodeSelectorRequirement:
        """Parse one requirement; ``field`` selects the matchFields rules. Raises SelectorError."""
        try:
            m = expect_mapping(d, path)
            key = expect_str(m.get("key"), join_path(path, "key"))
            op = expect_str(m.get("operator"), join_path(path, "operator"))
            values = _values(m.get("values"), join_path(path, "values"))
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        vpath = join_path(path, "values")
        if field:
            if op not in (IN, NOT_IN):
                raise SelectorError(_unsupported(op, (IN, NOT_IN)), join_path(path, "operator"))
            if len(values) != 1:
                raise SelectorError(
                    f"must have exactly one value for a field selector, got {quote(list(values))}",
                    vpath,
                )
            if key != OBJECT_NAME_FIELD:
                raise SelectorError(
                    f"unsupported field selector key {quote(key)} (expected metadata.name)",
                    join_path(path, "key"),
                )
            if not is_dns_subdomain(values[0]):
                raise SelectorError(f"invalid node name: {quote(values[0])}", f"{vpath}[0]")
            return cls(key, op, values)
        if not is_qualified_name(key):
            raise SelectorError(f"invalid label key: {quote(key)}", join_path(path, "key"))
        error: str | None = None
        if op in (IN, NOT_IN):
            if not values:
                raise SelectorError(f"values must be non-empty for operator {op}", vpath)
        elif op in (EXISTS, DOES_NOT_EXIST):
            if values:
                raise SelectorError(
                    f"values must be empty for operator {op}: {quote(list(values))}", vpath
                )
        elif op in (GT, LT):
            if len(values) != 1:
                raise SelectorError(
                    f"must have exactly one value for operator {op}, got {quote(list(values))}",
                    vpath,
                )
            if parse_int64(values[0]) is None:
                error = (
                    f"{vpath}[0]: value must be an integer for operator {op}: {quote(values[0])}"
                )
        else:
            raise SelectorError(_unsupported(op, _NODE_OPERATORS), join_path(path, "operator"))
        if error is None:
            for i, v in enumerate(values):
                if not is_valid_label_value(v):
                    error = f"{vpath}[{i}]: invalid label value: {quote(v)}"
                    break
        return cls(key, op, values, error)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether node labels satisfy this matchExpressions requirement."""
        if self.error is not None:
            return False
        op = self.operator
        if op == IN:
            v = labels.get(self.key)
            return v is not None and v in self.value_set
        if op == NOT_IN:
            v = labels.get(self.key)
            return v is None or v not in self.value_set
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        want = self.int_value
        v = labels.get(self.key)
        if want is None or v is None:
            return False
        have = parse_int64(v)
        if have is None:
            return False
        return have > want if op == GT else have < want

    def matches_field(self, node_name: str) -> bool:
        """Whether a node name satisfies this matchFields requirement."""
        if self.operator == IN:
            return node_name in self.value_set
        return node_name not in self.value_set

    def __repr__(self) -> str:
        return f"NodeSelectorRequirement({self.key!r}, {self.operator!r}, {list(self.values)!r})"


class NodeSelectorTerm:
    """An AND of matchExpressions (on labels) and matchFields (on the node name).

    A term with neither matches no node. A term whose requirements carry an ``error`` matches
    no node either.
    """

    __slots__ = ("error", "match_expressions", "match_fields")

    def __init__(
        self,
        match_expressions: Iterable[NodeSelectorRequirement] = (),
        match_fields: Iterable[NodeSelectorRequirement] = (),
    ) -> None:
        self.match_expressions = tuple(match_expressions)
        self.match_fields = tuple(match_fields)
        self.error: str | None = next(
            (r.error for r in self.match_expressions if r.error is not None), None
        )

    @classmethod
    def from_dict(cls, d: Any, path: str = "") -> NodeSelectorTerm:
        try:
            m = expect_mapping(d, path)
            epath = join_path(path, "matchExpressions")
            fpath = join_path(path, "matchFields")
            raw_exprs = expect_list(m.get("matchExpressions"), epath)
            raw_fields = expect_list(m.get("matchFields"), fpath)
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        return cls(
            [
                NodeSelectorRequirement.from_dict(r, f"{epath}[{i}]")
                for i, r in enumerate(raw_exprs)
            ],
            [
                NodeSelectorRequirement.from_dict(r, f"{fpath}[{i}]", field=True)
                for i, r in enumerate(raw_fields)
            ],
        )

    @property
    def is_empty(self) -> bool:
        return not self.match_expressions and not self.match_fields

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        if self.error is not None or (not self.match_expressions and not self.match_fields):
            return False
        for r in self.match_expressions:
            if not r.matches(node_labels):
                return False
        # As upstream, field requirements are not checked against a node without a name.
        if node_name:
            for f in self.match_fields:
                if not f.matches_field(node_name):
                    return False
        return True

    def node_names(self) -> frozenset[str] | None:
        """The intersection of this term's ``metadata.name In`` sets; None if it has none."""
        names: frozenset[str] | None = None
        for f in self.match_fields:
            if f.key == OBJECT_NAME_FIELD and f.operator == IN:
                names = f.value_set if names is None else names & f.value_set
        return names

    def __repr__(self) -> str:
        return f"NodeSelectorTerm({list(self.match_expressions)!r}, {list(self.match_fields)!r})"


class NodeSelector:
    """A ``v1.NodeSelector``: matches a node when any of its non-empty terms matches."""

    __slots__ = ("_active", "terms")

    def __init__(self, terms: Iterable[NodeSelectorTerm]) -> None:
        self.terms = tuple(terms)
        self._active = tuple(t for t in self.terms if not t.is_empty and t.error is None)

    @classmethod
    def from_dict(cls, d: Any, path: str = "") -> NodeSelector:
        """Parse ``{nodeSelectorTerms: [...]}``; raises SelectorError."""
        try:
            m = expect_mapping(d, path)
            tpath = join_path(path, "nodeSelectorTerms")
            raw = expect_list(m.get("nodeSelectorTerms"), tpath)
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        return cls(NodeSelectorTerm.from_dict(t, f"{tpath}[{i}]") for i, t in enumerate(raw))

    @property
    def errors(self) -> tuple[str, ...]:
        """Problems that make some terms match nothing (upstream reports them at Match)."""
        return tuple(t.error for t in self.terms if t.error is not None)

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        for t in self._active:  # noqa: SIM110  (a plain loop is faster on this hot path)
            if t.matches(node_labels, node_name):
                return True
        return False

    def __repr__(self) -> str:
        return f"NodeSelector({list(self.terms)!r})"


class PreferredSchedulingTerms:
    """``preferredDuringSchedulingIgnoredDuringExecution``: weighted terms summed per node.

    ``error`` is set when some term has a requirement ``labels.NewRequirement`` rejects;
    upstream's NewPreferredSchedulingTerms then fails (the NodeAffinity PreScore returns an
    error), so a plugin should check it. ``score`` skips such terms.
    """

    __slots__ = ("error", "terms")

    def __init__(self, terms: Iterable[tuple[int, NodeSelectorTerm]] = ()) -> None:
        all_terms = tuple(terms)
        self.error: str | None = next((t.error for _, t in all_terms if t.error is not None), None)
        # Zero weights and empty preferences are dropped, as upstream does.
        self.terms: tuple[tuple[int, NodeSelectorTerm], ...] = tuple(
            (w, t) for w, t in all_terms if w != 0 and not t.is_empty and t.error is None
        )

    @classmethod
    def from_list(cls, lst: Any, path: str = "") -> PreferredSchedulingTerms:
        """Parse a list of ``{weight, preference}``; weight must be 1..100. Raises SelectorError."""
        out: list[tuple[int, NodeSelectorTerm]] = []
        try:
            items = expect_list(lst, path)
            for i, item in enumerate(items):
                ipath = f"{path}[{i}]"
                m = expect_mapping(item, ipath)
                wpath = join_path(ipath, "weight")
                weight = expect_int(m.get("weight"), wpath)
                if weight is None or not 1 <= weight <= 100:
                    raise SelectorError(
                        f"weight must be in the range 1-100: {quote(weight)}", wpath
                    )
                out.append(
                    (
                        weight,
                        NodeSelectorTerm.from_dict(
                            m.get("preference"), join_path(ipath, "preference")
                        ),
                    )
                )
        except SelectorError:
            raise
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        return cls(out)

    @classmethod
    def from_pod_spec(cls, spec: Mapping[str, Any]) -> PreferredSchedulingTerms:
        """The preferred node affinity of a pod spec (empty when there is none)."""
        path = "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        try:
            na = expect_mapping(
                expect_mapping(spec.get("affinity"), "affinity").get("nodeAffinity"),
                "affinity.nodeAffinity",
            )
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        return cls.from_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"), path)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def score(self, node_labels: Mapping[str, str], node_name: str) -> int:
        """Sum of the weights of the terms that match the node."""
        total = 0
        for weight, term in self.terms:
            if term.matches(node_labels, node_name):
                total += weight
        return total

    def __repr__(self) -> str:
        return f"PreferredSchedulingTerms({list(self.terms)!r})"


class RequiredNodeAffinity:
    """A pod's ``spec.nodeSelector`` AND its required node affinity (GetRequiredNodeAffinity).

    ``node_names`` is what the NodeAffinity PreFilter returns as PreFilterResult: the union over
    terms of each term's ``metadata.name In`` values, or None when some term has none (or the
    pod has no required affinity terms). An empty set means the terms conflict and no node fits.
    """

    __slots__ = ("affinity", "node_names", "node_selector")

    def __init__(
        self,
        node_selector: Mapping[str, str] | None = None,
        affinity: NodeSelector | None = None,
    ) -> None:
        self.node_selector: dict[str, str] | None = (
            dict(node_selector) if node_selector is not None else None
        )
        self.affinity = affinity
        self.node_names = _prefilter_node_names(affinity)

    @classmethod
    def from_pod_spec(cls, spec: Mapping[str, Any]) -> RequiredNodeAffinity:
        """Parse ``spec.nodeSelector`` and ``spec.affinity.nodeAffinity.required...``."""
        try:
            raw_sel = spec.get("nodeSelector")
            node_selector = None
            if raw_sel is not None:
                node_selector = expect_str_map(raw_sel, "nodeSelector")
                _check_label_map(node_selector, "nodeSelector")
            na = expect_mapping(
                expect_mapping(spec.get("affinity"), "affinity").get("nodeAffinity"),
                "affinity.nodeAffinity",
            )
        except SelectorError:
            raise
        except FieldError as e:
            raise SelectorError(e.problem, e.path) from None
        raw_req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        affinity = None
        if raw_req is not None:
            affinity = NodeSelector.from_dict(
                raw_req, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            )
        return cls(node_selector, affinity)

    @property
    def is_empty(self) -> bool:
        """True when the pod has neither a nodeSelector nor required node affinity."""
        return self.node_selector is None and self.affinity is None

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        sel = self.node_selector
        if sel:
            for key, want in sel.items():
                if node_labels.get(key) != want:
                    return False
        if self.affinity is not None:
            return self.affinity.matches(node_labels, node_name)
        return True

    def __repr__(self) -> str:
        return f"RequiredNodeAffinity({self.node_selector!r}, {self.affinity!r})"


def _prefilter_node_names(affinity: NodeSelector | None) -> frozenset[str] | None:
    if affinity is None or not affinity.terms:
        return None
    names: frozenset[str] = frozenset()
    for term in affinity.terms:
        term_names = term.node_names()
        if term_names is None:
            # Terms are ORed: one term without a name constraint admits every node.
            return None
        names |= term_names
    return names
