"""The API server's semantic validation of DRA objects (resource.k8s.io/v1) and of a pod's
``spec.resourceClaims``.

The checks of k8s.io/kubernetes pkg/apis/resource/validation/validation.go (v1.37.2) that
can change what the scheduler sees: request names and kinds (``exactly`` or
``firstAvailable``), allocation modes and counts (after defaulting, api/dra.py), device class
names, CEL selectors that compile, constraints naming requests of the claim, tolerations;
a ResourceSlice's driver, pool, node selection (exactly one of ``nodeName``, ``nodeSelector``,
``allNodes``, ``perDeviceNodeSelection``), device names and attributes, counter sets; and
pkg/apis/core/validation's rules for ``spec.resourceClaims`` (validatePodResourceClaims).
They run after the schema check, so every field already has its JSON type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wasmsched.api.cel import COST_LIMIT, CELError, SelectorCache
from wasmsched.api.selectors import is_dns_subdomain
from wasmsched.api.validation.problems import FieldErrors, Problem
from wasmsched.api.validation.rules import LABEL_MSG, SUBDOMAIN_MSG

__all__ = ["pod_resource_claim_problems", "resource_problems"]

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string "
    "of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex "
    "used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
)
_ALLOCATION_MODES = ("All", "ExactCount")
_TOLERATION_OPERATORS = ("Equal", "Exists")
_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
# resource/v1 types.go limits.
_MAX_REQUESTS = 32
_MAX_SELECTORS = 32
_MAX_FIRST_AVAILABLE = 8
_MAX_CONSTRAINTS = 32
_MAX_TOLERATIONS = 16
_MAX_DEVICES = 128
_MAX_COUNTER_SETS = 8
_MAX_ATTRIBUTES_AND_CAPACITIES = 32
_MAX_DEVICE_TAINTS = 16
_MAX_ID_LENGTH = 32
_MAX_DRIVER_LENGTH = 63
_MAX_ATTRIBUTE_VALUE_LENGTH = 64

# Selectors are compiled once per expression, here and in the allocator alike.
SELECTORS = SelectorCache()


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _l(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


class _Errors(FieldErrors):
    """FieldErrors with the few checks DRA's rules repeat."""

    def too_many(self, path: str, have: int, limit: int) -> None:
        self.items.append(Problem(path, f"Too many: {have}: must have at most {limit} items"))

    def label(self, path: str, value: str) -> None:
        if not value:
            self.required(path)
        elif len(value) > 63:
            self.invalid(path, value, "must be no more than 63 characters")
        elif not _DNS1123_LABEL.fullmatch(value):
            self.invalid(path, value, LABEL_MSG)

    def subdomain(self, path: str, value: str, limit: int = 253) -> None:
        if not value:
            self.required(path)
        elif len(value) > limit:
            self.invalid(path, value, f"must be no more than {limit} characters")
        elif not is_dns_subdomain(value):
            self.invalid(path, value, SUBDOMAIN_MSG)

    def sized(self, path: str, items: list[Any], limit: int) -> list[Any]:
        if len(items) > limit:
            self.too_many(path, len(items), limit)
        return items


# --- claims ----------------------------------------------------------------------------


def _selectors(errs: _Errors, path: str, selectors: Any) -> None:
    for i, selector in enumerate(errs.sized(path, _l(selectors), _MAX_SELECTORS)):
        cel = _m(selector).get("cel")
        if cel is None:
            errs.required(f"{path}[{i}].cel")
            continue
        expression = _m(cel).get("expression") or ""
        where = f"{path}[{i}].cel.expression"
        if not expression:
            errs.required(where)
            continue
        try:
            selector = SELECTORS.get(expression)
        except CELError as err:
            errs.invalid(where, expression, err.problem)
            continue
        # validation.go validateCELExpression: the estimated worst case against the limit.
        if selector.max_cost > COST_LIMIT:
            errs.forbidden(where, "too complex, exceeds cost limit")


def _tolerations(errs: _Errors, path: str, tolerations: Any) -> None:
    for i, toleration in enumerate(errs.sized(path, _l(tolerations), _MAX_TOLERATIONS)):
        t = _m(toleration)
        here = f"{path}[{i}]"
        operator = t.get("operator") or "Equal"
        if operator not in _TOLERATION_OPERATORS:
            errs.unsupported(f"{here}.operator", operator, _TOLERATION_OPERATORS)
        if operator == "Exists" and t.get("value"):
            errs.invalid(
                f"{here}.operator", operator, "value must be empty when `operator` is 'Exists'"
            )
        effect = t.get("effect")
        if effect and effect not in _TAINT_EFFECTS:
            errs.unsupported(f"{here}.effect", effect, _TAINT_EFFECTS)


