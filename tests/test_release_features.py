"""The release a run models: SchedulerFeatures per version and gates, the default plugins
each release has, and how the version reaches the commands and the Python API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import wasmsched
from wasmsched.cli import app
from wasmsched.config import default_config
from wasmsched.config.defaults import DEFAULT_PLUGINS, PLUGINS_1_33, default_plugins
from wasmsched.release.feature_gates import FeatureGateError, gate_table
from wasmsched.release.features import INERT_GATES, MODELLED_GATES, SchedulerFeatures
from wasmsched.release.version import KubernetesVersion, VersionError

runner = CliRunner()
V = {minor: KubernetesVersion(1, minor) for minor in range(33, 38)}

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-a"},
    "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}},
}
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


# Per release: (PodLevelResources, NodeDeclaredFeatures, DRA, batching, BA scores the
# change, heap host selection, taint message names the taint), from each release's
# pkg/features/kube_features.go and the sources docs/dev/kube-1.37-changes.md cites.
@pytest.mark.parametrize(
    ("minor", "expected"),
    [
        (33, (False, False, False, False, False, False, True)),
        (34, (True, False, True, False, False, False, False)),
        (35, (True, False, True, True, False, True, False)),
        (36, (True, True, True, True, True, True, False)),
        (37, (True, True, True, True, True, True, False)),
    ],
)
def test_switches_of_each_release(minor: int, expected: tuple[bool, ...]) -> None:
    f = SchedulerFeatures.of(V[minor])
    assert (
        f.pod_level_resources,
        f.node_declared_features,
        f.dynamic_resource_allocation,
        f.opportunistic_batching,
        f.balanced_allocation_scores_change,
        f.host_from_sorted_nodes,
        f.taint_message_names_taint,
    ) == expected


def test_gates_change_the_switches_and_locked_gates_are_refused() -> None:
    # From 1.35 a gate that others depend on cannot be turned off alone
    # (featuregate: unsafeSetFromMap's dependency check).
    with pytest.raises(FeatureGateError, match="depends on features that are disabled"):
        SchedulerFeatures.of(V[37], "PodLevelResources=false")
    assert SchedulerFeatures.of(V[33], "PodLevelResources=true").pod_level_resources
    assert (
        SchedulerFeatures.of(V[37], {"OpportunisticBatching": False}).opportunistic_batching
        is False
    )
    with pytest.raises(FeatureGateError, match="NodeDeclaredFeatures to false, feature is locked"):
        SchedulerFeatures.of(V[37], "NodeDeclaredFeatures=false")
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: NoSuchGate"):
        SchedulerFeatures.of(V[35], "NoSuchGate=true")
    # The default release's switches are built once.
    assert SchedulerFeatures.of(V[36]) is SchedulerFeatures.of(V[36])


@pytest.mark.parametrize(
    ("minor", "text", "message"),
    [
        # Pod groups: kube-scheduler 1.37 reads the gate, wasmsched does not model them.
        (37, "GenericWorkload=true", "GenericWorkload=true (default false): wasmsched models "
         "kube-scheduler 1.37 with this gate at the default only"),
        (33, "SchedulerQueueingHints=false", "SchedulerQueueingHints=false (default true)"),
        (37, "SchedulerAsyncPreemption=false,CoordinatedLeaderElection=true",
         "CoordinatedLeaderElection=true (default false), SchedulerAsyncPreemption=false "
         "(default true): wasmsched models kube-scheduler 1.37 with these gates"),
        (36, "CoordinatedLeaderElection=true", "CoordinatedLeaderElection=true"),
    ],
)  # fmt: skip
def test_gates_the_scheduler_reads_but_wasmsched_does_not_model_are_refused(
    minor: int, text: str, message: str
) -> None:
    with pytest.raises(FeatureGateError) as info:
        SchedulerFeatures.of(V[minor], text)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("minor", "text"),
    [
        (37, "InterPodAffinityHostnameFastPath=true"),  # the same result, faster
        (37, "SchedulerAsyncAPICalls=true"),  # when writes are issued
        (37, "ContainerCheckpoint=false"),  # a kubelet's gate: kube-scheduler never reads it
        (33, "DRAPrioritizedList=true,DRAAdminAccess=true"),  # modelled both ways
        (37, "SchedulerPopFromBackoffQ=false"),  # modelled both ways
    ],
)
def test_gates_that_change_nothing_modelled_are_taken(minor: int, text: str) -> None:
    features = SchedulerFeatures.of(V[minor], text)
    assert features.gates.changed()


def test_every_gate_a_release_reads_is_modelled_inert_or_refused() -> None:
    """The table says which gates each release's kube-scheduler reads; a modelled gate is
    one of them (or the API server's, for bindings) at some release."""
    reads = gate_table().scheduler_reads
    assert set(reads) == {str(v) for v in V.values()}
    read_somewhere = set().union(*reads.values())
    assert MODELLED_GATES - read_somewhere == {"ClearingNominatedNodeNameAfterBinding"}
    assert read_somewhere >= INERT_GATES
    assert "GenericWorkload" in reads["1.37"] and "GenericWorkload" not in reads["1.33"]


def _names(minor: int, gates: str = "") -> list[tuple[str, int | None]]:
    return [(p.name, p.weight) for p in default_plugins(SchedulerFeatures.of(V[minor], gates))]


def test_default_plugins_per_release() -> None:
    base = [(p.name, p.weight) for p in PLUGINS_1_33]
    assert _names(33) == base
    at = base.index(("DefaultPreemption", None))
    # 1.34: DynamicResources (DRA GA) before DefaultPreemption, no Score yet.
    assert _names(34) == [*base[:at], ("DynamicResources", None), *base[at:]]
    # 1.35: with weight 2.
    with_dra = [*base[:at], ("DynamicResources", 2), *base[at:]]
    assert _names(35) == with_dra
    assert _names(35, "NodeDeclaredFeatures=true") == [*with_dra, ("NodeDeclaredFeatures", None)]
    # 1.36: NodeDeclaredFeatures (beta, on) last.
    assert _names(36) == [*with_dra, ("NodeDeclaredFeatures", None)]
    # 1.37: NodeName before NodeUnschedulable.
    swapped = list(with_dra)
    swapped[2], swapped[3] = swapped[3], swapped[2]
    assert swapped[2:4] == [("NodeName", None), ("NodeUnschedulable", None)]
    assert _names(37) == [*swapped, ("NodeDeclaredFeatures", None)]
    # The default release is the newest.
    assert [(p.name, p.weight) for p in DEFAULT_PLUGINS] == _names(37)
    # DRA is locked on from 1.35; in 1.34 it can still be turned off.
    assert _names(34, "DynamicResourceAllocation=false") == base


def test_the_configuration_carries_its_release() -> None:
    cfg = default_config(SchedulerFeatures.of(V[37]))
    assert cfg.features.version == V[37]
    assert "NodeDeclaredFeatures" in [p.name for p in cfg.profiles[0].plugins["multiPoint"].enabled]
    assert default_config().features.version == V[37]


def _cluster(tmp_path: Path, server: str | None = None) -> Path:
    docs: list[Any] = [NODE, POD]
    if server is not None:
        snapshot = {"apiVersion": "wasmsched.io/v1", "kind": "Snapshot", "metadata": {}}
        docs.insert(0, {**snapshot, "serverVersion": server})
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _simulate(*args: str) -> Any:
    return runner.invoke(app, ["simulate", *args, "-o", "json"])


@pytest.mark.parametrize(
    ("server", "flag", "modelled"),
    [
        (None, None, "1.37"),
        (None, "1.37", "1.37"),
        ("v1.36.2-eks-1a2b3c", None, "1.36"),
        ("v1.36.2", "1.34", "1.34"),
        ("v1.39.0", None, "1.37"),
    ],
)
def test_simulate_models_the_flag_else_the_snapshot(
    tmp_path: Path, server: str | None, flag: str | None, modelled: str
) -> None:
    args = ["--cluster", str(_cluster(tmp_path, server))]
    if flag is not None:
        args += ["--kubernetes-version", flag]
    result = _simulate(*args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["kubernetesVersion"] == modelled
    assert summary["featureGates"] == {}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--kubernetes-version", "1.30"],
            "wasmsched: error: Kubernetes version '1.30' is not supported (supported: 1.33, "
            "1.34, 1.35, 1.36, 1.37)\n",
        ),
        (
            ["--kubernetes-version", "latest"],
            "wasmsched: error: Kubernetes version 'latest' is not a version (expected "
            "MAJOR.MINOR, such as 1.37; supported: 1.33, 1.34, 1.35, 1.36, 1.37)\n",
        ),
        (
            ["--kubernetes-version", "1.37", "--feature-gates", "NodeDeclaredFeatures=false"],
            "wasmsched: error: --feature-gates: cannot set feature gate NodeDeclaredFeatures "
            "to false, feature is locked to true\n",
        ),
        (
            ["--feature-gates", "PodLevelResources"],
            "wasmsched: error: --feature-gates: missing bool value for PodLevelResources\n",
        ),
    ],
)
def test_bad_versions_and_gates_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = _simulate("--cluster", str(_cluster(tmp_path)), *args)
    assert result.exit_code == 2
    assert result.stderr == message


