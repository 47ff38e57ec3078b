"""A compiled guest (module + what its exports and imports mean) and its live instances.

``CompiledGuest.check`` validates a module once per plugin: export signatures (upstream's
scheduler/plugin/guest.go: compileGuest) and imports (only the host modules of upstream's
scheduler/plugin/host.go and WASI exist; an unknown module or name,
or a wrong signature, is a load error naming ``module.name``). ``CompiledGuest.instantiate``
creates one ``Guest``: a ``FastInstance`` wired to the host functions of exactly the
imported names, then ``_start`` if exported (``proc_exit(0)`` inside it counts as success,
as upstream's scheduler/plugin/runtime.go: prepareRuntime treats ``_start``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import wasmtime

from wasmsched.errors import WasmschedError
from wasmsched.wasm._fastpath import FastInstance, GuestTrap, HostFunction, LinkError
from wasmsched.wasm.abi import EXPORT_RESULTS, HOST_IMPORTS, Analysis, analyse_exports
from wasmsched.wasm.abi import format_signature as fmt
from wasmsched.wasm.host import CallContext, PluginEnv, k8s_functions
from wasmsched.wasm.wasi import WASI_IMPORTS, WASI_MODULE, wasi_functions

__all__ = [
    "CallLock",
    "CompiledGuest",
    "Guest",
    "InstantiateError",
    "decorate",
    "import_problems",
    "known_import",
]


class InstantiateError(WasmschedError):
    """A new instance failed; the message is ``wasm: instantiate error: ...``."""


def known_import(module: str, name: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The signature the host provides for ``module.name``, or None if it provides none."""
    if module == WASI_MODULE:
        return WASI_IMPORTS.get(name)
    return HOST_IMPORTS.get((module, name))


def import_problems(imports: list[tuple[str, str, Any]]) -> list[str]:
    problems = []
    for module, name, ty in imports:
        want = known_import(module, name)
        if want is None:
            problems.append(f"wasm: guest imports unknown host function {module}.{name}")
            continue
        got = func_signature(ty)
        if got is None:
            problems.append(
                f"wasm: guest imports {module}.{name} as a {describe_type(ty)}, "
                "but the host provides a function"
            )
        elif got != want:
            problems.append(
                f"wasm: guest imports {module}.{name} with signature {fmt(*got)}, "
                f"but the host provides {fmt(*want)}"
            )
    return problems


@dataclass
class CompiledGuest:
    """A validated module and the instance settings of one plugin."""

    module: wasmtime.Module
    analysis: Analysis
    imports: list[tuple[str, str]]
    memory_limit: int
    timeout_ms: int

    @classmethod
    def check(
        cls, module: wasmtime.Module, *, memory_limit: int, timeout_ms: int
    ) -> tuple[CompiledGuest, list[str]]:
        """The compiled guest and every problem that keeps it from loading."""
        exports = [
            (name, func_signature(ty), isinstance(ty, wasmtime.MemoryType))
            for name, ty in exports_of(module)
        ]
        analysis = analyse_exports(exports)
        imports = module_imports(module)
        problems = list(analysis.problems) + import_problems(imports)
        guest = cls(module, analysis, [(m, n) for m, n, _ in imports], memory_limit, timeout_ms)
        return guest, problems

    def instantiate(self, env: PluginEnv) -> Guest:
        ctx = CallContext(env)
        host: dict[tuple[str, str], HostFunction] = {}
        modules = {m for m, _ in self.imports}
        if modules - {WASI_MODULE}:
            host.update(k8s_functions(ctx))
        if WASI_MODULE in modules:
            host.update(wasi_functions(ctx))
        needed = {key: host[key] for key in self.imports if key in host}
        try:
            inst = FastInstance(
                self.module, needed, memory_limit=self.memory_limit, timeout_ms=self.timeout_ms
            )
        except GuestTrap as trap:
            raise InstantiateError(decorate("instantiate", ctx.take_output(), trap)) from None
        except LinkError as exc:
            raise InstantiateError(f"wasm: instantiate error: {exc}") from None
        ctx.inst = inst
        if self.analysis.has_start:
            try:
                inst.caller("_start", None)()
            except GuestTrap as trap:
                if trap.exit_code != 0:
                    output = ctx.take_output()
                    inst.close()
                    raise InstantiateError(decorate("instantiate", output, trap)) from None
        ctx.clear_inputs()
        ctx.reset_results()
        return Guest(inst, ctx, self.analysis.exports)


