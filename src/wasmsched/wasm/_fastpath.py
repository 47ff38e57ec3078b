"""The fast boundary to wasmtime: unchecked export calls, raw host callbacks, direct memory.

wasmtime's public Python API costs tens of microseconds per call because it converts every
value through ``Val`` objects. This module talks to the same C library through private
ctypes function pointers (``argtypes = None``, arguments converted once, at construction):

* exports run through ``wasmtime_func_call_unchecked`` with one pre-allocated
  ``wasmtime_val_raw_t`` slot; every argument is a pre-built ``byref`` object (the store
  context too, as a ``byref`` to a byte at its address) or a small int, the kinds ctypes
  passes without allocating;
* host functions are ``wasmtime_func_new_unchecked`` callbacks whose arguments are read
  straight from the raw value array; a Python exception inside one becomes a wasm trap
  (it never unwinds through C) and is re-raised, as the cause of a ``GuestTrap``, when the
  export call returns;
* guest memory is read and written with ``string_at``/``memmove`` at ``base + offset``.
  The engine is configured with ``memory_may_move = False`` (and wasmtime's default 4 GiB
  reservation on 64-bit hosts), so a memory's base address never changes: it is read once
  per instance with ``wasmtime_memory_data``; only the size is re-read, and only when an
  access falls beyond the last known size.

Ownership is explicit: a ``FastInstance`` owns exactly one ``Store`` and everything created
in it (host functions, the instance, its exports). Nothing of one instance is ever passed to
another (wasmtime aborts the process on a store mismatch), and calls after ``close`` raise
instead of touching freed memory. One ``FastInstance`` must not be used from two threads at
once; the caller serialises (``guest.Guest`` holds a lock around every call).

Limits: one process-wide engine with epoch interruption; a daemon thread advances the epoch
every ``TICK_SECONDS``, so a guest that runs longer than its timeout traps with an interrupt
(wasm/epoch.py: on the compiled path that thread is the extension's C watchdog). Setting a
store's deadline is a C call, so a call re-arms it only when the epoch moved since the
instance last armed it: the Python ticker bumps a Python counter just before the engine's
epoch, and a call that sees the counter unchanged knows the deadline armed then still lies
ahead by at least the timeout (the deadline is one tick longer than ``deadline_ticks`` to
cover a tick in flight while arming). Host functions run outside wasm, where no epoch check
happens: each host callback therefore checks, after its work, whether the call's deadline
has passed (the epoch count minus the one the deadline was armed at), and traps if so, so a
call whose host work overran fails whatever the guest would return. ``Store.set_limits``
caps one memory, the tables (count and elements) and the instance count
(``budget.store_limits``).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.metadata
import platform
import threading
from collections.abc import Callable, Mapping
from ctypes import (
    POINTER,
    addressof,
    byref,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
    cast,
)
from dataclasses import dataclass
from typing import Any

import wasmtime
from wasmtime import _ffi as ffi

from wasmsched.errors import WasmschedError
from wasmsched.wasm.budget import store_limits
from wasmsched.wasm.epoch import (
    TICK_SECONDS,
    deadline_ticks,
    keep_epoch,
    python_ticks,
    release_python_ticker,
)
from wasmsched.wasm.native import (
    LOGGED,
    NATIVE_ENV,
    NATIVE_LOG,
    NATIVE_LOG_GATE,
    NATIVE_NODE_NAME,
    configure_native_logs,
    native_available,
    native_enabled,
    native_module,
)

__all__ = [
    "LOGGED",
    "NATIVE_ENV",
    "NATIVE_LOG",
    "NATIVE_LOG_GATE",
    "NATIVE_NODE_NAME",
    "TICK_SECONDS",
    "FastInstance",
    "GuestTrap",
    "HostDeadlineError",
    "HostFunction",
    "LinkError",
    "ProcExit",
    "configure_native_logs",
    "deadline_ticks",
    "engine",
    "engine_fingerprint",
    "native_available",
    "native_enabled",
    "wasmtime_version",
]

_ENGINE_SETTINGS: tuple[tuple[str, Any], ...] = (
    ("epoch_interruption", True),
    ("memory_may_move", False),
)

_INTERRUPT = 10  # WASMTIME_TRAP_CODE_INTERRUPT
_M32 = 0xFFFFFFFF


def _raw(name: str, restype: Any) -> Any:
    """A private function pointer, so changing argtypes never affects wasmtime-py's own."""
    fn = ffi.dll._FuncPtr((name, ffi.dll))
    fn.argtypes = None  # type: ignore[assignment]
    fn.restype = restype
    return fn


