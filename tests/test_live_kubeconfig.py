"""A malformed kubeconfig is one line naming the file, the field and the value, exit 2."""

from __future__ import annotations

import base64
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from live_support import self_signed
from wasmsched.cli import app
from wasmsched.live import ApiClient, KubeConfigError, load_kube_config

cli = CliRunner()

VALID = """apiVersion: v1
kind: Config
current-context: c
clusters: [{name: k, cluster: {server: 'https://127.0.0.1:6443'}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {token: t}}]
"""


def _edit(**changes: Any) -> str:
    """VALID with top-level keys replaced (None drops the key)."""
    data = yaml.safe_load(VALID)
    for key, value in changes.items():
        key = key.replace("_", "-")
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return yaml.safe_dump(data, sort_keys=False)


def _cluster(**fields: Any) -> str:
    return _edit(clusters=[{"name": "k", "cluster": fields}])


def _user(**fields: Any) -> str:
    return _edit(users=[{"name": "u", "user": fields}])


B64_TEXT = base64.b64encode(b"not a certificate").decode()
SERVER = "https://127.0.0.1:6443"

# (kubeconfig text, what the one line says after "<file>: ")
MALFORMED: list[tuple[str, str]] = [
    ("clusters: [\n", "line 2, column 1: invalid YAML: "),
    ("", "kubeconfig is empty"),
    ("# only a comment\n", "kubeconfig is empty"),
    (VALID + "---\n" + VALID, "invalid YAML: expected a single document in the stream"),
    ("- a\n- b\n", 'expected a mapping (kind: Config), got a list: ["a", "b"]'),
    ("just text\n", 'expected a mapping (kind: Config), got a string: "just text"'),
    ("a: 1\na: 2\n", 'invalid YAML: duplicate key "a"'),
    (_edit(kind="Pod"), 'kind: expected Config: "Pod"'),
    (_edit(apiVersion="v2"), 'apiVersion: expected v1: "v2"'),
    (_edit(contexts=None), "contexts: missing: a kubeconfig needs a context to use"),
    (_edit(contexts=[]), "contexts: empty: a kubeconfig needs a context to use"),
    (_edit(contexts={"c": 1}), 'contexts: expected a list, got a mapping: {"c": 1}'),
    (_edit(contexts=["c"]), 'contexts[0]: expected a mapping, got a string: "c"'),
    (_edit(contexts=[{"context": {"cluster": "k"}}]), "contexts[0].name: expected a non-empty"),
    (
        _edit(contexts=[{"name": "c", "context": {"cluster": "k"}}] * 2),
        'contexts[1].name: duplicate name in contexts: "c"',
    ),
    (_edit(contexts=[{"name": "c"}]), 'contexts["c"].context: missing'),
    (
        _edit(contexts=[{"name": "c", "context": {"user": "u"}}]),
        'contexts["c"].context.cluster: required field is missing',
    ),
    (_edit(current_context=None), "current-context: not set (known: c)"),
    (_edit(current_context="prod"), 'current-context: no such context (known: c): "prod"'),
    (_edit(current_context=["c"]), 'current-context: no such context (known: c): ["c"]'),
    (
        _edit(contexts=[{"name": "c", "context": {"cluster": "prod"}}]),
        'contexts["c"].context.cluster: no such cluster (known: k): "prod"',
    ),
    (
        _edit(clusters=None),
        'contexts["c"].context.cluster: no such cluster (there are none): "k"',
    ),
    (
        _edit(contexts=[{"name": "c", "context": {"cluster": "k", "user": "admin"}}]),
        'contexts["c"].context.user: no such user (known: u): "admin"',
    ),
    (_cluster(), 'clusters["k"].cluster.server: missing: the API server\'s URL'),
    (_cluster(server=""), 'clusters["k"].cluster.server: missing'),
    (_cluster(server=6443), 'clusters["k"].cluster.server: expected str, got int: 6443'),
    (
        _cluster(server="127.0.0.1:6443"),
        'clusters["k"].cluster.server: expected an http:// or https:// URL: "127.0.0.1:6443"',
    ),
    (_cluster(server="https://h:99999"), "expected an http:// or https:// URL"),
    (
        _cluster(server=SERVER, **{"insecure-skip-tls-verify": "yes"}),
        'clusters["k"].cluster.insecure-skip-tls-verify: expected bool, got str: "yes"',
    ),
    (
        _cluster(server=SERVER, **{"certificate-authority-data": "not base64!"}),
        'clusters["k"].cluster.certificate-authority-data: not valid base64: "not base64!"',
    ),
    (
        _cluster(server=SERVER, **{"certificate-authority-data": B64_TEXT}),
        'clusters["k"].cluster.certificate-authority-data: not a usable CA certificate',
    ),
    (
        _cluster(server=SERVER, **{"certificate-authority": "missing-ca.crt"}),
        'certificate-authority: not a usable CA certificate (no such file or directory): "missing',
    ),
    (
        _cluster(
            server=SERVER,
            **{"certificate-authority": "ca.crt", "certificate-authority-data": B64_TEXT},
        ),
        "certificate-authority: give it or certificate-authority-data, not both",
    ),
    (
        _cluster(
            server=SERVER,
            **{"certificate-authority-data": B64_TEXT, "insecure-skip-tls-verify": True},
        ),
        "insecure-skip-tls-verify: a certificate authority with insecure-skip-tls-verify",
    ),
    (
        _user(**{"client-certificate-data": "%%%"}),
        'users["u"].user.client-certificate-data: not valid base64: "%%%"',
    ),
    (
        _user(**{"client-certificate-data": B64_TEXT}),
        'users["u"].user.client-key: missing: client-certificate needs it',
    ),
    (
        _user(**{"client-key": "k.pem"}),
        'users["u"].user.client-certificate: missing: client-key needs it',
    ),
    (
        _user(**{"client-certificate-data": B64_TEXT, "client-key-data": B64_TEXT}),
        'users["u"].user.client-certificate: the client certificate and key do not load',
    ),
    (_user(token=5), 'users["u"].user.token: expected str, got int: 5'),
    (_user(tokenFile="no-token"), 'users["u"].user.tokenFile: cannot read (no such file'),
    (_edit(users=[{"name": "u", "user": "t"}]), 'users["u"].user: expected a mapping'),
    (
        _user(exec={"apiVersion": "client.authentication.k8s.io/v1beta1"}),
        'users["u"].user.exec.command: required field is missing',
    ),
    (
        _user(exec={"apiVersion": "client.authentication.k8s.io/v1", "command": "x"}),
        'users["u"].user.exec.apiVersion: not supported',
    ),
    (
        _user(exec={"apiVersion": "v", "command": "x", "env": [{"name": 1, "value": "v"}]}),
        'users["u"].user.exec.env[0].name: expected str, got int: 1',
    ),
    (_user(**{"auth-provider": {"name": "gcp"}}), 'users["u"].user.auth-provider: not supported'),
]


