"""Building a profile's Framework from its configuration (scheduler/profile.py: kube's
profile.NewMap and NewFramework)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sched_support import default_profile_config as _config
from wasmsched.config import PLUGINS_1_33, ConfigError, SchedulerConfig
from wasmsched.errors import InputError
from wasmsched.extenders import ignored_resources
from wasmsched.framework.interfaces import Plugin, Registry
from wasmsched.framework.waiting_pods import WaitingPods
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.scheduler.profile import ProfileOptions, build_profile, build_profiles

KNOWN = {p.name for p in PLUGINS_1_33}  # sched_support builds v1.33 profiles
GPU = {
    "urlPrefix": "http://a",
    "managedResources": [{"name": "x.io/gpu", "ignoredByScheduler": True}],
}
FPGA = {"urlPrefix": "http://b", "managedResources": [{"name": "x.io/fpga"}]}


def _recording_registry(built: dict[str, list[dict[str, Any]]]) -> Registry:
    """The in-tree plugins, each factory call recorded with the args it got."""
    registry = Registry()
    for name, factory in in_tree_registry().factories.items():

        def build(args: dict[str, Any], handle: Any, name: str = name, f: Any = factory) -> Plugin:
            built.setdefault(name, []).append(dict(args))
            return f(args, handle)  # type: ignore[no-any-return]

        registry.register(name, build)
    return registry


class _Handle:
    """What the in-tree plugins read of the handle while they are built."""

    parallelism = 16
    features = SchedulerFeatures.of(KubernetesVersion(1, 33))

    def objects(self, kind: str) -> list[Any]:
        return []


def _options(registry: Registry, cfg: SchedulerConfig) -> ProfileOptions:
    return ProfileOptions(
        registry,
        _Handle(),  # type: ignore[arg-type]
        WaitingPods(),
        ignored_resources=tuple(ignored_resources(cfg.extenders)),
        source=cfg.source,
    )


@pytest.mark.parametrize(
    ("extenders", "plugin_config", "expected"),
    [
        # no extender: the configuration's args, defaulted at load
        ([], None, {"ignoredResources": [], "strategy": "LeastAllocated"}),
        # an extender's ignoredByScheduler resource overwrites ignoredResources...
        ([GPU, FPGA], None, {"ignoredResources": ["x.io/gpu"], "strategy": "LeastAllocated"}),
        # ...even one the pluginConfig names, whose other args stay (scheduler.go:
        # buildExtenders)
        (
            [GPU],
            [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "ignoredResources": ["other.io/z"],
                        "scoringStrategy": {"type": "MostAllocated"},
                    },
                }
            ],
            {"ignoredResources": ["x.io/gpu"], "strategy": "MostAllocated"},
        ),
        # an extender that ignores nothing changes nothing
        ([FPGA], None, {"ignoredResources": [], "strategy": "LeastAllocated"}),
    ],
)
def test_a_plugin_is_built_once_with_its_profiles_args(
    extenders: list[dict[str, Any]],
    plugin_config: list[dict[str, Any]] | None,
    expected: dict[str, Any],
) -> None:
    cfg = _config(extenders, plugin_config)
    before = copy.deepcopy(cfg.profiles[0].plugin_args)
    built: dict[str, list[dict[str, Any]]] = {}
    profile = build_profile(cfg.profiles[0], _options(_recording_registry(built), cfg))
    # one instance per plugin, however many extension points it serves
    assert {name: len(calls) for name, calls in built.items()} == dict.fromkeys(KNOWN, 1)
    (fit,) = built["NodeResourcesFit"]
    got = {
        "ignoredResources": fit.get("ignoredResources", []),
        "strategy": fit["scoringStrategy"]["type"],
    }
    assert got == expected
    assert profile.skipped_plugins == []
    assert profile.framework.profile_name == "default-scheduler"
    # the configuration itself is left as it was loaded
    assert cfg.profiles[0].plugin_args == before


def test_ignored_resources_need_node_resources_fit() -> None:
    cfg = _config([GPU], disabled=["NodeResourcesFit"])
    with pytest.raises(ConfigError) as err:
        build_profiles(cfg, _options(in_tree_registry(), cfg))
    assert str(err.value) == (
        "test.yaml: profiles[0]: can't find NodeResourcesFitArgs in plugin config "
        "(extenders have managedResources with ignoredByScheduler)"
    )


def test_a_plugin_the_registry_lacks_is_skipped_and_reported() -> None:
    cfg = _config()
    registry = in_tree_registry()
    del registry.factories["ImageLocality"]
    profiles = build_profiles(cfg, _options(registry, cfg))
    assert list(profiles) == ["default-scheduler"]
    assert profiles["default-scheduler"].skipped_plugins == ["ImageLocality"]


def test_a_plugin_that_cannot_be_built_is_a_config_error_naming_it() -> None:
    cfg = _config()
    registry = in_tree_registry()

    def broken(args: dict[str, Any], handle: Any) -> Plugin:
        raise InputError("guest.wasm: not a wasm module")

    registry.factories["ImageLocality"] = broken
    with pytest.raises(ConfigError) as err:
        build_profile(cfg.profiles[0], _options(registry, cfg))
    assert str(err.value) == 'test.yaml: plugin "ImageLocality": guest.wasm: not a wasm module'
