"""Tests for wasmsched.api.selectors (label selectors and node affinity)."""

from __future__ import annotations

from typing import Any

import pytest

from wasmsched.api.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    SelectorError,
    is_qualified_name,
    is_valid_label_value,
)

LABELS = {"app": "web", "tier": "front", "zone": "a", "cores": "8", "weird": "x y"}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


# --- label keys and values -------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("app", True),
        ("app.kubernetes.io/name", True),
        ("a-b_c.d", True),
        ("example.com/A_b", True),
        ("x" * 63, True),
        ("x" * 64, False),
        ("", False),
        ("-app", False),
        ("app-", False),
        ("/app", False),
        ("Example.com/app", False),
        ("a/b/c", False),
        ("app name", False),
    ],
)
def test_is_qualified_name(key: str, ok: bool) -> None:
    assert is_qualified_name(key) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [("", True), ("v1", True), ("a.b-c_d", True), ("-a", False), ("a b", False), ("x" * 64, False)],
)
def test_is_valid_label_value(value: str, ok: bool) -> None:
    assert is_valid_label_value(value) is ok


# --- LabelSelector ------------------------------------------------------------------------


def test_null_selector_matches_nothing_and_empty_matches_everything() -> None:
    nothing = LabelSelector.from_dict(None)
    assert not nothing.matches({})
    assert not nothing.matches(LABELS)
    assert not nothing.is_empty
    assert nothing.is_nothing
    assert not LabelSelector.nothing().matches({})
    for everything in (LabelSelector.from_dict({}), LabelSelector.everything()):
        assert everything.is_empty
        assert everything.matches({})
        assert everything.matches(LABELS)


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ({"matchLabels": {"app": "web"}}, True),
        ({"matchLabels": {"app": "web", "tier": "back"}}, False),
        ({"matchLabels": {"missing": ""}}, False),
        ({"matchExpressions": [expr("app", "In", "web", "api")]}, True),
        ({"matchExpressions": [expr("app", "In", "api")]}, False),
        ({"matchExpressions": [expr("missing", "In", "x")]}, False),
        ({"matchExpressions": [expr("app", "NotIn", "api")]}, True),
        ({"matchExpressions": [expr("app", "NotIn", "web")]}, False),
        ({"matchExpressions": [expr("missing", "NotIn", "x")]}, True),
        ({"matchExpressions": [expr("app", "Exists")]}, True),
        ({"matchExpressions": [expr("missing", "Exists")]}, False),
        ({"matchExpressions": [expr("app", "DoesNotExist")]}, False),
        ({"matchExpressions": [expr("missing", "DoesNotExist")]}, True),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [expr("zone", "In", "b")]},
            False,
        ),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [expr("zone", "In", "a", "b")]},
            True,
        ),
    ],
)
def test_label_selector_matches(selector: dict[str, Any], matches: bool) -> None:
    assert LabelSelector.from_dict(selector).matches(LABELS) is matches


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"matchExpressions": [expr("app", "Gt", "1")]},
            'matchExpressions[0].operator: unsupported operator "Gt" '
            "(expected one of In, NotIn, Exists, DoesNotExist)",
        ),
        (
            {"matchExpressions": [expr("app", "In")]},
            "matchExpressions[0].values: values must be non-empty for operator In",
        ),
        (
            {"matchExpressions": [expr("app", "Exists", "x")]},
            'matchExpressions[0].values: values must be empty for operator Exists: ["x"]',
        ),
        (
            {"matchExpressions": [expr("bad key", "Exists")]},
            'matchExpressions[0].key: invalid label key: "bad key"',
        ),
        (
            {"matchExpressions": [expr("app", "In", "ok", "not ok")]},
            'matchExpressions[0].values[1]: invalid label value: "not ok"',
        ),
        ({"matchLabels": {"app": 1}}, "matchLabels.app: expected a string, got number: 1"),
        ({"matchLabels": {"app": "a b"}}, 'matchLabels.app: invalid label value: "a b"'),
        ({"matchLabels": ["app"]}, 'matchLabels: expected a mapping, got list: ["app"]'),
        ({"matchExpressions": {}}, "matchExpressions: expected a list, got mapping: {}"),
    ],
)
def test_label_selector_errors(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError) as info:
        LabelSelector.from_dict(selector)
    assert str(info.value) == message


def test_label_selector_error_path_prefix() -> None:
    with pytest.raises(SelectorError, match=r"^spec\.selector\.matchExpressions\[0\]\.operator: "):
        LabelSelector.from_dict({"matchExpressions": [expr("a", "Foo")]}, "spec.selector")


def test_label_selector_from_labels() -> None:
    sel = LabelSelector.from_labels({"app": "web"})
    assert sel.matches(LABELS)
    assert not sel.matches({"app": "api"})


