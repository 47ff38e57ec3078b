"""The guest ABI as data: exports and their signatures, host imports, wire decoders.

Which extension points a guest serves is read straight off its exports (upstream's scheduler/plugin/guest.go: compileGuest
looks each export up by name); there is no upstream-style combination table (upstream's
scheduler/plugin/plugin.go: maskInterfaces). Decisions where upstream
rejects or crashes:

* ``prescore`` without ``score`` is a PreScore-only plugin (upstream rejects
  ``prescore_without_score.wasm``; the framework calls PreScore on any plugin serving it).
* ``normalizescore`` without ``score`` is a load error: NormalizeScore is reached only
  through a Score plugin's ``score_extensions()``, so the export could never run.
* ``addpod``/``removepod`` make the plugin a PreFilter plugin even without ``prefilter``
  (PreFilterExtensions hang off PreFilter); PreFilter then succeeds without a guest call.
* ``reserve`` without ``unreserve`` (or the reverse), and ``addpod`` without
  ``removepod``: the missing half is a no-op (upstream calls a nil function).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wasmsched.framework import interfaces as fw
from wasmsched.framework import types as ev

__all__ = [
    "EXPORT_RESULTS",
    "HOST_IMPORTS",
    "Analysis",
    "analyse_exports",
    "decode_cluster_events",
    "decode_nul_list",
    "default_events",
    "signed32",
    "split_high_low",
]

# export name -> wasm result type (None: () -> ()).
EXPORT_RESULTS: dict[str, str | None] = {
    "enqueue": None,
    "prefilter": "i32",
    "filter": "i32",
    "postfilter": "i64",
    "addpod": "i32",
    "removepod": "i32",
    "prescore": "i32",
    "score": "i64",
    "normalizescore": "i32",
    "reserve": "i32",
    "unreserve": None,
    "permit": "i64",
    "prebind": "i32",
    "bind": "i32",
    "postbind": None,
}

# export -> extension point it gives (enqueue/normalizescore/addpod/removepod hang off others).
_EXPORT_POINTS: dict[str, str] = {
    "prefilter": fw.PRE_FILTER,
    "addpod": fw.PRE_FILTER,
    "removepod": fw.PRE_FILTER,
    "filter": fw.FILTER,
    "postfilter": fw.POST_FILTER,
    "prescore": fw.PRE_SCORE,
    "score": fw.SCORE,
    "reserve": fw.RESERVE,
    "unreserve": fw.RESERVE,
    "permit": fw.PERMIT,
    "prebind": fw.PRE_BIND,
    "bind": fw.BIND,
    "postbind": fw.POST_BIND,
}

POINT_ORDER: tuple[str, ...] = (
    fw.PRE_FILTER,
    fw.FILTER,
    fw.POST_FILTER,
    fw.PRE_SCORE,
    fw.SCORE,
    fw.RESERVE,
    fw.PERMIT,
    fw.PRE_BIND,
    fw.BIND,
    fw.POST_BIND,
)

_I32 = "i32"
_I64 = "i64"


def _sig(n_params: int, result: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (_I32,) * n_params, (() if result is None else (result,))


# (module, name) -> (params, results) of every k8s host function (upstream's scheduler/plugin/host.go:
# instantiateHostApi, instantiateHostKlog, instantiateHostScheduler).
HOST_IMPORTS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {
    ("k8s.io/api", "node"): _sig(4, _I32),
    ("k8s.io/api", "nodeList"): _sig(2, _I32),
    ("k8s.io/klog", "log"): _sig(3, None),
    ("k8s.io/klog", "logs"): _sig(5, None),
    ("k8s.io/klog", "severity"): _sig(0, _I32),
    ("k8s.io/scheduler", "get_config"): _sig(2, _I32),
    ("k8s.io/scheduler", "currentPod"): _sig(2, _I32),
    ("k8s.io/scheduler", "targetPod"): _sig(2, _I32),
    ("k8s.io/scheduler", "currentNodeName"): _sig(2, _I32),
    ("k8s.io/scheduler", "filteredNodeList"): _sig(2, _I32),
    ("k8s.io/scheduler", "nodeToStatusMap"): _sig(2, _I32),
    ("k8s.io/scheduler", "nodeScoreList"): _sig(2, _I32),
    ("k8s.io/scheduler", "nodeImageStates"): _sig(4, _I32),
    ("k8s.io/scheduler", "result.status_reason"): _sig(2, None),
    ("k8s.io/scheduler", "result.node_names"): _sig(2, None),
    ("k8s.io/scheduler", "result.nominated_node_name"): _sig(2, None),
    ("k8s.io/scheduler", "result.cluster_events"): _sig(2, None),
    ("k8s.io/scheduler", "result.normalized_score_list"): _sig(2, None),
    ("k8s.io/scheduler", "handle.eventrecorder.eventf"): _sig(2, None),
    ("k8s.io/scheduler", "handle.reject_waiting_pod"): _sig(4, None),
    ("k8s.io/scheduler", "handle.get_waiting_pod"): _sig(4, None),
}


def format_signature(params: Sequence[str], results: Sequence[str]) -> str:
    return f"({', '.join(params)}) -> ({', '.join(results)})"


@dataclass(frozen=True)
class Analysis:
    """What a guest's exports mean to the host."""

    exports: frozenset[str]
    """Recognised plugin exports present with the right signature."""
    extension_points: frozenset[str]
    has_start: bool
    problems: tuple[str, ...]

    def ordered_points(self) -> list[str]:
        return [p for p in POINT_ORDER if p in self.extension_points]


