"""wasm/config.py: the one wasm args schema (WasmArgs) through both entry points, and WasmError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wasmsched.config import ConfigError, parse_config
from wasmsched.scheduler.registry import default_registry
from wasmsched.wasm import WasmError, WasmPluginConfig


def test_defaults() -> None:
    cfg = WasmPluginConfig.from_args({"guestURL": "file:///x.wasm"})
    assert cfg == WasmPluginConfig(guest_url="file:///x.wasm")
    assert (cfg.call_timeout_ms, cfg.memory_limit_mib, cfg.log_severity) == (1000, 256, 0)
    assert cfg.args == [] and cfg.guest_config == ""


def test_all_keys() -> None:
    cfg = WasmPluginConfig.from_args(
        {
            "guestURL": "http://h/x.wasm",
            "guestConfig": '{"reverse": true}',
            "logSeverity": 2,
            "Args": ["test", "filter"],
            "callTimeoutMilliseconds": 50,
            "memoryLimitMiB": 16,
            "apiVersion": "ignored",
            "kind": "ignored",
        },
        base_dir=Path("/cfg"),
    )
    assert cfg.guest_config == '{"reverse": true}'
    assert (cfg.log_severity, cfg.args, cfg.call_timeout_ms, cfg.memory_limit_mib) == (
        2,
        ["test", "filter"],
        50,
        16,
    )
    assert cfg.base_dir == Path("/cfg")


def test_structured_guest_config_is_rejected() -> None:
    """Upstream's guestConfig is a Go string: a YAML mapping does not decode into it."""
    with pytest.raises(WasmError, match=r'guestConfig: must be a string: \{"reverse": true\}'):
        WasmPluginConfig.from_args({"guestURL": "file:///x", "guestConfig": {"reverse": True}})


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "wasm: guestURL is required"),
        ({"guestURL": ""}, "wasm: guestURL is required"),
        ({"guestURL": 3}, "guestURL: must be a string: 3"),
        (
            {"guestURL": "file:///x", "logSeverity": "high"},
            'logSeverity: must be an integer: "high"',
        ),
        ({"guestURL": "file:///x", "logSeverity": True}, "logSeverity: must be an integer: true"),
        ({"guestURL": "file:///x", "callTimeoutMilliseconds": 0}, "callTimeoutMilliseconds"),
        ({"guestURL": "file:///x", "memoryLimitMiB": 5000}, "memoryLimitMiB"),
        ({"guestURL": "file:///x", "Args": "test"}, 'Args: must be a list: "test"'),
        ({"guestURL": "file:///x", "guestConfig": 5}, "guestConfig: must be a string: 5"),
        (
            {"guestURL": "file:///x", "guestUrl": "typo"},
            "unknown field guestUrl (did you mean guestURL?)",
        ),
    ],
)
def test_invalid_args_name_the_key(args: dict[str, Any], fragment: str) -> None:
    with pytest.raises(WasmError) as err:
        WasmPluginConfig.from_args(args)
    assert fragment in str(err.value)


# --- one schema, two entry points: identical verdicts ------------------------------------

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
PREFIX = "profiles[0].pluginConfig[0].args"

