"""Leader election settings: command line flags over the config file's ``leaderElection``.

kube-scheduler reads ``leaderElection`` (leaderElect, leaseDuration, renewDeadline,
retryPeriod, resourceLock, resourceName, resourceNamespace) from its configuration; the
``--leader-elect*`` flags override it here. Only the ``leases`` lock exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wasmsched.config.loader import parse_duration
from wasmsched.live.leader import LeaseConfig
from wasmsched.live.runner import RunOptions


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
