"""Message tables of core/v1 Binding and ObjectReference (encoded only: the binding POST).

Field numbers from k8s.io/api core/v1/generated.proto; every field of both is a non-pointer
(core/v1/types.go), written even when empty (generated.pb.go: Binding.MarshalToSizedBuffer).
"""

from __future__ import annotations

from wasmsched.api.protobuf.meta import _OBJECT_META
from wasmsched.api.protobuf.schema import _Message, m, s

_OBJECT_REFERENCE = _Message(
    "ObjectReference",
    s("kind", 1), s("namespace", 2), s("name", 3), s("uid", 4), s("apiVersion", 5),
    s("resourceVersion", 6), s("fieldPath", 7),
)  # fmt: skip

_BINDING = _Message("Binding", m("metadata", 1, _OBJECT_META), m("target", 2, _OBJECT_REFERENCE))
