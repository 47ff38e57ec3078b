"""ResourceClaims in the live mode: what DynamicResources writes to the API server, and the
claims the scheduler sees meanwhile.

DynamicResources hands the writer the new version of a claim it wants (PreBind: the
allocation Reserve made and the pod in ``status.reservedFor``; Unreserve: the pod taken
out; PostFilter: the claim deallocated). ``claim_change`` reads from it what the scheduler
decided, relative to the claim as the scheduler knew it, and ``write_claim`` makes that
change on the server the way kube-scheduler v1.37.2 does it
(pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go): bindClaim's
finalizer update, status update and retries on conflict; Unreserve's strategic merge patch;
deallocateOrDeletePodClaims' status update.

``ClaimCache`` is the scheduler's view of the claims: the informer's versions and the
answers to its own writes, whichever is newer (the DRA manager's assume cache,
k8s.io/dynamic-resource-allocation/.../assumecache: an object is replaced only by a newer
resourceVersion), so that a claim just written is not seen unallocated again while the
watch catches up.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wasmsched.api.dra import ALLOCATION_FINALIZER
from wasmsched.live.client import (
    RESOURCES,
    STRATEGIC_MERGE_PATCH,
    ApiClient,
    ApiError,
    FencedError,
)
from wasmsched.plugins.dynamic_resources.claims import claim_key

Manifest = Mapping[str, Any]

RESOURCE_CLAIMS = RESOURCES["ResourceClaim"]
# client-go util/retry.DefaultRetry: 5 steps of 10 ms, factor 1, jitter 0.1.
RETRY_STEPS = 5
RETRY_DELAY = 0.01
RETRY_JITTER = 0.1


class ClaimWriteError(Exception):
    """A claim write that did not happen; the message says why, as kube-scheduler does."""


def resource_version(claim: Manifest | None) -> int | None:
    """The resourceVersion as the assume cache compares it (an integer; None without one)."""
    rv = ((claim or {}).get("metadata") or {}).get("resourceVersion")
    try:
        return int(str(rv))
    except ValueError:
        return None


def newer(a: Manifest, b: Manifest | None) -> bool:
    """``a`` is a later version than ``b`` (assumecache: only a newer version replaces)."""
    va, vb = resource_version(a), resource_version(b)
    return b is None or va is None or vb is None or va > vb


def _status(claim: Manifest | None) -> Mapping[str, Any]:
    status = (claim or {}).get("status")
    return status if isinstance(status, Mapping) else {}


def _consumers(claim: Manifest | None) -> list[Mapping[str, Any]]:
    return [r for r in _status(claim).get("reservedFor") or () if isinstance(r, Mapping)]


@dataclass(frozen=True)
class ClaimChange:
    """What a claim's new version changes about the version it was made from: an
    allocation to write (with the finalizer), a deallocation, consumers added to or
    removed (by uid) from ``status.reservedFor``."""

    namespace: str
    name: str
    uid: str
    allocation: Mapping[str, Any] | None
    deallocate: bool
    reserve: tuple[Mapping[str, Any], ...]
    unreserve: frozenset[str]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def describe(self) -> str:
        """bindClaim's wording of the failed write."""
        if self.allocation is not None:
            return f"add allocation and reservation to claim {self.key}"
        return f"add reservation to claim {self.key}"


def claim_change(base: Manifest | None, desired: Manifest) -> ClaimChange:
    """The change from ``base`` (the claim as the scheduler knew it) to ``desired``."""
    meta = desired.get("metadata") or {}
    before, after = _status(base).get("allocation"), _status(desired).get("allocation")
    old = {str(r.get("uid")) for r in _consumers(base)}
    new = _consumers(desired)
    new_uids = {str(r.get("uid")) for r in new}
    return ClaimChange(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta.get("name") or ""),
        uid=str(meta.get("uid") or ""),
        allocation=after if before is None and isinstance(after, Mapping) else None,
        deallocate=before is not None and after is None,
        reserve=tuple(r for r in new if str(r.get("uid")) not in old),
        unreserve=frozenset(old - new_uids),
    )