def _one_line_error(result: Any) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    line: str = result.stderr
    assert line.startswith("wasmsched: error: ") and line.count("\n") == 1, line
    return line.removeprefix("wasmsched: error: ").rstrip("\n")


@pytest.mark.parametrize(("text", "expected"), MALFORMED)
@pytest.mark.parametrize("command", ["snapshot", "run"])
def test_a_malformed_kubeconfig_is_one_line_naming_file_field_value(
    tmp_path: Path, command: str, text: str, expected: str
) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text(text)
    args = ["--kubeconfig", str(kubeconfig)]
    if command == "run":
        config = tmp_path / "config.yaml"
        config.write_text(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        )
        args += ["--config", str(config), "--port", "0"]
    line = _one_line_error(cli.invoke(app, [command, *args]))
    assert line.startswith(f"{kubeconfig}: "), line
    assert expected in line, line


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda d: d / "absent.yaml", "kubeconfig not found"),
        (lambda d: d, "cannot read kubeconfig: is a directory"),
        (lambda d: _write(d / "latin1.yaml", b"server: caf\xe9\n"), "cannot read kubeconfig:"),
    ],
)
def test_an_unreadable_kubeconfig_is_one_line(tmp_path: Path, make: Any, expected: str) -> None:
    path = make(tmp_path)
    line = _one_line_error(cli.invoke(app, ["snapshot", "--kubeconfig", str(path)]))
    assert line.startswith(f"{path}: "), line
    assert expected in line.lower(), line


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_the_kubeconfig_from_the_environment_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "env-kubeconfig"
    path.write_text(_edit(contexts=[]))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(path))
    line = _one_line_error(cli.invoke(app, ["snapshot"]))
    assert line == f"{path}: contexts: empty: a kubeconfig needs a context to use"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return self_signed(tmp_path_factory.mktemp("pki"))


def test_a_well_formed_kubeconfig_with_certificates_loads(tmp_path: Path, pki: Path) -> None:
    def b64(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    # Files relative to the kubeconfig's folder, and inline data with line breaks.
    shutil.copy(pki / "tls.crt", tmp_path / "ca.crt")
    token = tmp_path / "token"
    token.write_text("secret\n")
    path = tmp_path / "kc.yaml"
    path.write_text(
        _edit(
            clusters=[
                {"name": "k", "cluster": {"server": SERVER, "certificate-authority": "ca.crt"}}
            ],
            users=[{"name": "u", "user": {"tokenFile": "token"}}],
        )
    )
    config = load_kube_config(path)
    assert (config.cluster.server, config.context_name) == (SERVER, "c")
    ApiClient.from_kubeconfig(path).close()
    wrapped = "\n".join(b64("tls.crt")[i : i + 64] for i in range(0, len(b64("tls.crt")), 64))
    path.write_text(
        _edit(
            clusters=[
                {"name": "k", "cluster": {"server": SERVER, "certificate-authority-data": wrapped}}
            ],
            users=[
                {
                    "name": "u",
                    "user": {
                        "client-certificate-data": b64("tls.crt"),
                        "client-key": str(pki / "tls.key"),
                    },
                }
            ],
        )
    )
    ApiClient.from_kubeconfig(path).close()


# Random kubeconfigs: the valid one with fields dropped or replaced by random YAML values.
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10**6),
    st.text(max_size=12),
    st.sampled_from(["k", "c", "u", SERVER, "http://", B64_TEXT, "v1", "Config", ""]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["name", "cluster", "user", "server", "x"]), inner)
    ),
    max_leaves=6,
)


@st.composite
def _mutated(draw: st.DrawFn) -> Any:
    data: Any = yaml.safe_load(VALID)
    for _ in range(draw(st.integers(1, 4))):
        # Walk to a random place in the document and drop or replace what is there.
        node = data
        path: list[Any] = []
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            key = draw(st.sampled_from(keys))
            path.append(key)
            node = node[key]
        if not path:
            data = draw(_VALUES) if draw(st.integers(0, 9)) == 0 else data
            continue
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(_VALUES)
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(document=_mutated() | st.text(max_size=80))
def test_no_kubeconfig_gives_a_traceback(document: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kc.yaml"
        path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
        try:
            ApiClient.from_kubeconfig(path).close()
        except KubeConfigError as err:
            message = str(err)
            assert message.startswith(f"{path}: ") and "\n" not in message, message
