"""What the API server's admission would have done to pods loaded from manifests.

Manifests written by hand (or exported) may lack what admission fills in on a real
cluster: the Priority plugin's spec.priority and preemptionPolicy from the PriorityClass,
and the RuntimeClass plugin's spec.overhead. The simulator applies both at load.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from wasmsched.api.objects import Pod

log = logging.getLogger("wasmsched.admission")

# PriorityClasses every API server has (scheduling/v1 SystemPriorityClasses).
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}


def resolve_priorities(pods: Iterable[Pod], others: Iterable[Mapping[str, Any]]) -> list[Pod]:
    """Pods with spec.priority (and preemptionPolicy) filled from their PriorityClass, as the
    Priority admission plugin does; a pod without a class gets the globalDefault one.

    A pod that already has spec.priority is kept as it is (it went through admission).
    """
    classes: dict[str, tuple[int, str | None]] = {
        name: (value, None) for name, value in SYSTEM_PRIORITY_CLASSES.items()
    }
    default: tuple[str, int, str | None] | None = None
    for m in others:
        if m.get("kind") != "PriorityClass":
            continue
        name = str((m.get("metadata") or {}).get("name") or "")
        value = m.get("value")
        if not name or not isinstance(value, int):
            continue
        policy = m.get("preemptionPolicy")
        policy = policy if isinstance(policy, str) else None
        classes[name] = (value, policy)
        # Admission picks the highest-valued globalDefault class.
        if m.get("globalDefault") is True and (default is None or value > default[1]):
            default = (name, value, policy)
    out: list[Pod] = []
    for pod in pods:
        spec = pod.spec
        if spec.get("priority") is not None:
            out.append(pod)
            continue
        name = pod.priority_class_name
        if name:
            found = classes.get(name)
            if found is None:
                log.warning("pod %s: no PriorityClass with name %s was found", pod.key, name)
                out.append(pod)
                continue
            value, policy = found
        elif default is not None:
            name, value, policy = default
        else:
            out.append(pod)
            continue
        new_spec = dict(spec)
        new_spec["priority"] = value
        new_spec["priorityClassName"] = name
        if policy is not None and not spec.get("preemptionPolicy"):
            new_spec["preemptionPolicy"] = policy
        out.append(Pod({**pod.manifest, "spec": new_spec}))
    return out


def apply_runtime_class_overhead(
    pods: Iterable[Pod], others: Iterable[Mapping[str, Any]]
) -> list[Pod]:
    """Pods with spec.overhead set from their RuntimeClass's overhead.podFixed, as the
    RuntimeClass admission plugin does; a pod that already has an overhead is kept."""
    overheads: dict[str, Mapping[str, Any]] = {}
    for m in others:
        if m.get("kind") != "RuntimeClass":
            continue
        name = str((m.get("metadata") or {}).get("name") or "")
        fixed = (m.get("overhead") or {}).get("podFixed")
        if name and isinstance(fixed, Mapping) and fixed:
            overheads[name] = fixed
    out: list[Pod] = []
    for pod in pods:
        runtime_class = pod.spec.get("runtimeClassName")
        fixed = overheads.get(runtime_class) if isinstance(runtime_class, str) else None
        if fixed is None or pod.spec.get("overhead"):
            out.append(pod)
            continue
        out.append(Pod({**pod.manifest, "spec": {**pod.spec, "overhead": dict(fixed)}}))
    return out


def admit_pods(pods: Iterable[Pod], others: Iterable[Mapping[str, Any]]) -> list[Pod]:
    """Priority and RuntimeClass admission, in that order."""
    objects = list(others)
    return apply_runtime_class_overhead(resolve_priorities(pods, objects), objects)
