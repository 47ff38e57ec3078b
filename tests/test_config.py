"""Tests of wasmsched.config: loading, defaulting, merging, validation and error messages."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from wasmsched.config import (
    DEFAULT_PLUGINS,
    EXTENSION_POINTS,
    PLUGINS_1_33,
    ConfigError,
    PluginRef,
    PluginSet,
    SchedulerConfig,
    default_config,
    load_config,
    merge_plugin_set,
    parse_config,
)
from wasmsched.config.loader import parse_duration
from wasmsched.scheduler.registry import PluginRegistry
from wasmsched.wasm import WASM_ARGS_KIND
from wasmsched.wasm.config import resolve_guest_url
from wasmsched.wasm.factory import WasmPluginFactory

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
KNOWN = frozenset({p.name for p in DEFAULT_PLUGINS} | {"CustomSort", "Extra", "Extra2"})
DEFAULT_NAMES = [p.name for p in DEFAULT_PLUGINS]


def catalog() -> PluginRegistry:
    """KNOWN as registered plugins, plus the wasm kind (as default_registry() offers)."""
    registry = PluginRegistry(kinds=(WASM_ARGS_KIND,))
    for name in sorted(KNOWN):
        registry.register(name, lambda args, handle: None)
    return registry


def write(tmp_path: Path, body: str, header: bool = True) -> Path:
    path = tmp_path / "sched.yaml"
    path.write_text((HEADER if header else "") + textwrap.dedent(body))
    return path


def load(tmp_path: Path, body: str) -> SchedulerConfig:
    return load_config(write(tmp_path, body), catalog())


def error_of(tmp_path: Path, body: str, header: bool = True) -> str:
    path = write(tmp_path, body, header)
    with pytest.raises(ConfigError) as info:
        load_config(path, catalog())
    message = str(info.value)
    assert "\n" not in message
    prefix = f"{path}: "
    assert message.startswith(prefix)
    return message[len(prefix) :]


def refs(*items: str | tuple[str, int]) -> list[PluginRef]:
    return [PluginRef(i) if isinstance(i, str) else PluginRef(*i) for i in items]


# ---------------------------------------------------------------------------------------
# Merging


@pytest.mark.parametrize(
    ("default", "custom", "want_enabled", "want_disabled"),
    [
        pytest.param(
            PluginSet(refs("A", ("B", 2), "C")),
            PluginSet(),
            refs("A", ("B", 2), "C"),
            [],
            id="no-custom",
        ),
        pytest.param(
            PluginSet(refs("A", ("B", 2), "C")),
            PluginSet(refs(("B", 5))),
            refs("A", ("B", 5), "C"),
            [],
            id="replace-in-place-weight-wins",
        ),
        pytest.param(
            PluginSet(refs("A", ("B", 2), "C")),
            PluginSet(refs("B")),
            refs("A", "B", "C"),
            [],
            id="replace-in-place-without-weight",
        ),
        pytest.param(
            PluginSet(refs("A", "B")),
            PluginSet(refs("X", "Y")),
            refs("A", "B", "X", "Y"),
            [],
            id="append-in-order",
        ),
        pytest.param(
            PluginSet(refs("A", "B", "C")),
            PluginSet(refs("Y", "A", "X"), refs("B")),
            refs("A", "C", "Y", "X"),
            refs("B"),
            id="disable-one-replace-one-append-two",
        ),
        pytest.param(
            PluginSet(refs("A", "B", "C")),
            PluginSet(refs("C", "X"), refs("*")),
            refs("C", "X"),
            refs("*"),
            id="star-drops-all-defaults",
        ),
        pytest.param(
            PluginSet(refs("A", "B", "C")),
            PluginSet(refs(("A", 4)), refs("A")),
            refs("B", "C", ("A", 4)),
            refs("A"),
            id="disable-and-enable-moves-to-end",
        ),
        pytest.param(
            PluginSet(refs("A"), refs("Z")),
            PluginSet(refs("B"), refs("A")),
            refs("B"),
            refs("A", "Z"),
            id="default-disabled-kept",
        ),
    ],
)
def test_merge_plugin_set(
    default: PluginSet,
    custom: PluginSet,
    want_enabled: list[PluginRef],
    want_disabled: list[PluginRef],
) -> None:
    merged = merge_plugin_set(default, custom)
    assert merged.enabled == want_enabled
    assert merged.disabled == want_disabled


def test_profile_merge_from_file(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
          - plugins:
              multiPoint:
                enabled:
                  - {name: Extra, weight: 7}
                  - {name: TaintToleration, weight: 5}
                disabled:
                  - name: ImageLocality
              score:
                enabled:
                  - {name: NodeAffinity, weight: 9}
                disabled:
                  - name: "*"
        """,
    )
    prof = cfg.profiles[0]
    multi = prof.plugins["multiPoint"]
    want = [
        PluginRef("TaintToleration", 5) if p.name == "TaintToleration" else p
        for p in DEFAULT_PLUGINS
        if p.name != "ImageLocality"
    ]
    assert multi.enabled == [*want, PluginRef("Extra", 7)]
    assert multi.disabled == [PluginRef("ImageLocality")]
    assert prof.plugins["score"] == PluginSet(refs(("NodeAffinity", 9)), refs("*"))
    assert set(prof.plugins) == {"multiPoint", *EXTENSION_POINTS}
    for point in EXTENSION_POINTS:
        if point != "score":
            assert prof.plugins[point] == PluginSet()


