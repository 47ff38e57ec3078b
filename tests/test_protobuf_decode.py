"""The protobuf decoder (api/protobuf/decode.py, native/_protodecode.c) and the live mode's
protobuf watch: what the decoder gives for bytes our own encoder wrote, malformed bytes
(never a crash), and an informer reading a protobuf watch stream with its BOOKMARK and
ERROR events and the relist an expired one causes. The same dicts as the JSON of real
objects: tests/test_live_real_apiserver.py (test_protobuf_answers_decode_as_their_json)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wasmsched.api.protobuf import decode as pb
from wasmsched.api.protobuf import encode_node, encode_pod
from wasmsched.api.protobuf.meta import _STATUS
from wasmsched.api.protobuf.schema import _encode_message
from wasmsched.api.protobuf.wire import _varint
from wasmsched.live.client import RESOURCES, ApiError, _error_from, accepts_protobuf
from wasmsched.live.informer import Delta, Informer, InformerItem, Synced

pytestmark = pytest.mark.skipif(not pb.AVAILABLE, reason="the protobuf decoder is not built")


def field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def envelope(kind: str, raw: bytes, api_version: str = "v1") -> bytes:
    """runtime.Unknown behind the k8s\\0 magic, as the API server answers."""
    type_meta = field(1, api_version.encode()) + field(2, kind.encode())
    return b"k8s\0" + field(1, type_meta) + field(2, raw) + field(3, b"") + field(4, b"")


def frame(event_type: str, obj: bytes) -> bytes:
    """One watch frame: the length and a WatchEvent {type, object: RawExtension{raw}}."""
    event = field(1, event_type.encode()) + field(2, field(1, obj))
    return len(event).to_bytes(4, "big") + event


def status(code: int, reason: str, message: str) -> bytes:
    out = bytearray()
    body = {"status": "Failure", "message": message, "reason": reason, "code": code}
    _encode_message(_STATUS, body, out)
    return envelope("Status", bytes(out))


# The JSON the API server would write for these: every key one that JSON keeps.
POD: dict[str, Any] = {
    "metadata": {
        "name": "web-0",
        "namespace": "default",
        "uid": "u-1",
        "resourceVersion": "7",
        "creationTimestamp": "2024-02-29T23:59:59Z",
        "deletionTimestamp": "1969-12-31T23:59:58Z",
        "labels": {"app": "web", "": "empty-key"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                             "uid": "u-0", "controller": True}],
    },
    "spec": {
        "containers": [{
            "name": "c",
            "image": "pause",
            "ports": [{"containerPort": 0, "hostPort": 8080, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "100m", "memory": "1.5Gi"}, "limits": {"x/y": "0"}},
            "livenessProbe": {"httpGet": {"port": "http", "path": "/"}, "periodSeconds": 3},
            "readinessProbe": {"tcpSocket": {"port": 0}},
            "startupProbe": {"grpc": {"port": -1, "service": None}},
        }],
        "initContainers": [{"name": "side", "restartPolicy": "Always", "resources": {}}],
        "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": -5}],
        "priority": 0,
        "nodeSelector": {"zone": "a"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                       "whenUnsatisfiable": "DoNotSchedule"}],
        "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}},
                    {"name": "p", "persistentVolumeClaim": {"claimName": "c"}}],
    },
    "status": {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                        "lastTransitionTime": "2001-01-01T00:00:00Z"}],
    },
}  # fmt: skip
NODE: dict[str, Any] = {
    "metadata": {"name": "n", "creationTimestamp": "2030-12-31T12:00:00Z"},
    "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "unschedulable": True},
    "status": {
        "capacity": {"cpu": "4", "pods": "110"},
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
        "nodeInfo": {key: "" for key in (
            "machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
            "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion",
            "operatingSystem", "architecture")},
        "images": [{"names": None, "sizeBytes": 5}],
    },
}  # fmt: skip


def test_decodes_to_the_json_of_what_the_encoder_wrote() -> None:
    assert pb.decode(envelope("Pod", encode_pod(POD))) == {**POD, "kind": "Pod", "apiVersion": "v1"}
    assert pb.decode(envelope("Node", encode_node(NODE))) == {
        **NODE,
        "kind": "Node",
        "apiVersion": "v1",
    }


def test_lists_and_a_zero_creation_timestamp() -> None:
    pod = {"metadata": {"name": "a"}, "spec": {"containers": None}, "status": {}}
    items = field(2, encode_pod(pod)) * 2
    listed = pb.decode(envelope("PodList", field(1, field(2, b"12")) + items))
    assert listed == {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "12"},
        "items": [pod, pod],
    }
    empty = pb.decode(envelope("NodeList", field(1, b"")))
    assert empty["items"] == [] and empty["metadata"] == {}
    # 1.34 on leave a zero creationTimestamp out of their JSON; 1.33 writes null.
    old = pb.decode(envelope("Pod", encode_pod(pod)), omitzero=False)
    assert old["metadata"] == {"name": "a", "creationTimestamp": None}


def test_fields_a_newer_server_adds_are_skipped() -> None:
    newer = encode_pod(POD) + _varint(999 << 3 | 0) + b"\x05" + field(60, b"\x01\x02")
    assert pb.decode(envelope("Pod", newer)) == pb.decode(envelope("Pod", encode_pod(POD)))


def test_kinds_without_a_decoder_and_foreign_bytes_are_refused() -> None:
    with pytest.raises(pb.ProtobufDecodeError, match="cannot decode kind 'ConfigMap'"):
        pb.decode(envelope("ConfigMap", b""))
    with pytest.raises(pb.ProtobufDecodeError, match="no k8s"):
        pb.decode(b'{"kind": "Pod"}')


VALID = envelope("Pod", encode_pod(POD))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), max_size=6),
    st.integers(4, len(VALID)),
    st.binary(max_size=64),
)
def test_malformed_bytes_raise_a_clean_error(
    flips: list[tuple[int, int]], cut: int, noise: bytes
) -> None:
    """Changed bytes, a cut, noise appended: a dict or ProtobufDecodeError, never a crash."""
    data = bytearray(VALID)
    for pos, value in flips:
        data[pos] = value
    for candidate in (bytes(data[:cut]), bytes(data) + noise, b"k8s\0" + noise):
        try:
            assert isinstance(pb.decode(candidate), dict)
        except pb.ProtobufDecodeError as err:
            assert "\n" not in str(err)
        with contextlib.suppress(pb.ProtobufDecodeError):
            pb.decode_watch_frames(iter([len(candidate).to_bytes(4, "big"), candidate]), id)


def test_a_watch_stream_cut_inside_a_frame_or_too_large_is_an_error() -> None:
    whole = frame("ADDED", VALID)
    with pytest.raises(pb.ProtobufDecodeError, match="ended inside a frame"):
        pb.decode_watch_frames(iter([whole[:-1]]), id)
    with pytest.raises(pb.ProtobufDecodeError, match="too large"):
        pb.decode_watch_frames(iter([b"\xff\xff\xff\xff"]), id)


def test_protobuf_error_answers_are_api_errors() -> None:
    err = _error_from(404, status(404, "NotFound", 'pods "x" not found'), True)
    assert (err.status, err.reason, err.message) == (404, "NotFound", 'pods "x" not found')


def test_client_connection_content_types() -> None:
    assert accepts_protobuf("application/vnd.kubernetes.protobuf")
    assert not accepts_protobuf("application/json")
    # acceptContentTypes, when set, is the Accept header (client-go setAcceptHeader)
    assert not accepts_protobuf("application/vnd.kubernetes.protobuf", "application/json")
    assert accepts_protobuf("application/json", "application/vnd.kubernetes.protobuf")


def _pod(name: str, rv: str) -> bytes:
    return envelope(
        "Pod",
        encode_pod({"metadata": {"name": name, "namespace": "default", "uid": name,
                                 "resourceVersion": rv}}),
    )  # fmt: skip


class _Response:
    def __init__(self, chunks: list[bytes], stop: threading.Event | None) -> None:
        self.headers = {"content-type": "application/vnd.kubernetes.protobuf;stream=watch"}
        self.chunks = chunks
        self.stop = stop

    def iter_bytes(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.stop is not None:
            self.stop.wait(10)

    def close(self) -> None:
        if self.stop is not None:
            self.stop.set()


class _Api:
    """list() and a protobuf stream(): a first watch with an add, an update and a bookmark
    that ends; a second one with a 410 ERROR; the relist; then a third watch that waits."""

    omitzero = True

    def __init__(self) -> None:
        first = (
            frame("ADDED", _pod("a", "2"))
            + frame("MODIFIED", _pod("a", "6"))
            + frame("BOOKMARK", _pod("", "9"))
        )
        # Frames split across chunks at every few bytes, as a socket may deliver them.
        self.watches = [
            [first[i : i + 7] for i in range(0, len(first), 7)],
            [frame("ERROR", status(410, "Expired", "too old resource version: 9 (12)"))],
            [],
        ]
        self.lists = [([], "1"), ([{"metadata": {"name": "b", "namespace": "default",
                                                "uid": "b", "resourceVersion": "10"}}], "10")]  # fmt: skip
        self.params: list[dict[str, str]] = []
        self.accepted: list[str] = []
        self.stop = threading.Event()

    def accept(self, resource: Any) -> str:
        return "application/vnd.kubernetes.protobuf,application/json"

    def list(self, resource: Any, page_size: int, params: Any) -> tuple[list[Any], str]:
        return self.lists.pop(0)

    @contextmanager
    def stream(
        self, path: str, params: dict[str, str], read_timeout: float, accept: str
    ) -> Iterator[_Response]:
        self.params.append(dict(params))
        self.accepted.append(accept)
        chunks = self.watches.pop(0)
        yield _Response(chunks, None if chunks else self.stop)


def test_informer_reads_a_protobuf_watch_with_bookmarks_errors_and_a_relist() -> None:
    api = _Api()
    items: list[InformerItem] = []
    informer = Informer(api, RESOURCES["Pod"], items.append)  # type: ignore[arg-type]
    informer.start()
    try:
        deadline = threading.Event()
        for _ in range(100):
            if len(api.params) == 3:
                break
            deadline.wait(0.05)
    finally:
        informer.stop()
        api.stop.set()
        informer.join(5)
    # the second watch resumes from the bookmark; the third from the relist
    assert [p["resourceVersion"] for p in api.params] == ["1", "9", "10"]
    assert set(api.accepted) == {"application/vnd.kubernetes.protobuf,application/json"}
    changes = [
        (
            "add" if i.old is None else "delete" if i.new is None else "update",
            (i.new or i.old or {})["metadata"]["name"],
            (i.new or i.old or {})["metadata"]["resourceVersion"],
        )
        for i in items
        if isinstance(i, Delta)
    ]
    # the add and the update from the watch; the relist's delete of a and add of b
    assert changes == [("add", "a", "2"), ("update", "a", "6"), ("delete", "a", "6"),
                       ("add", "b", "10")]  # fmt: skip
    assert isinstance(items[0], Synced)
    assert informer.relists == 2


def test_expired_status_is_gone() -> None:
    err = _error_from(410, status(410, "Expired", "too old"), True)
    assert isinstance(err, ApiError) and err.gone
