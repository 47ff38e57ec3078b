"""Scheduler extenders: HTTP webhooks for filter, prioritize, preempt and bind.

The wire format is kube-scheduler's (``k8s.io/kube-scheduler/extender/v1``). Its types
declare no JSON tags, so requests carry the Go field names (``Pod``, ``Nodes``,
``NodeNames``, ``PodName``...) and replies are matched case-insensitively, as Go's
``encoding/json`` does: an extender may answer ``{"nodenames": [...]}`` or
``{"NodeNames": [...]}``.

Behaviour follows ``pkg/scheduler/extender.go``: the URL is ``urlPrefix`` (trailing
slashes trimmed) + "/" + verb, a non-200 reply is an error naming the verb, URL and code,
an ``Error`` field in a reply is an error with that text, and the scheme comes from
``urlPrefix`` (``enableHTTPS`` only makes a CA-less TLS config skip verification).
"""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import os
import socket
import ssl
import tempfile
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from wasmsched.config import ConfigError
from wasmsched.framework import extender as fx
from wasmsched.framework.extender import (
    MAX_EXTENDER_PRIORITY,
    ExtenderError,
    NodeLookup,
    Victims,
)
from wasmsched.framework.status import Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.config import Extender
    from wasmsched.framework.node_info import NodeInfo


_HEADERS: Final = {"Content-Type": "application/json", "Accept": "application/json"}
# Go's http.Client reports a timeout this way; the message is what users see in events.
_TIMEOUT_TEXT: Final = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
_DECODER: Final = json.JSONDecoder()