# --- node selector requirements ---------------------------------------------------------


@pytest.mark.parametrize(
    ("requirement", "labels", "matches"),
    [
        (expr("zone", "In", "a", "b"), {"zone": "a"}, True),
        (expr("zone", "In", "b"), {"zone": "a"}, False),
        (expr("zone", "In", "a"), {}, False),
        (expr("zone", "NotIn", "b"), {"zone": "a"}, True),
        (expr("zone", "NotIn", "a"), {"zone": "a"}, False),
        (expr("zone", "NotIn", "a"), {}, True),
        (expr("zone", "Exists"), {"zone": ""}, True),
        (expr("zone", "Exists"), {}, False),
        (expr("zone", "DoesNotExist"), {}, True),
        (expr("zone", "DoesNotExist"), {"zone": "a"}, False),
        (expr("cores", "Gt", "4"), {"cores": "8"}, True),
        (expr("cores", "Gt", "8"), {"cores": "8"}, False),
        (expr("cores", "Lt", "9"), {"cores": "8"}, True),
        (expr("cores", "Lt", "8"), {"cores": "8"}, False),
        # label values are parsed with ParseInt, so signs are fine there
        (expr("cores", "Gt", "1"), {"cores": "+2"}, True),
        (expr("cores", "Lt", "1"), {"cores": "-5"}, True),
        # "-1" is not a valid label value: NewRequirement rejects it, nothing matches
        (expr("cores", "Gt", "-1"), {"cores": "0"}, False),
        (expr("cores", "Gt", "4"), {}, False),
        # non-integer label values never match Gt/Lt
        (expr("cores", "Gt", "4"), {"cores": "eight"}, False),
        (expr("cores", "Lt", "4"), {"cores": "1.5"}, False),
        (expr("cores", "Lt", "4"), {"cores": " 1"}, False),
        (expr("cores", "Lt", "4"), {"cores": "1_0"}, False),
        (expr("cores", "Lt", "4"), {"cores": "٣"}, False),
        (expr("cores", "Lt", "4"), {"cores": "-99999999999999999999"}, False),
        # non-integer requirement values never match either
        (expr("cores", "Gt", "four"), {"cores": "8"}, False),
        (expr("cores", "Lt", "4.0"), {"cores": "1"}, False),
        (expr("cores", "Lt", "99999999999999999999"), {"cores": "1"}, False),
    ],
)
def test_node_selector_requirement_operators(
    requirement: dict[str, Any], labels: dict[str, str], matches: bool
) -> None:
    req = NodeSelectorRequirement.from_dict(requirement)
    assert req.matches(labels) is matches
    # The same requirement as a one-expression term gives the same answer.
    term = NodeSelectorTerm.from_dict({"matchExpressions": [requirement]})
    assert term.matches(labels, "node-1") is matches


def test_lazy_errors_are_recorded() -> None:
    req = NodeSelectorRequirement.from_dict(expr("cores", "Gt", "four"), "m[0]")
    assert req.error == 'm[0].values[0]: value must be an integer for operator Gt: "four"'
    req = NodeSelectorRequirement.from_dict(expr("zone", "In", "a b"))
    assert req.error == 'values[0]: invalid label value: "a b"'
    assert not req.matches({"zone": "a b"})
    term = NodeSelectorTerm.from_dict(
        {"matchExpressions": [expr("zone", "Exists"), expr("cores", "Lt", "x")]}
    )
    assert term.error is not None
    assert not term.matches({"zone": "a", "cores": "1"}, "n")


@pytest.mark.parametrize(
    ("requirement", "field", "message"),
    [
        (
            expr("zone", "Like", "a"),
            False,
            'operator: unsupported operator "Like" (expected '
            "one of In, NotIn, Exists, DoesNotExist, Gt, Lt)",
        ),
        (expr("zone", "In"), False, "values: values must be non-empty for operator In"),
        (expr("zone", "NotIn"), False, "values: values must be non-empty for operator NotIn"),
        (
            expr("zone", "Exists", "a"),
            False,
            'values: values must be empty for operator Exists: ["a"]',
        ),
        (expr("zone", "Gt"), False, "values: must have exactly one value for operator Gt, got []"),
        (
            expr("zone", "Lt", "1", "2"),
            False,
            'values: must have exactly one value for operator Lt, got ["1", "2"]',
        ),
        (expr("", "Exists"), False, 'key: invalid label key: ""'),
        (
            {"key": "zone", "operator": "In", "values": "a"},
            False,
            'values: expected a list, got string: "a"',
        ),
        (
            expr("metadata.name", "In", "a", "b"),
            True,
            'values: must have exactly one value for a field selector, got ["a", "b"]',
        ),
        (
            expr("metadata.name", "Exists"),
            True,
            'operator: unsupported operator "Exists" (expected one of In, NotIn)',
        ),
        (
            expr("metadata.uid", "In", "a"),
            True,
            'key: unsupported field selector key "metadata.uid" (expected metadata.name)',
        ),
        (expr("metadata.name", "In", "Bad_Name"), True, 'values[0]: invalid node name: "Bad_Name"'),
    ],
)
def test_node_selector_requirement_errors(
    requirement: dict[str, Any], field: bool, message: str
) -> None:
    with pytest.raises(SelectorError) as info:
        NodeSelectorRequirement.from_dict(requirement, field=field)
    assert str(info.value) == message


