"""wasmsched.whatif and `wasmsched capacity` / `diff` / `sweep`: what-if questions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from wasmsched.whatif.execute import run_document
from wasmsched.whatif.runs import config_bundle, file_bundle, placements_digest
from wasmsched.whatif.sweep import aggregate, parse_seeds, plan, read_done, run_sweep


def node(name: str, cpu: str = "4", memory: str = "16Gi", zone: str = "z1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
        },
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def pod(
    name: str, cpu: str = "1", memory: str = "1Gi", node_name: str = "", **spec: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
        ],
        **spec,
    }
    if node_name:
        body["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": body,
    }


def wasmsched(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wasmsched", *args], capture_output=True, text=True, cwd=cwd
    )


def write(path: Path, *docs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(docs)))
    return path


@pytest.fixture
def three_nodes(tmp_path: Path) -> Path:
    return write(tmp_path / "cluster.yaml", node("n1"), node("n2"), node("n3"))


def capacity(
    tmp: Path, cluster: Path, *pods: dict[str, Any], extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    args: list[str] = ["capacity", "--cluster", str(cluster), "--output", "json", *extra]
    for i, p in enumerate(pods):
        args += ["--pod", str(write(tmp / f"template-{i}.yaml", p))]
    out = wasmsched(*args, cwd=tmp)
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"app": "spread"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


@pytest.mark.parametrize(
    ("template", "copies", "reason"),
    [
        (pod("one-cpu"), 12, "0/3 nodes are available: 3 Insufficient cpu."),
        (
            pod(
                "ports",
                cpu="100m",
                containers=[
                    {
                        "name": "c",
                        "image": "i",
                        "ports": [{"containerPort": 80, "hostPort": 8080}],
                        "resources": {"requests": {"cpu": "100m"}},
                    }
                ],
            ),
            3,
            "0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.",
        ),
        (
            pod("spread", cpu="100m", affinity=ANTI_AFFINITY),
            3,
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.",
        ),
    ],
)
def test_capacity_of_one_template(
    tmp_path: Path, three_nodes: Path, template: dict[str, Any], copies: int, reason: str
) -> None:
    result = capacity(tmp_path, three_nodes, template)
    (t,) = result["templates"]
    assert t["replicas"] == copies and t["fits"] is False
    assert t["stopReason"] == reason
    assert sum(t["nodes"].values()) == copies and set(t["nodes"]) == {"n1", "n2", "n3"}


def test_capacity_counts_running_pods_and_workload_templates(tmp_path: Path) -> None:
    cluster = write(
        tmp_path / "c.yaml", node("n1"), node("n2"), pod("busy", cpu="3", node_name="n1")
    )
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod("x")["spec"]},
        },
    }
    (t,) = capacity(tmp_path, cluster, deployment)["templates"]
    assert t["name"] == "web" and t["replicas"] == 5  # 1 beside the running pod, 4 on n2
    assert t["nodes"] == {"n1": 1, "n2": 4}


@pytest.mark.parametrize(
    ("replicas", "order", "want"),
    [
        # 4 + 6 one-CPU copies fit on 12 CPUs; 8 + 6 do not: the second template gets 4.
        (("4", "6"), "sequential", [(4, True), (6, True)]),
        (("8", "6"), "sequential", [(8, True), (4, False)]),
        # Interleaved, the two compete: 6 each, then the first's 7th copy does not fit.
        (("8", "6"), "round-robin", [(6, False), (6, True)]),
    ],
)
def test_capacity_with_replica_counts(
    tmp_path: Path,
    three_nodes: Path,
    replicas: tuple[str, str],
    order: str,
    want: list[tuple[int, bool]],
) -> None:
    result = capacity(
        tmp_path,
        three_nodes,
        pod("a"),
        pod("b"),
        extra=("--replicas", replicas[0], "--replicas", replicas[1], "--order", order),
    )
    got = [(t["replicas"], t["fits"]) for t in result["templates"]]
    assert got == want
    assert result["summary"]["allFit"] is all(f for _, f in want)


def test_capacity_max_and_bad_input(tmp_path: Path, three_nodes: Path) -> None:
    (t,) = capacity(tmp_path, three_nodes, pod("a"), extra=("--max", "5"))["templates"]
    assert (t["replicas"], t["fits"], t["stopReason"]) == (5, True, None)
    service = write(
        tmp_path / "svc.yaml", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    )
    out = wasmsched("capacity", "--cluster", str(three_nodes), "--pod", str(service), cwd=tmp_path)
    assert out.returncode == 2 and "svc.yaml: kind: expected Pod or a workload" in out.stderr
    out = wasmsched(
        "capacity",
        "--cluster",
        str(three_nodes),
        "--pod",
        str(service),
        "--replicas",
        "1",
        "--replicas",
        "2",
        cwd=tmp_path,
    )
    assert out.returncode == 2 and "--replicas: give one per --pod" in out.stderr


MOST_ALLOCATED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ],
        }
    ],
}
LEAST_ALLOCATED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}


@pytest.fixture
def packing(tmp_path: Path) -> tuple[Path, Path, Path]:
    # a (4 CPU, 16Gi) runs a 2-CPU 8Gi pod; b is empty; two 1-CPU 1Gi pods arrive.
    # LeastAllocated, first pod: a = (25 + 43) / 2 = 34, b = (75 + 93) / 2 = 84; the
    # balanced scores are equal (|0.75 - 0.5625| / 2 = |0.25 - 0.0625| / 2): b. Second pod:
    # a 34 + 90 against b (50 + 87) / 2 = 68 + 81: b again. MostAllocated mirrors it: a = 65
    # against b = 15, then a = (100 + 62) / 2 = 81 + 81 against b 15 + 90: both on a.
    cluster = write(
        tmp_path / "cluster.yaml",
        node("a"),
        node("b"),
        pod("db", cpu="2", memory="8Gi", node_name="a"),
        pod("p1"),
        pod("p2"),
    )
    return (
        cluster,
        write(tmp_path / "least.yaml", LEAST_ALLOCATED),
        write(tmp_path / "most.yaml", MOST_ALLOCATED),
    )


def test_diff_least_vs_most_allocated(tmp_path: Path, packing: tuple[Path, Path, Path]) -> None:
    cluster, least, most = packing
    out = wasmsched(
        "diff",
        "--cluster",
        str(cluster),
        "--config",
        str(least),
        "--config",
        str(most),
        "--output",
        "json",
        "--report",
        str(tmp_path / "diff.html"),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    changed = {c["name"]: (c["a"]["node"], c["b"]["node"]) for c in result["changed"]}
    assert changed == {"p1": ("b", "a"), "p2": ("b", "a")}
    assert result["summary"]["changed"] == 2
    assert result["summary"]["a"]["scheduled"] == result["summary"]["b"]["scheduled"]
    assert 'id="placements"' in (tmp_path / "diff.html").read_text()
    fail = wasmsched(
        "diff",
        "--cluster",
        str(cluster),
        "--config",
        str(least),
        "--config",
        str(most),
        "--fail-on-change",
        cwd=tmp_path,
    )
    assert fail.returncode == 3 and "2 pods changed" in fail.stdout
    same = wasmsched(
        "diff",
        "--cluster",
        str(cluster),
        "--config",
        str(least),
        "--config",
        str(least),
        "--fail-on-change",
        "--output",
        "json",
        cwd=tmp_path,
    )
    assert same.returncode == 0 and json.loads(same.stdout)["changed"] == []


@pytest.mark.parametrize(("text", "want"), [("0", [0]), ("1-3", [1, 2, 3]), ("5,1-2,2", [5, 1, 2])])
def test_parse_seeds(text: str, want: list[int]) -> None:
    assert parse_seeds(text) == want


def _sweep_inputs(tmp: Path) -> tuple[Path, list[Path]]:
    nodes = [node(f"n{i}", cpu="8", zone=f"z{i % 3}") for i in range(12)]
    pods = [pod(f"p{i}", cpu="500m") for i in range(40)]
    cluster = write(tmp / "cluster.yaml", *nodes, *pods)
    return cluster, [
        write(tmp / "least.yaml", LEAST_ALLOCATED),
        write(tmp / "most.yaml", MOST_ALLOCATED),
    ]


def test_sweep_runs_equal_single_runs_and_resume(tmp_path: Path) -> None:
    cluster, configs = _sweep_inputs(tmp_path)
    specs = plan(
        [(c.name, config_bundle(c)) for c in configs], file_bundle(cluster), [None], [1, 2]
    )
    out = tmp_path / "out"
    seen: list[tuple[int, int]] = []
    records = run_sweep(specs, out, workers=2, progress=lambda d, t: seen.append((d, t)))
    assert len(records) == 4 and seen[-1] == (4, 4)
    for spec, rec in zip(specs, records, strict=True):
        doc = run_document(cluster, tmp_path / spec.config_name, seed=spec.seed)
        assert rec["placements"] == placements_digest(doc)
        assert rec["seed"] == spec.seed and rec["config"] == spec.config_name
    agg = aggregate(records)
    assert agg["least.yaml"]["scheduled"]["mean"] == 40.0
    # Resume: a lost record is the only run done again.
    lines = (out / "runs.jsonl").read_text().splitlines()
    (out / "runs.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:10])  # torn line
    seen.clear()
    again = run_sweep(specs, out, workers=1, progress=lambda d, t: seen.append((d, t)))
    assert again == records and seen == [(3, 4), (4, 4)]
    assert len(read_done(out)) == 4


def test_sweep_command(tmp_path: Path) -> None:
    cluster, configs = _sweep_inputs(tmp_path)
    out = wasmsched(
        "sweep",
        "--cluster",
        str(cluster),
        "--config",
        str(configs[0]),
        "--config",
        str(configs[1]),
        "--seeds",
        "1-2",
        "--workers",
        "1",
        "--out",
        str(tmp_path / "o"),
        "--output",
        "json",
        "--report",
        str(tmp_path / "s.html"),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["runs"]) == 4 and set(data["aggregate"]) == {str(c) for c in configs}
    assert 'id="metric-scheduled"' in (tmp_path / "s.html").read_text()


def _ray_task_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmd.startswith(b"ray::execute"):
            pids.append(int(entry.name))
    return pids


def test_sweep_on_a_local_ray_cluster_survives_a_killed_worker(tmp_path: Path) -> None:
    ray = pytest.importorskip(
        "ray", reason="Ray is an optional extra: pip install 'wasmsched[ray]'"
    )
    nodes = [node(f"n{i}", cpu="16") for i in range(200)]
    cluster = write(
        tmp_path / "cluster.yaml", *nodes, *(pod(f"p{i}", cpu="100m") for i in range(250))
    )
    configs = [
        write(tmp_path / "least.yaml", LEAST_ALLOCATED),
        write(tmp_path / "most.yaml", MOST_ALLOCATED),
    ]
    specs = plan(
        [(c.name, config_bundle(c)) for c in configs], file_bundle(cluster), [None], [1, 2, 3]
    )
    local = run_sweep(specs, tmp_path / "local", workers=1)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(sys.path)}},
    )
    killed: list[int] = []

    def kill_one() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            pids = _ray_task_pids()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
                return
            time.sleep(0.02)

    try:
        killer = threading.Thread(target=kill_one)
        killer.start()
        records = run_sweep(specs, tmp_path / "ray", ray_address="auto")
        killer.join()
    finally:
        ray.shutdown()
    assert killed, "no Ray worker was seen running a task"
    lines = (tmp_path / "ray" / "runs.jsonl").read_text().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert sorted(ids) == sorted(s.id for s in specs)  # none lost, none twice
    assert records == local


def test_sweep_ships_wasm_guests_and_matches_the_simulate_command(tmp_path: Path) -> None:
    # The nodenumber example: its config names a .wat guest by a relative file:// URL,
    # which each pool worker gets inside the shipped bundle.
    root = Path(__file__).resolve().parents[1] / "examples" / "nodenumber"
    cluster, config = root / "cluster.yaml", root / "scheduler-config.yaml"
    specs = plan([("nodenumber", config_bundle(config))], file_bundle(cluster), [None], [3, 4])
    records = run_sweep(specs, tmp_path / "out", workers=2)
    for spec, rec in zip(specs, records, strict=True):
        out = wasmsched(
            "simulate",
            "--cluster",
            str(cluster),
            "--config",
            str(config),
            "--seed",
            str(spec.seed),
            "--output",
            "json",
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        assert rec["placements"] == placements_digest(json.loads(out.stdout))


def test_diff_of_a_trace_compares_waiting_times(
    tmp_path: Path, packing: tuple[Path, Path, Path]
) -> None:
    _, least, most = packing
    cluster = write(
        tmp_path / "nodes.yaml",
        node("a"),
        node("b"),
        pod("db", cpu="2", memory="8Gi", node_name="a"),
    )
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        "".join(
            json.dumps({"at": 10 * i, "create": pod(f"t{i}", cpu="1500m"), "duration": 60}) + "\n"
            for i in range(5)
        )
    )
    out = wasmsched(
        "diff",
        "--cluster",
        str(cluster),
        "--trace",
        str(trace),
        "--config",
        str(least),
        "--config",
        str(most),
        "--output",
        "json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    for side in ("a", "b"):
        summary = result["summary"][side]
        assert (
            summary["pods"] == 6 and "waitSeconds.p90" in summary and "waitSeconds.max" in summary
        )
    # LeastAllocated sends t0 to the empty node b, MostAllocated to the busy node a.
    first = {c["name"]: (c["a"]["node"], c["b"]["node"]) for c in result["changed"]}
    assert first.get("t0") == ("b", "a")


@pytest.mark.parametrize(
    ("extra", "header", "rows"),
    [
        # "How many more fit?": the count, and why the next copy did not (or --max).
        ((), ["template", "copies that fit", "stopped because"], [
            ["a", "12", "0/3 nodes are available: 3 Insufficient cpu."],
            ["b", "0", "0/3 nodes are available: 3 Insufficient cpu."],
        ]),
        (("--max", "5"), ["template", "copies that fit", "stopped because"], [
            ["a", "5", "--max 5 reached"],
            ["b", "5", "--max 5 reached"],
        ]),
        # "Do these counts fit?": then yes or no.
        (("--replicas", "8", "--replicas", "6"),
         ["template", "copies", "desired", "fits", "stopped because"], [
            ["a", "8", "8", "yes", ""],
            ["b", "4", "6", "no", "0/3 nodes are available: 3 Insufficient cpu."],
        ]),
    ],
)  # fmt: skip
def test_capacity_table_answers_the_question_asked(
    tmp_path: Path, three_nodes: Path, extra: tuple[str, ...], header: list[str], rows: Any
) -> None:
    args = ["capacity", "--cluster", str(three_nodes), *extra]
    for i, template in enumerate((pod("a"), pod("b"))):
        args += ["--pod", str(write(tmp_path / f"template-{i}.yaml", template))]
    out = subprocess.run(
        [sys.executable, "-m", "wasmsched", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "150"},
    )
    assert out.returncode == 0, out.stderr
    cells = [
        [c.strip() for c in line.strip("┃│").split("┃" if "┃" in line else "│")]
        for line in out.stdout.splitlines()
        if line.startswith(("┃", "│"))
    ]
    assert cells == [header, *rows]