# ---------------------------------------------------------------------------------------
# Transport


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS with a TLS server name other than the host (tlsConfig.serverName)."""

    def __init__(
        self, host: str, port: int | None, timeout: float, ctx: ssl.SSLContext, sni: str
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=ctx)
        self._ctx = ctx
        self._sni = sni

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._ctx.wrap_socket(self.sock, server_hostname=self._sni)


class _Transport:
    """One keep-alive connection to an extender's host, used by one caller at a time."""

    def __init__(
        self,
        scheme: str,
        host: str,
        port: int | None,
        timeout: float,
        ctx: ssl.SSLContext | None,
        server_name: str,
    ) -> None:
        self.scheme = scheme
        self.host = host
        self.port = port
        self.timeout = timeout
        self.ctx = ctx
        self.server_name = server_name
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()
        default_port = 443 if scheme == "https" else 80
        self.dial_address = f"{host}:{port or default_port}"

    def _connect(self) -> http.client.HTTPConnection:
        if self.scheme == "http":
            return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        ctx = self.ctx if self.ctx is not None else ssl.create_default_context()
        if self.server_name:
            return _PinnedHTTPSConnection(self.host, self.port, self.timeout, ctx, self.server_name)
        return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout, context=ctx)

    def post(self, target: str, body: bytes) -> tuple[int, bytes]:
        """(status, body) of a POST; raises OSError or HTTPException on transport failure."""
        with self._lock:
            for attempt in (0, 1):
                conn = self._conn
                reused = conn is not None
                if conn is None:
                    conn = self._conn = self._connect()
                try:
                    conn.request("POST", target, body, _HEADERS)
                    resp = conn.getresponse()
                    data = resp.read()
                except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                    self.close_locked()
                    # The server dropped an idle keep-alive connection: retry on a new one.
                    if reused and attempt == 0:
                        continue
                    raise
                except BaseException:
                    self.close_locked()
                    raise
                if resp.will_close:
                    self.close_locked()
                return resp.status, data
        raise AssertionError("unreachable")  # pragma: no cover

    def close_locked(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        with self._lock:
            self.close_locked()


def _transport_error(url: str, dial: str, host: str, err: BaseException) -> str:
    """Go's url.Error text: ``Post "<url>": <cause>``."""
    if isinstance(err, TimeoutError):
        cause = _TIMEOUT_TEXT
    elif isinstance(err, ConnectionRefusedError):
        cause = f"dial tcp {dial}: connect: connection refused"
    elif isinstance(err, socket.gaierror):
        cause = f"dial tcp: lookup {host}: no such host"
    elif isinstance(err, http.client.RemoteDisconnected):
        cause = "EOF"
    else:
        cause = str(err) or type(err).__name__
    return f'Post "{url}": {cause}'


# ---------------------------------------------------------------------------------------
# TLS


def _tls_bytes(tls: Mapping[str, Any], data_key: str, file_key: str) -> tuple[bytes | None, str]:
    """client-go's dataFromSliceOrFile: inline (base64) data wins over a file."""
    data = str(tls.get(data_key) or "")
    if data:
        try:
            return base64.b64decode(data, validate=True), data_key
        except (binascii.Error, ValueError):
            raise ValueError(f"{data_key}: illegal base64 data") from None
    path = str(tls.get(file_key) or "")
    if path:
        try:
            with open(path, "rb") as f:
                return f.read(), file_key
        except OSError as e:
            raise ValueError(f"{file_key}: {e.strerror or e}: {path}") from None
    return None, ""


def _ssl_context(cfg: Extender) -> tuple[ssl.SSLContext | None, str]:
    """The TLS context (None when neither tlsConfig nor enableHTTPS) and the server name."""
    if cfg.tls_config is None and not cfg.enable_https:
        return None, ""
    tls: Mapping[str, Any] = cfg.tls_config or {}
    ca, _ = _tls_bytes(tls, "caData", "caFile")
    cert, cert_key = _tls_bytes(tls, "certData", "certFile")
    key, key_key = _tls_bytes(tls, "keyData", "keyFile")
    insecure = bool(tls.get("insecure"))
    if ca is not None and insecure:
        raise ValueError(
            "specifying a root certificates file with the insecure flag is not allowed"
        )
    # kube-scheduler: HTTPS without a CA skips verification rather than use system roots.
    if cfg.enable_https and ca is None:
        insecure = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca is not None:
        try:
            ctx.load_verify_locations(cadata=ca.decode("ascii", "replace"))
        except ssl.SSLError as e:
            raise ValueError(f"unable to load root certificates: {e}") from None
    else:
        ctx.load_default_certs()
    if (cert is None) != (key is None):
        given = cert_key or key_key
        missing = "cert" if cert is None else "key"
        raise ValueError(f"{given} given without a client {missing}")
    if cert is not None and key is not None:
        _load_client_cert(ctx, cert, key)
    return ctx, str(tls.get("serverName") or "")


def _load_client_cert(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    # ssl loads key pairs only from files: write them briefly to private temporary files.
    paths: list[str] = []
    try:
        for blob in (cert, key):
            fd, path = tempfile.mkstemp(prefix="wasmsched-extender-", suffix=".pem")
            paths.append(path)
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
        ctx.load_cert_chain(paths[0], paths[1])
    except ssl.SSLError as e:
        raise ValueError(f"unable to load client certificate and key: {e}") from None
    finally:
        for path in paths:
            os.unlink(path)


# ---------------------------------------------------------------------------------------
# JSON


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def _fields(value: Any, what: str) -> dict[str, Any]:
    """A reply object with lower-cased keys (Go matches field names case-insensitively)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what}: expected an object, got {_json_type(value)}")
    return {str(k).lower(): v for k, v in value.items()}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{what}: expected an object of strings")
    return {str(k): v for k, v in value.items()}


def _string_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what}: expected an array of strings")
    return value


def _int(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what}: expected an integer, got {json.dumps(value)}")
    return value


def _meta_victims(value: Any) -> list[tuple[str, list[str], int]]:
    """(node, victim pod UIDs, PDB violations) of ExtenderPreemptionResult's map."""
    if value is None:
        return []
    if not isinstance(value, dict):
        raise ValueError("NodeNameToMetaVictims: expected an object")
    out = []
    for node_name, entry in value.items():
        what = f"NodeNameToMetaVictims[{node_name}]"
        fields = _fields(entry, what)
        pods = fields.get("pods") or []
        if not isinstance(pods, list):
            raise ValueError(f"{what}.Pods: expected an array")
        uids = []
        for i, meta_pod in enumerate(pods):
            uid = _fields(meta_pod, f"{what}.Pods[{i}]").get("uid")
            if not isinstance(uid, str):
                raise ValueError(f"{what}.Pods[{i}].UID: expected a string")
            uids.append(uid)
        out.append(
            (node_name, uids, _int(fields.get("numpdbviolations"), f"{what}.NumPDBViolations"))
        )
    return out


def _node_list_names(value: Any, what: str) -> list[str]:
    items = _fields(value, what).get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise ValueError(f"{what}.items: expected an array")
    names = []
    for i, item in enumerate(items):
        meta = _fields(item, f"{what}.items[{i}]").get("metadata")
        name = _fields(meta, f"{what}.items[{i}].metadata").get("name")
        if not isinstance(name, str):
            raise ValueError(f"{what}.items[{i}].metadata.name: expected a string")
        names.append(name)
    return names


# ---------------------------------------------------------------------------------------
# The HTTP extender


class HTTPExtender:
    """kube-scheduler's HTTPExtender: one configured extender reached over HTTP(S)."""

    def __init__(self, config: Extender) -> None:
        self.config = config
        # kube-scheduler names an extender by its URL prefix (events, scores, logs).
        self.name = config.url_prefix
        self.weight = config.weight
        self.ignorable = config.ignorable
        self.node_cache_capable = config.node_cache_capable
        self.has_filter = bool(config.filter_verb)
        self.has_prioritize = bool(config.prioritize_verb)
        self.has_bind = bool(config.bind_verb)
        self.supports_preemption = bool(config.preempt_verb)
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        base = config.url_prefix.rstrip("/")
        self._urls = {
            verb: f"{base}/{verb}"
            for verb in (
                config.filter_verb,
                config.prioritize_verb,
                config.bind_verb,
                config.preempt_verb,
            )
            if verb
        }
        self._targets: dict[str, str] = {}
        self._url_problem = ""
        self._transport: _Transport | None = None
        ctx, server_name = _ssl_context(config)
        parts = urllib.parse.urlsplit(base)
        if parts.scheme not in ("http", "https"):
            self._url_problem = f'unsupported protocol scheme "{parts.scheme}"'
        elif not parts.hostname:
            self._url_problem = "no Host in request URL"
        else:
            try:
                port = parts.port
            except ValueError:
                self._url_problem = f'invalid port in "{parts.netloc}"'
            else:
                self._transport = _Transport(
                    parts.scheme,
                    parts.hostname,
                    port,
                    config.http_timeout_seconds,
                    ctx,
                    server_name,
                )
                for verb, url in self._urls.items():
                    p = urllib.parse.urlsplit(url)
                    self._targets[verb] = (p.path or "/") + (f"?{p.query}" if p.query else "")
        # Serialized manifests, reused while the object is the same (objects never change).
        self._node_json: dict[str, tuple[Node, bytes]] = {}
        self._pod_json: tuple[Pod | None, bytes] = (None, b"")

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    # --- the protocol -------------------------------------------------------------------

    def is_interested(self, pod: Pod) -> bool:
        """True when no managedResources, or a container requests or limits one of them."""
        managed = self.managed_resources
        if not managed:
            return True
        spec = pod.spec
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or ():
                resources = container.get("resources") if isinstance(container, Mapping) else None
                if not isinstance(resources, Mapping):
                    continue
                for kind in ("requests", "limits"):
                    names = resources.get(kind)
                    if isinstance(names, Mapping) and not managed.isdisjoint(names):
                        return True
        return False

    def filter(
        self, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """The nodes the extender keeps, in its order, and the ones it rejected."""
        verb = self.config.filter_verb
        if not verb:
            return nodes, {}, {}
        raw = self._call(verb, self._extender_args(pod, nodes))
        try:
            reply = _fields(raw, "ExtenderFilterResult")
            message = reply.get("error")
            if message and not isinstance(message, str):
                raise ValueError("Error: expected a string")
            if message:
                raise ExtenderError(message)
            names: list[str] = []
            from_names = self.node_cache_capable and reply.get("nodenames") is not None
            if from_names:
                names = _string_list(reply["nodenames"], "NodeNames")
            elif reply.get("nodes") is not None:
                # A non-cache-capable extender answers with Nodes; a bare NodeNames reply
                # is ignored, as kube-scheduler ignores it (every node is then filtered out).
                names = _node_list_names(reply["nodes"], "Nodes")
            failed = _string_map(reply.get("failednodes"), "FailedNodes")
            unresolvable = _string_map(
                reply.get("failedandunresolvablenodes"), "FailedAndUnresolvableNodes"
            )
        except ValueError as e:
            raise self._bad_reply(verb, str(e)) from None
        by_name = {ni.name: ni for ni in nodes}
        feasible: list[NodeInfo] = []
        seen: set[str] = set()
        for name in names:
            ni = by_name.get(name)
            if ni is None:
                raise ExtenderError(
                    f'extender "{self.name}" claims a filtered node "{name}" which is not '
                    "found in the input node list"
                )
            if name not in seen:
                seen.add(name)
                feasible.append(ni)
        return feasible, failed, unresolvable

    def prioritize(self, pod: Pod, nodes: list[NodeInfo]) -> list[tuple[str, int]]:
        """(node, score 0..MAX_EXTENDER_PRIORITY) as the extender answers; unscaled."""
        verb = self.config.prioritize_verb
        if not verb:
            return [(ni.name, 0) for ni in nodes]
        reply = self._call(verb, self._extender_args(pod, nodes))
        if reply is None:
            return []
        try:
            if not isinstance(reply, list):
                raise ValueError(f"HostPriorityList: expected an array, got {_json_type(reply)}")
            out: list[tuple[str, int]] = []
            for i, entry in enumerate(reply):
                fields = _fields(entry, f"HostPriorityList[{i}]")
                host = fields.get("host")
                if host is None:
                    host = ""
                if not isinstance(host, str):
                    raise ValueError(f"HostPriorityList[{i}].Host: expected a string")
                out.append((host, _int(fields.get("score"), f"HostPriorityList[{i}].Score")))
        except ValueError as e:
            raise self._bad_reply(verb, str(e)) from None
        return out

    def bind(self, pod: Pod, node_name: str) -> None:
        """Delegates the binding; the extender writes it to its API server."""
        verb = self.config.bind_verb
        if not verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {
            "PodName": pod.name,
            "PodNamespace": pod.namespace,
            "PodUID": pod.uid,
            "Node": node_name,
        }
        try:
            reply = _fields(self._call(verb, _dumps(args)), "ExtenderBindingResult")
        except ValueError as e:
            raise self._bad_reply(verb, str(e)) from None
        message = reply.get("error")
        if message:
            raise ExtenderError(str(message))

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], nodes: NodeLookup
    ) -> dict[str, Victims]:
        """The candidates the extender keeps, with the victims it chose on each."""
        verb = self.config.preempt_verb
        if not verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.name} but run into "
                "ProcessPreemption"
            )
        if self.node_cache_capable:
            meta = {
                node: {
                    "Pods": [{"UID": p.uid} for p in v.pods],
                    "NumPDBViolations": v.num_pdb_violations,
                }
                for node, v in victims.items()
            }
            args: dict[str, Any] = {
                "Pod": pod.manifest,
                "NodeNameToVictims": None,
                "NodeNameToMetaVictims": meta,
            }
        else:
            full = {
                node: {
                    "Pods": [p.manifest for p in v.pods],
                    "NumPDBViolations": v.num_pdb_violations,
                }
                for node, v in victims.items()
            }
            args = {"Pod": pod.manifest, "NodeNameToVictims": full, "NodeNameToMetaVictims": None}
        try:
            reply = _fields(self._call(verb, _dumps(args)), "ExtenderPreemptionResult")
            parsed = _meta_victims(reply.get("nodenametometavictims"))
        except ValueError as e:
            raise self._bad_reply(verb, str(e)) from None
        out: dict[str, Victims] = {}
        for node_name, uids, violations in parsed:
            ni = nodes.get(node_name)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
            on_node = {pi.pod.uid: pi.pod for pi in ni.pods}
            chosen_pods = []
            for uid in uids:
                victim = on_node.get(uid)
                if victim is None:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: {uid}) on node: "
                        f"{node_name}, but the pod is not found on that node"
                    )
                chosen_pods.append(victim)
            out[node_name] = Victims(chosen_pods, violations)
        return out

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    # --- wire ---------------------------------------------------------------------------

    def _extender_args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> bytes:
        """ExtenderArgs: NodeNames for a node-cache-capable extender, else a NodeList."""
        cached_pod, pod_json = self._pod_json
        if cached_pod is not pod:
            pod_json = _dumps(pod.manifest)
            self._pod_json = (pod, pod_json)
        if self.node_cache_capable:
            names = _dumps([ni.name for ni in nodes])
            return b'{"Pod":%b,"Nodes":null,"NodeNames":%b}' % (pod_json, names)
        cache = self._node_json
        items = []
        for ni in nodes:
            node = ni.node
            hit = cache.get(ni.name)
            if hit is None or hit[0] is not node:
                hit = (node, _dumps(node.manifest))
                cache[ni.name] = hit
            items.append(hit[1])
        # Go marshals an empty ListMeta as {} and never omits it.
        return b'{"Pod":%b,"Nodes":{"metadata":{},"items":[%b]},"NodeNames":null}' % (
            pod_json,
            b",".join(items),
        )

    def _call(self, verb: str, body: bytes) -> Any:
        url = self._urls[verb]
        transport = self._transport
        if transport is None:
            raise ExtenderError(f'Post "{url}": {self._url_problem}')
        try:
            status, data = transport.post(self._targets[verb], body)
        except (OSError, http.client.HTTPException) as e:
            raise ExtenderError(
                _transport_error(url, transport.dial_address, transport.host, e)
            ) from None
        if status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {status}")
        text = data.decode("utf-8", "replace").lstrip()
        if not text:
            raise self._bad_reply(verb, "EOF")
        try:
            # Go's json.Decoder reads the first value and ignores what follows it.
            value, _ = _DECODER.raw_decode(text)
        except json.JSONDecodeError as e:
            raise self._bad_reply(verb, f"invalid JSON: {e}") from None
        return value

    def _bad_reply(self, verb: str, problem: str) -> ExtenderError:
        return ExtenderError(f"failed {verb} with extender at URL {self._urls[verb]}: {problem}")


# ---------------------------------------------------------------------------------------
# Building


def build_extenders(configs: Sequence[Extender], source: str | None = None) -> list[fx.Extender]:
    """The configured extenders, ignorable ones last (kube-scheduler's buildExtenders).

    A TLS configuration that cannot be loaded raises ConfigError, as kube-scheduler fails
    to start on it.
    """
    required: list[fx.Extender] = []
    ignorable: list[fx.Extender] = []
    for i, cfg in enumerate(configs):
        try:
            extender = HTTPExtender(cfg)
        except ValueError as e:
            raise ConfigError(source, f"extenders[{i}].tlsConfig", str(e)) from None
        (ignorable if cfg.ignorable else required).append(extender)
    return required + ignorable


def ignored_resources(configs: Sequence[Extender]) -> list[str]:
    """Managed resources marked ignoredByScheduler, in configuration order."""
    return [r.name for cfg in configs for r in cfg.managed_resources if r.ignored_by_scheduler]


__all__ = [
    "MAX_EXTENDER_PRIORITY",
    "ExtenderError",
    "HTTPExtender",
    "NodeLookup",
    "Status",
    "Victims",
    "build_extenders",
    "ignored_resources",
]
