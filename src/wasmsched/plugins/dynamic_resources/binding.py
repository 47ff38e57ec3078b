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
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from wasmsched.config.loader import parse_duration
from wasmsched.errors import InputError
from wasmsched.framework.interfaces import Event
from wasmsched.framework.records import PreBindWaiting
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.dynamic_resources.claims import ClaimError, as_list, as_mapping, meta_of

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.interfaces import Handle
    from wasmsched.plugins.dynamic_resources.state import StateData
    from wasmsched.plugins.dynamic_resources.tracker import ClaimTracker
    from wasmsched.release.features import SchedulerFeatures

__all__ = [
    "BINDING_POLL_INTERVAL",
    "DEFAULT_BINDING_TIMEOUT",
    "TIMEOUT_MESSAGE",
    "binding_failed",
    "binding_timeout",
    "claim_readiness",
    "claim_timed_out",
    "has_binding_conditions",
    "pod_ready_for_binding",
    "wait_for_devices",
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


def binding_failed(claim: Manifest, timeout: float, now: float) -> bool:
    """Filter's check of an allocated claim (dynamicresources.go: Filter): not ready for
    binding, and a binding failure condition True or ``timeout`` passed since its
    allocation (PostFilter may then deallocate it)."""
    ready, failed = claim_readiness(claim)
    if failed is not None:
        return True
    return not ready and claim_timed_out(claim, timeout, now)


def pod_ready_for_binding(
    s: StateData, get: Callable[[str, str], Manifest], timeout: float, now: float
) -> tuple[bool, Status | None]:
    """isPodReadyForBinding over the pod's claims as ``get(namespace, name)`` has them
    now (each kept in ``s``): (decided, PreBind's answer). Not decided while a device's
    binding conditions are not all True; an Error once one of its binding failure
    conditions is True, or once a claim was allocated more than ``timeout`` ago."""
    for info in s.claims:
        meta = meta_of(info.claim)
        try:
            claim = get(str(meta.get("namespace") or "default"), str(meta.get("name")))
        except ClaimError as err:
            if info is not s.extended or not s.extended_created():
                return True, Status(Code.ERROR, str(err))
            # The live mode shows a claim it created under the server's name once its
            # writes ended: the version PreBind wrote stands in.
            claim = info.claim
        info.claim = claim
        ready, failed = claim_readiness(claim)
        if failed is not None:
            return True, Status(Code.ERROR, failed)
        if not ready:
            if claim_timed_out(claim, timeout, now):
                name = meta_of(claim).get("name")
                return True, Status(Code.ERROR, f"device binding timeout: claim={name}")
            return False, None
    return True, None


def binding_timeout(args: Mapping[str, Any] | None, features: SchedulerFeatures) -> float:
    """DynamicResourcesArgs.bindingTimeout in seconds: a Go duration of at least 1s,
    default 10m, only with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    (validation_pluginargs.go: ValidateDynamicResourcesArgs). InputError otherwise."""
    raw = (args or {}).get("bindingTimeout")
    if raw is None:
        return DEFAULT_BINDING_TIMEOUT
    if not (features.dra_device_binding_conditions and features.dra_resource_claim_device_status):
        raise InputError(
            "args.bindingTimeout: Forbidden: DRADeviceBindingConditions or "
            "DRAResourceClaimDeviceStatus feature gate is disabled"
        )
    seconds = parse_duration(raw) if isinstance(raw, str) else None
    if seconds is None or seconds < 1:
        raise InputError(f"args.bindingTimeout: Invalid value: {raw!r}: must be at least 1 second")
    return seconds


def wait_for_devices(
    handle: Handle,
    pod: Pod,
    node_name: str,
    s: StateData,
    claims: Callable[[], ClaimTracker],
    timeout: float,
) -> Status | None:
    """The end of PreBind (dynamicresources.go: PreBind), once the claims are written:
    when a device has binding conditions, a ``BindingConditionsPending`` event, then
    isPodReadyForBinding at once and, undecided, a PreBindWaiting that the binding cycle
    polls every 5 s until ``timeout`` (wait.PollUntilContextTimeout). ``claims()``: the
    tracker, caught up with the handle's claims."""
    if not has_binding_conditions(info.claim for info in s.claims):
        return None
    handle.record_event(
        Event.about_pod(
            handle.now(),
            pod,
            "Normal",
            "BindingConditionsPending",
            "Scheduling",
            f"waiting for binding conditions for device on node {node_name}",
            "wasmsched",
        )
    )

    def poll() -> tuple[bool, Status | None]:
        return pod_ready_for_binding(s, claims().get, timeout, handle.now())

    done, status = poll()
    if done:
        return status
    return PreBindWaiting(poll, BINDING_POLL_INTERVAL, timeout, TIMEOUT_MESSAGE)
