"""Tests for wasmsched.api.protobuf against an independent protobuf schema.

The encoder's output is decoded with the ``protobuf`` library using
``tests/proto/k8s_core_subset.proto`` (hand-written from upstream, compiled at
test time with grpcio-tools' protoc).  Checks: values round-trip against the
YAML manifests, nothing decodes as an unknown field (wrong number or wire
type), and the bytes equal a canonical re-serialisation driven by the .proto
(ascending field numbers, sorted map keys, presence exactly as written).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet
from grpc_tools import protoc
from hypothesis import given, settings
from hypothesis import strategies as st

from wasmsched.api.protobuf import (
    encode_node,
    encode_node_list,
    encode_pod,
)

PROTO_DIR = Path(__file__).parent / "proto"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "real"
# Manifests that set every encoded field (the "kitchen sinks").
SINKS = Path(__file__).resolve().parent / "fixtures" / "protobuf"
PKG = "k8s.io.api.core.v1."

# Go structs embedded without a JSON name: their fields sit in the parent object.
INLINE_FIELDS = frozenset(
    {"handler", "localObjectReference", "volumeSource", "ephemeralContainerCommon", "volumeStatus"}
)


# --------------------------------------------------------------------------- schema loading


@pytest.fixture(scope="session")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], type[Message]]:
    out = tmp_path_factory.mktemp("proto") / "k8s.pb"
    rc = protoc.main(
        ["protoc", f"-I{PROTO_DIR}", f"--descriptor_set_out={out}", "k8s_core_subset.proto"]
    )
    assert rc == 0, "protoc failed to compile tests/proto/k8s_core_subset.proto"
    pool = descriptor_pool.DescriptorPool()
    for proto in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(proto)

    def get(name: str) -> type[Message]:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(PKG + name))

    return get


@pytest.fixture(scope="session")
def pod_cls(classes: Callable[[str], type[Message]]) -> type[Message]:
    return classes("Pod")


@pytest.fixture(scope="session")
def node_cls(classes: Callable[[str], type[Message]]) -> type[Message]:
    return classes("Node")


# --------------------------------------------------------------------------- independent helpers


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _is_map(fd: FieldDescriptor) -> bool:
    return bool(fd.type == FieldDescriptor.TYPE_MESSAGE and fd.message_type.GetOptions().map_entry)


def _field_bytes(number: int, fd: FieldDescriptor, value: Any) -> bytes:
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        payload = canonical(value)
    elif fd.type == FieldDescriptor.TYPE_STRING:
        payload = value.encode("utf-8")
    elif fd.type in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64):
        return _varint(number << 3) + _varint(value)
    elif fd.type == FieldDescriptor.TYPE_BOOL:
        return _varint(number << 3) + _varint(int(value))
    else:  # pragma: no cover - the subset schema uses no other types
        raise AssertionError(fd.type)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def canonical(msg: Message) -> bytes:
    """gogo-style bytes of a decoded message: ascending numbers, sorted map keys, set fields."""
    out = bytearray()
    for fd in sorted(msg.DESCRIPTOR.fields, key=lambda f: f.number):
        value = getattr(msg, fd.name)
        if _is_map(fd):
            key_fd = fd.message_type.fields_by_name["key"]
            value_fd = fd.message_type.fields_by_name["value"]
            for key in sorted(value, key=lambda k: k.encode("utf-8")):
                entry = _field_bytes(1, key_fd, key) + _field_bytes(2, value_fd, value[key])
                out += _varint(fd.number << 3 | 2) + _varint(len(entry)) + entry
        elif fd.is_repeated:
            for item in value:
                out += _field_bytes(fd.number, fd, item)
        elif msg.HasField(fd.name):
            out += _field_bytes(fd.number, fd, value)
    return bytes(out)


def assert_no_unknown_fields(msg: Message, path: str = "") -> None:
    """A wrong field number or wire type decodes as an unknown field."""
    unknown = UnknownFieldSet(msg)
    assert len(unknown) == 0, (
        f"{path or '<root>'}: unknown fields {[f.field_number for f in unknown]}"
    )
    for fd, value in msg.ListFields():
        if fd.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if _is_map(fd):
            if fd.message_type.fields_by_name["value"].type == FieldDescriptor.TYPE_MESSAGE:
                for key, item in value.items():
                    assert_no_unknown_fields(item, f"{path}.{fd.name}[{key}]")
        elif fd.is_repeated:
            for index, item in enumerate(value):
                assert_no_unknown_fields(item, f"{path}.{fd.name}[{index}]")
        else:
            assert_no_unknown_fields(value, f"{path}.{fd.name}")


def wire_fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, int or bytes) for each field of a raw message."""
    pos = 0

    def read_varint() -> int:
        nonlocal pos
        shift = result = 0
        while True:
            byte = buf[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return result

    while pos < len(buf):
        key = read_varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            yield number, wire, read_varint()
        elif wire == 2:
            size = read_varint()
            yield number, wire, buf[pos : pos + size]
            pos += size
        else:  # pragma: no cover
            raise AssertionError(f"unexpected wire type {wire}")


def epoch(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def assert_matches(msg: Message, value: Mapping[str, Any], path: str) -> None:
    """Every key of a manifest object is a schema field whose decoded value equals it."""
    for key, item in value.items():
        owner = msg
        if key not in msg.DESCRIPTOR.fields_by_name:
            hosts = [
                f
                for f in msg.DESCRIPTOR.fields
                if f.name in INLINE_FIELDS and key in f.message_type.fields_by_name
            ]
            assert hosts, f"{path}.{key}: not in the test schema"
            owner = getattr(msg, hosts[0].name)
        assert_field(owner, owner.DESCRIPTOR.fields_by_name[key], item, f"{path}.{key}")


def assert_field(msg: Message, fd: FieldDescriptor, item: Any, path: str) -> None:
    got = getattr(msg, fd.name)
    if _is_map(fd):
        assert sorted(got) == sorted(item or {}), path
        for key, expected in (item or {}).items():
            if fd.message_type.fields_by_name["value"].type == FieldDescriptor.TYPE_MESSAGE:
                assert got[key].string == str(expected), f"{path}[{key}]"
            else:
                assert got[key] == expected, f"{path}[{key}]"
    elif fd.is_repeated:
        assert len(got) == len(item or []), path
        for index, (element, expected) in enumerate(zip(got, item or [], strict=True)):
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                assert_matches(element, expected or {}, f"{path}[{index}]")
            else:
                assert element == expected, f"{path}[{index}]"
    elif fd.type == FieldDescriptor.TYPE_MESSAGE:
        kind = fd.message_type.name
        if item is None:  # null: absent (pointer) or an empty message (non-pointer Time)
            assert not msg.HasField(fd.name) or got.ListFields() == [], path
        elif kind == "Time":
            assert msg.HasField(fd.name), path
            assert (got.seconds, got.nanos) == (epoch(item), 0), path
        elif kind == "Quantity":
            assert got.string == str(item), path
        elif kind == "IntOrString":
            if isinstance(item, str):
                assert (got.type, got.intVal, got.strVal) == (1, 0, item), path
            else:
                assert (got.type, got.intVal, got.strVal) == (0, item, ""), path
        else:
            assert msg.HasField(fd.name), path
            assert_matches(got, item, path)
    else:
        assert msg.HasField(fd.name), path
        assert got == item, path


def check_round_trip(cls: type[Message], raw: bytes, manifest: Mapping[str, Any]) -> Message:
    decoded = cls.FromString(raw)
    assert_no_unknown_fields(decoded)
    assert canonical(decoded) == raw
    assert_matches(
        decoded, {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind")}, ""
    )
    return decoded


def load(name: str, folder: Path = FIXTURES) -> dict[str, Any]:
    data = yaml.safe_load((folder / name).read_text())
    assert isinstance(data, dict)
    return data


# --------------------------------------------------------------------------- manifests

KITCHEN_SINK_POD = load("kitchen_sink_pod.yaml", SINKS)

KITCHEN_SINK_NODE = load("kitchen_sink_node.yaml", SINKS)


# --------------------------------------------------------------------------- fixtures round-trip


def test_real_pod_fixture_round_trips(pod_cls: type[Message]) -> None:
    manifest = load("pod.yaml")
    decoded = check_round_trip(pod_cls, encode_pod(manifest), manifest)
    # a few fields of the real pod of kube-scheduler-wasm-extension
    # scheduler/test/testdata/yaml/pod.yaml (PodReal in its guest benchmarks)
    assert decoded.metadata.name == "hoge-custom-controller-d87b6785d-c8bqf"
    assert decoded.metadata.uid == "3ba2f153-7785-4c13-9d2d-d1661572f930"
    assert [c.image for c in decoded.spec.initContainers] == ["curlimages/curl:7.78.0"]
    assert decoded.metadata.creationTimestamp.seconds == 1684543588


def test_real_node_fixture_round_trips(node_cls: type[Message]) -> None:
    manifest = load("node.yaml")
    decoded = check_round_trip(node_cls, encode_node(manifest), manifest)
    assert decoded.status.images[1].names == ["test-image:v1"]
    assert decoded.status.daemonEndpoints.kubeletEndpoint.Port == 10250
    assert decoded.metadata.creationTimestamp.seconds == 1684294952


def test_kitchen_sink_pod_round_trips(pod_cls: type[Message]) -> None:
    manifest = KITCHEN_SINK_POD
    decoded = check_round_trip(pod_cls, encode_pod(manifest), manifest)
    spec = decoded.spec
    assert (
        spec.HasField("terminationGracePeriodSeconds") and spec.terminationGracePeriodSeconds == 0
    )
    assert spec.priority == -5
    assert spec.volumes[1].volumeSource.emptyDir.sizeLimit.string == "1Gi"
    # the pointer sizeLimit is absent on an emptyDir without it
    assert not spec.volumes[2].volumeSource.emptyDir.HasField("sizeLimit")
    assert spec.volumes[1].volumeSource.HasField("emptyDir")
    assert not spec.volumes[1].volumeSource.HasField("hostPath")
    ephemeral = spec.ephemeralContainers[0]
    assert ephemeral.ephemeralContainerCommon.name == "debug"
    assert ephemeral.ephemeralContainerCommon.HasField("resources")
    # ResourceFieldSelector.divisor is non-pointer: "0" when unset
    projected = spec.volumes[16].volumeSource.projected
    assert not projected.sources[3].downwardAPI.items[0].HasField("resourceFieldRef")
    assert spec.containers[0].env[4].valueFrom.fieldRef.apiVersion == ""


def test_kitchen_sink_node_round_trips(node_cls: type[Message]) -> None:
    decoded = check_round_trip(node_cls, encode_node(KITCHEN_SINK_NODE), KITCHEN_SINK_NODE)
    assert decoded.status.capacity["pods"].string == "110"
    assert not decoded.spec.taints[0].HasField("timeAdded")
    assert decoded.spec.taints[1].timeAdded.seconds == epoch("2024-01-02T03:04:05Z")


# --------------------------------------------------------------------------- presence rules

EMPTY_POD_BYTES = bytes.fromhex(
    # metadata: name..resourceVersion "", generation 0, creationTimestamp {}, clusterName ""
    "0a12" "0a00" "1200" "1a00" "2200" "2a00" "3200" "3800" "4200" "7a00"
    # spec: restartPolicy, dnsPolicy, serviceAccountName, serviceAccount, nodeName, hostNetwork,
    # hostPID, hostIPC, hostname, subdomain, schedulerName, priorityClassName
    "121c" "1a00" "3200" "4200" "4a00" "5200" "5800" "6000" "6800"
    "820100" "8a0100" "9a0100" "c20100"
    # status: phase, message, reason, hostIP, podIP, qosClass, nominatedNodeName, resize,
    # observedGeneration
    "1a13" "0a00" "1a00" "2200" "2a00" "3200" "4a00" "5a00" "7200" "880100"
)  # fmt: skip


def test_empty_pod_writes_every_non_pointer_field(pod_cls: type[Message]) -> None:
    raw = encode_pod({})
    assert raw == EMPTY_POD_BYTES
    decoded = pod_cls.FromString(raw)
    for part in ("metadata", "spec", "status"):
        assert decoded.HasField(part)
    assert decoded.metadata.HasField("name") and decoded.metadata.HasField("creationTimestamp")
    assert decoded.metadata.creationTimestamp.ListFields() == []
    assert decoded.spec.HasField("nodeName") and decoded.status.HasField("phase")


def test_null_sections_are_written_like_missing_ones() -> None:
    assert encode_pod({"metadata": None, "spec": None, "status": None}) == EMPTY_POD_BYTES


def test_container_image_and_resources_present_when_empty(pod_cls: type[Message]) -> None:
    raw = encode_pod({"spec": {"containers": [{"name": "c"}], "initContainers": [{}]}})
    decoded = pod_cls.FromString(raw)
    for container in (decoded.spec.containers[0], decoded.spec.initContainers[0]):
        assert container.HasField("image") and container.image == ""
        assert container.HasField("resources")
        assert container.HasField("stdin") and container.HasField("terminationMessagePath")
        for pointer in ("livenessProbe", "securityContext", "lifecycle", "restartPolicy"):
            assert not container.HasField(pointer), pointer


POINTER_FIELDS = [
    ("metadata", "deletionTimestamp"),
    ("metadata", "deletionGracePeriodSeconds"),
    ("spec", "terminationGracePeriodSeconds"),
    ("spec", "activeDeadlineSeconds"),
    ("spec", "securityContext"),
    ("spec", "affinity"),
    ("spec", "automountServiceAccountToken"),
    ("spec", "priority"),
    ("spec", "dnsConfig"),
    ("spec", "shareProcessNamespace"),
    ("spec", "runtimeClassName"),
    ("spec", "enableServiceLinks"),
    ("spec", "preemptionPolicy"),
    ("spec", "setHostnameAsFQDN"),
    ("spec", "os"),
    ("spec", "hostUsers"),
    ("spec", "resources"),
    ("status", "startTime"),
    ("status", "resources"),
]


@pytest.mark.parametrize(("section", "field"), POINTER_FIELDS)
def test_pointer_fields_absent_unless_set(
    pod_cls: type[Message],
    section: str,
    field: str,
) -> None:
    unset = pod_cls.FromString(encode_pod({section: {field: None}}))
    assert not getattr(unset, section).HasField(field)
    # set (even to a zero value) means present
    value = KITCHEN_SINK_POD[section][field]
    assert value is not None
    setp = pod_cls.FromString(encode_pod({section: {field: value}}))
    assert getattr(setp, section).HasField(field)


NESTED_POINTERS: list[tuple[dict[str, Any], Callable[[Any], Message], str, str]] = [
    # (spec, message under test, unset pointer field, field that must be present or "")
    ({"tolerations": [{"key": "k"}]}, lambda s: s.tolerations[0], "tolerationSeconds", "value"),
    (
        {"containers": [{"livenessProbe": {"grpc": {"port": 1}}}]},
        lambda s: s.containers[0].livenessProbe.handler.grpc,
        "service",
        "port",
    ),
    (
        {"containers": [{"lifecycle": {"preStop": {}}}]},
        lambda s: s.containers[0].lifecycle,
        "postStart",
        "preStop",
    ),
    (
        {"dnsConfig": {"options": [{"name": "n"}]}},
        lambda s: s.dnsConfig.options[0],
        "value",
        "name",
    ),
    (
        {"containers": [{"startupProbe": {}}]},
        lambda s: s.containers[0].startupProbe,
        "terminationGracePeriodSeconds",
        "handler",
    ),
    (
        {"volumes": [{"secret": {}}]},
        lambda s: s.volumes[0].volumeSource.secret,
        "defaultMode",
        "secretName",
    ),
    ({"volumes": [{"csi": {}}]}, lambda s: s.volumes[0].volumeSource.csi, "readOnly", "driver"),
    (
        {"containers": [{"securityContext": {}}]},
        lambda s: s.containers[0].securityContext,
        "privileged",
        "",
    ),
]


@pytest.mark.parametrize(("spec", "pick", "absent", "present"), NESTED_POINTERS)
def test_nested_pointer_fields_absent(
    pod_cls: type[Message],
    spec: dict[str, Any],
    pick: Callable[[Any], Message],
    absent: str,
    present: str,
) -> None:
    message = pick(pod_cls.FromString(encode_pod({"spec": spec})).spec)
    assert not message.HasField(absent)
    if present:
        assert message.HasField(present)


def test_zero_valued_pointer_scalars_are_written(pod_cls: type[Message]) -> None:
    spec = pod_cls.FromString(
        encode_pod({"spec": {"priority": 0, "enableServiceLinks": False, "runtimeClassName": ""}})
    ).spec
    assert spec.HasField("priority") and spec.priority == 0
    assert spec.HasField("enableServiceLinks") and spec.enableServiceLinks is False
    assert spec.HasField("runtimeClassName") and spec.runtimeClassName == ""


# --------------------------------------------------------------------------- wire details


def _object_meta_bytes(raw: bytes) -> bytes:
    return bytes(next(value for number, _, value in wire_fields(raw) if number == 1))


def test_map_entries_in_sorted_key_order() -> None:
    labels = {"b": "1", "a.b": "2", "a": "3", "B": "4", "é": "5", "z": "6", "": "7"}
    meta = _object_meta_bytes(encode_pod({"metadata": {"labels": labels}}))
    keys = []
    for number, wire, value in wire_fields(meta):
        if number == 11:
            assert wire == 2
            entry = list(wire_fields(value))
            assert [(n, w) for n, w, _ in entry] == [(1, 2), (2, 2)]
            keys.append(entry[0][2].decode())
            assert entry[1][2].decode() == labels[keys[-1]]
    assert keys == sorted(labels, key=lambda k: k.encode("utf-8"))
    assert keys[:4] == ["", "B", "a", "a.b"]


def test_top_level_field_numbers_ascend() -> None:
    raw = encode_pod(KITCHEN_SINK_POD | {"metadata": {"name": "x"}})
    spec = next(value for number, _, value in wire_fields(raw) if number == 2)
    numbers = [number for number, _, _ in wire_fields(spec)]
    assert numbers == sorted(numbers)
    assert numbers[0] == 1 and numbers[-1] == 41


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2G", "2G"), ("100m", "100m"), ("1000m", "1000m"), (110, "110"), (0.5, "0.5"), (2.0, "2")],
)
def test_quantities_written_as_given(node_cls: type[Message], value: Any, expected: str) -> None:
    decoded = node_cls.FromString(encode_node({"status": {"capacity": {"cpu": value}}}))
    assert decoded.status.capacity["cpu"].string == expected


def test_missing_non_pointer_quantity_is_zero(pod_cls: type[Message]) -> None:
    env = {"name": "X", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}
    spec = pod_cls.FromString(encode_pod({"spec": {"containers": [{"env": [env]}]}})).spec
    assert spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor.string == "0"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2023-05-20T00:46:28Z", 1684543588),
        ("2023-05-20T09:46:28+09:00", 1684543588),
        ("2023-05-20T00:46:28.999999Z", 1684543588),
        ("1970-01-01T00:00:00Z", 0),
        ("1969-12-31T23:59:59Z", -1),
        (dt.datetime(2023, 5, 20, 0, 46, 28, tzinfo=dt.UTC), 1684543588),
    ],
)
def test_timestamps_become_seconds(pod_cls: type[Message], value: Any, seconds: int) -> None:
    raw = encode_pod({"metadata": {"creationTimestamp": value}})
    created = pod_cls.FromString(raw).metadata.creationTimestamp
    assert created.HasField("seconds") and created.seconds == seconds
    assert created.HasField("nanos") and created.nanos == 0  # gogo writes nanos=0 too