def write_claim(
    api: ApiClient,
    change: ClaimChange,
    current: Manifest,
    desired: Manifest,
    guard: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Makes ``change`` on the server, starting from ``current`` (the newest version the
    scheduler knows); the server's answer. ClaimWriteError when it cannot be made,
    FencedError when ``guard`` withheld it."""
    path = RESOURCE_CLAIMS.object_path(change.namespace, change.name)
    if change.deallocate:
        # deallocateOrDeletePodClaims: one UpdateStatus of the claim without allocation,
        # reservations and device status; a conflict is an error for PostFilter.
        try:
            return api.request("PUT", f"{path}/status", body=desired, guard=guard)
        except FencedError:
            raise
        except ApiError as err:
            raise ClaimWriteError(f"deallocate claim {change.key}: {err}") from None
    if change.reserve or change.allocation is not None:
        return _bind_claim(api, path, change, current, guard)
    # Unreserve: a strategic merge patch removes the pod's entries without the latest
    # version of the list (the uid in metadata makes sure it is still the same claim).
    patch = {
        "metadata": {"uid": change.uid},
        "status": {
            "reservedFor": [{"$patch": "delete", "uid": u} for u in sorted(change.unreserve)]
        },
    }
    try:
        return api.request(
            "PATCH", f"{path}/status", body=patch, content_type=STRATEGIC_MERGE_PATCH, guard=guard
        )
    except FencedError:
        raise
    except ApiError as err:
        raise ClaimWriteError(f"unreserve claim {change.key}: {err}") from None


def _bind_claim(
    api: ApiClient,
    path: str,
    change: ClaimChange,
    current: Manifest,
    guard: Callable[[], bool] | None,
) -> dict[str, Any]:
    """bindClaim: the finalizer (a normal update), then the allocation and the reservation
    (UpdateStatus); on a conflict the claim is read again and the change made anew, up to
    DefaultRetry's five attempts."""
    claim: dict[str, Any] = _copy(current)
    for attempt in range(RETRY_STEPS):
        if attempt:
            time.sleep(RETRY_DELAY * (1 + RETRY_JITTER * random.random()))
            try:
                claim = api.request("GET", path)
            except ApiError as err:
                raise ClaimWriteError(
                    f"get updated claim {change.key} after conflict: {err}"
                ) from None
        try:
            return _bind_once(api, path, change, claim, guard)
        except FencedError:
            raise
        except ApiError as err:
            if not err.conflict or attempt == RETRY_STEPS - 1:
                raise ClaimWriteError(f"{change.describe()}: {err}") from None
    raise AssertionError("unreachable")


def _bind_once(
    api: ApiClient,
    path: str,
    change: ClaimChange,
    claim: dict[str, Any],
    guard: Callable[[], bool] | None,
) -> dict[str, Any]:
    meta = claim.setdefault("metadata", {})
    if meta.get("deletionTimestamp"):
        raise ClaimWriteError(f"claim {change.key} got deleted in the meantime")
    status = claim.setdefault("status", {})
    if change.allocation is not None:
        if status.get("allocation") is not None:
            raise ClaimWriteError(f"claim {change.key} got allocated elsewhere in the meantime")
        finalizers = list(meta.get("finalizers") or ())
        if ALLOCATION_FINALIZER not in finalizers:
            meta["finalizers"] = [*finalizers, ALLOCATION_FINALIZER]
            try:
                claim = api.request("PUT", path, body=claim, guard=guard)
            except ApiError as err:
                if err.conflict or isinstance(err, FencedError):
                    raise
                raise ClaimWriteError(f"add finalizer to claim {change.key}: {err}") from None
            status = claim.setdefault("status", {})
        status["allocation"] = dict(change.allocation)
    elif status.get("allocation") is None:
        # The API server refuses reservations without an allocation.
        raise ClaimWriteError(f"claim {change.key} got deallocated elsewhere in the meantime")
    # No precondition on the reservations: the API server refuses what is not possible.
    status["reservedFor"] = [*(status.get("reservedFor") or ()), *map(dict, change.reserve)]
    return api.request("PUT", f"{path}/status", body=claim, guard=guard)


def create_claim(
    api: ApiClient, claim: Manifest, guard: Callable[[], bool] | None = None
) -> dict[str, Any]:
    """createExtendedResourceClaimInAPI (extendeddynamicresources.go): the special claim
    created without name, uid and status, the server naming it from its generateName;
    the server's answer. ClaimWriteError with kube's wording when it is not created
    (klog.KObj of the claim without a name: ``<namespace>/``)."""
    meta = {k: v for k, v in (claim.get("metadata") or {}).items() if k not in _NOT_CREATED}
    body = {key: value for key, value in claim.items() if key != "status"}
    body["metadata"] = meta
    namespace = str(meta.get("namespace") or "default")
    try:
        return api.request("POST", _claims_path(namespace), body=body, guard=guard)
    except FencedError:
        raise
    except ApiError as err:
        raise ClaimWriteError(f"create claim for extended resources {namespace}/: {err}") from None


# What createExtendedResourceClaimInAPI clears, and what the server sets on creation.
_NOT_CREATED = frozenset({"name", "uid", "resourceVersion", "creationTimestamp"})


def _claims_path(namespace: str) -> str:
    return RESOURCE_CLAIMS.object_path(namespace, "").rstrip("/")


def delete_claim(
    api: ApiClient,
    namespace: str,
    name: str,
    latest: Manifest | None,
    guard: Callable[[], bool] | None = None,
) -> None:
    """deleteClaim (extendeddynamicresources.go): the delete-protection finalizer taken
    out by an update (from ``latest``, the newest version known; read again on a
    conflict, and first when there is none: kube starts from the claim PreBind wrote),
    then the claim deleted, a claim gone by then being no error. ClaimWriteError with
    kube's wording otherwise."""
    path = RESOURCE_CLAIMS.object_path(namespace, name)
    claim = None if latest is None else _copy(latest)
    for attempt in range(RETRY_STEPS):
        if claim is None or attempt:
            if attempt:
                time.sleep(RETRY_DELAY * (1 + RETRY_JITTER * random.random()))
            try:
                claim = api.request("GET", path)
            except FencedError:
                raise
            except ApiError as err:
                raise ClaimWriteError(f"get resourceclaim {namespace}/{name}: {err}") from None
        meta = claim.setdefault("metadata", {})
        meta["finalizers"] = [
            f for f in meta.get("finalizers") or () if f != ALLOCATION_FINALIZER
        ] or None
        try:
            api.request("PUT", path, body=claim, guard=guard)
            break
        except FencedError:
            raise
        except ApiError as err:
            if not err.conflict or attempt == RETRY_STEPS - 1:
                raise ClaimWriteError(f"update resourceclaim {namespace}/{name}: {err}") from None
    try:
        api.request("DELETE", path, guard=guard)
    except FencedError:
        raise
    except ApiError as err:
        if not err.not_found:
            raise ClaimWriteError(f"delete resourceclaim {namespace}/{name}: {err}") from None


def _copy(claim: Manifest) -> dict[str, Any]:
    """A copy deep enough to change metadata.finalizers and status."""
    out = dict(claim)
    out["metadata"] = dict(claim.get("metadata") or {})
    out["status"] = dict(_status(claim))
    return out


@dataclass(frozen=True)
class ClaimWritten:
    """How a claim write ended, for the scheduling thread (``ClaimCache.end``)."""

    key: str
    answer: dict[str, Any] | None


class PodClaimWrites:
    """The claim writes a pod's binding waits for (PreBind's, each on its claim's worker):
    the binding is posted once they all succeeded, and not at all when one failed."""

    def __init__(self) -> None:
        self._done = threading.Condition()
        self._left = 0
        self._error = ""

    def add(self) -> None:
        with self._done:
            self._left += 1

    def ended(self, error: str) -> None:
        with self._done:
            self._left -= 1
            if error and not self._error:
                self._error = error
            self._done.notify_all()

    def wait(self, timeout: float) -> str:
        """The first write's error ("" when all succeeded) once they ended."""
        with self._done:
            if not self._done.wait_for(lambda: self._left <= 0, timeout):
                return f"claim writes still running after {timeout:.0f}s"
            return self._error


class ClaimCache:
    """The claims the scheduler sees, on the scheduling thread.

    ``server`` is the newest version the server is known to have (from the informer or
    the answer to a write), replaced only by a newer one (the assume cache's rule). What
    the scheduler sees (``get``, passed on as the handlers' add, update and delete) is the
    same, except while writes to a claim are on their way: then it sees the version it
    asked for (``begin``), so that the devices stay taken, until the last of them ended
    (``end``) and it sees the server's again, written or not.
    """

    def __init__(
        self,
        on_add: Callable[[Manifest], None],
        on_update: Callable[[Manifest, Manifest], None],
        on_delete: Callable[[Manifest], None],
    ) -> None:
        self._on_add = on_add
        self._on_update = on_update
        self._on_delete = on_delete
        self._seen: dict[str, Manifest] = {}
        self._server: dict[str, Manifest] = {}
        self._pending: dict[str, int] = {}

    def get(self, key: str) -> Manifest | None:
        """The claim ``namespace/name`` as the scheduler sees it."""
        return self._seen.get(key)

    def server(self, key: str) -> Manifest | None:
        """The newest version of the claim known to be on the server."""
        return self._server.get(key)

    def pending(self, key: str) -> int:
        """Writes to the claim begun and not ended."""
        return self._pending.get(key, 0)

    def informed(self, old: Manifest | None, new: Manifest | None) -> None:
        """An informer delta."""
        if new is None:
            assert old is not None
            key = claim_key(old)
            self._server.pop(key, None)
        else:
            key = claim_key(new)
            if not newer(new, self._server.get(key)):
                return
            self._server[key] = new
        if not self._pending.get(key):
            self._show(key, self._server.get(key))

    def written(self, answer: Manifest) -> None:
        """The answer to a write made at once (PostFilter's deallocation)."""
        key = claim_key(answer)
        if newer(answer, self._server.get(key)):
            self._server[key] = answer
            if not self._pending.get(key):
                self._show(key, answer)

    def begin(self, claim: Manifest) -> None:
        """A write of ``claim`` is on its way: the scheduler sees it now."""
        key = claim_key(claim)
        self._pending[key] = self._pending.get(key, 0) + 1
        self._show(key, claim)

    def end(self, key: str, answer: Manifest | None) -> None:
        """A write ended: ``answer`` is the server's version after it (None: it failed).
        An answer under another name is a claim the server named (created from its
        generateName): it is seen under that name, and ``key`` goes once its writes end."""
        if answer is not None and claim_key(answer) != key:
            self.written(answer)
            answer = None
        if answer is not None and newer(answer, self._server.get(key)):
            self._server[key] = answer
        left = self._pending.get(key, 0) - 1
        if left > 0:
            self._pending[key] = left
            return
        self._pending.pop(key, None)
        self._show(key, self._server.get(key))

    def _show(self, key: str, claim: Manifest | None) -> None:
        seen = self._seen.get(key)
        if claim is seen:
            return
        if claim is None:
            assert seen is not None
            del self._seen[key]
            self._on_delete(seen)
            return
        self._seen[key] = claim
        if seen is None:
            self._on_add(claim)
        else:
            self._on_update(seen, claim)


__all__ = [
    "RESOURCE_CLAIMS",
    "ClaimCache",
    "ClaimChange",
    "ClaimWriteError",
    "ClaimWritten",
    "PodClaimWrites",
    "claim_change",
    "claim_key",
    "create_claim",
    "delete_claim",
    "newer",
    "write_claim",
]
