"""LiveWriter's ResourceClaim writes: what DynamicResources writes (PreBind, Unreserve,
PostFilter), each claim's writes in order on its API worker, and the writes each pod's
binding waits for.

PreBind's allocation and reservation, and Unreserve's removal, go to the claim's worker
(live/claims.py: write_claim) while the scheduler sees the new version (``ClaimCache.begin``);
PostFilter's deallocation is made at once. The special claim for a pod's extended resources
is created there too (createExtendedResourceClaimInAPI, named by the server from its
generateName), written under the server's name, named in the pod's
``extendedResourceClaimStatus``, and deleted by Unreserve (deleteClaim).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from wasmsched.framework.status import Code, Status
from wasmsched.live.claims import (
    ClaimCache,
    ClaimChange,
    ClaimWriteError,
    ClaimWritten,
    PodClaimWrites,
    claim_change,
    claim_key,
    create_claim,
    delete_claim,
    newer,
    write_claim,
)
from wasmsched.live.client import STRATEGIC_MERGE_PATCH, ApiClient, ApiError, FencedError

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.live.dispatcher import Dispatcher

log = logging.getLogger("wasmsched.live.writer")

# How long a binding waits for its pod's claim writes (each at most 5 attempts of two
# calls within the client's timeout).
CLAIM_WRITES_TIMEOUT = 120.0
DYNAMIC_RESOURCES = "DynamicResources"


class ClaimWrites:
    """The claim writes of one LiveWriter, fenced as its other writes are (``term``,
    ``may_send``, ``guard``, ``dropped``: LiveWriter's)."""

    def __init__(
        self,
        api: ApiClient,
        dispatcher: Dispatcher,
        claims: ClaimCache | None,
        claim_results: Callable[[ClaimWritten], None] | None,
        *,
        term: Callable[[], int],
        may_send: Callable[[int, str], bool],
        guard: Callable[[int], Callable[[], bool]],
        dropped: Callable[[int, str], None],
        on_created: Callable[[bool], None] = lambda created: None,
    ) -> None:
        self.api = api
        self.dispatcher = dispatcher
        # The claims the scheduler sees (the runner's ResourceClaim informer), and where
        # the outcome of a claim write goes (the runner's inbox, then ``claims.end``).
        self.claims = claims
        self._claim_results = claim_results
        self.term = term
        self._may_send = may_send
        self._guard = guard
        self._dropped = dropped
        # Told whether each claim creation sent succeeded (ResourceClaimCreate metric).
        self._on_created = on_created
        # Per claim: its writes queued, and the answer of the last one for the next.
        self._answers_lock = threading.Lock()
        self._claim_jobs: dict[str, int] = {}
        self._answers: dict[str, dict[str, Any]] = {}
        # The claim writes each pod's binding is to wait for (by pod uid).
        self._pod_claim_writes: dict[str, PodClaimWrites] = {}
        # Claims created under a name the server generates (DynamicResources' special
        # claim for extended resources): the scheduler's name for one (``namespace/name``)
        # -> the server's latest version of it (None while the POST is on its way, or
        # after it failed); and the pod each was made for.
        self._created: dict[str, dict[str, Any] | None] = {}
        self._created_for: dict[str, str] = {}

    def pod_writes(self, pod_uid: str) -> PodClaimWrites | None:
        """The claim writes the pod's binding is to wait for (taken: asked once)."""
        return self._pod_claim_writes.pop(pod_uid, None)

    def bound(self, pod_uid: str) -> None:
        """The pod is bound: the claim created for it stays, under the server's name."""
        with self._answers_lock:
            key = self._created_for.pop(pod_uid, None)
            if key is not None:
                self._created.pop(key, None)

    def write_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """DynamicResources' claim writes: the change from the claim as the scheduler sees
        it (``claims``) to ``claim`` (live/claims.py: claim_change).

        PostFilter's deallocation is made at once (kube makes it in the scheduling cycle).
        PreBind's allocation and reservation, and Unreserve's removal, go to the claim's
        worker (a claim's writes in order) and the scheduler sees the new version meanwhile
        (``ClaimCache.begin``); with asynchronous binding the pod's binding waits for its
        claim writes on its own worker, and is not posted when one failed (kube's binding
        cycle: PreBind before Bind). The outcome goes to ``claim_results``.
        """
        cache = self.claims
        if cache is None:
            return Status(Code.ERROR, "wasmsched: no ResourceClaim informer to write claims with")
        key = claim_key(claim)
        with self._answers_lock:
            created = key in self._created
            made = self._created.get(key)
        if not created and _to_create(claim) and cache.get(key) is None:
            return self._create_claim(key, claim)
        current = cache.get(key) or made or claim
        change = claim_change(current, claim)
        term = self.term()
        if change.deallocate:
            answer, error = self._write_claim(term, change, current, claim)
            if answer is not None:
                cache.written(answer)
            return Status(Code.ERROR, error) if error else None
        if not (change.reserve or change.unreserve):
            return None
        start = cache.server(key) or current
        cache.begin(claim)
        for uid in change.unreserve:
            self._pod_claim_writes.pop(uid, None)
        with self._answers_lock:
            self._claim_jobs[key] = self._claim_jobs.get(key, 0) + 1
        if self._claim_results is None:
            # Synchronous binding: the claim is written before bind() is called.
            result, error = self._claim_job(term, change, start, claim)
            cache.end(result.key, result.answer)
            return Status(Code.ERROR, error) if error else None
        deliver = self._claim_results
        writes: PodClaimWrites | None = None
        if change.reserve:
            uid = str(change.reserve[0].get("uid"))
            writes = self._pod_claim_writes.setdefault(uid, PodClaimWrites())
            writes.add()

        def job() -> None:
            result, error = self._claim_job(term, change, start, claim)
            deliver(result)
            if writes is not None:
                writes.ended(error)

        self.dispatcher.submit(key, job)
        return None

    def _claim_job(
        self, term: int, change: ClaimChange, start: Mapping[str, Any], claim: Mapping[str, Any]
    ) -> tuple[ClaimWritten, str]:
        """One queued write of a claim, from the newest version known: ``start`` or the
        answer to the write queued before it."""
        key = change.key
        with self._answers_lock:
            latest = self._answers.get(key)
            created = key in self._created
            made = self._created.get(key)
        if latest is not None and newer(latest, start):
            start = latest
        answer: dict[str, Any] | None = None
        try:
            if not created:
                answer, error = self._write_claim(term, change, start, claim)
            elif made is None:
                error = f"{change.describe()}: the claim was not created"
            else:
                # The claim under the name the server gave it, from its newest version.
                meta = made.get("metadata") or {}
                if latest is None or newer(made, latest):
                    start = made
                change = replace(change, name=str(meta.get("name")), uid=str(meta.get("uid")))
                answer, error = self._write_claim(term, change, start, claim)
                if answer is not None:
                    with self._answers_lock:
                        if key in self._created:
                            self._created[key] = answer
        except Exception as err:
            # Whatever went wrong, the claim's cache entry and the pod's binding go on.
            log.exception("claim write failed claim=%s", key)
            error = f"{change.describe()}: {type(err).__name__}: {err}"
        with self._answers_lock:
            left = self._claim_jobs[key] - 1
            if left:
                self._claim_jobs[key] = left
                if answer is not None:
                    self._answers[key] = answer
            else:
                del self._claim_jobs[key]
                self._answers.pop(key, None)
        return ClaimWritten(key, answer), error

    def _write_claim(
        self, term: int, change: ClaimChange, current: Mapping[str, Any], claim: Mapping[str, Any]
    ) -> tuple[dict[str, Any] | None, str]:
        """One claim write (live/claims.py: write_claim): the answer, or why there is none."""
        if not self._may_send(term, "claim"):
            return None, "not the leader: claim not written"
        try:
            answer = write_claim(self.api, change, current, claim, self._guard(term))
        except FencedError:
            self._dropped(term, "claim")
            return None, "not the leader: claim not written"
        except ClaimWriteError as err:
            log.info("claim not written claim=%s error=%r", change.key, str(err))
            return None, str(err)
        answer.setdefault("kind", "ResourceClaim")
        answer.setdefault("apiVersion", "resource.k8s.io/v1")
        return answer, ""

    def _create_claim(self, key: str, claim: Mapping[str, Any]) -> Status | None:
        """PreBind's creation of the special claim for a pod's extended resources
        (createExtendedResourceClaimInAPI): POSTed on the claim's worker, before the
        writes that follow it under the same name; the server names it from its
        generateName, and those writes (and the pod's extendedResourceClaimStatus) go to
        that name. The scheduler sees the claim under its own name meanwhile."""
        cache = self.claims
        assert cache is not None
        term = self.term()
        owner = _controller_uid(claim)
        with self._answers_lock:
            self._created[key] = None
            if owner:
                self._created_for[owner] = key
        cache.begin(claim)

        def post(guard: Callable[[], bool], answers: list[dict[str, Any]]) -> None:
            # Counted once sent (a fenced write is not): ResourceClaimCreate.
            try:
                answers.append(create_claim(self.api, claim, guard))
            except ClaimWriteError:
                self._on_created(False)
                raise
            self._on_created(True)

        def create() -> tuple[ClaimWritten, str]:
            answers: list[dict[str, Any]] = []
            error = self._send(term, "claim", lambda guard: post(guard, answers))
            answer = answers[0] if answers else None
            if error:
                log.info("claim not created claim=%s error=%r", key, error)
            if answer is not None:
                answer.setdefault("kind", "ResourceClaim")
                answer.setdefault("apiVersion", "resource.k8s.io/v1")
                with self._answers_lock:
                    if key in self._created:
                        self._created[key] = answer
            return ClaimWritten(key, answer), error

        if self._claim_results is None:
            result, error = create()
            cache.end(result.key, result.answer)
            return Status(Code.ERROR, error) if error else None
        self._submit_for_pod(key, owner, create, self._claim_results)
        return None

    def _submit_for_pod(
        self,
        key: str,
        pod_uid: str,
        write: Callable[[], tuple[ClaimWritten | None, str]],
        deliver: Callable[[ClaimWritten], None] | None,
    ) -> None:
        """``write`` on the claim's worker, its outcome delivered; the pod's binding waits
        for it (and fails with its error)."""
        writes = self._pod_claim_writes.setdefault(pod_uid, PodClaimWrites()) if pod_uid else None
        if writes is not None:
            writes.add()

        def job() -> None:
            result, error = None, "claim write failed"
            try:
                result, error = write()
            finally:
                if result is not None and deliver is not None:
                    deliver(result)
                if writes is not None:
                    writes.ended(error)

        self.dispatcher.submit(key, job)

    def delete_resource_claim(self, claim: Mapping[str, Any]) -> Status | None:
        """deleteClaim: a special claim PreBind created in this attempt (Unreserve) on its
        worker after its writes, under the server's name (nothing when it was not
        created; kube logs a failure there); another (PostFilter's stale claim) at once,
        a failure being PostFilter's error."""
        cache = self.claims
        if cache is None:
            return Status(Code.ERROR, "wasmsched: no ResourceClaim informer to write claims with")
        key = claim_key(claim)
        meta = claim.get("metadata") or {}
        term = self.term()
        with self._answers_lock:
            created = key in self._created
        if not created:
            error = self._delete_claim(
                term,
                str(meta.get("namespace") or "default"),
                str(meta.get("name")),
                cache.server(key),
            )
            return Status(Code.ERROR, error) if error else None

        def job() -> None:
            with self._answers_lock:
                made = self._created.pop(key, None)
                owner = _controller_uid(claim)
                if self._created_for.get(owner) == key:
                    del self._created_for[owner]
            if made is None:
                return  # never created
            made_meta = made.get("metadata") or {}
            ns, name = str(made_meta.get("namespace")), str(made_meta.get("name"))
            error = self._delete_claim(term, ns, name, made)
            if error:
                log.warning("claim not deleted claim=%s/%s error=%r", ns, name, error)

        self.dispatcher.submit(key, job)
        return None

    def _delete_claim(
        self, term: int, namespace: str, name: str, latest: Mapping[str, Any] | None
    ) -> str:
        """live/claims.py: delete_claim; why it failed ("" when it did not)."""
        return self._send(
            term, "claim", lambda guard: delete_claim(self.api, namespace, name, latest, guard)
        )

    def _send(self, term: int, what: str, call: Callable[[Callable[[], bool]], object]) -> str:
        """``call`` with the term's guard (fencing): why it was not made ("" when it was)."""
        if not self._may_send(term, what):
            return f"not the leader: {what} not written"
        try:
            call(self._guard(term))
        except FencedError:
            self._dropped(term, what)
            return f"not the leader: {what} not written"
        except (ApiError, ClaimWriteError) as err:
            return str(err)
        return ""

    def set_extended_resource_claim_status(
        self, pod: Pod, status: Mapping[str, Any]
    ) -> Status | None:
        """patchPodExtendedResourceClaimStatus: the pod's status names its special claim
        (by the server's name) and maps its containers' requests; on the claim's worker
        after the claim's writes, the pod's binding waiting for it."""
        key = f"{pod.namespace}/{status.get('resourceClaimName')}"
        term = self.term()
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"

        def patch() -> str:
            with self._answers_lock:
                created = key in self._created
                made = self._created.get(key)
            if created and made is None:
                return "the claim was not created"
            named = {**status}
            if made is not None:
                named["resourceClaimName"] = (made.get("metadata") or {}).get("name")
            body = {"status": {"extendedResourceClaimStatus": named}}
            return self._send(
                term,
                "status",
                lambda guard: self.api.request(
                    "PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH, guard=guard
                ),
            )

        if self._claim_results is None:
            error = patch()
            return Status(Code.ERROR, error) if error else None

        def write() -> tuple[ClaimWritten | None, str]:
            error = patch()
            if error:
                error = (
                    f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: {error}"
                )
            return None, error

        self._submit_for_pod(key, pod.uid, write, None)
        return None


def _to_create(claim: Mapping[str, Any]) -> bool:
    """A claim the server has not seen: named by the scheduler only, to be named by the
    server from its generateName (extendeddynamicresources.go: the special claim)."""
    meta = claim.get("metadata") or {}
    return bool(meta.get("generateName")) and not meta.get("resourceVersion")


def _controller_uid(claim: Mapping[str, Any]) -> str:
    """The uid of the claim's controlling owner (the pod it was made for)."""
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""
