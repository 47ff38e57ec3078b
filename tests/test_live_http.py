"""The API client's lean HTTP/1.1 path (live/http.py, live/auth.py) against a tiny server.

The server below reads requests off raw sockets and answers what each test scripts, so
the tests see the bytes on the wire: one connection kept alive, chunked and gzipped
answers, ``Connection: close``, a server closing an idle connection, a token file
re-read on 401, error answers, timeouts and leader fencing.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from live_support import self_signed
from wasmsched.live import ApiClient, load_kube_config
from wasmsched.live.client import ApiError, FencedError
from wasmsched.live.ratelimit import TokenBucket

OK = b'{"kind":"Status","status":"Success"}'


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    connection: int


# What the server does with a request: the answer's bytes, or None to close the
# connection without one.
Handler = Callable[[Request], bytes | None]


def answer(status: int, body: bytes = OK, *headers: str, chunked: bool = False) -> bytes:
    head = [f"HTTP/1.1 {status} X", "Content-Type: application/json", *headers]
    if chunked:
        halves = [body[: len(body) // 2], body[len(body) // 2 :]]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(h), h) for h in halves if h) + b"0\r\n\r\n"
        head.append("Transfer-Encoding: chunked")
    else:
        payload = body
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + payload


@dataclass
class Server:
    """HTTP/1.1 on 127.0.0.1: each connection on a thread, requests answered by ``handler``."""

    handler: Handler = lambda request: answer(200)
    tls: ssl.SSLContext | None = None
    requests: list[Request] = field(default_factory=list)
    accepted: int = 0
    # Connections the server still holds open (a test closes them as a server would).
    open: list[socket.socket] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn, self.accepted), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            self.open.append(conn)
            reader = conn.makefile("rb")
            while True:
                line = reader.readline()
                if not line:
                    return
                method, target, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (header := reader.readline()) not in (b"\r\n", b""):
                    name, value = header.decode().split(":", 1)
                    headers[name.strip().lower()] = value.strip()
                body = reader.read(int(headers.get("content-length", "0")))
                request = Request(method, target, headers, body, number)
                self.requests.append(request)
                reply = self.handler(request)
                if reply is None:
                    conn.close()
                    return
                conn.sendall(reply)
        except OSError:
            return

    def close_idle(self) -> None:
        """Closes every connection, as a server does with idle keep-alive connections."""
        for conn in self.open:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # the reader thread's file holds the socket
            conn.close()
        self.open.clear()
        time.sleep(0.05)

    def stop(self) -> None:
        self.sock.close()
        self.close_idle()


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.stop()


def kubeconfig(path: Path, server: str, user: dict[str, Any], **cluster: Any) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "k", "cluster": {"server": server, **cluster}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


@pytest.fixture
def api(server: Server, tmp_path: Path) -> Iterator[ApiClient]:
    client = ApiClient(
        load_kube_config(kubeconfig(tmp_path / "kc", server.url, {"token": "t0k"})), timeout=2
    )
    assert client.transport == "lean"
    yield client
    client.close()


BINDING = {"kind": "Binding", "metadata": {"name": "p"}, "target": {"name": "n1"}}
BINDING_PATH = "/api/v1/namespaces/default/pods/p/binding"


def test_requests_share_one_kept_alive_connection_and_carry_every_header(
    server: Server, api: ApiClient
) -> None:
    api.user_agent = "wasmsched (me)"
    assert api.request("POST", BINDING_PATH, body=BINDING) == json.loads(OK)
    api.request("GET", "/api/v1/pods", params={"labelSelector": "a in (b, c)", "limit": "5"})
    first, second = server.requests
    assert server.accepted == 1
    assert (first.method, first.target) == ("POST", BINDING_PATH)
    assert json.loads(first.body) == BINDING
    assert first.headers["host"] == f"127.0.0.1:{server.port}"
    assert first.headers["authorization"] == "Bearer t0k"
    assert first.headers["user-agent"] == "wasmsched (me)"
    assert first.headers["content-type"] == "application/json"
    assert first.headers["accept"] == "application/json"
    assert second.target == "/api/v1/pods?labelSelector=a+in+%28b%2C+c%29&limit=5"
    assert "content-length" not in second.headers


def test_a_server_path_prefix_is_kept(server: Server, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "kc", server.url + "/k8s/clusters/c1/", {"token": "t"})
    api = ApiClient(load_kube_config(path))
    assert api.transport == "lean"
    api.request("GET", "/version")
    assert server.requests[0].target == "/k8s/clusters/c1/version"
    api.close()


def test_chunked_and_gzipped_answers_are_read_whole(server: Server, api: ApiClient) -> None:
    big = json.dumps({"items": [{"n": i} for i in range(300)]}).encode()
    replies = iter(
        [
            answer(200, big, chunked=True),
            answer(200, gzip.compress(big), "Content-Encoding: gzip", chunked=True),
            answer(200, gzip.compress(big), "Content-Encoding: gzip"),
        ]
    )
    server.handler = lambda request: next(replies)
    for _ in range(3):
        assert api.request("GET", "/api/v1/pods") == json.loads(big)
    assert server.accepted == 1
    assert server.requests[0].headers["accept-encoding"] == "gzip"


def test_connection_close_opens_a_fresh_connection(server: Server, api: ApiClient) -> None:
    server.handler = lambda request: answer(200, OK, "Connection: close")
    api.request("GET", "/a")
    api.request("GET", "/b")
    assert server.accepted == 2
    assert [r.connection for r in server.requests] == [1, 2]


def test_an_idle_connection_the_server_closed_is_not_reused(server: Server, api: ApiClient) -> None:
    api.request("POST", BINDING_PATH, body=BINDING)
    server.close_idle()
    # Not replayable, so only the check before reuse can keep this request from failing.
    api.request("POST", "/api/v1/namespaces/default/events", body={"kind": "Event"})
    assert [(r.method, r.connection) for r in server.requests] == [("POST", 1), ("POST", 2)]


def test_a_request_lost_on_a_reused_connection_is_sent_again_only_when_replayable(
    server: Server, api: ApiClient
) -> None:
    api.request("GET", "/warm")
    drop = iter([True, False])
    # The server takes the request and closes the connection before answering (as it
    # closes an idle connection just as the request arrives).
    server.handler = lambda request: None if next(drop, False) else answer(201)
    api.request("POST", BINDING_PATH, body=BINDING, replayable=True)
    assert [r.connection for r in server.requests] == [1, 1, 2]

    drop = iter([True])
    with pytest.raises(ApiError) as err:
        api.request("POST", "/apis/resource.k8s.io/v1/namespaces/d/resourceclaims", body={})
    assert err.value.status == 0
    assert "RemoteProtocolError" in str(err.value)
    assert len(server.requests) == 4  # not sent twice: a second claim could be created

    api.request("GET", "/warm")
    drop = iter([True])
    api.request("PATCH", "/api/v1/namespaces/d/pods/p/status", body={"status": {}})
    assert len(server.requests) == 7  # a merge patch is sent again


def test_a_fresh_connection_closed_without_an_answer_is_an_error(
    server: Server, tmp_path: Path
) -> None:
    server.handler = lambda request: None
    api = ApiClient(load_kube_config(kubeconfig(tmp_path / "kc", server.url, {})))
    assert api.transport == "lean"
    with pytest.raises(ApiError, match="RemoteProtocolError"):
        api.request("GET", "/a")
    assert len(server.requests) == 1  # not retried: the connection was not a reused one
    api.close()


def test_a_rotated_token_file_is_read_again_on_401(server: Server, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old\n")
    valid = {"Bearer old"}
    server.handler = lambda r: answer(200 if r.headers.get("authorization") in valid else 401)
    path = kubeconfig(tmp_path / "kc", server.url, {"tokenFile": str(token)})
    api = ApiClient(load_kube_config(path))
    assert api.transport == "lean"
    api.request("GET", "/a")
    token.write_text("new\n")
    valid = {"Bearer new"}
    api.request("POST", BINDING_PATH, body=BINDING)
    api.request("GET", "/b")
    assert [r.headers["authorization"] for r in server.requests] == [
        "Bearer old",
        "Bearer old",
        "Bearer new",
        "Bearer new",
    ]
    assert server.requests[2].body == server.requests[1].body
    valid = set()
    with pytest.raises(ApiError) as err:
        api.request("GET", "/c")
    assert err.value.status == 401
    assert len(server.requests) == 6  # once more with the file read again, then the 401
    api.close()


def test_a_fixed_token_is_not_sent_twice_on_401(server: Server, api: ApiClient) -> None:
    server.handler = lambda request: answer(401, b"")
    with pytest.raises(ApiError) as err:
        api.request("GET", "/a")
    assert (err.value.status, err.value.message) == (401, "Unauthorized")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("reply", "status", "reason", "message"),
    [
        (
            answer(
                409,
                json.dumps(
                    {
                        "kind": "Status",
                        "code": 409,
                        "reason": "Conflict",
                        "message": 'Operation cannot be fulfilled on pods/binding "p"',
                    }
                ).encode(),
            ),
            409,
            "Conflict",
            'Operation cannot be fulfilled on pods/binding "p"',
        ),
        (answer(503, b"  overloaded\n"), 503, "", "overloaded"),
        (answer(404, b""), 404, "", "Not Found"),
        (answer(500, b"{not json"), 500, "", "{not json"),
    ],
)
def test_error_answers_are_mapped_as_before(
    server: Server, api: ApiClient, reply: bytes, status: int, reason: str, message: str
) -> None:
    server.handler = lambda request: reply
    with pytest.raises(ApiError) as err:
        api.request("POST", BINDING_PATH, body=BINDING)
    assert (err.value.status, err.value.reason, err.value.message) == (status, reason, message)
    # The connection stays usable after an error answer.
    server.handler = lambda request: answer(200)
    api.request("GET", "/a")
    assert server.accepted == 1


def test_a_non_json_success_answer_is_an_error(server: Server, api: ApiClient) -> None:
    server.handler = lambda request: answer(200, b"<html>")
    with pytest.raises(ApiError, match="answer is not JSON"):
        api.request("GET", "/a")
    server.handler = lambda request: answer(201, b"")
    assert api.request("POST", BINDING_PATH, body=BINDING) == {}


def test_a_server_that_does_not_answer_times_out(server: Server, api: ApiClient) -> None:
    server.handler = lambda request: time.sleep(1.0) or answer(200)  # type: ignore[func-returns-value]
    started = time.monotonic()
    with pytest.raises(ApiError) as err:
        api.request("PATCH", "/api/v1/namespaces/d/pods/p/status", body={}, timeout=0.2)
    assert err.value.status == 0
    assert "ReadTimeout" in str(err.value)
    assert time.monotonic() - started < 0.9
    assert len(server.requests) == 1  # a timeout is not a lost connection: not sent again
    server.handler = lambda request: answer(200)
    api.request("GET", "/a")  # a fresh connection
    assert server.accepted == 2


def test_a_refused_connection_is_a_connect_error(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}", {})
    api = ApiClient(load_kube_config(path))
    assert api.transport == "lean"
    with pytest.raises(ApiError) as err:
        api.request("GET", "/a")
    assert err.value.status == 0
    assert str(err.value).startswith("GET /a: ConnectError: ")


def test_the_guard_is_asked_once_the_connection_is_ready(server: Server, api: ApiClient) -> None:
    asked: list[int] = []

    def guard() -> bool:
        # The server's accept thread counts the connection a moment after it is made.
        deadline = time.monotonic() + 2
        while server.accepted == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        asked.append(server.accepted)
        return False

    with pytest.raises(FencedError):
        api.request("POST", BINDING_PATH, body=BINDING, guard=guard)
    assert asked == [1]  # connected, then asked, then nothing written
    assert server.requests == []
    api.request("POST", BINDING_PATH, body=BINDING, guard=lambda: True)
    assert [r.connection for r in server.requests] == [1]


def test_the_rate_limit_comes_first_and_latency_is_reported(server: Server, api: ApiClient) -> None:
    api.rate_limit = TokenBucket(qps=10, burst=1)
    seen: list[tuple[str, float]] = []
    api.on_request = lambda verb, seconds: seen.append((verb, seconds))
    started = time.monotonic()
    api.request("GET", "/a")
    api.request("DELETE", "/b", body={"kind": "DeleteOptions"})
    assert time.monotonic() - started >= 0.08  # the second waited for its token
    assert [verb for verb, _ in seen] == ["GET", "DELETE"]
    assert all(0 <= seconds < 1 for _, seconds in seen)


def test_a_proxy_from_the_environment_sends_requests_through_httpx(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test server plays the proxy: httpx sends it the absolute URL.
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    path = kubeconfig(tmp_path / "kc", "http://api.example:8080", {"token": "t"})
    api = ApiClient(load_kube_config(path))
    assert api.transport == "httpx"
    api.request("GET", "/version")
    assert server.requests[0].target == "http://api.example:8080/version"
    api.close()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    path = kubeconfig(tmp_path / "kc", server.url, {"token": "t"})
    api = ApiClient(load_kube_config(path))
    assert api.transport == "lean"
    api.request("GET", "/version")
    assert server.requests[1].target == "/version"
    api.close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A self-signed certificate for 127.0.0.1: the server's, the CA, the client's."""
    return self_signed(tmp_path_factory.mktemp("pki"))


