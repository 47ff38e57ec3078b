"""Our own ``wasi_snapshot_preview1``: just enough WASI for TinyGo and wasi-libc guests.

wasmtime's WASI cannot hand back what a guest printed during one call, which the error
messages need, so these are plain host functions on the instance's CallContext (upstream uses wazero's
wasi_snapshot_preview1, scheduler/plugin/runtime.go: prepareRuntime):

* ``args_*`` from the plugin's ``Args``; no environment; no preopened directories
  (``fd_prestat_get`` answers EBADF, which ends wasi-libc's preopen scan);
* fd 0 reads EOF; fds 1 and 2 append to one in-memory buffer per instance (at most
  ``budget.OUTPUT_BYTES`` per call, in at most ``budget.MAX_IOVECS`` iovecs per write,
  checked before copying: more fails the call), used to decorate errors and cleared after
  every call; fds 0-2 report
  themselves as character devices without seek rights, so wasi-libc line-buffers stdout;
  every other fd is EBADF;
* deterministic time and randomness: each ``clock_time_get`` read advances that clock by
  1 ms (realtime starts at 2022-01-01T00:00:00Z, monotonic at 0), ``poll_oneoff`` returns
  at once, ``random_get`` draws from a PRNG with a fixed seed per instance;
* ``proc_exit`` stops the guest (exit 0 during ``_start`` means "initialised", as upstream's
  runtime.go: prepareRuntime).

Every preview1 function exists, so no guest fails to link merely for importing one; those
that need a filesystem, sockets or signals answer EBADF, ENOTSUP or ENOSYS.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from wasmsched.wasm import budget
from wasmsched.wasm._fastpath import HostFunction, ProcExit
from wasmsched.wasm.host import CallContext

__all__ = ["WASI_IMPORTS", "WASI_MODULE", "wasi_functions"]

WASI_MODULE = "wasi_snapshot_preview1"

ESUCCESS, EBADF, EFAULT, EINVAL = 0, 8, 21, 28
ENOSYS, ENOTSOCK, ENOTSUP, ESPIPE = 52, 57, 58, 70

_REALTIME_BASE_NS = 1_640_995_200 * 1_000_000_000
_MS = 1_000_000
_FILETYPE_CHARACTER_DEVICE = 2
_RIGHT_FD_READ = 1 << 1
_RIGHT_FD_WRITE = 1 << 6

_I, _L = "i32", "i64"


def _s(params: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Signature from a compact string: 'i' = i32, 'L' = i64; every function returns errno."""
    return tuple(_L if c == "L" else _I for c in params), (_I,)


