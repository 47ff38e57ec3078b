"""Random DRA clusters for the differential suite (``cases_dra``, hypothesis strategies).

A drawn case has three drivers and five device classes; per-node ResourceSlices (plain,
partitionable: devices consuming a counter set published in a second slice of the pool,
or with consumable capacity: devices allowing several allocations, with a request
policy) and shared ones (a ``nodeSelector`` slice and an ``allNodes`` slice); devices with
typed attributes (string, int, bool, version) and a capacity; device taints of every
effect and DeviceTaintRules; ResourceClaims, direct or made from a ResourceClaimTemplate,
with CEL selectors over those attributes (``semver``, ``quantity``), ``firstAvailable``
subrequests, allocationMode All, admin access (in a namespace labelled for it),
tolerations, capacity requests and matchAttribute / distinctAttribute constraints; and
bound lower-priority pods holding allocated claims, for preemption with claims.

The API server's defaults are written out (an exact request's ``allocationMode`` and
``count``, a toleration's ``operator``): the reference applies none. A pod's claim made
from a template is made by the reference's resourceclaim controller (reference/
dra_137.go), as wasmsched's simulation makes it (api/dra.py: claims_from_templates); pods
carry a uid, which names those claims in both.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from reference_support import Case

DRA = "resource.k8s.io/v1"
GPU, NIC, FPGA = "gpu.example.com", "nic.example.com", "fpga.example.com"
DRIVERS = (GPU, NIC, FPGA)
ADMIN_NAMESPACE = "ops"
ADMIN_LABEL = "resource.kubernetes.io/admin-access"
PRIORITY_CLASSES = {"low": 100, "mid": 1000, "high": 10000}
ZONES = ("zone-a", "zone-b")
MODELS = ("a100", "h100", "l4")
VERSIONS = ("1.2.0", "1.10.3", "2.0.0-rc.1", "2.1.0")
MEMORY = ("10Gi", "20Gi", "40Gi", "80Gi")
TAINT_KEYS = ("bad", "maint")
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")
# Selectors, each for devices of one driver (a device of another driver has none of its
# attributes: an error, "no such key", unless the class filtered it out first).
SELECTORS: dict[str, tuple[str, ...]] = {
    GPU: (
        'device.attributes["gpu.example.com"].model == "a100"',
        'device.attributes["gpu.example.com"].model in ["h100", "l4"]',
        'device.attributes["gpu.example.com"].numa >= 1',
        'device.attributes["gpu.example.com"].ecc',
        '!device.attributes["gpu.example.com"].ecc',
        'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.9.0"))',
        'device.attributes["gpu.example.com"].driverVersion.major() == 2',
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
        'device.capacity["gpu.example.com"].memory.isLessThan(quantity("30Gi"))',
        'device.attributes["gpu.example.com"].?model.orValue("") == "l4"',
        'has(device.attributes["gpu.example.com"].model) && device.driver == "gpu.example.com"',
    ),
    NIC: (
        'device.attributes["nic.example.com"].speed >= 100',
        'device.attributes["nic.example.com"].rdma == true',
        'device.attributes["nic.example.com"].model.startsWith("cx")',
    ),
    FPGA: (
        'device.attributes["fpga.example.com"].driverVersion.compareTo(semver("2.0.0")) < 0',
        'device.attributes["fpga.example.com"].model == "a100"',
    ),
}
# Every class of the cluster: name -> driver (None: any device).
CLASSES: dict[str, str | None] = {
    "gpu": GPU,
    "nic": NIC,
    "fpga": FPGA,
    "gpu-ecc": GPU,
    "any": None,
}


def _meta(name: str, namespace: str | None = None, **more: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(more)
    return meta


def _device_classes() -> list[dict[str, Any]]:
    out = []
    for name, driver in CLASSES.items():
        spec: dict[str, Any] = {}
        if driver is not None:
            exprs = [f'device.driver == "{driver}"']
            if name == "gpu-ecc":
                exprs.append(f'device.attributes["{GPU}"].ecc')
            spec["selectors"] = [{"cel": {"expression": e}} for e in exprs]
        out.append(
            {"apiVersion": DRA, "kind": "DeviceClass", "metadata": _meta(name), "spec": spec}
        )
    return out


@st.composite
def _taints(draw: st.DrawFn, features: set[str]) -> list[dict[str, Any]]:
    if draw(st.integers(0, 6)) > 0:
        return []
    key = draw(st.sampled_from(TAINT_KEYS))
    effect = draw(st.sampled_from(TAINT_EFFECTS))
    features.add(f"dra-taint-{effect}")
    taint: dict[str, Any] = {"key": key, "effect": effect}
    if draw(st.booleans()):
        taint["value"] = "yes"
    return [taint]


@st.composite
def _device(draw: st.DrawFn, driver: str, name: str, features: set[str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {"model": {"string": draw(st.sampled_from(MODELS))}}
    capacity: dict[str, Any] = {}
    if driver == GPU:
        attrs["numa"] = {"int": draw(st.integers(0, 1))}
        attrs["ecc"] = {"bool": draw(st.booleans())}
        attrs["driverVersion"] = {"version": draw(st.sampled_from(VERSIONS))}
        capacity["memory"] = {"value": draw(st.sampled_from(MEMORY))}
    elif driver == NIC:
        attrs["model"] = {"string": draw(st.sampled_from(["cx6", "cx7", "e810"]))}
        attrs["speed"] = {"int": draw(st.sampled_from([25, 100, 200]))}
        attrs["rdma"] = {"bool": draw(st.booleans())}
        attrs["numa"] = {"int": draw(st.integers(0, 1))}
    else:
        attrs["driverVersion"] = {"version": draw(st.sampled_from(VERSIONS))}
    device: dict[str, Any] = {"name": name, "attributes": attrs}
    if capacity:
        device["capacity"] = capacity
    taints = draw(_taints(features))
    if taints:
        device["taints"] = taints
    return device


def _slice(name: str, driver: str, pool: str, count: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": DRA,
        "kind": "ResourceSlice",
        "metadata": _meta(name),
        "spec": {
            "driver": driver,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
            **spec,
        },
    }


@st.composite
def _node_slices(
    draw: st.DrawFn, node: str, driver: str, features: set[str]
) -> list[dict[str, Any]]:
    """One node's pool of ``driver``: plain, partitionable or with consumable capacity."""
    short = driver.split(".")[0]
    pool = f"{node}-{short}"
    devices = [
        draw(_device(driver, f"{short}-{d}", features)) for d in range(draw(st.integers(2, 4)))
    ]
    kind = draw(st.sampled_from(["plain", "plain", "partitionable", "consumable"]))
    if kind == "partitionable":
        features.add("dra-partitionable")
        for d in devices:
            d["consumesCounters"] = [
                {
                    "counterSet": "mem",
                    "counters": {"memory": {"value": draw(st.sampled_from(["20Gi", "40Gi"]))}},
                }
            ]
        total = draw(st.sampled_from(["40Gi", "60Gi", "100Gi"]))
        return [
            _slice(
                f"{pool}-counters",
                driver,
                pool,
                2,
                nodeName=node,
                sharedCounters=[{"name": "mem", "counters": {"memory": {"value": total}}}],
            ),
            _slice(f"{pool}-devices", driver, pool, 2, nodeName=node, devices=devices),
        ]
    if kind == "consumable":
        features.add("dra-consumable-capacity")
        for d in devices:
            d["allowMultipleAllocations"] = True
            bandwidth: dict[str, Any] = {"value": draw(st.sampled_from(["40Gi", "100Gi"]))}
            policy = draw(st.sampled_from(["none", "range", "values"]))
            if policy == "range":
                bandwidth["requestPolicy"] = {
                    "default": "10Gi",
                    "validRange": {"min": "10Gi", "step": "10Gi"},
                }
            elif policy == "values":
                bandwidth["requestPolicy"] = {
                    "default": "20Gi",
                    "validValues": ["20Gi", "40Gi"],
                }
            if policy != "none":
                features.add(f"dra-request-policy-{policy}")
            d.setdefault("capacity", {})["bandwidth"] = bandwidth
    return [_slice(pool, driver, pool, 1, nodeName=node, devices=devices)]


