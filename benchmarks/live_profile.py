"""``wasmsched run`` with a CPU profile of each thread, for bench_live.py's
``--profile-threads`` debug run.

    python benchmarks/live_profile.py PREFIX run --config ...   # as ``python -m wasmsched run ...``

Every thread (the scheduling thread, which is the main one, the informers, the API
workers, ...) runs under its own cProfile on its own CPU clock (``time.thread_time``, read
through the thread's clock id so that the calls still open at exit are charged the
profiled thread's time, not the exiting thread's), so each profile counts that thread's
CPU and not the time it waited for the GIL or the network. At exit the
profiles of threads of one kind (the name without its trailing number: ``api-3`` is
``api``, ``api-events-1`` is ``api-events``) are merged and written to
``PREFIX.<kind>.prof`` (pstats format: ``python -m pstats PREFIX.MainThread.prof``), and
``PREFIX.txt`` gets the CPU seconds of each kind and its top functions by own time.
"""

from __future__ import annotations

import atexit
import cProfile
import functools
import io
import marshal
import pstats
import re
import sys
import threading
import time
from typing import Any

PREFIX = sys.argv.pop(1)
_profiles: list[tuple[str, cProfile.Profile]] = []
_lock = threading.Lock()
_TOP = 25


def _profiled(name: str) -> cProfile.Profile:
    """A profile of the calling thread's CPU time."""
    clock = time.pthread_getcpuclockid(threading.get_ident())
    profile = cProfile.Profile(functools.partial(time.clock_gettime, clock))
    with _lock:
        _profiles.append((name, profile))
    return profile


def _kind(name: str) -> str:
    return re.sub(r"-\d+$", "", name)


def _dump() -> None:
    # snapshot_stats, not create_stats: disable() would act on this thread, not the
    # profiled one; a snapshot under the GIL is consistent.
    merged: dict[str, pstats.Stats] = {}
    with _lock:
        profiles = list(_profiles)
    for name, profile in profiles:
        profile.snapshot_stats()  # type: ignore[attr-defined]
        if not profile.stats:  # type: ignore[attr-defined]
            continue
        kind = _kind(name)
        if kind in merged:
            merged[kind].add(profile)
        else:
            merged[kind] = pstats.Stats(profile)
    report = io.StringIO()
    for kind, stats in sorted(merged.items(), key=lambda kv: -kv[1].total_tt):  # type: ignore[attr-defined]
        with open(f"{PREFIX}.{kind}.prof", "wb") as out:
            marshal.dump(stats.stats, out)  # type: ignore[attr-defined]
        report.write(f"=== {kind}: {stats.total_tt:.2f} s CPU\n")  # type: ignore[attr-defined]
        stats.stream = report  # type: ignore[attr-defined]
        stats.sort_stats("tottime").print_stats(_TOP)
    with open(f"{PREFIX}.txt", "w") as out:
        out.write(report.getvalue())


def install() -> None:
    run = threading.Thread.run

    def profiled_run(self: threading.Thread) -> None:
        profile = _profiled(self.name)
        profile.enable()
        try:
            run(self)
        finally:
            profile.disable()

    threading.Thread.run = profiled_run  # type: ignore[method-assign]
    main = _profiled("MainThread")
    main.enable()
    atexit.register(_dump)


def _main() -> Any:
    install()
    from wasmsched.cli import main

    return main()


if __name__ == "__main__":
    _main()
