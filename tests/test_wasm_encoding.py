"""wasm/encoding.py: per-object protobuf caching and Go-compatible JSON."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from wasm_support import make_node, make_pod, snapshot_of
from wasmsched.api.protobuf import encode_node_list, encode_pod
from wasmsched.framework.interfaces import NodeScore, NodeToStatus
from wasmsched.framework.node_info import ImageStateSummary
from wasmsched.framework.status import Status
from wasmsched.wasm import encoding


def test_pod_bytes_are_cached_per_object_and_never_carried_to_copies() -> None:
    pod = make_pod(node_name="")
    first = encoding.pod_proto(pod)
    assert first == encode_pod(pod.manifest)
    assert encoding.pod_proto(pod) is first
    bound = pod.with_node_name("n1")
    assert encoding.pod_proto(bound) == encode_pod(bound.manifest) != first


class Slotted:
    __slots__ = ("manifest",)

    def __init__(self, manifest: dict) -> None:
        self.manifest = manifest


def test_objects_without_weakrefs_use_the_id_cache() -> None:
    pod = Slotted(make_pod().manifest)
    data = encoding.pod_proto(pod)
    assert data == encode_pod(pod.manifest) and encoding.pod_proto(pod) is data


def test_node_list_is_cached_per_snapshot_generation() -> None:
    snapshot = snapshot_of([make_node("a"), make_node("b")])
    data = encoding.node_list_proto(snapshot)
    assert data == encode_node_list([encoding.node_proto(i.node) for i in snapshot.list()])
    assert encoding.node_list_proto(snapshot) is data
    snapshot.generation += 1
    assert encoding.node_list_proto(snapshot) is not data


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["a", "b"], b'["a","b"]'),
        ({"b": 1, "a": 2}, b'{"a":2,"b":1}'),
        ("<&>", b'"\\u003c\\u0026\\u003e"'),
        ("f\u00f3o\u2028", '"f\u00f3o\\u2028"'.encode()),
        (None, b"null"),
    ],
)
def test_go_json(value: object, expected: bytes) -> None:
    assert encoding.go_json(value) == expected


def test_getter_payloads() -> None:
    assert encoding.node_names_json(None) == b"[]"
    assert encoding.node_names_json([SimpleNamespace(name="x"), "y"]) == b'["x","y"]'
    statuses = NodeToStatus(Status(3))
    statuses.set("z", Status(2))
    statuses.set("a", Status(0))
    assert encoding.status_map_json(statuses) == b'{"a":0,"z":2}'
    assert encoding.status_map_json(None) == b"{}"
    scores = [NodeScore("b", 1), NodeScore("a", 2), NodeScore("b", 3)]
    assert encoding.score_map_json(scores) == b'{"a":2,"b":3}'


def test_image_states_keep_go_field_order() -> None:
    info = SimpleNamespace(
        image_states={
            "img:2": ImageStateSummary(5, 1),
            "img:1": ImageStateSummary(100, 2, frozenset({"n2", "n1"})),
        }
    )
    assert encoding.image_states_json(info) == (
        b'{"img:1":{"Size":100,"NumNodes":2,"Nodes":{"n1":{},"n2":{}}},'
        b'"img:2":{"Size":5,"NumNodes":1,"Nodes":null}}'
    )
    assert encoding.image_states_json(SimpleNamespace(image_states={})) == b"{}"
    assert encoding.image_states_json(None) == b"null"
