"""Tests for wasmsched.sim.workloads: the pods workload controllers create, unit and through
``wasmsched simulate --output json``."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from wasmsched.api.manifests import load_manifests, workload_warnings
from wasmsched.api.objects import Node, Pod
from wasmsched.cli import app
from wasmsched.sim.workloads import (
    ALPHANUMS,
    WorkloadControllers,
    random_suffix,
    safe_encode,
    template_hash,
)

runner = CliRunner()
SUFFIX = f"[{ALPHANUMS}]{{5}}"


def node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def template(app_label: str, cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app_label}, "annotations": {"note": "from-template"}},
        "spec": {
            "containers": [
                {"name": "app", "image": "img", "resources": {"requests": {"cpu": cpu}}}
            ],
            **spec,
        },
    }


def workload(kind: str, name: str, spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    api = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": "shop", **meta},
        "spec": spec,
    }


def deployment(name: str = "web", replicas: int = 3, **meta: Any) -> dict[str, Any]:
    return workload(
        "Deployment",
        name,
        {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name, priorityClassName="high"),
        },
        **meta,
    )


def replica_set(name: str = "rs", replicas: int = 2, **meta: Any) -> dict[str, Any]:
    return workload(
        "ReplicaSet",
        name,
        {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
        },
        **meta,
    )


def stateful_set(name: str = "db", replicas: int = 3, **spec: Any) -> dict[str, Any]:
    return workload(
        "StatefulSet",
        name,
        {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
            **spec,
        },
    )


def daemon_set(name: str = "agent", **tspec: Any) -> dict[str, Any]:
    return workload(
        "DaemonSet",
        name,
        {"selector": {"matchLabels": {"app": name}}, "template": template(name, **tspec)},
    )


def job(name: str = "batch", **spec: Any) -> dict[str, Any]:
    return workload("Job", name, {"template": template(name, restartPolicy="Never"), **spec})


PRIORITY_CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
}


def owned_pod(name: str, owner: dict[str, Any], node_name: str = "", **labels: str) -> Pod:
    meta = owner["metadata"]
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "shop",
                "labels": labels,
                "ownerReferences": [
                    {
                        "apiVersion": owner["apiVersion"],
                        "kind": owner["kind"],
                        "name": meta["name"],
                        "uid": meta["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {"nodeName": node_name, "containers": [{"name": "a", "image": "i"}]},
        }
    )


def controllers(
    others: list[dict[str, Any]],
    nodes: list[dict[str, Any]] | None = None,
    pods: list[Pod] | None = None,
) -> WorkloadControllers:
    return WorkloadControllers(
        [Node(n) for n in (nodes if nodes is not None else [node("n1")])], pods or [], others
    )


def names(pods: list[Pod]) -> list[str]:
    return [p.name for p in pods]


# --- naming ------------------------------------------------------------------------------


def test_safe_encode_maps_every_byte_into_the_alphabet() -> None:
    assert safe_encode("0123456789") == "".join(ALPHANUMS[b % 27] for b in b"0123456789")
    assert set(safe_encode("4294967295")) <= set(ALPHANUMS)


def test_template_hash_is_stable_and_sensitive() -> None:
    t = template("web")
    assert template_hash(t) == template_hash(copy.deepcopy(t))
    assert template_hash(t) != template_hash(template("web", cpu="200m"))
    assert template_hash(t) != template_hash(t, collision_count=1)
    assert set(template_hash(t)) <= set(ALPHANUMS)
    assert 1 <= len(template_hash(t)) <= 10  # the decimal digits of a uint32


def test_random_suffix_is_seeded() -> None:
    a, b = random.Random("x"), random.Random("x")
    assert [random_suffix(a) for _ in range(3)] == [random_suffix(b) for _ in range(3)]
    assert re.fullmatch(SUFFIX, random_suffix(random.Random(1)))


# --- what each controller creates ---------------------------------------------------------


def test_deployment_makes_a_replica_set_and_its_pods() -> None:
    d = deployment(uid="d-uid")
    pods = controllers([d, PRIORITY_CLASS]).initial_pods()
    pth = template_hash(d["spec"]["template"])
    assert len(pods) == 3
    for p in pods:
        assert re.fullmatch(f"web-{pth}-{SUFFIX}", p.name), p.name
        assert p.namespace == "shop"
        assert p.labels == {"app": "web", "pod-template-hash": pth}
        assert p.annotations == {"note": "from-template"}
        (ref,) = p.owner_references
        assert ref["kind"] == "ReplicaSet" and ref["name"] == f"web-{pth}"
        assert ref["controller"] is True and ref["uid"] != "d-uid"
        assert p.priority == 1000  # the template's priority class, through admission
        assert p.spec["containers"] == d["spec"]["template"]["spec"]["containers"]
        assert not p.node_name
    assert len(set(names(pods))) == 3
    assert len({p.uid for p in pods}) == 3


def test_replica_set_pods_and_owner_uid() -> None:
    rs = replica_set(uid="rs-uid")
    pods = controllers([rs]).initial_pods()
    assert [re.fullmatch(f"rs-{SUFFIX}", n) is not None for n in names(pods)] == [True, True]
    assert {p.owner_references[0]["uid"] for p in pods} == {"rs-uid"}


def test_runs_are_deterministic() -> None:
    others = [deployment(), stateful_set(), daemon_set(), job(parallelism=2), replica_set()]
    first = controllers(others).initial_pods()
    second = controllers(others).initial_pods()
    assert [(p.key, p.uid) for p in first] == [(p.key, p.uid) for p in second]
    # Input order: the Deployment's pods first, then the StatefulSet's.
    assert first[0].name.startswith("web-") and first[3].name == "db-0"


@pytest.mark.parametrize(
    ("existing", "expected_new"),
    [
        ([], 2),
        (["rs-aaaaa"], 1),
        (["rs-aaaaa", "rs-bbbbb"], 0),
        (["rs-aaaaa", "rs-bbbbb", "rs-ccccc"], 0),
    ],
)
def test_existing_pods_count_towards_replicas(existing: list[str], expected_new: int) -> None:
    rs = replica_set(uid="rs-uid")
    pods = [owned_pod(n, rs, "n1") for n in existing]
    assert len(controllers([rs], pods=pods).initial_pods()) == expected_new


def test_terminated_pods_do_not_count_and_orphans_are_adopted() -> None:
    rs = replica_set(uid="rs-uid")
    done = Pod({**owned_pod("rs-aaaaa", rs).manifest, "status": {"phase": "Succeeded"}})
    orphan = Pod(
        {
            "kind": "Pod",
            "metadata": {"name": "loose", "namespace": "shop", "labels": {"app": "rs"}},
            "spec": {"containers": [{"name": "a", "image": "i"}]},
        }
    )
    assert len(controllers([rs], pods=[done]).initial_pods()) == 2
    assert len(controllers([rs], pods=[orphan]).initial_pods()) == 1


def test_a_dump_is_not_doubled() -> None:
    """A dump: the Deployment, its ReplicaSet (owned by it, same template plus the hash label)
    and two of the three pods. One pod is missing, and it comes from the dump's ReplicaSet."""
    d = deployment(uid="d-uid")
    rs_template = copy.deepcopy(d["spec"]["template"])
    rs_template["metadata"]["labels"]["pod-template-hash"] = "5d4f8c9b7"
    rs = workload(
        "ReplicaSet",
        "web-5d4f8c9b7",
        {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": "5d4f8c9b7"}},
            "template": rs_template,
        },
        uid="rs-uid",
        ownerReferences=[
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "web",
                "uid": "d-uid",
                "controller": True,
            }
        ],
    )
    pods = [owned_pod(f"web-5d4f8c9b7-{s}", rs, "n1") for s in ("aaaaa", "bbbbb")]
    new = controllers([d, rs, PRIORITY_CLASS], pods=pods).initial_pods()
    assert len(new) == 1
    assert re.fullmatch(f"web-5d4f8c9b7-{SUFFIX}", new[0].name)
    assert new[0].owner_references[0]["uid"] == "rs-uid"
    # An old ReplicaSet (another template): its pods count, new pods go to a new one.
    old = copy.deepcopy(rs)
    old["spec"]["template"]["spec"]["containers"][0]["image"] = "img:old"
    new = controllers([d, old], pods=pods).initial_pods()
    assert len(new) == 1 and new[0].name.startswith(f"web-{template_hash(d['spec']['template'])}-")


