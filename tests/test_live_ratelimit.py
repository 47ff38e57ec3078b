"""clientConnection qps/burst: the API client's token bucket, as client-go's
flowcontrol.NewTokenBucketRateLimiter (golang.org/x/time/rate) limits kube-scheduler."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from apiserver import ApiServerDouble
from live_support import api_for
from wasmsched.config import load_config
from wasmsched.config.models import ClientConnection, ConfigError
from wasmsched.live.ratelimit import TokenBucket
from wasmsched.scheduler.registry import default_registry


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.parametrize(
    ("qps", "burst", "gaps", "waits"),
    [
        # A full bucket lets `burst` requests through at once, then one every 1/qps.
        (10.0, 3, [0, 0, 0, 0, 0], [0, 0, 0, 0.1, 0.1]),
        # Time refills it, never beyond `burst`.
        (10.0, 2, [0, 0, 1.0, 0, 0, 0], [0, 0, 0, 0, 0.1, 0.1]),
        (2.0, 1, [0, 0.25, 0.25], [0, 0.25, 0.25]),
        (50.0, 100, [0] * 101, [0] * 100 + [0.02]),
    ],
)
def test_token_bucket(qps: float, burst: int, gaps: list[float], waits: list[float]) -> None:
    t = FakeTime()
    bucket = TokenBucket(qps, burst, clock=t.clock, sleep=t.sleep)
    got = []
    for gap in gaps:
        t.now += gap
        got.append(bucket.wait())
    assert got == pytest.approx(waits)


def test_waiters_reserve_in_turn() -> None:
    # Requests that arrive together on an empty bucket each reserve their own token (the
    # bucket goes negative, x/time/rate's reservations): they wait 1, 2, 3 and 4 intervals,
    # not 1 each. The clock stands still, as for four threads arriving at once.
    t = FakeTime()
    bucket = TokenBucket(20.0, 1, clock=t.clock, sleep=t.slept.append)
    waits = [bucket.wait() for _ in range(5)]
    assert waits == pytest.approx([0, 0.05, 0.10, 0.15, 0.20])


@pytest.mark.parametrize(("qps", "burst"), [(0.0, 1), (-1.0, 5), (5.0, 0)])
def test_token_bucket_needs_a_rate_and_a_burst(qps: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(qps, burst)


def test_the_api_client_waits_for_tokens() -> None:
    srv = ApiServerDouble()
    srv.start()
    try:
        api = api_for(srv)
        api.rate_limit = TokenBucket(20.0, 2)
        started = time.monotonic()
        for _ in range(6):
            api.request("GET", "/version")
        # Two at once, then four more at 20 a second.
        assert time.monotonic() - started >= 4 / 20 - 0.01
        api.close()
    finally:
        srv.stop()


def write_config(tmp_path: Path, connection: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        + connection
    )
    return path


@pytest.mark.parametrize(
    ("connection", "expected"),
    [
        ("", ClientConnection()),
        ("clientConnection: {}\n", ClientConnection(50.0, 100)),
        ("clientConnection: {qps: 0, burst: 0}\n", ClientConnection(50.0, 100)),
        ("clientConnection: {qps: 200, burst: 400}\n", ClientConnection(200.0, 400)),
        ("clientConnection: {qps: 2.5, burst: 1}\n", ClientConnection(2.5, 1)),
        ("clientConnection: {qps: -1}\n", ClientConnection(-1.0, 100)),
        (
            "clientConnection: {kubeconfig: /etc/k.conf, contentType: application/json, "
            "acceptContentTypes: application/json}\n",
            ClientConnection(50.0, 100, "/etc/k.conf", "application/json", "application/json"),
        ),
    ],
)
def test_client_connection_defaults(tmp_path: Path, connection: str, expected: Any) -> None:
    assert (
        load_config(write_config(tmp_path, connection), default_registry()).client_connection
        == expected
    )


@pytest.mark.parametrize(
    ("connection", "expected"),
    [
        ("clientConnection: {burst: -1}\n", "clientConnection.burst: must be non-negative"),
        ("clientConnection: {qps: fast}\n", "clientConnection.qps"),
        (
            "clientConnection: {qpss: 5}\n",
            "clientConnection: unknown field qpss (did you mean qps?)",
        ),
    ],
)
def test_client_connection_errors(tmp_path: Path, connection: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path, connection), default_registry())
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_events_take_tokens_from_a_bucket_of_their_own() -> None:
    """kube-scheduler's events go through a second clientset of the same config (its own
    token bucket): at 2 qps and burst 1, a binding and an event go out at once, not half a
    second apart; the event client shares the connections."""
    from wasmsched.config import default_config
    from wasmsched.live import LiveRunner, RunOptions
    from wasmsched.plugins.registry import in_tree_registry

    srv = ApiServerDouble()
    srv.start()
    try:
        api = api_for(srv)
        api.rate_limit = TokenBucket(2.0, 1)
        runner = LiveRunner(
            api, default_config(), in_tree_registry(), RunOptions(leader_elect=False, port=None)
        )
        events = runner.writer.event_client
        assert events is not api and events._clients is api._clients
        assert events.rate_limit is not None and events.rate_limit is not api.rate_limit
        assert (events.rate_limit.qps, events.rate_limit.burst) == (2.0, 1)
        started = time.monotonic()
        api.request("GET", "/version")
        events.request("GET", "/version")
        assert time.monotonic() - started < 0.4
        runner.dispatcher.close(1.0)
        api.close()
    finally:
        srv.stop()
