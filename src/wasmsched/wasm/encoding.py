"""Bytes handed to guests: protobuf Pods/Nodes (encoded once per object) and Go-style JSON.

Pods and Nodes are immutable (a changed pod is a new object), so their protobuf encoding
is cached per object in a ``WeakKeyDictionary``; objects that cannot be weakly referenced
fall back to a bounded cache keyed by ``id`` that pins the object, so an id is never reused
while its entry lives. The NodeList of a snapshot is cached per (snapshot, generation).

JSON follows Go's ``encoding/json`` defaults, as upstream's host marshals it: map keys
sorted, no spaces, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "go_json",
    "image_states_json",
    "node_list_proto",
    "node_names_json",
    "node_proto",
    "pod_proto",
    "score_map_json",
    "status_map_json",
]

_ID_CACHE_LIMIT = 8192
_pods: weakref.WeakKeyDictionary[Any, bytes] = weakref.WeakKeyDictionary()
_nodes: weakref.WeakKeyDictionary[Any, bytes] = weakref.WeakKeyDictionary()
_id_cache: dict[int, tuple[object, bytes]] = {}
_lock = threading.Lock()


_Encoders = tuple[Callable[[Any], bytes], Callable[[Any], bytes], Callable[[Any], bytes]]
_encoders_cache: _Encoders | None = None


def _encoders() -> _Encoders:
    global _encoders_cache
    if _encoders_cache is None:
        from wasmsched.api.protobuf import encode_node, encode_node_list, encode_pod

        _encoders_cache = (encode_pod, encode_node, encode_node_list)
    return _encoders_cache


def _cached(
    obj: Any, table: weakref.WeakKeyDictionary[Any, bytes], encode: Callable[[Any], bytes]
) -> bytes:
    # Not an attribute on the object: Pod._derive copies attributes to derived pods.
    try:
        data = table.get(obj)
    except TypeError:  # not weak-referenceable or not hashable
        return _id_cached(obj, encode)
    if data is None:
        data = encode(obj.manifest)
        table[obj] = data
    return data


def _id_cached(obj: Any, encode: Callable[[Any], bytes]) -> bytes:
    entry = _id_cache.get(id(obj))
    if entry is not None and entry[0] is obj:
        return entry[1]
    data = encode(obj.manifest)
    with _lock:
        if len(_id_cache) >= _ID_CACHE_LIMIT:
            for stale in list(_id_cache)[: _ID_CACHE_LIMIT // 2]:
                del _id_cache[stale]
        _id_cache[id(obj)] = (obj, data)
    return data


def pod_proto(pod: Any) -> bytes:
    """``k8s.io.api.core.v1.Pod`` bytes of ``pod`` (encoded once per Pod object)."""
    return _cached(pod, _pods, _encoders()[0])


def node_proto(node: Any) -> bytes:
    """``k8s.io.api.core.v1.Node`` bytes of ``node`` (encoded once per Node object)."""
    return _cached(node, _nodes, _encoders()[1])


_node_list: tuple[object, int, int, bytes] | None = None


def node_list_proto(snapshot: Any) -> bytes:
    """``NodeList`` of every node in ``snapshot``, cached per (snapshot, generation)."""
    global _node_list
    infos = snapshot.list()
    generation = getattr(snapshot, "generation", 0)
    cached = _node_list
    if (
        cached is not None
        and cached[0] is snapshot
        and cached[1] == generation
        and cached[2] == len(infos)
    ):
        return cached[3]
    data = _encoders()[2]([node_proto(info.node) for info in infos])
    _node_list = (snapshot, generation, len(infos), data)
    return data


# --- JSON --------------------------------------------------------------------------------

_HTML = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_json(value: Any) -> bytes:
    """``json.Marshal``-compatible bytes for plain data (sorted keys, HTML escaping)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return text.translate(_HTML).encode("utf-8", "surrogatepass")


def node_names_json(nodes: Iterable[Any] | None) -> bytes:
    """``["a","b"]`` from NodeInfos (or names), in order; nil or empty is ``[]``."""
    if not nodes:
        return b"[]"
    return go_json([n if isinstance(n, str) else n.name for n in nodes])


def status_map_json(node_to_status: Any) -> bytes:
    """``{node: code}`` of the explicitly recorded statuses (nil statuses skipped)."""
    if node_to_status is None:
        return b"{}"
    explicit: Mapping[str, Any]
    explicit = node_to_status.explicit() if hasattr(node_to_status, "explicit") else {}
    return go_json({name: s.code for name, s in explicit.items() if s is not None})


def score_map_json(scores: Sequence[Any] | None) -> bytes:
    """``{node: score}`` from NodeScores (duplicate names collapse; the last wins)."""
    if not scores:
        return b"{}"
    return go_json({s.name: s.score for s in scores})


def image_states_json(node_info: Any) -> bytes:
    """Go's JSON of a node's ``map[string]*ImageStateSummary`` (struct fields in declaration
    order: Size, NumNodes, Nodes); ``null`` for an unknown node."""
    if node_info is None:
        return b"null"
    states = node_info.image_states
    parts = []
    for name in sorted(states):
        s = states[name]
        nodes = go_json({n: {} for n in s.nodes}).decode() if s.nodes else "null"
        parts.append(
            f'{go_json(name).decode()}:{{"Size":{int(s.size)},'
            f'"NumNodes":{int(s.num_nodes)},"Nodes":{nodes}}}'
        )
    return ("{" + ",".join(parts) + "}").encode()
