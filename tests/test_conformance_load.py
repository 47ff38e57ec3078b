"""Conformance: fetching and loading guests (upstream's scheduler/plugin/plugin_test.go).

Upstream's getURL / NewFromConfig / interface-masking tests, with our guests. Where
upstream refuses a combination of exports (its mask table), our host serves exactly what
the exports give (upstream's scheduler/plugin/plugin.go: maskInterfaces).
"""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from guests_build import guest, guest_url
from wasm_support import FakeHandle, Plugins, plugins_fixture
from wasmsched.framework import interfaces as fw
from wasmsched.wasm import (
    WasmError,
    WasmPlugin,
    WasmPluginConfig,
    fetch_guest,
    inspect_wasm,
    wasm_plugin_factory,
)
from wasmsched.wasm.inspect import ENQUEUE_EXTENSIONS

ALL_POINTS = frozenset(
    {
        fw.PRE_FILTER,
        fw.FILTER,
        fw.POST_FILTER,
        fw.PRE_SCORE,
        fw.SCORE,
        fw.RESERVE,
        fw.PERMIT,
        fw.PRE_BIND,
        fw.BIND,
        fw.POST_BIND,
    }
)


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves the built guests: /<name>.wasm plain, /gzip/<name>.wasm gzip-encoded,
    /error -> 500."""

    def do_GET(self) -> None:
        if self.path == "/error":
            self.send_response(500)
            self.end_headers()
            return
        gz = self.path.startswith("/gzip/")
        name = self.path.removeprefix("/gzip/").removeprefix("/").removesuffix(".wasm")
        try:
            body = guest(name).read_bytes()
        except FileNotFoundError:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        if gz:
            body = gzip.compress(body)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


# --- item 1: getURL --------------------------------------------------------------------


def test_fetch_relative_file_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """``file://../x`` is relative to the current directory, as upstream reads it."""
    path = guest("noop_wat")
    monkeypatch.chdir(path.parent)
    assert fetch_guest(f"file://../{path.parent.name}/{path.name}") == path.read_bytes()


def test_fetch_absolute_file_url() -> None:
    path = guest("noop_wat")
    assert fetch_guest(f"file://{path}") == path.read_bytes()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http", "invalid URL: http"),
        ("ldap://foo/bar.wasm", "unsupported URL scheme: ldap"),
        ("c:\\foo.wasm", "unsupported URL scheme: c"),
        ("file://testduta", "open testduta: no such file or directory"),
    ],
)
def test_fetch_errors(url: str, message: str) -> None:
    with pytest.raises(WasmError) as err:
        fetch_guest(url)
    assert err.value.problem == message


@pytest.mark.parametrize("url", ["http:// ", "https:// "])
def test_fetch_malformed_http_url(url: str) -> None:
    with pytest.raises(WasmError) as err:
        fetch_guest(url, timeout=2)
    assert url in str(err.value)


def test_fetch_directory_relative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(guest("noop_wat").parent)
    with pytest.raises(WasmError) as err:
        fetch_guest("file://.")
    assert err.value.problem == "read .: is a directory"


def test_fetch_directory_absolute() -> None:
    folder = guest("noop_wat").parent
    with pytest.raises(WasmError) as err:
        fetch_guest(f"file://{folder}")
    assert err.value.problem == f"read {folder}: is a directory"


@pytest.mark.parametrize("prefix", ["", "/gzip"])
def test_fetch_http(server: str, prefix: str) -> None:
    assert fetch_guest(f"{server}{prefix}/filter.wasm") == guest("filter").read_bytes()


def test_fetch_http_500(server: str) -> None:
    url = f"{server}/error"
    with pytest.raises(WasmError) as err:
        fetch_guest(url)
    assert err.value.problem == f'received 500 status code from "{url}"'


# --- item 2: NewFromConfig ----------------------------------------------------------------


def test_load_from_file(plugins: Plugins) -> None:
    assert plugins.load("filter").extension_points == {fw.PRE_FILTER, fw.FILTER, fw.POST_FILTER}


@pytest.mark.parametrize("prefix", ["", "/gzip"])
def test_load_from_http(server: str, prefix: str) -> None:
    config = WasmPluginConfig(guest_url=f"{server}{prefix}/score.wasm")
    plugin = WasmPlugin("wasm", config, FakeHandle())
    try:
        assert plugin.extension_points == {fw.PRE_FILTER, fw.PRE_SCORE, fw.SCORE}
    finally:
        plugin.close()


def test_missing_guest_url() -> None:
    with pytest.raises(WasmError) as err:
        WasmPluginConfig.from_args({})
    assert err.value.problem == "wasm: guestURL is required"


def test_load_unsupported_scheme() -> None:
    with pytest.raises(WasmError) as err:
        WasmPlugin("wasm", WasmPluginConfig(guest_url="c:\\foo.wasm"), FakeHandle())
    assert "unsupported URL scheme: c" in str(err.value)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("not_plugin", "wasm: guest does not export any plugin functions"),
        (
            "scoreextensions_without_score",
            "wasm: guest exports normalizescore without score; NormalizeScore is only "
            "called for Score plugins",
        ),
    ],
)
def test_load_refused(name: str, problem: str) -> None:
    with pytest.raises(WasmError) as err:
        WasmPlugin("wasm", WasmPluginConfig(guest_url=guest_url(name)), FakeHandle())
    assert err.value.problem == problem