# ---------------------------------------------------------------------------------------
# Defaults

DEFAULT_ARGS: dict[str, dict[str, Any]] = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "InterPodAffinity": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    },
    "NodeResourcesFit": {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        }
    },
    "PodTopologySpread": {"defaultingType": "System"},
    # 1.37 (the default release): StorageCapacityScoring defaults the shape
    # (SetDefaults_VolumeBindingArgs).
    "VolumeBinding": {
        "bindTimeoutSeconds": 600,
        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
    },
}


def test_default_plugins_order_and_weights() -> None:
    # v1.33's list; later releases' are derived from it (tests/test_release_features.py).
    assert [(p.name, p.weight) for p in PLUGINS_1_33] == [
        ("SchedulingGates", None),
        ("PrioritySort", None),
        ("NodeUnschedulable", None),
        ("NodeName", None),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", None),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", None),
        ("NodeVolumeLimits", None),
        ("VolumeBinding", None),
        ("VolumeZone", None),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DefaultPreemption", None),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", None),
    ]


def test_default_config() -> None:
    cfg = default_config()
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert cfg.extenders == [] and cfg.source is None
    [prof] = cfg.profiles
    assert prof.scheduler_name == "default-scheduler"
    assert prof.plugins["multiPoint"].enabled == list(DEFAULT_PLUGINS)
    assert prof.plugin_args == DEFAULT_ARGS
    assert prof.plugin_kinds == {} and prof.percentage_of_nodes_to_score is None
    assert cfg.profile("default-scheduler") is prof
    assert cfg.profile("other") is None


@pytest.mark.parametrize(
    "body",
    ["", "profiles: []\n", "profiles:\n  - {}\n", "profiles:\n  - plugins: {}\n"],
    ids=["no-profiles-key", "empty-profiles", "empty-profile", "empty-plugins"],
)
def test_file_without_profiles_equals_default(tmp_path: Path, body: str) -> None:
    cfg = load(tmp_path, body)
    want = default_config()
    assert cfg.source == str(tmp_path / "sched.yaml")
    [prof] = cfg.profiles
    assert prof.scheduler_name == "default-scheduler"
    assert prof.plugins == want.profiles[0].plugins
    assert prof.plugin_args == want.profiles[0].plugin_args


