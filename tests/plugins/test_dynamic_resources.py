"""DynamicResources (v1.37.2 dynamicresources.go) for pods without claims, and its place in
the default profile from 1.34: PreFilter writes its state, PostFilter reads it first.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import FakeHandle, make_node, make_pod, make_snapshot

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.framework import interfaces as fw
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import NodeScore, NodeToStatus
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.dynamic_resources import ERR_NOT_FOUND, STATE_KEY, DynamicResources
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

V133 = SchedulerFeatures.of(KubernetesVersion(1, 33))
V134 = SchedulerFeatures.of(KubernetesVersion(1, 34))
V137 = SchedulerFeatures.of(KubernetesVersion(1, 37))


def plugin(features: SchedulerFeatures = V137, objects: dict[str, list[Any]] | None = None) -> Any:
    handle = FakeHandle()
    handle.features = features
    kinds = objects or {}
    handle.objects = lambda kind: kinds.get(kind, [])  # type: ignore[method-assign]
    return DynamicResources(handle)


def test_pre_filter_writes_state_and_skips_a_pod_without_claims() -> None:
    pl = plugin()
    state = CycleState()
    result, status = pl.pre_filter(state, make_pod(), [])
    assert result is None
    assert status == Status(Code.SKIP)
    assert STATE_KEY in state


def test_post_filter_without_its_state_is_the_error_not_found() -> None:
    pl = plugin()
    _, status = pl.post_filter(CycleState(), make_pod(), NodeToStatus())
    assert status == Status(Code.ERROR, ERR_NOT_FOUND)


def test_post_filter_after_pre_filter_is_unschedulable_for_the_next_plugin() -> None:
    pl = plugin()
    state = CycleState()
    pl.pre_filter(state, make_pod(), [])
    _, status = pl.post_filter(state, make_pod(), NodeToStatus())
    assert status == Status(Code.UNSCHEDULABLE)


def test_score_is_zero_without_claims() -> None:
    pl = plugin()
    snapshot = make_snapshot([make_node("a"), make_node("b")])
    pod = make_pod()
    state = CycleState()
    pl.pre_filter(state, pod, snapshot.list())
    scores = [pl.score(state, pod, ni) for ni in snapshot]
    assert scores == [(0, None), (0, None)]
    scored = [NodeScore("a", 0), NodeScore("b", 0)]
    assert pl.score_extensions().normalize_score(state, pod, scored) is None
    assert [s.score for s in scored] == [0, 0]


def test_disabled_without_the_gate() -> None:
    pl = plugin(V133)
    state = CycleState()
    assert pl.pre_filter(state, make_pod(), []) == (None, Status(Code.SKIP))
    assert STATE_KEY not in state
    assert pl.post_filter(state, make_pod(), NodeToStatus()) == (None, Status(Code.UNSCHEDULABLE))
    assert pl.events_to_register() == []


@pytest.mark.parametrize(("features", "scores"), [(V134, False), (V137, True)])
def test_score_extension_from_1_35(features: SchedulerFeatures, scores: bool) -> None:
    assert fw.implements(plugin(features), fw.SCORE) is scores


def _claim_pod(entries: list[dict[str, str]], statuses: list[dict[str, str]] | None = None) -> Pod:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "pod-uid"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "resourceClaims": entries},
    }
    if statuses is not None:
        manifest["status"] = {"resourceClaimStatuses": statuses}
    return Pod(manifest)


@pytest.mark.parametrize(
    ("entries", "statuses", "message"),
    [
        (
            [{"name": "gpu", "resourceClaimName": "c1"}],
            None,
            'could not find ResourceClaim "default/c1"',
        ),
        (
            [{"name": "gpu", "resourceClaimTemplateName": "t"}],
            None,
            'pod "default/p": ResourceClaim not created yet',
        ),
        (
            [{"name": "gpu"}],
            None,
            'pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set',
        ),
        (
            [{"name": "gpu", "resourceClaimTemplateName": "t"}],
            [{"name": "gpu", "resourceClaimName": "p-gpu-x"}],
            "ResourceClaim default/p-gpu-x was not created for Pod default/p (Pod is not owner)",
        ),
    ],
)
def test_pre_enqueue_waits_for_the_pods_claims(
    entries: list[dict[str, str]], statuses: list[dict[str, str]] | None, message: str
) -> None:
    other = {"metadata": {"name": "p-gpu-x", "namespace": "default", "uid": "u"}}
    pl = plugin(objects={"ResourceClaim": [other]})
    status = pl.pre_enqueue(_claim_pod(entries, statuses))
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def test_pre_enqueue_passes_a_template_claim_the_controller_decided_not_to_make() -> None:
    pod = _claim_pod([{"name": "gpu", "resourceClaimTemplateName": "t"}], [{"name": "gpu"}])
    assert plugin().pre_enqueue(pod) is None


# --- in the default profile --------------------------------------------------------------


def _node(name: str) -> Node:
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )


def _pod(name: str, cpu: str, claim: str = "") -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]
    }
    if claim:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def _messages(features: SchedulerFeatures) -> dict[str, tuple[str, str | None, str]]:
    from wasmsched.sim.simulation import Simulation

    cluster = ClusterObjects(
        nodes=[_node("n1"), _node("n2")],
        pods=[_pod("web", "1", claim="x"), _pod("ok", "1")],
        others=[],
    )
    sim = Simulation(cluster, default_config(features), in_tree_registry())
    try:
        result = sim.run()
    finally:
        sim.close()
    return {o.pod.name: (o.result, o.node, o.message) for o in result.outcomes}


def test_a_pod_rejected_before_dynamic_resources_pre_filter_ends_with_not_found() -> None:
    """docs/dev/kube-1.37-changes.md, DynamicResources: VolumeBinding's PreFilter rejects the
    pod (UnschedulableAndUnresolvable), DynamicResources' PreFilter never runs, its PostFilter
    fails "not found" and preemption is not tried. The messages are the reference's
    (.cache/reference/wasmsched-reference-1.37 and wasmsched-reference on this cluster)."""
    got = _messages(V137)
    assert got["web"] == (
        "Unschedulable",
        None,
        '0/2 nodes are available: persistentvolumeclaim "x" not found. not found',
    )
    assert got["ok"] == ("Scheduled", "n1", "")
    assert _messages(V133)["web"][2] == (
        '0/2 nodes are available: persistentvolumeclaim "x" not found. '
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


# --- with claims, in a simulation ----------------------------------------------------------

DRA_CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: a100}}}
  - {name: gpu-1, attributes: {model: {string: a100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpu}
spec:
  driver: gpu.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: h100}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: prio, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - name: h100
          deviceClassName: gpu
          selectors:
          - cel: {expression: 'device.attributes["gpu.example.com"].model == "h100"'}
        - {name: any, deviceClassName: gpu}
"""


