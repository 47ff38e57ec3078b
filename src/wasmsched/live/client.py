"""The API client: lightkube's configuration and authentication, JSON over HTTP.

lightkube reads the kubeconfig (or the in-cluster service account) and builds the HTTP
client with the cluster's TLS settings and the user's credentials (token, token file
re-read on 401, client certificate, exec plugin). The scheduler talks plain JSON through
that client: informers need the raw watch protocol (bookmarks, 410 Gone, resource
versions) and the scheduler's objects are manifests, not generated models.

Watches stream through httpx. Every other request (bindings, events, status patches,
lists, the lease) goes through a lean HTTP/1.1 connection of the thread's own
(live/http.py) with the same TLS context and the same credentials (live/auth.py: the
header lightkube's auth flow sets, refreshed through that flow on a 401), unless a
proxy applies to the server (HTTPS_PROXY and NO_PROXY, as httpx reads them) or its URL
is one the lean path does not serve: then httpx carries them too.

With ``clientConnection.contentType: application/vnd.kubernetes.protobuf`` (kube-scheduler's
default) the lists, gets and watches of the kinds the protobuf decoder knows (Pod, Node)
accept protobuf first, as client-go's clientset asks ("application/vnd.kubernetes.protobuf,
application/json"), and the answer is decoded by its Content-Type to the same dict its JSON
gives (wasmsched.api.protobuf.decode). The two writes made per bound pod, the v1 Binding and
the events.k8s.io/v1 Event (``create``), are sent as protobuf (wasmsched.api.protobuf:
encode_object) with that same Accept: their answers are not read, but the API server
encodes a protobuf answer (the whole created Event) for less than its JSON; an error's
metav1.Status is decoded for its message either way. Every other request stays JSON: status
patches (strategic merge), deletes, ResourceClaims, the lease, the core v1 Event fallback.
``contentType: application/json`` keeps all the traffic JSON.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import msgspec
from lightkube.config import client_adapter
from lightkube.config.kubeconfig import SERVICE_ACCOUNT, KubeConfig, SingleConfig
from lightkube.config.models import User
from lightkube.core.exceptions import ConfigError as LightkubeConfigError

from wasmsched.api.protobuf import ENCODED_KINDS, encode_object
from wasmsched.api.protobuf import decode as protobuf
from wasmsched.errors import ExternalError
from wasmsched.live.auth import Credentials
from wasmsched.live.http import Answer, Connection, Endpoint, HttpError, NotSent, request_head
from wasmsched.live.kubeconfig import KubeConfigError, read_kubeconfig
from wasmsched.live.ratelimit import TokenBucket

__all__ = [
    "OPTIONAL_KINDS",
    "RESOURCES",
    "ApiClient",
    "ApiError",
    "FencedError",
    "KubeConfigError",
    "ResourceType",
    "accepts_protobuf",
    "load_kube_config",
    "sends_protobuf",
]

JSON = "application/json"
PROTOBUF = protobuf.PROTOBUF
# client-go's Accept for a protobuf clientset (rest/config.go: ContentConfig), JSON second
# for what the server cannot send as protobuf.
ACCEPT_PROTOBUF = f"{PROTOBUF},{JSON}"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

DEFAULT_TIMEOUT = 10.0
# Connections each thread keeps to the API server. Every thread (an API worker, an event
# worker, an informer, the elector) has an HTTP client of its own: a pool shared by all
# of them is scanned in full on every request (httpcore's ConnectionPool:
# _assign_requests_to_connections), a third of a worker's CPU with 80 threads.
THREAD_POOL_SIZE = 2
# Requests a lean connection sends again when a reused connection ended before any of its
# answer: a repeat the server already took is harmless (a GET, our merge patches, which
# set what they set). Not PUT (it carries the resourceVersion it read: a repeat answers
# 409, which the elector would read as a lost race), DELETE, or POST unless the caller
# says so (a claim's POST with generateName would create a second claim).
REPLAYABLE = frozenset({"GET", "HEAD", "PATCH"})
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class ApiError(ExternalError):
    """A failed API call: ``status`` is the HTTP code (0 when the server was not reached)."""

    def __init__(self, status: int, message: str, reason: str = "") -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message

    @property
    def gone(self) -> bool:
        return self.status == 410

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def not_found(self) -> bool:
        return self.status == 404


class FencedError(ApiError):
    """A write not sent: its guard said no just before the request went on the wire."""

    def __init__(self, method: str, path: str) -> None:
        super().__init__(0, f"{method} {path}: not sent, no longer the leader", "Fenced")


class _Fenced(Exception):
    """Raised inside the HTTP client to abort a request before its first byte is written."""


def _guarding(guard: Callable[[], bool]) -> Callable[[str, Any], None]:
    """An httpcore ``trace`` callback asking ``guard`` right before the request is written.

    httpcore calls it with "<http11|http2>.send_request_headers.started" once it holds a
    connection, just before writing the request: the last moment a write can be withheld.
    """

    def trace(event: str, info: Any) -> None:
        if event.endswith("send_request_headers.started") and not guard():
            raise _Fenced

    return trace


@dataclass(frozen=True)
class ResourceType:
    """A kind the scheduler lists and watches, with its collection path."""

    kind: str
    api_version: str
    plural: str
    namespaced: bool
    optional: bool = True

    @property
    def collection_path(self) -> str:
        """The cluster-wide collection (all namespaces for namespaced kinds)."""
        return f"{_prefix(self.api_version)}/{self.plural}"

    def object_path(self, namespace: str, name: str) -> str:
        if self.namespaced:
            return f"{_prefix(self.api_version)}/namespaces/{namespace}/{self.plural}/{name}"
        return f"{_prefix(self.api_version)}/{self.plural}/{name}"


def _prefix(api_version: str) -> str:
    return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"


NODES = ResourceType("Node", "v1", "nodes", namespaced=False, optional=False)
PODS = ResourceType("Pod", "v1", "pods", namespaced=True, optional=False)
OPTIONAL_KINDS: tuple[ResourceType, ...] = (
    ResourceType("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", namespaced=True),
    ResourceType("PersistentVolumeClaim", "v1", "persistentvolumeclaims", namespaced=True),
    ResourceType("PersistentVolume", "v1", "persistentvolumes", namespaced=False),
    ResourceType("StorageClass", "storage.k8s.io/v1", "storageclasses", namespaced=False),
    ResourceType("CSINode", "storage.k8s.io/v1", "csinodes", namespaced=False),
    ResourceType("Namespace", "v1", "namespaces", namespaced=False),
    ResourceType("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", namespaced=False),
    # DynamicResources' listers (dynamicresources.go: New, the DRA manager's informers);
    # a server without resource.k8s.io/v1 (before 1.34) answers 404 and they are left out.
    ResourceType("DeviceClass", "resource.k8s.io/v1", "deviceclasses", namespaced=False),
    ResourceType("ResourceSlice", "resource.k8s.io/v1", "resourceslices", namespaced=False),
    ResourceType("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", namespaced=True),
    ResourceType("DeviceTaintRule", "resource.k8s.io/v1", "devicetaintrules", namespaced=False),
)
RESOURCES: dict[str, ResourceType] = {r.kind: r for r in (NODES, PODS, *OPTIONAL_KINDS)}


def accepts_protobuf(content_type: str, accept_content_types: str = "") -> bool:
    """Whether clientConnection asks for protobuf answers: client-go's Accept header is
    acceptContentTypes when set, else contentType (rest/request.go: setAcceptHeader)."""
    return PROTOBUF in (accept_content_types or content_type)


def sends_protobuf(content_type: str) -> bool:
    """Whether clientConnection asks for protobuf request bodies: client-go sends its
    contentType (rest/request.go: Request.Body)."""
    return PROTOBUF in content_type


def load_kube_config(kubeconfig: str | Path | None = None) -> SingleConfig:
    """The kubeconfig's current context, or the in-cluster service account.

    Without a path: the service account when KUBERNETES_SERVICE_HOST is set (as client-go's
    InClusterConfig), else $KUBECONFIG, else ~/.kube/config.
    """
    if kubeconfig is not None:
        config = read_kubeconfig(kubeconfig)
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            in_cluster = KubeConfig.from_service_account(SERVICE_ACCOUNT).get()
        except (LightkubeConfigError, KeyError, OSError) as err:
            raise KubeConfigError(
                SERVICE_ACCOUNT, "", f"cannot load the in-cluster service account: {err}"
            ) from None
        assert in_cluster is not None  # from_one sets the current context
        config = in_cluster
    else:
        config = read_kubeconfig(
            os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0]
        )
    if config.user is None:
        # lightkube insists on a user; an unauthenticated context (a local proxy) has none.
        config = config._replace(user=User())
    return config


class ApiClient:
    """JSON requests against the API server, thread-safe (one pooled HTTP client)."""

    def __init__(
        self,
        config: SingleConfig,
        timeout: float = DEFAULT_TIMEOUT,
        rate_limit: TokenBucket | None = None,
        accept_protobuf: bool = False,
        send_protobuf: bool = False,
    ) -> None:
        self.config = config
        # clientConnection's content types (accepts_protobuf): protobuf answers for the
        # decoded kinds when the decoder is built; JSON for everything otherwise.
        self.protobuf = accept_protobuf and protobuf.AVAILABLE
        # (sends_protobuf): the bodies ``create`` sends of the kinds the encoder writes.
        self.send_protobuf = send_protobuf
        # Whether the server's JSON leaves a zero creationTimestamp out (1.34 on): protobuf
        # answers decode to what it would write (set from the server's release).
        self.omitzero = True
        self.timeout = timeout
        # clientConnection.qps/burst: every request (a watch's too) takes a token first.
        self.rate_limit = rate_limit
        params = client_adapter.ConnectionParams(timeout=httpx2.Timeout(timeout), trust_env=True)
        # client_adapter.Client's arguments, made once: every thread's client shares the
        # TLS settings and the credentials (one exec plugin, one token file reader).
        self._client_args = {
            **params.httpx_params(config),
            "limits": httpx2.Limits(
                max_connections=THREAD_POOL_SIZE, max_keepalive_connections=THREAD_POOL_SIZE
            ),
        }
        self._local = threading.local()
        self._clients: list[httpx2.Client] = []
        self._clients_lock = threading.Lock()
        # One built here, so that a kubeconfig the client cannot use fails at once.
        client = self._thread_client()
        self.server = str(config.cluster.server)
        self._endpoint = self._lean_endpoint(client)
        self._credentials = Credentials(self._client_args["auth"], self.server)
        self._connections: list[Connection] = []
        # The request headers but the per-request ones, for (user agent, Authorization,
        # Accept).
        self._headers: tuple[str, str | None, str, str] = ("", None, "", "")
        # Sent with every request; the runner adds its identity, as kube-scheduler's
        # "kube-scheduler/<version> (...)/leader-election" user agents name the component.
        self.user_agent = "wasmsched"
        # Told (verb, seconds) after every request that got an answer (the latency metric).
        self.on_request: Callable[[str, float], None] | None = None

    @classmethod
    def from_kubeconfig(
        cls,
        kubeconfig: str | Path | None = None,
        rate_limit: TokenBucket | None = None,
        accept_protobuf: bool = False,
        send_protobuf: bool = False,
    ) -> ApiClient:
        config = load_kube_config(kubeconfig)
        try:
            return cls(
                config,
                rate_limit=rate_limit,
                accept_protobuf=accept_protobuf,
                send_protobuf=send_protobuf,
            )
        except (LightkubeConfigError, OSError, ValueError, httpx2.InvalidURL) as err:
            # read_kubeconfig checked what the client uses; this is the last word.
            raise KubeConfigError(
                str(config.fname or SERVICE_ACCOUNT),
                f'contexts["{config.context_name}"]',
                f"cannot build a client: {err}",
            ) from None

    def with_own_rate_limit(self) -> ApiClient:
        """This client (its connections, credentials, user agent) with a token bucket of its
        own, of the same qps and burst: kube-scheduler posts events through a second
        clientset of the same config (cmd/kube-scheduler/app/options/options.go:
        createClients), so events do not take the bindings' tokens. Close the original."""
        other = copy.copy(self)
        if self.rate_limit is not None:
            other.rate_limit = TokenBucket(self.rate_limit.qps, self.rate_limit.burst)
        return other

    @property
    def transport(self) -> str:
        """What carries the requests but the watches: "lean" (live/http.py) or "httpx"
        (a proxy applies, or the server URL is one the lean path does not serve)."""
        return "httpx" if self._endpoint is None else "lean"

    def accept(self, resource: ResourceType) -> str:
        """The Accept header for reading ``resource``: protobuf first for the kinds the
        decoder knows, when the configuration asks for protobuf."""
        if self.protobuf and resource.kind in protobuf.DECODED_KINDS:
            return ACCEPT_PROTOBUF
        return JSON

    @property
    def namespace(self) -> str:
        return str(self.config.namespace)

    def _thread_client(self) -> httpx2.Client:
        """The calling thread's HTTP client (made on its first request)."""
        client: httpx2.Client | None = getattr(self._local, "client", None)
        if client is None:
            client = httpx2.Client(**self._client_args)
            with self._clients_lock:
                self._clients.append(client)
            self._local.client = client
        return client

    def _lean_endpoint(self, client: httpx2.Client) -> Endpoint | None:
        """The server for the lean path, or None when httpx must carry the requests: a
        proxy applies (httpx's mounts from the environment), or an unusual URL."""
        url = client.base_url
        if client._transport_for_url(url) is not client._transport:
            return None
        verify = self._client_args["verify"]
        return Endpoint.parse(self.server, verify if isinstance(verify, ssl.SSLContext) else None)

    def _thread_connection(self, endpoint: Endpoint) -> Connection:
        """The calling thread's lean connection (made on its first request)."""
        conn: Connection | None = getattr(self._local, "connection", None)
        if conn is None:
            conn = Connection(endpoint)
            with self._clients_lock:
                self._connections.append(conn)
            self._local.connection = conn
        return conn

    def close(self) -> None:
        with self._clients_lock:
            clients, self._clients = self._clients, []
            connections, self._connections = self._connections, []
        for client in clients:
            client.close()
        for conn in connections:
            conn.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float | None = None,
        guard: Callable[[], bool] | None = None,
        replayable: bool | None = None,
        accept: str = JSON,
        read_answer: bool = True,
    ) -> dict[str, Any]:
        """One call; the decoded answer (empty when there is none, or ``read_answer`` is
        false). Raises ApiError. ``body``: an object sent as JSON, or bytes sent as they are.

        ``accept``: JSON, or ACCEPT_PROTOBUF for a kind the protobuf decoder knows (see
        ``accept``); the answer is decoded by its Content-Type.

        With ``guard``, the request is written only if ``guard()`` is still true once a
        connection is ready (FencedError otherwise): leader fencing as late as possible.
        ``replayable``: whether a repeat that the server already took is harmless (it
        answers 409), so that a kept-alive connection the server closed as the request
        went out may carry it again on a fresh one; by default the methods of REPLAYABLE.
        """
        if self.rate_limit is not None:
            self.rate_limit.wait()
        content = body if body is None or isinstance(body, bytes) else _encode(body)
        started = time.perf_counter()
        endpoint = self._endpoint
        if endpoint is None:
            status, answer, is_protobuf = self._httpx_request(
                method, path, params, content, content_type, timeout, guard, accept
            )
        else:
            status, answer, is_protobuf = self._lean_request(
                endpoint,
                method,
                path,
                params,
                content,
                content_type,
                self.timeout if timeout is None else timeout,
                guard,
                method in REPLAYABLE if replayable is None else replayable,
                accept,
            )
        if self.on_request is not None:
            self.on_request(method, time.perf_counter() - started)
        if status >= 400:
            raise _error_from(status, answer, is_protobuf)
        if not answer or not read_answer:
            return {}
        if is_protobuf:
            try:
                return protobuf.decode(answer, self.omitzero)
            except protobuf.ProtobufDecodeError as err:
                raise ApiError(status, f"{method} {path}: {err}") from None
        try:
            data = _decode(answer)
        except ValueError:
            raise ApiError(status, f"{method} {path}: answer is not JSON") from None
        return data if isinstance(data, dict) else {}

    def create(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        guard: Callable[[], bool] | None = None,
        replayable: bool | None = None,
    ) -> None:
        """POSTs a new object (or a subresource's, a Binding) and leaves the answer's body
        unread. Raises ApiError, as ``request``.

        As protobuf when clientConnection's contentType asks for it and the encoder writes
        the kind (protobuf ENCODED_KINDS), else JSON; protobuf answers are accepted when
        reads accept them (an error's Status is decoded either way).
        """
        if self.send_protobuf and (body["apiVersion"], body["kind"]) in ENCODED_KINDS:
            content, content_type = encode_object(body), PROTOBUF
        else:
            content, content_type = _encode(body), JSON
        self.request(
            "POST",
            path,
            body=content,
            content_type=content_type,
            guard=guard,
            replayable=replayable,
            accept=ACCEPT_PROTOBUF if self.protobuf else JSON,
            read_answer=False,
        )

    def _lean_request(
        self,
        endpoint: Endpoint,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        content: bytes | None,
        content_type: str,
        timeout: float,
        guard: Callable[[], bool] | None,
        replayable: bool,
        accept: str,
    ) -> Answer:
        conn = self._thread_connection(endpoint)
        target = endpoint.target(path, dict(params) if params else None)
        auth = self._credentials.header()
        data = request_head(method, target, self._header_block(auth, accept), content_type, content)
        try:
            answer = conn.exchange(method, data, timeout, replayable=replayable, guard=guard)
            if answer.status == 401:
                # The token may have been rotated (a token file, an exec plugin's token):
                # as lightkube's auth flows do, once more with the refreshed credentials.
                fresh = self._credentials.refreshed(auth)
                if fresh is not None:
                    data = request_head(
                        method, target, self._header_block(fresh, accept), content_type, content
                    )
                    answer = conn.exchange(
                        method, data, timeout, replayable=replayable, guard=guard
                    )
        except NotSent:
            raise FencedError(method, path) from None
        except HttpError as err:
            raise ApiError(0, f"{method} {path}: {err.kind}: {err}") from None
        return answer

    def _header_block(self, auth: str | None, accept: str) -> str:
        """Host, Accept, Accept-Encoding, User-Agent and Authorization, as one block."""
        agent, used, accepted, block = self._headers
        if agent is self.user_agent and used is auth and accepted is accept and block:
            return block
        assert self._endpoint is not None
        block = (
            f"Host: {self._endpoint.host_header}\r\nAccept: {accept}\r\n"
            f"Accept-Encoding: gzip\r\nUser-Agent: {self.user_agent}\r\n"
        )
        if auth is not None:
            block += f"Authorization: {auth}\r\n"
        self._headers = (self.user_agent, auth, accept, block)
        return block

    def _httpx_request(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        content: bytes | None,
        content_type: str,
        timeout: float | None,
        guard: Callable[[], bool] | None,
        accept: str,
    ) -> Answer:
        headers = {"Accept": accept, "User-Agent": self.user_agent}
        if content is not None:
            headers["Content-Type"] = content_type
        try:
            resp = self._thread_client().request(
                method,
                path,
                params=dict(params) if params else None,
                content=content,
                headers=headers,
                timeout=timeout if timeout is not None else self.timeout,
                extensions={"trace": _guarding(guard)} if guard is not None else None,
            )
        except _Fenced:
            raise FencedError(method, path) from None
        except httpx2.HTTPError as err:
            raise ApiError(0, f"{method} {path}: {type(err).__name__}: {err}") from None
        return Answer(resp.status_code, resp.content, is_protobuf(resp))

    def server_version(self) -> str | None:
        """The server's ``gitVersion`` (``/version``, readable by every authenticated user:
        the system:public-info-viewer role); None when it is refused (403, 404) or empty."""
        try:
            version = self.request("GET", "/version").get("gitVersion")
        except ApiError as err:
            if err.status not in (403, 404):
                raise
            return None
        return version if isinstance(version, str) and version else None

    def list(
        self, resource: ResourceType, page_size: int = 500, params: Mapping[str, str] | None = None
    ) -> tuple[list[dict[str, Any]], str]:
        """Every object of a kind (paginated with limit/continue) and the list's resourceVersion.

        Items get their kind and apiVersion, which list answers leave out.
        """
        items: list[dict[str, Any]] = []
        query = dict(params or {})
        query["limit"] = str(page_size)
        accept = self.accept(resource)
        while True:
            data = self.request("GET", resource.collection_path, params=query, accept=accept)
            for item in data.get("items") or ():
                if isinstance(item, dict):
                    item.setdefault("kind", resource.kind)
                    item.setdefault("apiVersion", resource.api_version)
                    items.append(item)
            meta = data.get("metadata") or {}
            token = meta.get("continue")
            if not token:
                return items, str(meta.get("resourceVersion") or "")
            query["continue"] = str(token)

    @contextmanager
    def stream(
        self, path: str, params: Mapping[str, str], read_timeout: float, accept: str = JSON
    ) -> Iterator[httpx2.Response]:
        """A streaming GET (a watch); raises ApiError for an error answer. A protobuf
        stream (``is_protobuf``) is length-prefixed frames (protobuf.decode_watch_frames)."""
        if self.rate_limit is not None:
            self.rate_limit.wait()
        timeout = httpx2.Timeout(self.timeout, read=read_timeout)
        try:
            with self._thread_client().stream(
                "GET",
                path,
                params=dict(params),
                headers={"Accept": accept, "User-Agent": self.user_agent},
                timeout=timeout,
            ) as resp:
                if resp.status_code >= 400:
                    raise _error_from(resp.status_code, resp.read(), is_protobuf(resp))
                yield resp
        except httpx2.HTTPError as err:
            raise ApiError(0, f"GET {path}: {type(err).__name__}: {err}") from None


def status_error(status: Mapping[str, Any]) -> ApiError:
    """An ApiError from a metav1.Status (an answer body or a watch ERROR event)."""
    code = status.get("code")
    return ApiError(
        code if isinstance(code, int) else 500,
        str(status.get("message") or ""),
        str(status.get("reason") or ""),
    )


def is_protobuf(resp: httpx2.Response) -> bool:
    """Whether an answer is Kubernetes protobuf (by its Content-Type)."""
    return resp.headers.get("content-type", "").startswith(PROTOBUF)


def _error_from(code: int, content: bytes, protobuf_body: bool = False) -> ApiError:
    data: Any = {}
    with contextlib.suppress(ValueError, protobuf.ProtobufDecodeError):
        if protobuf_body:
            data = protobuf.decode(content)
        elif content:
            data = json.loads(content)
    if isinstance(data, dict) and data.get("kind") == "Status":
        err = status_error(data)
        return ApiError(code, err.message, err.reason)
    text = content.decode("utf-8", "replace").strip()[:200]
    return ApiError(code, text or httpx2.codes.get_reason_phrase(code))