def test_zero_time_is_an_empty_message(pod_cls: type[Message]) -> None:
    meta = pod_cls.FromString(
        encode_pod({"metadata": {"creationTimestamp": "0001-01-01T00:00:00Z"}})
    ).metadata
    assert meta.HasField("creationTimestamp") and meta.creationTimestamp.ListFields() == []


@pytest.mark.parametrize(
    ("port", "expected"),
    [(8080, (0, 8080, "")), ("http", (1, 0, "http")), (0, (0, 0, ""))],
)
def test_int_or_string_ports(
    pod_cls: type[Message], port: Any, expected: tuple[int, int, str]
) -> None:
    probe = {"httpGet": {"port": port}}
    raw = encode_pod({"spec": {"containers": [{"readinessProbe": probe}]}})
    got = pod_cls.FromString(raw).spec.containers[0].readinessProbe.handler.httpGet.port
    assert (got.type, got.intVal, got.strVal) == expected
    assert got.HasField("type") and got.HasField("intVal") and got.HasField("strVal")


def test_unknown_keys_are_ignored() -> None:
    plain = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    noisy = {
        "apiVersion": "v1",
        "kind": "Pod",
        "bogus": [1, 2],
        "metadata": {"name": "p", "managedFields": [{"manager": "kubectl"}], "x": {}},
        "spec": {"containers": [{"name": "c", "image": "i", "future": True}], "workloadRef": {}},
    }
    assert encode_pod(noisy) == encode_pod(plain)


