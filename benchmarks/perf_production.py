"""A production-shaped cluster (issue 25): what a real cluster gives the scheduler that
scheduler_perf's uniform nodes do not.

- Three tainted control-plane nodes; a tenth of the rest are GPU nodes (4 GPUs, tainted
  ``nvidia.com/gpu=present:NoSchedule``).
- Four instance types (m5.2xlarge, m5.4xlarge, c5.4xlarge, p3.8xlarge for the GPU nodes)
  in three zones; node images (the DaemonSets' and some of the applications').
- Two DaemonSet pods on every node, node-exporter with hostPort 9100 (so every node has a
  host port in use) and fluent-bit, tolerating every taint.
- Nodes 30-50% full (CPU) of Deployment pods; web pods among them carry a preferred
  anti-affinity on hostname, GPU nodes run one GPU pod each.
- 1000 pending pods (one per node below 500 nodes), mixing required node affinity,
  tolerations, GPU requests, preferred anti-affinity on hostname, zone spread (hard and
  soft) and host ports; every one of them fits.

Seeded: the same node count gives the same cluster.
"""

from __future__ import annotations

import random
from typing import Any

from bench_support import container, namespace, node_manifest, pod_manifest
from perf_workloads import HOSTNAME, ZONE, Workload

from wasmsched.api.objects import Node, Pod

ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
INSTANCE = "node.kubernetes.io/instance-type"
GPU = "nvidia.com/gpu"
CONTROL_PLANE = "node-role.kubernetes.io/control-plane"
# name: (cpu, memory, GPUs)
TYPES = {
    "m5.2xlarge": ("8", "32Gi", 0),
    "m5.4xlarge": ("16", "64Gi", 0),
    "c5.4xlarge": ("16", "32Gi", 0),
    "p3.8xlarge": ("32", "244Gi", 4),
}
MB = 1_000_000
DAEMON_IMAGES = [
    ("registry.k8s.io/pause:3.10", 300_000),
    ("registry.k8s.io/kube-proxy:v1.33.4", 30 * MB),
    ("quay.io/prometheus/node-exporter:v1.8.2", 12 * MB),
    ("cr.fluentbit.io/fluent/fluent-bit:3.1.9", 35 * MB),
]
APP_IMAGES = [
    (f"registry.example.com/{app}:v{v}", size * MB)
    for app, v, size in [
        ("web-frontend", 42, 180),
        ("api", 17, 240),
        ("cache", 7, 120),
        ("ingress", 3, 90),
        ("batch-worker", 9, 650),
        ("trainer", 5, 3500),
        ("search", 11, 420),
        ("payments", 23, 310),
    ]
]
# Running Deployments: (namespace, app, cpu, memory, image index)
DEPLOYMENTS = [
    ("shop", "web-frontend", "250m", "512Mi", 0),
    ("payments", "api", "500m", "1Gi", 1),
    ("shop", "cache", "1", "4Gi", 2),
    ("search", "search", "2", "8Gi", 6),
    ("payments", "payments", "500m", "2Gi", 7),
    ("batch", "batch-worker", "1", "2Gi", 4),
]
DEFAULT_TOLERATIONS = [  # DefaultTolerationSeconds admission adds these to every pod
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}


def _millicores(cpu: str) -> int:
    return int(cpu[:-1]) if cpu.endswith("m") else int(cpu) * 1000


def _node(i: int, kind: str, rng: random.Random) -> Node:
    cpu, memory, gpus = TYPES[kind]
    name = f"ip-10-0-{i // 250}-{i % 250}.ec2.internal"
    labels = {
        ZONE: ZONES[i % 3],
        "topology.kubernetes.io/region": "us-east-1",
        INSTANCE: kind,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "nodepool": "gpu" if gpus else "general",
    }
    capacity = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    taints: list[dict[str, str]] = []
    if gpus:
        capacity[GPU] = str(gpus)
        labels["accelerator"] = "nvidia-tesla-v100"
        taints.append({"key": GPU, "value": "present", "effect": "NoSchedule"})
    images = [
        {"names": [image], "sizeBytes": size}
        for image, size in DAEMON_IMAGES + rng.sample(APP_IMAGES, rng.randint(2, 5))
    ]
    return Node(node_manifest(name, labels, capacity, {"taints": taints} if taints else {}, images))


