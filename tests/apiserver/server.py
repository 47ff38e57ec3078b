"""An in-process HTTP double of kube-apiserver for what a scheduler uses (see README.md)."""

from __future__ import annotations

import base64
import builtins
import contextlib
import copy
import itertools
import json
import random
import select
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from wasmsched.errors import InternalError

from . import patch as patches
from . import protobuf
from .faults import REASONS, Faults
from .resources import (
    BOOTSTRAP,
    BY_KIND,
    BY_PATH,
    DEFAULTERS,
    EVENT_KEYS,
    GROUP_VERSIONS,
    RESOURCES,
    Obj,
    Resource,
    lookup,
    name_error,
)
from .selectors import Matcher, SelectorError, parse_fields, parse_labels
from .store import Change, Store, storage_key

NAMESPACES = lookup("namespaces")
PODS = lookup("pods")
PRIORITY_CLASSES = lookup("priorityclasses.scheduling.k8s.io")
OPTIMISTIC_LOCK_MSG = (
    "the object has been modified; please apply your changes to the latest version and try again"
)
CONTINUE_EXPIRED_MSG = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_FROM_NOW = -1  # WatchPlan.start_rv: no replay, no initial state


def now_rfc3339(delta: float = 0.0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


class StatusError(Exception):
    """An error the server answers as a `Status` object; also raised by the Python-side API."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: Obj | None = None,
        headers: dict[str, str] | None = None,
        list_meta: Obj | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason if reason is not None else REASONS.get(code, "")
        self.details = details
        self.headers = headers or {}
        self.list_meta = list_meta

    def status(self) -> Obj:
        return status_failure(self.code, self.reason, self.message, self.details, self.list_meta)


def status_failure(
    code: int, reason: str, message: str, details: Obj | None = None, list_meta: Obj | None = None
) -> Obj:
    out: Obj = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": list_meta or {},
        "status": "Failure",
    }
    out["message"] = message
    if reason:
        out["reason"] = reason
    if details:
        out["details"] = details
    out["code"] = code
    return out


def _details(res: Resource, name: str) -> Obj:
    out: Obj = {"name": name}
    if res.group:
        out["group"] = res.group
    out["kind"] = res.plural
    return out


def not_found(res: Resource, name: str) -> StatusError:
    return StatusError(404, f'{res.key} "{name}" not found', "NotFound", _details(res, name))


def conflict(res: Resource, name: str, why: str, qualified: str | None = None) -> StatusError:
    what = qualified or res.key
    details = _details(res, name)
    if qualified:
        details["kind"] = qualified
    return StatusError(
        409, f'Operation cannot be fulfilled on {what} "{name}": {why}', "Conflict", details
    )


def invalid(
    res: Resource, name: str, path: str, detail: str, cause: str = "FieldValueInvalid"
) -> StatusError:
    kind = f"{res.kind}.{res.group}" if res.group else res.kind
    details: Obj = {"name": name}
    if res.group:
        details["group"] = res.group
    details["kind"] = res.kind
    details["causes"] = [{"reason": cause, "message": detail, "field": path}]
    return StatusError(422, f'{kind} "{name}" is invalid: {path}: {detail}', "Invalid", details)


def bad_request(message: str) -> StatusError:
    return StatusError(400, message, "BadRequest")


def expired(message: str, list_meta: Obj | None = None) -> StatusError:
    return StatusError(410, message, "Expired", list_meta=list_meta)


def too_large_rv(wanted: int, current: int) -> StatusError:
    return StatusError(
        504,
        f"Timeout: Too large resource version: {wanted}, current: {current}",
        "Timeout",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )


@dataclass
class Reply:
    code: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


@dataclass
class WatchPlan:
    res: Resource
    namespace: str | None
    matches: Callable[[Obj], bool]
    start_rv: int | None  # None: begin with the current state as ADDED events; -1: from now
    timeout: float | None
    bookmarks: bool
    initial_end_bookmark: bool


@dataclass
class Route:
    res: Resource
    namespace: str | None
    name: str | None
    sub: str | None


def _parse_int(value: str | None, what: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as err:
        raise bad_request(f"invalid {what}: {value!r}") from err


def _without_rv(obj: Obj) -> Obj:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
    return {**obj, "metadata": meta}


def _encode_continue(rv: int, start: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unsupported continue version")
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError) as err:
        raise bad_request(f"continue key is not valid: {err}") from err


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 resets connections when a client opens dozens
    # at once (a pool of binding workers).
    request_queue_size = 256

    def __init__(self, double: ApiServerDouble) -> None:
        self.double = double
        self.track_lock = threading.Lock()
        self.conns: set[socket.socket] = set()
        self.threads: set[threading.Thread] = set()
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing a kept-alive connection (its pool is full) is not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self.track_lock:
            self.conns.add(request)
            self.threads.add(threading.current_thread())
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.track_lock:
                self.conns.discard(request)
                self.threads.discard(threading.current_thread())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY (socketserver.StreamRequestHandler.setup): without it a small answer waits
    # for the client's delayed ACK (~40 ms on Linux) behind the segment sent before it.
    disable_nagle_algorithm = True
    server: _Server

    def end_headers_with(self, data: bytes) -> None:
        """Ends the headers and sends them with ``data`` in one write (one segment)."""
        self._headers_buffer.append(b"\r\n")
        self._headers_buffer.append(data)
        self.flush_headers()

    def _serve(self) -> None:
        self.server.double._handle(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass


class ApiServerDouble:
    """A kube-apiserver stand-in serving real Kubernetes JSON over HTTP on 127.0.0.1.

    pod_deletion: "immediate" removes a deleted pod at once; "graceful" behaves like the real
    server for a bound pod (deletionTimestamp + MODIFIED, removal later by the "kubelet" after
    `kubelet_delay` seconds, or by `srv.delete`). `bookmark_interval`: seconds between BOOKMARK
    events on watches that allow them (the real server uses about a minute).
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        bookmark_interval: float = 1.0,
        pod_deletion: Literal["immediate", "graceful"] = "immediate",
        kubelet_delay: float | None = None,
        bootstrap: bool = True,
        too_large_rv_wait: float = 3.0,
    ) -> None:
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.pod_deletion = pod_deletion
        self.kubelet_delay = kubelet_delay
        self.too_large_rv_wait = too_large_rv_wait
        # What /version answers (a test may name another release).
        self.git_version = "v1.33.0-apiserver-double"
        self._store = Store()
        self.faults = Faults(lambda kind: lookup(kind).key, self._compact)
        self.requests: list[tuple[str, str, int]] = []
        # (method, path, Content-Type) of every request with a body.
        self.content_types: list[tuple[str, str, str]] = []
        self.bindings: list[Obj] = []
        # The request being served on this handler thread (who sent a binding, and when).
        self._local = threading.local()
        self.user_agents: set[str] = set()
        self._events: dict[tuple[str, str], Obj] = {}
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timers: list[threading.Timer] = []
        self._stream_ids = itertools.count(1)
        if bootstrap:
            for obj in BOOTSTRAP:
                self.create(obj)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("already started")
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="apiserver-double",
            daemon=True,
        )
        self._thread.start()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("not started")
        return f"http://127.0.0.1:{self._server.server_port}"

    def stop(self) -> None:
        """Stop serving: ends watch streams, closes open connections, joins handler threads."""
        server = self._server
        if server is None:
            return
        self._stopping.set()
        with self._store.cond:
            self._store.cond.notify_all()
        for timer in self._timers:
            timer.cancel()
        server.shutdown()
        with server.track_lock:
            conns, threads = list(server.conns), list(server.threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        for t in threads:
            t.join(timeout=2.0)
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self._server = None
        self._thread = None

    def __enter__(self) -> ApiServerDouble:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def kubeconfig(self, path: str | Path) -> Path:
        """Write a kubeconfig for this server (with the static token if one is set)."""
        user: Obj = {"token": self.token} if self.token else {}
        conf = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "double", "cluster": {"server": self.url}}],
            "users": [{"name": "double", "user": user}],
            "contexts": [
                {
                    "name": "double",
                    "context": {"cluster": "double", "user": "double", "namespace": "default"},
                }
            ],
            "current-context": "double",
        }
        out = Path(path)
        out.write_text(yaml.safe_dump(conf, sort_keys=False))
        return out

    # ------------------------------------------------------------------ Python-side API

    def create(self, obj: Obj) -> Obj:
        """Store `obj` as the server would on create (defaults, uid, RV); emits ADDED.

        Unlike an HTTP create, admission is skipped: status and spec.priority are kept, and a
        missing namespace is created.
        """
        res = self._kind_of(obj)
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.pop("resourceVersion", None)
        with self._store.cond:
            if res.namespaced:
                ns = meta.setdefault("namespace", "default")
                if self._store.get(NAMESPACES, None, ns) is None:
                    self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            out = self._create(res, meta.get("namespace"), obj, {}, trusted=True)
            return copy.deepcopy(out)

    def update(self, obj: Obj) -> Obj:
        """Replace the whole stored object, status included, without an RV check; emits MODIFIED."""
        res = self._kind_of(obj)
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace", "default") if res.namespaced else None
        with self._store.cond:
            old = self._store.get(res, ns, meta.get("name", ""))
            if old is None:
                raise not_found(res, meta.get("name", ""))
            new = copy.deepcopy(obj)
            new["metadata"] = {
                **copy.deepcopy(meta),
                "resourceVersion": old["metadata"]["resourceVersion"],
            }
            if res.namespaced:
                new["metadata"]["namespace"] = ns
            out, _ = self._write_update(res, old, new)
            return copy.deepcopy(out)

    def delete(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        """Remove an object at once (no grace, finalizers ignored); emits DELETED."""
        res = lookup(kind)
        with self._store.cond:
            return copy.deepcopy(self._remove(res, namespace if res.namespaced else None, name))

    def get(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        res = lookup(kind)
        with self._store.cond:
            obj = self._store.get(res, namespace if res.namespaced else None, name)
            return copy.deepcopy(obj)

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        res = lookup(kind)
        with self._store.cond:
            items = sorted(self._store.items(res).items())
            return [
                copy.deepcopy(o)
                for _, o in items
                if namespace is None or o["metadata"].get("namespace") == namespace
            ]

    @property
    def resource_version(self) -> str:
        """The current global resourceVersion."""
        with self._store.cond:
            return str(self._store.rv)

    @property
    def events(self) -> builtins.list[Obj]:
        """Every core/v1 and events.k8s.io/v1 Event written, in creation order, latest state."""
        with self._store.cond:
            return copy.deepcopy(list(self._events.values()))

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Block until `predicate()` holds (re-checked on every write and binding) or timeout."""
        deadline = time.monotonic() + timeout
        with self._store.cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._store.cond.wait(min(left, 0.1))
            return True

    def _kind_of(self, obj: Obj) -> Resource:
        res = BY_KIND.get((str(obj.get("apiVersion", "")), str(obj.get("kind", ""))))
        if res is None:
            raise ValueError(
                f"unsupported apiVersion/kind {obj.get('apiVersion')}/{obj.get('kind')}"
            )
        return res

    def _compact(self) -> int:
        with self._store.cond:
            return self._store.compact()

    # ------------------------------------------------------------------ HTTP plumbing

    def _handle(self, h: _Handler) -> None:
        target = h.path
        split = urlsplit(target)
        path = unquote(split.path)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        method = h.command
        try:
            body = self._read_body(h)
        except (ValueError, OSError):
            h.close_connection = True
            return
        is_watch = method == "GET" and query.get("watch") in ("true", "1")
        if body:
            self.content_types.append((method, path, h.headers.get("Content-Type", "")))
        self._local.user_agent = agent = h.headers.get("User-Agent", "")
        self.user_agents.add(agent)
        self._local.received = time.monotonic()
        delay = self.faults.delay_for(method, path)
        if delay > 0 and self._stopping.wait(delay):
            h.close_connection = True
            return
        try:
            if self.token is not None and h.headers.get("Authorization") != f"Bearer {self.token}":
                raise StatusError(401, "Unauthorized", "Unauthorized")
            failure = self.faults.take_failure(method, path, is_watch)
            if failure is not None:
                headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after else {}
                details = (
                    {"retryAfterSeconds": failure.retry_after} if failure.retry_after else None
                )
                raise StatusError(failure.status, failure.message, details=details, headers=headers)
            result = self._dispatch(method, path, query, body, h.headers)
        except StatusError as err:
            result = Reply(err.code, err.status(), err.headers)
        except Exception as err:  # a bug in the double must still answer like a server
            result = Reply(
                500, status_failure(500, "InternalError", f"Internal error occurred: {err!r}")
            )
        if isinstance(result, WatchPlan):
            self._serve_watch(h, target, result)
        else:
            self._respond(h, target, result)

    def _read_body(self, h: _Handler) -> bytes:
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(h.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    h.rfile.readline()
                    return b"".join(parts)
                parts.append(h.rfile.read(size))
                h.rfile.readline()
        length = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(length) if length else b""

    def _respond(self, h: _Handler, target: str, reply: Reply) -> None:
        if reply.content_type == "application/json":
            data = json.dumps(reply.body, separators=(",", ":")).encode()
        else:
            data = str(reply.body).encode()
        self.requests.append((h.command, target, reply.code))
        try:
            h.send_response(reply.code)
            h.send_header("Content-Type", reply.content_type)
            h.send_header("Content-Length", str(len(data)))
            for k, v in reply.headers.items():
                h.send_header(k, v)
            h.end_headers_with(data if h.command != "HEAD" else b"")
        except OSError:
            h.close_connection = True

    # ------------------------------------------------------------------ routing

    def _dispatch(
        self, method: str, path: str, query: dict[str, str], body: bytes, headers: Message
    ) -> Reply | WatchPlan:
        if path in ("/healthz", "/livez", "/readyz"):
            return Reply(200, "ok", content_type="text/plain; charset=utf-8")
        if path == "/version":
            return Reply(
                200,
                {
                    "major": "1",
                    "minor": self.git_version.split(".")[1],
                    "gitVersion": self.git_version,
                    "platform": "linux/amd64",
                },
            )
        segs = [s for s in path.split("/") if s]
        if segs[:1] == ["api"] and len(segs) <= 2:
            return self._discovery_core(segs)
        if segs[:1] == ["apis"] and len(segs) <= 3:
            return self._discovery_groups(segs)
        route = self._route(segs)
        return self._dispatch_route(method, route, query, body, headers)

    def _route(self, segs: builtins.list[str]) -> Route:
        missing = StatusError(
            404, "the server could not find the requested resource", "NotFound", {}
        )
        if segs[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", segs[2:]
        elif segs[:1] == ["apis"] and len(segs) >= 3:
            group, version, rest = segs[1], segs[2], segs[3:]
        else:
            raise missing
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces" and (group, version, rest[2]) in BY_PATH:
            namespace, rest = rest[1], rest[2:]
        elif len(rest) == 3 and rest[0] == "namespaces" and group == "" and rest[2] == "bindings":
            # Legacy POST /api/v1/namespaces/{ns}/bindings: a Binding named after its pod.
            return Route(PODS, rest[1], None, "legacy-binding")
        res = BY_PATH.get((group, version, rest[0])) if rest else None
        if res is None or len(rest) > 3:
            raise missing
        if namespace is not None and not res.namespaced:
            raise missing
        name = rest[1] if len(rest) > 1 else None
        if name is not None and res.namespaced and namespace is None:
            raise missing
        sub = rest[2] if len(rest) > 2 else None
        if sub is not None and sub not in res.subresources:
            raise missing
        return Route(res, namespace, name, sub)

    def _dispatch_route(
        self, method: str, r: Route, query: dict[str, str], body: bytes, headers: Message
    ) -> Reply | WatchPlan:
        res, ns = r.res, r.namespace
        not_allowed = StatusError(
            405,
            "the server does not allow this method on the requested resource",
            "MethodNotAllowed",
            {},
        )
        if r.sub == "legacy-binding":
            if method != "POST":
                raise not_allowed
            binding = self._object(body, headers)
            name = str((binding.get("metadata") or {}).get("name", ""))
            return self._bind(ns or "", name, binding, query)
        if r.name is None:
            if method == "GET":
                if query.get("watch") in ("true", "1"):
                    return self._watch_plan(res, ns, query)
                return self._list(res, ns, query)
            if method == "POST":
                if res.namespaced and ns is None:
                    raise not_allowed
                with self._store.cond:
                    out = self._create(res, ns, self._object(body, headers), query, trusted=False)
                return Reply(201, out)
            if method == "DELETE":
                return self._delete_collection(res, ns, query, body)
            raise not_allowed
        name = r.name
        if r.sub == "binding":
            if method != "POST":
                raise not_allowed
            return self._bind(ns or "", name, self._object(body, headers), query)
        if method in ("GET", "HEAD"):
            with self._store.cond:
                obj = self._store.get(res, ns, name)
                if obj is None:
                    raise not_found(res, name)
                return Reply(200, obj)
        if method == "PUT":
            return self._put(res, ns, name, r.sub, self._json(body), query)
        if method == "PATCH":
            ctype = (headers.get("Content-Type") or "").split(";")[0].strip()
            return self._patch(res, ns, name, r.sub, ctype, body, query)
        if method == "DELETE" and r.sub is None:
            return self._delete(res, ns, name, query, body)
        raise not_allowed

    @staticmethod
    def _object(body: bytes, headers: Message) -> Obj:
        """A created object: JSON, or protobuf for what tests/apiserver/protobuf.py reads."""
        if (headers.get("Content-Type") or "").split(";")[0].strip() != protobuf.PROTOBUF:
            return ApiServerDouble._json(body)
        try:
            return protobuf.read_body(body)
        except protobuf.UnsupportedBody as err:
            raise StatusError(415, str(err), "UnsupportedMediaType") from err
        except InternalError as err:
            raise bad_request(f"protobuf: {err}") from err

    @staticmethod
    def _json(body: bytes) -> Obj:
        try:
            data = json.loads(body or b"null")
        except ValueError as err:
            raise bad_request(f"couldn't get version/kind; json parse error: {err}") from err
        if not isinstance(data, dict):
            raise bad_request("the body of the request must be a JSON object")
        return data

    # ------------------------------------------------------------------ discovery

    def _discovery_core(self, segs: builtins.list[str]) -> Reply:
        if len(segs) == 1:
            return Reply(
                200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
            )
        if segs[1] != "v1":
            raise StatusError(
                404, "the server could not find the requested resource", "NotFound", {}
            )
        return Reply(200, self._resource_list("", "v1"))

    def _discovery_groups(self, segs: builtins.list[str]) -> Reply:
        groups = [gv for gv in GROUP_VERSIONS if gv[0]]
        if len(segs) == 1:
            body = {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [
                    {
                        "name": g,
                        "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                        "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v},
                    }
                    for g, v in groups
                ],
            }
            return Reply(200, body)
        if len(segs) == 3 and (segs[1], segs[2]) in groups:
            return Reply(200, self._resource_list(segs[1], segs[2]))
        raise StatusError(404, "the server could not find the requested resource", "NotFound", {})

    @staticmethod
    def _resource_list(group: str, version: str) -> Obj:
        verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
        resources: list[Obj] = []
        for r in RESOURCES:
            if (r.group, r.version) != (group, version):
                continue
            resources.append(
                {
                    "name": r.plural,
                    "singularName": r.singular,
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": verbs,
                }
            )
            for sub in sorted(r.subresources):
                sub_verbs = ["create"] if sub == "binding" else ["get", "patch", "update"]
                kind = "Binding" if sub == "binding" else r.kind
                resources.append(
                    {
                        "name": f"{r.plural}/{sub}",
                        "singularName": "",
                        "namespaced": r.namespaced,
                        "kind": kind,
                        "verbs": sub_verbs,
                    }
                )
        gv = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": resources,
        }

    # ------------------------------------------------------------------ writes

    def _check_type(self, res: Resource, obj: Obj) -> None:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version and api_version != res.api_version:
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version ({res.api_version})"
            )
        if kind and kind != res.kind:
            raise bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({res.kind})"
            )
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind

    def _create(
        self, res: Resource, ns: str | None, obj: Obj, query: dict[str, str], *, trusted: bool
    ) -> Obj:
        """Create under the store lock. `trusted` (Python-side) skips admission and status reset."""
        obj = copy.deepcopy(obj)
        self._check_type(res, obj)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if res.namespaced:
            if meta.get("namespace") not in (None, "", ns):
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = str(meta["generateName"]) + "".join(
                random.choice(_NAME_CHARS) for _ in range(5)
            )
        name = str(meta.get("name") or "")
        if not name:
            raise invalid(
                res,
                "",
                "metadata.name",
                "Required value: name or generateName is required",
                "FieldValueRequired",
            )
        problem = name_error(res, name)
        if problem is not None:
            raise invalid(res, name, "metadata.name", f'Invalid value: "{name}": {problem}')
        if not trusted:
            if meta.get("resourceVersion"):
                raise StatusError(
                    500,
                    "resourceVersion should not be set on objects to be created",
                    "InternalError",
                )
            if res.namespaced and self._store.get(NAMESPACES, None, ns or "") is None:
                raise not_found(NAMESPACES, ns or "")
        if self._store.get(res, ns, name) is not None:
            details = _details(res, name)
            raise StatusError(409, f'{res.key} "{name}" already exists', "AlreadyExists", details)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
            meta.pop(key, None)
        if not trusted and res.key in (
            "pods",
            "persistentvolumeclaims",
            "poddisruptionbudgets.policy",
            "resourceclaims.resource.k8s.io",
        ):
            obj.pop("status", None)  # PrepareForCreate resets status.
        if res is PODS:
            self._admit_priority(obj, strict=not trusted)
        defaulter = DEFAULTERS.get(res.key)
        if defaulter is not None:
            defaulter(obj)
        if query.get("dryRun"):
            return obj
        return self._commit(res, obj, "ADDED")

    def _admit_priority(self, pod: Obj, *, strict: bool) -> None:
        """The Priority admission plugin: spec.priority from the PriorityClass."""
        spec = pod.setdefault("spec", {})
        name = pod["metadata"]["name"]
        class_name = spec.get("priorityClassName")
        pc: Obj | None = None
        if class_name:
            pc = self._store.get(PRIORITY_CLASSES, None, class_name)
            if pc is None and strict:
                raise StatusError(
                    403,
                    f'pods "{name}" is forbidden: no PriorityClass with name {class_name} was found',
                    "Forbidden",
                    {"name": name, "kind": "pods"},
                )
        else:
            pc = next(
                (p for p in self._store.items(PRIORITY_CLASSES).values() if p.get("globalDefault")),
                None,
            )
            if pc is not None:
                spec["priorityClassName"] = pc["metadata"]["name"]
        value = int(pc.get("value", 0)) if pc else 0
        if "priority" in spec and spec["priority"] != value:
            if strict:
                raise StatusError(
                    403,
                    f'pods "{name}" is forbidden: the integer value of priority ({spec["priority"]}) must not '
                    f"be provided in pod spec; priority admission controller computed {value} from the "
                    "given PriorityClass name",
                    "Forbidden",
                    {"name": name, "kind": "pods"},
                )
            return
        spec["priority"] = value
        policy = (pc or {}).get("preemptionPolicy") or "PreemptLowerPriority"
        spec.setdefault("preemptionPolicy", policy)

    def _commit(self, res: Resource, obj: Obj, event: str) -> Obj:
        out = self._store.commit(res, obj, event)
        if res.key in EVENT_KEYS:
            meta = out["metadata"]
            self._events[(res.key, storage_key(res, meta.get("namespace"), meta["name"]))] = out
        return out

    def _remove(self, res: Resource, ns: str | None, name: str) -> Obj | None:
        return self._store.remove(res, ns, name)

    def _write_update(self, res: Resource, old: Obj, new: Obj) -> tuple[Obj, bool]:
        """Commit `new` over `old` unless nothing changed; finish deletions whose finalizers are gone.

        Returns (object, removed).
        """
        meta, old_meta = new["metadata"], old["metadata"]
        for key in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        new["apiVersion"], new["kind"] = res.api_version, res.kind
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and not meta.get("deletionGracePeriodSeconds")
        ):
            removed = self._store.remove(res, meta.get("namespace"), meta["name"])
            return (removed or old), True
        if _without_rv(new) == _without_rv(old):
            return old, False  # etcd skips no-op writes: same RV, no watch event.
        return self._commit(res, new, "MODIFIED"), False

    def _update_locked(
        self,
        res: Resource,
        ns: str | None,
        name: str,
        sub: str | None,
        new: Obj,
        query: dict[str, str],
        *,
        from_patch: bool,
    ) -> Reply:
        new = copy.deepcopy(new)
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            meta = new["metadata"] = {}
        if meta.get("name") not in (None, name):
            raise bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        if res.namespaced and meta.get("namespace") not in (None, "", ns):
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        self._check_type(res, new)
        meta["name"] = name
        if res.namespaced:
            meta["namespace"] = ns
        old = self._store.get(res, ns, name)
        if old is None:
            if res.create_on_update and sub is None:
                meta.pop("resourceVersion", None)
                return Reply(201, self._create(res, ns, new, query, trusted=False))
            raise not_found(res, name)
        old_meta = old["metadata"]
        rv = str(meta.get("resourceVersion") or "")
        if not rv:
            if not res.unconditional_update and not from_patch:
                raise invalid(
                    lookup_key_resource(res),
                    name,
                    "metadata.resourceVersion",
                    "Invalid value: 0x0: must be specified for an update",
                )
            meta["resourceVersion"] = old_meta["resourceVersion"]
        elif rv != old_meta["resourceVersion"]:
            raise conflict(res, name, OPTIMISTIC_LOCK_MSG)
        if meta.get("uid") and meta["uid"] != old_meta.get("uid"):
            raise conflict(
                res,
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: {old_meta.get('uid')}",
            )
        if sub == "status":
            # The status strategy keeps everything but status and object metadata.
            merged = copy.deepcopy(old)
            merged["status"] = new.get("status")
            if merged["status"] is None:
                merged.pop("status")
            for key in ("labels", "annotations"):
                if key in meta:
                    merged["metadata"][key] = meta[key]
            new = merged
        elif "status" in res.subresources:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        if query.get("dryRun"):
            return Reply(200, new)
        out, _ = self._write_update(res, old, new)
        return Reply(200, out)

    def _put(
        self,
        res: Resource,
        ns: str | None,
        name: str,
        sub: str | None,
        obj: Obj,
        query: dict[str, str],
    ) -> Reply:
        with self._store.cond:
            return self._update_locked(res, ns, name, sub, obj, query, from_patch=False)

    def _patch(
        self,
        res: Resource,
        ns: str | None,
        name: str,
        sub: str | None,
        ctype: str,
        body: bytes,
        query: dict[str, str],
    ) -> Reply:
        if ctype not in patches.PATCH_TYPES:
            raise StatusError(
                415,
                f"the body of the request was in an unknown format - accepted media types include: {', '.join(patches.PATCH_TYPES)}",
                "UnsupportedMediaType",
            )
        try:
            doc = (
                yaml.safe_load(body)
                if ctype == patches.APPLY_PATCH
                else json.loads(body or b"null")
            )
        except (ValueError, yaml.YAMLError) as err:
            raise bad_request(f"error decoding patch: {err}") from err
        if ctype == patches.APPLY_PATCH and not query.get("fieldManager"):
            raise StatusError(
                422,
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
                "Invalid",
            )
        with self._store.cond:
            old = self._store.get(res, ns, name)
            if old is None:
                if ctype == patches.APPLY_PATCH and sub is None and isinstance(doc, dict):
                    return Reply(201, self._create(res, ns, doc, query, trusted=False))
                raise not_found(res, name)
            try:
                if ctype == patches.JSON_PATCH:
                    patched = patches.json_patch(old, doc)
                elif ctype == patches.MERGE_PATCH:
                    patched = patches.merge_patch(copy.deepcopy(old), doc)
                elif ctype == patches.STRATEGIC_PATCH:
                    patched = patches.strategic_merge(copy.deepcopy(old), doc)
                else:
                    patched = patches.apply_merge(copy.deepcopy(old), doc)
            except patches.PatchError as err:
                raise invalid(res, name, "patch", str(err)) from err
            if not isinstance(patched, dict):
                raise bad_request("the patch does not produce an object")
            return self._update_locked(res, ns, name, sub, patched, query, from_patch=True)

    # ------------------------------------------------------------------ deletes

    def _delete(
        self, res: Resource, ns: str | None, name: str, query: dict[str, str], body: bytes
    ) -> Reply:
        options = self._json(body) if body.strip() else {}
        with self._store.cond:
            obj, removed = self._delete_locked(res, ns, name, query, options)
        if res.return_deleted or not removed:
            return Reply(200 if removed else 202, obj)
        details = {**_details(res, name), "uid": obj["metadata"].get("uid")}
        return Reply(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            },
        )

    def _delete_locked(
        self, res: Resource, ns: str | None, name: str, query: dict[str, str], options: Obj
    ) -> tuple[Obj, bool]:
        old = self._store.get(res, ns, name)
        if old is None:
            raise not_found(res, name)
        meta = old["metadata"]
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise conflict(
                res,
                name,
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {meta.get('uid')}",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise conflict(
                res,
                name,
                f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
            )
        if query.get("dryRun"):
            return old, True
        grace = _parse_int(query.get("gracePeriodSeconds"), "gracePeriodSeconds")
        if grace is None and options.get("gracePeriodSeconds") is not None:
            grace = int(options["gracePeriodSeconds"])
        if res is PODS and self.pod_deletion == "graceful":
            spec, status = old.get("spec") or {}, old.get("status") or {}
            if grace is None:
                grace = int(spec.get("terminationGracePeriodSeconds", 30))
            if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
                grace = 0  # never started or already finished: nothing for a kubelet to stop
            if grace > 0:
                current = meta.get("deletionGracePeriodSeconds")
                if meta.get("deletionTimestamp") and current is not None and current <= grace:
                    return old, False
                new = copy.deepcopy(old)
                new["metadata"]["deletionTimestamp"] = now_rfc3339(grace)
                new["metadata"]["deletionGracePeriodSeconds"] = grace
                out = self._commit(res, new, "MODIFIED")
                self._schedule_kubelet(ns or "", name, str(meta.get("uid")))
                return out, False
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp") and not meta.get("deletionGracePeriodSeconds"):
                return old, False
            new = copy.deepcopy(old)
            new["metadata"]["deletionTimestamp"] = meta.get("deletionTimestamp") or now_rfc3339()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            return self._commit(res, new, "MODIFIED"), False
        removed = self._store.remove(res, ns, name)
        assert removed is not None
        return removed, True

    def _schedule_kubelet(self, ns: str, name: str, uid: str) -> None:
        if self.kubelet_delay is None:
            return

        def finish() -> None:
            with self._store.cond:
                pod = self._store.get(PODS, ns, name)
                if pod is None or pod["metadata"].get("uid") != uid or self._stopping.is_set():
                    return
                if pod["metadata"].get("finalizers"):
                    new = copy.deepcopy(pod)
                    new["metadata"]["deletionGracePeriodSeconds"] = 0
                    self._commit(PODS, new, "MODIFIED")
                else:
                    self._store.remove(PODS, ns, name)

        timer = threading.Timer(self.kubelet_delay, finish)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _delete_collection(
        self, res: Resource, ns: str | None, query: dict[str, str], body: bytes
    ) -> Reply:
        options = self._json(body) if body.strip() else {}
        matches = self._matcher(res, query)
        deleted: list[Obj] = []
        with self._store.cond:
            for obj in list(self._store.items(res).values()):
                meta = obj["metadata"]
                if (ns is None or meta.get("namespace") == ns) and matches(obj):
                    out, _ = self._delete_locked(
                        res, meta.get("namespace"), meta["name"], query, options
                    )
                    deleted.append(_list_item(out))
            rv = self._store.rv
        body_out = {
            "kind": f"{res.kind}List",
            "apiVersion": res.api_version,
            "metadata": {"resourceVersion": str(rv)},
            "items": deleted,
        }
        return Reply(200, body_out)

    # ------------------------------------------------------------------ binding

    def _bind(self, ns: str, name: str, binding: Obj, query: dict[str, str]) -> Reply:
        target = binding.get("target") or {}
        record: Obj = {
            "namespace": ns,
            "name": name,
            "node": target.get("name"),
            "uid": (binding.get("metadata") or {}).get("uid"),
            "binding": copy.deepcopy(binding),
            # Who sent it, when it arrived and when it was decided (time.monotonic()).
            "userAgent": getattr(self._local, "user_agent", ""),
            "received": getattr(self._local, "received", 0.0),
            "at": time.monotonic(),
        }
        try:
            with self._store.cond:
                self._bind_locked(ns, name, binding, query)
                record["code"] = 201
                self.bindings.append(record)
                self._store.cond.notify_all()
        except StatusError as err:
            with self._store.cond:
                record["code"], record["reason"], record["message"] = (
                    err.code,
                    err.reason,
                    err.message,
                )
                self.bindings.append(record)
                self._store.cond.notify_all()
            raise
        return Reply(
            201,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "code": 201,
            },
        )

    def _bind_locked(self, ns: str, name: str, binding: Obj, query: dict[str, str]) -> None:
        meta = binding.get("metadata") or {}
        binding_res = Resource("", "v1", "Binding", "bindings", True)
        if meta.get("name") != name:
            raise bad_request("name in URL does not match name in Binding object")
        target = binding.get("target") or {}
        if target.get("kind") not in (None, "", "Node"):
            raise invalid(
                binding_res,
                name,
                "target.kind",
                f'Unsupported value: "{target.get("kind")}": supported values: "Node", "<empty>"',
                "FieldValueNotSupported",
            )
        if not target.get("name"):
            raise invalid(binding_res, name, "target.name", "Required value", "FieldValueRequired")
        pod = self._store.get(PODS, ns, name)
        if pod is None:
            raise not_found(PODS, name)
        pmeta = pod["metadata"]
        if meta.get("uid") and meta["uid"] != pmeta.get("uid"):
            raise conflict(
                PODS,
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: {pmeta.get('uid')}",
            )
        if meta.get("resourceVersion") and meta["resourceVersion"] != pmeta.get("resourceVersion"):
            raise conflict(
                PODS,
                name,
                f"Precondition failed: ResourceVersion in precondition: {meta['resourceVersion']}, "
                f"ResourceVersion in object meta: {pmeta.get('resourceVersion')}",
            )
        spec = pod.get("spec") or {}
        if pmeta.get("deletionTimestamp"):
            raise conflict(
                PODS,
                name,
                f"pod {name} is being deleted, cannot be assigned to a host",
                "pods/binding",
            )
        if spec.get("nodeName"):
            raise conflict(
                PODS,
                name,
                f'pod {name} is already assigned to node "{spec["nodeName"]}"',
                "pods/binding",
            )
        if spec.get("schedulingGates"):
            raise conflict(
                PODS, name, f"pod {name} has non-empty .spec.schedulingGates", "pods/binding"
            )
        new = copy.deepcopy(pod)
        new["spec"]["nodeName"] = target["name"]
        if meta.get("annotations"):
            new["metadata"].setdefault("annotations", {}).update(meta["annotations"])
        _set_condition(new.setdefault("status", {}), {"type": "PodScheduled", "status": "True"})
        if not query.get("dryRun"):
            self._commit(PODS, new, "MODIFIED")

    # ------------------------------------------------------------------ reads

    def _matcher(self, res: Resource, query: dict[str, str]) -> Callable[[Obj], bool]:
        try:
            labels = parse_labels(query.get("labelSelector", ""))
            fields = parse_fields(query.get("fieldSelector", ""), res)
        except SelectorError as err:
            raise bad_request(str(err)) from err
        checks: list[Matcher] = [m for m in (labels, fields) if m is not None]
        if not checks:
            return lambda _obj: True
        return lambda obj: all(m(obj) for m in checks)

    def _wait_for_rv(self, rv: int) -> None:
        """Like the watch cache: wait a little for a future RV, then 504 ResourceVersionTooLarge."""
        deadline = time.monotonic() + self.too_large_rv_wait
        while self._store.rv < rv:
            left = deadline - time.monotonic()
            if left <= 0 or self._stopping.is_set():
                raise too_large_rv(rv, self._store.rv)
            self._store.cond.wait(min(left, 0.1))

    def _list(self, res: Resource, ns: str | None, query: dict[str, str]) -> Reply:
        matches = self._matcher(res, query)
        limit = max(_parse_int(query.get("limit"), "limit") or 0, 0)
        token = query.get("continue") or ""
        rv_param = query.get("resourceVersion") or ""
        rv_match = query.get("resourceVersionMatch") or ""
        start = ""
        with self._store.cond:
            if token:
                if rv_param:
                    raise bad_request(
                        "specifying resource version is not allowed when using continue"
                    )
                list_rv, start = _decode_continue(token)
                if list_rv < self._store.compacted:
                    fresh = _encode_continue(self._store.rv, start)
                    raise expired(CONTINUE_EXPIRED_MSG, {"continue": fresh})
                state = self._store.snapshot(res, list_rv)
            elif rv_match == "Exact":
                wanted = _parse_int(rv_param, "resource version")
                if not wanted:
                    raise bad_request(
                        "resourceVersionMatch=Exact requires a non-zero resourceVersion"
                    )
                if wanted < self._store.compacted:
                    raise expired(f"too old resource version: {wanted} ({self._store.compacted})")
                self._wait_for_rv(wanted)
                state, list_rv = self._store.snapshot(res, wanted), wanted
            else:
                wanted = _parse_int(rv_param, "resource version") or 0
                if wanted:
                    self._wait_for_rv(wanted)
                state, list_rv = dict(self._store.items(res)), self._store.rv
        keys = sorted(
            k
            for k, o in state.items()
            if k >= start
            and (ns is None or o["metadata"].get("namespace") == ns)
            and matches(state[k])
        )
        page = keys[:limit] if limit else keys
        list_meta: Obj = {"resourceVersion": str(list_rv)}
        if limit and len(keys) > limit:
            list_meta["continue"] = _encode_continue(list_rv, page[-1] + "\x00")
            if not query.get("labelSelector") and not query.get("fieldSelector"):
                list_meta["remainingItemCount"] = len(keys) - limit
        body = {
            "kind": f"{res.kind}List",
            "apiVersion": res.api_version,
            "metadata": list_meta,
            "items": [_list_item(state[k]) for k in page],
        }
        return Reply(200, body)

    # ------------------------------------------------------------------ watch

    def _watch_plan(self, res: Resource, ns: str | None, query: dict[str, str]) -> WatchPlan:
        matches = self._matcher(res, query)
        rv_param = query.get("resourceVersion") or ""
        timeout = _parse_int(query.get("timeoutSeconds"), "timeoutSeconds")
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        send_initial = query.get("sendInitialEvents")
        initial_end = False
        if send_initial in ("true", "1"):
            problem = None
            if query.get("resourceVersionMatch") != "NotOlderThan":
                problem = "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            elif not bookmarks:
                problem = "allowWatchBookmarks: Forbidden: sendInitialEvents requires allowWatchBookmarks=true"
            if problem is not None:
                raise StatusError(
                    422, f'ListOptions.meta.k8s.io "" is invalid: {problem}', "Invalid"
                )
            start: int | None = None
            initial_end = True
        elif rv_param in ("", "0"):
            # Without sendInitialEvents=false these replay the current state as ADDED events.
            start = None if send_initial not in ("false", "0") else _FROM_NOW
        else:
            start = _parse_int(rv_param, "resource version")

        def passes(obj: Obj) -> bool:
            return (ns is None or obj["metadata"].get("namespace") == ns) and matches(obj)

        return WatchPlan(
            res, ns, passes, start, float(timeout) if timeout else None, bookmarks, initial_end
        )

    def _serve_watch(self, h: _Handler, target: str, plan: WatchPlan) -> None:
        self.requests.append((h.command, target, 200))
        stream_id = next(self._stream_ids)
        res = plan.res
        try:
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
        except OSError:
            h.close_connection = True
            return
        start = time.monotonic()
        deadline = start + plan.timeout if plan.timeout else None
        next_bookmark = start + self.bookmark_interval if plan.bookmarks else None
        pending: list[Obj] = []
        with self._store.cond:
            pos = self._store.rv
            if plan.start_rv == _FROM_NOW:
                pass
            elif plan.start_rv is None:
                state = self._store.items(res)
                pending = [
                    {"type": "ADDED", "object": state[k]}
                    for k in sorted(state)
                    if plan.matches(state[k])
                ]
            elif plan.start_rv < self._store.compacted:
                err = expired(
                    f"too old resource version: {plan.start_rv} ({self._store.compacted})"
                )
                pending = [{"type": "ERROR", "object": err.status()}]
            else:
                try:
                    self._wait_for_rv(plan.start_rv)
                    pos = plan.start_rv
                except StatusError as err:
                    pending = [{"type": "ERROR", "object": err.status()}]
        if pending and pending[-1]["type"] == "ERROR":
            self._end_watch(h, pending)
            return
        if plan.initial_end_bookmark:
            pending.append(_bookmark(res, pos, initial_end=True))
        while True:
            for event in pending:
                if not self._write_event(h, event):
                    return
                if event["type"] != "BOOKMARK" and self.faults.should_drop(stream_id, res.key, 1):
                    self._abort(h)
                    return
            pending = []
            if self.faults.should_drop(stream_id, res.key, 0):
                self._abort(h)
                return
            if self._stopping.is_set():
                self._end_watch(h, [])
                return
            if _client_gone(h):
                h.close_connection = True
                return
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self._end_watch(h, [_bookmark(res, pos)] if plan.bookmarks else [])
                return
            if next_bookmark is not None and now >= next_bookmark:
                pending.append(_bookmark(res, pos))
                next_bookmark = now + self.bookmark_interval
                continue
            wait = 0.25
            if deadline is not None:
                wait = min(wait, deadline - now)
            if next_bookmark is not None:
                wait = min(wait, next_bookmark - now)
            with self._store.cond:
                changes = self._store.changes_after(pos)
                if not changes:
                    self._store.cond.wait(max(wait, 0.0))
                    changes = self._store.changes_after(pos)
                for change in changes:
                    pos = change.rv
                    if change.res is res:
                        converted = _watch_event(change, plan.matches)
                        if converted is not None:
                            pending.append(converted)

    def _write_event(self, h: _Handler, event: Obj) -> bool:
        data = json.dumps(event, separators=(",", ":")).encode() + b"\n"
        try:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            h.wfile.flush()
        except OSError:
            h.close_connection = True
            return False
        return True

    def _end_watch(self, h: _Handler, events: Iterable[Obj]) -> None:
        for event in events:
            if not self._write_event(h, event):
                return
        try:
            h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
        except OSError:
            h.close_connection = True

    @staticmethod
    def _abort(h: _Handler) -> None:
        """Close the connection mid-stream, without the terminating chunk."""
        h.close_connection = True
        with contextlib.suppress(OSError):
            h.connection.shutdown(socket.SHUT_RDWR)


def lookup_key_resource(res: Resource) -> Resource:
    """For RV-required errors the real server names the resource (`leases.coordination.k8s.io`)."""
    return Resource(res.group, res.version, res.plural, res.plural, res.namespaced)


def _client_gone(h: _Handler) -> bool:
    """True once the peer closed an idle watch connection (readable with EOF)."""
    try:
        readable, _, _ = select.select([h.connection], [], [], 0)
        return bool(readable) and h.connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _list_item(obj: Obj) -> Obj:
    # Items of a JSON list response carry no kind/apiVersion, as from the real server.
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def _bookmark(res: Resource, rv: int, *, initial_end: bool = False) -> Obj:
    meta: Obj = {"resourceVersion": str(rv), "creationTimestamp": None}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {
        "type": "BOOKMARK",
        "object": {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta},
    }


def _watch_event(change: Change, matches: Callable[[Obj], bool]) -> Obj | None:
    """The cacher's filtering: objects moving out of a selector arrive as DELETED."""
    cur = change.type != "DELETED" and matches(change.obj)
    old = change.prev is not None and matches(change.prev)
    if cur and not old:
        return {"type": "ADDED", "object": change.obj}
    if cur and old:
        return {"type": "MODIFIED", "object": change.obj}
    if old and change.prev is not None:
        last = {
            **change.prev,
            "metadata": {**change.prev["metadata"], "resourceVersion": str(change.rv)},
        }
        return {"type": "DELETED", "object": last}
    return None


def _set_condition(status: Obj, cond: Obj) -> None:
    """podutil.UpdatePodCondition: replace by type, keep lastTransitionTime if status unchanged."""
    conditions: list[Obj] = status.setdefault("conditions", [])
    new = {
        "type": cond["type"],
        "status": cond["status"],
        "lastProbeTime": None,
        "lastTransitionTime": now_rfc3339(),
    }
    for i, existing in enumerate(conditions):
        if existing.get("type") == cond["type"]:
            if existing.get("status") == cond["status"]:
                new["lastTransitionTime"] = existing.get("lastTransitionTime")
            conditions[i] = new
            return
    conditions.append(new)