def test_top_level_fields(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        parallelism: 4
        percentageOfNodesToScore: 50
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 2
        leaderElection: {leaderElect: false}
        clientConnection: {kubeconfig: /etc/kube.conf}
        healthzBindAddress: 0.0.0.0:10251
        metricsBindAddress: 0.0.0.0:10251
        enableProfiling: true
        enableContentionProfiling: false
        delayCacheUntilActive: true
        profiles:
          - schedulerName: a
            percentageOfNodesToScore: 30
          - schedulerName: b
        """,
    )
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (4, 50)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2, 2)
    assert [p.scheduler_name for p in cfg.profiles] == ["a", "b"]
    assert [p.percentage_of_nodes_to_score for p in cfg.profiles] == [30, None]
    assert [p.index for p in cfg.profiles] == [0, 1]


def test_in_tree_args_are_defaulted_and_kept(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
          - pluginConfig:
              - name: NodeResourcesFit
                args:
                  kind: NodeResourcesFitArgs
                  apiVersion: kubescheduler.config.k8s.io/v1
                  scoringStrategy:
                    type: MostAllocated
                    resources: [{name: cpu, weight: 0}, {name: nvidia.com/gpu, weight: 5}]
              - name: DefaultPreemption
                args: {minCandidateNodesAbsolute: 0}
              - name: Extra
                args: {anything: [1, 2]}
        """,
    )
    args = cfg.profiles[0].plugin_args
    assert args["NodeResourcesFit"] == {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 5}],
        }
    }
    assert args["DefaultPreemption"] == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 0,
    }
    assert args["Extra"] == {"anything": [1, 2]}
    assert args["VolumeBinding"] == DEFAULT_ARGS["VolumeBinding"]


def test_args_defaults_only_for_enabled_plugins(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
          - plugins:
              multiPoint:
                disabled: [{name: "*"}]
                enabled: [{name: PrioritySort}, {name: DefaultBinder}, {name: InterPodAffinity}]
        """,
    )
    assert cfg.profiles[0].plugin_args == {"InterPodAffinity": DEFAULT_ARGS["InterPodAffinity"]}


def test_extenders(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        extenders:
          - urlPrefix: http://127.0.0.1:8888/
            filterVerb: filter
            prioritizeVerb: prioritize
            weight: 3
            bindVerb: bind
            enableHTTPS: true
            httpTimeout: 1m30s
            nodeCacheCapable: true
            managedResources: [{name: example.com/foo, ignoredByScheduler: true}]
            ignorable: true
          - urlPrefix: http://127.0.0.1:9999/
            filterVerb: filter
        """,
    )
    first, second = cfg.extenders
    assert (first.url_prefix, first.filter_verb, first.prioritize_verb) == (
        "http://127.0.0.1:8888/",
        "filter",
        "prioritize",
    )
    assert (first.weight, first.bind_verb, first.enable_https, first.ignorable) == (
        3,
        "bind",
        True,
        True,
    )
    assert first.http_timeout_seconds == 90.0 and first.node_cache_capable
    assert [(r.name, r.ignored_by_scheduler) for r in first.managed_resources] == [
        ("example.com/foo", True)
    ]
    assert (second.weight, second.http_timeout_seconds, second.preempt_verb) == (1, 5.0, "")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0.0), ("30s", 30.0), ("1m30s", 90.0), ("500ms", 0.5), ("1.5h", 5400.0)],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "30", "s", "-1s", "1d", "1s ", "1ss"])
def test_parse_duration_rejects(text: str) -> None:
    assert parse_duration(text) is None


# ---------------------------------------------------------------------------------------
# Wasm plugins and guest URLs

WASM_PROFILE = """
profiles:
  - plugins:
      multiPoint:
        enabled: [{name: NodeNumber, weight: 4}]
    pluginConfig:
      - name: NodeNumber
        args:
          guestURL: file://./guests/nodenumber.wasm
          guestConfig: '{"reverse": true}'
          logSeverity: 1
          Args: [test, filter]
          callTimeoutMilliseconds: 250
          memoryLimitMiB: 64
      - name: Unused
        args: {guestURL: "https://example.com/unused.wasm"}
"""


