"""``wasmsched run`` as a process: bad input, and a SIGTERM that releases the lease."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from apiserver import ApiServerDouble
from live_support import node, placements, pod, wait
from wasmsched.cli import app

cli = CliRunner()
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  leaseDuration: 2s
  renewDeadline: 1s
  retryPeriod: 200ms
  resourceName: wasmsched-test
"""


@pytest.fixture
def srv() -> Any:
    server = ApiServerDouble()
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--config", "missing.yaml"], "missing.yaml: config file not found"),
        (["--kubeconfig", "no-such-kubeconfig"], "no-such-kubeconfig: kubeconfig not found"),
        (
            ["--leader-elect-lease-duration", "1s", "--leader-elect-renew-deadline", "2s"],
            "leaseDuration must be greater than renewDeadline",
        ),
        (["--leader-elect-retry-period", "soon"], "invalid duration 'soon'"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    full = ["run", "--config", str(config), "--kubeconfig", str(tmp_path / "kc"), "--port", "0"]
    (tmp_path / "kc").write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    result = cli.invoke(app, [*full, *args])
    assert result.exit_code == 2, result.output
    line = result.stderr
    assert line.startswith("wasmsched: error: ") and line.count("\n") == 1
    assert expected in line


def stop_at_the_runner(
    monkeypatch: pytest.MonkeyPatch, server_version: str | None = "v1.33.4"
) -> list[tuple[Any, Any]]:
    """`run` ends where it would make its LiveRunner; the (api client, options) it passed
    are kept in the list returned, the config it loaded on ``configs``. With a
    ``server_version``, /version is not asked: the API server need not exist."""
    import wasmsched.live as live
    from wasmsched.errors import InputError

    seen: list[tuple[Any, Any]] = []

    def fake_runner(api: Any, config: object, registry: object, options: object) -> None:
        seen.append((api, options))
        configs.append(config)
        raise InputError("stop here")

    monkeypatch.setattr(live, "LiveRunner", fake_runner)
    if server_version is not None:
        monkeypatch.setattr(live.ApiClient, "server_version", lambda self: server_version)
    return seen


configs: list[Any] = []


@pytest.mark.parametrize(
    ("git_version", "release", "warning"),
    [
        ("v1.33.4", "1.33", None),
        ("v1.37.2", "1.37", None),
        ("v1.36.0-eks-4b1c3a", "1.36", None),
        ("v1.40.1", "1.37", "API server v1.40.1: wasmsched models Kubernetes 1.33 to 1.37"),
        ("v1.31.9", "1.33", "API server v1.31.9: wasmsched models Kubernetes 1.33 to 1.37"),
    ],
)
def test_run_schedules_as_its_api_servers_release(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    srv: ApiServerDouble,
    git_version: str,
    release: str,
    warning: str | None,
) -> None:
    """Without a version given, the config is read (default plugins, args) and the pods
    scheduled as the release that the API server's /version names."""
    seen = stop_at_the_runner(monkeypatch, server_version=None)
    configs.clear()
    srv.git_version = git_version
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    kubeconfig = srv.kubeconfig(tmp_path / "kubeconfig")
    result = cli.invoke(app, ["run", "--config", str(config), "--kubeconfig", str(kubeconfig)])
    assert "stop here" in result.stderr, result.output
    ((_, options),) = seen
    assert options.kubernetes_version is None and options.feature_gates == ""
    (sched_config,) = configs
    assert str(sched_config.features.version) == release
    warnings = [line for line in result.stderr.splitlines() if "wasmsched models" in line]
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and warning in warnings[0], result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], {"api_workers": 64, "event_workers": 16, "max_binds_in_flight": 256}),
        (
            ["--api-workers", "8", "--event-workers", "2", "--event-queue-length", "50"],
            {"api_workers": 8, "event_workers": 2, "event_queue_length": 50},
        ),
        (["--max-binds-in-flight", "3"], {"max_binds_in_flight": 3, "api_workers": 64}),
    ],
)
def test_worker_flags_reach_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], expected: dict[str, int]
) -> None:
    seen = stop_at_the_runner(monkeypatch)
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    result = cli.invoke(
        app, ["run", "--config", str(config), "--kubeconfig", str(kubeconfig), *args]
    )
    assert result.exit_code == 2, result.output
    assert "stop here" in result.stderr
    ((_, options),) = seen
    for name, value in expected.items():
        assert getattr(options, name) == value, name


def test_worker_flags_must_be_positive(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    result = cli.invoke(app, ["run", "--config", str(config), "--api-workers", "0"])
    assert result.exit_code == 2
    assert "--api-workers" in result.output + result.stderr


def test_sigterm_stops_gracefully_and_releases_the_lease(
    srv: ApiServerDouble, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    kubeconfig = srv.kubeconfig(tmp_path / "kubeconfig")
    srv.create(node("node-0"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from wasmsched.cli import main; main()",
            "run",
            "--config",
            str(config),
            "--kubeconfig",
            str(kubeconfig),
            "--port",
            "0",
            "--log-format",
            "json",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def holder() -> str:
            lease = srv.get("Lease", "kube-system", "wasmsched-test")
            return str((lease or {}).get("spec", {}).get("holderIdentity") or "")

        wait(lambda: holder() != "", timeout=20, what="the lease")
        srv.create(pod("web-0"))
        wait(lambda: placements(srv) == {"web-0": "node-0"}, what="binding")
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert holder() == ""
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    messages = [entry["msg"] for entry in lines]
    assert any(m.startswith("successfully acquired lease") for m in messages)
    assert any(m.startswith("released lease") for m in messages)
    assert messages[-1] == "stopped"


@pytest.mark.parametrize(
    ("connection", "limit", "server"),
    [
        ("", (50.0, 100), "http://127.0.0.1:1"),
        ("clientConnection: {qps: 5, burst: 7}\n", (5.0, 7), "http://127.0.0.1:1"),
        ("clientConnection: {qps: -1}\n", None, "http://127.0.0.1:1"),
        # clientConnection.kubeconfig is read when --kubeconfig is not given.
        ("clientConnection: {kubeconfig: KC}\n", (50.0, 100), "http://127.0.0.1:2"),
    ],
)
def test_client_connection_reaches_the_api_client(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    connection: str,
    limit: tuple[float, int] | None,
    server: str,
) -> None:
    seen = stop_at_the_runner(monkeypatch)
    kubeconfigs = {}
    for port in (1, 2):
        kubeconfigs[port] = tmp_path / f"kc{port}"
        kubeconfigs[port].write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
            "users: [{name: u, user: {}}]\n"
        )
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG + connection.replace("KC", str(kubeconfigs[2])))
    args = ["run", "--config", str(config)]
    if "kubeconfig" not in connection:
        args += ["--kubeconfig", str(kubeconfigs[1])]
    result = cli.invoke(app, args)
    assert "stop here" in result.stderr, result.output
    ((api, _),) = seen
    assert api.server == server
    got = None if api.rate_limit is None else (api.rate_limit.qps, api.rate_limit.burst)
    assert got == limit
