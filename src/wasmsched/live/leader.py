"""Leader election on a coordination.k8s.io/v1 Lease (client-go tools/leaderelection).

A candidate tries every ``retry_period`` to create the Lease or take it over. A Lease held
by someone else can be taken only after its record has not changed for
``lease_duration`` as measured on this replica's own clock (no trust in other clocks).
The leader renews every ``retry_period``; every write carries the Lease's
resourceVersion, so of two replicas racing, one gets 409 Conflict. A leader that has not
renewed successfully for ``renew_deadline`` (shorter than the lease duration) considers
itself deposed at once; ``is_leader()`` checks that deadline on every call, so the
scheduling loop and the binding workers stop even before the elector thread notices.
Releasing writes an empty holderIdentity so that a standby takes over without waiting.

``term`` counts unbroken runs of leadership: it goes up on every acquisition and on every
renewal that comes after the renew deadline had passed (a replica paused past its
deadline that renews afterwards starts a new term). Writes carry the term they were
decided in, and a write of an older term is dropped (see LiveWriter).
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wasmsched.live.client import ApiClient, ApiError
from wasmsched.live.writer import now_rfc3339

log = logging.getLogger("wasmsched.live.leader")

JITTER_FACTOR = 1.2


def default_identity() -> str:
    """hostname_uuid, as kube-scheduler names its candidates."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaseConfig:
    namespace: str = "kube-system"
    name: str = "wasmsched"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def validate(self) -> None:
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if self.retry_period < 0.001:
            raise ValueError("retryPeriod must be positive")


