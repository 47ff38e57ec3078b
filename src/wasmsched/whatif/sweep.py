"""Sweeps: every (configuration, trace, seed) combination, each an independent run,
executed in this process, on a local process pool, or on a Ray cluster.

Results are kept in an output folder as JSON lines (``runs.jsonl``, one record per
finished run, written by the driver as results arrive), so a sweep that is stopped and
started again skips what it already has. The aggregate gives, per configuration, the
mean, standard deviation, minimum and maximum of each summary metric.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from wasmsched.errors import ExternalError, InputError
from wasmsched.whatif.execute import execute
from wasmsched.whatif.runs import Bundle, RunSpec

RUNS_FILE = "runs.jsonl"
# Ray retries a task whose worker process died this many times.
RAY_TASK_RETRIES = 3


class SweepError(InputError):
    """A sweep that cannot start (bad seeds, no configurations, ...)."""


def parse_seeds(text: str) -> list[int]:
    """``1-20``, ``3``, ``1,2,5-7``: the seeds of a sweep, in order, without repeats."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            first = int(lo)
            last = int(hi) if sep else first
        except ValueError:
            raise SweepError(
                f"--seeds: expected N, N-M or a comma-separated list, got {text!r}"
            ) from None
        if first < 0 or last < first:
            raise SweepError(f"--seeds: bad range {part!r} in {text!r}")
        if last - first > 100_000:
            raise SweepError(f"--seeds: range {part!r} is too large")
        seeds.extend(s for s in range(first, last + 1) if s not in seeds)
    return seeds


def plan(
    configs: Sequence[tuple[str, Bundle | None]],
    cluster: Bundle | None,
    traces: Sequence[Bundle | None],
    seeds: Sequence[int],
    kubernetes_version: str | None = None,
    feature_gates: str = "",
) -> list[RunSpec]:
    """Every combination, configurations outermost, each modelling ``kubernetes_version``
    with ``feature_gates``."""
    if not configs:
        raise SweepError("sweep: give at least one --config")
    names = [name for name, _ in configs]
    if len(set(names)) != len(names):
        raise SweepError(f"sweep: two configurations share the name {names!r}")
    return [
        RunSpec(name, bundle, cluster, trace, seed, kubernetes_version, feature_gates)
        for name, bundle in configs
        for trace in traces
        for seed in seeds
    ]


def read_done(out: Path) -> dict[str, dict[str, Any]]:
    """The records already in ``out/runs.jsonl`` (a torn last line is ignored)."""
    path = out / RUNS_FILE
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            done.setdefault(rec["id"], rec)
    return done


class _Writer:
    """Appends records, one line each, flushed and synced as they arrive."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        path = out / RUNS_FILE
        # A torn last line (a killed driver) would glue onto the next record: end it.
        if path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            with path.open("ab") as f:
                f.write(b"\n")
        self.handle = path.open("a", encoding="utf-8")

    def write(self, rec: dict[str, Any]) -> None:
        self.handle.write(json.dumps(rec, sort_keys=True) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def close(self) -> None:
        self.handle.close()


ProgressFn = Callable[[int, int], None]


def run_sweep(
    specs: Sequence[RunSpec],
    out: Path,
    *,
    workers: int = 1,
    ray_address: str | None = None,
    progress: ProgressFn | None = None,
) -> list[dict[str, Any]]:
    """Runs what ``out`` does not have yet; returns every record of the plan, in order."""
    done = read_done(out)
    todo = [s for s in specs if s.id not in done]
    writer = _Writer(out)
    total = len(specs)
    finished = total - len(todo)

    def collect(rec: dict[str, Any]) -> None:
        nonlocal finished
        if rec["id"] in done:  # a retried task that had already reported
            return
        done[rec["id"]] = rec
        writer.write(rec)
        finished += 1
        if progress is not None:
            progress(finished, total)

    try:
        if progress is not None:
            progress(finished, total)
        if not todo:
            pass
        elif ray_address is not None:
            _run_ray(todo, ray_address, collect)
        elif workers <= 1:
            for spec in todo:
                collect(execute(spec))
        else:
            _run_pool(todo, workers, collect)
    finally:
        writer.close()
    return [done[s.id] for s in specs if s.id in done]


def _run_pool(
    todo: Sequence[RunSpec], workers: int, collect: Callable[[dict[str, Any]], None]
) -> None:
    # spawn: a fresh interpreter per worker, never a fork of a process holding wasmtime
    # engines and threads.
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        pending = {pool.submit(execute, spec) for spec in todo}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                collect(future.result())


def _run_ray(
    todo: Sequence[RunSpec], address: str, collect: Callable[[dict[str, Any]], None]
) -> None:
    try:
        import ray
    except ImportError:
        raise ExternalError("--ray: Ray is not installed (pip install 'wasmsched[ray]')") from None
    started_here = False
    if not ray.is_initialized():
        if address == "auto":
            try:
                ray.init(address="auto", log_to_driver=False)
            except ConnectionError:
                ray.init(include_dashboard=False, log_to_driver=False)
                started_here = True
        else:
            ray.init(address=address, log_to_driver=False)
    try:
        remote = ray.remote(max_retries=RAY_TASK_RETRIES)(execute)
        pending = [remote.remote(spec) for spec in todo]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                collect(ray.get(ref))
    finally:
        if started_here:
            ray.shutdown()


def aggregate(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per configuration and numeric summary metric: n, mean, stdev, min, max."""
    values: dict[str, dict[str, list[float]]] = {}
    for rec in records:
        per = values.setdefault(str(rec.get("config")), {})
        for key, value in (rec.get("summary") or {}).items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                per.setdefault(key, []).append(float(value))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for config, metrics in values.items():
        out[config] = {
            key: {
                "n": len(v),
                "mean": round(statistics.fmean(v), 6),
                "stdev": round(statistics.stdev(v), 6) if len(v) > 1 else 0.0,
                "min": min(v),
                "max": max(v),
            }
            for key, v in sorted(metrics.items())
        }
    return out
