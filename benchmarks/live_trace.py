"""``wasmsched run`` with per-pod timestamps, for bench_live.py's ``--trace-pods`` debug run.

    python benchmarks/live_trace.py OUT.json run --config ...    # as ``python -m wasmsched run ...``

Wraps the live mode's stages (nothing in src/ changes) and, at exit, writes to OUT.json for
each pod first seen pending the monotonic time (CLOCK_MONOTONIC, the same clock as the
benchmark's) of each stage of its first scheduling:

- ``line``: its watch event's line was read (before decoding);
- ``emit``: the informer handed the delta to the inbox (decoded);
- ``apply``: the scheduling thread took it from the inbox; ``added``: it is in the queue;
- ``cycle``: its scheduling attempt started (``sampled``: the attempt observed its plugin
  calls); ``submit``: its binding was handed to a worker (``cpu``: the scheduling thread's
  CPU seconds since ``cycle``); ``cycle_end``: the attempt ended (after the binding);
- ``post``/``posted``: the binding POST was sent / answered (``post_cpu``: the worker's
  CPU seconds in between);
- ``finished``: the binding's answer was applied on the scheduling thread;

and every garbage collection (start, seconds, generation) and scheduling-thread cycle.
"""

from __future__ import annotations

import atexit
import gc
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

OUT = sys.argv.pop(1)
now = time.monotonic
pods: dict[str, dict[str, Any]] = {}
collections: list[tuple[float, float, int]] = []
_gc_start = [0.0]
_line_at = threading.local()


def _mark(name: str, stage: str, when: float | None = None) -> None:
    stages = pods.setdefault(name, {})
    stages.setdefault(stage, now() if when is None else when)


def _on_gc(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _gc_start[0] = now()
    else:
        collections.append((_gc_start[0], now() - _gc_start[0], info["generation"]))


def _dump() -> None:
    with open(OUT, "w") as out:
        json.dump({"pods": pods, "gc": collections}, out)


def _wrap(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    setattr(owner, name, make(getattr(owner, name)))


def install() -> None:
    from wasmsched.live import informer, runner, scheduler, writer

    def handle_line(orig: Any) -> Any:
        def wrapped(self: Any, line: str) -> None:
            _line_at.t = now()
            orig(self, line)

        return wrapped

    def emit(orig: Any) -> Any:
        def wrapped(self: Any, key: str, new: Any, final: Any = None) -> None:
            if self.kind == "Pod" and new is not None and not new["spec"].get("nodeName"):
                name = new["metadata"]["name"]
                if name not in pods:
                    _mark(name, "line", getattr(_line_at, "t", now()))
                    _mark(name, "emit")
            orig(self, key, new, final)

        return wrapped

    def apply_pod(orig: Any) -> Any:
        def wrapped(self: Any, delta: Any) -> None:
            new = delta.new
            name = new["metadata"]["name"] if new is not None else None
            first = name in pods and "apply" not in pods[name] and not new["spec"].get("nodeName")
            if first:
                _mark(name, "apply")
            orig(self, delta)
            if first:
                _mark(name, "added")

        return wrapped

    def attempt_started(orig: Any) -> Any:
        def wrapped(self: Any, fwk: Any, info: Any) -> Any:
            observer = orig(self, fwk, info)
            name = info.pod.name
            if name in pods and "cycle" not in pods[name]:
                _mark(name, "cycle")
                pods[name]["sampled"] = observer is not None
                pods[name]["cpu"] = time.thread_time()
            return observer

        return wrapped

    def attempt_ended(orig: Any) -> Any:
        def wrapped(self: Any, fwk: Any, pod: Any, outcome: Any) -> None:
            orig(self, fwk, pod, outcome)
            if pod.name in pods:
                _mark(pod.name, "cycle_end")

        return wrapped

    def bind_async(orig: Any) -> Any:
        def wrapped(self: Any, pod: Any, node: str) -> None:
            stages = pods.get(pod.name)
            if stages is not None and "submit" not in stages:
                _mark(pod.name, "submit")
                stages["cpu"] = time.thread_time() - stages.get("cpu", 0.0)
            orig(self, pod, node)

        return wrapped

    def post_binding(orig: Any) -> Any:
        def wrapped(api: Any, pod: Any, node: str, guard: Any = None) -> Any:
            stages = pods.get(pod.name)
            if stages is None:
                return orig(api, pod, node, guard)
            _mark(pod.name, "post")
            cpu = time.thread_time()
            result = orig(api, pod, node, guard)
            _mark(pod.name, "posted")
            stages["post_cpu"] = time.thread_time() - cpu
            return result

        return wrapped

    def finish_binding(orig: Any) -> Any:
        def wrapped(self: Any, result: Any) -> None:
            orig(self, result)
            for name, stages in pods.items():  # debug only: a scan per binding is fine
                if stages.get("uid") == result.uid:
                    _mark(name, "finished")
                    break

        return wrapped

    def bind_async_uid(orig: Any) -> Any:
        def wrapped(self: Any, pod: Any, node: str) -> None:
            if pod.name in pods:
                pods[pod.name]["uid"] = pod.uid
            orig(self, pod, node)

        return wrapped

    _wrap(informer.Informer, "_handle_line", handle_line)
    _wrap(informer.Informer, "_emit", emit)
    _wrap(runner.LiveRunner, "_apply_pod", apply_pod)
    _wrap(scheduler.LiveScheduler, "attempt_started", attempt_started)
    _wrap(scheduler.LiveScheduler, "attempt_ended", attempt_ended)
    _wrap(writer.LiveWriter, "_bind_async", bind_async)
    _wrap(writer.LiveWriter, "_bind_async", bind_async_uid)
    _wrap(writer, "post_binding", post_binding)
    _wrap(scheduler.LiveScheduler, "finish_binding", finish_binding)
    gc.callbacks.append(_on_gc)
    atexit.register(_dump)


if __name__ == "__main__":
    install()
    from wasmsched.cli import main

    main()