def _dra_pod(name: str, template: str) -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers: [{{name: c, image: i, resources: {{requests: {{cpu: "1"}}}}}}]
  resourceClaims:
  - {{name: gpu, resourceClaimTemplateName: {template}}}
"""


def _simulate(
    tmp_path: Any, text: str, after: Any = None
) -> tuple[dict[str, tuple[str, str | None, str]], Any]:
    from wasmsched.api.manifests import load_manifests
    from wasmsched.sim.simulation import Simulation

    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    cluster = load_manifests(path, kubernetes_version=KubernetesVersion(1, 37))
    sim = Simulation(cluster, default_config(V137), in_tree_registry())
    try:
        result = sim.run()
        if after is not None:
            after(sim)
    finally:
        sim.close()
    return {o.pod.name: (o.result, o.node, o.message) for o in result.outcomes}, sim.store


def test_claims_from_templates_are_allocated_and_held(tmp_path: Any) -> None:
    pods = "".join(_dra_pod(f"p{i}", "prio" if i == 1 else "one-gpu") for i in range(1, 6))
    got, store = _simulate(tmp_path, DRA_CLUSTER + pods)
    # p1's prioritized list scores n2 (its first choice, h100) higher; the others share
    # the two devices left on n1; nothing is left for p4 and p5.
    assert {k: v[:2] for k, v in got.items()} == {
        "p1": ("Scheduled", "n2"),
        "p2": ("Scheduled", "n1"),
        "p3": ("Scheduled", "n1"),
        "p4": ("Unschedulable", None),
        "p5": ("Unschedulable", None),
    }
    assert got["p4"][2] == (
        "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling."
    )
    claims = store.resource_claims
    assert len(claims) == 5
    by_pod = {c["metadata"]["ownerReferences"][0]["name"]: c for c in claims.values()}
    p1 = by_pod["p1"]
    assert p1["metadata"]["name"].startswith("p1-gpu-")
    assert p1["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert p1["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    result = p1["status"]["allocation"]["devices"]["results"]
    assert result == [
        {"request": "gpu/h100", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-0"}
    ]
    assert p1["status"]["reservedFor"] == [
        {"resource": "pods", "name": "p1", "uid": store.uid_of("default/p1")}
    ]
    devices = sorted(
        by_pod[p]["status"]["allocation"]["devices"]["results"][0]["device"] for p in ("p2", "p3")
    )
    assert devices == ["gpu-0", "gpu-1"]
    assert "allocation" not in by_pod["p4"].get("status", {})


def test_a_missing_device_class_makes_the_pod_wait(tmp_path: Any) -> None:
    text = DRA_CLUSTER.replace("deviceClassName: gpu}\n---", "deviceClassName: nope}\n---", 1)
    got, _ = _simulate(tmp_path, text + _dra_pod("p", "one-gpu"))
    assert got["p"][:2] == ("Unschedulable", None)
    # DynamicResources' own PreFilter rejected the pod: its state is there, without
    # claims, so PostFilter passes on to DefaultPreemption.
    assert got["p"][2] == (
        "0/2 nodes are available: request gpu: device class nope does not exist. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_post_filter_deallocates_a_claim_allocated_where_the_pod_cannot_go(
    tmp_path: Any,
) -> None:
    """The claim is allocated on n1 (by nobody now); the pod must run on n2. Filter finds the
    claim unavailable on n2, PostFilter deallocates it, and the claim's update requeues the
    pod, which then gets n2's device."""
    claim = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default, uid: claim-uid}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [n1]}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  nodeSelector: {kubernetes.io/hostname: n2}
  containers: [{name: c, image: i}]
  resourceClaims:
  - {name: gpu, resourceClaimName: shared}
