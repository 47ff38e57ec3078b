"""Informers: list and watch one kind, and hand every change to a sink (client-go Reflector).

Each informer runs in its own thread. It lists (paginated), then watches from the list's
resourceVersion with bookmarks, resuming from the last resourceVersion it saw when a
stream ends or breaks. A 410 Gone (an expired resourceVersion, as an HTTP answer or an
ERROR event) makes it relist; a relist is compared with what it already knows and the
differences are delivered as synthetic add/update/delete deltas, so nothing is lost or
delivered twice. Errors are retried with exponential backoff and jitter that goes back to
its minimum after a period without errors (``WatchBackoff``, client-go's reflector rule).
An optional kind answering 403 or 404 on its first list is disabled instead.

The sink receives ``Delta``, ``Synced`` (the first list was delivered) and ``Disabled``;
it must be thread-safe (the runner's inbox).
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
import msgspec

from wasmsched.api.protobuf.decode import ProtobufDecodeError, decode_watch_frames
from wasmsched.live.client import ApiClient, ApiError, ResourceType, is_protobuf, status_error

log = logging.getLogger("wasmsched.live.informer")
# Every watch event of every informer is decoded here (msgspec: about twice json's speed).
_decode_event = msgspec.json.Decoder().decode

# client-go's reflector: watches end after a random 5-10 minutes; backoff 800 ms to 30 s,
# factor 2, jitter 1.0, reset after 2 minutes without a backoff
# (tools/cache/reflector.go: NewReflectorWithOptions, wait.NewExponentialBackoffManager).
MIN_WATCH_TIMEOUT = 300
INITIAL_BACKOFF = 0.8
MAX_BACKOFF = 30.0
BACKOFF_RESET = 120.0
BACKOFF_FACTOR = 2.0
BACKOFF_JITTER = 1.0
# A watch idle for longer than this (no event, no bookmark) is considered dead.
WATCH_READ_SLACK = 60.0
# A watch that ends this fast with no event is treated as an error (backoff), not a timeout.
SHORT_WATCH_SECONDS = 1.0

Manifest = dict[str, Any]


class _Stopped(Exception):
    """Raised from a protobuf watch's event callback once the informer is stopping."""


@dataclass(frozen=True)
class Delta:
    """A change: ``old`` None for an add, ``new`` None for a delete."""

    kind: str
    old: Manifest | None
    new: Manifest | None


@dataclass(frozen=True)
class Synced:
    kind: str


@dataclass(frozen=True)
class Disabled:
    kind: str
    reason: str


InformerItem = Delta | Synced | Disabled


