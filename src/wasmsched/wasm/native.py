"""Loading the compiled call path (``wasmsched.wasm._native``, built from native/_native.c).

The extension links nothing: the wasmtime C functions it calls are resolved here, from the
shared library wasmtime-py loaded, and handed to it (``configure``). When it was not built,
or ``WASMSCHED_WASM_NATIVE=0``, instances use the ctypes path of ``_fastpath``.
"""

from __future__ import annotations

import ctypes
import importlib
import os
from collections.abc import Callable
from ctypes import c_void_p, cast
from typing import Any

from wasmtime import _ffi as ffi

__all__ = [
    "LOGGED",
    "NATIVE_ENV",
    "NATIVE_LOG",
    "NATIVE_LOG_GATE",
    "NATIVE_NODE_NAME",
    "configure_native_logs",
    "native_available",
    "native_calls_held",
    "native_enabled",
    "native_module",
    "start_native_watchdog",
    "untrack_class",
]


def _address(name: str) -> int:
    return cast(getattr(ffi.dll, name), c_void_p).value or 0


def _load_native() -> Any:
    """The compiled path (``wasmsched.wasm._native``), or None when it was not built."""
    if ctypes.sizeof(ffi.wasmtime_val_raw_t) != 16:
        return None  # native/wasmtime_decls.h assumes wasmtime's 16-byte value slots
    try:
        mod = importlib.import_module("wasmsched.wasm._native")
        mod.configure(
            _address("wasmtime_func_call_unchecked"),
            _address("wasmtime_trap_new"),
            _address("wasmtime_memory_data_size"),
        )
    except (ImportError, ValueError, AttributeError):
        return None
    return mod


_native: Any = _load_native()


def native_module() -> Any:
    """The loaded extension module, or None."""
    return _native


NATIVE_ENV = "WASMSCHED_WASM_NATIVE"
"""Set to ``0`` to use the ctypes path even when the compiled extension is present."""

NATIVE_NODE_NAME = 1
"""``HostFunction.native`` kind: a ``(buf, limit) -> len`` getter of ``state.node_name``."""
NATIVE_LOG_GATE = 2
"""``HostFunction.native`` kind: a klog import whose record is dropped without entering
Python when its (signed) severity is below ``state.severity``."""
NATIVE_LOG = 3
"""``HostFunction.native`` kind: ``klog.log``/``klog.logs`` with ``state`` the CallContext:
the gate above, and a record at or above the severity charged, built and retained in C
(see native/_native.c: log_fast); the Python function runs in every unusual case."""
LOGGED = 2
"""``CallContext.dirty`` after a call whose only result is the host byte count a record
charged (set by the compiled klog case; truthy, so Python readers reset as for True)."""


def configure_native_logs(
    record_cls: type, ctx_cls: type, env_cls: type, limits: tuple[int, int, int, int, int]
) -> None:
    """Gives the compiled klog case the record, call-context and plugin-env classes (whose
    ``__slots__`` it reads and writes directly) and the budgets it checks (record, call,
    cycle bytes; retained records and bytes); a no-op without the extension."""
    if _native is not None:
        _native.configure_logs(record_cls, ctx_cls, env_cls, *limits)


def start_native_watchdog(engine_ptr: int, tick_seconds: float) -> bool:
    """Starts the compiled extension's epoch watchdog (native/_native.c: it advances the
    engine's epoch while an export call keeps the GIL); whether it runs (False without the
    extension, or when its thread could not start)."""
    if _native is None:
        return False
    return bool(
        _native.configure_watchdog(
            _address("wasmtime_engine_increment_epoch"), engine_ptr, tick_seconds
        )
    )


def native_calls_held() -> Callable[[], bool] | None:
    """The extension's ``calls_held`` (whether an export call holds the GIL while the
    watchdog ticks for it: the Python ticker then leaves the engine's epoch alone), None
    without the extension."""
    if _native is None:
        return None
    held: Callable[[], bool] = _native.calls_held
    return held


def untrack_class(cls: type) -> bool:
    """Makes a plain ``__slots__`` class's instances unknown to the cyclic collector
    (native/_native.c: untrack_class; for a class whose instances can be in no reference
    cycle, called right after its class statement); False when not done (no extension, or
    a class or Python version it is not known to be right for)."""
    return _native is not None and bool(_native.untrack_class(cls))


def native_available() -> bool:
    """Whether the compiled extension was built and loaded."""
    return _native is not None


def native_enabled() -> bool:
    """Whether new instances use the compiled path (available and not disabled by
    ``WASMSCHED_WASM_NATIVE=0``); read when an instance is created."""
    return _native is not None and os.environ.get(NATIVE_ENV, "1") != "0"
