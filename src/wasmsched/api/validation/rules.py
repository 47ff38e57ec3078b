"""The API server's semantic validation of the objects a scheduler simulation reads.

These are the checks of k8s.io/kubernetes pkg/apis/core/validation/validation.go
(ValidatePod / ValidatePodSpec, ValidateNode, ValidateResourceRequirements,
ValidateNonnegativeQuantity, validateTopologySpreadConstraints, validateTolerations,
ValidateNodeSelector, ValidateLabels), pkg/apis/apps/validation (Deployment, ReplicaSet,
StatefulSet, DaemonSet), pkg/apis/batch/validation (Job, CronJob) and
pkg/apis/scheduling/validation (PriorityClass) that can change what a scheduler sees.
They run after the schema check (schema.py), so every field already has its JSON type.

Messages follow k8s.io/apimachinery pkg/util/validation/field: ``Invalid value: "-1": must
be greater than or equal to 0``, ``Required value``, ``Unsupported value: "X": supported
values: ...``, ``Duplicate value: "c"``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from wasmsched.api.quantity import QuantityError, join_path, parse_quantity, quote
from wasmsched.api.selectors import is_dns_subdomain, is_qualified_name, is_valid_label_value
from wasmsched.api.validation.problems import FieldErrors as _Errors
from wasmsched.api.validation.problems import Problem

__all__ = ["object_problems"]

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
# pkg/apis/scheduling: HighestUserDefinablePriority.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
)

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_NODE_SELECTOR_OPS = ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")
_LABEL_SELECTOR_OPS = ("DoesNotExist", "Exists", "In", "NotIn")
# Resources whose request may be below the limit (v1helper.IsOvercommitAllowed): the native
# ones except hugepages; extended resources must request exactly their limit.
_OVERCOMMIT = ("cpu", "memory", "ephemeral-storage")


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _l(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


# --- names and labels ------------------------------------------------------------------


def _dns_label(errs: _Errors, path: str, value: str) -> None:
    if len(value) > 63:
        errs.invalid(path, value, "must be no more than 63 characters")
    elif not _DNS1123_LABEL.fullmatch(value):
        errs.invalid(path, value, LABEL_MSG)


def _dns_subdomain(errs: _Errors, path: str, value: str) -> None:
    if len(value) > 253:
        errs.invalid(path, value, "must be no more than 253 characters")
    elif not is_dns_subdomain(value):
        errs.invalid(path, value, SUBDOMAIN_MSG)


def _qualified_name(errs: _Errors, path: str, value: str) -> None:
    """validation.IsQualifiedName: an optional DNS subdomain prefix and a 63-char name."""
    if not is_qualified_name(value):
        errs.invalid(
            path,
            value,
            "a qualified name must be an optional DNS subdomain prefix and '/', then at most "
            "63 alphanumeric characters, '-', '_' or '.', starting and ending with an "
            "alphanumeric character",
        )


def _label_value(errs: _Errors, path: str, value: str) -> None:
    if not is_valid_label_value(value):
        errs.invalid(
            path,
            value,
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character "
            "(at most 63 characters)",
        )


def _labels(errs: _Errors, path: str, labels: Any) -> None:
    for key, value in _m(labels).items():
        _qualified_name(errs, path, key)
        if isinstance(value, str):
            _label_value(errs, join_path(path, key), value)
        else:
            errs.invalid(join_path(path, key), value, "a label value must be a string")


def _metadata(errs: _Errors, meta: Any, name_rule: str, namespaced: bool) -> None:
    m = _m(meta)
    name = m.get("name")
    if not name and not m.get("generateName"):
        errs.required("metadata.name", "name or generateName is required")
    elif isinstance(name, str) and name:
        (_dns_label if name_rule == "label" else _dns_subdomain)(errs, "metadata.name", name)
    namespace = m.get("namespace")
    if namespaced and isinstance(namespace, str) and namespace:
        _dns_label(errs, "metadata.namespace", namespace)
    _labels(errs, "metadata.labels", m.get("labels"))


# --- quantities ------------------------------------------------------------------------


def _quantity(errs: _Errors, path: str, raw: Any) -> Fraction | None:
    if raw is None:
        return Fraction(0)
    try:
        q = parse_quantity(raw.strip() if isinstance(raw, str) else raw)
    except QuantityError as e:
        errs.items.append(Problem(path, e.problem))
        return None
    if q < 0:
        # ValidateNonnegativeQuantity
        errs.invalid(path, raw, "must be greater than or equal to 0")
        return None
    return q


def _resource_list(errs: _Errors, path: str, rl: Any) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for name, raw in _m(rl).items():
        q = _quantity(errs, join_path(path, name), raw)
        if q is None:
            continue
        if (name.startswith("hugepages-") or "/" in name) and q.denominator != 1:
            # ValidateResourceQuantityValue: integer resources (extended, hugepages).
            errs.invalid(join_path(path, name), raw, "must be an integer")
        out[name] = q
    return out


def _resource_requirements(errs: _Errors, path: str, resources: Any) -> None:
    """ValidateResourceRequirements: non-negative amounts, requests within limits."""
    res = _m(resources)
    limits = _resource_list(errs, join_path(path, "limits"), res.get("limits"))
    requests = _resource_list(errs, join_path(path, "requests"), res.get("requests"))
    for name, q in requests.items():
        limit = limits.get(name)
        if limit is None:
            continue
        raw = _m(res.get("requests")).get(name)
        rpath = join_path(path, f"requests.{name}")
        if name not in _OVERCOMMIT and q != limit:
            errs.invalid(rpath, raw, f"must be equal to {name} limit of {quote(_raw(res, name))}")
        elif q > limit:
            errs.invalid(
                rpath,
                raw,
                f"must be less than or equal to {name} limit of {quote(_raw(res, name))}",
            )


def _raw(res: Mapping[str, Any], name: str) -> Any:
    return _m(res.get("limits")).get(name)


# --- selectors, tolerations, spread ----------------------------------------------------


def _label_selector(errs: _Errors, path: str, selector: Any) -> None:
    """ValidateLabelSelector."""
    sel = _m(selector)
    _labels(errs, join_path(path, "matchLabels"), sel.get("matchLabels"))
    for i, expr in enumerate(_l(sel.get("matchExpressions"))):
        epath = join_path(path, f"matchExpressions[{i}]")
        e = _m(expr)
        op = e.get("operator")
        errs.enum(join_path(epath, "operator"), op, _LABEL_SELECTOR_OPS, optional=False)
        values = _l(e.get("values"))
        if op in ("In", "NotIn") and not values:
            errs.required(
                join_path(epath, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
            )
        if op in ("Exists", "DoesNotExist") and values:
            errs.items.append(
                Problem(
                    join_path(epath, "values"),
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
        if isinstance(e.get("key"), str):
            _qualified_name(errs, join_path(epath, "key"), e["key"])


def _node_selector_requirement(errs: _Errors, path: str, req: Any, fields: bool) -> None:
    r = _m(req)
    op = r.get("operator")
    values = _l(r.get("values"))
    if fields:
        # ValidateNodeFieldSelectorRequirement: only metadata.name, In/NotIn, one value.
        if r.get("key") != "metadata.name":
            errs.invalid(join_path(path, "key"), r.get("key"), "not a valid field selector key")
        errs.enum(join_path(path, "operator"), op, ("In", "NotIn"), optional=False)
        if op in ("In", "NotIn") and len(values) != 1:
            errs.required(
                join_path(path, "values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
        return
    errs.enum(join_path(path, "operator"), op, _NODE_SELECTOR_OPS, optional=False)
    if op in ("In", "NotIn") and not values:
        errs.required(
            join_path(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
        )
    elif op in ("Exists", "DoesNotExist") and values:
        errs.items.append(
            Problem(
                join_path(path, "values"),
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        )
    elif op in ("Gt", "Lt") and (
        len(values) != 1 or not re.fullmatch(r"[+-]?[0-9]+", str(values[0]))
    ):
        errs.required(
            join_path(path, "values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )
    if isinstance(r.get("key"), str):
        _qualified_name(errs, join_path(path, "key"), r["key"])


def _node_selector_term(errs: _Errors, path: str, term: Any) -> None:
    t = _m(term)
    for i, req in enumerate(_l(t.get("matchExpressions"))):
        _node_selector_requirement(errs, join_path(path, f"matchExpressions[{i}]"), req, False)
    for i, req in enumerate(_l(t.get("matchFields"))):
        _node_selector_requirement(errs, join_path(path, f"matchFields[{i}]"), req, True)


def _affinity(errs: _Errors, path: str, affinity: Any) -> None:
    a = _m(affinity)
    na = _m(a.get("nodeAffinity"))
    required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    rpath = join_path(path, "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        terms = _l(_m(required).get("nodeSelectorTerms"))
        if not terms:
            errs.required(
                join_path(rpath, "nodeSelectorTerms"), "must have at least one node selector term"
            )
        for i, term in enumerate(terms):
            _node_selector_term(errs, join_path(rpath, f"nodeSelectorTerms[{i}]"), term)
    ppath = join_path(path, "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution")
    for i, pref in enumerate(_l(na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        p = _m(pref)
        errs.int_range(join_path(ppath, f"[{i}].weight"), p.get("weight"), 1, 100)
        _node_selector_term(errs, join_path(ppath, f"[{i}].preference"), p.get("preference"))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = _m(a.get(kind))
        base = join_path(path, kind)
        req = "requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(_l(pa.get(req))):
            _pod_affinity_term(errs, join_path(base, f"{req}[{i}]"), term)
        pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
        for i, weighted in enumerate(_l(pa.get(pref_key))):
            w = _m(weighted)
            wpath = join_path(base, f"{pref_key}[{i}]")
            errs.int_range(join_path(wpath, "weight"), w.get("weight"), 1, 100)
            _pod_affinity_term(errs, join_path(wpath, "podAffinityTerm"), w.get("podAffinityTerm"))


def _pod_affinity_term(errs: _Errors, path: str, term: Any) -> None:
    t = _m(term)
    key = t.get("topologyKey")
    if not key:
        errs.required(join_path(path, "topologyKey"), "can not be empty")
    else:
        _qualified_name(errs, join_path(path, "topologyKey"), key)
    _label_selector(errs, join_path(path, "labelSelector"), t.get("labelSelector"))
    _label_selector(errs, join_path(path, "namespaceSelector"), t.get("namespaceSelector"))


def _tolerations(errs: _Errors, path: str, tolerations: Any) -> None:
    """validateTolerations."""
    for i, tol in enumerate(_l(tolerations)):
        tpath = join_path(path, f"[{i}]")
        t = _m(tol)
        key, op, value = t.get("key") or "", t.get("operator") or "", t.get("value") or ""
        if key:
            _qualified_name(errs, join_path(tpath, "key"), key)
        if not key and op != "Exists":
            errs.invalid(
                join_path(tpath, "operator"),
                op,
                'operator must be Exists when `key` is empty, which means "match all values '
                'and all keys"',
            )
        if t.get("tolerationSeconds") is not None and t.get("effect") != "NoExecute":
            errs.invalid(
                join_path(tpath, "effect"),
                t.get("effect") or "",
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        if op == "Exists" and value:
            errs.invalid(
                join_path(tpath, "operator"), op, "value must be empty when `operator` is 'Exists'"
            )
        elif op not in ("", "Equal", "Exists"):
            errs.unsupported(join_path(tpath, "operator"), op, ("Equal", "Exists"))
        elif value:
            _label_value(errs, join_path(tpath, "value"), value)
        errs.enum(join_path(tpath, "effect"), t.get("effect"), _TAINT_EFFECTS, optional=True)


def _topology_spread(errs: _Errors, path: str, constraints: Any) -> None:
    """validateTopologySpreadConstraints."""
    seen: set[tuple[Any, Any]] = set()
    for i, c in enumerate(_l(constraints)):
        cpath = join_path(path, f"[{i}]")
        m = _m(c)
        skew = m.get("maxSkew")
        if isinstance(skew, int | float) and skew <= 0:
            errs.invalid(join_path(cpath, "maxSkew"), skew, "must be greater than zero")
        errs.int_range(join_path(cpath, "maxSkew"), skew, INT32_MIN, INT32_MAX)
        key = m.get("topologyKey")
        if not key:
            errs.required(join_path(cpath, "topologyKey"), "can not be empty")
        else:
            _qualified_name(errs, join_path(cpath, "topologyKey"), key)
        when = m.get("whenUnsatisfiable")
        errs.enum(
            join_path(cpath, "whenUnsatisfiable"),
            when,
            ("DoNotSchedule", "ScheduleAnyway"),
            optional=False,
        )
        pair = (key, when)
        if pair in seen:
            errs.duplicate(join_path(cpath, "{topologyKey, whenUnsatisfiable}"), f"{key}, {when}")
        seen.add(pair)
        min_domains = m.get("minDomains")
        if min_domains is not None:
            if isinstance(min_domains, int | float) and min_domains <= 0:
                errs.invalid(join_path(cpath, "minDomains"), min_domains, "must be greater than 0")
            elif when != "DoNotSchedule":
                errs.invalid(
                    join_path(cpath, "minDomains"),
                    min_domains,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}",
                )
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            errs.enum(join_path(cpath, policy), m.get(policy), ("Honor", "Ignore"), optional=True)
        _label_selector(errs, join_path(cpath, "labelSelector"), m.get("labelSelector"))


# --- pods ------------------------------------------------------------------------------


def _containers(errs: _Errors, path: str, containers: Any, names: set[str], init: bool) -> None:
    for i, raw in enumerate(_l(containers)):
        cpath = join_path(path, f"[{i}]")
        c = _m(raw)
        name = c.get("name")
        if not name:
            errs.required(join_path(cpath, "name"))
        elif name in names:
            errs.duplicate(join_path(cpath, "name"), name)
        else:
            _dns_label(errs, join_path(cpath, "name"), name)
        if isinstance(name, str):
            names.add(name)
        image = c.get("image")
        if not image:
            errs.required(join_path(cpath, "image"))
        _resource_requirements(errs, join_path(cpath, "resources"), c.get("resources"))
        for j, port in enumerate(_l(c.get("ports"))):
            ppath = join_path(cpath, f"ports[{j}]")
            p = _m(port)
            errs.int_range(join_path(ppath, "containerPort"), p.get("containerPort"), 1, 65535)
            host_port = p.get("hostPort")
            if host_port:
                errs.int_range(join_path(ppath, "hostPort"), host_port, 1, 65535)
            errs.enum(join_path(ppath, "protocol"), p.get("protocol"), ("SCTP", "TCP", "UDP"), True)
        if init:
            errs.enum(join_path(cpath, "restartPolicy"), c.get("restartPolicy"), ("Always",), True)


def pod_spec_problems(
    errs: _Errors, path: str, spec: Any, restart_policies: tuple[str, ...]
) -> None:
    """ValidatePodSpec, the parts that matter to scheduling."""
    s = _m(spec)
    containers = _l(s.get("containers"))
    if not containers:
        errs.required(join_path(path, "containers"))
    names: set[str] = set()
    _containers(errs, join_path(path, "containers"), containers, names, init=False)
    _containers(errs, join_path(path, "initContainers"), s.get("initContainers"), names, True)
    _resource_list(errs, join_path(path, "overhead"), s.get("overhead"))
    errs.enum(join_path(path, "restartPolicy"), s.get("restartPolicy"), restart_policies, True)
    errs.int_range(join_path(path, "priority"), s.get("priority"), INT32_MIN, INT32_MAX)
    errs.enum(
        join_path(path, "preemptionPolicy"),
        s.get("preemptionPolicy"),
        ("Never", "PreemptLowerPriority"),
        optional=True,
    )
    for key in ("nodeName", "priorityClassName", "schedulerName"):
        value = s.get(key)
        if isinstance(value, str) and value:
            _dns_subdomain(errs, join_path(path, key), value)
    _labels(errs, join_path(path, "nodeSelector"), s.get("nodeSelector"))
    _affinity(errs, join_path(path, "affinity"), s.get("affinity"))
    _tolerations(errs, join_path(path, "tolerations"), s.get("tolerations"))
    _topology_spread(
        errs, join_path(path, "topologySpreadConstraints"), s.get("topologySpreadConstraints")
    )
    for i, gate in enumerate(_l(s.get("schedulingGates"))):
        name = _m(gate).get("name")
        if isinstance(name, str):
            _qualified_name(errs, join_path(path, f"schedulingGates[{i}].name"), name)


_ALL_RESTART = ("Always", "Never", "OnFailure")


def _pod(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    _metadata(errs, manifest.get("metadata"), "subdomain", namespaced=True)
    pod_spec_problems(errs, "spec", manifest.get("spec"), _ALL_RESTART)


def _node(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    """ValidateNode: the name, taints, and non-negative capacity and allocatable."""
    _metadata(errs, manifest.get("metadata"), "subdomain", namespaced=False)
    spec = _m(manifest.get("spec"))
    seen: set[tuple[Any, Any]] = set()
    for i, taint in enumerate(_l(spec.get("taints"))):
        tpath = f"spec.taints[{i}]"
        t = _m(taint)
        key = t.get("key")
        if not key:
            errs.required(join_path(tpath, "key"))
        else:
            _qualified_name(errs, join_path(tpath, "key"), key)
        if isinstance(t.get("value"), str) and t["value"]:
            _label_value(errs, join_path(tpath, "value"), t["value"])
        errs.enum(join_path(tpath, "effect"), t.get("effect"), _TAINT_EFFECTS, optional=False)
        pair = (key, t.get("effect"))
        if pair in seen:
            errs.duplicate(tpath, f"{key}:{t.get('effect')}")
        seen.add(pair)
    status = _m(manifest.get("status"))
    for part in ("capacity", "allocatable"):
        _resource_list(errs, f"status.{part}", status.get(part))


def _template(errs: _Errors, kind: str, spec: Mapping[str, Any], path: str) -> None:
    """ValidatePodTemplateSpec under a workload, plus the selector's match of its labels."""
    template = _m(spec.get("template"))
    tpath = join_path(path, "template")
    meta = _m(template.get("metadata"))
    _labels(errs, join_path(tpath, "metadata.labels"), meta.get("labels"))
    restart = ("OnFailure", "Never") if kind in ("Job", "CronJob") else ("Always",)
    tspec = _m(template.get("spec"))
    if kind in ("Job", "CronJob") and not tspec.get("restartPolicy"):
        # A Job's template defaults to Always, which the Job validation then refuses.
        errs.unsupported(join_path(tpath, "spec.restartPolicy"), "Always", restart)
    pod_spec_problems(errs, join_path(tpath, "spec"), tspec, restart)
    if kind in ("Job", "CronJob"):
        return
    selector = spec.get("selector")
    spath = join_path(path, "selector")
    sel = _m(selector)
    if not sel.get("matchLabels") and not sel.get("matchExpressions"):
        errs.invalid(spath, selector or {}, f"empty selector is invalid for {kind.lower()}")
        return
    _label_selector(errs, spath, selector)
    labels = _m(meta.get("labels"))
    if not _selector_matches(sel, labels):
        errs.invalid(
            join_path(tpath, "metadata.labels"),
            dict(labels),
            "`selector` does not match template `labels`",
        )


