"""live/options.py: the release ``wasmsched run`` schedules as."""

from __future__ import annotations

import logging

import pytest

from wasmsched.live.client import ApiError
from wasmsched.live.options import scheduler_features
from wasmsched.live.runner import RunOptions
from wasmsched.release import FeatureGateError, KubernetesVersion
from wasmsched.release.version import DEFAULT_KUBERNETES_VERSION


class FakeApi:
    """``server_version`` answers from a script: a version, None, or an ApiError to raise."""

    def __init__(self, *answers: str | ApiError | None) -> None:
        self.answers = list(answers)
        self.calls = 0

    def server_version(self) -> str | None:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, ApiError):
            raise answer
        return answer


def test_waits_for_a_server_that_does_not_answer_yet(caplog: pytest.LogCaptureFixture) -> None:
    api = FakeApi(ApiError(0, "connection refused"), ApiError(503, "not ready"), "v1.37.2")
    slept: list[float] = []
    features = scheduler_features(api, RunOptions(), slept.append)  # type: ignore[arg-type]
    assert features.version == KubernetesVersion(1, 37)
    assert api.calls == 3 and slept == [0.5, 1.0]
    assert sum("waiting for the API server's version" in r.message for r in caplog.records) == 2


def test_a_refusal_is_not_retried() -> None:
    api = FakeApi(ApiError(401, "Unauthorized"))
    with pytest.raises(ApiError, match="401"):
        scheduler_features(api, RunOptions(), lambda s: None)  # type: ignore[arg-type]


def test_a_server_without_a_version_schedules_as_the_default_release(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        features = scheduler_features(FakeApi(None), RunOptions())  # type: ignore[arg-type]
    assert features.version == DEFAULT_KUBERNETES_VERSION
    assert any("does not tell its version" in r.message for r in caplog.records)


def test_a_given_release_does_not_ask_the_server() -> None:
    api = FakeApi()
    options = RunOptions(kubernetes_version=KubernetesVersion(1, 35), feature_gates="")
    features = scheduler_features(api, options)  # type: ignore[arg-type]
    assert features.version == KubernetesVersion(1, 35) and api.calls == 0


def test_feature_gates_apply_to_the_servers_release() -> None:
    options = RunOptions(feature_gates="OpportunisticBatching=false")
    features = scheduler_features(FakeApi("v1.37.2"), options)  # type: ignore[arg-type]
    assert features.version == KubernetesVersion(1, 37)
    assert not features.opportunistic_batching
    assert scheduler_features(FakeApi("v1.37.2"), RunOptions()).opportunistic_batching  # type: ignore[arg-type]
    with pytest.raises(FeatureGateError):
        scheduler_features(FakeApi("v1.37.2"), RunOptions(feature_gates="NoSuchGate=true"))  # type: ignore[arg-type]