class WatchBackoff:
    """The delay before the next list/watch after an error.

    apimachinery's exponentialBackoffManagerImpl.getNextBackoff: when the previous backoff
    started more than ``reset`` seconds ago (a healthy period: no error since), the delay
    goes back to ``initial``; each step returns the current delay with up to ``jitter``
    times itself added at random (wait.Jitter), then multiplies it by ``factor``, capped
    at ``cap``. The cap is below the reset period, so failing at the cap never resets.
    """

    def __init__(
        self,
        initial: float = INITIAL_BACKOFF,
        cap: float = MAX_BACKOFF,
        reset: float = BACKOFF_RESET,
        *,
        factor: float = BACKOFF_FACTOR,
        jitter: float = BACKOFF_JITTER,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.initial = initial
        self.cap = cap
        self.reset = reset
        self.factor = factor
        self.jitter = jitter
        self.clock = clock
        self._rng = rng or random.Random()
        self._duration = initial
        self._last_start = clock()

    def next(self) -> float:
        now = self.clock()
        if now - self._last_start > self.reset:
            self._duration = self.initial
        self._last_start = now
        delay = self._duration
        if self.jitter > 0:
            delay += delay * self.jitter * self._rng.random()
        self._duration = min(self._duration * self.factor, self.cap)
        return delay


def object_key(manifest: Mapping[str, Any]) -> str:
    meta = manifest.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def _rv(manifest: Mapping[str, Any]) -> str:
    return str((manifest.get("metadata") or {}).get("resourceVersion") or "")


def _uid(manifest: Mapping[str, Any]) -> str:
    return str((manifest.get("metadata") or {}).get("uid") or "")


class Informer:
    """List+watch of one kind into ``sink``; ``start()`` runs it on a daemon thread."""

    def __init__(
        self,
        api: ApiClient,
        resource: ResourceType,
        sink: Callable[[InformerItem], None],
        *,
        field_selector: str = "",
        page_size: int = 500,
        watch_timeout: int = MIN_WATCH_TIMEOUT,
        initial_backoff: float = INITIAL_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
        backoff_reset: float = BACKOFF_RESET,
        clock: Callable[[], float] = time.monotonic,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
        on_relist: Callable[[str], None] | None = None,
    ) -> None:
        self.api = api
        self.resource = resource
        self.kind = resource.kind
        self.sink = sink
        self.field_selector = field_selector
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        # Objects the consumer does not want (terminal pods) are treated as absent.
        self.keep = keep
        self.on_relist = on_relist
        self.store: dict[str, Manifest] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self.relists = 0
        self.watches = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._response: httpx2.Response | None = None
        self._lock = threading.Lock()
        self._rng = random.Random()
        self.backoff = WatchBackoff(initial_backoff, max_backoff, backoff_reset, clock=clock)
        # The delays waited after errors, newest last (a few, for tests and logs).
        self.backoff_delays: list[float] = []

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name=f"informer-{self.kind}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            resp = self._response
        if resp is not None:
            # Unblocks the reading thread; it sees _stop and leaves.
            with contextlib.suppress(Exception):
                resp.close()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    # --- the reflector loop -----------------------------------------------------------------

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self.resource_version:
                    self._relist()
                if self._watch():
                    continue
                # A watch that ended at once with nothing in it: back off as for an error.
                delay = self._next_backoff()
            except ApiError as err:
                if self._stop.is_set():
                    return
                if err.gone:
                    log.info("resource version expired, relisting kind=%s", self.kind)
                    self.resource_version = ""
                    continue
                if self.resource.optional and not self.synced.is_set() and err.status in (403, 404):
                    log.warning("kind disabled kind=%s status=%s", self.kind, err.status)
                    self.sink(Disabled(self.kind, str(err)))
                    return
                delay = self._next_backoff()
                log.warning(
                    "list/watch failed kind=%s error=%r retry_in=%.2fs",
                    self.kind,
                    str(err),
                    delay,
                )
            except Exception:
                if self._stop.is_set():
                    return
                log.exception("informer error kind=%s", self.kind)
                delay = self._next_backoff()
            if self._stop.wait(delay):
                return

    def _next_backoff(self) -> float:
        delay = self.backoff.next()
        self.backoff_delays = [*self.backoff_delays[-15:], delay]
        return delay

    def _wanted(self, manifest: Mapping[str, Any]) -> bool:
        return self.keep is None or self.keep(manifest)

    def _relist(self) -> None:
        params = {"fieldSelector": self.field_selector} if self.field_selector else None
        items, rv = self.api.list(self.resource, self.page_size, params)
        self.relists += 1
        if self.on_relist is not None:
            self.on_relist(self.kind)
        fresh: dict[str, Manifest] = {}
        for item in items:
            if self._wanted(item):
                fresh[object_key(item)] = item
        # Deletions first so that a name reused by a new object frees its key.
        for key in [k for k in self.store if k not in fresh]:
            self._emit(key, None)
        for key, item in fresh.items():
            self._emit(key, item)
        self.resource_version = rv
        if not self.synced.is_set():
            self.synced.set()
            self.sink(Synced(self.kind))

    def _emit(self, key: str, new: Manifest | None, final: Manifest | None = None) -> None:
        """Delivers the difference between the stored object at ``key`` and ``new``.

        A delete carries the object's final state when the watch gave it, else the last
        one known (client-go's DeletedFinalStateUnknown).
        """
        old = self.store.get(key)
        if new is None:
            if old is not None:
                del self.store[key]
                self.sink(Delta(self.kind, final if final is not None else old, None))
            return
        if old is None:
            self.store[key] = new
            self.sink(Delta(self.kind, None, new))
            return
        if _uid(old) != _uid(new):
            # Deleted and recreated under the same name while we were not watching.
            self.store[key] = new
            self.sink(Delta(self.kind, old, None))
            self.sink(Delta(self.kind, None, new))
            return
        if _rv(old) == _rv(new) and _rv(new):
            return
        self.store[key] = new
        self.sink(Delta(self.kind, old, new))

    def _watch(self) -> bool:
        """One watch request from the current resourceVersion.

        True if it ended cleanly after a while; a stream that ends at once with nothing in
        it counts as a failure, so that a server ending every watch is not hammered.
        """
        timeout = self.watch_timeout + self._rng.randrange(self.watch_timeout + 1)
        params = {
            "watch": "true",
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout),
        }
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        self.watches += 1
        started = time.monotonic()
        events = 0
        with self.api.stream(
            self.resource.collection_path,
            params,
            read_timeout=timeout + WATCH_READ_SLACK,
            accept=self.api.accept(self.resource),
        ) as resp:
            with self._lock:
                self._response = resp
            try:
                if is_protobuf(resp):
                    events = decode_watch_frames(
                        resp.iter_bytes(), self._handle_frame_event, self.api.omitzero
                    )
                    if self._stop.is_set():
                        return True
                else:
                    for line in resp.iter_lines():
                        if self._stop.is_set():
                            return True
                        if line:
                            events += 1
                            self._handle_line(line)
            except _Stopped:
                return True
            except ProtobufDecodeError as err:
                raise ApiError(0, f"watch {self.kind}: {err}") from None
            except httpx2.HTTPError as err:
                if self._stop.is_set():
                    return True
                raise ApiError(
                    0, f"watch {self.kind} broken: {type(err).__name__}: {err}"
                ) from None
            finally:
                with self._lock:
                    self._response = None
        return events > 0 or time.monotonic() - started >= SHORT_WATCH_SECONDS

    def _handle_line(self, line: str) -> None:
        try:
            event = _decode_event(line)
        except ValueError:
            raise ApiError(0, f"watch {self.kind}: undecodable event {line[:80]!r}") from None
        self._handle_event(event)

    def _handle_frame_event(self, event: dict[str, Any]) -> None:
        if self._stop.is_set():
            raise _Stopped
        self._handle_event(event)

    def _handle_event(self, event: dict[str, Any]) -> None:
        etype = event.get("type")
        obj = event.get("object")
        if not isinstance(obj, dict):
            raise ApiError(0, f"watch {self.kind}: event without an object")
        if etype == "ERROR":
            raise status_error(obj)
        rv = _rv(obj)
        if etype == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return
        obj.setdefault("kind", self.resource.kind)
        obj.setdefault("apiVersion", self.resource.api_version)
        key = object_key(obj)
        if etype == "DELETED" or (etype in ("ADDED", "MODIFIED") and not self._wanted(obj)):
            self._emit(key, None, obj)
        elif etype in ("ADDED", "MODIFIED"):
            self._emit(key, obj)
        else:
            log.warning("unknown watch event type=%s kind=%s", etype, self.kind)
        if rv:
            self.resource_version = rv