@st.composite
def _shared_slices(draw: st.DrawFn, features: set[str]) -> list[dict[str, Any]]:
    """Pools not tied to one node: a nodeSelector slice (a zone's) and an allNodes one."""
    out = []
    if draw(st.booleans()):
        features.add("dra-node-selector-slice")
        zone = draw(st.sampled_from(ZONES))
        devices = [
            draw(_device(NIC, f"fabric-{k}", features)) for k in range(draw(st.integers(1, 3)))
        ]
        selector = {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": [zone]}]}
            ]
        }
        out.append(_slice("fabric", NIC, "fabric", 1, nodeSelector=selector, devices=devices))
    if draw(st.booleans()):
        features.add("dra-all-nodes-slice")
        driver = draw(st.sampled_from([FPGA, GPU]))
        devices = [
            draw(_device(driver, f"global-{k}", features)) for k in range(draw(st.integers(1, 3)))
        ]
        out.append(_slice("global", driver, "global", 1, allNodes=True, devices=devices))
    return out


@st.composite
def _request_body(draw: st.DrawFn, features: set[str], admin_ok: bool, sub: bool) -> dict[str, Any]:
    """An exact request's (or a subrequest's) body, defaults written out."""
    cls = draw(st.sampled_from(sorted(CLASSES)))
    body: dict[str, Any] = {"deviceClassName": cls}
    if draw(st.integers(0, 7)) == 0:
        body["allocationMode"] = "All"
        features.add("dra-all-mode")
    else:
        body["allocationMode"] = "ExactCount"
        body["count"] = draw(st.sampled_from([1, 1, 1, 2]))
    driver = CLASSES[cls]
    if draw(st.integers(0, 2)) == 0:
        guard = ""
        if driver is None:
            # Over a class of every driver, guarded by the driver; seldom unguarded, when
            # a device of another driver has no such attribute: kube's "no such key"
            # error, which it retries with backoff (the reference then runs to its
            # timeout, a minute: kept rare).
            driver = draw(st.sampled_from(DRIVERS))
            if draw(st.integers(0, 39)) == 39:  # not 0, hypothesis's first choice
                features.add("dra-selector-error")
            else:
                guard = f'device.driver == "{driver}" && '
        exprs = draw(st.lists(st.sampled_from(SELECTORS[driver]), min_size=1, max_size=2))
        body["selectors"] = [{"cel": {"expression": guard + e}} for e in exprs]
        features.add("dra-selectors")
    if draw(st.integers(0, 4)) == 0:
        key = draw(st.sampled_from(TAINT_KEYS))
        tol: dict[str, Any] = {"key": key}
        if draw(st.booleans()):
            tol["operator"] = "Exists"
        else:
            tol.update(operator="Equal", value="yes")
        if draw(st.booleans()):
            tol["effect"] = draw(st.sampled_from(["NoSchedule", "NoExecute"]))
        body["tolerations"] = [tol]
        features.add("dra-tolerations")
    if body["allocationMode"] == "ExactCount" and draw(st.integers(0, 3)) == 0:
        name = "memory" if driver == GPU else "bandwidth"
        body["capacity"] = {
            "requests": {name: draw(st.sampled_from(["5Gi", "10Gi", "20Gi", "30Gi"]))}
        }
        features.add("dra-capacity-request")
    if admin_ok and not sub and draw(st.integers(0, 2)) == 0:
        body["adminAccess"] = True
        features.add("dra-admin-access")
    return body