def _control_plane(i: int) -> Node:
    name = f"control-plane-{i}"
    cpu, memory, _ = TYPES["m5.2xlarge"]
    labels = {
        ZONE: ZONES[i % 3],
        "topology.kubernetes.io/region": "us-east-1",
        INSTANCE: "m5.2xlarge",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        CONTROL_PLANE: "",
    }
    spec = {"taints": [{"key": CONTROL_PLANE, "effect": "NoSchedule"}]}
    images = [{"names": [image], "sizeBytes": size} for image, size in DAEMON_IMAGES]
    capacity = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    return Node(node_manifest(name, labels, capacity, spec, images))


def _daemon_pods(node: Node) -> list[Pod]:
    tolerate_all = [{"operator": "Exists"}]
    exporter = container(
        {"cpu": "50m", "memory": "64Mi"},
        {"memory": "64Mi"},
        image=DAEMON_IMAGES[2][0],
        ports=[{"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"}],
        name="node-exporter",
    )
    fluent = container(
        {"cpu": "100m", "memory": "128Mi"},
        {"memory": "256Mi"},
        image=DAEMON_IMAGES[3][0],
        name="fluent-bit",
    )
    return [
        Pod(
            pod_manifest(
                f"{app}-{node.name}",
                "monitoring",
                {
                    "containers": [c],
                    "tolerations": tolerate_all,
                    "priorityClassName": "system-node-critical",
                },
                {"app": app},
                node=node.name,
            )
        )
        for app, c in (("node-exporter", exporter), ("fluent-bit", fluent))
    ]


def _app_spec(
    cpu: str, memory: str, image: str, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "containers": [container({"cpu": cpu, "memory": memory}, {"memory": memory}, image)],
        "tolerations": list(DEFAULT_TOLERATIONS),
        **(extra or {}),
    }


def _soft_anti_affinity(app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": term}
            ]
        }
    }


def _running_pods(
    nodes: list[Node], rng: random.Random, fill: tuple[float, float] = (0.30, 0.50)
) -> list[Pod]:
    """Deployment pods filling each worker to 30-50% (``fill``) of its CPU."""
    pods: list[Pod] = []
    counter = 0
    for node in nodes:
        alloc = node.manifest["status"]["allocatable"]
        target = _millicores(alloc["cpu"]) * rng.uniform(*fill)
        used = 150  # the two DaemonSet pods
        if GPU in alloc:
            spec = _app_spec(
                "4",
                "16Gi",
                APP_IMAGES[5][0],
                {"tolerations": [*DEFAULT_TOLERATIONS, GPU_TOLERATION]},
            )
            spec["containers"][0]["resources"]["requests"][GPU] = "1"
            spec["containers"][0]["resources"]["limits"][GPU] = "1"
            pods.append(
                Pod(pod_manifest(f"trainer-{counter}", "ml", spec, {"app": "trainer"}, node.name))
            )
            counter += 1
            used += 4000
        while used < target:
            ns, app, cpu, memory, image = rng.choice(DEPLOYMENTS)
            extra = {"affinity": _soft_anti_affinity(app)} if app == "web-frontend" else {}
            if GPU in alloc:
                extra["tolerations"] = [*DEFAULT_TOLERATIONS, GPU_TOLERATION]
            labels = {"app": app, "pod-template-hash": "5d8f7c9b6"}
            spec = _app_spec(cpu, memory, APP_IMAGES[image][0], extra)
            pods.append(Pod(pod_manifest(f"{app}-{counter}", ns, spec, labels, node.name)))
            counter += 1
            used += _millicores(cpu)
    return pods


def _zone_spread(app: str, hard: bool) -> list[dict[str, Any]]:
    return [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": app}},
        }
    ]


def _required_types(*types: str) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": INSTANCE, "operator": "In", "values": types}]}
                ]
            }
        }
    }