def _not_exported() -> int:
    raise LinkError("the guest does not export this function")


def decorate(export: str, output: str, trap: GuestTrap) -> str:
    message = trap.message.rstrip()
    if output:
        return f"wasm: {export} error: {output}\n{message}"
    return f"wasm: {export} error: {message}"


class CallLock:
    """A mutex for one guest whose uncontended acquire and release are a list pop and append.

    Under the GIL ``list.pop`` and ``list.append`` are atomic, and they cost no atomic CPU
    instruction: wrapped around a guest call they measured about 100 ns less than a
    ``threading.Lock``. ``free`` holds one item while the lock is free. A hot path may inline
    ``acquire`` as ``free.pop()``, calling ``wait()`` on IndexError, and ``release`` as
    ``free.append(True)`` then ``wake()`` if ``waiters``. Contended acquires block on a
    condition: a waiter counts itself before it tests ``free`` and a releaser appends before
    it reads ``waiters``, so a release that a waiter missed always notifies it.
    """

    __slots__ = ("_cond", "free", "waiters")

    def __init__(self) -> None:
        self.free = [True]
        self.waiters = 0
        self._cond = threading.Condition(threading.Lock())

    def acquire(self) -> None:
        try:
            self.free.pop()
        except IndexError:
            self.wait()

    def wait(self) -> None:
        """Blocks until the lock is free, then takes it."""
        free = self.free
        cond = self._cond
        with cond:
            self.waiters += 1
            try:
                while True:
                    try:
                        free.pop()
                        return
                    except IndexError:
                        cond.wait()
            finally:
                self.waiters -= 1

    def release(self) -> None:
        self.free.append(True)
        if self.waiters:
            self.wake()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def locked(self) -> bool:
        return not self.free

    def __enter__(self) -> CallLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Guest:
    """One live instance: its fast export callers, per-call context and call lock.

    ``prefilter``, ``filter`` and ``score`` repeat those callers of ``calls`` as attributes,
    for the plugin's hot paths; one the guest does not export raises ``LinkError`` (the
    plugin never calls it). ``filter_each``/``score_each`` are the compiled callers' loops
    over nodes (``Caller.each``), None on the ctypes path or when not exported.
    """

    __slots__ = (
        "calls",
        "ctx",
        "dead",
        "filter",
        "filter_each",
        "inst",
        "lock",
        "prefilter",
        "score",
        "score_each",
    )

    def __init__(self, inst: FastInstance, ctx: CallContext, exports: frozenset[str]) -> None:
        self.inst = inst
        self.ctx = ctx
        self.lock = CallLock()
        self.dead = False
        self.calls: dict[str, Callable[[], int]] = {
            name: inst.caller(name, EXPORT_RESULTS[name]) for name in exports
        }
        self.prefilter = self.calls.get("prefilter", _not_exported)
        self.filter = self.calls.get("filter", _not_exported)
        self.score = self.calls.get("score", _not_exported)
        # The compiled callers' per-node loops (wasm/nodes.py); None on the ctypes path.
        self.filter_each: Callable[..., int] | None = getattr(self.filter, "each", None)
        self.score_each: Callable[..., int] | None = getattr(self.score, "each", None)

    def close(self) -> None:
        self.dead = True
        self.inst.close()


# --- module introspection (slow path: load time and `inspect`) -------------------------


def module_imports(module: wasmtime.Module) -> list[tuple[str, str, Any]]:
    return [(imp.module, imp.name or "", imp.type) for imp in module.imports]


def describe_type(ty: Any) -> str:
    """A short text form of an extern type: ``(i32, i32) -> (i32)``, ``memory``..."""
    if isinstance(ty, wasmtime.FuncType):
        return (
            f"({', '.join(str(p) for p in ty.params)}) -> ({', '.join(str(r) for r in ty.results)})"
        )
    if isinstance(ty, wasmtime.MemoryType):
        return "memory"
    if isinstance(ty, wasmtime.GlobalType):
        return "global"
    if isinstance(ty, wasmtime.TableType):
        return "table"
    return type(ty).__name__


def func_signature(ty: Any) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    if not isinstance(ty, wasmtime.FuncType):
        return None
    return tuple(str(p) for p in ty.params), tuple(str(r) for r in ty.results)


def exports_of(module: wasmtime.Module) -> list[tuple[str, Any]]:
    return [(exp.name, exp.type) for exp in module.exports]
