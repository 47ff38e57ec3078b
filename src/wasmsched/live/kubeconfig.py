"""Read a kubeconfig (clientcmd's ``v1`` Config) and select its current context, checked.

lightkube's KubeConfig.from_file indexes the YAML it parses without looking: bad YAML, an
empty file, a list, a missing ``contexts`` or a context naming a missing cluster end as
KeyError or AttributeError tracebacks, a cluster without ``server`` silently becomes
http://localhost:8080, and a bad certificate fails only when the HTTP client is built.
Here every problem is one KubeConfigError line, ``<file>: <field path>: <problem>:
<value>``. The shape of every entry is checked (lightkube converts them all); what the
current context uses (its cluster, its user, their certificates and files) is checked as
kubectl checks a config before using it (client-go tools/clientcmd/validation.go,
ConfirmUsable: only the context in use).
"""

from __future__ import annotations

import base64
import binascii
import re
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import msgspec
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.config.models import Cluster, Context, FileStr, User
from lightkube.core.exceptions import ConfigError as LightkubeConfigError

from wasmsched.config.loader import load_yaml_file
from wasmsched.config.models import ConfigError

__all__ = ["KubeConfigError", "read_kubeconfig"]


class KubeConfigError(ConfigError):
    """A kubeconfig (or in-cluster service account) that cannot be used."""


# The named lists of a v1 Config: the list, the key of each entry's body, lightkube's model.
_SECTIONS: Final[tuple[tuple[str, str, type[msgspec.Struct]], ...]] = (
    ("clusters", "cluster", Cluster),
    ("contexts", "context", Context),
    ("users", "user", User),
)
# What lightkube's ExecAuth speaks (lightkube config/client_adapter.py, ExecAuth._prepare).
_EXEC_API_VERSIONS: Final = (
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)
# msgspec's "Expected `str`, got `int` - at `$.exec.env[0].name`".
_MSGSPEC_ERROR: Final = re.compile(r"(?P<problem>.*?)(?: - at `\$(?P<at>[^`]*)`)?")
_MAX_NAMES: Final = 5


# An entry of a named list: its field path ("contexts[\"dev\"].context"), its raw body and
# lightkube's model of it.
_Entry = tuple[str, Mapping[str, Any], Any]


def read_kubeconfig(path: str | Path) -> SingleConfig:
    """The current context of the kubeconfig at ``path``. Raises KubeConfigError."""
    file = Path(path).expanduser()
    source = str(file)
    try:
        data = load_yaml_file(file, "kubeconfig")
    except ConfigError as err:
        raise KubeConfigError(err.source, err.path, err.problem) from None
    if not isinstance(data, Mapping):
        raise KubeConfigError(
            source, "", f"expected a mapping (kind: Config), got {_a(data)}", data
        )
    for key, want in (("apiVersion", "v1"), ("kind", "Config")):
        if key in data and data[key] != want:
            raise KubeConfigError(source, key, f"expected {want}", data[key])
    clusters, contexts, users = (
        _named_entries(data, section, body, model, source) for section, body, model in _SECTIONS
    )
    if not contexts:
        state = "empty" if "contexts" in data else "missing"
        raise KubeConfigError(source, "contexts", f"{state}: a kubeconfig needs a context to use")
    current = data.get("current-context")
    if current is None or current == "":
        raise KubeConfigError(source, "current-context", f"not set ({_names(contexts)})")
    if not isinstance(current, str) or current not in contexts:
        raise KubeConfigError(
            source, "current-context", f"no such context ({_names(contexts)})", current
        )
    context_path, context, _ = contexts[current]
    cluster_name = context.get("cluster")
    if not cluster_name or cluster_name not in clusters:
        raise KubeConfigError(
            source, f"{context_path}.cluster", f"no such cluster ({_names(clusters)})", cluster_name
        )
    user_name = context.get("user")
    if user_name and user_name not in users:
        raise KubeConfigError(
            source, f"{context_path}.user", f"no such user ({_names(users)})", user_name
        )
    _check_cluster(source, file.parent, clusters[cluster_name])
    if user_name:
        _check_user(source, file.parent, users[user_name])
    config = KubeConfig(
        clusters={name: model for name, (_, _, model) in clusters.items()},
        contexts={name: model for name, (_, _, model) in contexts.items()},
        users={name: model for name, (_, _, model) in users.items()},
        current_context=current,
        fname=file,
    )
    try:
        single = config.get()
    except (LightkubeConfigError, KeyError) as err:  # pragma: no cover - checked above
        raise KubeConfigError(source, "", f"cannot use kubeconfig: {err}") from None
    assert single is not None  # current is set
    return single


