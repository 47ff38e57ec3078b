"""The wasm plugin host: guests of kube-scheduler-wasm-extension as framework plugins.

Modules: ``config`` (the plugin args schema, WasmError), ``factory`` (registry factory), ``fetch`` (guest URLs), ``cache`` (compile
once, on-disk module cache), ``abi`` (exports, imports, wire decoders), ``encoding``
(protobuf/JSON handed to guests), ``host`` and ``wasi`` (host functions), ``guest``
(instances), ``pool`` (instances per pod), ``plugin`` (WasmPlugin), ``inspect``, and
``_fastpath`` (the thin ctypes boundary to wasmtime).
"""

from wasmsched.wasm.config import WasmArgs, WasmError, WasmPluginConfig
from wasmsched.wasm.factory import WASM_ARGS_KIND, wasm_plugin_factory
from wasmsched.wasm.fetch import fetch_guest
from wasmsched.wasm.host import LogRecord
from wasmsched.wasm.inspect import InspectReport, inspect_wasm
from wasmsched.wasm.plugin import WasmPlugin

__all__ = [
    "WASM_ARGS_KIND",
    "InspectReport",
    "LogRecord",
    "WasmArgs",
    "WasmError",
    "WasmPlugin",
    "WasmPluginConfig",
    "fetch_guest",
    "inspect_wasm",
    "wasm_plugin_factory",
]