def test_stateful_set_ordered_ready_one_at_a_time() -> None:
    sts = stateful_set()
    wc = controllers([sts])
    first = wc.initial_pods()
    assert names(first) == ["db-0"]
    assert wc.pods_to_come() == 2
    p = first[0]
    assert p.spec["hostname"] == "db-0" and p.spec["subdomain"] == "db"
    assert p.labels["statefulset.kubernetes.io/pod-name"] == "db-0"
    assert p.labels["apps.kubernetes.io/pod-index"] == "0"
    assert p.labels["controller-revision-hash"].startswith("db-")
    assert names(wc.on_pod_bound(p.with_node_name("n1"))) == ["db-1"]
    assert wc.pods_to_come() == 1
    assert names(wc.on_pod_bound(p.with_node_name("n1"))) == []  # db-1 is not running yet


@pytest.mark.parametrize(
    ("spec", "existing", "expected"),
    [
        ({"podManagementPolicy": "Parallel"}, [], ["db-0", "db-1", "db-2"]),
        ({"ordinals": {"start": 5}}, [], ["db-5"]),
        ({}, [("db-0", "n1")], ["db-1"]),
        ({}, [("db-0", "")], []),  # a pending db-0 of the dump: wait for it
        ({"podManagementPolicy": "Parallel"}, [("db-1", "")], ["db-0", "db-2"]),
        ({"replicas": 0}, [], []),
    ],
)
def test_stateful_set_table(
    spec: dict[str, Any], existing: list[tuple[str, str]], expected: list[str]
) -> None:
    sts = stateful_set(**spec)
    sts["metadata"]["uid"] = "sts-uid"
    pods = [owned_pod(n, sts, node_name) for n, node_name in existing]
    assert names(controllers([sts], pods=pods).initial_pods()) == expected