class LeaderElector:
    def __init__(
        self,
        api: ApiClient,
        config: LeaseConfig,
        identity: str | None = None,
        *,
        on_started: Callable[[], None] = lambda: None,
        on_stopped: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        config.validate()
        self.api = api
        self.config = config
        self.identity = identity or default_identity()
        self.on_started = on_started
        self.on_stopped = on_stopped
        self.clock = clock
        self.path = (
            f"/apis/coordination.k8s.io/v1/namespaces/{config.namespace}/leases/{config.name}"
        )
        self._observed_spec: dict[str, Any] | None = None
        self._observed_time = 0.0
        self._lease: dict[str, Any] | None = None  # last Lease read or written
        self._leading = False
        self._last_renew = -1e18
        self._term = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._rng = random.Random()
        self.lost = threading.Event()

    # --- state -------------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """Leading, and renewed less than renew_deadline ago."""
        with self._lock:
            return self._leading and self.clock() - self._last_renew < self.config.renew_deadline

    @property
    def term(self) -> int:
        """The current leadership term (0 before the first acquisition)."""
        with self._lock:
            return self._term

    @property
    def healthy(self) -> bool:
        """The healthz watchdog: a leader overdue on renewal by more than a lease is unhealthy."""
        with self._lock:
            if not self._leading:
                return True
            return self.clock() - self._last_renew < self.config.lease_duration + 20.0

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name="leader-election", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        if not self._acquire():
            return
        self.on_started()
        self._renew()
        if not self._stop.is_set():
            self.lost.set()
            log.error("leader election lost identity=%s", self.identity)
            self.on_stopped()

    def _sleep(self, period: float, jitter: bool = False) -> bool:
        """Sleeps (jittered when asked); True if stopped meanwhile."""
        if jitter:
            period += period * JITTER_FACTOR * self._rng.random()
        return self._stop.wait(period)

    def _acquire(self) -> bool:
        log.info(
            "attempting to acquire leader lease lease=%s/%s",
            self.config.namespace,
            self.config.name,
        )
        while not self._stop.is_set():
            if self.try_acquire_or_renew():
                log.info(
                    "successfully acquired lease lease=%s/%s identity=%s",
                    self.config.namespace,
                    self.config.name,
                    self.identity,
                )
                return True
            if self._sleep(self.config.retry_period, jitter=True):
                return False
        return False

    def _renew(self) -> None:
        cfg = self.config
        while not self._stop.is_set():
            deadline = self.clock() + cfg.renew_deadline
            while True:
                if self._stop.is_set():
                    return
                if self.try_acquire_or_renew():
                    break
                if self.clock() >= deadline or not self.is_leader():
                    with self._lock:
                        self._leading = False
                    return
                if self._sleep(cfg.retry_period):
                    return
            if self._sleep(cfg.retry_period):
                return

    # --- one attempt --------------------------------------------------------------------------

    def try_acquire_or_renew(self) -> bool:
        now = self.clock()
        cfg = self.config
        stamp = now_rfc3339(micro=True)
        try:
            lease = self.api.request("GET", self.path, timeout=cfg.renew_deadline / 2)
        except ApiError as err:
            if not err.not_found:
                log.warning("error retrieving lease lease=%s error=%r", self.path, str(err))
                return False
            spec = self._spec(stamp, stamp, 0)
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": spec,
            }
            try:
                created = self.api.request(
                    "POST",
                    f"/apis/coordination.k8s.io/v1/namespaces/{cfg.namespace}/leases",
                    body=body,
                    timeout=cfg.renew_deadline / 2,
                )
            except ApiError as err2:
                log.info("lease create failed error=%r", str(err2))
                return False
            self._observe(created or body, now, renewed=True)
            return True

        spec = dict(lease.get("spec") or {})
        if self._observed_spec != spec:
            self._observed_spec = spec
            self._observed_time = now
        holder = str(spec.get("holderIdentity") or "")
        held_by_me = holder == self.identity
        duration = _int(spec.get("leaseDurationSeconds"), int(cfg.lease_duration))
        if holder and not held_by_me and self._observed_time + duration > now:
            with self._lock:
                self._leading = False
            return False
        transitions = _int(spec.get("leaseTransitions"), 0)
        if held_by_me:
            acquire = str(spec.get("acquireTime") or stamp)
        else:
            acquire = stamp
            transitions += 1
        new = dict(lease)
        new["spec"] = self._spec(acquire, stamp, transitions)
        try:
            updated = self.api.request("PUT", self.path, body=new, timeout=cfg.renew_deadline / 2)
        except ApiError as err:
            log.info("lease update failed lease=%s error=%r", self.path, str(err))
            return False
        self._observe(updated or new, now, renewed=True)
        if held_by_me:
            # The one line a renewal logs, at debug (a renewal every retryPeriod).
            log.debug("renewed lease lease=%s identity=%s", self.path, self.identity)
        return True

    def _spec(self, acquire: str, renew: str, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.config.lease_duration)),
            "acquireTime": acquire,
            "renewTime": renew,
            "leaseTransitions": transitions,
        }

    def _observe(self, lease: Mapping[str, Any], now: float, renewed: bool) -> None:
        self._lease = dict(lease)
        self._observed_spec = dict(lease.get("spec") or {})
        self._observed_time = now
        if renewed:
            with self._lock:
                if not self._leading or now - self._last_renew >= self.config.renew_deadline:
                    self._term += 1
                self._leading = True
                self._last_renew = now

    def release(self) -> bool:
        """Gives the lease up (empty holderIdentity) if this replica holds it.

        Stops the elector thread first so that no renewal can follow the release.
        """
        self.stop()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(self.config.renew_deadline)
        with self._lock:
            was_leading = self._leading
            self._leading = False
        if not was_leading or self._lease is None:
            return False
        stamp = now_rfc3339(micro=True)
        new = dict(self._lease)
        old_spec = dict(new.get("spec") or {})
        new["spec"] = {
            "leaseDurationSeconds": 1,
            "acquireTime": stamp,
            "renewTime": stamp,
            "leaseTransitions": _int(old_spec.get("leaseTransitions"), 0),
        }
        try:
            self.api.request("PUT", self.path, body=new, timeout=self.config.renew_deadline / 2)
        except ApiError as err:
            log.warning("failed to release lease lease=%s error=%r", self.path, str(err))
            return False
        log.info("released lease lease=%s/%s", self.config.namespace, self.config.name)
        return True


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