def _allocation_mode(errs: _Errors, path: str, request: Mapping[str, Any]) -> None:
    mode = request.get("allocationMode")
    count = request.get("count") or 0
    if mode == "All":
        if count != 0:
            errs.invalid(
                f"{path}.count", count, "must not be specified when allocationMode is 'All'"
            )
    elif mode == "ExactCount":
        if count <= 0:
            errs.invalid(f"{path}.count", count, "must be greater than zero")
    else:
        errs.unsupported(f"{path}.allocationMode", mode or "", _ALLOCATION_MODES)


def _device_class_ref(errs: _Errors, path: str, name: Any) -> None:
    errs.subdomain(path, name or "")


def _exact(errs: _Errors, path: str, request: Mapping[str, Any], sub: bool) -> None:
    _device_class_ref(errs, f"{path}.deviceClassName", request.get("deviceClassName"))
    _selectors(errs, f"{path}.selectors", request.get("selectors"))
    _allocation_mode(errs, path, request)
    _tolerations(errs, f"{path}.tolerations", request.get("tolerations"))


def _request_names(requests: list[Any]) -> set[str]:
    names: set[str] = set()
    for request in requests:
        r = _m(request)
        name = r.get("name") or ""
        names.add(name)
        for sub in _l(r.get("firstAvailable")):
            names.add(f"{name}/{_m(sub).get('name') or ''}")
    return names


def _request_ref(errs: _Errors, path: str, name: Any, names: set[str]) -> None:
    text = name if isinstance(name, str) else ""
    if text.count("/") > 1 or text not in names:
        errs.invalid(
            path,
            text,
            "must be the name of a request in the claim or the name of a request and a "
            "subrequest separated by '/'",
        )


def _claim_spec(errs: _Errors, path: str, spec: Any) -> None:
    devices = _m(_m(spec).get("devices"))
    dpath = f"{path}.devices"
    requests = errs.sized(f"{dpath}.requests", _l(devices.get("requests")), _MAX_REQUESTS)
    seen: set[str] = set()
    for i, raw in enumerate(requests):
        request = _m(raw)
        here = f"{dpath}.requests[{i}]"
        name = request.get("name") or ""
        errs.label(f"{here}.name", name)
        if name in seen:
            errs.duplicate(f"{here}.name", name)
        seen.add(name)
        exactly = request.get("exactly")
        first = _l(request.get("firstAvailable"))
        if exactly is None and not first:
            errs.required(here, "exactly one of `exactly` or `firstAvailable` is required")
        elif exactly is not None and first:
            errs.invalid(
                here,
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                "fields are set",
            )
        elif exactly is not None:
            _exact(errs, f"{here}.exactly", _m(exactly), sub=False)
        else:
            subs = errs.sized(f"{here}.firstAvailable", first, _MAX_FIRST_AVAILABLE)
            sub_seen: set[str] = set()
            for j, sub in enumerate(subs):
                spath = f"{here}.firstAvailable[{j}]"
                sub_name = _m(sub).get("name") or ""
                errs.label(f"{spath}.name", sub_name)
                if sub_name in sub_seen:
                    errs.duplicate(f"{spath}.name", sub_name)
                sub_seen.add(sub_name)
                _exact(errs, spath, _m(sub), sub=True)
    names = _request_names(requests)
    constraints = errs.sized(
        f"{dpath}.constraints", _l(devices.get("constraints")), _MAX_CONSTRAINTS
    )
    for i, raw in enumerate(constraints):
        constraint = _m(raw)
        here = f"{dpath}.constraints[{i}]"
        for j, ref in enumerate(_l(constraint.get("requests"))):
            _request_ref(errs, f"{here}.requests[{j}]", ref, names)
        match = constraint.get("matchAttribute")
        distinct = constraint.get("distinctAttribute")
        if match is None and distinct is None:
            errs.required(
                here,
                'exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                "multiple fields are set",
            )
        else:
            attr_path = (
                f"{here}.matchAttribute" if match is not None else f"{here}.distinctAttribute"
            )
            _fully_qualified_name(errs, attr_path, match if match is not None else distinct)
    for i, raw in enumerate(_l(devices.get("config"))):
        for j, ref in enumerate(_l(_m(raw).get("requests"))):
            _request_ref(errs, f"{dpath}.config[{i}].requests[{j}]", ref, names)