def test_stateful_set_claims() -> None:
    sts = stateful_set(
        replicas=2,
        volumeClaimTemplates=[
            {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
        ],
    )
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": "fast",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "x",
    }
    wc = controllers([sts, sc])
    assert [c["metadata"]["name"] for c in wc.objects] == ["data-db-0", "data-db-1"]
    assert wc.objects[0]["spec"]["storageClassName"] == "fast"
    assert wc.objects[0]["metadata"]["labels"] == {"app": "db"}
    (pod,) = wc.initial_pods()
    assert pod.spec["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}
    ]


NODES = [
    node("plain"),
    node("gpu", {"kind": "gpu"}, taints=[{"key": "gpu", "effect": "NoSchedule"}]),
    node(
        "cordoned",
        unschedulable=True,
        taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
    ),
    node("not-ready", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
    node("soft", taints=[{"key": "x", "effect": "PreferNoSchedule"}]),
    node("net", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]),
]


@pytest.mark.parametrize(
    ("tspec", "expected"),
    [
        ({}, ["plain", "cordoned", "not-ready", "soft"]),
        ({"hostNetwork": True}, ["plain", "cordoned", "not-ready", "soft", "net"]),
        (
            {"tolerations": [{"key": "gpu", "operator": "Exists"}]},
            ["plain", "gpu", "cordoned", "not-ready", "soft"],
        ),
        ({"nodeSelector": {"kind": "gpu"}}, []),
        (
            {"nodeSelector": {"kind": "gpu"}, "tolerations": [{"operator": "Exists"}]},
            ["gpu"],
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {
                                            "key": "metadata.name",
                                            "operator": "NotIn",
                                            "values": ["plain"],
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                }
            },
            ["cordoned", "not-ready", "soft"],
        ),
    ],
)
def test_daemon_set_places_one_pod_per_eligible_node(
    tspec: dict[str, Any], expected: list[str]
) -> None:
    pods = controllers([daemon_set(**tspec)], nodes=NODES).initial_pods()
    targets = []
    for p in pods:
        assert re.fullmatch(f"agent-{SUFFIX}", p.name)
        terms = p.spec["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        (term,) = terms
        assert term == {
            "matchFields": [
                {
                    "key": "metadata.name",
                    "operator": "In",
                    "values": [term["matchFields"][0]["values"][0]],
                }
            ]
        }
        targets.append(term["matchFields"][0]["values"][0])
        keys = {t.get("key") for t in p.spec["tolerations"]}
        assert {"node.kubernetes.io/not-ready", "node.kubernetes.io/unschedulable"} <= keys
    assert targets == expected


def test_daemon_set_existing_pods_and_new_nodes() -> None:
    ds = daemon_set()
    ds["metadata"]["uid"] = "ds-uid"
    existing = [owned_pod("agent-aaaaa", ds, "plain")]
    wc = controllers([ds], nodes=[node("plain"), node("other")], pods=existing)
    pods = wc.initial_pods()
    assert [
        p.spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ][0]["matchFields"][0]["values"]
        for p in pods
    ] == [["other"]]
    added = wc.on_node_added(Node(node("third")))
    assert len(added) == 1 and "third" in json.dumps(added[0].spec["affinity"])
    # Deleting a DaemonSet pod brings one back for the same node.
    again = wc.on_pod_deleted(existing[0])
    assert len(again) == 1 and '"plain"' in json.dumps(again[0].spec["affinity"])


