"""A lean HTTP/1.1 connection for the API client's short requests (live/client.py).

httpx's layers cost about 1.1 ms of Python CPU per binding or event POST (it builds and
parses each URL three times; its client, auth, transport and pool each wrap the request),
as much as a scheduling cycle, under the same GIL. A request here is one ``sendall`` of
bytes built by one f-string and an answer read with the socket file's C ``readline``:
status line, headers (Content-Length, chunked, ``Connection: close``, gzip), body.

One ``Connection`` per thread, kept alive between requests, as client-go's transport
keeps its idle connections. Before reusing an idle connection it is checked as httpcore
does (http11.py: HTTP11Connection.has_expired): idle longer than the keep-alive expiry,
or readable (the server closed it, or sent what no request asked for), it is closed and
a fresh one opened. A reused connection that still fails is retried once on a fresh one
by Go's rule (net/http transport.go: persistConn.shouldRetryRequest): when the request
could not be written, or when nothing of the answer came and the request is
``replayable`` (a repeat is harmless: the caller says so).
"""

from __future__ import annotations

import re
import select
import socket
import ssl
import time
import zlib
from collections.abc import Callable
from typing import BinaryIO, NamedTuple
from urllib.parse import SplitResult, quote, urlencode, urlsplit

__all__ = ["Answer", "Connection", "Endpoint", "HttpError", "NotSent", "request_head"]

# httpx's default keep-alive expiry (httpx Limits: keepalive_expiry=5.0).
KEEPALIVE_EXPIRY = 5.0
# h11's limits on an answer's head (h11 _connection.py: DEFAULT_MAX_INCOMPLETE_EVENT_SIZE).
MAX_LINE = 64 * 1024
MAX_HEADERS = 128
# Characters a path may carry as they are (RFC 3986 pchar and "/"); others are escaped.
_PATH_SAFE = "/-._~!$&'()*+,;=:@%"
_PATH_UNSAFE = re.compile(r"[^A-Za-z0-9/\-._~!$&'()*+,;=:@%]")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_PROTOBUF = b"application/vnd.kubernetes.protobuf"


class HttpError(Exception):
    """A request without a complete answer; ``kind`` names it as httpx does
    (ConnectError, ConnectTimeout, WriteError, ReadError, ReadTimeout, RemoteProtocolError)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


class NotSent(Exception):
    """The request's guard said no once a connection was ready: nothing was written."""


class _NothingRead(Exception):
    """The connection ended before the first byte of the answer."""


class Answer(NamedTuple):
    status: int
    body: bytes
    # Content-Type application/vnd.kubernetes.protobuf (else JSON, or no body)
    protobuf: bool = False


class Endpoint:
    """Where the API server is: scheme, address, TLS, the server URL's path prefix."""

    def __init__(self, url: SplitResult, tls: ssl.SSLContext | None) -> None:
        self.host = url.hostname or ""
        self.port = url.port or _DEFAULT_PORTS[url.scheme]
        self.tls = tls if url.scheme == "https" else None
        if self.tls is not None:
            # As httpcore offers it (connection.py: _connect): this client speaks HTTP/1.1.
            self.tls.set_alpn_protocols(["http/1.1"])
        # The Host header: the URL's host, its port only when not the scheme's default.
        netloc_host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = (
            netloc_host if url.port in (None, _DEFAULT_PORTS[url.scheme]) else url.netloc
        )
        # httpx's base_url merge: the server's path, then the request's.
        self.prefix = url.path.rstrip("/")

    @classmethod
    def parse(cls, server: str, tls: ssl.SSLContext | None) -> Endpoint | None:
        """The endpoint of ``server``, or None when this client cannot serve it (another
        scheme, credentials in the URL, a query or fragment)."""
        try:
            url = urlsplit(server)
            url.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            return None
        if url.scheme not in _DEFAULT_PORTS or not url.hostname:
            return None
        if url.username is not None or url.query or url.fragment:
            return None
        return cls(url, tls)

    def target(self, path: str, params: dict[str, str] | None) -> str:
        """The request target: the prefix, the path (escaped where it must be), the query."""
        if _PATH_UNSAFE.search(path) is not None:
            path = quote(path, safe=_PATH_SAFE)
        target = self.prefix + path if path.startswith("/") else f"{self.prefix}/{path}"
        return f"{target}?{urlencode(params)}" if params else target


