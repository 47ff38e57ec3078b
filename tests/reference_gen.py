"""Random clusters for the differential suite (hypothesis strategies of our own).

A drawn case covers the inputs of every default plugin: requests (with an extended
resource), init and restartable sidecar containers, overhead, nodeSelector and every
node-affinity operator, taints and tolerations of every effect, required and preferred
inter-pod (anti-)affinity over hostname and zone, topology spread (minDomains,
nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys), host ports, unschedulable nodes,
images, volumes (bound PVs/PVCs, an unbound immediate PVC, StorageClass, CSINode limits),
priorities with preemption and PDBs, scheduling gates, several profiles and non-default
configs (weights, disabled plugins, MostAllocated, RequestedToCapacityRatio,
percentageOfNodesToScore on clusters above 100 nodes). ``Case.features`` names what a
case uses, for the per-feature agreement rates.

Drawn for 1.37 (``cases(version)``), a case also has what only the newer releases read
(the 1.33 schema refuses some of it, api/validation/schema_versions.py): pod-level
resources (``spec.resources``), nodes declaring features (``status.declaredFeatures``) and
pods that need one (NodeDeclaredFeatures: a RestartAllContainers restart rule,
``hostNetwork`` with ``hostUsers: false``, ``bindMountOptions``), host ports on sidecars,
image volumes, and runs of identical pods in a profile where OpportunisticBatching can
act. Drawn for 1.33, a case is what it always was (the same seed, the same cases).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from reference_support import ROOT, Case
from wasmsched.release.version import KubernetesVersion

V137 = KubernetesVersion(1, 37)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
ZONES = ["zone-a", "zone-b", "zone-c"]
APPS = ["web", "db", "cache"]
GPU = "example.com/gpu"
DRIVER = "csi.example.com"
IMAGES = {"img/web:1": 300, "img/db:1": 700, "img/cache:1": 60, "img/tool:1": 25}
TAINTS = [
    ("dedicated", "infra", "NoSchedule"),
    ("spot", "true", "PreferNoSchedule"),
    ("maint", "", "NoExecute"),
    ("gpu", "true", "NoSchedule"),
]
PRIORITY_CLASSES = {"low": 100, "mid": 1000, "high": 10000}
SECOND_PROFILE = "second-scheduler"
NODENUMBER_WASM = ROOT / "target" / "rust" / "guests" / "nodenumber.wasm"

MiB = 1024 * 1024
# The node features a 1.37 pod can need (component-helpers nodedeclaredfeatures/features:
# each one's Name and InferForScheduling).
RESTART_ALL = "RestartAllContainersOnContainerExits"
HOST_NETWORK_USERNS = "UserNamespacesHostNetworkSupport"
BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"
DECLARED_FEATURES = [RESTART_ALL, HOST_NETWORK_USERNS, BIND_MOUNT_OPTIONS]
# The inputs only 1.37 has, each drawn for a case or not.
POD_LEVEL = "pod-level-resources"
DECLARED = "declared-features"
SIDECAR_PORTS = "sidecar-host-ports"
IMAGE_VOLUMES = "image-volumes"
NEWER_INPUTS = (POD_LEVEL, DECLARED, SIDECAR_PORTS, IMAGE_VOLUMES)


def _qty(milli: int) -> str:
    return f"{milli}m"


@st.composite
def nodes(
    draw: st.DrawFn, count: int, features: set[str], newer: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        name = f"node-{i}"
        labels = {HOST: name}
        if draw(st.integers(0, 9)) > 0:
            labels[ZONE] = ZONES[draw(st.integers(0, 2))] if count > 3 else ZONES[i % 3]
        if draw(st.booleans()):
            labels["disktype"] = draw(st.sampled_from(["ssd", "hdd"]))
        labels["gen"] = str(draw(st.integers(1, 5)))
        cpu = draw(st.sampled_from([1000, 2000, 4000, 8000]))
        mem = draw(st.sampled_from([2048, 4096, 8192]))
        pods = draw(st.sampled_from([3, 6, 110, 110]))
        alloc: dict[str, Any] = {"cpu": _qty(cpu), "memory": f"{mem}Mi", "pods": str(pods)}
        if draw(st.integers(0, 3)) == 0:
            alloc[GPU] = str(draw(st.integers(1, 2)))
            features.add("extended-resources")
        spec: dict[str, Any] = {}
        if count <= 20 and draw(st.integers(0, 3)) == 0:
            chosen = draw(st.lists(st.sampled_from(TAINTS), min_size=1, max_size=2, unique=True))
            spec["taints"] = [
                {"key": k, **({"value": v} if v else {}), "effect": e} for k, v, e in chosen
            ]
            features.update(f"taint-{e}" for _, _, e in chosen)
        if count <= 20 and draw(st.integers(0, 9)) == 0:
            spec["unschedulable"] = True
            features.add("unschedulable-node")
        status: dict[str, Any] = {"capacity": dict(alloc), "allocatable": alloc}
        if draw(st.booleans()):
            imgs = draw(st.lists(st.sampled_from(sorted(IMAGES)), max_size=3, unique=True))
            if imgs:
                status["images"] = [{"names": [n], "sizeBytes": IMAGES[n] * MiB} for n in imgs]
        if DECLARED in newer and draw(st.booleans()):
            # The kubelet publishes what it supports (1.35+); a node without the field
            # supports none of them.
            declared = draw(st.lists(st.sampled_from(DECLARED_FEATURES), unique=True))
            status["declaredFeatures"] = sorted(declared)
            features.add(DECLARED)
        meta = {"name": name, "labels": labels}
        out.append(
            {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}
        )
    return out


@st.composite
def requests(draw: st.DrawFn, features: set[str], allow_gpu: bool) -> dict[str, str]:
    req: dict[str, str] = {}
    cpu = draw(st.sampled_from([0, 100, 250, 500, 1000, 2000]))
    if cpu:
        req["cpu"] = _qty(cpu)
    mem = draw(st.sampled_from([0, 128, 512, 1024, 3072]))
    if mem:
        req["memory"] = f"{mem}Mi"
    if allow_gpu and draw(st.integers(0, 5)) == 0:
        req[GPU] = "1"
        features.add("extended-resources")
    return req


def _selector(app: str) -> dict[str, Any]:
    return {"matchLabels": {"app": app}}


@st.composite
def node_affinity(draw: st.DrawFn, features: set[str], node_count: int) -> dict[str, Any]:
    def expr() -> dict[str, Any]:
        op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
        features.add(f"node-affinity-{op}")
        if op in ("Gt", "Lt"):
            return {"key": "gen", "operator": op, "values": [str(draw(st.integers(1, 5)))]}
        key = draw(st.sampled_from([ZONE, "disktype"]))
        if op in ("Exists", "DoesNotExist"):
            return {"key": key, "operator": op}
        pool = ZONES if key == ZONE else ["ssd", "hdd"]
        return {
            "key": key,
            "operator": op,
            "values": draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True)),
        }

    out: dict[str, Any] = {}
    if draw(st.booleans()):
        terms = []
        for _ in range(draw(st.integers(1, 2))):
            term: dict[str, Any] = {
                "matchExpressions": [expr() for _ in range(draw(st.integers(1, 2)))]
            }
            if draw(st.integers(0, 5)) == 0:
                features.add("node-affinity-matchFields")
                names = [f"node-{draw(st.integers(0, node_count - 1))}"]
                term["matchFields"] = [{"key": "metadata.name", "operator": "In", "values": names}]
            terms.append(term)
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if draw(st.booleans()):
        features.add("node-affinity-preferred")
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": draw(st.integers(1, 100)), "preference": {"matchExpressions": [expr()]}}
            for _ in range(draw(st.integers(1, 2)))
        ]
    return out


@st.composite
def pod_affinity_terms(draw: st.DrawFn, features: set[str], kind: str) -> dict[str, Any]:
    def term() -> dict[str, Any]:
        key = draw(st.sampled_from([HOST, ZONE]))
        features.add(f"{kind}-{'hostname' if key == HOST else 'zone'}")
        t: dict[str, Any] = {
            "labelSelector": _selector(draw(st.sampled_from(APPS))),
            "topologyKey": key,
        }
        if draw(st.integers(0, 4)) == 0:
            features.add("affinity-namespaceSelector")
            t["namespaceSelector"] = {}
        return t

    out: dict[str, Any] = {}
    if draw(st.booleans()):
        features.add(f"{kind}-required")
        out["requiredDuringSchedulingIgnoredDuringExecution"] = [term()]
    if draw(st.booleans()):
        features.add(f"{kind}-preferred")
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": draw(st.integers(1, 100)), "podAffinityTerm": term()}
        ]
    return out


@st.composite
def spread(draw: st.DrawFn, features: set[str], app: str) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(1, 2))):
        key = draw(st.sampled_from([HOST, ZONE]))
        when = draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]))
        c: dict[str, Any] = {
            "maxSkew": draw(st.integers(1, 2)),
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": _selector(app),
        }
        features.add(f"spread-{when}")
        if when == "DoNotSchedule" and draw(st.integers(0, 2)) == 0:
            c["minDomains"] = draw(st.integers(1, 4))
            features.add("spread-minDomains")
        if draw(st.integers(0, 3)) == 0:
            c["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
            features.add("spread-nodeAffinityPolicy")
        if draw(st.integers(0, 3)) == 0:
            c["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
            features.add("spread-nodeTaintsPolicy")
        if draw(st.integers(0, 3)) == 0:
            c["matchLabelKeys"] = ["pod-template-hash"]
            features.add("spread-matchLabelKeys")
        # The API server rejects two constraints with the same topologyKey and
        # whenUnsatisfiable (pkg/apis/core/validation: validateTopologySpreadConstraints).
        if all((o["topologyKey"], o["whenUnsatisfiable"]) != (key, when) for o in out):
            out.append(c)
    return out


def _toleration(
    key: str, value: str, effect: str, equal: bool, with_effect: bool
) -> dict[str, Any]:
    t: dict[str, Any] = {"key": key}
    if equal and value:
        t.update(operator="Equal", value=value)
    else:
        t["operator"] = "Exists"
    if with_effect:
        t["effect"] = effect
    return t


@st.composite
def pod(
    draw: st.DrawFn,
    index: int,
    features: set[str],
    node_count: int,
    bound_to: str | None,
    volumes: list[str],
    profiles: list[str],
    large: bool,
    newer: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    app = draw(st.sampled_from(APPS))
    name = f"pod-{index}" if bound_to is None else f"run-{index}"
    namespace = "default" if draw(st.integers(0, 4)) else "team-b"
    labels = {"app": app, "pod-template-hash": draw(st.sampled_from(["h1", "h2"]))}
    allow_gpu = True
    container: dict[str, Any] = {"name": "main", "image": draw(st.sampled_from(sorted(IMAGES)))}
    req = draw(requests(features, allow_gpu))
    if req:
        container["resources"] = {"requests": req}
    spec: dict[str, Any] = {"containers": [container]}
    if draw(st.integers(0, 5)) == 0:
        spec["containers"].append(
            {
                "name": "side",
                "image": "img/tool:1",
                "resources": {"requests": draw(requests(features, False))},
            }
        )
    if draw(st.integers(0, 5)) == 0:
        init: dict[str, Any] = {
            "name": "init",
            "image": "img/tool:1",
            "resources": {"requests": draw(requests(features, False))},
        }
        if draw(st.booleans()):
            init["restartPolicy"] = "Always"
            features.add("sidecar-containers")
            if SIDECAR_PORTS in newer and draw(st.booleans()):
                # Since 1.34 NodePorts counts a sidecar's host ports (util.GetHostPorts).
                port = draw(st.sampled_from([8080, 9090]))
                init["ports"] = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
                features.add(SIDECAR_PORTS)
        else:
            features.add("init-containers")
        spec["initContainers"] = [init]
    if draw(st.integers(0, 7)) == 0:
        spec["overhead"] = {"cpu": "100m", "memory": "64Mi"}
        features.add("overhead")
    if draw(st.integers(0, 6)) == 0:
        port = draw(st.sampled_from([8080, 9090]))
        container["ports"] = [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]
        features.add("host-ports")
    if newer:
        _newer_pod_fields(draw, spec, features, newer)
    if bound_to is not None:
        spec["nodeName"] = bound_to
    # Bound pods mostly low, pending ones often higher: preemption gets exercised.
    choices = [None, "low", "low", "mid"] if bound_to else [None, None, "low", "mid", "high"]
    prio = draw(st.sampled_from(choices))
    if prio is not None:
        spec["priorityClassName"] = prio
        features.add("priority")
    if volumes and draw(st.integers(0, 4)) == 0:
        spec["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": draw(st.sampled_from(volumes))}}
        ]
        features.add("volumes")
    if bound_to is None and not large:
        if draw(st.integers(0, 5)) == 0:
            spec["nodeSelector"] = {"disktype": draw(st.sampled_from(["ssd", "hdd"]))}
            features.add("node-selector")
        if draw(st.integers(0, 3)) == 0:
            spec.setdefault("affinity", {})["nodeAffinity"] = draw(
                node_affinity(features, node_count)
            )
        if draw(st.integers(0, 3)) == 0:
            spec["tolerations"] = [
                _toleration(k, v, e, draw(st.booleans()), draw(st.integers(0, 3)) > 0)
                for k, v, e in draw(
                    st.lists(st.sampled_from(TAINTS), min_size=1, max_size=3, unique=True)
                )
            ]
            features.add("tolerations")
        if draw(st.integers(0, 4)) == 0:
            spec["topologySpreadConstraints"] = draw(spread(features, app))
        if len(profiles) > 1 and draw(st.booleans()):
            spec["schedulerName"] = draw(st.sampled_from(profiles))
            features.add("several-profiles")
        if draw(st.integers(0, 12)) == 0:
            spec["schedulingGates"] = [{"name": "example.com/gate"}]
            features.add("scheduling-gates")
    if not large and draw(st.integers(0, 4)) == 0:
        spec.setdefault("affinity", {})["podAffinity"] = draw(
            pod_affinity_terms(features, "pod-affinity")
        )
    if not large and draw(st.integers(0, 4)) == 0:
        spec.setdefault("affinity", {})["podAntiAffinity"] = draw(
            pod_affinity_terms(features, "pod-anti-affinity")
        )
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }
    if bound_to is not None:
        # The kubelet sets it on a running pod; preemption orders victims by it
        # (pkg/scheduler/util: MoreImportantPod), and without it kube-scheduler uses
        # time.Now(), which makes the order of equal-priority victims arbitrary.
        manifest["status"] = {"phase": "Running", "startTime": f"2026-01-01T00:{index:02d}:00Z"}
    return manifest


def _milli(quantity: str) -> int:
    return int(quantity.removesuffix("m"))


def _mebi(quantity: str) -> int:
    return int(quantity.removesuffix("Mi"))


def _newer_pod_fields(
    draw: st.DrawFn, spec: dict[str, Any], features: set[str], newer: frozenset[str]
) -> None:
    """What a 1.37 pod can have that a 1.33 one cannot (or that 1.33 ignores)."""
    containers = spec["containers"] + spec.get("initContainers", [])
    if POD_LEVEL in newer and draw(st.integers(0, 2)) == 0:
        # Pod-level requests (PodLevelResources, beta and on since 1.34): at least what
        # the containers ask for (pkg/apis/core/validation: validatePodResources), often
        # the only cpu/memory the pod states.
        features.add(POD_LEVEL)
        if draw(st.booleans()):
            for c in containers:
                req = c.get("resources", {}).get("requests", {})
                req.pop("cpu", None)
                req.pop("memory", None)
        cpu = sum(
            _milli(c.get("resources", {}).get("requests", {}).get("cpu", "0m")) for c in containers
        )
        mem = sum(
            _mebi(c.get("resources", {}).get("requests", {}).get("memory", "0Mi"))
            for c in containers
        )
        cpu += draw(st.sampled_from([0, 250, 500, 1500]))
        mem += draw(st.sampled_from([0, 256, 1024]))
        if cpu or mem:
            requests: dict[str, str] = {}
            if cpu:
                requests["cpu"] = _qty(cpu)
            if mem:
                requests["memory"] = f"{mem}Mi"
            spec["resources"] = {"requests": requests}
    if DECLARED not in newer:
        pass
    elif (need := draw(st.integers(0, 9))) == 0:
        # NodeDeclaredFeatures: a rule restarting every container on an exit code.
        features.add("needs-restart-all-containers")
        main = spec["containers"][0]
        main["restartPolicy"] = "Never"
        main["restartPolicyRules"] = [
            {
                "action": "RestartAllContainers",
                "exitCodes": {"operator": "In", "values": [42]},
            }
        ]
    elif need == 1:
        # NodeDeclaredFeatures: the host's network inside a user namespace. Its host
        # ports are its container ports (NodePorts).
        features.add("needs-host-network-userns")
        spec["hostNetwork"] = True
        spec["hostUsers"] = False
    elif need == 2:
        # NodeDeclaredFeatures: bind mount options on a volume mount.
        features.add("needs-bind-mount-options")
        spec.setdefault("volumes", []).append({"name": "scratch", "emptyDir": {}})
        spec["containers"][0]["volumeMounts"] = [
            {"name": "scratch", "mountPath": "/scratch", "bindMountOptions": ["noexec"]}
        ]
    if IMAGE_VOLUMES in newer and draw(st.integers(0, 2)) == 0:
        # ImageLocality counts image volumes' images too (1.37: image_locality.go).
        features.add(IMAGE_VOLUMES)
        ref = draw(st.sampled_from(sorted(IMAGES)))
        spec.setdefault("volumes", []).append(
            {"name": "model", "image": {"reference": ref, "pullPolicy": "IfNotPresent"}}
        )


@st.composite
def storage(
    draw: st.DrawFn, node_docs: list[dict[str, Any]], features: set[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """A StorageClass, bound PV/PVC pairs (CSI, some zonal), an unbound immediate PVC,
    and CSINode attach limits."""
    if draw(st.integers(0, 2)) != 0:
        return [], []
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "standard"},
            "provisioner": DRIVER,
            "volumeBindingMode": "Immediate",
        }
    ]
    claims = []
    for i in range(draw(st.integers(1, 3))):
        mode = draw(st.sampled_from(["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"]))
        pv: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pv-{i}"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": [mode],
                "storageClassName": "standard",
                "csi": {"driver": DRIVER, "volumeHandle": f"vol-{i}"},
                "claimRef": {"namespace": "default", "name": f"pvc-{i}"},
            },
            "status": {"phase": "Bound"},
        }
        if draw(st.booleans()):
            zone = draw(st.sampled_from(ZONES))
            pv["metadata"]["labels"] = {ZONE: zone}
            pv["spec"]["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                    ]
                }
            }
            features.add("volume-zone")
        # How far the PV controller got (pv_controller.go: syncUnboundClaim): a claim
        # that names its PV is bound only when the PV exists and its claimRef is empty
        # or names the claim, whatever the claim's status says.
        binding = draw(
            st.sampled_from(["bound", "bound", "bound", "pre-bound", "missing-pv", "other-claim"])
        )
        pvc: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": f"pvc-{i}", "namespace": "default"},
            "spec": {
                "accessModes": [mode],
                "storageClassName": "standard",
                "volumeName": f"pv-{i}",
                "resources": {"requests": {"storage": "1Gi"}},
            },
            "status": {"phase": "Bound", "accessModes": [mode], "capacity": {"storage": "1Gi"}},
        }
        if binding == "pre-bound":  # written by a user: no claimRef, no status yet
            del pv["spec"]["claimRef"], pv["status"], pvc["status"]
        elif binding == "other-claim":
            pv["spec"]["claimRef"]["name"] = "someone-else"
        if binding != "bound":
            features.add(f"volume-{binding}")
        if binding != "missing-pv":
            docs.append(pv)
        docs.append(pvc)
        claims.append(f"pvc-{i}")
    if draw(st.booleans()):
        features.add("volume-unbound-immediate")
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "pvc-unbound", "namespace": "default"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "standard",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
                "status": {"phase": "Pending"},
            }
        )
        claims.append("pvc-unbound")
    if draw(st.booleans()):
        # Delayed binding (volume_binding.go: Filter's FindPodVolumes, PreBind's
        # BindPodVolumes): free PVs, some zonal, matched to claims on the chosen node; no
        # provisioner, so a claim no PV fits has none (checkVolumeProvisions).
        features.add("volume-wffc")
        docs.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "wait"},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        )
        for i in range(draw(st.integers(1, 3))):
            free: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": f"pv-wait-{i}"},
                "spec": {
                    "capacity": {"storage": draw(st.sampled_from(["1Gi", "2Gi"]))},
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "wait",
                    "csi": {"driver": DRIVER, "volumeHandle": f"vol-wait-{i}"},
                },
                "status": {"phase": "Available"},
            }
            if draw(st.booleans()):
                zone = draw(st.sampled_from(ZONES))
                free["metadata"]["labels"] = {ZONE: zone}
                free["spec"]["nodeAffinity"] = {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": ZONE, "operator": "In", "values": [zone]}
                                ]
                            }
                        ]
                    }
                }
            docs.append(free)
        for i in range(draw(st.integers(1, 3))):
            docs.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": f"pvc-wait-{i}", "namespace": "default"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "wait",
                        "resources": {
                            "requests": {"storage": draw(st.sampled_from(["1Gi", "2Gi"]))}
                        },
                    },
                    "status": {"phase": "Pending"},
                }
            )
            claims.append(f"pvc-wait-{i}")
    for n in node_docs:
        if draw(st.booleans()):
            features.add("csinode-limits")
            docs.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSINode",
                    "metadata": {"name": n["metadata"]["name"]},
                    "spec": {
                        "drivers": [
                            {
                                "name": DRIVER,
                                "nodeID": n["metadata"]["name"],
                                "allocatable": {"count": draw(st.integers(0, 2))},
                            }
                        ]
                    },
                }
            )
    return docs, claims


BATCHING = "batching"


@st.composite
def batching_config(draw: st.DrawFn, features: set[str]) -> dict[str, Any]:
    """A profile where OpportunisticBatching can act (framework/runtime/batch.go): every
    Filter and Score plugin signs the pod. PodTopologySpread does not while it has
    system-default constraints (podtopologyspread/plugin.go: SignPod), so it gets
    ``defaultingType: List`` without constraints, or is disabled; no NodeNumber (a wasm
    guest has no SignPod)."""
    features.add(BATCHING)
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if draw(st.booleans()):
        features.add("config-spread-List")
        profile["pluginConfig"] = [
            {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}
        ]
    else:
        features.add("config-spread-disabled")
        profile["plugins"] = {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}
    strategy = draw(st.sampled_from(["LeastAllocated", "MostAllocated"]))
    if strategy != "LeastAllocated":
        features.add(f"config-{strategy}")
        profile.setdefault("pluginConfig", []).append(
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}
        )
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


@st.composite
def config(draw: st.DrawFn, features: set[str], large: bool) -> dict[str, Any] | None:
    choice = draw(st.integers(0, 9))
    if choice < 4 and not large:
        return None
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    plugins: dict[str, Any] = {}
    plugin_config: list[dict[str, Any]] = []
    if draw(st.booleans()):
        features.add("config-weights")
        plugins.setdefault("multiPoint", {})["enabled"] = [
            {"name": n, "weight": draw(st.integers(1, 10))}
            for n in draw(
                st.lists(
                    st.sampled_from(
                        [
                            "NodeResourcesBalancedAllocation",
                            "ImageLocality",
                            "TaintToleration",
                            "NodeAffinity",
                            "InterPodAffinity",
                            "PodTopologySpread",
                            "NodeResourcesFit",
                        ]
                    ),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            )
        ]
    if draw(st.integers(0, 2)) == 0:
        features.add("config-disabled")
        plugins.setdefault("score", {})["disabled"] = [
            {"name": n}
            for n in draw(
                st.lists(
                    st.sampled_from(
                        [
                            "NodeResourcesBalancedAllocation",
                            "ImageLocality",
                            "NodeResourcesFit",
                            "InterPodAffinity",
                        ]
                    ),
                    min_size=1,
                    max_size=2,
                    unique=True,
                )
            )
        ]
    strategy = draw(
        st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
    )
    if strategy != "LeastAllocated":
        features.add(f"config-{strategy}")
        s: dict[str, Any] = {
            "type": strategy,
            "resources": [
                {"name": "cpu", "weight": draw(st.integers(1, 3))},
                {"name": "memory", "weight": 1},
            ],
        }
        if strategy == "RequestedToCapacityRatio":
            s["requestedToCapacityRatio"] = {
                "shape": [
                    {"utilization": 0, "score": draw(st.sampled_from([0, 10]))},
                    {"utilization": 100, "score": draw(st.sampled_from([0, 5, 10]))},
                ]
            }
        plugin_config.append({"name": "NodeResourcesFit", "args": {"scoringStrategy": s}})
    if draw(st.integers(0, 4)) == 0:
        features.add("config-hardPodAffinityWeight")
        plugin_config.append(
            {
                "name": "InterPodAffinity",
                "args": {"hardPodAffinityWeight": draw(st.integers(0, 100))},
            }
        )
    if NODENUMBER_WASM.exists() and draw(st.integers(0, 4)) == 0:
        features.add("wasm-nodenumber")
        plugins.setdefault("multiPoint", {}).setdefault("enabled", []).append(
            {"name": "NodeNumber", "weight": draw(st.integers(1, 10))}
        )
        args: dict[str, Any] = {"guestURL": Path(NODENUMBER_WASM).as_uri()}
        if draw(st.booleans()):
            args["guestConfig"] = '{"reverse": true}'
        plugin_config.append({"name": "NodeNumber", "args": args})
    if plugins:
        profile["plugins"] = plugins
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    cfg: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }
    if large:
        cfg["percentageOfNodesToScore"] = draw(st.sampled_from([10, 30, 50]))
        features.add("percentageOfNodesToScore")
    if draw(st.integers(0, 3)) == 0:
        features.add("several-profiles")
        second: dict[str, Any] = {
            "schedulerName": SECOND_PROFILE,
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ],
        }
        cfg["profiles"].append(second)
    return cfg


@st.composite
def cases(draw: st.DrawFn, version: KubernetesVersion | None = None) -> Case:
    features: set[str] = set()
    new = version is not None and version >= V137
    large = draw(st.integers(0, 15)) == 0
    node_count = draw(st.integers(101, 120)) if large else draw(st.integers(1, 6))
    if large:
        features.add("large-cluster")
    # Each of 1.37's inputs in about a third of the cases, so that a disagreement
    # points at fewer of them.
    newer = (
        frozenset(n for n in NEWER_INPUTS if draw(st.integers(0, 2)) == 0) if new else frozenset()
    )
    batch = new and not large and draw(st.integers(0, 3)) == 0
    cfg = draw(batching_config(features)) if batch else draw(config(features, large))
    profiles = [p["schedulerName"] for p in (cfg or {}).get("profiles", [])] or [
        "default-scheduler"
    ]
    node_docs = draw(nodes(node_count, features, newer))
    storage_docs, claims = draw(storage(node_docs, features))
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "team-b", "labels": {"team": "b"}},
        },
    ]
    default_class = draw(st.sampled_from([None, "low"]))
    for name, value in PRIORITY_CLASSES.items():
        pc: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        if name == default_class:
            pc["globalDefault"] = True
            features.add("priority-globalDefault")
        if name == "high" and draw(st.integers(0, 4)) == 0:
            pc["preemptionPolicy"] = "Never"
            features.add("preemption-never")
        docs.append(pc)
    docs += node_docs + storage_docs
    bound = draw(st.integers(0, min(8, 3 * node_count)))
    pending = draw(st.integers(1, 20 if large else 10))
    for i in range(bound):
        target = f"node-{draw(st.integers(0, node_count - 1))}"
        docs.append(draw(pod(i, features, node_count, target, claims, profiles, large, newer)))
    for i in range(pending):
        docs.append(
            draw(pod(bound + i, features, node_count, None, claims, profiles, large, newer))
        )
    if batch:
        # A run of identical pods (a ReplicaSet's): each after the first can take the
        # previous one's next-best node without a full cycle (batch.go: GetNodeHint).
        template = draw(pod(bound + pending, features, node_count, None, [], profiles, True, newer))
        for i in range(draw(st.integers(2, 8))):
            copy = json.loads(json.dumps(template))
            copy["metadata"]["name"] = f"replica-{i}"
            docs.append(copy)
    if bound and draw(st.integers(0, 2)) == 0:
        features.add("pdb")
        allowed = draw(st.integers(0, 1))
        docs.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": _selector(draw(st.sampled_from(APPS)))},
                "status": {
                    "disruptionsAllowed": allowed,
                    "currentHealthy": 1,
                    "desiredHealthy": 1,
                    "expectedPods": 1,
                },
            }
        )
    return Case("", docs, cfg, features)