@pytest.mark.parametrize(
    ("spec", "status", "count"),
    [
        ({}, {}, 1),
        ({"parallelism": 3}, {}, 3),
        ({"parallelism": 3, "completions": 2}, {}, 2),
        ({"parallelism": 2, "completions": 5}, {"succeeded": 4}, 1),
        ({"parallelism": 2, "completions": 5}, {"succeeded": 5}, 0),
        ({"parallelism": 2}, {"succeeded": 1}, 0),
        ({"parallelism": 2, "suspend": True}, {}, 0),
        ({"parallelism": 0}, {}, 0),
        ({"parallelism": 2}, {"conditions": [{"type": "Complete", "status": "True"}]}, 0),
    ],
)
def test_job_pod_count(spec: dict[str, Any], status: dict[str, Any], count: int) -> None:
    j = job(**spec)
    j["status"] = status
    pods = controllers([j]).initial_pods()
    assert len(pods) == count
    for p in pods:
        assert re.fullmatch(f"batch-{SUFFIX}", p.name)
        assert p.labels["batch.kubernetes.io/job-name"] == "batch"
        assert p.owner_references[0]["kind"] == "Job"
        assert p.spec["restartPolicy"] == "Never"


def test_indexed_job() -> None:
    pods = controllers([job(parallelism=2, completions=4, completionMode="Indexed")]).initial_pods()
    assert [
        re.fullmatch(f"batch-{i}-{SUFFIX}", p.name) is not None for i, p in enumerate(pods)
    ] == [True, True]
    assert [p.annotations["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]
    assert [p.spec["hostname"] for p in pods] == ["batch-0", "batch-1"]


def test_cron_job_and_suspended_job_warn() -> None:
    cron = workload(
        "CronJob",
        "nightly",
        {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": template("n")}}},
    )
    assert controllers([cron]).initial_pods() == []
    assert workload_warnings([cron, job(suspend=True), job("other")]) == [
        'CronJob shop/nightly: creates no pods until its schedule "0 3 * * *" fires, which '
        "the simulation does not run",
        "Job shop/batch: suspended (spec.suspend), so it creates no pods",
    ]


def test_deleted_pods_are_replaced() -> None:
    rs, sts = replica_set(uid="rs-uid"), stateful_set(podManagementPolicy="Parallel")
    wc = controllers([rs, sts])
    pods = wc.initial_pods()
    rs_pod = pods[0]
    replacement = wc.on_pod_deleted(rs_pod)
    assert len(replacement) == 1 and replacement[0].name != rs_pod.name
    assert replacement[0].name.startswith("rs-")
    db1 = next(p for p in pods if p.name == "db-1")
    back = wc.on_pod_deleted(db1)
    assert names(back) == ["db-1"] and back[0].uid != db1.uid
    assert wc.on_pod_deleted(db1) == []  # already replaced: not ours any more
    stranger = Pod({"kind": "Pod", "metadata": {"name": "x"}, "spec": {}})
    assert wc.on_pod_deleted(stranger) == [] and wc.on_pod_bound(stranger) == []


# --- through the command line ---------------------------------------------------------------


def simulate(tmp_path: Path, objects: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    result = runner.invoke(app, ["simulate", "--cluster", str(f), "--output", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def small_node(name: str, cpu: str) -> dict[str, Any]:
    n = node(name)
    n["status"]["allocatable"]["cpu"] = cpu
    return n


def test_cli_deployment_pods_are_scheduled(tmp_path: Path) -> None:
    data, _ = simulate(tmp_path, [node("n1"), node("n2"), deployment(replicas=4), PRIORITY_CLASS])
    pods = data["pods"]
    assert len(pods) == 4
    assert all(p["result"] == "Scheduled" and p["node"] in ("n1", "n2") for p in pods)
    pth = template_hash(deployment()["spec"]["template"])
    assert all(re.fullmatch(f"web-{pth}-{SUFFIX}", p["name"]) for p in pods)
    again, _ = simulate(tmp_path, [node("n1"), node("n2"), deployment(replicas=4), PRIORITY_CLASS])
    assert again["pods"] == pods


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # OrderedReady: db-1 does not fit, so db-2 is never created.
        ("OrderedReady", [("db-0", "Scheduled"), ("db-1", "Unschedulable")]),
        ("Parallel", [("db-0", "Scheduled"), ("db-1", "Unschedulable"), ("db-2", "Unschedulable")]),
    ],
)
def test_cli_stateful_set_pods_come_one_by_one(
    tmp_path: Path, policy: str, expected: list[tuple[str, str]]
) -> None:
    sts = stateful_set(podManagementPolicy=policy)
    sts["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
    data, _ = simulate(tmp_path, [small_node("n1", "1500m"), sts])
    assert sorted((p["name"], p["result"]) for p in data["pods"]) == expected


def test_cli_stateful_set_all_scheduled_in_order(tmp_path: Path) -> None:
    data, _ = simulate(tmp_path, [node("n1"), stateful_set(replicas=4)])
    assert [(p["name"], p["result"]) for p in data["pods"]] == [
        (f"db-{i}", "Scheduled") for i in range(4)
    ]


def test_cli_daemon_set_job_and_cron_job(tmp_path: Path) -> None:
    cron = workload(
        "CronJob",
        "nightly",
        {
            "schedule": "@hourly",
            "jobTemplate": {"spec": {"template": template("n", restartPolicy="OnFailure")}},
        },
    )
    tainted = node("tainted", taints=[{"key": "gpu", "effect": "NoSchedule"}])
    data, stderr = simulate(
        tmp_path, [node("n1"), node("n2"), tainted, daemon_set(), job(parallelism=2), cron]
    )
    by_name = {p["name"]: p for p in data["pods"]}
    agents = sorted(p["node"] for n, p in by_name.items() if n.startswith("agent-"))
    assert agents == ["n1", "n2"]
    assert sum(n.startswith("batch-") for n in by_name) == 2
    assert all(p["result"] == "Scheduled" for p in data["pods"])
    assert 'CronJob shop/nightly: creates no pods until its schedule "@hourly"' in stderr


def test_loaded_dump_is_not_doubled_through_the_loader(tmp_path: Path) -> None:
    rs = replica_set(uid="rs-uid")
    pod = owned_pod("rs-aaaaa", rs, "n1").manifest
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([node("n1"), rs, pod], sort_keys=False))
    objs = load_manifests(f)
    assert len(WorkloadControllers(objs.nodes, objs.pods, objs.others).initial_pods()) == 1


# --- properties ------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Pod]]:
    nodes = [
        node(f"n{i}", taints=[{"key": "t", "effect": "NoSchedule"}] if draw(st.booleans()) else [])
        for i in range(draw(st.integers(1, 4)))
    ]
    others: list[dict[str, Any]] = []
    pods: list[Pod] = []
    for i in range(draw(st.integers(0, 5))):
        kind = draw(
            st.sampled_from(["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"])
        )
        replicas = draw(st.integers(0, 4))
        name = f"w{i}"
        if kind == "Deployment":
            obj = deployment(name, replicas)
        elif kind == "ReplicaSet":
            obj = replica_set(name, replicas)
        elif kind == "StatefulSet":
            obj = stateful_set(
                name,
                replicas,
                podManagementPolicy=draw(st.sampled_from(["OrderedReady", "Parallel"])),
            )
        elif kind == "DaemonSet":
            obj = daemon_set(name)
        else:
            obj = job(name, parallelism=replicas, completions=draw(st.integers(0, 4)))
        obj["metadata"]["uid"] = f"uid-{i}"
        others.append(obj)
        if kind != "Deployment":
            for j in range(draw(st.integers(0, 3))):
                phase = draw(st.sampled_from(["Running", "Succeeded", "Pending"]))
                pod_name = f"{name}-{j}"
                p = owned_pod(pod_name, obj, draw(st.sampled_from(["", "n0"])))
                pods.append(Pod({**p.manifest, "status": {"phase": phase}}))
    return nodes, others, pods


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_property_controllers_reach_their_desired_counts(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]], list[Pod]],
) -> None:
    nodes, others, existing = cluster
    wc = controllers(others, nodes=nodes, pods=existing)
    created = wc.initial_pods()
    # A StatefulSet's OrderedReady pods come as the previous ones are bound.
    pending = list(created) + [p for p in existing if not p.node_name and p.phase != "Succeeded"]
    while pending:
        pod = pending.pop(0)
        target = pod.required_node_affinity.node_names  # a DaemonSet pod's node
        more = wc.on_pod_bound(pod.with_node_name(next(iter(target)) if target else "n0"))
        created.extend(more)
        pending.extend(more)
    # Names are unique among live pods (a StatefulSet recreates a finished pod's name).
    keys = [p.key for p in existing if p.phase != "Succeeded"] + [p.key for p in created]
    assert len(keys) == len(set(keys)), "pod names are unique"
    assert wc.pods_to_come() == 0
    active = [p for p in existing if p.phase != "Succeeded"]
    for obj in others:
        uid, kind, spec = obj["metadata"]["uid"], obj["kind"], obj["spec"]
        mine = [p for p in created if p.owner_references[0]["uid"] == uid]
        have = [p for p in active if p.owner_references[0]["uid"] == uid]
        if kind == "StatefulSet":
            # Ordinals 0..replicas-1 exist (pods beyond them are the controller's to delete).
            ordinals = {int(p.name.rsplit("-", 1)[1]) for p in [*mine, *have]}
            assert set(range(spec["replicas"])) <= ordinals
            assert len(mine) == len(
                set(range(spec["replicas"])) - {int(p.name.rsplit("-", 1)[1]) for p in have}
            )
        elif kind == "ReplicaSet":
            assert len(mine) + len(have) == max(spec["replicas"], len(have))
        elif kind == "Deployment":
            rs_pods = [
                p
                for p in created
                if p.owner_references[0]["name"].startswith(f"{obj['metadata']['name']}-")
            ]
            assert len(rs_pods) == spec["replicas"]
        elif kind == "DaemonSet":
            eligible = {n["metadata"]["name"] for n in nodes if not n["spec"]["taints"]}
            assert len(mine) == len(eligible - {p.node_name for p in have})
        else:
            succeeded = sum(
                p.phase == "Succeeded" for p in existing if p.owner_references[0]["uid"] == uid
            )
            want = min(spec["parallelism"], max(0, spec["completions"] - succeeded))
            assert len(mine) == max(0, want - len(have))
    again = controllers(others, nodes=nodes, pods=existing).initial_pods()
    assert [p.key for p in again] == [p.key for p in created[: len(again)]]