@st.composite
def _claim_spec(draw: st.DrawFn, features: set[str], admin_ok: bool) -> dict[str, Any]:
    requests: list[dict[str, Any]] = []
    for q in range(draw(st.sampled_from([1, 1, 1, 2]))):
        if draw(st.integers(0, 3)) == 0:
            features.add("dra-first-available")
            subs = []
            for s in range(draw(st.integers(2, 3))):
                body = draw(_request_body(features, False, sub=True))
                subs.append({"name": f"s{s}", **body})
            requests.append({"name": f"r{q}", "firstAvailable": subs})
        else:
            requests.append(
                {"name": f"r{q}", "exactly": draw(_request_body(features, admin_ok, False))}
            )
    devices: dict[str, Any] = {"requests": requests}
    if draw(st.integers(0, 4)) == 0:
        attribute = draw(
            st.sampled_from([f"{GPU}/numa", f"{NIC}/numa", f"{GPU}/model", f"{GPU}/driverVersion"])
        )
        constraint: dict[str, Any] = {}
        if len(requests) > 1 and draw(st.booleans()):
            constraint["requests"] = [r["name"] for r in requests]
        if draw(st.integers(0, 3)) == 0:
            constraint["distinctAttribute"] = attribute
            features.add("dra-distinct-attribute")
        else:
            constraint["matchAttribute"] = attribute
            features.add("dra-match-attribute")
        devices["constraints"] = [constraint]
    return {"devices": devices}