def analyse_exports(
    exports: Iterable[tuple[str, tuple[tuple[str, ...], tuple[str, ...]] | None, bool]],
) -> Analysis:
    """Checks exports given as (name, func signature or None, is_memory) triples."""
    problems: list[str] = []
    present: set[str] = set()
    has_memory = False
    has_start = False
    for name, sig, is_memory in exports:
        if name == "memory":
            has_memory = has_memory or is_memory
            continue
        if name == "_start":
            if sig != ((), ()):
                problems.append(
                    "wasm: guest exports the wrong signature for func[_start]. should be () -> ()"
                )
            else:
                has_start = True
            continue
        if name not in EXPORT_RESULTS:
            continue
        want = EXPORT_RESULTS[name]
        expected = ((), () if want is None else (want,))
        if sig != expected:
            problems.append(
                f"wasm: guest exports the wrong signature for func[{name}]. "
                f"should be () -> ({want or ''})"
            )
            continue
        present.add(name)
    if not has_memory:
        problems.insert(0, "wasm: guest doesn't export memory[memory]")
    if not present and not any("wrong signature" in p for p in problems):
        problems.append("wasm: guest does not export any plugin functions")
    if "normalizescore" in present and "score" not in present:
        problems.append(
            "wasm: guest exports normalizescore without score; NormalizeScore is only "
            "called for Score plugins"
        )
    points = frozenset(_EXPORT_POINTS[e] for e in present if e in _EXPORT_POINTS)
    return Analysis(frozenset(present), points, has_start, tuple(problems))


# --- wire decoders ---------------------------------------------------------------------------


def decode_nul_list(data: bytes | None) -> list[str] | None:
    """NUL-terminated strings (upstream's scheduler/plugin/cstring.go: fromNULTerminated): empty entries skipped, unterminated tail dropped;
    None when nothing remains."""
    if not data:
        return None
    parts = data.split(b"\0")
    parts.pop()  # the unterminated tail (b"" when data ends with NUL)
    names = [p.decode("utf-8", "replace") for p in parts if p]
    return names or None


_RESOURCES: dict[int, str] = {
    0: ev.POD,
    1: ev.NODE,
    2: ev.PERSISTENT_VOLUME,
    3: ev.PERSISTENT_VOLUME_CLAIM,
    4: "PodSchedulingContext",
    5: ev.RESOURCE_CLAIM,  # 1.33 name; upstream's host still says "ResourceClaim"
    6: ev.STORAGE_CLASS,
    7: ev.CSI_NODE,
    8: ev.CSI_DRIVER,
    9: ev.CSI_STORAGE_CAPACITY,
    10: ev.WILDCARD,
}
_GUEST_ALL = 63  # the guest SDK's stale ActionType "All"
_EVENT = struct.Struct("<II")


def decode_cluster_events(data: bytes | None) -> list[ev.ClusterEvent] | None:
    """8-byte records (u32 resource, u32 action), trailing partial record ignored
    (upstream's scheduler/plugin/clusterevent.go).

    The guest SDK's ``All`` (63) predates Kubernetes 1.33's action bits, so it is widened to
    the framework's ALL; every other mask passes through unchanged.
    """
    if not data:
        return None
    usable = len(data) - len(data) % 8
    if usable == 0:
        return None
    out = []
    for resource, action in _EVENT.iter_unpack(data[:usable]):
        name = _RESOURCES.get(resource, f"EventResource({resource})")
        out.append(ev.ClusterEvent(name, ev.ActionType.ALL if action == _GUEST_ALL else action))
    return out


def default_events() -> list[ev.ClusterEventWithHint]:
    """Events registered when the guest has no ``enqueue`` (or it returns none or traps)."""
    all_ = ev.ActionType.ALL
    return [
        ev.ClusterEventWithHint(ev.ClusterEvent(resource, all_))
        for resource in (
            ev.POD,
            ev.NODE,
            ev.CSI_NODE,
            ev.PERSISTENT_VOLUME,
            ev.PERSISTENT_VOLUME_CLAIM,
            ev.STORAGE_CLASS,
        )
    ]


def signed32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value & 0x80000000 else value


def split_high_low(value: int) -> tuple[int, int]:
    """(high 32 bits, low 32 bits) of an i64, both as signed int32."""
    return signed32(value >> 32), signed32(value)
