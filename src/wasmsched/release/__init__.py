"""The Kubernetes release that wasmsched models for a run: its version and feature gates.

A run reads its input and schedules as one kube-scheduler release does (``1.33`` to
``1.37``). The version and the gates enter where a profile is built and travel with it;
the object schema (api/validation) follows the same version.
"""

from wasmsched.release.feature_gates import FeatureGateError, FeatureGates, parse_feature_gates
from wasmsched.release.version import (
    DEFAULT_KUBERNETES_VERSION,
    SUPPORTED_VERSIONS,
    KubernetesVersion,
    VersionError,
    parse_kubernetes_version,
    requested_kubernetes_version,
)

__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "SUPPORTED_VERSIONS",
    "FeatureGateError",
    "FeatureGates",
    "KubernetesVersion",
    "VersionError",
    "parse_feature_gates",
    "parse_kubernetes_version",
    "requested_kubernetes_version",
]