def _pod(
    name: str, namespace: str, cpu: int, claims: list[dict[str, Any]], **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, namespace, uid=f"uid-{namespace}-{name}"),
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "img",
                    "resources": {"requests": {"cpu": str(cpu)}},
                }
            ],
            "resourceClaims": claims,
            **spec,
        },
    }


def _held_claim(
    pod: dict[str, Any], node: str, device: str, pool: str, driver: str
) -> dict[str, Any]:
    """A claim the scheduler allocated earlier to a running pod (its finalizer: the
    resourceclaim controller deallocates it when the pod is gone)."""
    meta = pod["metadata"]
    cls = next(c for c, d in CLASSES.items() if d == driver)
    return {
        "apiVersion": DRA,
        "kind": "ResourceClaim",
        "metadata": _meta(
            f"{meta['name']}-held",
            meta["namespace"],
            finalizers=["resource.kubernetes.io/delete-protection"],
        ),
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "r0",
                        "exactly": {
                            "deviceClassName": cls,
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                    }
                ]
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "r0", "driver": driver, "pool": pool, "device": device}]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": meta["name"], "uid": meta["uid"]}],
        },
    }


@st.composite
def _taint_rules(
    draw: st.DrawFn, slices: list[dict[str, Any]], features: set[str]
) -> list[dict[str, Any]]:
    out = []
    with_devices = [s for s in slices if s["spec"].get("devices")]
    for k in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        if not with_devices:
            break
        features.add("dra-taint-rule")
        target = draw(st.sampled_from(with_devices))["spec"]
        selector: dict[str, Any] = {"driver": target["driver"]}
        if draw(st.booleans()):
            selector["pool"] = target["pool"]["name"]
            if draw(st.booleans()):
                selector["device"] = draw(st.sampled_from(target["devices"]))["name"]
        effect = draw(st.sampled_from(["NoSchedule", "NoExecute", "None"]))
        out.append(
            {
                "apiVersion": DRA,
                "kind": "DeviceTaintRule",
                "metadata": _meta(f"rule-{k}"),
                "spec": {
                    "deviceSelector": selector,
                    "taint": {"key": draw(st.sampled_from(TAINT_KEYS)), "effect": effect},
                },
            }
        )
    return out


