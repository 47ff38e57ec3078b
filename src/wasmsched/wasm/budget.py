"""Bounds on the host work a guest can cause: per host call, per export call, per cycle, and
what a plugin retains over a run.

Upstream's host (kube-scheduler-wasm-extension scheduler/plugin/host.go) reads whatever
pointer and length a guest passes; kube-scheduler itself caps what it keeps (client-go's
tools/events ``EventRecorder`` drops events when its queue is full; klog writes through and
keeps nothing). Here every host function that reads, decodes, stores or prints guest bytes
checks the length the guest claims against these limits BEFORE touching the bytes, and a
breach raises :class:`HostBudgetError` inside the host function: the export call traps and
fails with an Error status ``... host function <module>.<name> failed: <what>: <n> bytes
exceed the <limit>-byte limit ...``. A cycle is the calls made for one pod on one instance.

``memoryLimitMiB`` (see :func:`store_limits`) is the total of one instance's linear memory
and tables; an instance may have one memory, at most :data:`MAX_TABLES` tables.
"""

from __future__ import annotations

from typing import Final

from wasmsched.errors import WasmschedError

__all__ = [
    "CALL_BYTES",
    "CLUSTER_EVENTS_BYTES",
    "CYCLE_BYTES",
    "EVENTS_PER_CALL",
    "EVENT_BYTES",
    "LOG_RECORD_BYTES",
    "MAX_IOVECS",
    "MAX_TABLES",
    "NAME_BYTES",
    "NODE_NAMES_BYTES",
    "NOMINATED_BYTES",
    "NORMALIZED_BYTES",
    "OUTPUT_BYTES",
    "POLL_SUBSCRIPTIONS",
    "RANDOM_BYTES",
    "REASON_BYTES",
    "RETAINED_EVENTS",
    "RETAINED_EVENTS_PER_SIMULATION",
    "RETAINED_EVENT_BYTES",
    "RETAINED_EVENT_BYTES_PER_SIMULATION",
    "RETAINED_LOGS",
    "RETAINED_LOG_BYTES",
    "HostBudgetError",
    "check",
    "store_limits",
]

_KiB: Final = 1 << 10
_MiB: Final = 1 << 20

CALL_BYTES: Final = 16 * _MiB
"""All guest bytes the host functions read during one export call."""
CYCLE_BYTES: Final = 64 * _MiB
"""All guest bytes the host functions read during one pod's cycle on an instance."""

OUTPUT_BYTES: Final = 1 * _MiB
"""stdout + stderr (``fd_write``) per export call."""
MAX_IOVECS: Final = 1024
"""iovecs per ``fd_write`` (POSIX's IOV_MAX)."""
LOG_RECORD_BYTES: Final = 64 * _KiB
"""Message plus key/value bytes of one ``klog.log``/``klog.logs`` call."""
REASON_BYTES: Final = 64 * _KiB
"""One ``result.status_reason``."""
EVENT_BYTES: Final = 16 * _KiB
"""The EventMessage JSON of one ``handle.eventrecorder.eventf``."""
EVENTS_PER_CALL: Final = 100
"""``eventf`` calls per export call."""
CLUSTER_EVENTS_BYTES: Final = 64 * _KiB
"""``result.cluster_events`` (about 8,000 events)."""
NODE_NAMES_BYTES: Final = 4 * _MiB
"""``result.node_names`` (5,000 nodes of 253-character names fit)."""
NORMALIZED_BYTES: Final = 4 * _MiB
"""``result.normalized_score_list`` JSON."""
NOMINATED_BYTES: Final = 253
"""``result.nominated_node_name``: a node name is a DNS subdomain, at most 253 bytes."""
NAME_BYTES: Final = 1 * _KiB
"""A node name or uid a getter looks up (``k8s.io/api.node``, ``nodeImageStates``,
``handle.get_waiting_pod``, ``handle.reject_waiting_pod``); checked, not counted, as
these are per-node hot calls and a name is tiny."""
POLL_SUBSCRIPTIONS: Final = 1024
"""Subscriptions of one ``poll_oneoff``."""
RANDOM_BYTES: Final = 1 * _MiB
"""``random_get`` per call."""

RETAINED_LOGS: Final = 10_000
"""Log records one plugin keeps (``WasmPlugin.logs``); older ones are dropped."""
RETAINED_LOG_BYTES: Final = 16 * _MiB
RETAINED_EVENTS: Final = 10_000
"""Events one plugin may record over its lifetime; later ones are dropped and counted."""
RETAINED_EVENT_BYTES: Final = 16 * _MiB
RETAINED_EVENTS_PER_SIMULATION: Final = 50_000
"""Events all wasm plugins of one scheduler (one handle: a simulation) may record."""
RETAINED_EVENT_BYTES_PER_SIMULATION: Final = 64 * _MiB

MAX_TABLES: Final = 4
_TABLE_ELEMENT_BYTES: Final = 8  # a funcref/externref slot is a pointer in wasmtime
_TABLE_SHARE: Final = 16  # tables may use 1/16 of the total, memory the rest


class HostBudgetError(WasmschedError):
    """A guest asked the host for more work than a budget allows (raised in a host call)."""


def check(what: str, n: int, limit: int, unit: str = "bytes", per: str = "call") -> None:
    """Raise HostBudgetError when ``n`` ``unit`` of ``what`` exceed ``limit``, e.g.
    ``status reason: 134217728 bytes exceed the limit of 65536 bytes per call``."""
    if n > limit:
        raise HostBudgetError(f"{what}: {n} {unit} exceed the limit of {limit} {unit} per {per}")


def store_limits(memory_limit: int) -> dict[str, int]:
    """``wasmtime.Store.set_limits`` arguments giving one instance ``memory_limit`` bytes in
    total: one linear memory, at most MAX_TABLES tables sharing 1/16 of it, one instance."""
    table_bytes = memory_limit // _TABLE_SHARE
    return {
        "memory_size": memory_limit - table_bytes,
        "table_elements": max(1, table_bytes // _TABLE_ELEMENT_BYTES // MAX_TABLES),
        "instances": 1,
        "tables": MAX_TABLES,
        "memories": 1,
    }