def test_tls_with_the_kubeconfig_ca_and_a_client_certificate(pki: Path, tmp_path: Path) -> None:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(pki / "tls.crt", pki / "tls.key")
    tls.load_verify_locations(pki / "tls.crt")
    tls.verify_mode = ssl.CERT_REQUIRED  # the client must show its certificate
    server = Server(tls=tls)
    user = {"client-certificate": str(pki / "tls.crt"), "client-key": str(pki / "tls.key")}
    path = kubeconfig(
        tmp_path / "kc", server.url, user, **{"certificate-authority": str(pki / "tls.crt")}
    )
    api = ApiClient(load_kube_config(path))
    assert api.transport == "lean"
    api.request("POST", BINDING_PATH, body=BINDING)
    api.request("GET", "/a")
    assert server.accepted == 1
    assert "authorization" not in server.requests[0].headers
    api.close()
    # A server the CA does not vouch for: the handshake fails, nothing is sent.
    other = kubeconfig(tmp_path / "other", server.url, {"token": "t"})
    api = ApiClient(load_kube_config(other))
    with pytest.raises(ApiError, match=r"ConnectError: .*CERTIFICATE_VERIFY_FAILED"):
        api.request("GET", "/b")
    path = kubeconfig(tmp_path / "kc3", server.url, {}, **{"insecure-skip-tls-verify": True})
    api = ApiClient(load_kube_config(path))
    with pytest.raises(ApiError) as err:
        api.request("GET", "/c")  # verified no more, but the server wants a certificate
    assert err.value.status == 0
    assert len(server.requests) == 2
    server.stop()