def _named_entries(
    data: Mapping[str, Any], section: str, key: str, model: type[msgspec.Struct], source: str
) -> dict[str, _Entry]:
    """A named list (``clusters``, ``contexts``, ``users``) by name, each entry's shape checked."""
    entries = data.get(section)
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise KubeConfigError(source, section, f"expected a list, got {_a(entries)}", entries)
    out: dict[str, _Entry] = {}
    for i, entry in enumerate(entries):
        where = f"{section}[{i}]"
        if not isinstance(entry, Mapping):
            raise KubeConfigError(source, where, f"expected a mapping, got {_a(entry)}", entry)
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise KubeConfigError(source, f"{where}.name", "expected a non-empty string", name)
        if name in out:
            raise KubeConfigError(source, f"{where}.name", f"duplicate name in {section}", name)
        path = f'{section}["{name}"].{key}'
        body = entry.get(key)
        if body is None and key == "user":
            body = {}  # a user with no credentials: unauthenticated, as kubectl allows
        if not isinstance(body, Mapping):
            problem = "missing" if body is None else f"expected a mapping, got {_a(body)}"
            raise KubeConfigError(source, path, problem, *(() if body is None else (body,)))
        try:
            converted = msgspec.convert(dict(body), model)
        except msgspec.ValidationError as err:
            raise _shape_error(source, path, body, str(err)) from None
        out[name] = (path, body, converted)
    return out


def _shape_error(source: str, path: str, body: Mapping[str, Any], message: str) -> KubeConfigError:
    """msgspec's "Expected `str`, got `int` - at `$.server`" as our one line, with the value."""
    match = _MSGSPEC_ERROR.fullmatch(message)
    assert match is not None  # the pattern matches any text
    # "Expected `str | null`": an optional field, null allowed but not worth saying.
    problem = match["problem"].replace("`", "").replace(" | null", "")
    problem = problem[:1].lower() + problem[1:]
    at = match["at"] or ""
    value: Any = body
    for step in re.findall(r"\.([^.\[]+)|\[(\d+)\]", at):
        field, index = step
        try:
            value = value[field] if field else value[int(index)]
        except (KeyError, IndexError, TypeError):
            value = None
            break
    if problem.startswith("object missing required field "):
        field = problem.rpartition(" ")[2]
        return KubeConfigError(source, f"{path}{at}.{field}", "required field is missing")
    return KubeConfigError(source, f"{path}{at}", problem, value)


