"""Kubernetes protobuf wire encoding of Pod, Node and NodeList manifests, and of the live
mode's write bodies (v1 Binding, events.k8s.io/v1 Event).

Guests receive ``k8s.io.api.core.v1.Pod`` / ``Node`` / ``NodeList`` as raw
message bytes (no ``k8s\\0`` envelope: kube-scheduler-wasm-extension
scheduler/plugin/host.go: k8sApiPodFn, k8sApiNodeFn and k8sApiNodeListFn write the
message's Marshal() output to guest memory).  The bytes mimic
Kubernetes' generated (gogo-style) marshallers:

* every non-pointer Go field is written even when zero/empty (strings, ints,
  bools, embedded structs such as ``metadata``/``spec``/``status``,
  ``Container.resources``, ``ContainerStatus.state``, non-pointer ``Time``s);
  pointer fields (``*int64``, ``*bool``, ``*string``, pointer structs) only
  when the manifest sets them (a present key with a non-null value);
* fields in ascending field-number order, maps as repeated entry messages
  ``{key=1, value=2}`` in sorted key order, repeated fields in manifest order,
  repeated integers unpacked (proto2);
* ``metav1.Time`` is ``{seconds=1, nanos=2}`` with nanos always 0 (upstream
  drops sub-second precision); the zero time (or a null non-pointer time) is
  an empty message;
* ``resource.Quantity`` is ``{string=1}``.  We emit the manifest's string as
  written (numbers via ``str``), *not* Kubernetes' canonical form: "1000m"
  stays "1000m" where the API server would say "1".  A missing non-pointer
  quantity is "0" (``Quantity{}.String()``);
* ``IntOrString`` is ``{type=1, intVal=2, strVal=3}``, all three written;
* ``ObjectMeta`` field 15 (the deprecated clusterName) is always written empty,
  as upstream still does.

Field numbers follow upstream ``core/v1/generated.proto`` (v1.35 era; newer
fields such as ``observedGeneration`` are included, guests skip unknown ones)
and pointer-ness follows ``types.go``.  Not encoded (ignored like any unknown
key): ``metadata.managedFields``, ``spec.workloadRef``,
``status.extendedResourceClaimStatus``, projected ``podCertificate`` sources
and the rarely used volume sources (cephfs, fc, flocker, flexVolume, quobyte,
vsphereVolume, photonPersistentDisk, portworxVolume, scaleIO, storageos,
glusterfs).  Unknown manifest keys are ignored; values of the wrong type raise
:class:`ProtobufEncodeError` naming the field path.

:func:`encode_object` writes a request body for the API server: the object's message in
the ``k8s\\0`` envelope (envelope.py), for the kinds of ``ENCODED_KINDS``, with
``metav1.MicroTime`` as seconds and nanos cut to microseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wasmsched.api.protobuf.binding import _BINDING
from wasmsched.api.protobuf.envelope import envelope
from wasmsched.api.protobuf.event import _EVENT
from wasmsched.api.protobuf.meta import _LIST_META
from wasmsched.api.protobuf.node import _NODE
from wasmsched.api.protobuf.pod import _POD
from wasmsched.api.protobuf.schema import _encode_message, _Message
from wasmsched.api.protobuf.wire import ProtobufEncodeError, _Fail, _mapping, _put_varint, _varint

__all__ = [
    "ENCODED_KINDS",
    "ProtobufEncodeError",
    "encode_node",
    "encode_node_list",
    "encode_object",
    "encode_pod",
]

# NodeList.metadata is an empty ListMeta, still written (its strings included).
_NODE_LIST_PREFIX = b"\x0a" + _varint(len(_LIST_META.empty)) + _LIST_META.empty
_NODE_LIST_ITEM_TAG = b"\x12"
# The request bodies encode_object writes, by (apiVersion, kind).
_REQUEST_BODIES = {("v1", "Binding"): _BINDING, ("events.k8s.io/v1", "Event"): _EVENT}
ENCODED_KINDS = frozenset(_REQUEST_BODIES)

# --------------------------------------------------------------------------- public API


def _encode_top(msg: _Message, manifest: Mapping[str, Any]) -> bytes:
    out = bytearray()
    try:
        _encode_message(msg, _mapping(manifest), out)
    except _Fail as err:
        path = ""
        for part in reversed(err.parts):
            path += part if part.startswith("[") or not path else "." + part
        raise ProtobufEncodeError(path or "<root>", err.reason) from None
    return bytes(out)


def encode_pod(manifest: Mapping[str, Any]) -> bytes:
    """Encode a Pod manifest (camelCase keys, as loaded from YAML) as ``k8s.io.api.core.v1.Pod``."""
    return _encode_top(_POD, manifest)


def encode_node(manifest: Mapping[str, Any]) -> bytes:
    """Encode a Node manifest as ``k8s.io.api.core.v1.Node``."""
    return _encode_top(_NODE, manifest)


def encode_node_list(encoded_nodes: Sequence[bytes]) -> bytes:
    """Wrap already-encoded Node messages as a ``NodeList`` without re-encoding them."""
    out = bytearray(_NODE_LIST_PREFIX)
    for node in encoded_nodes:
        out += _NODE_LIST_ITEM_TAG
        _put_varint(out, len(node))
        out += node
    return bytes(out)


def encode_object(manifest: Mapping[str, Any]) -> bytes:
    """A request body of a kind in ``ENCODED_KINDS`` (by its apiVersion and kind): its
    message in the ``k8s\\0`` envelope, as client-go sends it with a protobuf content type."""
    api_version, kind = manifest["apiVersion"], manifest["kind"]
    return envelope(api_version, kind, _encode_top(_REQUEST_BODIES[api_version, kind], manifest))
