"""Tests of wasmsched.config.expand: multiPoint expansion, ordering, weights, errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wasmsched.config import (
    DEFAULT_PLUGINS,
    EXTENSION_POINTS,
    ConfigError,
    PluginRef,
    PluginSet,
    Profile,
    SchedulerConfig,
    default_config,
    expand_config,
    expand_extension_points,
    load_config,
    merge_plugins,
)
from wasmsched.config.defaults import default_plugin_sets
from wasmsched.scheduler.registry import PluginRegistry
from wasmsched.wasm import WASM_ARGS_KIND

# Which points the in-tree plugins implement (k8s ExpandedPluginsV1, v1.33 defaults).
IN_TREE: dict[str, set[str]] = {
    "SchedulingGates": {"preEnqueue"},
    "PrioritySort": {"queueSort"},
    "NodeUnschedulable": {"filter"},
    "NodeName": {"filter"},
    "TaintToleration": {"filter", "preScore", "score"},
    "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
    "NodePorts": {"preFilter", "filter"},
    "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
    "VolumeRestrictions": {"preFilter", "filter"},
    "NodeVolumeLimits": {"preFilter", "filter"},
    "VolumeBinding": {"preFilter", "filter", "preScore", "score", "reserve", "preBind"},
    "VolumeZone": {"preFilter", "filter"},
    "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
    "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
    "DefaultPreemption": {"postFilter"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "ImageLocality": {"score"},
    "DefaultBinder": {"bind"},
    "DynamicResources": {
        "preEnqueue",
        "preFilter",
        "filter",
        "postFilter",
        "score",
        "reserve",
        "preBind",
    },
    "NodeDeclaredFeatures": {"preFilter", "filter"},
}
# Fake out-of-tree plugins for the ordering tests.
FAKE: dict[str, set[str]] = {
    "A": {"filter", "score"},
    "B": {"filter", "score"},
    "C": {"filter", "score"},
    "F": {"filter"},
    "S": {"score"},
    "Sort2": {"queueSort"},
    "Binder2": {"bind"},
}
TABLE = IN_TREE | FAKE


def implements(name: str, point: str) -> bool:
    return point in TABLE.get(name, set())


def refs(*items: str | tuple[str, int]) -> list[PluginRef]:
    return [PluginRef(i) if isinstance(i, str) else PluginRef(*i) for i in items]


def profile(**sections: PluginSet) -> Profile:
    """A profile whose custom sections are merged with the defaults."""
    return Profile("p", merge_plugins(default_plugin_sets(), sections))


def bare(**sections: PluginSet) -> Profile:
    """A profile with exactly these sections (no defaults), plus a sort and a binder."""
    plugins = {name: PluginSet() for name in ("multiPoint", *EXTENSION_POINTS)}
    plugins["queueSort"] = PluginSet(refs("PrioritySort"))
    plugins["bind"] = PluginSet(refs("DefaultBinder"))
    plugins.update(sections)
    return Profile("p", plugins, source="s.yaml", index=2)


def names(entries: list[tuple[str, int]]) -> list[str]:
    return [n for n, _ in entries]


def test_default_profile_expansion() -> None:
    out = expand_extension_points(default_config().profiles[0], implements)
    assert set(out) == set(EXTENSION_POINTS)
    assert out["score"] == [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ]
    order = [p.name for p in DEFAULT_PLUGINS]
    for point in EXTENSION_POINTS:
        want = [n for n in order if point in IN_TREE[n]]
        assert names(out[point]) == want, point
    assert out["queueSort"] == [("PrioritySort", 1)]
    assert out["bind"] == [("DefaultBinder", 1)]
    assert out["postFilter"] == [("DynamicResources", 1), ("DefaultPreemption", 1)]
    assert out["permit"] == [] and out["postBind"] == []


@pytest.mark.parametrize(
    ("multi", "own", "want"),
    [
        pytest.param(
            PluginSet(refs("A", "B", "C")), PluginSet(), ["A", "B", "C"], id="multipoint-only"
        ),
        pytest.param(
            PluginSet(refs("A", "B")), PluginSet(refs("C")), ["A", "B", "C"], id="part2-then-part3"
        ),
        pytest.param(
            PluginSet(refs("A", "B", "C")),
            PluginSet(refs("C", "F", "A")),
            ["C", "A", "B", "F"],
            id="overrides-first-in-point-order",
        ),
        pytest.param(
            PluginSet(refs("A", "B", "C")),
            PluginSet(disabled=refs("B")),
            ["A", "C"],
            id="disabled-at-point",
        ),
        pytest.param(
            PluginSet(refs("A", "B", "C")),
            PluginSet(refs("F", "B"), refs("*")),
            ["F", "B"],
            id="star-skips-expansion",
        ),
        pytest.param(
            PluginSet(refs("A", "S", "B")), PluginSet(), ["A", "B"], id="skip-non-implementers"
        ),
        pytest.param(
            PluginSet(refs("A", "B")),
            PluginSet(refs("B"), refs("B")),
            ["A", "B"],
            id="disabled-and-enabled-goes-to-part3",
        ),
    ],
)
def test_filter_order(multi: PluginSet, own: PluginSet, want: list[str]) -> None:
    out = expand_extension_points(bare(multiPoint=multi, filter=own), implements)
    assert names(out["filter"]) == want


@pytest.mark.parametrize(
    ("multi", "own", "want"),
    [
        pytest.param(
            PluginSet(refs(("A", 3), "B")), PluginSet(), [("A", 3), ("B", 1)], id="multipoint"
        ),
        pytest.param(
            PluginSet(refs(("A", 3))),
            PluginSet(refs(("A", 5))),
            [("A", 5)],
            id="point-weight-wins",
        ),
        pytest.param(
            PluginSet(refs(("A", 3))),
            PluginSet(refs("A")),
            [("A", 1)],
            id="point-entry-without-weight-is-1-as-upstream",
        ),
        pytest.param(
            PluginSet(refs(("A", 3), ("B", 4))),
            PluginSet(refs(("S", 7), ("B", 2))),
            [("B", 2), ("A", 3), ("S", 7)],
            id="three-parts-with-weights",
        ),
    ],
)
def test_score_weights(multi: PluginSet, own: PluginSet, want: list[tuple[str, int]]) -> None:
    out = expand_extension_points(bare(multiPoint=multi, score=own), implements)
    assert out["score"] == want


def test_default_weight_override_through_multipoint() -> None:
    prof = profile(multiPoint=PluginSet(refs(("TaintToleration", 10), ("S", 6))))
    score = dict(expand_extension_points(prof, implements)["score"])
    assert score["TaintToleration"] == 10 and score["S"] == 6 and score["NodeAffinity"] == 2


def test_replace_default_queue_sort_and_binder() -> None:
    prof = profile(
        queueSort=PluginSet(refs("Sort2"), refs("*")),
        bind=PluginSet(refs("Binder2"), refs("DefaultBinder")),
    )
    out = expand_extension_points(prof, implements)
    assert out["queueSort"] == [("Sort2", 1)]
    assert out["bind"] == [("Binder2", 1)]


def test_from_file(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(
        textwrap.dedent(
            """
            apiVersion: kubescheduler.config.k8s.io/v1
            kind: KubeSchedulerConfiguration
            profiles:
              - plugins:
                  multiPoint:
                    enabled: [{name: W, weight: 5}]
                  score:
                    disabled: [{name: ImageLocality}]
                pluginConfig:
                  - {name: W, args: {guestURL: "file://w.wasm"}}
            """
        )
    )
    registry = PluginRegistry(kinds=(WASM_ARGS_KIND,))
    for name in sorted(IN_TREE):
        registry.register(name, lambda args, handle: None)
    cfg = load_config(path, registry)
    table = TABLE | {"W": {"filter", "score"}}
    out = expand_config(cfg, lambda n, p: p in table.get(n, set()))["default-scheduler"]
    assert out["filter"][-1] == ("W", 1)
    assert out["score"][-1] == ("W", 5)
    assert "ImageLocality" not in names(out["score"])


EXPAND_ERRORS = [
    (
        "does-not-extend",
        bare(score=PluginSet(refs("A", "F"))),
        's.yaml: profiles[2].plugins.score.enabled[1].name: plugin does not extend score: "F"',
    ),
    (
        "unknown-at-point",
        bare(filter=PluginSet(refs("Nope"))),
        's.yaml: profiles[2].plugins.filter.enabled[0].name: plugin does not extend filter: "Nope"',
    ),
    (
        "duplicate-at-point",
        bare(filter=PluginSet(refs("A", "A"))),
        's.yaml: profiles[2].plugins.filter.enabled[1].name: duplicate plugin: "A"',
    ),
    (
        "double-registration",
        bare(multiPoint=PluginSet(refs("F", "F"))),
        's.yaml: profiles[2].plugins.multiPoint.enabled: plugin registered twice for filter: "F"',
    ),
    (
        "two-queue-sorts",
        bare(queueSort=PluginSet(refs("PrioritySort", "Sort2"))),
        "s.yaml: profiles[2].plugins.queueSort: only one queue sort plugin can be enabled:"
        ' ["PrioritySort", "Sort2"]',
    ),
    (
        "two-queue-sorts-via-multipoint",
        bare(multiPoint=PluginSet(refs("Sort2"))),
        "s.yaml: profiles[2].plugins.queueSort: only one queue sort plugin can be enabled:"
        ' ["Sort2", "PrioritySort"]',
    ),
    (
        "no-queue-sort",
        bare(queueSort=PluginSet()),
        "s.yaml: profiles[2].plugins.queueSort: one queue sort plugin is required: []",
    ),
    (
        "no-binder",
        bare(bind=PluginSet(disabled=refs("*"))),
        "s.yaml: profiles[2].plugins.bind: at least one bind plugin is needed: []",
    ),
    (
        "zero-weight",
        bare(multiPoint=PluginSet(refs(("S", 0)))),
        's.yaml: profiles[2].plugins.score: weight must be greater than 0: "S"',
    ),
]


@pytest.mark.parametrize(
    ("prof", "want"), [e[1:] for e in EXPAND_ERRORS], ids=[e[0] for e in EXPAND_ERRORS]
)
def test_expand_errors(prof: Profile, want: str) -> None:
    with pytest.raises(ConfigError) as info:
        expand_extension_points(prof, implements)
    assert str(info.value) == want


def test_profiles_must_share_queue_sort() -> None:
    first = profile()
    second = profile(
        multiPoint=PluginSet(refs("Sort2"), refs("PrioritySort")),
    )
    second.scheduler_name, second.index = "q", 1
    cfg = SchedulerConfig(profiles=[first, second], source="c.yaml")
    with pytest.raises(ConfigError) as info:
        expand_config(cfg, implements)
    assert str(info.value) == (
        "c.yaml: profiles[1].plugins.queueSort: queue sort plugin must be the same for all"
        ' profiles: "Sort2"'
    )
    other = profile()
    other.scheduler_name = "other"
    out = expand_config(SchedulerConfig(profiles=[first, other]), implements)
    assert list(out) == ["p", "other"]