def _check_cluster(source: str, base: Path, entry: _Entry) -> None:
    path, body, _ = entry
    server = body.get("server")
    if not server:
        raise KubeConfigError(source, f"{path}.server", "missing: the API server's URL")
    try:
        url = urlsplit(server)
        url.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        url = urlsplit("")
    if url.scheme not in ("http", "https") or not url.hostname:
        raise KubeConfigError(
            source, f"{path}.server", "expected an http:// or https:// URL", server
        )
    ca_file = body.get("certificate-authority")
    ca_data = body.get("certificate-authority-data")
    if ca_file and ca_data:
        raise KubeConfigError(
            source,
            f"{path}.certificate-authority",
            "give it or certificate-authority-data, not both",
        )
    if (ca_file or ca_data) and body.get("insecure-skip-tls-verify"):
        raise KubeConfigError(
            source,
            f"{path}.insecure-skip-tls-verify",
            "a certificate authority with insecure-skip-tls-verify is contradictory",
            True,
        )
    field = "certificate-authority" if ca_file else "certificate-authority-data"
    pem = _base64(source, f"{path}.{field}", ca_data) if ca_data else b""
    try:
        if ca_file:
            ssl.create_default_context(cafile=_resolve(base, ca_file))
        elif ca_data:
            ssl.create_default_context(cadata=pem.decode("latin-1"))
    except (OSError, ValueError) as err:  # ssl.SSLError is an OSError
        raise KubeConfigError(
            source,
            f"{path}.{field}",
            f"not a usable CA certificate ({_reason(err)})",
            ca_file or ca_data,
        ) from None


def _check_user(source: str, base: Path, entry: _Entry) -> None:
    path, body, _ = entry
    if body.get("auth-provider"):
        raise KubeConfigError(
            source, f"{path}.auth-provider", "not supported: use an exec credential plugin (exec)"
        )
    exec_ = body.get("exec")
    if exec_ and exec_.get("apiVersion") not in _EXEC_API_VERSIONS:
        raise KubeConfigError(
            source,
            f"{path}.exec.apiVersion",
            f"not supported (supported: {', '.join(_EXEC_API_VERSIONS)})",
            exec_.get("apiVersion"),
        )
    token_file = body.get("tokenFile")
    if token_file:
        try:
            Path(_resolve(base, token_file)).read_bytes()
        except OSError as err:
            raise KubeConfigError(
                source, f"{path}.tokenFile", f"cannot read ({_reason(err)})", token_file
            ) from None
    _check_client_certificate(source, base, path, body)


def _check_client_certificate(source: str, base: Path, path: str, body: Mapping[str, Any]) -> None:
    """The client certificate and its key: both given (as a file or inline), and a pair."""
    files: list[str] = []
    for kind in ("client-certificate", "client-key"):
        file, data = body.get(kind), body.get(f"{kind}-data")
        if file and data:
            raise KubeConfigError(source, f"{path}.{kind}", f"give it or {kind}-data, not both")
        if file:
            files.append(_resolve(base, file))
        elif data:
            _base64(source, f"{path}.{kind}-data", data)
            # lightkube writes inline data to a temporary file the same way.
            files.append(FileStr(data))
    if not files:
        return
    if len(files) == 1:
        given, missing = (
            ("client-certificate", "client-key")
            if body.get("client-certificate") or body.get("client-certificate-data")
            else ("client-key", "client-certificate")
        )
        raise KubeConfigError(
            source, f"{path}.{missing}", f"missing: {given} needs it (or {missing}-data)"
        )
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(files[0], files[1])
    except (OSError, ValueError) as err:
        raise KubeConfigError(
            source,
            f"{path}.client-certificate",
            f"the client certificate and key do not load ({_reason(err)})",
        ) from None


def _base64(source: str, path: str, data: str) -> bytes:
    """Inline ``*-data``: standard base64; line breaks are ignored, as Go's decoder does."""
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        raise KubeConfigError(source, path, "not valid base64", data) from None


def _resolve(base: Path, file: str) -> str:
    """A path in a kubeconfig is relative to the kubeconfig's folder (lightkube's abs_file)."""
    return str(base / Path(file).expanduser())


def _reason(err: Exception) -> str:
    if isinstance(err, ssl.SSLError):
        return str(err.reason or err).lower().replace("_", " ")
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower()
    return str(err)


def _names(entries: Mapping[str, object]) -> str:
    names = sorted(entries)
    if not names:
        return "there are none"
    shown = ", ".join(names[:_MAX_NAMES])
    return f"known: {shown}{', ...' if len(names) > _MAX_NAMES else ''}"


def _a(value: object) -> str:
    """The YAML kind of a value, for "expected a mapping, got a list"."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"