def test_wasm_plugin_enabled_in_multipoint(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, WASM_PROFILE), catalog())
    prof = cfg.profiles[0]
    # Unused has a guestURL but is not enabled in multiPoint: not a wasm plugin
    assert prof.plugin_kinds == {"NodeNumber": "wasm"}
    assert prof.plugin_args["NodeNumber"] == {
        "guestURL": f"file://{tmp_path}/guests/nodenumber.wasm",
        "guestConfig": '{"reverse": true}',
        "logSeverity": 1,
        "Args": ["test", "filter"],
        "callTimeoutMilliseconds": 250,
        "memoryLimitMiB": 64,
    }
    assert prof.plugins["multiPoint"].enabled[-1] == PluginRef("NodeNumber", 4)
    # the profile's own registry builds NodeNumber with the wasm factory; Unused has none
    assert prof.plugin_factories == {"NodeNumber": WasmPluginFactory("NodeNumber")}
    # the same file loads to an equal configuration
    assert load_config(write(tmp_path, WASM_PROFILE), catalog()) == cfg


def test_wasm_defaults(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
          - plugins:
              multiPoint:
                enabled: [{name: W}]
            pluginConfig:
              - {name: W, args: {guestURL: "http://example.com/w.wasm"}}
        """,
    )
    assert cfg.profiles[0].plugin_args["W"] == {
        "guestURL": "http://example.com/w.wasm",
        "guestConfig": "",
        "logSeverity": 0,
        "Args": [],
        "callTimeoutMilliseconds": 1000,
        "memoryLimitMiB": 256,
    }


def test_wasm_plugins_per_profile(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """
        profiles:
          - schedulerName: one
            plugins: {multiPoint: {enabled: [{name: A}]}}
            pluginConfig: [{name: A, args: {guestURL: "file:///a.wasm"}}]
          - schedulerName: two
            plugins: {multiPoint: {enabled: [{name: B}]}}
            pluginConfig: [{name: B, args: {guestURL: "file:///b.wasm"}}]
        """,
    )
    assert list(cfg.profiles[0].plugin_kinds) == ["A"]
    assert list(cfg.profiles[1].plugin_kinds) == ["B"]


def test_plain_names_know_no_wasm_plugins(tmp_path: Path) -> None:
    """Without a catalog offering the wasm kind, a guestURL entry is an unknown plugin."""
    path = write(tmp_path, WASM_PROFILE)
    with pytest.raises(ConfigError, match=r'pluginConfig\[0\]\.name: unknown plugin: "NodeNumber"'):
        load_config(path, KNOWN)


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("file://plugin.wasm", "file:///cfg/dir/plugin.wasm"),
        ("file://./x/plugin.wasm", "file:///cfg/dir/x/plugin.wasm"),
        ("file://../up.wasm", "file:///cfg/up.wasm"),
        ("file:///abs/plugin.wasm", "file:///abs/plugin.wasm"),
        ("http://example.com/p.wasm", "http://example.com/p.wasm"),
        ("https://example.com/p.wasm?x=1", "https://example.com/p.wasm?x=1"),
    ],
)
def test_resolve_guest_url(url: str, want: str) -> None:
    assert resolve_guest_url(url, Path("/cfg/dir")) == want


def test_parse_config_uses_base_dir() -> None:
    data = yaml.safe_load(HEADER + WASM_PROFILE)
    cfg = parse_config(data, "inline", Path("/srv/conf"), catalog())
    assert cfg.source == "inline"
    url = cfg.profiles[0].plugin_args["NodeNumber"]["guestURL"]
    assert url == "file:///srv/conf/guests/nodenumber.wasm"


# ---------------------------------------------------------------------------------------
# Error messages: one line each, exact text

PLUGIN_CONFIG = "profiles:\n  - plugins: {multiPoint: {enabled: [{name: W}]}}\n    pluginConfig:\n"


def wasm_entry(args: str) -> str:
    return PLUGIN_CONFIG + f"      - {{name: W, args: {args}}}\n"


# (id, body after the header, expected message after "<file>: ")
ERRORS: list[tuple[str, str, str]] = [
    (
        "unknown-top-level-field",
        "parallelism: 4\nfoo: bar\n",
        'unknown field: "foo"',
    ),
    (
        "parallelism-type",
        "parallelism: '16'\n",
        'parallelism: must be an integer: "16"',
    ),
    (
        "parallelism-zero",
        "parallelism: 0\n",
        "parallelism: should be an integer value greater than zero: 0",
    ),
    (
        "parallelism-int32",
        "parallelism: 4294967296\n",
        "parallelism: must be less than or equal to 2147483647: 4294967296",
    ),
    (
        "percentage-range",
        "percentageOfNodesToScore: 101\n",
        "percentageOfNodesToScore: not in valid range [0-100]: 101",
    ),
    (
        "initial-backoff",
        "podInitialBackoffSeconds: 0\n",
        "podInitialBackoffSeconds: must be greater than 0: 0",
    ),
    (
        "max-backoff",
        "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
        "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds: 4",
    ),
    (
        "profiles-type",
        "profiles: {schedulerName: x}\n",
        'profiles: must be a list: {"schedulerName": "x"}',
    ),
    (
        "profile-unknown-field",
        "profiles:\n  - schedulrName: x\n",
        "profiles[0]: unknown field schedulrName (did you mean schedulerName?)",
    ),
    (
        "duplicate-scheduler-name",
        "profiles:\n  - schedulerName: default-scheduler\n  - schedulerName: default-scheduler\n",
        'profiles[1].schedulerName: duplicate scheduler name: "default-scheduler"',
    ),
    (
        "missing-scheduler-name",
        "profiles:\n  - schedulerName: a\n  - plugins: {}\n",
        "profiles[1].schedulerName: scheduler name is required",
    ),
    (
        "empty-scheduler-name-single",
        "profiles:\n  - schedulerName: ''\n",
        "profiles[0].schedulerName: scheduler name is required",
    ),
    (
        "profile-percentage",
        "profiles:\n  - percentageOfNodesToScore: -1\n",
        "profiles[0].percentageOfNodesToScore: not in valid range [0-100]: -1",
    ),
    (
        "unknown-section",
        "profiles:\n  - plugins: {scores: {}}\n",
        "profiles[0].plugins: unknown field scores (did you mean score?)",
    ),
    (
        "unknown-plugin",
        "profiles:\n  - plugins:\n      score:\n        enabled:"
        " [{name: TaintToleration}, {name: NodeAffinity}, {name: NodeNumbr}]\n",
        'profiles[0].plugins.score.enabled[2].name: unknown plugin: "NodeNumbr"',
    ),
    (
        "removed-plugin",
        "profiles:\n  - plugins: {filter: {enabled: [{name: EBSLimits}]}}\n",
        "profiles[0].plugins.filter.enabled[0].name: plugin was removed in"
        ' kubescheduler.config.k8s.io/v1: "EBSLimits"',
    ),
    (
        "duplicate-enabled",
        "profiles:\n  - plugins: {multiPoint: {enabled: [{name: Extra}, {name: Extra}]}}\n",
        'profiles[0].plugins.multiPoint.enabled[1].name: duplicate plugin: "Extra"',
    ),
    (
        "plugin-name-missing",
        "profiles:\n  - plugins: {score: {enabled: [{weight: 2}]}}\n",
        "profiles[0].plugins.score.enabled[0].name: required field is missing",
    ),
    (
        "weight-type",
        "profiles:\n  - plugins: {score: {enabled: [{name: Extra, weight: heavy}]}}\n",
        'profiles[0].plugins.score.enabled[0].weight: must be an integer: "heavy"',
    ),
    (
        "weight-zero",
        "profiles:\n  - plugins: {score: {enabled: [{name: Extra}, {name: Extra2, weight: 0}]}}\n",
        "profiles[0].plugins.score.enabled[1].weight: weight must be greater than 0: 0",
    ),
    (
        "duplicate-plugin-config",
        "profiles:\n  - pluginConfig: [{name: Extra}, {name: Extra}]\n",
        'profiles[0].pluginConfig[1].name: duplicate pluginConfig name: "Extra"',
    ),
    (
        "plugin-config-unknown",
        "profiles:\n  - pluginConfig: [{name: Nope, args: {}}]\n",
        'profiles[0].pluginConfig[0].name: unknown plugin: "Nope"',
    ),
    (
        "plugin-config-args-not-mapping",
        "profiles:\n  - pluginConfig: [{name: Extra, args: [1]}]\n",
        "profiles[0].pluginConfig[0].args: must be a mapping: [1]",
    ),
    (
        "plugin-config-removed",
        "profiles:\n  - pluginConfig: [{name: GCEPDLimits}]\n",
        'profiles[0].pluginConfig[0].name: plugin was removed in kubescheduler.config.k8s.io/v1: "GCEPDLimits"',
    ),
    (
        "typed-args-unknown-field",
        "profiles:\n  - pluginConfig: [{name: InterPodAffinity, args: {hardPodAffinityWeigth: 2}}]\n",
        "profiles[0].pluginConfig[0].args: unknown field hardPodAffinityWeigth"
        " (did you mean hardPodAffinityWeight?)",
    ),
    (
        "typed-args-range",
        "profiles:\n  - pluginConfig: [{name: InterPodAffinity, args: {hardPodAffinityWeight: 101}}]\n",
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: not in valid range [0, 100]: 101",
    ),
    (
        "typed-args-kind",
        "profiles:\n  - pluginConfig: [{name: VolumeBinding, args: {kind: NodeAffinityArgs}}]\n",
        'profiles[0].pluginConfig[0].args.kind: must be VolumeBindingArgs: "NodeAffinityArgs"',
    ),
    (
        "typed-args-not-mapping",
        "profiles:\n  - pluginConfig: [{name: NodeAffinity, args: 3}]\n",
        "profiles[0].pluginConfig[0].args: must be a mapping: 3",
    ),
    (
        "fit-strategy-type",
        "profiles:\n  - pluginConfig:\n      - {name: NodeResourcesFit, args: {scoringStrategy: {type: Most}}}\n",
        "profiles[0].pluginConfig[0].args.scoringStrategy.type: must be one of LeastAllocated,"
        ' MostAllocated, RequestedToCapacityRatio: "Most"',
    ),
    (
        "fit-resource-weight",
        "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n        args:"
        " {scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}]}}\n",
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: resource weight"
        " of cpu not in valid range (0, 100]: 101",
    ),
    (
        "fit-ratio-shape-order",
        "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n        args:\n"
        "          scoringStrategy:\n            type: RequestedToCapacityRatio\n"
        "            requestedToCapacityRatio:\n"
        "              shape: [{utilization: 50, score: 1}, {utilization: 10, score: 5}]\n",
        "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1]"
        ".utilization: values must be sorted in increasing order: 10",
    ),
    (
        "preemption-both-zero",
        "profiles:\n  - pluginConfig:\n      - name: DefaultPreemption\n        args:"
        " {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}\n",
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: cannot be zero at the"
        " same time as minCandidateNodesAbsolute: 0",
    ),
    (
        "spread-system-with-constraints",
        "profiles:\n  - pluginConfig:\n      - name: PodTopologySpread\n        args:\n"
        "          defaultConstraints:\n            - {maxSkew: 1, topologyKey: zone,"
        " whenUnsatisfiable: ScheduleAnyway}\n",
        "profiles[0].pluginConfig[0].args.defaultingType: must be List when defaultConstraints"
        ' are given: "System"',
    ),
    (
        "balanced-weight",
        "profiles:\n  - pluginConfig:\n      - name: NodeResourcesBalancedAllocation\n"
        "        args: {resources: [{name: cpu, weight: 2}]}\n",
        "profiles[0].pluginConfig[0].args.resources[0].weight: must be 1: 2",
    ),
    (
        "guest-url-empty",
        wasm_entry("{guestURL: ''}"),
        "profiles[0].pluginConfig[0].args.guestURL: guestURL is required",
    ),
    (
        "guest-url-null",
        wasm_entry("{guestURL: null}"),
        "profiles[0].pluginConfig[0].args.guestURL: guestURL is required",
    ),
    (
        "guest-url-missing",
        wasm_entry("{guestConfig: x}"),
        "profiles[0].pluginConfig[0].args.guestURL: guestURL is required",
    ),
    (
        "guest-config-mapping",
        wasm_entry("{guestURL: 'file:///w.wasm', guestConfig: {reverse: true}}"),
        'profiles[0].pluginConfig[0].args.guestConfig: must be a string: {"reverse": true}',
    ),
    (
        "log-severity-range",
        wasm_entry("{guestURL: 'file:///w.wasm', logSeverity: 2147483648}"),
        "profiles[0].pluginConfig[0].args.logSeverity: must be less than or equal to"
        " 2147483647: 2147483648",
    ),
    (
        "wasm-args-not-strings",
        wasm_entry("{guestURL: 'file:///w.wasm', Args: [a, 1]}"),
        "profiles[0].pluginConfig[0].args.Args[1]: must be a string: 1",
    ),
    (
        "wasm-memory-limit",
        wasm_entry("{guestURL: 'file:///w.wasm', memoryLimitMiB: 0}"),
        "profiles[0].pluginConfig[0].args.memoryLimitMiB: must be greater than or equal to 1: 0",
    ),
    (
        "wasm-unknown-key",
        wasm_entry("{guestURL: 'file:///w.wasm', guestUrl: x}"),
        "profiles[0].pluginConfig[0].args: unknown field guestUrl (did you mean guestURL?)",
    ),
    (
        "guest-url-scheme",
        wasm_entry("{guestURL: 'ftp://host/w.wasm'}"),
        'profiles[0].pluginConfig[0].args.guestURL: unsupported URL scheme: "ftp://host/w.wasm"',
    ),
    (
        "guest-url-windows-path",
        wasm_entry("{guestURL: 'c:\\foo.wasm'}"),
        'profiles[0].pluginConfig[0].args.guestURL: unsupported URL scheme: "c:\\\\foo.wasm"',
    ),
    (
        "guest-url-no-scheme",
        wasm_entry("{guestURL: plugin.wasm}"),
        'profiles[0].pluginConfig[0].args.guestURL: invalid URL: "plugin.wasm"',
    ),
    (
        "wasm-not-in-multipoint",
        "profiles:\n  - plugins: {filter: {enabled: [{name: W}]}}\n"
        "    pluginConfig: [{name: W, args: {guestURL: 'file:///w.wasm'}}]\n",
        'profiles[0].plugins.filter.enabled[0].name: wasm plugin must be enabled in multiPoint: "W"',
    ),
    (
        "wasm-conflicts-with-builtin",
        "profiles:\n  - pluginConfig: [{name: NodeName, args: {guestURL: 'file:///w.wasm'}}]\n",
        'profiles[0].pluginConfig[0].name: wasm plugin name conflicts with a built-in plugin: "NodeName"',
    ),
    (
        "queue-sort-differs",
        "profiles:\n  - schedulerName: a\n  - schedulerName: b\n"
        "    plugins: {queueSort: {enabled: [{name: CustomSort}], disabled: [{name: '*'}]}}\n",
        'profiles[1].plugins.queueSort: queueSort must be the same for all profiles: ["CustomSort"]',
    ),
    (
        "queue-sort-args-differ",
        "profiles:\n  - schedulerName: a\n    plugins: {queueSort: {enabled: [{name: CustomSort}]}}\n"
        "    pluginConfig: [{name: CustomSort, args: {x: 1}}]\n"
        "  - schedulerName: b\n    plugins: {queueSort: {enabled: [{name: CustomSort}]}}\n"
        "    pluginConfig: [{name: CustomSort, args: {x: 2}}]\n",
        'profiles[1].pluginConfig: queueSort plugin args must be the same for all profiles: "CustomSort"',
    ),
    (
        "extender-weight",
        "extenders: [{urlPrefix: 'http://e/', prioritizeVerb: p}]\n",
        "extenders[0].weight: must have a positive weight applied to it: 0",
    ),
    (
        "extender-two-binders",
        "extenders: [{urlPrefix: 'http://a/', bindVerb: b}, {urlPrefix: 'http://b/', bindVerb: b}]\n",
        "extenders: only one extender can implement bind: 2",
    ),
    (
        "extender-timeout",
        "extenders: [{urlPrefix: 'http://e/', httpTimeout: 30}]\n",
        "extenders[0].httpTimeout: must be a string: 30",
    ),
    (
        "extender-timeout-format",
        "extenders: [{urlPrefix: 'http://e/', httpTimeout: 30 seconds}]\n",
        'extenders[0].httpTimeout: must be a duration such as "30s": "30 seconds"',
    ),
    (
        "extender-resource-name",
        "extenders: [{urlPrefix: 'http://e/', managedResources: [{name: cpu}]}]\n",
        'extenders[0].managedResources[0].name: is an invalid extended resource name: "cpu"',
    ),
    (
        "extender-resource-duplicate",
        "extenders:\n  - {urlPrefix: 'http://a/', managedResources: [{name: example.com/x}]}\n"
        "  - {urlPrefix: 'http://b/', managedResources: [{name: example.com/x}]}\n",
        "extenders[1].managedResources[0].name: duplicate extender managed resource name:"
        ' "example.com/x"',
    ),
    (
        "extender-unknown-field",
        "extenders: [{urlPrefix: 'http://e/', enableHttps: true}]\n",
        "extenders[0]: unknown field enableHttps (did you mean enableHTTPS?)",
    ),
]


@pytest.mark.parametrize(("body", "want"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_error_messages(tmp_path: Path, body: str, want: str) -> None:
    assert error_of(tmp_path, body) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("- 1\n", "config must be a mapping: [1]", id="not-mapping"),
        pytest.param("", "config file is empty", id="empty"),
        pytest.param(
            "kind: KubeSchedulerConfiguration\n",
            "apiVersion: required field is missing",
            id="apiVersion-missing",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
            "apiVersion: unsupported apiVersion, want kubescheduler.config.k8s.io/v1:"
            ' "kubescheduler.config.k8s.io/v1beta3"',
            id="apiVersion-wrong",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n",
            'kind: unsupported kind, want KubeSchedulerConfiguration: "Pod"',
            id="kind-wrong",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles:\n  - schedulerName: a\n     plugins: {}\n",
            "line 5, column 13: invalid YAML: mapping values are not allowed in this context",
            id="malformed-yaml",
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "parallelism: 1\nparallelism: 2\n",
            'line 4, column 1: invalid YAML: duplicate key "parallelism"',
            id="duplicate-key",
        ),
    ],
)
def test_document_errors(tmp_path: Path, text: str, want: str) -> None:
    assert error_of(tmp_path, text, header=False) == want


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    with pytest.raises(ConfigError, match=r"^.*absent\.yaml: config file not found$") as info:
        load_config(path, catalog())
    assert str(info.value) == f"{path}: config file not found"
    assert isinstance(info.value, ValueError)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, KNOWN)
    assert str(info.value) == f"{tmp_path}: cannot read config file: Is a directory"


def test_error_attributes(tmp_path: Path) -> None:
    path = write(tmp_path, "parallelism: -3\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, catalog())
    err = info.value
    assert (err.source, err.path, err.value) == (str(path), "parallelism", -3)


def test_long_values_are_cut(tmp_path: Path) -> None:
    message = error_of(tmp_path, f"profiles:\n  - pluginConfig: [{{name: {'N' * 300}}}]\n")
    assert message.startswith('profiles[0].pluginConfig[0].name: unknown plugin: "NNN')
    assert message.endswith("...") and len(message) < 200


def test_known_plugin_args_are_not_taken_for_wasm_args(tmp_path: Path) -> None:
    """A plugin with a factory keeps its own args unless they carry a guestURL."""
    cfg = load(
        tmp_path,
        """
        profiles:
          - pluginConfig:
              - {name: Extra, args: {logSeverity: 1, guestUrl: mine}}
        """,
    )
    assert cfg.profiles[0].plugin_args["Extra"] == {"logSeverity": 1, "guestUrl": "mine"}
    assert cfg.profiles[0].plugin_kinds == {}