# --------------------------------------------------------------------------- NodeList


def test_node_list_wraps_encoded_nodes(classes: Callable[[str], type[Message]]) -> None:
    nodes = [encode_node(load("node.yaml")), encode_node({}), encode_node(KITCHEN_SINK_NODE)]
    raw = encode_node_list(nodes)
    decoded = classes("NodeList").FromString(raw)
    assert_no_unknown_fields(decoded)
    assert canonical(decoded) == raw
    assert [item.SerializeToString() for item in decoded.items] == [
        classes("Node").FromString(node).SerializeToString() for node in nodes
    ]
    meta = decoded.metadata
    assert decoded.HasField("metadata")
    assert all(meta.HasField(f) for f in ("selfLink", "resourceVersion", "continue"))
    assert not meta.HasField("remainingItemCount")
    # the node bytes are embedded verbatim, in order
    items = [value for number, _, value in wire_fields(raw) if number == 2]
    assert items == nodes


def test_empty_node_list(classes: Callable[[str], type[Message]]) -> None:
    raw = encode_node_list([])
    decoded = classes("NodeList").FromString(raw)
    assert decoded.HasField("metadata") and len(decoded.items) == 0
    assert raw == bytes.fromhex("0a060a0012001a00")


# --------------------------------------------------------------------------- property test