def request_head(
    method: str, target: str, headers: str, content_type: str, content: bytes | None
) -> bytes:
    """The request's bytes: request line, the prebuilt ``headers`` block, the body."""
    if content is None:
        if method in ("GET", "HEAD", "DELETE"):
            return f"{method} {target} HTTP/1.1\r\n{headers}\r\n".encode()
        return f"{method} {target} HTTP/1.1\r\n{headers}Content-Length: 0\r\n\r\n".encode()
    return (
        f"{method} {target} HTTP/1.1\r\n{headers}Content-Type: {content_type}\r\n"
        f"Content-Length: {len(content)}\r\n\r\n"
    ).encode() + content


class Connection:
    """One keep-alive connection to ``endpoint``, used by one thread at a time."""

    def __init__(self, endpoint: Endpoint, keepalive_expiry: float = KEEPALIVE_EXPIRY) -> None:
        self.endpoint = endpoint
        self.keepalive_expiry = keepalive_expiry
        self._sock: socket.socket | None = None
        self._reader: BinaryIO | None = None
        self._timeout: float | None = None
        self._idle_since = 0.0
        # Connections opened (a test reads it: a reused connection is not reopened).
        self.opened = 0

    def close(self) -> None:
        sock, reader = self._sock, self._reader
        self._sock = self._reader = None
        if reader is not None:
            reader.close()
        if sock is not None:
            sock.close()

    def exchange(
        self,
        method: str,
        data: bytes,
        timeout: float,
        *,
        replayable: bool = False,
        guard: Callable[[], bool] | None = None,
    ) -> Answer:
        """Sends ``data`` (a whole request) and reads the answer. Raises HttpError, or
        NotSent when ``guard()`` says no right before the first byte is written."""
        reused = self._sock is not None and self._usable()
        if not reused:
            self._connect(timeout)
        while True:
            try:
                return self._send_and_read(method, data, timeout, guard)
            except _NothingRead as err:
                self.close()
                if not (reused and replayable):
                    raise HttpError("RemoteProtocolError", str(err)) from None
            except _Unwritten as err:
                self.close()
                if not reused:
                    raise HttpError("WriteError", str(err)) from None
            # The server closed the reused connection: once more on a fresh one.
            reused = False
            self._connect(timeout)

    # --- the connection ---------------------------------------------------------------

    def _usable(self) -> bool:
        """Whether the idle connection may carry another request (else it is closed)."""
        sock = self._sock
        assert sock is not None
        if time.monotonic() - self._idle_since <= self.keepalive_expiry:
            try:
                readable = bool(select.select((sock,), (), (), 0)[0])
            except (OSError, ValueError):
                readable = True
            if not readable:
                return True
        self.close()
        return False

    def _connect(self, timeout: float) -> None:
        ep = self.endpoint
        sock: socket.socket | None = None
        try:
            sock = socket.create_connection((ep.host, ep.port), timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if ep.tls is not None:
                sock = ep.tls.wrap_socket(sock, server_hostname=ep.host)
        except OSError as err:
            if sock is not None:
                sock.close()
            if isinstance(err, TimeoutError):
                raise HttpError("ConnectTimeout", str(err) or "timed out") from None
            raise HttpError("ConnectError", str(err)) from None
        self._sock = sock
        self._reader = sock.makefile("rb")
        self._timeout = timeout
        self._idle_since = time.monotonic()
        self.opened += 1

    def _send_and_read(
        self, method: str, data: bytes, timeout: float, guard: Callable[[], bool] | None
    ) -> Answer:
        sock = self._sock
        assert sock is not None
        if guard is not None and not guard():
            # Nothing written: the connection stays as it is, for the next request.
            raise NotSent
        if timeout != self._timeout:
            sock.settimeout(timeout)
            self._timeout = timeout
        try:
            sock.sendall(data)
        except TimeoutError as err:
            self.close()
            raise HttpError("WriteTimeout", str(err) or "timed out") from None
        except OSError as err:
            raise _Unwritten(str(err)) from None
        try:
            answer, keep = self._read_answer(method)
        except (_NothingRead, HttpError):
            raise
        except TimeoutError as err:
            self.close()
            raise HttpError("ReadTimeout", str(err) or "timed out") from None
        except OSError as err:
            self.close()
            raise HttpError("ReadError", str(err)) from None
        if keep:
            self._idle_since = time.monotonic()
        else:
            self.close()
        return answer

    # --- the answer -------------------------------------------------------------------

    def _read_answer(self, method: str) -> tuple[Answer, bool]:
        """The answer and whether the connection stays open after it."""
        reader = self._reader
        assert reader is not None
        try:
            line = reader.readline(MAX_LINE)
        except TimeoutError:
            raise
        except OSError as err:
            raise _NothingRead(f"connection lost before the answer: {err}") from None
        if not line:
            raise _NothingRead("Server disconnected without sending a response.")
        while True:
            parts = line.split(None, 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
                raise self._protocol(f"malformed status line {line[:80]!r}")
            status = int(parts[1])
            keep = parts[0] == b"HTTP/1.1"
            length = -1
            chunked = False
            encoding = b""
            protobuf = False
            for _ in range(MAX_HEADERS):
                header = reader.readline(MAX_LINE)
                if header in (b"\r\n", b"\n"):
                    break
                colon = header.find(b":")
                if colon <= 0 or not header.endswith(b"\n"):
                    raise self._protocol(f"malformed header {header[:80]!r}")
                name = header[:colon].lower()
                if name == b"content-length":
                    value = header[colon + 1 :].strip()
                    if not value.isdigit():
                        raise self._protocol(f"bad Content-Length {value[:40]!r}")
                    length = int(value)
                elif name == b"transfer-encoding":
                    chunked = header[colon + 1 :].strip().lower().endswith(b"chunked")
                elif name == b"connection":
                    token = header[colon + 1 :].strip().lower()
                    keep = token == b"keep-alive" or (keep and token != b"close")
                elif name == b"content-encoding":
                    encoding = header[colon + 1 :].strip().lower()
                elif name == b"content-type":
                    protobuf = header[colon + 1 :].strip().startswith(_PROTOBUF)
            else:
                raise self._protocol("too many headers")
            if 100 <= status < 200:
                line = reader.readline(MAX_LINE)  # an interim answer; the real one follows
                continue
            break
        if method == "HEAD" or status in (204, 304):
            body = b""
        elif chunked:
            body = self._read_chunked(reader)
        elif length >= 0:
            body = reader.read(length)
            if len(body) < length:
                raise self._protocol("Server disconnected in the middle of the body.")
        else:
            body = reader.read()  # delimited by the end of the connection
            keep = False
        if encoding in (b"gzip", b"x-gzip", b"deflate"):
            body = self._decoded(body, encoding)
        return Answer(status, body, protobuf), keep

    def _read_chunked(self, reader: BinaryIO) -> bytes:
        chunks: list[bytes] = []
        while True:
            line = reader.readline(MAX_LINE)
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise self._protocol(f"bad chunk size {line[:40]!r}") from None
            if size == 0:
                break
            chunk = reader.read(size)
            if len(chunk) < size or reader.readline(MAX_LINE) not in (b"\r\n", b"\n"):
                raise self._protocol("Server disconnected in the middle of a chunk.")
            chunks.append(chunk)
        for _ in range(MAX_HEADERS):  # the trailer, up to its empty line
            trailer = reader.readline(MAX_LINE)
            if trailer in (b"\r\n", b"\n"):
                return b"".join(chunks)
            if not trailer:
                break
        raise self._protocol("malformed chunked trailer")

    def _decoded(self, body: bytes, encoding: bytes) -> bytes:
        try:
            if encoding == b"deflate":
                try:
                    return zlib.decompress(body)
                except zlib.error:
                    return zlib.decompress(body, -zlib.MAX_WBITS)  # raw deflate
            return zlib.decompress(body, zlib.MAX_WBITS | 16)
        except zlib.error as err:
            raise self._protocol(f"cannot decode the {encoding.decode()} body: {err}") from None

    def _protocol(self, detail: str) -> HttpError:
        self.close()
        return HttpError("RemoteProtocolError", detail)


class _Unwritten(Exception):
    """The request could not be written: the server cannot have acted on it."""
