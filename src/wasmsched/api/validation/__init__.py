"""Validation of manifests as the API server of one Kubernetes release would do it.

``validate_object(kind, manifest, version)`` returns every problem of one object: first the
strict structural check against that release's schema (unknown fields, wrong types, required
fields; schema.py), then, when the structure is sound, the API server's semantic rules
(negative quantities, names, enums, ranges, requests within limits; rules.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.api.validation.problems import Problem
from wasmsched.api.validation.resource_rules import (
    pod_resource_claim_problems,
    resource_problems,
)
from wasmsched.api.validation.rules import object_problems
from wasmsched.api.validation.schema import SCHEMA_KINDS, schema_problems
from wasmsched.release.version import DEFAULT_KUBERNETES_VERSION, KubernetesVersion

__all__ = ["SCHEMA_KINDS", "Problem", "validate_object"]


def validate_object(
    kind: str,
    manifest: Mapping[str, Any],
    version: KubernetesVersion = DEFAULT_KUBERNETES_VERSION,
) -> list[Problem]:
    """Every problem of ``manifest``; empty when the API server of Kubernetes ``version``
    would accept it.

    Kinds outside SCHEMA_KINDS are not checked (an empty list)."""
    if kind not in SCHEMA_KINDS:
        return []
    problems = schema_problems(kind, manifest, version)
    if problems:
        return problems
    problems = object_problems(kind, manifest)
    if kind == "Pod":
        spec = manifest.get("spec")
        if isinstance(spec, Mapping):
            problems += pod_resource_claim_problems(spec)
    return problems + resource_problems(kind, manifest)
