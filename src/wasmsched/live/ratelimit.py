"""The client-side rate limit of the API client (clientConnection.qps and burst).

client-go's flowcontrol.NewTokenBucketRateLimiter, which kube-scheduler's clients use
(k8s.io/client-go/rest: RESTClientFor; util/flowcontrol/throttle.go), is a
golang.org/x/time/rate Limiter: ``qps`` tokens a second into a bucket of ``burst``, full at
the start; every request, a watch's too (rest/request.go: tryThrottle), takes one token and
waits until it is there. Waiters reserve in turn, so the bucket may go negative and each
later request waits for its own token.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("wasmsched.live.client")

__all__ = ["TokenBucket"]

# client-go logs a throttled request from this wait on (rest/request.go: longThrottleLatency).
LONG_THROTTLE_SECONDS = 0.05


class TokenBucket:
    """``qps`` tokens a second, at most ``burst`` (>= 1) held, full at the start."""

    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, not {qps}, {burst}")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()

    def wait(self) -> float:
        """Take one token, sleeping until it is there; the seconds waited."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps) - 1
            self._last = now
            delay = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if delay > 0:
            if delay >= LONG_THROTTLE_SECONDS:
                log.debug("waited for client-side throttling seconds=%.3f", delay)
            self._sleep(delay)
        return delay