"""
    got, store = _simulate(tmp_path, DRA_CLUSTER + claim)
    assert got["p"][:2] == ("Scheduled", "n2")
    written = store.resource_claims["default/shared"]
    assert written["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-0"}
    ]


def test_a_finished_pod_frees_its_claims(tmp_path: Any) -> None:
    """The resourceclaim controller: a pod gone leaves reservedFor; its own claim (from a
    template) is deleted; a shared claim without consumers is deallocated."""
    shared = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: default}
spec:
  containers: [{name: c, image: i}]
  resourceClaims:
  - {name: gpu, resourceClaimName: shared}
"""
    seen: dict[str, Any] = {}

    def finish(sim: Any) -> None:
        store = sim.store
        seen["before"] = dict(store.resource_claims)
        for name in ("p1", "q"):
            store.remove_pod(store.uid_of(f"default/{name}"))

    got, store = _simulate(tmp_path, DRA_CLUSTER + _dra_pod("p1", "one-gpu") + shared, finish)
    assert got["p1"][0] == got["q"][0] == "Scheduled"
    before = seen["before"]
    assert len(before) == 2
    assert before["default/shared"]["status"]["allocation"]
    assert list(store.resource_claims) == ["default/shared"]
    freed = store.resource_claims["default/shared"]
    assert freed["status"] == {}
    assert "finalizers" not in freed["metadata"]


def test_claims_without_uids_are_held_apart_while_in_flight() -> None:
    """Reserve holds pod a's allocation in flight; pod b's own claim (also written without a
    uid) is not taken for a's, and b gets the other device."""
    import yaml
    from conftest import make_node_info

    docs = list(yaml.safe_load_all(DRA_CLUSTER))
    claims = [
        {
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu",
                                "allocationMode": "ExactCount",
                                "count": 1,
                            },
                        }
                    ]
                }
            },
        }
        for name in ("ca", "cb")
    ]
    objects = {
        "DeviceClass": [d for d in docs if d["kind"] == "DeviceClass"],
        "ResourceSlice": [d for d in docs if d["kind"] == "ResourceSlice"],
        "ResourceClaim": claims,
    }
    pl = plugin(objects=objects)
    n1 = make_node_info(Node(next(d for d in docs if d["metadata"]["name"] == "n1")))
    chosen = []
    for pod_name, claim in (("a", "ca"), ("b", "cb")):
        pod = Pod(
            {
                "kind": "Pod",
                "metadata": {"name": pod_name, "namespace": "default", "uid": f"uid-{pod_name}"},
                "spec": {
                    "containers": [{"name": "c", "image": "i"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
                },
            }
        )
        state = CycleState()
        assert pl.pre_filter(state, pod, [n1]) == (None, None)
        assert pl.filter(state, pod, n1) is None
        assert pl.reserve(state, pod, "n1") is None
        allocation = state.read(STATE_KEY).claims[0].allocation
        chosen.append(allocation["devices"]["results"][0]["device"])
    assert chosen == ["gpu-0", "gpu-1"]


def test_pre_filter_makes_the_classes_once_per_list_of_classes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PreFilter reads the classes by name and as JSON for every pod with a claim to
    allocate: they are made again only when the handle hands out a new list."""
    import json

    import yaml
    from conftest import make_node_info

    import wasmsched.plugins.dynamic_resources.claims as claims_module

    docs = list(yaml.safe_load_all(DRA_CLUSTER))
    class_list = [d for d in docs if d["kind"] == "DeviceClass"]
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"name": "ca", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }
    objects = {
        "DeviceClass": class_list,
        "ResourceSlice": [d for d in docs if d["kind"] == "ResourceSlice"],
        "ResourceClaim": [claim],
    }
    dumped: list[Any] = []
    real_dumps = json.dumps

    def dumps(obj: Any, **kw: Any) -> str:
        dumped.append(obj)
        return real_dumps(obj, **kw)

    monkeypatch.setattr(claims_module.json, "dumps", dumps)
    pl = plugin(objects=objects)
    n1 = make_node_info(Node(next(d for d in docs if d["metadata"]["name"] == "n1")))
    seen = []
    for name in ("a", "b", "c"):
        pod = Pod(
            {
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                "spec": {
                    "containers": [{"name": "c", "image": "i"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "ca"}],
                },
            }
        )
        if name == "c":
            objects["DeviceClass"] = list(class_list)  # a new list: made again
        state = CycleState()
        assert pl.pre_filter(state, pod, [n1]) == (None, None)
        s = state.read(STATE_KEY)
        seen.append((s.allocator.classes, s.inputs[1]))
    assert seen[0][0] is seen[1][0] and seen[0][1] is seen[1][1]
    assert seen[2][0] is not seen[1][0] and seen[2][0] == seen[1][0]
    assert sum(1 for obj in dumped if obj == class_list) == 2
