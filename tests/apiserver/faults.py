"""Fault injection for the API server double: failed requests, latency, dropped watches, compaction."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

# reason the real server puts in a Status for each HTTP code (k8s.io/apimachinery errors).
REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


@dataclass
class Failure:
    """An injected error answer for matching requests."""

    method: str
    path: re.Pattern[str]
    status: int
    remaining: int
    watch: bool | None
    message: str
    retry_after: int | None


@dataclass
class Delay:
    method: str
    path: re.Pattern[str]
    seconds: float
    remaining: int | None


@dataclass
class WatchDrop:
    resource_key: str
    after_events: int
    remaining: int
    seen: dict[int, int] = field(default_factory=dict)


class Faults:
    """`srv.faults`: what the double should get wrong, and when.

    Paths are matched with `re.search` against the URL path without the query string.
    """

    def __init__(self, resolve: Callable[[str], str], compact: Callable[[], int]) -> None:
        self._lock = threading.Lock()
        self._resolve = resolve
        self._compact = compact
        self._failures: list[Failure] = []
        self._delays: list[Delay] = []
        self._drops: list[WatchDrop] = []

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int = 500,
        count: int = 1,
        *,
        watch: bool | None = None,
        message: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        """Answer the next `count` matching requests with an error Status of code `status`.

        `method` "*" matches any method; `watch` True/False restricts to watch / non-watch GETs.
        """
        text = message or _default_message(status)
        with self._lock:
            self._failures.append(
                Failure(
                    method.upper(), re.compile(path_regex), status, count, watch, text, retry_after
                )
            )

    def delay(
        self, path_regex: str, seconds: float, *, method: str = "*", count: int | None = None
    ) -> None:
        """Hold matching requests for `seconds` before serving them (all of them unless `count`)."""
        with self._lock:
            self._delays.append(Delay(method.upper(), re.compile(path_regex), seconds, count))

    def drop_watch(self, kind: str, after_events: int = 0, count: int = 1) -> None:
        """Cut `count` watch streams of `kind` (open now or later) abruptly after `after_events` events.

        The connection is closed without the terminating chunk, as when a proxy or the server dies.
        Bookmarks do not count as events.
        """
        with self._lock:
            self._drops.append(WatchDrop(self._resolve(kind), after_events, count))

    def expire_resource_versions(self) -> int:
        """Compact history at the current resourceVersion; returns that RV.

        Watches and continue tokens from an older RV then get 410 Expired, as after etcd compaction.
        """
        return self._compact()

    def clear(self) -> None:
        with self._lock:
            self._failures.clear()
            self._delays.clear()
            self._drops.clear()

    # --- used by the server ---

    def take_failure(self, method: str, path: str, is_watch: bool) -> Failure | None:
        with self._lock:
            for f in self._failures:
                if f.remaining <= 0 or f.method not in ("*", method):
                    continue
                if f.watch is not None and f.watch != is_watch:
                    continue
                if f.path.search(path) is None:
                    continue
                f.remaining -= 1
                return f
            self._failures = [f for f in self._failures if f.remaining > 0]
        return None

    def delay_for(self, method: str, path: str) -> float:
        total = 0.0
        with self._lock:
            for d in self._delays:
                if d.remaining is not None and d.remaining <= 0:
                    continue
                if d.method in ("*", method) and d.path.search(path) is not None:
                    total += d.seconds
                    if d.remaining is not None:
                        d.remaining -= 1
        return total

    def should_drop(self, stream_id: int, resource_key: str, new_events: int) -> bool:
        """Count `new_events` sent on a stream; True when a drop fault claims the stream now."""
        with self._lock:
            for d in self._drops:
                if d.remaining <= 0 or d.resource_key != resource_key:
                    continue
                seen = d.seen.get(stream_id, 0) + new_events
                d.seen[stream_id] = seen
                if seen >= d.after_events:
                    d.remaining -= 1
                    return True
        return False


def _default_message(status: int) -> str:
    if status == 500:
        return "Internal error occurred: injected fault"
    if status == 429:
        return "Too many requests, please try again later."
    if status == 503:
        return "the server is currently unable to handle the request"
    if status == 504:
        return "Timeout: request did not complete within the allowed duration"
    return f"injected fault ({status})"
