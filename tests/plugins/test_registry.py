"""The in-tree registry: names, factories and the extension points each plugin serves."""

from __future__ import annotations

import pytest
from conftest import FakeHandle

from wasmsched.framework import interfaces as fw
from wasmsched.plugins.registry import IN_TREE_NAMES, in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

EXPECTED_POINTS = {
    "SchedulingGates": {fw.PRE_ENQUEUE},
    "PrioritySort": {fw.QUEUE_SORT},
    "NodeUnschedulable": {fw.FILTER},
    "NodeName": {fw.FILTER},
    "TaintToleration": {fw.FILTER, fw.PRE_SCORE, fw.SCORE},
    "NodeAffinity": {fw.PRE_FILTER, fw.FILTER, fw.PRE_SCORE, fw.SCORE},
    "NodePorts": {fw.PRE_FILTER, fw.FILTER},
    "NodeResourcesFit": {fw.PRE_FILTER, fw.FILTER, fw.PRE_SCORE, fw.SCORE},
    "VolumeRestrictions": {fw.PRE_FILTER, fw.FILTER},
    "NodeVolumeLimits": {fw.PRE_FILTER, fw.FILTER},
    # PreScore and Score from 1.37 (StorageCapacityScoring)
    "VolumeBinding": {fw.PRE_FILTER, fw.FILTER, fw.PRE_SCORE, fw.SCORE, fw.RESERVE, fw.PRE_BIND},
    "VolumeZone": {fw.PRE_FILTER, fw.FILTER},
    "PodTopologySpread": {fw.PRE_FILTER, fw.FILTER, fw.PRE_SCORE, fw.SCORE},
    "InterPodAffinity": {fw.PRE_FILTER, fw.FILTER, fw.PRE_SCORE, fw.SCORE},
    "DynamicResources": {
        fw.PRE_ENQUEUE,
        fw.PRE_FILTER,
        fw.FILTER,
        fw.POST_FILTER,
        fw.SCORE,
        fw.RESERVE,
        fw.PRE_BIND,
    },
    "DefaultPreemption": {fw.POST_FILTER},
    "NodeResourcesBalancedAllocation": {fw.PRE_SCORE, fw.SCORE},
    "ImageLocality": {fw.SCORE},
    "DefaultBinder": {fw.BIND},
    "NodeDeclaredFeatures": {fw.PRE_FILTER, fw.FILTER},
}


def test_names() -> None:
    assert set(IN_TREE_NAMES) == set(EXPECTED_POINTS)
    assert in_tree_registry().names() == list(IN_TREE_NAMES)


@pytest.mark.parametrize("name", IN_TREE_NAMES)
def test_factory_builds_plugin(name: str) -> None:
    registry = in_tree_registry()
    handle = FakeHandle()
    # DynamicResources does nothing (registers no events) without its gate: build it as
    # the release whose points are listed, 1.37.
    handle.features = SchedulerFeatures.of(KubernetesVersion(1, 37))
    plugin = registry.factories[name]({}, handle)
    assert plugin.name == name
    points = {p for p in fw.POINT_METHODS if fw.implements(plugin, p)}
    assert points == EXPECTED_POINTS[name]
    assert fw.has_enqueue_extensions(plugin)
    if name != "DefaultPreemption":  # k8s registers none for it without async preemption
        assert plugin.events_to_register()


def test_registry_is_the_default_plugin_set_in_order() -> None:
    from wasmsched.config import PLUGINS_1_33
    from wasmsched.config.defaults import default_plugins

    # v1.33's set, and DynamicResources where 1.34 puts it (DRA GA, before DefaultPreemption),
    # then NodeDeclaredFeatures last as 1.36 appends it (its gate on by default).
    assert [n for n in IN_TREE_NAMES if n not in ("DynamicResources", "NodeDeclaredFeatures")] == [
        p.name for p in PLUGINS_1_33
    ]
    v136 = default_plugins(SchedulerFeatures.of(KubernetesVersion(1, 36)))
    assert list(IN_TREE_NAMES) == [p.name for p in v136]


def test_registries_are_independent() -> None:
    a = in_tree_registry()
    a.register("Custom", lambda args, handle: object())
    assert "Custom" not in in_tree_registry()
