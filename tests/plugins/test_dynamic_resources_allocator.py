"""The structured allocator (plugins/dynamic_resources/allocator.py) against
k8s.io/dynamic-resource-allocation@v0.37.2/structured (incubating, 1.37's default gates).

Every expected answer below was produced by kube's own allocator: a throwaway Go program
(not committed) that ran ``structured.NewAllocator(...).Allocate(node, claims)`` with the
Features kube-scheduler v1.37.2 passes (AllocatorFeatures: admin access, prioritized list,
partitionable devices, device taints, binding conditions and status, consumable capacity,
fractional capacity ranges) on exactly these inputs, and printed each claim's devices as
``request:driver/pool/device`` (with the consumed capacity, if any), the error text, or None
when the claims do not fit the node. FULL holds whole AllocationResults (share IDs left out:
kube's are random UUIDs).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from wasmsched.api.cel import SelectorCache
from wasmsched.api.objects import Node
from wasmsched.plugins.dynamic_resources.allocator import (
    AllocatedState,
    AllocationError,
    Allocator,
    FailedOnNode,
    Features,
)
from wasmsched.plugins.dynamic_resources.slices import Device, SliceIndex

# --- inputs, in the API's shapes -----------------------------------------------------------


def node(name="n1", labels=None):
    return {"metadata": {"name": name, "labels": labels or {"kubernetes.io/hostname": name}}}


def dev(name, **kw):
    d = {"name": name}
    d.update(kw)
    return d


def sl(name, devices=None, driver="gpu.example.com", pool="p1", node="n1", gen=1, count=1, **kw):
    spec = {
        "driver": driver,
        "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
    }
    if node is not None:
        spec["nodeName"] = node
    if devices is not None:
        spec["devices"] = devices
    spec.update(kw)
    return {"metadata": {"name": name}, "spec": spec}


def cls(name="gpu", selectors=None, config=None):
    spec = {}
    if selectors:
        spec["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if config:
        spec["config"] = config
    return {"metadata": {"name": name}, "spec": spec}


def req(name, cls_="gpu", count=1, mode="ExactCount", selectors=None, **kw):
    r = {"deviceClassName": cls_, "allocationMode": mode}
    if mode == "ExactCount":
        r["count"] = count
    if selectors:
        r["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    r.update(kw)
    return {"name": name, "exactly": r}


def first(name, *subs):
    return {"name": name, "firstAvailable": [dict(s) for s in subs]}


def sub(name, cls_="gpu", count=1, mode="ExactCount", selectors=None, **kw):
    r = {"name": name, "deviceClassName": cls_, "allocationMode": mode}
    if mode == "ExactCount":
        r["count"] = count
    if selectors:
        r["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    r.update(kw)
    return r


def claim(name, requests, constraints=None, config=None, uid=None):
    devices = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {
        "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"},
        "spec": {"devices": devices},
    }


def allocated(name, results):
    c = claim(name, [req("r")])
    c["status"] = {"allocation": {"devices": {"results": results}}}
    return c


def res(device, driver="gpu.example.com", pool="p1", request="r", **kw):
    r = {"request": request, "driver": driver, "pool": pool, "device": device}
    r.update(kw)
    return r


def string_attr(s: str) -> dict[str, Any]:
    return {"string": s}


def int_attr(i: int) -> dict[str, Any]:
    return {"int": i}


four = [
    dev(
        f"gpu-{i}",
        attributes={
            "model": string_attr("a100" if i % 2 == 0 else "h100"),
            "numa": int_attr(i // 2),
        },
    )
    for i in range(4)
]

CASES = {
    "exact_one": dict(slices=[sl("s1", four)], classes=[cls()], claims=[claim("c", [req("r")])]),
    "exact_two_skips_allocated": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[claim("c", [req("r", count=2)])],
        allocated=[allocated("x", [res("gpu-0")])],
    ),
    "selector_model": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c",
                [
                    req(
                        "r",
                        count=2,
                        selectors=['device.attributes["gpu.example.com"].model == "h100"'],
                    )
                ],
            )
        ],
    ),
    "class_selector_driver": dict(
        slices=[sl("s1", four), sl("s2", [dev("nic-0")], driver="nic.example.com", pool="p0")],
        classes=[cls(selectors=['device.driver == "nic.example.com"'])],
        claims=[claim("c", [req("r")])],
    ),
    "pools_sorted": dict(
        slices=[
            sl("b", [dev("d0")], pool="zz"),
            sl("a", [dev("d0")], pool="aa"),
            sl("c", [dev("d0")], driver="a.example.com", pool="zz"),
        ],
        classes=[cls()],
        claims=[claim("c", [req("r", count=3)])],
    ),
    "all_mode": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c",
                [
                    req(
                        "r",
                        mode="All",
                        selectors=['device.attributes["gpu.example.com"].model == "a100"'],
                    )
                ],
            )
        ],
    ),
    "all_mode_one_taken": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[claim("c", [req("r", mode="All")])],
        allocated=[allocated("x", [res("gpu-3")])],
    ),
    "first_available": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c",
                [
                    first(
                        "r",
                        sub("big", count=5),
                        sub(
                            "mid",
                            count=2,
                            selectors=['device.attributes["gpu.example.com"].model == "h100"'],
                        ),
                        sub("small"),
                    )
                ],
            )
        ],
    ),
    "first_available_mid_taken": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c",
                [
                    first(
                        "r",
                        sub("big", count=5),
                        sub(
                            "mid",
                            count=2,
                            selectors=['device.attributes["gpu.example.com"].model == "h100"'],
                        ),
                        sub("small"),
                    )
                ],
            )
        ],
        allocated=[allocated("x", [res("gpu-3")])],
    ),
    "match_attribute": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c",
                [
                    req("a"),
                    req("b", selectors=['device.attributes["gpu.example.com"].model == "h100"']),
                ],
                constraints=[{"matchAttribute": "gpu.example.com/numa"}],
            )
        ],
        allocated=[allocated("x", [res("gpu-1")])],
    ),
    "match_attribute_subset": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c",
                [req("a", count=2), req("b")],
                constraints=[{"requests": ["a"], "matchAttribute": "gpu.example.com/model"}],
            )
        ],
    ),
    "distinct_attribute": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c",
                [req("a", count=2)],
                constraints=[{"distinctAttribute": "gpu.example.com/numa"}],
            )
        ],
    ),
    "admin_access": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[claim("c", [req("r", count=4, adminAccess=True)])],
        allocated=[allocated("x", [res("gpu-0"), res("gpu-1")])],
    ),
    "taint_untolerated": dict(
        slices=[
            sl(
                "s1",
                [
                    dev("gpu-0", taints=[{"key": "bad", "value": "x", "effect": "NoSchedule"}]),
                    dev("gpu-1", taints=[{"key": "meh", "effect": "None"}]),
                ],
            )
        ],
        classes=[cls()],
        claims=[claim("c", [req("r")])],
    ),
    "taint_tolerated": dict(
        slices=[
            sl(
                "s1",
                [
                    dev("gpu-0", taints=[{"key": "bad", "value": "x", "effect": "NoExecute"}]),
                    dev("gpu-1"),
                ],
            )
        ],
        classes=[cls()],
        claims=[claim("c", [req("r", tolerations=[{"key": "bad", "operator": "Exists"}])])],
    ),
    "partitionable": dict(
        slices=[
            sl(
                "counters",
                None,
                node="n1",
                count=2,
                sharedCounters=[{"name": "mem", "counters": {"memory": {"value": "80Gi"}}}],
            ),
            sl(
                "devs",
                [
                    dev(
                        f"part-{i}",
                        consumesCounters=[
                            {"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}
                        ],
                    )
                    for i in range(3)
                ],
                count=2,
            ),
        ],
        classes=[cls()],
        claims=[claim("c", [req("r", count=2)]), claim("d", [req("r")])],
    ),
    "partitionable_one_allocated": dict(
        slices=[
            sl(
                "counters",
                None,
                node="n1",
                count=2,
                sharedCounters=[{"name": "mem", "counters": {"memory": {"value": "80Gi"}}}],
            ),
            sl(
                "devs",
                [
                    dev(
                        f"part-{i}",
                        consumesCounters=[
                            {"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}
                        ],
                    )
                    for i in range(3)
                ],
                count=2,
            ),
        ],
        classes=[cls()],
        claims=[claim("c", [req("r")])],
        allocated=[allocated("x", [res("part-2")])],
    ),
    "consumable": dict(
        slices=[
            sl(
                "s1",
                [dev("big", allowMultipleAllocations=True, capacity={"memory": {"value": "80Gi"}})],
            )
        ],
        classes=[cls()],
        claims=[
            claim("c", [req("r", capacity={"requests": {"memory": "30Gi"}})]),
            claim("d", [req("r", capacity={"requests": {"memory": "30Gi"}})]),
        ],
    ),
    "consumable_full": dict(
        slices=[
            sl(
                "s1",
                [
                    dev(
                        "big", allowMultipleAllocations=True, capacity={"memory": {"value": "80Gi"}}
                    ),
                    dev(
                        "small",
                        allowMultipleAllocations=True,
                        capacity={"memory": {"value": "40Gi"}},
                    ),
                ],
            )
        ],
        classes=[cls()],
        claims=[claim("c", [req("r", capacity={"requests": {"memory": "30Gi"}})])],
        allocated=[
            allocated(
                "x",
                [
                    res(
                        "big",
                        shareID="11111111-1111-1111-1111-111111111111",
                        consumedCapacity={"memory": "60Gi"},
                    )
                ],
            )
        ],
    ),
    "consumable_policy": dict(
        slices=[
            sl(
                "s1",
                [
                    dev(
                        "big",
                        allowMultipleAllocations=True,
                        capacity={
                            "memory": {
                                "value": "80Gi",
                                "requestPolicy": {
                                    "default": "10Gi",
                                    "validRange": {"min": "10Gi", "step": "10Gi"},
                                },
                            },
                            "cores": {
                                "value": "8",
                                "requestPolicy": {"default": "1", "validValues": ["1", "2", "4"]},
                            },
                        },
                    )
                ],
            )
        ],
        classes=[cls()],
        claims=[
            claim("c", [req("r", capacity={"requests": {"memory": "25Gi", "cores": "3"}})]),
            claim("d", [req("r")]),
        ],
    ),
    "node_selector_slice": dict(
        node=node("n1", {"zone": "a"}),
        slices=[
            sl(
                "s1",
                [dev("z-a")],
                node=None,
                pool="za",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                },
            ),
            sl(
                "s2",
                [dev("z-b")],
                node=None,
                pool="zb",
                nodeSelector={
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}
                    ]
                },
            ),
            sl("s3", [dev("any")], node=None, pool="zz", allNodes=True),
        ],
        classes=[cls()],
        claims=[claim("c", [req("r", count=2)])],
    ),
    "other_node": dict(
        slices=[sl("s1", four, node="n2")], classes=[cls()], claims=[claim("c", [req("r")])]
    ),
    "incomplete_pool": dict(
        slices=[sl("s1", four, count=2)], classes=[cls()], claims=[claim("c", [req("r")])]
    ),
    "incomplete_pool_all": dict(
        slices=[sl("s1", four, count=2)],
        classes=[cls()],
        claims=[claim("c", [req("r", mode="All")])],
    ),
    "newer_generation": dict(
        slices=[sl("s1", four[:2], gen=1), sl("s2", four[2:], gen=2)],
        classes=[cls()],
        claims=[claim("c", [req("r")])],
    ),
    "missing_class": dict(
        slices=[sl("s1", four)], classes=[cls()], claims=[claim("c", [req("r", cls_="nope")])]
    ),
    "cel_runtime_error": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[
            claim(
                "c", [req("r", selectors=['device.attributes["gpu.example.com"].missing == "x"'])]
            )
        ],
    ),
    "class_cel_runtime_error": dict(
        slices=[sl("s1", four)],
        classes=[cls(selectors=['device.attributes["gpu.example.com"].nope'])],
        claims=[claim("c", [req("r")])],
    ),
    "too_many": dict(
        slices=[sl("s1", four)], classes=[cls()], claims=[claim("c", [req("r", count=33)])]
    ),
    "two_claims_two_requests": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[claim("c", [req("a"), req("b")]), claim("d", [req("a", count=2)])],
    ),
    "not_enough": dict(
        slices=[sl("s1", four)],
        classes=[cls()],
        claims=[claim("c", [req("r", count=3)]), claim("d", [req("r", count=2)])],
    ),
    "config": dict(
        slices=[sl("s1", four)],
        classes=[cls(config=[{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}])],
        claims=[
            claim(
                "c",
                [req("a"), first("b", sub("x", count=9), sub("y"))],
                config=[
                    {
                        "requests": ["b/y"],
                        "opaque": {"driver": "gpu.example.com", "parameters": {"b": 2}},
                    },
                    {"opaque": {"driver": "gpu.example.com", "parameters": {"c": 3}}},
                ],
            )
        ],
    ),
    "per_device_node": dict(
        slices=[
            sl(
                "s1",
                [
                    dev("d-n2", nodeName="n2"),
                    dev("d-all", allNodes=True),
                    dev("d-n1", nodeName="n1"),
                ],
                node=None,
                perDeviceNodeSelection=True,
            )
        ],
        classes=[cls()],
        claims=[claim("c", [req("r", count=2)])],
    ),
    "binding_conditions_last": dict(
        slices=[
            sl(
                "s1",
                [dev("bc", bindingConditions=["ready"], bindingFailureConditions=["failed"])],
                pool="aa",
            ),
            sl("s2", [dev("plain")], pool="zz"),
        ],
        classes=[cls()],
        claims=[claim("c", [req("r", count=2)])],
    ),
}


def full(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c.setdefault("node", node())
    c.setdefault("allocated", [])
    return c


class _KeepsNothing(dict[Any, Any]):
    """A memo that forgets what it is given."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _allocator(c: dict[str, Any], cached: bool) -> Allocator:
    index = SliceIndex()
    index.refresh(c["slices"], [])
    state = AllocatedState()
    for a in c["allocated"]:
        state.add_allocation(a["status"]["allocation"], True)
    classes = {k["metadata"]["name"]: k for k in c["classes"]}
    if cached:
        return Allocator(
            Features(), state, classes, index.for_node, index.all, SelectorCache(), index.pools_for
        )
    for s in index.all:
        for d in s.devices:
            d.default_capacity_fit = _KeepsNothing()
    return Allocator(Features(), state, classes, index.for_node, index.all, SelectorCache())


