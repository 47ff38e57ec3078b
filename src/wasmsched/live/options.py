"""The live scheduler's options: leader election, and the release it schedules as.

kube-scheduler reads ``leaderElection`` (leaderElect, leaseDuration, renewDeadline,
retryPeriod, resourceLock, resourceName, resourceNamespace) from its configuration; the
``--leader-elect*`` flags override it here. Only the ``leases`` lock exists.

A kube-scheduler binary is one release; wasmsched models several and, unless told one
(``RunOptions.kubernetes_version``), schedules as the release of the API server it runs
against, read from ``/version`` as ``wasmsched snapshot`` records it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wasmsched.config.loader import parse_duration
from wasmsched.live.client import ApiClient, ApiError
from wasmsched.live.leader import LeaseConfig
from wasmsched.live.runner import RunOptions
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import (
    DEFAULT_KUBERNETES_VERSION,
    SUPPORTED_VERSIONS,
    VersionError,
    nearest_supported,
    read_kubernetes_version,
)

log = logging.getLogger("wasmsched.live")

# Backoff of the first call, /version, while the API server does not answer.
VERSION_RETRY_INITIAL = 0.5
VERSION_RETRY_MAX = 30.0


@dataclass(frozen=True)
class LeaderElectionFlags:
    """The flags as given; None when not given."""

    leader_elect: bool | None = None
    lease_duration: str | None = None
    renew_deadline: str | None = None
    retry_period: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None


def _section(config_path: Path | None) -> Mapping[str, Any]:
    if config_path is None:
        return {}
    try:
        data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}  # load_config has reported the file's problems already
    section = data.get("leaderElection") if isinstance(data, Mapping) else None
    return section if isinstance(section, Mapping) else {}


def _duration(value: Any, what: str, default: float) -> float:
    if value is None:
        return default
    seconds = parse_duration(str(value))
    if seconds is None or seconds <= 0:
        raise ValueError(f"{what}: invalid duration {value!r} (expected e.g. 15s)")
    return seconds


def leader_election_options(config_path: Path | None, flags: LeaderElectionFlags) -> RunOptions:
    """RunOptions with the leader election settings; raises ValueError for bad values."""
    section = _section(config_path)
    lock = section.get("resourceLock")
    if lock not in (None, "", "leases"):
        raise ValueError(f"leaderElection.resourceLock: unsupported lock {lock!r} (only leases)")
    defaults = LeaseConfig()

    def pick(flag: Any, key: str) -> Any:
        return flag if flag is not None else section.get(key)

    elect = pick(flags.leader_elect, "leaderElect")
    lease = LeaseConfig(
        namespace=str(pick(flags.resource_namespace, "resourceNamespace") or defaults.namespace),
        name=str(pick(flags.resource_name, "resourceName") or defaults.name),
        lease_duration=_duration(
            pick(flags.lease_duration, "leaseDuration"),
            "leader-elect-lease-duration",
            defaults.lease_duration,
        ),
        renew_deadline=_duration(
            pick(flags.renew_deadline, "renewDeadline"),
            "leader-elect-renew-deadline",
            defaults.renew_deadline,
        ),
        retry_period=_duration(
            pick(flags.retry_period, "retryPeriod"),
            "leader-elect-retry-period",
            defaults.retry_period,
        ),
    )
    lease.validate()
    return RunOptions(leader_elect=True if elect is None else bool(elect), lease=lease)


def scheduler_features(
    api: ApiClient, options: RunOptions, sleep: Callable[[float], None] = time.sleep
) -> SchedulerFeatures:
    """The release ``wasmsched run`` schedules as, with ``options.feature_gates`` applied:
    ``options.kubernetes_version``, else the API server's (``/version``), the nearest
    modelled release with a warning when the server's is not one, the default release with
    a warning when the server does not say. FeatureGateError for gates that release's
    kube-scheduler would refuse."""
    version = options.kubernetes_version
    if version is None:
        server = _server_version(api, sleep)
        if server is None:
            version = DEFAULT_KUBERNETES_VERSION
            log.warning(
                "the API server does not tell its version (/version): scheduling as "
                "kube-scheduler %s",
                version,
            )
        else:
            try:
                found = read_kubernetes_version(server)
            except VersionError:
                found = DEFAULT_KUBERNETES_VERSION
                log.warning(
                    "API server version %r is not a Kubernetes version: scheduling as "
                    "kube-scheduler %s",
                    server,
                    found,
                )
            version = nearest_supported(found)
            if version != found:
                log.warning(
                    "API server %s: wasmsched models Kubernetes %s to %s; scheduling as "
                    "kube-scheduler %s",
                    server,
                    SUPPORTED_VERSIONS[0],
                    SUPPORTED_VERSIONS[-1],
                    version,
                )
    log.info("scheduling as kube-scheduler release=%s", version)
    return SchedulerFeatures.of(version, options.feature_gates)


def _server_version(api: ApiClient, sleep: Callable[[float], None]) -> str | None:
    """``/version``, asked until the server answers: a scheduler may start before its API
    server does, as its informers would wait for it (client-go's reflector retries)."""
    delay = VERSION_RETRY_INITIAL
    while True:
        try:
            return api.server_version()
        except ApiError as err:
            if err.status != 0 and err.status < 500:
                raise
            log.warning("waiting for the API server's version error=%r", str(err))
        sleep(delay)
        delay = min(delay * 2, VERSION_RETRY_MAX)
