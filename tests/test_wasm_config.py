"""wasm/config.py: pluginConfig args parsing and WasmError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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


def test_structured_guest_config_becomes_json() -> None:
    cfg = WasmPluginConfig.from_args({"guestURL": "file:///x", "guestConfig": {"reverse": True}})
    assert cfg.guest_config == '{"reverse":true}'


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "wasm: guestURL is required"),
        ({"guestURL": ""}, "wasm: guestURL is required"),
        ({"guestURL": 3}, "guestURL must be a string"),
        ({"guestURL": "file:///x", "logSeverity": "high"}, "logSeverity must be an integer"),
        ({"guestURL": "file:///x", "logSeverity": True}, "logSeverity must be an integer"),
        ({"guestURL": "file:///x", "callTimeoutMilliseconds": 0}, "callTimeoutMilliseconds"),
        ({"guestURL": "file:///x", "memoryLimitMiB": 5000}, "memoryLimitMiB"),
        ({"guestURL": "file:///x", "Args": "test"}, "Args must be a list of strings"),
        ({"guestURL": "file:///x", "guestConfig": 5}, "guestConfig must be a string"),
        ({"guestURL": "file:///x", "guestUrl": "typo"}, "unknown plugin arg 'guestUrl'"),
    ],
)
def test_invalid_args_name_the_key(args: dict[str, Any], fragment: str) -> None:
    with pytest.raises(WasmError, match=fragment.replace("(", r"\(")):
        WasmPluginConfig.from_args(args)


def test_wasm_error_names_url_and_problem() -> None:
    err = WasmError("wasm: guest does not export any plugin functions", "file:///g.wasm")
    assert err.problem == "wasm: guest does not export any plugin functions"
    assert err.url == "file:///g.wasm"
    assert str(err) == "file:///g.wasm: wasm: guest does not export any plugin functions"
    assert str(WasmError("x")) == "x"
