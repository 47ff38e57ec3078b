"""DRA objects (resource.k8s.io/v1) in manifests: loaded at 1.34 and later, defaulted and
validated as the API server of v1.37.2 does (pkg/apis/resource/v1/defaults.go,
pkg/apis/resource/validation), and the pod's spec.resourceClaims / resourceClaimStatuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from wasmsched.api.dra import with_dra_defaults
from wasmsched.api.manifests import ManifestError, load_manifests
from wasmsched.release.version import KubernetesVersion

V133 = KubernetesVersion(1, 33)
V137 = KubernetesVersion(1, 37)

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
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
  - name: gpu-0
    attributes:
      model: {string: a100}
      gpu.example.com/index: {int: 0}
    capacity:
      memory: {value: 80Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          tolerations: [{key: k}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: all}
spec:
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - {name: big, deviceClassName: gpu.example.com, allocationMode: All}
      - {name: small, deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  containers: [{name: c, image: i}]
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
  - {name: other, resourceClaimName: all}
status:
  resourceClaimStatuses: [{name: gpu, resourceClaimName: p1-gpu-abcde}]
"""


def load(tmp_path: Path, text: str, version: KubernetesVersion = V137) -> object:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return load_manifests(path, kubernetes_version=version)


def problems(tmp_path: Path, text: str, version: KubernetesVersion = V137) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load(tmp_path, text, version)
    return [line.split(": ", 3)[3] for line in info.value.problems]


def test_dra_objects_load_defaulted(tmp_path: Path) -> None:
    cluster = load(tmp_path, CLUSTER)
    kinds = [o["kind"] for o in cluster.others]  # type: ignore[attr-defined]
    assert kinds == ["DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim"]
    template = cluster.others[2]  # type: ignore[attr-defined]
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["allocationMode"] == "ExactCount"
    assert exactly["count"] == 1
    assert exactly["tolerations"] == [{"key": "k", "operator": "Equal"}]
    subs = cluster.others[3]["spec"]["devices"]["requests"][0]["firstAvailable"]  # type: ignore[attr-defined]
    assert [(s["allocationMode"], s.get("count")) for s in subs] == [
        ("All", None),
        ("ExactCount", 1),
    ]
    pod = cluster.pods[0]  # type: ignore[attr-defined]
    assert [(c.name, c.claim_name, c.template_name) for c in pod.resource_claims] == [
        ("gpu", None, "one-gpu"),
        ("other", "all", None),
    ]
    assert pod.resource_claim_statuses == {"gpu": "p1-gpu-abcde"}


def test_defaults_do_not_touch_the_input() -> None:
    claim = {
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}
    }
    out = with_dra_defaults("ResourceClaim", claim)
    assert "count" not in claim["spec"]["devices"]["requests"][0]["exactly"]
    assert out["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1


def test_resource_v1_is_not_served_by_1_33(tmp_path: Path) -> None:
    got = problems(tmp_path, CLUSTER, V133)
    assert got[0] == (
        "apiVersion: DeviceClass (resource.k8s.io/v1) is not served by Kubernetes 1.33 "
        "(Kubernetes 1.34 and later serve it)"
    )
    assert len(got) == 4


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            """kind: ResourceSlice
metadata: {name: s}
spec:
  driver: Bad_Driver
  nodeName: n1
  allNodes: true
  pool: {name: n1, generation: 1, resourceSliceCount: 0}
  devices:
  - name: gpu-0
    attributes: {model: {string: a100, int: 3}}
""",
            [
                'spec.driver: Invalid value: "Bad_Driver": a lowercase RFC 1123 subdomain must '
                "consist of lower case alphanumeric characters, '-' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'example.com')",
                "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
                'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, '
                "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple "
                "fields are set",
                'spec.devices[0].attributes[model]: Invalid value: {"int": 3, "string": "a100"}: '
                "exactly one value must be specified",
            ],
        ),
        (
            """kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
        allocationMode: All
        count: 2
    - name: gpu
      exactly: {deviceClassName: x}
    constraints:
    - requests: [nope]
      matchAttribute: gpu.example.com/index
""",
            [
                "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be "
                "specified when allocationMode is 'All'",
                'spec.devices.requests[1].name: Duplicate value: "gpu"',
                'spec.devices.constraints[0].requests[0]: Invalid value: "nope": must be the '
                "name of a request in the claim or the name of a request and a subrequest "
                "separated by '/'",
            ],
        ),
        (
            """kind: DeviceClass
metadata: {name: c}
spec:
  selectors: [{cel: {expression: 'device.driver == 1 +'}}]
""",
            ["spec.selectors[0].cel.expression: Invalid value"],
        ),
        (
            """kind: Pod
metadata: {name: p1}
spec:
  containers: [{name: c, image: i}]
  resourceClaims:
  - name: gpu
  - {name: gpu, resourceClaimName: a}
""",
            [
                'spec.resourceClaims[0]: Invalid value: {"name": "gpu"}: must specify one of: '
                "`resourceClaimName`, `resourceClaimTemplateName`",
                'spec.resourceClaims[1].name: Duplicate value: "gpu"',
            ],
        ),
    ],
)
def test_validation(tmp_path: Path, doc: str, expected: list[str]) -> None:
    header = "" if doc.startswith("kind: Pod") else "apiVersion: resource.k8s.io/v1\n"
    got = problems(tmp_path, NODE + header + doc)
    assert len(got) == len(expected), got
    for line, want in zip(got, expected, strict=True):
        assert line.startswith(want), (line, want)