def _pending_pod(i: int) -> Pod:
    """The i-th pending pod: ten kinds in turn (three web, two api, one each of the rest)."""
    kind = i % 10
    if kind < 3:  # web: required instance types, soft anti-affinity, soft zone spread
        app, ns = "web-frontend", "shop"
        affinity = {**_required_types("m5.2xlarge", "m5.4xlarge"), **_soft_anti_affinity(app)}
        spec = _app_spec(
            "250m",
            "512Mi",
            APP_IMAGES[0][0],
            {"affinity": affinity, "topologySpreadConstraints": _zone_spread(app, False)},
        )
    elif kind < 5:  # api: hard zone spread, soft anti-affinity
        app, ns = "api", "payments"
        spec = _app_spec(
            "500m",
            "1Gi",
            APP_IMAGES[1][0],
            {
                "affinity": _soft_anti_affinity(app),
                "topologySpreadConstraints": _zone_spread(app, True),
            },
        )
    elif kind == 5:  # GPU: a toleration, a node selector, one GPU
        app, ns = "trainer", "ml"
        spec = _app_spec(
            "4",
            "16Gi",
            APP_IMAGES[5][0],
            {
                "tolerations": [*DEFAULT_TOLERATIONS, GPU_TOLERATION],
                "nodeSelector": {"accelerator": "nvidia-tesla-v100"},
            },
        )
        spec["containers"][0]["resources"]["requests"][GPU] = "1"
        spec["containers"][0]["resources"]["limits"][GPU] = "1"
    elif kind == 6:  # ingress: a host port (five ports in turn)
        app, ns = "ingress", "ingress"
        spec = _app_spec("200m", "256Mi", APP_IMAGES[3][0])
        port = 8080 + (i // 10) % 5
        spec["containers"][0]["ports"] = [
            {"containerPort": port, "hostPort": port, "protocol": "TCP"}
        ]
    elif kind == 7:  # cache: required zones, soft anti-affinity
        app, ns = "cache", "shop"
        zones = {"key": ZONE, "operator": "In", "values": ZONES[:2]}
        affinity = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [zones]}]
                }
            },
            **_soft_anti_affinity(app),
        }
        spec = _app_spec("1", "4Gi", APP_IMAGES[2][0], {"affinity": affinity})
    else:  # batch: required arch, preferred compute-optimized nodes
        app, ns = "batch-worker", "batch"
        arch = {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
        preferred = {"key": INSTANCE, "operator": "In", "values": ["c5.4xlarge"]}
        affinity = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [arch]}]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "preference": {"matchExpressions": [preferred]}}
                ],
            }
        }
        spec = _app_spec("1", "2Gi", APP_IMAGES[4][0], {"affinity": affinity})
    labels = {"app": app, "pod-template-hash": "7c4d9f8b5"}
    return Pod(pod_manifest(f"{app}-pending-{i}", ns, spec, labels))


def _thinned(pods: list[Pod], keep: int) -> list[Pod]:
    """``keep`` of ``pods``, the dropped ones spread evenly over the list (so over the nodes)."""
    extra = len(pods) - keep
    if extra <= 0:
        return pods
    dropped = {i * len(pods) // extra for i in range(extra)}
    return [p for i, p in enumerate(pods) if i not in dropped]


def production(n: int, pending: int | None = None, running: int | None = None) -> Workload:
    """The cluster of ``n`` nodes. ``pending`` pods (default: 1000, or one per node below
    500 nodes); ``running`` pods bound in all, DaemonSet pods included (default: what
    filling the workers to 30-50% gives; a count fills them to 40-60% and drops Deployment
    pods evenly down to it, for the memory benchmark's 150,000 on 15,000 nodes)."""
    rng = random.Random(n)
    workers = max(n - 3, 4)
    gpu_every = 10  # one node in ten is a GPU node
    general = ["m5.2xlarge", "m5.4xlarge", "c5.4xlarge"]
    nodes = [_control_plane(i) for i in range(3)]
    for i in range(workers):
        kind = "p3.8xlarge" if i % gpu_every == gpu_every - 1 else general[i % 3]
        nodes.append(_node(i, kind, rng))
    daemons = [p for node in nodes for p in _daemon_pods(node)]
    if running is None:
        deployed = _running_pods(nodes[3:], rng)
    else:
        deployed = _thinned(_running_pods(nodes[3:], rng, (0.40, 0.60)), running - len(daemons))
    if pending is None:
        pending = 1000 if n >= 500 else n
    waiting = [_pending_pod(i) for i in range(pending)]
    names = ["monitoring", "shop", "payments", "search", "batch", "ml", "ingress"]
    return Workload(
        "Production",
        nodes,
        [*daemons, *deployed],
        waiting,
        [p.key for p in waiting],
        others=[namespace(ns) for ns in names],
        note=f"{len(nodes)} nodes, {len(daemons) + len(deployed)} running pods",
    )
