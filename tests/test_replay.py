"""wasmsched.replay and `wasmsched replay` / `wasmsched import`: traces on the simulated clock."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node
from wasmsched.api.quantity import parse_quantity
from wasmsched.config import default_config
from wasmsched.framework.diagnosis import FailureMemo
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.replay.alibaba import import_alibaba_gpu
from wasmsched.replay.engine import Replay
from wasmsched.replay.metrics import percentiles
from wasmsched.replay.trace import (
    AddNode,
    CreateObject,
    TraceError,
    parse_event,
    parse_go_duration,
    read_jsonl,
)


def node(name: str, cpu: str = "2", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}},
    }


def pod(name: str, cpu: str = "2", **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = {f"wasmsched.io/{k}": v for k, v in annotations.items()}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]
        },
    }


def wasmsched(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wasmsched", *args], capture_output=True, text=True, cwd=cwd
    )


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in data["pods"]}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("2h", 7200.0),
        ("1h30m", 5400.0),
        ("1.5h", 5400.0),
        ("300ms", 0.3),
        ("0", 0.0),
        ("1m0.5s", 60.5),
    ],
)
def test_parse_go_duration(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "1d", "h", "1.5.2s", "5 s", "-5s"])
def test_parse_go_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_go_duration(text)


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"create": pod("a")}, "at: expected seconds"),
        ({"at": -1, "create": pod("a")}, "at: must be a finite number >= 0"),
        ({"at": 1}, "expected exactly one of"),
        ({"at": 1, "create": pod("a"), "delete": "default/a"}, "expected exactly one of"),
        ({"at": 1, "delete": "a"}, 'expected "namespace/name"'),
        ({"at": 1, "create": {"kind": "Service"}}, "create.kind: expected one of"),
        ({"at": 1, "create": pod("a"), "duraton": 5}, "unknown field duraton"),
        ({"at": 1, "cordon": ""}, "cordon: expected a non-empty string"),
        ({"at": "1x", "cordon": "n"}, 'at: invalid duration "1x"'),
    ],
)
def test_parse_event_errors_name_the_field(record: dict[str, Any], problem: str) -> None:
    with pytest.raises(TraceError, match="^trace.jsonl: line 3: .*" + problem.replace("(", r"\(")):
        parse_event(record, "trace.jsonl: line 3")


def test_read_jsonl_reports_the_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('# a comment\n\n{"at": 1, "cordon": "n"}\n{"at": 2, \n')
    with pytest.raises(TraceError, match=r"t.jsonl: line 4: invalid JSON"):
        read_jsonl(path)


def test_percentiles_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert percentiles(values) == {"p50": 5.0, "p90": 9.0, "p99": 10.0, "max": 10.0}
    assert percentiles([]) == {"p50": None, "p90": None, "p99": None, "max": None}


def test_second_pod_waits_for_the_first_to_finish(tmp_path: Path) -> None:
    # A 2-CPU node; a 2-CPU pod from t=0 for 100 s; a second arriving at t=10 is bound at
    # t=100, when the first is deleted: it waited 90 s.
    trace = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"at": 0, "node": node("n1")},
            {"at": 0, "create": pod("first"), "duration": 100},
            {"at": 10, "create": pod("second"), "duration": 50},
        ],
    )
    out = wasmsched("replay", "--trace", str(trace), "--output", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    pods = by_name(data)
    assert (pods["first"]["scheduledAt"], pods["first"]["deletedAt"]) == (0.0, 100.0)
    assert (pods["second"]["createdAt"], pods["second"]["scheduledAt"]) == (10.0, 100.0)
    assert pods["second"]["waitSeconds"] == 90.0
    assert pods["second"]["deletedAt"] == 150.0
    assert {p["result"] for p in data["pods"]} == {"Completed"}
    # The series shows the second pod pending between 10 and 100.
    at = {round(s["t"]): s for s in data["series"]}
    assert at[10]["pending"] == 1 and at[10]["running"] == 1
    assert at[100]["pending"] == 0 and at[100]["allocated"]["cpu"] == 1.0
    assert data["summary"]["waitSeconds"]["max"] == 90.0


def test_cordon_and_node_deletion(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([node("a", "4"), node("b", "4")]))
    trace = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"at": 0, "create": pod("early", "3")},  # takes a or b
            {"at": 50, "cordon": "a"},
            {"at": 60, "create": pod("late", "3")},  # only b is schedulable now
            {"at": 70, "deleteNode": "b"},  # its pods go with it; bare pods are not re-created
        ],
    )
    out = wasmsched(
        "replay", "--cluster", str(cluster), "--trace", str(trace), "--output", "json", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    pods = by_name(data)
    late = pods["late"]
    early = pods["early"]
    assert late["node"] == "b" and late["scheduledAt"] == 60.0
    assert late["result"] == "Deleted" and late["deletedAt"] == 70.0  # with its node
    if early["node"] == "b":
        assert early["result"] == "Deleted" and early["deletedAt"] == 70.0
    else:
        assert early["result"] == "Running" and early["deletedAt"] is None
    assert len(data["pods"]) == 2
    assert data["summary"]["nodes"] == 1


def test_annotated_manifests_are_a_trace_and_until_cuts_it(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        yaml.safe_dump_all(
            [
                node("n1", "4"),
                pod("now", "1"),
                pod("soon", "1", arrival="30s", duration="1m"),
                pod("later", "1", arrival="2h"),
            ]
        )
    )
    out = wasmsched(
        "replay", "--trace", str(cluster), "--until", "600", "--output", "json", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    pods = by_name(json.loads(out.stdout))
    assert pods["now"]["result"] == "Running" and pods["now"]["createdAt"] == 0.0
    assert (pods["soon"]["createdAt"], pods["soon"]["deletedAt"]) == (30.0, 90.0)
    assert pods["later"]["result"] == "NotCreated" and pods["later"]["createdAt"] is None


def test_bad_trace_is_one_line_exit_2(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"at": 0, "node": {"kind": "Pod"}}\n')
    out = wasmsched("replay", "--trace", str(trace), cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "t.jsonl: line 1: node.kind: expected one of Node" in out.stderr
    empty = write_jsonl(tmp_path / "e.jsonl", [{"at": 1, "create": pod("x")}])
    out = wasmsched("replay", "--trace", str(empty), cwd=tmp_path)
    assert out.returncode == 2 and "no nodes" in out.stderr and "Traceback" not in out.stderr


NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
node-0,32000,262144,2,V100M16
node-1,64000,524288,8,V100M32
node-2,96000,786432,0,
"""
PODS_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
pod-a,8000,30720,1,1000,V100M16|V100M32,LS,Succeeded,0,500,10
pod-b,4000,16384,1,500,,BE,Running,20,,25
pod-c,2000,4096,0,0,,LS,Failed,30,90,
pod-d,1000,1024,2,1000,V100M32,Burstable,Running,40,1000,40
"""


def test_alibaba_importer_maps_columns(tmp_path: Path) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text(NODES_CSV)
    pods.write_text(PODS_CSV)
    events = import_alibaba_gpu(nodes, pods)
    added = [e for e in events if isinstance(e, AddNode)]
    created = {e.manifest["metadata"]["name"]: e for e in events if isinstance(e, CreateObject)}
    assert [e.manifest["metadata"]["name"] for e in added] == ["node-0", "node-1", "node-2"]
    n1 = Node(added[1].manifest)
    assert n1.allocatable.milli_cpu == 64000 and n1.allocatable.scalar["nvidia.com/gpu"] == 8
    assert n1.labels["alibaba.com/gpu-model"] == "V100M32"
    a = created["pod-a"]
    req = a.manifest["spec"]["containers"][0]["resources"]["requests"]
    assert req == {"cpu": "8000m", "memory": "30720Mi", "nvidia.com/gpu": "1"}
    term = a.manifest["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]
    assert term["matchExpressions"][0]["values"] == ["V100M16", "V100M32"]
    assert (a.at, a.duration, a.delete_at) == (0.0, 490.0, None)
    # A half GPU asks for a whole one in "whole" mode, 500 milli-GPU in "milli" mode.
    b_req = created["pod-b"].manifest["spec"]["containers"][0]["resources"]["requests"]
    assert b_req["nvidia.com/gpu"] == "1" and created["pod-b"].duration is None
    # Never scheduled in the trace: deleted at its deletion time if still waiting.
    assert (created["pod-c"].duration, created["pod-c"].delete_at) == (None, 90.0)
    milli = {
        e.manifest["metadata"]["name"]: e.manifest["spec"]["containers"][0]["resources"]["requests"]
        for e in import_alibaba_gpu(nodes, pods, gpu_share="milli")
        if isinstance(e, CreateObject)
    }
    assert milli["pod-b"]["alibaba.com/gpu-milli"] == "500"
    assert milli["pod-d"]["alibaba.com/gpu-milli"] == "2000"
    assert "alibaba.com/gpu-milli" not in milli["pod-c"]


@pytest.mark.parametrize(
    ("nodes_text", "problem"),
    [
        ("sn,cpu_milli,memory_mib,gpu\nn,1,1,0\n", "line 1: missing column model"),
        ("sn,cpu_milli,memory_mib,gpu,model\nn,abc,1,0,\n", "line 2: cpu_milli: not a number"),
        ("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,0,\nn,1,1,0,\n", "line 3: sn: duplicate node"),
    ],
)
def test_alibaba_importer_errors(tmp_path: Path, nodes_text: str, problem: str) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text(nodes_text)
    pods.write_text(PODS_CSV)
    with pytest.raises(TraceError, match=problem):
        import_alibaba_gpu(nodes, pods)


def test_import_command_and_replay_of_the_csvs_agree(tmp_path: Path) -> None:
    nodes, pods = tmp_path / "openb_node_list.csv", tmp_path / "openb_pod_list.csv"
    nodes.write_text(NODES_CSV)
    pods.write_text(PODS_CSV)
    out = wasmsched(
        "import", "alibaba-gpu", "--nodes", str(nodes), "--pods", str(pods), cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    trace = tmp_path / "trace.jsonl"
    trace.write_text(out.stdout)
    assert len(out.stdout.splitlines()) == 7
    from_jsonl = wasmsched("replay", "--trace", str(trace), "--output", "json", cwd=tmp_path)
    from_csv = wasmsched(
        "replay", "--trace", str(pods), "--trace", str(nodes), "--output", "json", cwd=tmp_path
    )
    assert from_jsonl.returncode == 0 and from_csv.returncode == 0, from_csv.stderr
    a, b = json.loads(from_jsonl.stdout), json.loads(from_csv.stdout)
    assert a["pods"] == b["pods"]
    placed = by_name(a)
    assert placed["pod-a"]["node"] in ("node-0", "node-1")
    assert placed["pod-d"]["node"] == "node-1"  # V100M32 and two GPUs
    # pod-c was never scheduled in the trace: it runs here until its deletion time.
    assert (placed["pod-c"]["scheduledAt"], placed["pod-c"]["deletedAt"]) == (30.0, 90.0)
    assert placed["pod-c"]["result"] == "Completed"


# --- a property over random traces --------------------------------------------------------

_cpu = st.sampled_from(["500m", "1", "1500m", "2", "3"])


@st.composite
def traces(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [
        node(f"n{i}", draw(st.sampled_from(["2", "3", "4"])))
        for i in range(draw(st.integers(1, 4)))
    ]
    records: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 14))):
        record: dict[str, Any] = {
            "at": draw(st.integers(0, 200)),
            "create": pod(f"p{i}", draw(_cpu)),
        }
        if draw(st.booleans()):
            record["duration"] = draw(st.integers(1, 150))
        records.append(record)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["delete", "cordon", "deleteNode"]))
        at = draw(st.integers(0, 250))
        if kind == "delete" and len(records):
            records.append(
                {"at": at, "delete": f"default/p{draw(st.integers(0, len(records) - 1))}"}
            )
        elif kind != "delete":
            records.append({"at": at, kind: f"n{draw(st.integers(0, len(nodes) - 1))}"})
    return nodes, records


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.integers(0, 3))
def test_random_traces_keep_the_invariants(
    trace: tuple[list[dict[str, Any]], list[dict[str, Any]]], seed: int
) -> None:
    nodes, records = trace
    events = [parse_event(r, f"line {i}") for i, r in enumerate(records, start=1)]
    cluster = ClusterObjects(nodes=[Node(n) for n in nodes])
    run = Replay(cluster, events, default_config(), in_tree_registry(), seed=seed)
    try:
        data = run.run().to_json()
    finally:
        run.sim.close()
    created = [r for r in records if "create" in r]
    # Every pod of the trace appears exactly once.
    assert sorted(p["name"] for p in data["pods"]) == sorted(
        r["create"]["metadata"]["name"] for r in created
    )
    arrival = {r["create"]["metadata"]["name"]: r["at"] for r in created}
    cpu = {
        r["create"]["metadata"]["name"]: parse_quantity(
            r["create"]["spec"]["containers"][0]["resources"]["requests"]["cpu"]
        )
        for r in created
    }
    alloc = {
        n["metadata"]["name"]: parse_quantity(n["status"]["allocatable"]["cpu"]) for n in nodes
    }
    intervals: dict[str, list[tuple[float, float, Fraction]]] = {}
    for p in data["pods"]:
        if p["scheduledAt"] is None:
            continue
        # A pod never runs before it arrives, nor after it is deleted.
        assert p["scheduledAt"] >= arrival[p["name"]] == p["createdAt"]
        end = p["deletedAt"] if p["deletedAt"] is not None else float("inf")
        assert end >= p["scheduledAt"]
        intervals.setdefault(p["node"], []).append((p["scheduledAt"], end, cpu[p["name"]]))
    # At every instant, no node is over-committed.
    for name, spans in intervals.items():
        for start, _, _ in spans:
            used = sum((c for s, e, c in spans if s <= start < e), Fraction(0))
            assert used <= alloc[name], (name, start, spans)


def deployment(name: str, replicas: int, cpu: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod("x", cpu)["spec"]},
        },
    }


def test_node_deletion_recreates_a_deployments_pods_not_bare_ones(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([node("a", "4"), node("b", "4"), deployment("web", 2)]))
    trace = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"at": 5, "create": pod("bare", "1")},
            {"at": 10, "cordon": "b"},  # everything new goes to a
            {"at": 20, "deleteNode": "b"},
        ],
    )
    out = wasmsched(
        "replay", "--cluster", str(cluster), "--trace", str(trace), "--output", "json", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    pods = json.loads(out.stdout)["pods"]
    on_b = [p for p in pods if p["node"] == "b"]
    assert on_b, "the default profile spreads the two web pods over a and b"
    for p in on_b:
        assert (p["result"], p["deletedAt"]) == ("Deleted", 20.0)
    web = [p for p in pods if p["name"].startswith("web-")]
    # Each web pod deleted with b has a replacement created at 20 s and bound to a.
    replacements = [p for p in web if p["createdAt"] == 20.0]
    assert len(replacements) == len([p for p in on_b if p["name"].startswith("web-")])
    assert all(p["node"] == "a" and p["result"] == "Running" for p in replacements)
    assert len({p["name"] for p in web}) == len(web) == 2 + len(replacements)
    bare = [p for p in pods if p["name"] == "bare"]
    assert len(bare) == 1  # a bare pod is never re-created
    if bare[0]["node"] == "b":
        assert bare[0]["result"] == "Deleted"


def test_a_statefulset_in_a_trace_creates_its_pods_one_by_one(tmp_path: Path) -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default", "uid": "uid-db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": pod("x", "1")["spec"]},
        },
    }
    trace = write_jsonl(
        tmp_path / "t.jsonl",
        [{"at": 0, "node": node("n1", "4")}, {"at": 30, "create": sts, "duration": 100}],
    )
    out = wasmsched("replay", "--trace", str(trace), "--output", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    pods = by_name(json.loads(out.stdout))
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    for name in pods:
        assert pods[name]["createdAt"] == 30.0 and pods[name]["scheduledAt"] == 30.0
        assert pods[name]["deletedAt"] == 130.0 and pods[name]["result"] == "Completed"


# --- failed cycles remembered (framework/diagnosis FailureMemo) against the full cycle -----


def _replay_json(
    nodes: list[dict[str, Any]], records: list[dict[str, Any]], seed: int
) -> tuple[dict[str, Any], int]:
    events = [parse_event(r, f"line {i}") for i, r in enumerate(records, start=1)]
    run = Replay(
        ClusterObjects(nodes=[Node(n) for n in nodes]),
        events,
        default_config(),
        in_tree_registry(),
        seed=seed,
    )
    try:
        data = run.run().to_json()
    finally:
        run.sim.close()
    data["summary"].pop("wallSeconds")
    return data, run.sim.scheduler.algorithm.failure_memo.hits


def _both_ways(
    nodes: list[dict[str, Any]], records: list[dict[str, Any]], seed: int
) -> tuple[dict[str, Any], dict[str, Any], int]:
    fast, hits = _replay_json(nodes, records, seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FailureMemo, "signature", lambda *a, **k: None)
        slow, none = _replay_json(nodes, records, seed)
    assert none == 0
    return fast, slow, hits


def _contended(i: int, at: int, cpu: str, priority: int, duration: int) -> dict[str, Any]:
    manifest = pod(f"p{i}", cpu)
    manifest["metadata"]["labels"] = {"shape": cpu}
    if priority:
        manifest["spec"]["priority"] = priority
    return {"at": at, "create": manifest, "duration": duration}


def test_memo_answers_repeated_failures_as_the_full_cycle_does() -> None:
    # One 4-CPU node, a 4-CPU pod running 100 s, then ten 2- and 3-CPU pods: each retry
    # after a deletion fails the same way for every waiting pod of a shape.
    nodes = [node("n0", "4"), node("n1", "2")]
    records = [_contended(0, 0, "4", 0, 100), _contended(99, 0, "2", 0, 300)]
    records += [_contended(i, 1 + i, "3" if i % 2 else "2", 0, 50) for i in range(1, 11)]
    fast, slow, hits = _both_ways(nodes, records, 0)
    assert hits > 0
    assert fast == slow


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(["2", "3", "4"]), min_size=1, max_size=3),
    st.lists(
        st.tuples(
            st.integers(0, 60),
            st.sampled_from(["1", "2", "3"]),
            st.sampled_from([0, 0, 0, 100]),
            st.integers(5, 80),
        ),
        min_size=1,
        max_size=14,
    ),
    st.integers(0, 2),
)
def test_memo_never_changes_a_replay(
    cpus: list[str], pods: list[tuple[int, str, int, int]], seed: int
) -> None:
    nodes = [node(f"n{i}", c) for i, c in enumerate(cpus)]
    records = [_contended(i, *p) for i, p in enumerate(pods)]
    fast, slow, _ = _both_ways(nodes, records, seed)
    assert fast == slow