def _resource_claim(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    _claim_spec(errs, "spec", manifest.get("spec"))


def _resource_claim_template(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    _claim_spec(errs, "spec.spec", _m(manifest.get("spec")).get("spec"))


def _device_class(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    spec = _m(manifest.get("spec"))
    _selectors(errs, "spec.selectors", spec.get("selectors"))
    extended = spec.get("extendedResourceName")
    if extended is not None and (not isinstance(extended, str) or "/" not in extended):
        errs.invalid(
            "spec.extendedResourceName", extended, "must be a valid extended resource name"
        )


# --- slices ------------------------------------------------------------------------------


def _qualified_name(errs: _Errors, path: str, name: Any) -> None:
    """validateQualifiedName: ``<domain>/<C identifier>`` or a bare C identifier."""
    text = name if isinstance(name, str) else ""
    domain, sep, ident = text.rpartition("/")
    if sep and (not domain or not is_dns_subdomain(domain) or len(domain) > 63):
        errs.invalid(path, text, "the domain must be a DNS subdomain of at most 63 characters")
    if not ident:
        errs.required(path, "name required")
    elif len(ident) > _MAX_ID_LENGTH:
        errs.invalid(path, text, f"must be no more than {_MAX_ID_LENGTH} characters")
    elif not _C_IDENTIFIER.fullmatch(ident):
        errs.invalid(path, text, _C_IDENTIFIER_MSG)


def _fully_qualified_name(errs: _Errors, path: str, name: Any) -> None:
    text = name if isinstance(name, str) else ""
    _qualified_name(errs, path, text)
    if "/" not in text:
        errs.required(
            path, "a fully qualified name must be a domain and a name separated by a slash"
        )


def _attribute(errs: _Errors, path: str, attribute: Any) -> None:
    a = _m(attribute)
    fields = [
        k
        for k in ("bool", "int", "string", "version", "bools", "ints", "strings", "versions")
        if a.get(k) is not None
    ]
    if len(fields) != 1:
        errs.invalid(path, "" if not fields else dict(a), "exactly one value must be specified")
        return
    value = a[fields[0]]
    values = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        errs.invalid(f"{path}.{fields[0]}", value, "must not be empty if specified")
    if fields[0] in ("string", "strings", "version", "versions"):
        for v in values:
            if isinstance(v, str) and len(v) > _MAX_ATTRIBUTE_VALUE_LENGTH:
                errs.invalid(
                    f"{path}.{fields[0]}",
                    v,
                    f"must be no more than {_MAX_ATTRIBUTE_VALUE_LENGTH} bytes",
                )


def _node_selection(
    errs: _Errors, path: str, obj: Mapping[str, Any], names: tuple[str, ...], detail: str
) -> int:
    """How many of the node-selection fields ``names`` are set (reporting empty ones)."""
    set_fields: list[str] = []
    for name in names:
        value = obj.get(name)
        if value is None:
            continue
        if name == "nodeName":
            if value:
                set_fields.append("`nodeName`")
            else:
                errs.invalid(
                    f"{path}.nodeName" if path else "nodeName",
                    value,
                    "must be either unset or set to a non-empty string",
                )
        elif name == "nodeSelector":
            set_fields.append("`nodeSelector`")
        elif value is True:
            set_fields.append(f"`{name}`")
        else:
            errs.invalid(f"{path}.{name}", value, "must be either unset or set to true")
    if not set_fields:
        errs.required(path, detail)
    elif len(set_fields) > 1:
        errs.invalid(
            path, "{" + ", ".join(set_fields) + "}", detail + ", but multiple fields are set"
        )
    return len(set_fields)


def _resource_slice(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    spec = _m(manifest.get("spec"))
    errs.subdomain("spec.driver", spec.get("driver") or "", _MAX_DRIVER_LENGTH)
    pool = _m(spec.get("pool"))
    pool_name = pool.get("name") or ""
    if not pool_name:
        errs.required("spec.pool.name")
    else:
        for part in pool_name.split("/"):
            if not is_dns_subdomain(part):
                errs.invalid("spec.pool.name", pool_name, SUBDOMAIN_MSG)
                break
    count = pool.get("resourceSliceCount") or 0
    if count <= 0:
        errs.invalid("spec.pool.resourceSliceCount", count, "must be greater than zero")
    generation = pool.get("generation") or 0
    if generation < 0:
        errs.invalid("spec.pool.generation", generation, "must be greater than or equal to zero")
    _node_selection(
        errs,
        "spec",
        spec,
        ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection"),
        "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
        "required",
    )
    terms = _l(_m(spec.get("nodeSelector")).get("nodeSelectorTerms"))
    if spec.get("nodeSelector") is not None and len(terms) != 1:
        errs.invalid(
            "spec.nodeSelector.nodeSelectorTerms", terms, "must have exactly one node selector term"
        )
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        errs.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    per_device = spec.get("perDeviceNodeSelection") is True
    seen: set[str] = set()
    for i, raw in enumerate(errs.sized("spec.devices", _l(spec.get("devices")), _MAX_DEVICES)):
        device = _m(raw)
        here = f"spec.devices[{i}]"
        name = device.get("name") or ""
        errs.label(f"{here}.name", name)
        if name in seen:
            errs.duplicate(f"{here}.name", name)
        seen.add(name)
        attributes = _m(device.get("attributes"))
        capacity = _m(device.get("capacity"))
        if len(attributes) + len(capacity) > _MAX_ATTRIBUTES_AND_CAPACITIES:
            errs.invalid(
                here,
                len(attributes) + len(capacity),
                "the total number of attributes and capacities must not exceed "
                f"{_MAX_ATTRIBUTES_AND_CAPACITIES}",
            )
        for key, attribute in attributes.items():
            _qualified_name(errs, f"{here}.attributes[{key}]", key)
            _attribute(errs, f"{here}.attributes[{key}]", attribute)
        for key in capacity:
            _qualified_name(errs, f"{here}.capacity[{key}]", key)
        taints = errs.sized(f"{here}.taints", _l(device.get("taints")), _MAX_DEVICE_TAINTS)
        for j, taint in enumerate(taints):
            t = _m(taint)
            if not t.get("key"):
                errs.required(f"{here}.taints[{j}].key")
            effect = t.get("effect")
            if effect not in _TAINT_EFFECTS:
                errs.unsupported(f"{here}.taints[{j}].effect", effect or "", _TAINT_EFFECTS)
        if per_device:
            _node_selection(
                errs,
                here,
                device,
                ("nodeName", "nodeSelector", "allNodes"),
                "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        elif any(device.get(k) is not None for k in ("nodeName", "nodeSelector", "allNodes")):
            errs.invalid(
                here,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
    sets = errs.sized("spec.sharedCounters", _l(spec.get("sharedCounters")), _MAX_COUNTER_SETS)
    set_names: set[str] = set()
    for i, raw in enumerate(sets):
        counter_set = _m(raw)
        name = counter_set.get("name") or ""
        errs.label(f"spec.sharedCounters[{i}].name", name)
        if name in set_names:
            errs.duplicate(f"spec.sharedCounters[{i}].name", name)
        set_names.add(name)
        if not _m(counter_set.get("counters")):
            errs.required(f"spec.sharedCounters[{i}].counters")


# --- pods ----------------------------------------------------------------------------------


def pod_resource_claim_problems(spec: Mapping[str, Any], path: str = "spec") -> list[Problem]:
    """validatePodResourceClaims (pkg/apis/core/validation): names are unique DNS labels, each
    entry names exactly one of a claim and a template."""
    errs = _Errors()
    seen: set[str] = set()
    for i, raw in enumerate(_l(spec.get("resourceClaims"))):
        entry = _m(raw)
        here = f"{path}.resourceClaims[{i}]"
        name = entry.get("name") or ""
        if not name:
            errs.required(f"{here}.name")
        elif name in seen:
            errs.duplicate(f"{here}.name", name)
        else:
            errs.label(f"{here}.name", name)
            seen.add(name)
        claim = entry.get("resourceClaimName")
        template = entry.get("resourceClaimTemplateName")
        if claim is not None and template is not None:
            errs.invalid(
                here,
                dict(entry),
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                "specified",
            )
        if claim is None and template is None:
            errs.invalid(
                here,
                dict(entry),
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )
        for field in ("resourceClaimName", "resourceClaimTemplateName"):
            value = entry.get(field)
            if value is not None:
                errs.subdomain(f"{here}.{field}", value)
    return errs.items


_RULES = {
    "ResourceClaim": _resource_claim,
    "ResourceClaimTemplate": _resource_claim_template,
    "DeviceClass": _device_class,
    "ResourceSlice": _resource_slice,
}


def resource_problems(kind: str, manifest: Mapping[str, Any]) -> list[Problem]:
    """The API server's validation problems of one DRA object (structurally valid already,
    defaults applied); empty for other kinds."""
    rule = _RULES.get(kind)
    if rule is None:
        return []
    errs = _Errors()
    rule(errs, manifest)
    return errs.items
