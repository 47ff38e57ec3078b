"""Devices' binding conditions (DRADeviceBindingConditions with
DRAResourceClaimDeviceStatus): an allocated device that has ``bindingConditions`` may be
used only once its driver reports them all True in the claim's ``status.devices``; one of
its ``bindingFailureConditions`` True means it cannot be.

Mirrors pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go (v1.37.2):
isClaimReadyForBinding, isClaimTimeout, hasBindingConditions, and PreBind's wait
(wait.PollUntilContextTimeout every 5 s up to the plugin's ``bindingTimeout``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from wasmsched.plugins.dynamic_resources.claims import as_list, as_mapping, meta_of

__all__ = [
    "BINDING_POLL_INTERVAL",
    "DEFAULT_BINDING_TIMEOUT",
    "TIMEOUT_MESSAGE",
    "claim_readiness",
    "claim_timed_out",
    "has_binding_conditions",
]

Manifest = Mapping[str, Any]

# config.DynamicResourcesBindingTimeoutDefault; PreBind polls every 5 seconds.
DEFAULT_BINDING_TIMEOUT = 600.0
BINDING_POLL_INTERVAL = 5.0
# ErrDeviceBindingTimeout wrapping the poll's context.DeadlineExceeded.
TIMEOUT_MESSAGE = "device binding timeout: context deadline exceeded"


def _results(claim: Manifest) -> list[Mapping[str, Any]]:
    allocation = as_mapping(as_mapping(claim.get("status")).get("allocation"))
    return [as_mapping(r) for r in as_list(as_mapping(allocation.get("devices")).get("results"))]


def has_binding_conditions(claims: Iterable[Manifest]) -> bool:
    """hasBindingConditions: an allocated device of one of the claims has some."""
    return any(r.get("bindingConditions") for c in claims for r in _results(c))


def _condition(conditions: list[Any], kind: str) -> Mapping[str, Any] | None:
    """apimeta.FindStatusCondition."""
    for c in conditions:
        if as_mapping(c).get("type") == kind:
            return as_mapping(c)
    return None


def claim_readiness(claim: Manifest) -> tuple[bool, str | None]:
    """isClaimReadyForBinding: (ready, why binding failed). Ready when every allocated
    device with binding conditions has them all True in ``status.devices`` (an allocated
    claim without any is ready; an unallocated one is not); a True binding failure
    condition is ErrDeviceBindingFailed, with the condition's reason and message."""
    status = as_mapping(claim.get("status"))
    if status.get("allocation") is None:
        return False, None
    devices = as_list(status.get("devices"))
    for result in _results(claim):
        wanted = as_list(result.get("bindingConditions"))
        if not wanted:
            continue
        device = next(
            (
                as_mapping(d)
                for d in devices
                if as_mapping(d).get("device") == result.get("device")
                and as_mapping(d).get("driver") == result.get("driver")
                and as_mapping(d).get("pool") == result.get("pool")
            ),
            None,
        )
        if device is None:
            return False, None
        conditions = as_list(device.get("conditions"))
        for kind in as_list(result.get("bindingFailureConditions")):
            failed = _condition(conditions, kind)
            if failed is not None and failed.get("status") == "True":
                # fmt %q of the message: a Go-quoted string.
                return False, (
                    f"device binding failed: claim={meta_of(claim).get('name')}, "
                    f"reason={failed.get('reason') or ''}, "
                    f"message={json.dumps(str(failed.get('message') or ''), ensure_ascii=False)}"
                )
        for kind in wanted:
            held = _condition(conditions, kind)
            if held is None or held.get("status") != "True":
                return False, None
    return True, None


def claim_timed_out(claim: Manifest, timeout: float, now: float) -> bool:
    """isClaimTimeout: the claim was allocated (``allocationTimestamp``) more than
    ``timeout`` seconds before ``now`` and one of its devices has binding conditions."""
    allocation = as_mapping(as_mapping(claim.get("status")).get("allocation"))
    stamp = allocation.get("allocationTimestamp")
    if not isinstance(stamp, str):
        return False
    try:
        allocated = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return False
    if allocated.timestamp() + timeout >= now:
        return False
    return any(r.get("bindingConditions") is not None for r in _results(claim))
