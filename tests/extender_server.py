"""A scheduler extender for tests: a threaded HTTP(S) server on 127.0.0.1, ephemeral port.

Each verb is a function from the decoded request body to the reply (any JSON value, or a
``Reply`` for a chosen status or raw bytes). Every request is recorded, with its path,
headers, the client's port (to see connection reuse) and the decoded body.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[Any], Any]
PREFIX = "/scheduler"


@dataclass
class Reply:
    """A reply other than 200 + JSON: any status, raw body bytes."""

    status: int = 200
    body: bytes = b""


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    client_port: int
    body: Any


def node_names(args: Any) -> list[str]:
    """The candidate names of an ExtenderArgs, whichever of Nodes / NodeNames was sent."""
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in args["Nodes"]["items"]]


def node_labels(args: Any) -> dict[str, dict[str, str]]:
    return {
        n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in args["Nodes"]["items"]
    }


def label_filter(
    key: str, value: str, message: str | None = None, unresolvable: bool = False
) -> Handler:
    """Keeps nodes labelled key=value (needs full Nodes); the others fail with ``message``."""
    reason = message or f"node(s) didn't have label {key}={value}"

    def handle(args: Any) -> Any:
        labels = node_labels(args)
        keep = [
            n for n in args["Nodes"]["items"] if labels[n["metadata"]["name"]].get(key) == value
        ]
        failed = {name: reason for name, lab in labels.items() if lab.get(key) != value}
        return {
            "Nodes": {"metadata": {}, "items": keep},
            "NodeNames": None,
            "FailedNodes": {} if unresolvable else failed,
            "FailedAndUnresolvableNodes": failed if unresolvable else {},
            "Error": "",
        }

    return handle


def keep_names(names: set[str], message: str = "rejected by extender") -> Handler:
    """A node-cache-capable filter: keeps ``names``, answers with NodeNames."""

    def handle(args: Any) -> Any:
        candidates = node_names(args)
        return {
            "NodeNames": [n for n in candidates if n in names],
            "FailedNodes": {n: message for n in candidates if n not in names},
        }

    return handle


def scores(table: dict[str, int]) -> Handler:
    """Prioritize: a fixed score per node name (0 for the others)."""

    def handle(args: Any) -> Any:
        return [{"Host": n, "Score": table.get(n, 0)} for n in node_names(args)]

    return handle


def accept_bind(args: Any) -> Any:
    return {"Error": ""}


class ExtenderServer:
    """Routes ``/scheduler/<verb>`` to handlers; use as a context manager."""

    def __init__(
        self,
        handlers: dict[str, Handler] | None = None,
        delay: float = 0.0,
        tls: ssl.SSLContext | None = None,
        close_after_reply: bool = False,
    ) -> None:
        self.handlers = dict(handlers or {})
        self.delay = delay
        self.close_after_reply = close_after_reply
        self.requests: list[Recorded] = []
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as kube-scheduler's client uses

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.append(self.connection)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else None
                with server._lock:
                    server.requests.append(
                        Recorded(self.path, dict(self.headers), self.client_address[1], body)
                    )
                if server.delay:
                    time.sleep(server.delay)
                verb = self.path.removeprefix(PREFIX + "/")
                handler = server.handlers.get(verb)
                if handler is None:
                    reply: Any = Reply(404, b"404 page not found\n")
                else:
                    reply = handler(body)
                if not isinstance(reply, Reply):
                    reply = Reply(200, json.dumps(reply).encode())
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                if server.close_after_reply:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}{PREFIX}"
        # a short poll keeps shutdown() quick (the default waits up to half a second)
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def bodies(self, verb: str) -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests if r.path == f"{PREFIX}/{verb}"]

    def drop_connections(self) -> None:
        """Closes every accepted connection, as a server dropping idle keep-alives does."""
        with self._lock:
            conns, self._connections = self._connections, []
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def __enter__(self) -> ExtenderServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def free_port() -> int:
    """A port nobody listens on (bound then released), for "extender down" cases."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def extender_config(url: str, **fields: Any) -> dict[str, Any]:
    """An `extenders[]` entry (camelCase keys as in the YAML) pointing at ``url``."""
    return {"urlPrefix": url, **fields}


__all__ = [
    "ExtenderServer",
    "Recorded",
    "Reply",
    "accept_bind",
    "extender_config",
    "free_port",
    "keep_names",
    "label_filter",
    "node_labels",
    "node_names",
    "scores",
]