# --- terms and selectors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "name", "matches"),
    [
        ({}, "n1", False),
        ({"matchExpressions": [], "matchFields": []}, "n1", False),
        ({"matchExpressions": [expr("zone", "In", "a"), expr("app", "Exists")]}, "n1", True),
        ({"matchExpressions": [expr("zone", "In", "a"), expr("app", "DoesNotExist")]}, "n1", False),
        ({"matchFields": [expr("metadata.name", "In", "n1")]}, "n1", True),
        ({"matchFields": [expr("metadata.name", "In", "n1")]}, "n2", False),
        ({"matchFields": [expr("metadata.name", "NotIn", "n1")]}, "n2", True),
        ({"matchFields": [expr("metadata.name", "NotIn", "n1")]}, "n1", False),
        (
            {
                "matchExpressions": [expr("zone", "In", "a")],
                "matchFields": [expr("metadata.name", "In", "n1")],
            },
            "n1",
            True,
        ),
        (
            {
                "matchExpressions": [expr("zone", "In", "b")],
                "matchFields": [expr("metadata.name", "In", "n1")],
            },
            "n1",
            False,
        ),
        # upstream skips field requirements for a node without a name
        ({"matchFields": [expr("metadata.name", "In", "n1")]}, "", True),
    ],
)
def test_node_selector_term(term: dict[str, Any], name: str, matches: bool) -> None:
    assert NodeSelectorTerm.from_dict(term).matches(LABELS, name) is matches


def test_node_selector_ors_terms_and_skips_empty_ones() -> None:
    sel = NodeSelector.from_dict(
        {
            "nodeSelectorTerms": [
                {},
                {"matchExpressions": [expr("zone", "In", "b")]},
                {"matchExpressions": [expr("tier", "In", "front")]},
            ]
        }
    )
    assert sel.matches(LABELS, "n1")
    assert not sel.matches({"zone": "c"}, "n1")
    assert not NodeSelector.from_dict({"nodeSelectorTerms": []}).matches(LABELS, "n1")
    assert not NodeSelector.from_dict({"nodeSelectorTerms": [{}]}).matches(LABELS, "n1")
    assert sel.errors == ()


def test_node_selector_term_with_parse_error_matches_nothing_but_others_do() -> None:
    sel = NodeSelector.from_dict(
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [expr("cores", "Gt", "many")]},
                {"matchExpressions": [expr("zone", "In", "a")]},
            ]
        },
        "required",
    )
    assert sel.errors == (
        "required.nodeSelectorTerms[0].matchExpressions[0].values[0]: "
        'value must be an integer for operator Gt: "many"',
    )
    assert sel.matches(LABELS, "n1")
    assert not sel.matches({"cores": "100"}, "n1")


def test_node_selector_error_path() -> None:
    with pytest.raises(SelectorError) as info:
        NodeSelector.from_dict(
            {"nodeSelectorTerms": [{"matchExpressions": [expr("zone", "Near", "a")]}]}, "x"
        )
    assert info.value.path == "x.nodeSelectorTerms[0].matchExpressions[0].operator"


# --- preferred terms ----------------------------------------------------------------------


def pref(weight: Any, *exprs: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "preference": {"matchExpressions": list(exprs)}}


def test_preferred_scheduling_terms_score() -> None:
    terms = PreferredSchedulingTerms.from_list(
        [
            pref(10, expr("zone", "In", "a")),
            pref(5, expr("tier", "In", "front")),
            pref(80, expr("zone", "In", "b")),
            {"weight": 3, "preference": {"matchFields": [expr("metadata.name", "In", "n1")]}},
        ]
    )
    assert terms.score(LABELS, "n1") == 18
    assert terms.score(LABELS, "n2") == 15
    assert terms.score({"zone": "b"}, "n2") == 80
    assert terms.score({}, "n2") == 0
    assert terms.error is None
    assert terms


def test_preferred_scheduling_terms_drop_empty_preferences_and_keep_error() -> None:
    terms = PreferredSchedulingTerms.from_list(
        [
            {"weight": 7, "preference": {}},
            pref(4, expr("cores", "Lt", "x")),
            pref(2, expr("app", "Exists")),
        ]
    )
    assert len(terms.terms) == 1
    assert terms.score(LABELS, "n1") == 2
    assert terms.error is not None and "must be an integer" in terms.error
    assert not PreferredSchedulingTerms.from_list(None)