WASI_IMPORTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "args_get": _s("ii"),
    "args_sizes_get": _s("ii"),
    "environ_get": _s("ii"),
    "environ_sizes_get": _s("ii"),
    "clock_res_get": _s("ii"),
    "clock_time_get": _s("iLi"),
    "fd_advise": _s("iLLi"),
    "fd_allocate": _s("iLL"),
    "fd_close": _s("i"),
    "fd_datasync": _s("i"),
    "fd_fdstat_get": _s("ii"),
    "fd_fdstat_set_flags": _s("ii"),
    "fd_fdstat_set_rights": _s("iLL"),
    "fd_filestat_get": _s("ii"),
    "fd_filestat_set_size": _s("iL"),
    "fd_filestat_set_times": _s("iLLi"),
    "fd_pread": _s("iiiLi"),
    "fd_prestat_get": _s("ii"),
    "fd_prestat_dir_name": _s("iii"),
    "fd_pwrite": _s("iiiLi"),
    "fd_read": _s("iiii"),
    "fd_readdir": _s("iiiLi"),
    "fd_renumber": _s("ii"),
    "fd_seek": _s("iLii"),
    "fd_sync": _s("i"),
    "fd_tell": _s("ii"),
    "fd_write": _s("iiii"),
    "path_create_directory": _s("iii"),
    "path_filestat_get": _s("iiiii"),
    "path_filestat_set_times": _s("iiiiLLi"),
    "path_link": _s("iiiiiii"),
    "path_open": _s("iiiiiLLii"),
    "path_readlink": _s("iiiiii"),
    "path_remove_directory": _s("iii"),
    "path_rename": _s("iiiiii"),
    "path_symlink": _s("iiiii"),
    "path_unlink_file": _s("iii"),
    "poll_oneoff": _s("iiii"),
    "proc_exit": ((_I,), ()),
    "proc_raise": _s("i"),
    "sched_yield": _s(""),
    "random_get": _s("ii"),
    "sock_accept": _s("iii"),
    "sock_recv": _s("iiiiii"),
    "sock_send": _s("iiiii"),
    "sock_shutdown": _s("ii"),
}

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def wasi_functions(ctx: CallContext) -> dict[tuple[str, str], HostFunction]:
    """Every preview1 function, bound to one instance's context."""

    def write(ptr: int, data: bytes) -> bool:
        inst = ctx.inst
        return inst is not None and inst.write(ptr, data)

    def read(ptr: int, n: int) -> bytes | None:
        inst = ctx.inst
        return None if inst is None else inst.read(ptr, n)

    def args_sizes_get(argc_ptr: int, size_ptr: int) -> int:
        args = ctx.env.args
        ok = write(argc_ptr, _U32.pack(len(args))) and write(
            size_ptr, _U32.pack(sum(len(a) + 1 for a in args))
        )
        return ESUCCESS if ok else EFAULT

    def args_get(argv: int, argv_buf: int) -> int:
        args = ctx.env.args
        pointers, offset = [], argv_buf
        for arg in args:
            pointers.append(offset)
            offset += len(arg) + 1
        blob = b"".join(a + b"\0" for a in args)
        ok = write(argv, struct.pack(f"<{len(args)}I", *pointers)) and write(argv_buf, blob)
        return ESUCCESS if ok else EFAULT

    def environ_sizes_get(count_ptr: int, size_ptr: int) -> int:
        ok = write(count_ptr, _U32.pack(0)) and write(size_ptr, _U32.pack(0))
        return ESUCCESS if ok else EFAULT

    def environ_get(_environ: int, _buf: int) -> int:
        return ESUCCESS

    def clock_res_get(clock: int, ptr: int) -> int:
        if clock > 3:
            return EINVAL
        return ESUCCESS if write(ptr, _U64.pack(1)) else EFAULT

    def clock_time_get(clock: int, _precision: int, ptr: int) -> int:
        if clock == 0:
            ctx.clock_real += 1
            now = _REALTIME_BASE_NS + ctx.clock_real * _MS
        elif clock <= 3:
            ctx.clock_mono += 1
            now = ctx.clock_mono * _MS
        else:
            return EINVAL
        return ESUCCESS if write(ptr, _U64.pack(now)) else EFAULT

    def fd_write(fd: int, iovs: int, iovs_len: int, nwritten_ptr: int) -> int:
        if fd not in (1, 2):
            return EBADF
        budget.check("iovecs", iovs_len, budget.MAX_IOVECS, unit="iovecs")
        table = read(iovs, 8 * iovs_len)
        if table is None:
            return EFAULT
        pieces = list(struct.iter_unpack("<II", table))
        total = sum(size for _, size in pieces)
        out = ctx.out
        # the sizes are summed before any byte is copied: the budget bounds the work
        budget.check("stdout/stderr output", len(out) + total, budget.OUTPUT_BYTES)
        ctx.charge("stdout/stderr output", total, budget.OUTPUT_BYTES)
        for buf, size in pieces:
            data = read(buf, size)
            if data is None:
                return EFAULT
            out += data
        return ESUCCESS if write(nwritten_ptr, _U32.pack(total & 0xFFFFFFFF)) else EFAULT

    def fd_read(fd: int, _iovs: int, _iovs_len: int, nread_ptr: int) -> int:
        if fd != 0:
            return EBADF
        return ESUCCESS if write(nread_ptr, _U32.pack(0)) else EFAULT

    def fd_close(fd: int) -> int:
        return ESUCCESS if fd <= 2 else EBADF

    def fd_fdstat_get(fd: int, ptr: int) -> int:
        if fd > 2:
            return EBADF
        rights = _RIGHT_FD_READ if fd == 0 else _RIGHT_FD_WRITE
        stat = struct.pack("<BxHxxxxQQ", _FILETYPE_CHARACTER_DEVICE, 0, rights, 0)
        return ESUCCESS if write(ptr, stat) else EFAULT

    def fd_fdstat_set_flags(fd: int, _flags: int) -> int:
        return ESUCCESS if fd <= 2 else EBADF

    def fd_filestat_get(fd: int, ptr: int) -> int:
        if fd > 2:
            return EBADF
        stat = bytearray(64)
        stat[16] = _FILETYPE_CHARACTER_DEVICE
        return ESUCCESS if write(ptr, bytes(stat)) else EFAULT

    def fd_seek(fd: int, _offset: int, _whence: int, _ptr: int) -> int:
        return ESPIPE if fd <= 2 else EBADF

    def fd_tell(fd: int, _ptr: int) -> int:
        return ESPIPE if fd <= 2 else EBADF

    def poll_oneoff(subs: int, events: int, count: int, nevents_ptr: int) -> int:
        if count == 0:
            return EINVAL
        budget.check("subscriptions", count, budget.POLL_SUBSCRIPTIONS, unit="subscriptions")
        raw = read(subs, 48 * count)
        if raw is None:
            return EFAULT
        out = bytearray()
        for i in range(count):
            userdata = raw[48 * i : 48 * i + 8]
            tag = raw[48 * i + 8]
            # event: userdata u64, error u16, type u8, then fd_readwrite (zeros); no waiting.
            out += userdata + struct.pack("<HB", ESUCCESS, tag) + bytes(21)
        ok = write(events, bytes(out)) and write(nevents_ptr, _U32.pack(count))
        return ESUCCESS if ok else EFAULT

    def proc_exit(code: int) -> None:
        raise ProcExit(code)

    def sched_yield() -> int:
        return ESUCCESS

    def random_get(buf: int, size: int) -> int:
        budget.check("random bytes", size, budget.RANDOM_BYTES)
        inst = ctx.inst
        if inst is None or buf + size > inst.memory_size():
            return EFAULT  # bounds first: nothing is generated for a bad buffer
        return ESUCCESS if write(buf, ctx.rng.randbytes(size)) else EFAULT

    def fd_only(fd: int, *_rest: int) -> int:
        return ENOTSUP if fd <= 2 else EBADF

    def fd_positional(fd: int, *_rest: int) -> int:
        return ESPIPE if fd <= 2 else EBADF

    def no_dir(*_args: int) -> int:
        return EBADF  # no preopened directory exists, so no fd can be one

    def socket(fd: int, *_rest: int) -> int:
        return ENOTSOCK if fd <= 2 else EBADF

    def no_sys(*_args: int) -> int:
        return ENOSYS

    impls: dict[str, Callable[..., int | None]] = {
        "args_get": args_get,
        "args_sizes_get": args_sizes_get,
        "environ_get": environ_get,
        "environ_sizes_get": environ_sizes_get,
        "clock_res_get": clock_res_get,
        "clock_time_get": clock_time_get,
        "fd_advise": fd_only,
        "fd_allocate": fd_only,
        "fd_close": fd_close,
        "fd_datasync": fd_only,
        "fd_fdstat_get": fd_fdstat_get,
        "fd_fdstat_set_flags": fd_fdstat_set_flags,
        "fd_fdstat_set_rights": fd_only,
        "fd_filestat_get": fd_filestat_get,
        "fd_filestat_set_size": fd_only,
        "fd_filestat_set_times": fd_only,
        "fd_pread": fd_positional,
        "fd_prestat_get": no_dir,
        "fd_prestat_dir_name": no_dir,
        "fd_pwrite": fd_positional,
        "fd_read": fd_read,
        "fd_readdir": fd_only,
        "fd_renumber": fd_only,
        "fd_seek": fd_seek,
        "fd_sync": fd_only,
        "fd_tell": fd_tell,
        "fd_write": fd_write,
        "path_create_directory": no_dir,
        "path_filestat_get": no_dir,
        "path_filestat_set_times": no_dir,
        "path_link": no_dir,
        "path_open": no_dir,
        "path_readlink": no_dir,
        "path_remove_directory": no_dir,
        "path_rename": no_dir,
        "path_symlink": no_dir,
        "path_unlink_file": no_dir,
        "poll_oneoff": poll_oneoff,
        "proc_exit": proc_exit,
        "proc_raise": no_sys,
        "sched_yield": sched_yield,
        "random_get": random_get,
        "sock_accept": socket,
        "sock_recv": socket,
        "sock_send": socket,
        "sock_shutdown": socket,
    }
    return {
        (WASI_MODULE, name): HostFunction(*WASI_IMPORTS[name], impl) for name, impl in impls.items()
    }