def test_load_panic_on_start() -> None:
    """_start writes "panic!" then traps: creation fails with the guest's output first."""
    with pytest.raises(WasmError) as err:
        WasmPlugin("wasm", WasmPluginConfig(guest_url=guest_url("panic_on_start")), FakeHandle())
    assert "wasm: instantiate error: panic!\n" in err.value.problem


def test_load_start_exit_zero_keeps_instance(plugins: Plugins) -> None:
    """advanced ends _start with proc_exit(0), as upstream's binary does (upstream's
    scheduler/plugin/runtime.go: prepareRuntime): the
    instance stays usable."""
    plugin = plugins.load("advanced")
    assert plugin.extension_points == {fw.PRE_FILTER, fw.PRE_SCORE, fw.SCORE}


def test_load_start_panic_in_cyclestate_args() -> None:
    with pytest.raises(WasmError) as err:
        WasmPlugin(
            "wasm",
            WasmPluginConfig(guest_url=guest_url("cyclestate"), args=["test", "3"]),
            FakeHandle(),
        )
    assert "panic: unsupported count\n" in err.value.problem


# --- item 3: which extension points a guest serves ---------------------------------------


@pytest.mark.parametrize(
    ("name", "points"),
    [
        ("panic_on_filter", {fw.FILTER}),
        ("panic_on_score", {fw.SCORE}),
        ("advanced", {fw.PRE_FILTER, fw.PRE_SCORE, fw.SCORE}),
        ("nodenumber", ALL_POINTS),
        ("cyclestate", ALL_POINTS),
        ("prefilter_from_global", {fw.PRE_FILTER}),
        ("filter_from_global", {fw.FILTER}),
        ("postfilter_from_global", {fw.FILTER, fw.POST_FILTER}),
        ("prescore_from_global", {fw.PRE_SCORE, fw.SCORE}),
        ("scoreextensions_from_global", {fw.SCORE}),
        ("reserve_from_global", {fw.RESERVE}),
        ("permit_from_global", {fw.PERMIT}),
        ("prebind_from_global", {fw.PRE_BIND, fw.BIND}),
        ("postbind_from_global", {fw.BIND, fw.POST_BIND}),
        ("prefilterextensions_from_global", {fw.PRE_FILTER, fw.FILTER}),
        ("bind", {fw.PRE_FILTER, fw.PRE_BIND, fw.BIND, fw.POST_BIND}),
        ("reserve", {fw.PRE_FILTER, fw.RESERVE}),
        ("permit", {fw.PRE_FILTER, fw.PERMIT}),
        ("imagelocality", {fw.PRE_FILTER, fw.SCORE}),
        ("noop_wat", {fw.PRE_FILTER, fw.FILTER, fw.POST_FILTER, fw.SCORE}),
        # combinations upstream refuses or special-cases
        ("prescore_without_score", {fw.PRE_SCORE}),
        ("reserve_permit", {fw.RESERVE, fw.PERMIT}),
        ("prescore_score_only", {fw.PRE_SCORE, fw.SCORE}),
    ],
)
def test_extension_points(plugins: Plugins, name: str, points: set[str]) -> None:
    assert plugins.load(name).extension_points == points


def test_extension_points_decide_framework_calls(plugins: Plugins) -> None:
    """Extension points are declared, so the framework consults them rather than methods."""
    plugin = plugins.load("panic_on_score")
    assert fw.implements(plugin, fw.SCORE)
    assert not fw.implements(plugin, fw.FILTER)


def test_plugin_factory(tmp_path: Path) -> None:
    """PluginFactory with upstream's JSON args (``{"guestURL": ...}``)."""
    factory = wasm_plugin_factory("wasm1")
    plugin = factory({"guestURL": guest_url("panic_on_filter")}, FakeHandle())
    try:
        assert plugin.name == "wasm1"
        assert plugin.extension_points == {fw.FILTER}
    finally:
        plugin.close()
    with pytest.raises(WasmError) as err:
        factory({"guestURL": guest_url("not_plugin")}, FakeHandle())
    assert err.value.problem == "wasm: guest does not export any plugin functions"


# --- inspect_wasm on the conformance guests ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "loadable", "problem"),
    [
        ("nodenumber", True, None),
        ("advanced", True, None),
        ("not_plugin", False, "wasm: guest does not export any plugin functions"),
        (
            "panic_on_start",
            False,
            "failed to create a guest pool: wasm: instantiate error: panic!\n",
        ),
    ],
)
def test_inspect(name: str, loadable: bool, problem: str | None) -> None:
    report = inspect_wasm(guest(name))
    assert report.loadable is loadable
    if problem is None:
        assert report.problems == []
    else:
        assert len(report.problems) == 1 and report.problems[0].startswith(problem)


def test_inspect_lists_imports_and_points() -> None:
    report = inspect_wasm(guest_url("advanced"))
    # advanced exports enqueue: EnqueueExtensions, as abi.md §2.1 has it.
    assert report.extension_points == [ENQUEUE_EXTENSIONS, fw.PRE_FILTER, fw.PRE_SCORE, fw.SCORE]
    modules = {(m, n) for m, n, _ in report.imports}
    assert ("k8s.io/klog", "logs") in modules
    assert ("wasi_snapshot_preview1", "proc_exit") in modules
    assert ("score", "() -> (i64)") in report.exports