@pytest.mark.parametrize("weight", [0, 101, -1, None, "5", 1.5])
def test_preferred_weight_validation(weight: Any) -> None:
    with pytest.raises(SelectorError) as info:
        PreferredSchedulingTerms.from_list([pref(weight, expr("app", "Exists"))], "p")
    assert info.value.path == "p[0].weight"


def test_preferred_from_pod_spec() -> None:
    spec = {
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [pref(9, expr("app", "Exists"))]
            }
        }
    }
    assert PreferredSchedulingTerms.from_pod_spec(spec).score(LABELS, "n") == 9
    assert PreferredSchedulingTerms.from_pod_spec({}).score(LABELS, "n") == 0


# --- required node affinity -----------------------------------------------------------


def required(*terms: dict[str, Any], node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    }
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return spec


@pytest.mark.parametrize(
    ("spec", "labels", "name", "matches"),
    [
        ({}, {}, "n1", True),
        ({"nodeSelector": {"zone": "a"}}, LABELS, "n1", True),
        ({"nodeSelector": {"zone": "b"}}, LABELS, "n1", False),
        ({"nodeSelector": {}}, {}, "n1", True),
        (required({"matchExpressions": [expr("zone", "In", "a")]}), LABELS, "n1", True),
        (required({"matchExpressions": [expr("zone", "In", "b")]}), LABELS, "n1", False),
        (
            required({"matchExpressions": [expr("zone", "In", "a")]}, node_selector={"app": "web"}),
            LABELS,
            "n1",
            True,
        ),
        (
            required({"matchExpressions": [expr("zone", "In", "a")]}, node_selector={"app": "x"}),
            LABELS,
            "n1",
            False,
        ),
        (required(), LABELS, "n1", False),
        (required({"matchFields": [expr("metadata.name", "In", "n1")]}), {}, "n1", True),
        (required({"matchFields": [expr("metadata.name", "In", "n1")]}), {}, "n2", False),
    ],
)
def test_required_node_affinity_matches(
    spec: dict[str, Any], labels: dict[str, str], name: str, matches: bool
) -> None:
    assert RequiredNodeAffinity.from_pod_spec(spec).matches(labels, name) is matches


def name_in(*names: str) -> dict[str, Any]:
    return expr("metadata.name", "In", *names)


# Mirrors the NodeAffinity plugin's PreFilter tests for PreFilterResult.NodeNames.
@pytest.mark.parametrize(
    ("spec", "node_names"),
    [
        ({}, None),
        ({"nodeSelector": {"zone": "a"}}, None),
        (required(), None),
        (required({"matchFields": [name_in("n1")]}), frozenset({"n1"})),
        (
            required({"matchFields": [name_in("n1")]}, {"matchFields": [name_in("n2")]}),
            frozenset({"n1", "n2"}),
        ),
        (
            required({"matchFields": [name_in("n1")]}, {"matchExpressions": [expr("a", "Exists")]}),
            None,
        ),
        (required({"matchFields": [name_in("n1"), name_in("n1")]}), frozenset({"n1"})),
        (required({"matchFields": [name_in("n1"), name_in("n2")]}), frozenset()),
        (
            required(
                {"matchFields": [name_in("n1"), name_in("n2")]}, {"matchFields": [name_in("n3")]}
            ),
            frozenset({"n3"}),
        ),
        (required({"matchFields": [expr("metadata.name", "NotIn", "n1")]}), None),
        (
            required(
                {
                    "matchFields": [name_in("n1")],
                    "matchExpressions": [expr("zone", "In", "a")],
                }
            ),
            frozenset({"n1"}),
        ),
    ],
)
def test_required_node_affinity_node_names(
    spec: dict[str, Any], node_names: frozenset[str] | None
) -> None:
    assert RequiredNodeAffinity.from_pod_spec(spec).node_names == node_names


def test_required_node_affinity_flags_and_errors() -> None:
    assert RequiredNodeAffinity.from_pod_spec({}).is_empty
    a = RequiredNodeAffinity.from_pod_spec({"nodeSelector": {}})
    assert not a.is_empty and a.node_selector == {} and a.affinity is None
    with pytest.raises(SelectorError) as info:
        RequiredNodeAffinity.from_pod_spec({"nodeSelector": {"zone": 3}})
    assert str(info.value) == "nodeSelector.zone: expected a string, got number: 3"
    with pytest.raises(SelectorError) as info:
        RequiredNodeAffinity.from_pod_spec(required({"matchExpressions": [expr("z", "Between")]}))
    assert info.value.path == (
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].operator"
    )
