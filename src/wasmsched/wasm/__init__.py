"""The wasm plugin host: guests of kube-scheduler-wasm-extension as framework plugins.

Modules: ``config`` (plugin args, WasmError), ``fetch`` (guest URLs), ``cache`` (compile
once, on-disk module cache), ``abi`` (exports, imports, wire decoders), ``encoding``
(protobuf/JSON handed to guests), ``host`` and ``wasi`` (host functions), ``guest``
(instances), ``pool`` (instances per pod), ``plugin`` (WasmPlugin), ``inspect``, and
``_fastpath`` (the thin ctypes boundary to wasmtime).
"""

from wasmsched.wasm.config import WasmError, WasmPluginConfig
from wasmsched.wasm.fetch import fetch_guest
from wasmsched.wasm.host import LogRecord
from wasmsched.wasm.inspect import InspectReport, inspect_wasm
from wasmsched.wasm.plugin import WasmPlugin, wasm_plugin_factory

__all__ = [
    "InspectReport",
    "LogRecord",
    "WasmError",
    "WasmPlugin",
    "WasmPluginConfig",
    "fetch_guest",
    "inspect_wasm",
    "wasm_plugin_factory",
]