def test_gates_set_are_reported(tmp_path: Path) -> None:
    result = _simulate(
        "--cluster",
        str(_cluster(tmp_path)),
        "--kubernetes-version",
        "1.35",
        "--feature-gates",
        "OpportunisticBatching=false,NodeDeclaredFeatures=true",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["featureGates"] == {"OpportunisticBatching": False, "NodeDeclaredFeatures": True}


def test_every_command_that_schedules_takes_the_release() -> None:
    for command in ("simulate", "replay", "capacity", "diff", "sweep", "run"):
        result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert "--kubernetes-version" in result.output, command
        assert "--feature-gates" in result.output, command


def test_diff_compares_two_releases(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    result = runner.invoke(
        app,
        [
            "diff",
            "--cluster",
            str(cluster),
            "--kubernetes-version",
            "1.33",
            "--kubernetes-version",
            "1.37",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["changed"] == []
    table = runner.invoke(
        app,
        [
            "diff",
            "--cluster",
            str(cluster),
            "--kubernetes-version",
            "1.33",
            "--kubernetes-version",
            "1.37",
        ],
        env={"COLUMNS": "200"},
    )
    assert table.exit_code == 0, table.output
    assert "1.33" in table.stdout and "1.37" in table.stdout
    one = runner.invoke(app, ["diff", "--cluster", str(cluster), "--kubernetes-version", "1.37"])
    assert one.exit_code == 2
    assert "give two --config files, two --kubernetes-version values" in one.stderr


def test_python_api_takes_the_release(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path, "v1.35.0")
    assert wasmsched.load_cluster(cluster).kubernetes_version == V[35]
    assert wasmsched.simulate(cluster).kubernetes_version == "1.35"
    result = wasmsched.simulate(
        cluster, kubernetes_version="1.37", feature_gates="OpportunisticBatching=false"
    )
    assert (result.kubernetes_version, result.feature_gates) == (
        "1.37",
        {"OpportunisticBatching": False},
    )
    cfg = wasmsched.default_configuration(kubernetes_version="1.36")
    assert cfg.features.version == V[36]
    assert wasmsched.simulate(cluster, cfg).kubernetes_version == "1.36"
    with pytest.raises(wasmsched.InputError, match=r"loaded for Kubernetes 1\.36"):
        wasmsched.simulate(cluster, cfg, kubernetes_version="1.37")
    with pytest.raises(VersionError):
        wasmsched.load_configuration(
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
            kubernetes_version="2.0",
        )