@st.composite
def cases_dra(draw: st.DrawFn) -> Case:
    features: set[str] = {"dra"}
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta("default")},
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": _meta(ADMIN_NAMESPACE, labels={ADMIN_LABEL: "true"}),
        },
    ]
    for name, value in PRIORITY_CLASSES.items():
        docs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": _meta(name),
                "value": value,
            }
        )
    node_count = draw(st.integers(1, 5))
    nodes = [f"node-{i}" for i in range(node_count)]
    for i, node in enumerate(nodes):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": _meta(
                    node,
                    labels={
                        "kubernetes.io/hostname": node,
                        "zone": ZONES[i % 2] if node_count < 3 else draw(st.sampled_from(ZONES)),
                    },
                ),
                "status": {
                    "allocatable": {
                        "cpu": str(draw(st.sampled_from([4, 8]))),
                        "memory": "16Gi",
                        "pods": "110",
                    }
                },
            }
        )
    docs += _device_classes()
    slices: list[dict[str, Any]] = []
    for node in nodes:
        for driver in DRIVERS:
            if draw(st.integers(0, 2)) == 0 if driver != GPU else draw(st.integers(0, 4)) > 0:
                slices += draw(_node_slices(node, driver, features))
    slices += draw(_shared_slices(features))
    docs += slices
    docs += draw(_taint_rules(slices, features))
    # Running pods, some holding a device: victims for the pending pods' preemptions.
    held: set[tuple[str, str]] = set()
    for b in range(draw(st.integers(0, 4))):
        node = draw(st.sampled_from(nodes))
        pod = _pod(
            f"run-{b}",
            "default",
            draw(st.integers(2, 4)),
            [],
            nodeName=node,
            priorityClassName="low",
        )
        # The kubelet's start time: preemption picks among equal victims by it
        # (pkg/scheduler/util: MoreImportantPod); without it kube uses time.Now().
        pod["status"] = {"phase": "Running", "startTime": f"2026-01-01T00:{b:02d}:00Z"}
        plain = [
            s
            for s in slices
            if s["spec"].get("nodeName") == node
            and s["spec"].get("devices")
            and not any(
                d.get("consumesCounters") or d.get("allowMultipleAllocations")
                for d in s["spec"]["devices"]
            )
        ]
        if plain and draw(st.integers(0, 3)) > 0:
            spec = draw(st.sampled_from(plain))["spec"]
            device = draw(st.sampled_from(spec["devices"]))["name"]
            pool = spec["pool"]["name"]
            if (pool, device) not in held:
                held.add((pool, device))
                claim = _held_claim(pod, node, device, pool, spec["driver"])
                docs.append(claim)
                pod["spec"]["resourceClaims"] = [
                    {"name": "held", "resourceClaimName": claim["metadata"]["name"]}
                ]
                features.add("dra-held-claim")
        docs.append(pod)
    for p in range(draw(st.integers(1, 7))):
        admin = draw(st.integers(0, 5)) == 0
        namespace = ADMIN_NAMESPACE if admin else "default"
        claims: list[dict[str, Any]] = []
        for c in range(draw(st.sampled_from([1, 1, 1, 2]))):
            spec = draw(_claim_spec(features, admin))
            if draw(st.integers(0, 2)) == 0:
                features.add("dra-template")
                template = f"t{p}-{c}"
                docs.append(
                    {
                        "apiVersion": DRA,
                        "kind": "ResourceClaimTemplate",
                        "metadata": _meta(template, namespace),
                        "spec": {"spec": spec},
                    }
                )
                claims.append({"name": f"x{c}", "resourceClaimTemplateName": template})
            else:
                name = f"c{p}-{c}"
                docs.append(
                    {
                        "apiVersion": DRA,
                        "kind": "ResourceClaim",
                        "metadata": _meta(name, namespace),
                        "spec": spec,
                    }
                )
                claims.append({"name": f"x{c}", "resourceClaimName": name})
        extra: dict[str, Any] = {}
        prio = draw(st.sampled_from([None, None, "mid", "high"]))
        if prio is not None:
            extra["priorityClassName"] = prio
            features.add("priority")
        docs.append(_pod(f"pod-{p}", namespace, draw(st.integers(1, 3)), claims, **extra))
    return Case("", docs, None, features)