_call_unchecked = _raw("wasmtime_func_call_unchecked", c_void_p)
_set_deadline = _raw("wasmtime_context_set_epoch_deadline", None)
_func_new_unchecked = _raw("wasmtime_func_new_unchecked", None)
_instance_new = _raw("wasmtime_instance_new", c_void_p)
_export_get = _raw("wasmtime_instance_export_get", ctypes.c_bool)
_memory_data = _raw("wasmtime_memory_data", c_void_p)
_memory_data_size = _raw("wasmtime_memory_data_size", c_size_t)
_trap_new = _raw("wasmtime_trap_new", c_void_p)


_CALLBACK = ctypes.CFUNCTYPE(c_size_t, c_void_p, c_void_p, c_void_p, c_size_t)
_NO_FINALIZER = cast(0, ctypes.CFUNCTYPE(None, c_void_p))
_U32x2 = c_uint32 * 2
_EXTERN_FUNC = 0
_EXTERN_MEMORY = 3

# --- engine -------------------------------------------------------------------------------

_engine: wasmtime.Engine | None = None
_engine_lock = threading.Lock()


def wasmtime_version() -> str:
    return importlib.metadata.version("wasmtime")


def engine() -> wasmtime.Engine:
    """The process-wide engine (modules are only valid in the engine that compiled them)."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                config = wasmtime.Config()
                for attr, value in _ENGINE_SETTINGS:
                    setattr(config, attr, value)
                _engine = wasmtime.Engine(config)
    return _engine


def engine_fingerprint() -> str:
    """What a serialized module depends on: wasmtime version, host and engine settings."""
    settings = ",".join(f"{k}={v}" for k, v in _ENGINE_SETTINGS)
    return f"wasmtime-{wasmtime_version()}|{platform.system()}-{platform.machine()}|{settings}"


# --- errors --------------------------------------------------------------------------------


class GuestTrap(WasmschedError):
    """A call (or instantiation) that trapped; ``message`` is wasmtime's text.

    ``exit_code`` is set when the guest called ``proc_exit`` (raised by a host function as
    ``ProcExit``), ``interrupted`` when the epoch deadline stopped it.
    """

    def __init__(
        self,
        message: str,
        *,
        trap_code: int | None = None,
        exit_code: int | None = None,
        interrupted: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.trap_code = trap_code
        self.exit_code = exit_code
        self.interrupted = interrupted


class ProcExit(WasmschedError):
    """Raised by a host function (WASI ``proc_exit``) to stop the guest with an exit code."""

    def __init__(self, code: int) -> None:
        super().__init__(f"exit status {code}")
        self.code = code


class HostDeadlineError(WasmschedError):
    """A host function finished after its call's deadline (raised as the call's trap)."""


class LinkError(WasmschedError):
    """An import the host cannot satisfy, or an instantiation that failed before running."""


# --- host functions ------------------------------------------------------------------------

_VALTYPES = {"i32": wasmtime.ValType.i32, "i64": wasmtime.ValType.i64}
_functypes: dict[tuple[tuple[str, ...], tuple[str, ...]], wasmtime.FuncType] = {}


def _functype(params: tuple[str, ...], results: tuple[str, ...]) -> wasmtime.FuncType:
    key = (params, results)
    ty = _functypes.get(key)
    if ty is None:
        ty = wasmtime.FuncType([_VALTYPES[p]() for p in params], [_VALTYPES[r]() for r in results])
        _functypes[key] = ty  # kept for the process lifetime: cheap and shared
    return ty


@dataclass(frozen=True, slots=True)
class HostFunction:
    """A host import: wasm signature and a Python implementation.

    ``impl`` receives the arguments as non-negative ints (i32 as u32, i64 as u64) and
    returns an int for a function with one result (truncated to the result type) or None.
    """

    params: tuple[str, ...]
    results: tuple[str, ...]
    impl: Callable[..., int | None]
    native: tuple[int, Any] | None = None
    """``(kind, state)`` for a case the compiled path runs without calling ``impl``
    (``NATIVE_NODE_NAME``, ``NATIVE_LOG_GATE``); it falls back to ``impl`` otherwise."""

    def signature(self) -> str:
        return f"({', '.join(self.params)}) -> ({', '.join(self.results)})"


def _reader(params: tuple[str, ...]) -> Callable[[int], tuple[int, ...]]:
    """Decodes the raw argument array (16 bytes per value) into ints."""
    n = len(params)
    if all(p == "i32" for p in params):
        arr = c_uint32 * (4 * max(n, 1))
        if n == 1:
            return lambda a: (arr.from_address(a)[0],)
        if n == 2:

            def read2(a: int) -> tuple[int, ...]:
                v = arr.from_address(a)
                return v[0], v[4]

            return read2
        if n == 4:

            def read4(a: int) -> tuple[int, ...]:
                v = arr.from_address(a)
                return v[0], v[4], v[8], v[12]

            return read4
        return lambda a: tuple(arr.from_address(a)[: 4 * n : 4])
    kinds = tuple(p == "i64" for p in params)
    arr64 = c_uint64 * (2 * n)

    def read_mixed(addr: int) -> tuple[int, ...]:
        view = arr64.from_address(addr)
        return tuple(view[2 * i] if wide else view[2 * i] & _M32 for i, wide in enumerate(kinds))

    return read_mixed


# --- instances -----------------------------------------------------------------------------


class FastInstance:
    """One wasm instance in its own store, with fast export callers and memory access."""

    def __init__(
        self,
        module: wasmtime.Module,
        host: Mapping[tuple[str, str], HostFunction],
        *,
        memory_limit: int,
        timeout_ms: int,
        memory_export: str = "memory",
    ) -> None:
        self._native = native_module() if native_enabled() else None
        self._ticker_user = False
        self._closed = False
        self._pending: BaseException | None = None
        self._keep: list[Any] = []  # callbacks and func structs referenced by the store
        self._hosts: list[Any] = []  # the compiled path's host function envs
        self.timeout_ms = timeout_ms
        self._deadline = c_uint64(deadline_ticks(timeout_ms) + 1)  # +1: see the module doc
        # The epoch count when the deadline was last armed; None forces the next call to arm
        # it (after a failed call, and for good once closed).
        # Then the native watchdog's count when a compiled call armed it (caller_call).
        self._armed: list[int | None] = [None, None]
        self._store = wasmtime.Store(engine())
        self._store.set_limits(**store_limits(memory_limit))
        self._ctx = c_void_p(cast(self._store._context(), c_void_p).value)
        # The context pointer as a ready-made argument: a byref object passes the address of
        # its target, here the context itself, and ctypes converts it without allocating.
        self._ctx_arg = byref(ctypes.c_char.from_address(self._ctx.value or 0))
        self._trap = c_void_p()
        self._trap_ref = byref(self._trap)
        self._vals = (ffi.wasmtime_val_raw_t * 1)()
        self._vals_ref = byref(self._vals)
        self._i32 = c_int32.from_address(addressof(self._vals))
        self._i64 = c_int64.from_address(addressof(self._vals))
        self._memory: Any = None
        self._base = 0
        self._size = 0
        self._ticker_user = keep_epoch(engine(), self._native is not None)
        try:
            self._instantiate(module, host, memory_export)
        except BaseException:
            self.close()  # frees the store and whatever was created in it
            raise

    def _instantiate(
        self,
        module: wasmtime.Module,
        host: Mapping[tuple[str, str], HostFunction],
        memory_export: str,
    ) -> None:
        imports = module.imports
        externs = (ffi.wasmtime_extern_t * max(1, len(imports)))()
        for i, imp in enumerate(imports):
            key = (imp.module, imp.name or "")
            fn = host.get(key)
            if fn is None or not isinstance(imp.type, wasmtime.FuncType):
                raise LinkError(f"unknown import {key[0]}.{key[1]}")
            func = ffi.wasmtime_func_t()
            ty = _functype(fn.params, fn.results)
            if self._native is not None:
                env = self._native_host(key, fn)
                _func_new_unchecked(
                    self._ctx,
                    cast(ty.ptr(), c_void_p),
                    c_void_p(self._native.TRAMPOLINE),
                    c_void_p(env.env()),
                    _NO_FINALIZER,
                    byref(func),
                )
                self._hosts.append(env)
            else:
                callback = _CALLBACK(self._callback(key, fn))
                _func_new_unchecked(
                    self._ctx, cast(ty.ptr(), c_void_p), callback, None, _NO_FINALIZER, byref(func)
                )
                self._keep.append(callback)
            self._keep.append(func)
            externs[i].kind = _EXTERN_FUNC  # type: ignore[assignment]
            externs[i].of.func = func

        self._instance = ffi.wasmtime_instance_t()
        _set_deadline(self._ctx, self._deadline)
        err = _instance_new(
            self._ctx,
            cast(module.ptr(), c_void_p),
            externs,
            c_size_t(len(imports)),
            byref(self._instance),
            self._trap_ref,
        )
        if err or self._trap.value:
            raise self._failure(err)

        item = self._export(memory_export)
        if item is not None and item.kind == _EXTERN_MEMORY:
            self._memory = item.of.memory
            self._memory_ref = byref(self._memory)
            self._base = _memory_data(self._ctx, self._memory_ref) or 0
            self._size = _memory_data_size(self._ctx, self._memory_ref)
            for env in self._hosts:
                env.set_memory(self._ctx.value, addressof(self._memory), self._base, self._size)

    # -- exports --

    def _export(self, name: str) -> Any:
        item = ffi.wasmtime_extern_t()
        raw = name.encode()
        if not _export_get(self._ctx, byref(self._instance), raw, c_size_t(len(raw)), byref(item)):
            return None
        self._keep.append(item)
        return item

    def caller(self, name: str, result: str | None) -> Callable[[], int]:
        """A zero-argument caller for export ``name`` returning ``result`` ('i32', 'i64', None).

        The returned closure raises ``GuestTrap`` on a trap and returns 0 for ``() -> ()``.
        """
        item = self._export(name)
        if item is None or item.kind != _EXTERN_FUNC:
            raise LinkError(f"guest has no function export {name!r}")
        if self._native is not None:
            caller: Callable[[], int] = self._native.Caller(
                self._ctx.value,
                addressof(item.of.func),
                0 if result is None else 1,
                result == "i64",
                self._armed,
                python_ticks,
                self._arm,
                self._failure,
                addressof(self._trap),
                item,
            )
            return caller
        func_ref = byref(item.of.func)
        ctx, vals, trap, trap_ref = self._ctx_arg, self._vals_ref, self._trap, self._trap_ref
        # A size_t passed as a Python int: libffi widens it to the full register.
        count = 0 if result is None else 1
        view = self._i64 if result == "i64" else self._i32
        call, arm, failure = _call_unchecked, self._arm, self._failure
        armed, epoch = self._armed, python_ticks

        def call_export() -> int:
            if armed[0] is not epoch[0]:
                arm()
            err = call(ctx, func_ref, vals, count, trap_ref)
            if err or trap.value:
                raise failure(err)
            return view.value

        def call_void() -> int:
            if armed[0] is not epoch[0]:
                arm()
            err = call(ctx, func_ref, vals, count, trap_ref)
            if err or trap.value:
                raise failure(err)
            return 0

        return call_void if result is None else call_export

    def _arm(self) -> None:
        """Sets the store's deadline (the epoch moved, or the last call failed)."""
        if self._closed:
            raise GuestTrap("instance is closed")
        # Read first: while the count stays ``now`` the engine is at most one tick past the
        # epoch this deadline counts from, which the extra tick of ``_deadline`` covers.
        now = python_ticks[0]
        _set_deadline(self._ctx, self._deadline)
        self._armed[0] = now

    def _failure(self, err: int | None) -> BaseException:
        """Turns the error or trap of a failed call into an exception and frees it."""
        self._armed[0] = None  # an interrupt leaves the deadline passed: re-arm next call
        code: int | None = None
        if err:
            error = wasmtime.WasmtimeError._from_ptr(cast(err, POINTER(ffi.wasmtime_error_t)))
            message = str(error)
            del error
            if self._trap.value:  # not expected alongside an error; free it all the same
                wasmtime.Trap._from_ptr(cast(self._trap.value, POINTER(ffi.wasm_trap_t)))
                self._trap.value = None
        else:
            trap = wasmtime.Trap._from_ptr(cast(self._trap.value or 0, POINTER(ffi.wasm_trap_t)))
            self._trap.value = None
            message = trap.message
            tc = trap.trap_code
            code = None if tc is None else tc.value
            del trap
        pending, self._pending = self._pending, None
        if isinstance(pending, ProcExit):
            return GuestTrap(message, exit_code=pending.code)
        if pending is not None and not isinstance(pending, Exception):
            return pending  # KeyboardInterrupt, SystemExit: not the guest's fault
        interrupted = code == _INTERRUPT or isinstance(pending, HostDeadlineError)
        if code == _INTERRUPT:
            message = f"{message.rstrip()}\ndeadline of {self.timeout_ms} ms exceeded"
        exc = GuestTrap(message, trap_code=code, interrupted=interrupted)
        exc.__cause__ = pending
        return exc

    # -- host callbacks --

    def _native_host(self, key: tuple[str, str], fn: HostFunction) -> Any:
        """The compiled path's env for one host function (see native/_native.c)."""
        assert self._native is not None
        wide_mask = sum(1 << i for i, p in enumerate(fn.params) if p == "i64")
        result = {(): 0, ("i32",): 1, ("i64",): 2}[fn.results]
        kind, state = fn.native if fn.native is not None else (0, None)
        return self._native.Host(
            fn.impl,
            len(fn.params),
            wide_mask,
            result,
            kind,
            f"{key[0]}.{key[1]}",
            self._trap_for,
            self._overrun,
            self._armed,
            python_ticks,
            deadline_ticks(self.timeout_ms),
            state,
        )

    def _callback(self, key: tuple[str, str], fn: HostFunction) -> Callable[..., int]:
        impl = fn.impl
        read = _reader(fn.params)
        n = len(fn.params)
        wide = fn.results == ("i64",)
        has_result = bool(fn.results)
        trap_for = self._trap_for
        label = f"{key[0]}.{key[1]}"
        armed, epoch = self._armed, python_ticks
        # ticks the deadline allows (the armed deadline is one more, see the module doc)
        allowed = deadline_ticks(self.timeout_ms)
        overrun = self._overrun

        if not has_result:

            def cb_void(_env: int, _caller: int, args: int, _n: int) -> int:
                try:
                    impl(*read(args)) if n else impl()
                    start = armed[0]
                    if start is not None and epoch[0] - start > allowed:
                        return trap_for(label, overrun())
                    return 0
                except BaseException as exc:  # never unwind through C
                    return trap_for(label, exc)

            return cb_void

        def cb_result(_env: int, _caller: int, args: int, _n: int) -> int:
            try:
                r = (impl(*read(args)) if n else impl()) or 0
                start = armed[0]
                if start is not None and epoch[0] - start > allowed:
                    return trap_for(label, overrun())
                if wide:
                    c_uint64.from_address(args).value = r & 0xFFFFFFFFFFFFFFFF
                else:
                    out = _U32x2.from_address(args)
                    out[0] = r & _M32
                    out[1] = 0
                return 0
            except BaseException as exc:  # never unwind through C
                return trap_for(label, exc)

        return cb_result

    def _overrun(self) -> HostDeadlineError:
        return HostDeadlineError(
            f"deadline of {self.timeout_ms} ms exceeded (host time counts against the call)"
        )

    def _trap_for(self, label: str, exc: BaseException) -> int:
        if self._pending is None:
            self._pending = exc
        if isinstance(exc, ProcExit):
            text = f"exit status {exc.code}"
        else:
            text = f"host function {label} failed: {exc}"
        raw = text.encode("utf-8", "replace")
        return _trap_new(raw, c_size_t(len(raw))) or 0

    # -- memory --

    def memory_size(self) -> int:
        if self._memory is None or self._closed:
            return 0
        self._size = _memory_data_size(self._ctx, self._memory_ref)
        return self._size

    def _fits(self, end: int) -> bool:
        return end <= self._size or end <= self.memory_size()

    def read(self, ptr: int, n: int) -> bytes | None:
        """``n`` bytes at ``ptr``, or None when out of bounds."""
        if n == 0:
            return b""
        if not self._fits(ptr + n):
            return None
        return ctypes.string_at(self._base + ptr, n)

    def write(self, ptr: int, data: bytes) -> bool:
        """Copies ``data`` to ``ptr``; False (nothing written) when out of bounds."""
        n = len(data)
        if n and not self._fits(ptr + n):
            return False
        ctypes.memmove(self._base + ptr, data, n)
        return True

    def fill(self, ptr: int, value: int, n: int) -> bool:
        if n and not self._fits(ptr + n):
            return False
        ctypes.memset(self._base + ptr, value, n)
        return True

    def memory_base(self) -> int:
        """The (stable) host address of linear memory, for tests."""
        return self._base

    # -- lifecycle --

    @property
    def store(self) -> wasmtime.Store:
        """The owning store, for slow-path use with wasmtime's public API (tests)."""
        return self._store

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._armed[0] = None  # every caller now takes the checking path and raises
            self._memory = None  # memory accessors now see an empty memory
            self._size = 0
            for env in self._hosts:
                env.detach()
            self._store.close()
            self._keep.clear()
            self._hosts.clear()
            if self._ticker_user:
                self._ticker_user = False
                release_python_ticker()