def allocate(case: dict[str, Any]) -> Any:
    """The case's claims on its node, allocated as the plugin does (with its caches)."""
    c = full(case)
    allocator = _allocator(c, cached=True)
    return allocator.allocate(Node({"kind": "Node", **c["node"]}), c["claims"])


def summary(results: Any) -> Any:
    if results is None:
        return None
    out = []
    for a in results:
        devices = []
        for x in a["devices"]["results"]:
            text = f"{x['request']}:{x['driver']}/{x['pool']}/{x['device']}"
            if "consumedCapacity" in x:
                text += json.dumps(x["consumedCapacity"], separators=(",", ":"), sort_keys=True)
            devices.append(text)
        out.append(devices)
    return out


# --- kube's answers --------------------------------------------------------------------------

EXPECTED: dict[str, Any] = {
    "exact_one": [["r:gpu.example.com/p1/gpu-0"]],
    "exact_two_skips_allocated": [["r:gpu.example.com/p1/gpu-1", "r:gpu.example.com/p1/gpu-2"]],
    "selector_model": [["r:gpu.example.com/p1/gpu-1", "r:gpu.example.com/p1/gpu-3"]],
    "class_selector_driver": [["r:nic.example.com/p0/nic-0"]],
    "pools_sorted": [
        ["r:a.example.com/zz/d0", "r:gpu.example.com/aa/d0", "r:gpu.example.com/zz/d0"]
    ],
    "all_mode": [["r:gpu.example.com/p1/gpu-0", "r:gpu.example.com/p1/gpu-2"]],
    "all_mode_one_taken": None,
    "first_available": [["r/mid:gpu.example.com/p1/gpu-1", "r/mid:gpu.example.com/p1/gpu-3"]],
    "first_available_mid_taken": [["r/small:gpu.example.com/p1/gpu-0"]],
    "match_attribute": [["a:gpu.example.com/p1/gpu-2", "b:gpu.example.com/p1/gpu-3"]],
    "match_attribute_subset": [
        ["a:gpu.example.com/p1/gpu-0", "a:gpu.example.com/p1/gpu-2", "b:gpu.example.com/p1/gpu-1"]
    ],
    "distinct_attribute": [["a:gpu.example.com/p1/gpu-0", "a:gpu.example.com/p1/gpu-2"]],
    "admin_access": [
        [
            "r:gpu.example.com/p1/gpu-0",
            "r:gpu.example.com/p1/gpu-1",
            "r:gpu.example.com/p1/gpu-2",
            "r:gpu.example.com/p1/gpu-3",
        ]
    ],
    "taint_untolerated": [["r:gpu.example.com/p1/gpu-1"]],
    "taint_tolerated": [["r:gpu.example.com/p1/gpu-0"]],
    "partitionable": None,
    "partitionable_one_allocated": [["r:gpu.example.com/p1/part-0"]],
    "consumable": [
        ['r:gpu.example.com/p1/big{"memory":"30Gi"}'],
        ['r:gpu.example.com/p1/big{"memory":"30Gi"}'],
    ],
    "consumable_full": [['r:gpu.example.com/p1/small{"memory":"30Gi"}']],
    "consumable_policy": [
        ['r:gpu.example.com/p1/big{"cores":"4","memory":"30Gi"}'],
        ['r:gpu.example.com/p1/big{"cores":"1","memory":"10Gi"}'],
    ],
    "node_selector_slice": [["r:gpu.example.com/za/z-a", "r:gpu.example.com/zz/any"]],
    "other_node": None,
    "incomplete_pool": None,
    "incomplete_pool_all": "claim default/c, request r: asks for all devices, but resource pool gpu.example.com/p1 is currently being updated",
    "newer_generation": [["r:gpu.example.com/p1/gpu-2"]],
    "missing_class": 'claim default/c, request r: could not retrieve device class nope: deviceclasses.resource.k8s.io "nope" not found',
    "cel_runtime_error": "claim default/c: selector #0 on device gpu.example.com/p1/gpu-0: CEL runtime error: no such key: missing. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
    "class_cel_runtime_error": "class gpu: selector #0 on device gpu.example.com/p1/gpu-0: CEL runtime error: no such key: nope. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
    "too_many": "claim default/c, request r: adding 33 devices exceeds the claim limit of 32, with 0 already accounted for",
    "two_claims_two_requests": [
        ["a:gpu.example.com/p1/gpu-0", "b:gpu.example.com/p1/gpu-1"],
        ["a:gpu.example.com/p1/gpu-2", "a:gpu.example.com/p1/gpu-3"],
    ],
    "not_enough": None,
    "config": [["a:gpu.example.com/p1/gpu-0", "b/y:gpu.example.com/p1/gpu-1"]],
    "per_device_node": [["r:gpu.example.com/p1/d-all", "r:gpu.example.com/p1/d-n1"]],
    "binding_conditions_last": [["r:gpu.example.com/zz/plain", "r:gpu.example.com/aa/bc"]],
}
FULL: dict[str, Any] = {
    "config": [
        {
            "devices": {
                "config": [
                    {
                        "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}},
                        "source": "FromClass",
                    },
                    {
                        "opaque": {"driver": "gpu.example.com", "parameters": {"b": 2}},
                        "requests": ["b/y"],
                        "source": "FromClaim",
                    },
                    {
                        "opaque": {"driver": "gpu.example.com", "parameters": {"c": 3}},
                        "source": "FromClaim",
                    },
                ],
                "results": [
                    {"device": "gpu-0", "driver": "gpu.example.com", "pool": "p1", "request": "a"},
                    {
                        "device": "gpu-1",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "b/y",
                    },
                ],
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    ],
    "node_selector_slice": [
        {
            "devices": {
                "results": [
                    {"device": "z-a", "driver": "gpu.example.com", "pool": "za", "request": "r"},
                    {"device": "any", "driver": "gpu.example.com", "pool": "zz", "request": "r"},
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                ]
            },
        }
    ],
    "taint_tolerated": [
        {
            "devices": {
                "results": [
                    {
                        "device": "gpu-0",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r",
                        "tolerations": [{"key": "bad", "operator": "Exists"}],
                    }
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    ],
    "binding_conditions_last": [
        {
            "devices": {
                "results": [
                    {"device": "plain", "driver": "gpu.example.com", "pool": "zz", "request": "r"},
                    {
                        "bindingConditions": ["ready"],
                        "bindingFailureConditions": ["failed"],
                        "device": "bc",
                        "driver": "gpu.example.com",
                        "pool": "aa",
                        "request": "r",
                    },
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    ],
    "consumable_policy": [
        {
            "devices": {
                "results": [
                    {
                        "consumedCapacity": {"cores": "4", "memory": "30Gi"},
                        "device": "big",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r",
                    }
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        },
        {
            "devices": {
                "results": [
                    {
                        "consumedCapacity": {"cores": "1", "memory": "10Gi"},
                        "device": "big",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r",
                    }
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        },
    ],
    "admin_access": [
        {
            "devices": {
                "results": [
                    {
                        "adminAccess": True,
                        "device": "gpu-0",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r",
                    },
                    {
                        "adminAccess": True,
                        "device": "gpu-1",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r",
                    },
                    {
                        "adminAccess": True,
                        "device": "gpu-2",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r",
                    },
                    {
                        "adminAccess": True,
                        "device": "gpu-3",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r",
                    },
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    ],
    "first_available": [
        {
            "devices": {
                "results": [
                    {
                        "device": "gpu-1",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r/mid",
                    },
                    {
                        "device": "gpu-3",
                        "driver": "gpu.example.com",
                        "pool": "p1",
                        "request": "r/mid",
                    },
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_devices_as_kube(name: str) -> None:
    expected = EXPECTED[name]
    if isinstance(expected, str):
        with pytest.raises((AllocationError, FailedOnNode)) as info:
            allocate(CASES[name])
        assert str(info.value) == expected
    else:
        assert summary(allocate(CASES[name])) == expected


@pytest.mark.parametrize("name", list(FULL))
def test_same_allocation_results_as_kube(name: str) -> None:
    got = allocate(CASES[name])
    for result in got:
        for device in result["devices"]["results"]:
            device.pop("shareID", None)
    assert json.loads(json.dumps(got, sort_keys=True)) == FULL[name]


def test_shares_of_one_device_get_distinct_share_ids() -> None:
    got = allocate(CASES["consumable"])
    ids = [r["devices"]["results"][0]["shareID"] for r in got]
    assert len(set(ids)) == 2
    assert got == allocate(CASES["consumable"])  # reproducible


def _outcome(call: Any) -> Any:
    """An allocation's answer, or its error's type and text."""
    try:
        return call()
    except (AllocationError, FailedOnNode) as err:
        return (type(err).__name__, str(err))


# Two claims whose selectors differ, on the same devices, under a class with its own
# selector: three expressions per device.
MODEL = 'device.attributes["gpu.example.com"].model == "{}"'
CACHE_CASES = {
    **CASES,
    "selectors_per_claim": dict(
        slices=[sl("s1", four)],
        classes=[cls(selectors=['device.driver == "gpu.example.com"'])],
        claims=[
            claim("c1", [req("r", selectors=[MODEL.format("h100")])]),
            claim("c2", [req("r", count=2, selectors=[MODEL.format("a100")])]),
        ],
    ),
}


@pytest.mark.parametrize("name", list(CACHE_CASES))
def test_cached_allocator_answers_as_an_uncached_one(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the plugin keeps across nodes and cycles (the pools per node, each claim's
    requests per Allocator, the compiled selectors, each device's selector results and
    capacity check) changes no answer: one Allocator asked in turn on the case's node and
    on another one answers as a fresh allocator that keeps nothing, errors included."""
    c = full(CACHE_CASES[name])
    nodes = [Node({"kind": "Node", **c["node"]}), Node({"kind": "Node", **node("elsewhere")})]
    cached = _allocator(c, cached=True)
    answers = [_outcome(lambda n=n: cached.allocate(n, c["claims"])) for n in nodes * 2]
    with monkeypatch.context() as m:
        m.setattr(Device, "selector_matches", lambda d, sel: sel.matches(d.cel_input()))
        fresh = [
            _outcome(lambda n=n: _allocator(c, cached=False).allocate(n, c["claims"]))
            for n in nodes * 2
        ]
    assert answers == fresh
