"""An allocation's result as the API writes it (allocator_incubating.go: Allocate's result
loop, createNodeSelector, addNewNodeSelectorRequirements).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.plugins.dynamic_resources.claims import as_list, as_mapping
from wasmsched.plugins.dynamic_resources.requests import Request
from wasmsched.plugins.dynamic_resources.slices import Device, Slice

Manifest = Mapping[str, Any]


class NodeSelectorError(Exception):
    """A slice's node selector the allocation cannot carry (more than one term)."""


def allocation_result(
    claim: Manifest,
    chosen: list[Request],
    results: list[dict[str, Any]],
    placed: list[tuple[Device, Slice]],
    node_name: str,
) -> dict[str, Any]:
    """The AllocationResult of one claim (Allocate's result loop): its devices, the
    class and claim configuration for the requests chosen, and the node selector."""
    devices = as_mapping(as_mapping(claim.get("spec")).get("devices"))
    requests = as_list(devices.get("requests"))
    config: list[dict[str, Any]] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for r in chosen:
        if r.device_class is None:
            continue
        class_name = str(as_mapping(r.device_class.get("metadata")).get("name"))
        span = class_ranges.get(class_name)
        if span is not None:
            for i in range(*span):
                config[i]["requests"].append(r.full_name)
            continue
        first = len(config)
        for c in as_list(as_mapping(r.device_class.get("spec")).get("config")):
            entry = {"source": "FromClass", "requests": [r.full_name]}
            entry.update({k: v for k, v in as_mapping(c).items() if k != "requests"})
            config.append(entry)
        class_ranges[class_name] = (first, len(config))
    names = [str(as_mapping(q).get("name") or "") for q in requests]
    sub_names = [r.full_name for r in chosen]
    for c in as_list(devices.get("config")):
        cfg = as_mapping(c)
        wanted = [str(x) for x in as_list(cfg.get("requests"))]
        entry = {"source": "FromClaim", "requests": wanted}
        entry.update({k: v for k, v in cfg.items() if k != "requests"})
        if not wanted:
            config.append(entry)
            continue
        for i, name in enumerate(names):
            if name in wanted or (chosen[i].parent is not None and sub_names[i] in wanted):
                config.append(entry)
                break
    for entry in config:
        listed = entry["requests"]
        if listed and all(
            names[i] in listed or (chosen[i].parent is not None and sub_names[i] in listed)
            for i in range(len(names))
        ):
            entry["requests"] = []
    for entry in config:
        if not entry["requests"]:
            del entry["requests"]
    out: dict[str, Any] = {"devices": {"results": results}}
    if config:
        out["devices"]["config"] = config
    selector = node_selector(placed, node_name)
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def node_selector(placed: list[tuple[Device, Slice]], node_name: str) -> dict[str, Any] | None:
    """createNodeSelector: one term with every slice's (or device's) requirements, or the
    node itself when a device is local to it; None when the devices are everywhere."""
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for device, s in placed:
        if s.per_device:
            node_name, selector = device.node_name, device.raw.get("nodeSelector")
        else:
            node_name, selector = s.node_name, as_mapping(s.raw.get("spec")).get("nodeSelector")
        if node_name or device.binds_to_node:
            return {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {
                                "key": "metadata.name",
                                "operator": "In",
                                "values": [node_name],
                            }
                        ]
                    }
                ]
            }
        terms = as_list(as_mapping(selector).get("nodeSelectorTerms"))
        if len(terms) == 1:
            first = as_mapping(terms[0])
            _add_requirements(as_list(first.get("matchFields")), fields)
            _add_requirements(as_list(first.get("matchExpressions")), expressions)
        elif len(terms) > 1:
            raise NodeSelectorError(
                f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms"
            )
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_requirements(source: list[Any], into: list[dict[str, Any]]) -> None:
    """addNewNodeSelectorRequirements: each requirement once (values compared as sets)."""
    for raw in source:
        req = as_mapping(raw)
        values = set(as_list(req.get("values")))
        if not any(
            e.get("key") == req.get("key")
            and e.get("operator") == req.get("operator")
            and set(as_list(e.get("values"))) == values
            for e in into
        ):
            into.append(dict(req))