# (id, args, expected problem after the field path prefix, or None when accepted)
VERDICTS: list[tuple[str, dict[str, Any], str | None]] = [
    ("minimal", {"guestURL": "file:///w.wasm"}, None),
    (
        "mapping-guest-config",
        {"guestURL": "file:///w.wasm", "guestConfig": {"a": 1}},
        '.guestConfig: must be a string: {"a": 1}',
    ),
    ("string-guest-config", {"guestURL": "file:///w.wasm", "guestConfig": '{"a":1}'}, None),
    ("null-guest-config", {"guestURL": "file:///w.wasm", "guestConfig": None}, None),
    ("log-severity-5", {"guestURL": "file:///w.wasm", "logSeverity": 5}, None),
    ("log-severity-negative", {"guestURL": "file:///w.wasm", "logSeverity": -1}, None),
    (
        "log-severity-int32-overflow",
        {"guestURL": "file:///w.wasm", "logSeverity": 2**31},
        ".logSeverity: must be less than or equal to 2147483647: 2147483648",
    ),
    (
        "log-severity-float",
        {"guestURL": "file:///w.wasm", "logSeverity": 1.0},
        ".logSeverity: must be an integer: 1.0",
    ),
    (
        "timeout-one-hour",
        {"guestURL": "file:///w.wasm", "callTimeoutMilliseconds": 3_600_000},
        None,
    ),
    (
        "timeout-4000000",
        {"guestURL": "file:///w.wasm", "callTimeoutMilliseconds": 4_000_000},
        ".callTimeoutMilliseconds: must be less than or equal to 3600000: 4000000",
    ),
    (
        "timeout-zero",
        {"guestURL": "file:///w.wasm", "callTimeoutMilliseconds": 0},
        ".callTimeoutMilliseconds: must be greater than or equal to 1: 0",
    ),
    ("memory-4096", {"guestURL": "file:///w.wasm", "memoryLimitMiB": 4096}, None),
    (
        "memory-4097",
        {"guestURL": "file:///w.wasm", "memoryLimitMiB": 4097},
        ".memoryLimitMiB: must be less than or equal to 4096: 4097",
    ),
    ("api-version-and-kind", {"guestURL": "file:///w.wasm", "apiVersion": "v1", "kind": "X"}, None),
    ("args-list", {"guestURL": "file:///w.wasm", "Args": ["a", "b"]}, None),
    ("args-null", {"guestURL": "file:///w.wasm", "Args": None}, None),
    (
        "args-not-strings",
        {"guestURL": "file:///w.wasm", "Args": ["a", 1]},
        ".Args[1]: must be a string: 1",
    ),
    (
        "args-lowercase",
        {"guestURL": "file:///w.wasm", "args": ["a"]},
        ": unknown field args (did you mean Args?)",
    ),
    (
        "guest-url-typo",
        {"guestURL": "file:///w.wasm", "guestUrl": "x"},
        ": unknown field guestUrl (did you mean guestURL?)",
    ),
    ("unknown-key", {"guestURL": "file:///w.wasm", "color": "blue"}, ': unknown field: "color"'),
    ("url-missing", {"guestConfig": "x"}, ".guestURL: guestURL is required"),
    ("url-empty", {"guestURL": ""}, ".guestURL: guestURL is required"),
    ("url-null", {"guestURL": None}, ".guestURL: guestURL is required"),
    (
        "url-scheme",
        {"guestURL": "ftp://h/w.wasm"},
        '.guestURL: unsupported URL scheme: "ftp://h/w.wasm"',
    ),
    ("url-no-scheme", {"guestURL": "w.wasm"}, '.guestURL: invalid URL: "w.wasm"'),
    ("url-https", {"guestURL": "https://example.com/w.wasm"}, None),
]


def _load(args: dict[str, Any]) -> dict[str, Any]:
    data = {
        **HEADER,
        "profiles": [
            {
                "plugins": {"multiPoint": {"enabled": [{"name": "W"}]}},
                "pluginConfig": [{"name": "W", "args": args}],
            }
        ],
    }
    cfg = parse_config(data, "sched.yaml", Path("/cfg"), default_registry())
    return cfg.profiles[0].plugin_args["W"]


@pytest.mark.parametrize(
    ("args", "problem"), [v[1:] for v in VERDICTS], ids=[v[0] for v in VERDICTS]
)
def test_config_and_host_give_identical_verdicts(args: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        loaded = _load(args)
        direct = WasmPluginConfig.from_args(args)
        from_loaded = WasmPluginConfig.from_args(loaded)
        assert direct == from_loaded  # same values, the same defaults
        return
    with pytest.raises(ConfigError) as by_config:
        _load(args)
    with pytest.raises(WasmError) as by_host:
        WasmPluginConfig.from_args(args)
    assert str(by_config.value) == f"sched.yaml: {PREFIX}{problem}"
    # the host names the same field and problem, without the config file's path
    field_problem = problem.removeprefix(".").removeprefix(": ")
    host = str(by_host.value).removeprefix("wasm: ")
    assert host == field_problem or host == problem.removeprefix(".guestURL: ")


def test_wasm_error_names_url_and_problem() -> None:
    err = WasmError("wasm: guest does not export any plugin functions", "file:///g.wasm")
    assert err.problem == "wasm: guest does not export any plugin functions"
    assert err.url == "file:///g.wasm"
    assert str(err) == "guestURL file:///g.wasm: wasm: guest does not export any plugin functions"
    assert str(WasmError("x")) == "x"
