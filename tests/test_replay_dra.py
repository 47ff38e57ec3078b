"""``replay --gpu-model dra``: Alibaba's GPU trace as DRA devices, claims and shares."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import test_replay
from dra_checker import (
    ClaimLog,
    ClaimWrite,
    device_capacities,
    over_allocations,
    peak_sharing,
)
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.quantity import parse_quantity
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.replay.alibaba import read_alibaba_gpu
from wasmsched.replay.engine import Replay
from wasmsched.replay.trace import AddNode, CreateObject, TraceError

NODES_CSV = test_replay.NODES_CSV
ROOT = Path(__file__).resolve().parent.parent
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))

PODS_CSV = test_replay.PODS_CSV + "pod-e,1000,1024,1,500,,BE,Running,50,,50\n"
HEADER = PODS_CSV.splitlines()[0]


def write(tmp_path: Path, nodes: str = NODES_CSV, pods: str = PODS_CSV) -> tuple[Path, Path]:
    n, p = tmp_path / "openb_node_list.csv", tmp_path / "openb_pod_list.csv"
    n.write_text(nodes)
    p.write_text(pods)
    return n, p


def wasmsched(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wasmsched", *args], capture_output=True, text=True, cwd=cwd
    )


def replay(nodes: Path, pods: Path) -> tuple[Replay, ClaimLog, list[dict[str, Any]]]:
    trace = read_alibaba_gpu(nodes, pods, gpu_model="dra")
    start = ClusterObjects(kubernetes_version=V137.version)
    start.others.extend(trace.objects)
    run = Replay(start, trace.events, default_config(V137), in_tree_registry())
    return run, ClaimLog(run.sim), trace.objects


def test_importer_writes_slices_templates_and_pod_claims(tmp_path: Path) -> None:
    trace = read_alibaba_gpu(*write(tmp_path), gpu_model="dra")
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in trace.objects:
        by_kind.setdefault(o["kind"], []).append(o)
    assert [c["metadata"]["name"] for c in by_kind["DeviceClass"]] == ["gpu.alibaba.com"]
    slices = {s["spec"]["nodeName"]: s for s in by_kind["ResourceSlice"]}
    assert sorted(slices) == ["node-0", "node-1"]  # node-2 has no GPU
    gpu = slices["node-0"]["spec"]["devices"][1]
    assert gpu == {
        "name": "gpu-1",
        "attributes": {"model": {"string": "V100M16"}, "index": {"int": 1}},
        "capacity": {"milli": {"value": "1000"}},
        "allowMultipleAllocations": True,
    }
    assert len(slices["node-1"]["spec"]["devices"]) == 8
    templates = {t["metadata"]["name"]: t["spec"]["spec"] for t in by_kind["ResourceClaimTemplate"]}
    # One template per pod shape: pod-b and pod-e share one.
    assert sorted(templates) == ["gpu-1x1000m-v100m16-v100m32", "gpu-1x500m", "gpu-2x1000m-v100m32"]
    (half,) = templates["gpu-1x500m"]["devices"]["requests"]
    assert half["exactly"] == {
        "deviceClassName": "gpu.alibaba.com",
        "allocationMode": "ExactCount",
        "count": 1,
        "capacity": {"requests": {"milli": "500"}},
    }
    two = templates["gpu-2x1000m-v100m32"]["devices"]
    assert two["requests"][0]["exactly"]["selectors"] == [
        {"cel": {"expression": 'device.attributes["gpu.alibaba.com"].model in ["V100M32"]'}}
    ]
    assert two["constraints"] == [
        {"requests": ["gpu"], "distinctAttribute": "gpu.alibaba.com/index"}
    ]
    pods = {
        e.manifest["metadata"]["name"]: e.manifest
        for e in trace.events
        if isinstance(e, CreateObject)
    }
    b = pods["pod-b"]["spec"]
    assert b["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "gpu-1x500m"}]
    assert b["containers"][0]["resources"] == {
        "requests": {"cpu": "4000m", "memory": "16384Mi"},
        "claims": [{"name": "gpu"}],
    }
    assert "affinity" not in pods["pod-a"]["spec"]  # the model is the selector's
    assert "resourceClaims" not in pods["pod-c"]["spec"]
    nodes = [e.manifest for e in trace.events if isinstance(e, AddNode)]
    assert all("nvidia.com/gpu" not in n["status"]["allocatable"] for n in nodes)


def test_a_gpu_is_shared_but_not_split_across_gpus(tmp_path: Path) -> None:
    """Two 600-milli tasks take both GPUs of a 2-GPU node, a 400-milli one fills the first:
    a whole-GPU task waits until the first GPU drains (with node-level milli-GPUs it would
    fit in the 1000 milli that remain once s-0 ends)."""
    nodes = "sn,cpu_milli,memory_mib,gpu,model\nn,64000,262144,2,T4\n"
    pods = "\n".join(
        [
            HEADER,
            "s-0,1000,1024,1,600,,BE,Running,0,100,0",
            "s-1,1000,1024,1,600,,BE,Running,1,,1",
            "s-2,1000,1024,1,400,,BE,Running,2,150,2",
            "w-0,1000,1024,1,1000,,LS,Running,3,,3",
        ]
    )
    run, log, objects = replay(*write(tmp_path, nodes, pods + "\n"))
    result = run.run().to_json()
    rows = {p["name"]: p for p in result["pods"]}
    assert rows["s-2"]["node"] == "n" and rows["s-2"]["waitSeconds"] == 0
    # A whole GPU was free only once s-0 (at 100 s) and s-2 (at 150 s) had ended.
    assert rows["w-0"]["node"] == "n" and 147 <= rows["w-0"]["waitSeconds"] < 160
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    assert over_allocations(log.writes, device_capacities(slices)) == []
    shares = Counter(
        (r["device"], parse_quantity(r["consumedCapacity"]["milli"]))
        for w in log.writes
        if w.results
        for r in w.results
    )
    assert shares[("gpu-0", 600)] == 1 and shares[("gpu-1", 600)] == 1
    assert shares[("gpu-0", 400)] == 1  # beside s-0's 600
    assert shares[("gpu-0", 1000)] == 1  # w-0, once s-0 and s-2 had ended
    milli = wasmsched(
        "replay", "--trace", str(tmp_path / "openb_node_list.csv"),
        "--trace", str(tmp_path / "openb_pod_list.csv"),
        "--gpu-share", "milli", "-o", "json", cwd=tmp_path,
    )  # fmt: skip
    assert milli.returncode == 0, milli.stderr
    w0 = {p["name"]: p for p in json.loads(milli.stdout)["pods"]}["w-0"]
    assert w0["waitSeconds"] == pytest.approx(97, abs=10)  # at 100 s, 1000 milli are free


def test_a_released_share_frees_its_gpu(tmp_path: Path) -> None:
    """A half-GPU task ends and its claim is deleted before anything else is scheduled:
    the 8-GPU task that arrives next gets all eight GPUs. (DynamicResources kept the
    claim's allocation in its assume cache after the claim was gone, so the GPU stayed
    half used and the node could never take an 8-GPU task again.)"""
    nodes = "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\n"
    pods = "\n".join(
        [HEADER, "q,1000,1024,1,500,,LS,Running,0,5,0", "p,88000,327680,8,1000,,LS,Running,10,,10"]
    )
    run, log, objects = replay(*write(tmp_path, nodes, pods + "\n"))
    rows = {p["name"]: p for p in run.run().to_json()["pods"]}
    assert (rows["p"]["node"], rows["p"]["waitSeconds"]) == ("n0", 0.0)
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    assert over_allocations(log.writes, device_capacities(slices)) == []


def _bench_replay() -> Any:
    spec = importlib.util.spec_from_file_location(
        "bench_replay", ROOT / "benchmarks/bench_replay.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def openb_replay(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, Any], ClaimLog, list[dict[str, Any]]]:
    """The openb-shaped trace of benchmarks/bench_replay.py (dense: GPUs saturate, shares
    and whole GPUs compete), at 2.5% of its size, with a third of the GPU pods naming models."""
    bench = _bench_replay()
    out = tmp_path_factory.mktemp("openb")
    nodes, pods = bench.write_trace(out, "dense", 1, bench.DAY, 48 * 3600.0, 0.33, 0.025)
    run, log, objects = replay(nodes, pods)
    return run.run().to_json(), log, objects


def test_openb_trace_never_over_allocates_a_device(
    openb_replay: tuple[dict[str, Any], ClaimLog, list[dict[str, Any]]],
) -> None:
    result, log, objects = openb_replay
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    capacities = device_capacities(slices)
    assert over_allocations(log.writes, capacities) == []
    # The run is a real test of the check: many allocations, GPUs shared by up to several
    # tasks at once, and the tasks ran.
    assert len([w for w in log.writes if w.results]) > 100
    assert peak_sharing(log.writes) >= 3
    results = result["summary"]["results"]
    assert results.get("Running", 0) + results.get("Completed", 0) > 150


def _milli(result: Mapping[str, Any]) -> Fraction:
    return parse_quantity(result["consumedCapacity"]["milli"])


def test_the_check_fails_on_a_broken_allocation(
    openb_replay: tuple[dict[str, Any], ClaimLog, list[dict[str, Any]]],
) -> None:
    """A claim that takes a share of a device already full (as a broken allocator would)
    is reported, and so is one that takes the same whole device twice."""
    _, log, objects = openb_replay
    capacities = device_capacities([o for o in objects if o["kind"] == "ResourceSlice"])
    full = next(
        i
        for i, w in enumerate(log.writes)
        if w.results and any(_milli(r) == 1000 for r in w.results)
    )
    victim = log.writes[full]
    assert victim.results is not None
    result = next(r for r in victim.results if _milli(r) == 1000)
    extra = ClaimWrite(
        victim.at, "default/broken", ({**result, "consumedCapacity": {"milli": "1"}},)
    )
    broken = [*log.writes[: full + 1], extra, *log.writes[full + 1 :]]
    problems = over_allocations(broken, capacities)
    assert problems and "milli 1001 > 1000" in problems[0] and "default/broken" in problems[0]
    # A device without consumable capacity is held once.
    device = (result["driver"], result["pool"], result["device"])
    whole = {**capacities, device: None}
    twice = [
        ClaimWrite(0, f"default/c{i}", ({**result, "consumedCapacity": {}},)) for i in range(2)
    ]
    assert "held 2 times" in over_allocations(twice, whole)[0]


def test_replay_cli_with_dra(tmp_path: Path) -> None:
    nodes, pods = write(tmp_path)
    out = wasmsched(
        "replay", "--trace", str(nodes), "--trace", str(pods), "--gpu-model", "dra", "-o", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    placed = {p["name"]: p["node"] for p in json.loads(out.stdout)["pods"]}
    # pod-a names V100M16|V100M32 (both nodes), pod-d V100M32 (node-1 only).
    assert placed["pod-d"] == "node-1" and placed["pod-a"] in ("node-0", "node-1")
    assert all(placed.values())


@pytest.mark.parametrize(
    ("nodes", "pods", "args", "problem"),
    [
        (
            NODES_CSV,
            f'{HEADER}\np,1000,1024,1,1000,V100M16|V100"M32,LS,Running,0,,0\n',
            (),
            "openb_pod_list.csv: line 2: gpu_spec: malformed GPU model 'V100\"M32'",
        ),
        (
            NODES_CSV,
            f"{HEADER}\np,1000,1024,1,1000,V100M16||,LS,Running,0,,0\n",
            (),
            "line 2: gpu_spec: malformed GPU model ''",
        ),
        (
            "sn,cpu_milli,memory_mib,gpu,model\nn,1000,1024,1,T4 (16GB)\n",
            PODS_CSV,
            (),
            "openb_node_list.csv: line 2: model: malformed GPU model 'T4 (16GB)'",
        ),
        (
            NODES_CSV,
            PODS_CSV,
            ("--kubernetes-version", "1.33"),
            "--gpu-model dra: Kubernetes 1.33 does not allocate devices",
        ),
    ],
)
def test_replay_cli_with_dra_refuses_bad_input_in_one_line(
    tmp_path: Path, nodes: str, pods: str, args: tuple[str, ...], problem: str
) -> None:
    n, p = write(tmp_path, nodes, pods)
    out = wasmsched(
        "replay", "--trace", str(n), "--trace", str(p), "--gpu-model", "dra", *args, cwd=tmp_path
    )
    assert out.returncode == 2, out.stderr
    assert problem in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0


def test_importer_refuses_an_unknown_gpu_model(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="--gpu-model: expected extended or dra, got 'mig'"):
        read_alibaba_gpu(*write(tmp_path), gpu_model="mig")  # type: ignore[arg-type]


def test_replay_json_gives_each_pod_its_devices_and_the_devices_per_class(
    tmp_path: Path,
) -> None:
    """Each bound pod's entry names the devices (and shares) its claim held; the document
    has simulate's ``devices`` (allocation per class over time) after the series."""
    nodes = "sn,cpu_milli,memory_mib,gpu,model\nn,64000,262144,2,T4\n"
    pods = "\n".join(
        [
            HEADER,
            "s-0,1000,1024,1,600,,BE,Running,0,100,0",
            "w-0,1000,1024,2,1000,,LS,Running,1,,1",
            "c-0,1000,1024,0,0,,LS,Running,2,,2",
        ]
    )
    run, _, _ = replay(*write(tmp_path, nodes, pods + "\n"))
    result = run.run().to_json()
    assert list(result) == ["pods", "series", "devices", "summary"]
    rows = {p["name"]: p for p in result["pods"]}
    (share,) = rows["s-0"]["devices"]
    claim = share["claim"]
    assert claim.startswith("s-0-")
    assert {k: v for k, v in share.items() if k != "claim"} == {
        "request": "gpu",
        "driver": "gpu.alibaba.com",
        "pool": "n",
        "device": "gpu-0",
        "shareID": share["shareID"],
        "consumedCapacity": {"milli": "600"},
    }
    assert [d["device"] for d in rows["w-0"]["devices"]] == ["gpu-0", "gpu-1"]
    assert "devices" not in rows["c-0"]  # no GPU: no claim
    (gpus,) = result["devices"]["classes"]
    assert (gpus["name"], gpus["devices"]) == ("gpu.alibaba.com", 2)
    assert max(sum(s["allocated"].values()) for s in result["devices"]["series"]) == 2
