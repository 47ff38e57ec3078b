"""scheduler_perf's DRA shape (v1.37.2,
test/integration/scheduler_perf/dra/performance-config.yaml: SchedulingWithResourceClaimTemplate,
and the templates it names): nodes with the DRA test driver, one ResourceSlice of basic
devices per node, the class ``test-class``, and pods whose one claim comes from the
ResourceClaimTemplate ``test-claim-template``.

Sizes: 8 devices per node (upstream: 10) and 5 pods per node, at most 5000 (1000 nodes:
8000 devices, 5000 pods); no init claims (upstream's 5000pods_500nodes allocates half the
devices up front). Every pod fits.

The claims are made up front, as the resourceclaim controller makes them before the
scheduler sees the pods (wasmsched.api.dra.claims_from_templates: names, owner references,
annotations, and the pod's ``status.resourceClaimStatuses``): the reference runs no
controller, and both schedulers get the same objects. The request is written out with the
API server's defaults (``allocationMode: ExactCount``, ``count: 1``), which the reference
does not apply.
"""

from __future__ import annotations

from typing import Any

from bench_support import container, namespace, node_manifest
from perf_workloads import Workload

from wasmsched.api.dra import claims_from_templates
from wasmsched.api.objects import Node, Pod

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
TEMPLATE = "test-claim-template"
NAMESPACE = "test"
DEVICES_PER_NODE = 8
PCI_ROOTS = 2
PODS_PER_NODE = 5
MAX_PODS = 5000
# The release whose reference can run the shape: resource.k8s.io/v1 is served from 1.34,
# and the 1.33 reference's scheme does not decode it.
RELEASE = "1.37"


def _node(i: int) -> Node:
    """node-with-dra-test-driver.yaml (node_manifest adds the hostname label)."""
    return Node(node_manifest(f"scheduler-perf-dra-{i}", {"node-with-dra": "true"}))


def _device(d: int) -> dict[str, Any]:
    """resourceslice-basic-devices.yaml's device ``d``: an Intel GPU's attributes."""
    root = d % PCI_ROOTS
    return {
        "name": f"basic-device-{d}",
        "attributes": {
            "driver": {"string": "xe"},
            "driverVersion": {"version": "1.2.3"},
            "resource.k8s.io/pciRoot": {"string": str(root)},
            "family": {"string": "Arc Pro B-Series"},
            "health": {"string": "Healthy"},
            "model": {"string": "B60"},
            "pciAddress": {"string": f"0000:0{d}:00.0"},
            "pciId": {"string": "0xe211"},
            "pciRoot": {"string": f"0{root}"},
            "resource.kubernetes.io/pciBusID": {"string": f"0000:0{d}:00.0"},
            "resource.kubernetes.io/pciRoot": {"string": f"pci0000:0{root}"},
            "sriov": {"bool": True},
            "type": {"string": "gpu"},
        },
        "capacity": {"memory": {"value": "24480Mi"}, "millicores": {"value": "1k"}},
    }


def _slice(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"resourceslice-{i}"},
        "spec": {
            "pool": {"name": f"resourceslice-{i}", "generation": 1, "resourceSliceCount": 1},
            "driver": DRIVER,
            "nodeName": f"scheduler-perf-dra-{i}",
            "devices": [_device(d) for d in range(DEVICES_PER_NODE)],
        },
    }


DEVICE_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": CLASS},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
}

CLAIM_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": TEMPLATE, "namespace": NAMESPACE},
    "spec": {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "req-0",
                        "exactly": {
                            "deviceClassName": CLASS,
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                    }
                ]
            }
        }
    },
}


def _pod(i: int) -> Pod:
    """pod-with-claim-template.yaml (generateName test-dra; named here)."""
    name = f"test-dra-{i}"
    pause = container(image="registry.k8s.io/pause:3.10.1")
    pause["resources"] = {"claims": [{"name": "resource"}]}
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": NAMESPACE,
                # A uid written out: the claim's owner reference must name the pod's uid
                # on the reference's side too.
                "uid": f"00000000-0000-4000-8000-{i:012d}",
            },
            "spec": {
                "containers": [pause],
                "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": TEMPLATE}],
            },
        }
    )


def scheduling_with_resource_claim_template(n: int) -> Workload:
    """n DRA nodes with 8 devices each; min(5n, 5000) pods, one claim each from the
    template."""
    templates = {f"{NAMESPACE}/{TEMPLATE}": CLAIM_TEMPLATE}
    pending: list[Pod] = []
    claims: list[dict[str, Any]] = []
    for i in range(min(PODS_PER_NODE * n, MAX_PODS)):
        pod, made = claims_from_templates(_pod(i), templates)
        pending.append(pod)
        claims.extend(made)
    return Workload(
        "SchedulingWithResourceClaimTemplate",
        [_node(i) for i in range(n)],
        [],
        pending,
        [p.key for p in pending],
        others=[
            namespace(NAMESPACE),
            DEVICE_CLASS,
            CLAIM_TEMPLATE,
            *(_slice(i) for i in range(n)),
            *claims,
        ],
        release=RELEASE,
        note=f"{DEVICES_PER_NODE} devices per node (upstream 10), no init claims; claims made "
        "up front as the resourceclaim controller makes them",
    )