def _selector_matches(sel: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    for k, v in _m(sel.get("matchLabels")).items():
        if labels.get(k) != v:
            return False
    for expr in _l(sel.get("matchExpressions")):
        e = _m(expr)
        key, op, values = str(e.get("key")), e.get("operator"), _l(e.get("values"))
        has = key in labels
        if op == "In" and not (has and labels[key] in values):
            return False
        if op == "NotIn" and has and labels[key] in values:
            return False
        if op == "Exists" and not has:
            return False
        if op == "DoesNotExist" and has:
            return False
    return True


def _workload(errs: _Errors, kind: str, manifest: Mapping[str, Any]) -> None:
    _metadata(errs, manifest.get("metadata"), "subdomain", namespaced=True)
    spec = _m(manifest.get("spec"))
    if kind == "CronJob":
        if not spec.get("schedule"):
            errs.required("spec.schedule")
        spec = _m(_m(spec.get("jobTemplate")).get("spec"))
        path = "spec.jobTemplate.spec"
    else:
        path = "spec"
    for key in ("replicas", "parallelism", "completions", "backoffLimit", "minReadySeconds"):
        value = spec.get(key)
        if isinstance(value, int | float) and value < 0:
            errs.invalid(join_path(path, key), value, "must be greater than or equal to 0")
        errs.int_range(join_path(path, key), value, INT32_MIN, INT32_MAX)
    if kind == "StatefulSet":
        errs.enum(
            "spec.podManagementPolicy",
            spec.get("podManagementPolicy"),
            ("OrderedReady", "Parallel"),
            optional=True,
        )
        start = _m(spec.get("ordinals")).get("start")
        if isinstance(start, int) and start < 0:
            errs.invalid("spec.ordinals.start", start, "must be greater than or equal to 0")
    if kind in ("Job", "CronJob"):
        errs.enum(
            join_path(path, "completionMode"),
            spec.get("completionMode"),
            ("Indexed", "NonIndexed"),
            optional=True,
        )
    if "template" not in spec:
        errs.required(join_path(path, "template"))
        return
    _template(errs, kind, spec, path)


def _priority_class(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    """ValidatePriorityClass."""
    meta = _m(manifest.get("metadata"))
    _metadata(errs, meta, "subdomain", namespaced=False)
    name = meta.get("name")
    value = manifest.get("value")
    errs.int_range("value", value, INT32_MIN, INT32_MAX)
    system = isinstance(name, str) and name.startswith("system-")
    if not system and isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.invalid(
            "value",
            value,
            f"maximum allowed value of a user defined priority is "
            f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
        )
    errs.enum(
        "preemptionPolicy",
        manifest.get("preemptionPolicy"),
        ("Never", "PreemptLowerPriority"),
        optional=True,
    )


def _runtime_class(errs: _Errors, manifest: Mapping[str, Any]) -> None:
    _metadata(errs, manifest.get("metadata"), "subdomain", namespaced=False)
    fixed = _m(manifest.get("overhead")).get("podFixed")
    _resource_list(errs, "overhead.podFixed", fixed)


# resource.k8s.io/v1 kinds (their own rules: resource_rules.py).
_DRA_NAMESPACED = frozenset({"ResourceClaim", "ResourceClaimTemplate"})
_DRA_CLUSTER_SCOPED = frozenset({"DeviceClass", "ResourceSlice", "DeviceTaintRule"})
_WORKLOADS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"})


def object_problems(kind: str, manifest: Mapping[str, Any]) -> list[Problem]:
    """The API server's validation problems of one object (structurally valid already)."""
    errs = _Errors()
    if kind == "Pod":
        _pod(errs, manifest)
    elif kind == "Node":
        _node(errs, manifest)
    elif kind in _WORKLOADS:
        _workload(errs, kind, manifest)
    elif kind == "PriorityClass":
        _priority_class(errs, manifest)
    elif kind == "RuntimeClass":
        _runtime_class(errs, manifest)
    elif kind in _DRA_NAMESPACED:
        _metadata(errs, manifest.get("metadata"), "subdomain", namespaced=True)
    elif kind in _DRA_CLUSTER_SCOPED:
        _metadata(errs, manifest.get("metadata"), "subdomain", namespaced=False)
    return errs.items
