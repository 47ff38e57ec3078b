"""The Kubernetes minor versions whose objects wasmsched reads, and parsing a version.

A version is a minor release, ``1.33`` to ``1.37``: the object schema (api/validation) and,
once a profile is built for it, the scheduler's semantics follow that release. Users name it
as kube tools print it (``1.37``, ``v1.37.2``, a server's ``gitVersion`` such as
``v1.37.2-eks-4b1c3a``); the patch level and build suffix do not change what is modelled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wasmsched.errors import InputError

__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "SUPPORTED_VERSIONS",
    "KubernetesVersion",
    "VersionError",
    "nearest_supported",
    "parse_kubernetes_version",
    "read_kubernetes_version",
    "requested_kubernetes_version",
]


class VersionError(InputError):
    """A Kubernetes version that is not one wasmsched models, or not a version at all."""


@dataclass(frozen=True, order=True)
class KubernetesVersion:
    """A Kubernetes minor release (``major.minor``)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


SUPPORTED_VERSIONS: tuple[KubernetesVersion, ...] = tuple(
    KubernetesVersion(1, minor) for minor in range(33, 38)
)
# The version an input is read as when nothing names one. It stays the oldest modelled
# release until the newer ones' scheduling semantics are in (issue "Current Kubernetes").
DEFAULT_KUBERNETES_VERSION = SUPPORTED_VERSIONS[-1]

_SUPPORTED = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
# "1.37", "v1.37", "1.37.2", "v1.37.2-eks-4b1c3a", "v1.37.2+k3s1".
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?")


def read_kubernetes_version(text: str) -> KubernetesVersion:
    """The minor release that ``text`` names, modelled or not; VersionError (one line) when
    it is not a version."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise VersionError(
            f"Kubernetes version {text!r} is not a version (expected MAJOR.MINOR, such as "
            f"{SUPPORTED_VERSIONS[-1]}; supported: {_SUPPORTED})"
        )
    return KubernetesVersion(int(match[1]), int(match[2]))


def parse_kubernetes_version(text: str) -> KubernetesVersion:
    """The minor release that ``text`` names; VersionError (one line) when it names none
    that wasmsched models."""
    version = read_kubernetes_version(text)
    if version not in SUPPORTED_VERSIONS:
        raise VersionError(
            f"Kubernetes version {text!r} is not supported (supported: {_SUPPORTED})"
        )
    return version


def requested_kubernetes_version(
    value: str | KubernetesVersion | None,
) -> KubernetesVersion | None:
    """A release asked for by a flag, an API argument or a sweep's run spec: None when none
    was (the caller then takes the snapshot's or the default), else the modelled release."""
    if value is None or isinstance(value, KubernetesVersion):
        return value
    return parse_kubernetes_version(value)


def nearest_supported(version: KubernetesVersion) -> KubernetesVersion:
    """The modelled release nearest ``version`` (the oldest or the newest)."""
    return min(SUPPORTED_VERSIONS[-1], max(SUPPORTED_VERSIONS[0], version))