_text = st.text(max_size=12)
_ports = st.lists(
    st.fixed_dictionaries(
        {"containerPort": st.integers(-(2**31), 2**31 - 1)},
        optional={"name": _text, "protocol": st.sampled_from(["TCP", "UDP"])},
    ),
    max_size=3,
)
_containers = st.lists(
    st.fixed_dictionaries(
        {"name": _text},
        optional={
            "image": _text,
            "command": st.lists(_text, max_size=3),
            "ports": _ports,
            "resources": st.fixed_dictionaries(
                {}, optional={"requests": st.dictionaries(_text, st.sampled_from(["1", "250m"]))}
            ),
        },
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(
    labels=st.dictionaries(_text, _text, max_size=6),
    annotations=st.dictionaries(_text, st.text(max_size=40), max_size=4),
    containers=_containers,
)
def test_random_labels_and_containers_round_trip(
    pod_cls: type[Message],
    labels: dict[str, str],
    annotations: dict[str, str],
    containers: list[dict[str, Any]],
) -> None:
    manifest = {
        "metadata": {"labels": labels, "annotations": annotations},
        "spec": {"containers": containers},
    }
    raw = encode_pod(manifest)
    decoded = check_round_trip(pod_cls, raw, manifest)
    assert dict(decoded.metadata.labels) == labels
    assert [c.image for c in decoded.spec.containers] == [c.get("image", "") for c in containers]
