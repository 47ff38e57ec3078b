"""wasm/fetch.py: file:// and http(s):// guest URLs with upstream's error texts."""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from wasmsched.wasm import WasmError, fetch_guest
from wasmsched.wasm.fetch import resolve_file_url

PAYLOAD = b"\0asm\x01\0\0\0"


@pytest.fixture
def guest_file(tmp_path: Path) -> Path:
    path = tmp_path / "sub" / "g.wasm"
    path.parent.mkdir()
    path.write_bytes(PAYLOAD)
    return path


def test_absolute_file_url(guest_file: Path) -> None:
    assert fetch_guest(guest_file.as_uri()) == PAYLOAD
    assert fetch_guest(f"file://localhost{guest_file}") == PAYLOAD


def test_relative_file_url_uses_cwd_or_base_dir(
    guest_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(guest_file.parent.parent)
    assert fetch_guest("file://sub/g.wasm") == PAYLOAD
    assert fetch_guest("file://../sub/g.wasm", base_dir=guest_file.parent) == PAYLOAD
    assert resolve_file_url("file://sub/g.wasm") == guest_file


def test_percent_encoded_path(tmp_path: Path) -> None:
    path = tmp_path / "with space.wasm"
    path.write_bytes(PAYLOAD)
    assert fetch_guest(path.as_uri()) == PAYLOAD


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http", "invalid URL: http"),
        ("ldap://foo/bar.wasm", "unsupported URL scheme: ldap"),
        ("c:\\foo.wasm", "unsupported URL scheme: c"),
        ("file://testduta", "open testduta: no such file or directory"),
    ],
)
def test_url_errors(
    url: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WasmError) as info:
        fetch_guest(url)
    assert str(info.value) == message


def test_directory_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(WasmError, match=r"^read \.: is a directory$"):
        fetch_guest("file://.")
    with pytest.raises(WasmError, match="is a directory"):
        fetch_guest(tmp_path.as_uri())


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/fail":
            self.send_response(500)
            self.end_headers()
            return
        body = PAYLOAD
        self.send_response(200)
        if self.path == "/gz" and "gzip" in (self.headers.get("Accept-Encoding") or ""):
            body = gzip.compress(PAYLOAD)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_http_plain_and_gzip(server: str) -> None:
    assert fetch_guest(f"{server}/plain", timeout=5) == PAYLOAD
    assert fetch_guest(f"{server}/gz", timeout=5) == PAYLOAD


def test_http_error_status(server: str) -> None:
    url = f"{server}/fail"
    with pytest.raises(WasmError) as info:
        fetch_guest(url, timeout=5)
    assert str(info.value) == f'received 500 status code from "{url}"'


def test_http_unreachable_host_is_an_error() -> None:
    with pytest.raises(WasmError, match=r"get http://127\.0\.0\.1:1/x"):
        fetch_guest("http://127.0.0.1:1/x", timeout=2)
