"""Kubernetes protobuf wire encoding of Pod, Node and NodeList manifests.

Guests receive ``k8s.io.api.core.v1.Pod`` / ``Node`` / ``NodeList`` as raw
message bytes (no ``k8s\\0`` envelope, abi.md section 6).  The bytes mimic
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
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from wasmsched.errors import InputError, InternalError

__all__ = ["ProtobufEncodeError", "encode_node", "encode_node_list", "encode_pod"]


class ProtobufEncodeError(InputError):
    """A manifest value cannot be encoded; ``path`` names the field."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class _Fail(InternalError):
    """Internal error carrying the path, collected innermost-first while unwinding."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.parts: list[str] = []


# --------------------------------------------------------------------------- wire helpers

_MASK64 = (1 << 64) - 1
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
_WT_VARINT = 0
_WT_LEN = 2


def _varint(value: int) -> bytes:
    out = bytearray()
    _put_varint(out, value)
    return bytes(out)


def _put_varint(out: bytearray, value: int) -> None:
    # Negative ints are sign-extended to 64 bits, as Go's uint64(int32/int64) does.
    if value < 0:
        value &= _MASK64
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _fail(expected: str, value: Any) -> NoReturn:
    raise _Fail(f"expected {expected}, got {_short(value)}")


def _utf8(value: Any) -> bytes:
    if not isinstance(value, str):
        _fail("string", value)
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Fail(f"string is not valid unicode: {_short(value)}") from None


def _integer(value: Any, lo: int, hi: int, width: str) -> int:
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail("integer", value)
        if isinstance(value, float) and not value.is_integer():
            _fail("integer", value)
        value = int(value)
    if not lo <= value <= hi:
        raise _Fail(f"integer out of {width} range: {value}")
    return int(value)


def _quantity_text(value: Any) -> bytes:
    # Written as given (see module docstring); numbers from unquoted YAML are stringified.
    if isinstance(value, str):
        return _utf8(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail("quantity (string or number)", value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).encode("ascii")


_UTC = _dt.UTC
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_ZERO_TIME = _dt.datetime(1, 1, 1, tzinfo=_UTC)
_SECOND = _dt.timedelta(seconds=1)


def _time_payload(value: Any) -> bytes:
    """Inner bytes of a metav1.Time: empty for the zero time, else seconds and nanos=0."""
    if isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, _dt.date):
        moment = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = _dt.datetime.fromisoformat(value)
        except ValueError:
            raise _Fail(f"invalid RFC3339 timestamp: {_short(value)}") from None
    else:
        _fail("RFC3339 timestamp", value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_UTC)
    if moment == _ZERO_TIME:
        return b""
    seconds = (moment - _EPOCH) // _SECOND
    out = bytearray(b"\x08")
    _put_varint(out, seconds)
    out += b"\x10\x00"
    return bytes(out)


def _seq(value: Any) -> Sequence[Any]:
    if isinstance(value, (list, tuple)):
        return value
    _fail("list", value)


def _mapping(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    _fail("mapping", value)


# --------------------------------------------------------------------------- schema

# Field kinds.
_STR, _I32, _I64, _BOOL = 0, 1, 2, 3
_MSG, _INLINE, _QTY, _TIME, _IOS = 4, 5, 6, 7, 8
_RSTR, _RMSG, _RI32, _RI64 = 9, 10, 11, 12
_MAP_SS, _MAP_QTY = 13, 14

_WIRE = {
    _STR: _WT_LEN, _I32: _WT_VARINT, _I64: _WT_VARINT, _BOOL: _WT_VARINT,
    _MSG: _WT_LEN, _INLINE: _WT_LEN, _QTY: _WT_LEN, _TIME: _WT_LEN, _IOS: _WT_LEN,
    _RSTR: _WT_LEN, _RMSG: _WT_LEN, _RI32: _WT_VARINT, _RI64: _WT_VARINT,
    _MAP_SS: _WT_LEN, _MAP_QTY: _WT_LEN,
}  # fmt: skip

OPT = True  # marks a Go pointer field: written only when set

# A declared field: (json key, field number, kind, sub-message, pointer?)
_Decl = tuple[str | None, int, int, "_Message | None", bool]
# A compiled field: (json key, tag bytes, kind, sub-message, bytes written when unset)
_Compiled = tuple[str | None, bytes, int, "_Message | None", bytes]


class _Message:
    """One protobuf message: fields sorted by number, plus its all-defaults encoding."""

    __slots__ = ("empty", "fields", "name")

    def __init__(self, name: str, *decls: _Decl) -> None:
        self.name = name
        numbers = [d[1] for d in decls]
        if len(set(numbers)) != len(numbers):
            raise AssertionError(f"duplicate field number in {name}")
        fields: list[_Compiled] = []
        for key, number, kind, sub, pointer in sorted(decls, key=lambda d: d[1]):
            tag = _varint((number << 3) | _WIRE[kind])
            fields.append((key, tag, kind, sub, b"" if pointer else _default(kind, tag, sub)))
        self.fields: tuple[_Compiled, ...] = tuple(fields)
        buf = bytearray()
        _encode_message(self, {}, buf)
        self.empty = bytes(buf)


def _default(kind: int, tag: bytes, sub: _Message | None) -> bytes:
    """Bytes gogo writes for an unset non-pointer field of this kind."""
    if kind in (_STR, _I32, _I64, _BOOL, _TIME):
        return tag + b"\x00"
    if kind in (_MSG, _INLINE):
        assert sub is not None
        return tag + _varint(len(sub.empty)) + sub.empty
    if kind == _QTY:
        return tag + b"\x03\x0a\x010"  # Quantity{string: "0"}
    if kind == _IOS:
        return tag + b"\x06\x08\x00\x10\x00\x1a\x00"
    return b""  # repeated fields and maps: nothing


def s(key: str, number: int, pointer: bool = False) -> _Decl:
    return (key, number, _STR, None, pointer)


def i32(key: str, number: int, pointer: bool = False) -> _Decl:
    return (key, number, _I32, None, pointer)


def i64(key: str, number: int, pointer: bool = False) -> _Decl:
    return (key, number, _I64, None, pointer)


def b(key: str, number: int, pointer: bool = False) -> _Decl:
    return (key, number, _BOOL, None, pointer)


def m(key: str, number: int, sub: _Message, pointer: bool = False) -> _Decl:
    return (key, number, _MSG, sub, pointer)


def inline(number: int, sub: _Message) -> _Decl:
    """An embedded Go struct whose JSON fields sit in the parent object."""
    return (None, number, _INLINE, sub, False)


def q(key: str, number: int, pointer: bool = False) -> _Decl:
    return (key, number, _QTY, None, pointer)


def t(key: str, number: int, pointer: bool = False) -> _Decl:
    return (key, number, _TIME, None, pointer)


def ios(key: str, number: int) -> _Decl:
    return (key, number, _IOS, None, False)


def rs(key: str, number: int) -> _Decl:
    return (key, number, _RSTR, None, False)


def rm(key: str, number: int, sub: _Message) -> _Decl:
    return (key, number, _RMSG, sub, False)


def ri32(key: str, number: int) -> _Decl:
    return (key, number, _RI32, None, False)


def ri64(key: str, number: int) -> _Decl:
    return (key, number, _RI64, None, False)


def mss(key: str, number: int) -> _Decl:
    return (key, number, _MAP_SS, None, False)


def mq(key: str, number: int) -> _Decl:
    return (key, number, _MAP_QTY, None, False)


# --------------------------------------------------------------------------- encoder


def _put_len(out: bytearray, tag: bytes, payload: bytes | bytearray) -> None:
    out += tag
    _put_varint(out, len(payload))
    out += payload


def _encode_message(msg: _Message, obj: Mapping[str, Any], out: bytearray) -> None:
    key: str | None = None
    try:
        get = obj.get
        for key, tag, kind, sub, unset in msg.fields:
            if kind == _INLINE:
                assert sub is not None
                buf = bytearray()
                _encode_message(sub, obj, buf)
                _put_len(out, tag, buf)
                continue
            value = get(key)  # type: ignore[arg-type]
            if value is None:
                out += unset
            elif kind == _STR:
                _put_len(out, tag, _utf8(value))
            elif kind == _MSG:
                assert sub is not None
                buf = bytearray()
                _encode_message(sub, _mapping(value), buf)
                _put_len(out, tag, buf)
            elif kind == _RMSG:
                assert sub is not None
                _encode_repeated_messages(sub, tag, _seq(value), out)
            elif kind in (_I32, _I64):
                if kind == _I32:
                    number = _integer(value, _I32_MIN, _I32_MAX, "int32")
                else:
                    number = _integer(value, _I64_MIN, _I64_MAX, "int64")
                out += tag
                _put_varint(out, number)
            elif kind == _BOOL:
                if value is not True and value is not False:
                    _fail("boolean", value)
                out += tag
                out.append(1 if value else 0)
            elif kind in (_MAP_SS, _MAP_QTY):
                _encode_map(tag, _mapping(value), kind == _MAP_QTY, out)
            elif kind == _RSTR:
                for index, item in enumerate(_seq(value)):
                    try:
                        _put_len(out, tag, b"" if item is None else _utf8(item))
                    except _Fail as err:
                        err.parts.append(f"[{index}]")
                        raise
            elif kind == _TIME:
                _put_len(out, tag, _time_payload(value))
            elif kind == _QTY:
                _put_len(out, tag, _quantity_payload(value))
            elif kind == _IOS:
                _put_len(out, tag, _int_or_string_payload(value))
            else:  # _RI32 / _RI64
                lo, hi, width = (
                    (_I32_MIN, _I32_MAX, "int32")
                    if kind == _RI32
                    else (_I64_MIN, _I64_MAX, "int64")
                )
                for index, item in enumerate(_seq(value)):
                    try:
                        number = _integer(item, lo, hi, width)
                    except _Fail as err:
                        err.parts.append(f"[{index}]")
                        raise
                    out += tag
                    _put_varint(out, number)
    except _Fail as err:
        if key is not None:
            err.parts.append(key)
        raise


def _encode_repeated_messages(
    sub: _Message, tag: bytes, items: Sequence[Any], out: bytearray
) -> None:
    for index, item in enumerate(items):
        try:
            if item is None:  # a null list element decodes to the zero struct in Go
                _put_len(out, tag, sub.empty)
                continue
            buf = bytearray()
            _encode_message(sub, _mapping(item), buf)
            _put_len(out, tag, buf)
        except _Fail as err:
            err.parts.append(f"[{index}]")
            raise


_QTY_ZERO = b"\x0a\x010"


def _quantity_payload(value: Any) -> bytes:
    text = _quantity_text(value)
    out = bytearray(b"\x0a")
    _put_varint(out, len(text))
    out += text
    return bytes(out)


def _int_or_string_payload(value: Any) -> bytes:
    if isinstance(value, str):
        text = _utf8(value)
        out = bytearray(b"\x08\x01\x10\x00\x1a")
        _put_varint(out, len(text))
        out += text
        return bytes(out)
    number = _integer(value, _I32_MIN, _I32_MAX, "int32")
    out = bytearray(b"\x08\x00\x10")
    _put_varint(out, number)
    out += b"\x1a\x00"
    return bytes(out)


def _encode_map(tag: bytes, value: Mapping[str, Any], quantities: bool, out: bytearray) -> None:
    for key in value:
        if not isinstance(key, str):
            raise _Fail(f"map key must be a string, got {_short(key)}")
    # gogo sorts keys bytewise; code-point order of str is the same as UTF-8 byte order.
    for key in sorted(value):
        item = value[key]
        try:
            if quantities:
                # a null quantity is Quantity{}, whose String() is "0"
                payload = _QTY_ZERO if item is None else _quantity_payload(item)
            else:
                payload = b"" if item is None else _utf8(item)
        except _Fail as err:
            err.parts.append(f"[{key!r}]")
            raise
        key_bytes = _utf8(key)
        entry = bytearray(b"\x0a")
        _put_varint(entry, len(key_bytes))
        entry += key_bytes
        entry.append(0x12)
        _put_varint(entry, len(payload))
        entry += payload
        _put_len(out, tag, entry)


# --------------------------------------------------------------------------- meta/v1

_OWNER_REFERENCE = _Message(
    "OwnerReference",
    s("kind", 1), s("name", 3), s("uid", 4), s("apiVersion", 5),
    b("controller", 6, OPT), b("blockOwnerDeletion", 7, OPT),
)  # fmt: skip

_OBJECT_META = _Message(
    "ObjectMeta",
    s("name", 1), s("generateName", 2), s("namespace", 3), s("selfLink", 4), s("uid", 5),
    s("resourceVersion", 6), i64("generation", 7), t("creationTimestamp", 8),
    t("deletionTimestamp", 9, OPT), i64("deletionGracePeriodSeconds", 10, OPT),
    mss("labels", 11), mss("annotations", 12), rm("ownerReferences", 13, _OWNER_REFERENCE),
    rs("finalizers", 14), s("zz_deprecatedClusterName", 15),
)  # fmt: skip

_LIST_META = _Message(
    "ListMeta",
    s("selfLink", 1), s("resourceVersion", 2), s("continue", 3),
    i64("remainingItemCount", 4, OPT),
)  # fmt: skip

_LABEL_SELECTOR_REQUIREMENT = _Message(
    "LabelSelectorRequirement", s("key", 1), s("operator", 2), rs("values", 3)
)
_LABEL_SELECTOR = _Message(
    "LabelSelector", mss("matchLabels", 1), rm("matchExpressions", 2, _LABEL_SELECTOR_REQUIREMENT)
)

# --------------------------------------------------------------------------- core/v1: containers

_LOCAL_OBJECT_REFERENCE = _Message("LocalObjectReference", s("name", 1))
_OBJECT_FIELD_SELECTOR = _Message("ObjectFieldSelector", s("apiVersion", 1), s("fieldPath", 2))
_RESOURCE_FIELD_SELECTOR = _Message(
    "ResourceFieldSelector", s("containerName", 1), s("resource", 2), q("divisor", 3)
)
_CONFIG_MAP_KEY_SELECTOR = _Message(
    "ConfigMapKeySelector",
    inline(1, _LOCAL_OBJECT_REFERENCE), s("key", 2), b("optional", 3, OPT),
)  # fmt: skip
_SECRET_KEY_SELECTOR = _Message(
    "SecretKeySelector",
    inline(1, _LOCAL_OBJECT_REFERENCE), s("key", 2), b("optional", 3, OPT),
)  # fmt: skip
_FILE_KEY_SELECTOR = _Message(
    "FileKeySelector",
    s("volumeName", 1), s("path", 2), s("key", 3), b("optional", 4, OPT),
)  # fmt: skip
_ENV_VAR_SOURCE = _Message(
    "EnvVarSource",
    m("fieldRef", 1, _OBJECT_FIELD_SELECTOR, OPT),
    m("resourceFieldRef", 2, _RESOURCE_FIELD_SELECTOR, OPT),
    m("configMapKeyRef", 3, _CONFIG_MAP_KEY_SELECTOR, OPT),
    m("secretKeyRef", 4, _SECRET_KEY_SELECTOR, OPT),
    m("fileKeyRef", 5, _FILE_KEY_SELECTOR, OPT),
)
_ENV_VAR = _Message("EnvVar", s("name", 1), s("value", 2), m("valueFrom", 3, _ENV_VAR_SOURCE, OPT))
_CONFIG_MAP_ENV_SOURCE = _Message(
    "ConfigMapEnvSource", inline(1, _LOCAL_OBJECT_REFERENCE), b("optional", 2, OPT)
)
_SECRET_ENV_SOURCE = _Message(
    "SecretEnvSource", inline(1, _LOCAL_OBJECT_REFERENCE), b("optional", 2, OPT)
)
_ENV_FROM_SOURCE = _Message(
    "EnvFromSource",
    s("prefix", 1),
    m("configMapRef", 2, _CONFIG_MAP_ENV_SOURCE, OPT),
    m("secretRef", 3, _SECRET_ENV_SOURCE, OPT),
)
_CONTAINER_PORT = _Message(
    "ContainerPort",
    s("name", 1), i32("hostPort", 2), i32("containerPort", 3), s("protocol", 4), s("hostIP", 5),
)  # fmt: skip
_RESOURCE_CLAIM = _Message("ResourceClaim", s("name", 1), s("request", 2))
_RESOURCE_REQUIREMENTS = _Message(
    "ResourceRequirements",
    mq("limits", 1), mq("requests", 2), rm("claims", 3, _RESOURCE_CLAIM),
)  # fmt: skip
_CONTAINER_RESIZE_POLICY = _Message(
    "ContainerResizePolicy", s("resourceName", 1), s("restartPolicy", 2)
)
_CONTAINER_RESTART_RULE_ON_EXIT_CODES = _Message(
    "ContainerRestartRuleOnExitCodes", s("operator", 1), ri32("values", 2)
)
_CONTAINER_RESTART_RULE = _Message(
    "ContainerRestartRule",
    s("action", 1), m("exitCodes", 2, _CONTAINER_RESTART_RULE_ON_EXIT_CODES, OPT),
)  # fmt: skip
_VOLUME_MOUNT = _Message(
    "VolumeMount",
    s("name", 1), b("readOnly", 2), s("mountPath", 3), s("subPath", 4),
    s("mountPropagation", 5, OPT), s("subPathExpr", 6), s("recursiveReadOnly", 7, OPT),
)  # fmt: skip
_VOLUME_DEVICE = _Message("VolumeDevice", s("name", 1), s("devicePath", 2))
_EXEC_ACTION = _Message("ExecAction", rs("command", 1))
_HTTP_HEADER = _Message("HTTPHeader", s("name", 1), s("value", 2))
_HTTP_GET_ACTION = _Message(
    "HTTPGetAction",
    s("path", 1), ios("port", 2), s("host", 3), s("scheme", 4),
    rm("httpHeaders", 5, _HTTP_HEADER),
)  # fmt: skip
_TCP_SOCKET_ACTION = _Message("TCPSocketAction", ios("port", 1), s("host", 2))
_GRPC_ACTION = _Message("GRPCAction", i32("port", 1), s("service", 2, OPT))
_PROBE_HANDLER = _Message(
    "ProbeHandler",
    m("exec", 1, _EXEC_ACTION, OPT),
    m("httpGet", 2, _HTTP_GET_ACTION, OPT),
    m("tcpSocket", 3, _TCP_SOCKET_ACTION, OPT),
    m("grpc", 4, _GRPC_ACTION, OPT),
)
_PROBE = _Message(
    "Probe",
    inline(1, _PROBE_HANDLER),
    i32("initialDelaySeconds", 2), i32("timeoutSeconds", 3), i32("periodSeconds", 4),
    i32("successThreshold", 5), i32("failureThreshold", 6),
    i64("terminationGracePeriodSeconds", 7, OPT),
)  # fmt: skip
_SLEEP_ACTION = _Message("SleepAction", i64("seconds", 1))
_LIFECYCLE_HANDLER = _Message(
    "LifecycleHandler",
    m("exec", 1, _EXEC_ACTION, OPT),
    m("httpGet", 2, _HTTP_GET_ACTION, OPT),
    m("tcpSocket", 3, _TCP_SOCKET_ACTION, OPT),
    m("sleep", 4, _SLEEP_ACTION, OPT),
)
_LIFECYCLE = _Message(
    "Lifecycle",
    m("postStart", 1, _LIFECYCLE_HANDLER, OPT),
    m("preStop", 2, _LIFECYCLE_HANDLER, OPT),
    s("stopSignal", 3, OPT),
)
_CAPABILITIES = _Message("Capabilities", rs("add", 1), rs("drop", 2))
_SE_LINUX_OPTIONS = _Message(
    "SELinuxOptions", s("user", 1), s("role", 2), s("type", 3), s("level", 4)
)
_WINDOWS_SECURITY_CONTEXT_OPTIONS = _Message(
    "WindowsSecurityContextOptions",
    s("gmsaCredentialSpecName", 1, OPT), s("gmsaCredentialSpec", 2, OPT),
    s("runAsUserName", 3, OPT), b("hostProcess", 4, OPT),
)  # fmt: skip
_SECCOMP_PROFILE = _Message("SeccompProfile", s("type", 1), s("localhostProfile", 2, OPT))
_APP_ARMOR_PROFILE = _Message("AppArmorProfile", s("type", 1), s("localhostProfile", 2, OPT))
_ULIMIT = _Message("Ulimit", s("name", 1), i64("hard", 2), i64("soft", 3))
_SECURITY_CONTEXT = _Message(
    "SecurityContext",
    m("capabilities", 1, _CAPABILITIES, OPT),
    b("privileged", 2, OPT),
    m("seLinuxOptions", 3, _SE_LINUX_OPTIONS, OPT),
    i64("runAsUser", 4, OPT),
    b("runAsNonRoot", 5, OPT),
    b("readOnlyRootFilesystem", 6, OPT),
    b("allowPrivilegeEscalation", 7, OPT),
    i64("runAsGroup", 8, OPT),
    s("procMount", 9, OPT),
    m("windowsOptions", 10, _WINDOWS_SECURITY_CONTEXT_OPTIONS, OPT),
    m("seccompProfile", 11, _SECCOMP_PROFILE, OPT),
    m("appArmorProfile", 12, _APP_ARMOR_PROFILE, OPT),
    rm("ulimits", 13, _ULIMIT),
)
_CONTAINER = _Message(
    "Container",
    s("name", 1), s("image", 2), rs("command", 3), rs("args", 4), s("workingDir", 5),
    rm("ports", 6, _CONTAINER_PORT), rm("env", 7, _ENV_VAR),
    m("resources", 8, _RESOURCE_REQUIREMENTS), rm("volumeMounts", 9, _VOLUME_MOUNT),
    m("livenessProbe", 10, _PROBE, OPT), m("readinessProbe", 11, _PROBE, OPT),
    m("lifecycle", 12, _LIFECYCLE, OPT), s("terminationMessagePath", 13),
    s("imagePullPolicy", 14), m("securityContext", 15, _SECURITY_CONTEXT, OPT),
    b("stdin", 16), b("stdinOnce", 17), b("tty", 18), rm("envFrom", 19, _ENV_FROM_SOURCE),
    s("terminationMessagePolicy", 20), rm("volumeDevices", 21, _VOLUME_DEVICE),
    m("startupProbe", 22, _PROBE, OPT), rm("resizePolicy", 23, _CONTAINER_RESIZE_POLICY),
    s("restartPolicy", 24, OPT), rm("restartPolicyRules", 25, _CONTAINER_RESTART_RULE),
)  # fmt: skip
# EphemeralContainerCommon shares Container's field numbers and is inlined in JSON.
_EPHEMERAL_CONTAINER = _Message(
    "EphemeralContainer", inline(1, _CONTAINER), s("targetContainerName", 2)
)

# --------------------------------------------------------------------------- core/v1: volumes

_HOST_PATH = _Message("HostPathVolumeSource", s("path", 1), s("type", 2, OPT))
_EMPTY_DIR = _Message("EmptyDirVolumeSource", s("medium", 1), q("sizeLimit", 2, OPT))
_GCE_PD = _Message(
    "GCEPersistentDiskVolumeSource",
    s("pdName", 1), s("fsType", 2), i32("partition", 3), b("readOnly", 4),
)  # fmt: skip
_AWS_EBS = _Message(
    "AWSElasticBlockStoreVolumeSource",
    s("volumeID", 1), s("fsType", 2), i32("partition", 3), b("readOnly", 4),
)  # fmt: skip
_GIT_REPO = _Message("GitRepoVolumeSource", s("repository", 1), s("revision", 2), s("directory", 3))
_KEY_TO_PATH = _Message("KeyToPath", s("key", 1), s("path", 2), i32("mode", 3, OPT))
_SECRET_VOLUME = _Message(
    "SecretVolumeSource",
    s("secretName", 1), rm("items", 2, _KEY_TO_PATH),
    i32("defaultMode", 3, OPT), b("optional", 4, OPT),
)  # fmt: skip
_NFS = _Message("NFSVolumeSource", s("server", 1), s("path", 2), b("readOnly", 3))
_ISCSI = _Message(
    "ISCSIVolumeSource",
    s("targetPortal", 1), s("iqn", 2), i32("lun", 3), s("iscsiInterface", 4), s("fsType", 5),
    b("readOnly", 6), rs("portals", 7), b("chapAuthDiscovery", 8),
    m("secretRef", 10, _LOCAL_OBJECT_REFERENCE, OPT), b("chapAuthSession", 11),
    s("initiatorName", 12, OPT),
)  # fmt: skip
_PVC_VOLUME = _Message("PersistentVolumeClaimVolumeSource", s("claimName", 1), b("readOnly", 2))
_RBD = _Message(
    "RBDVolumeSource",
    rs("monitors", 1), s("image", 2), s("fsType", 3), s("pool", 4), s("user", 5),
    s("keyring", 6), m("secretRef", 7, _LOCAL_OBJECT_REFERENCE, OPT), b("readOnly", 8),
)  # fmt: skip
_CINDER = _Message(
    "CinderVolumeSource",
    s("volumeID", 1), s("fsType", 2), b("readOnly", 3),
    m("secretRef", 4, _LOCAL_OBJECT_REFERENCE, OPT),
)  # fmt: skip
_DOWNWARD_API_FILE = _Message(
    "DownwardAPIVolumeFile",
    s("path", 1),
    m("fieldRef", 2, _OBJECT_FIELD_SELECTOR, OPT),
    m("resourceFieldRef", 3, _RESOURCE_FIELD_SELECTOR, OPT),
    i32("mode", 4, OPT),
)
_DOWNWARD_API_VOLUME = _Message(
    "DownwardAPIVolumeSource", rm("items", 1, _DOWNWARD_API_FILE), i32("defaultMode", 2, OPT)
)
_AZURE_FILE = _Message(
    "AzureFileVolumeSource", s("secretName", 1), s("shareName", 2), b("readOnly", 3)
)
_CONFIG_MAP_VOLUME = _Message(
    "ConfigMapVolumeSource",
    inline(1, _LOCAL_OBJECT_REFERENCE), rm("items", 2, _KEY_TO_PATH),
    i32("defaultMode", 3, OPT), b("optional", 4, OPT),
)  # fmt: skip
_AZURE_DISK = _Message(
    "AzureDiskVolumeSource",
    s("diskName", 1), s("diskURI", 2), s("cachingMode", 3, OPT), s("fsType", 4, OPT),
    b("readOnly", 5, OPT), s("kind", 6, OPT),
)  # fmt: skip
_SECRET_PROJECTION = _Message(
    "SecretProjection",
    inline(1, _LOCAL_OBJECT_REFERENCE), rm("items", 2, _KEY_TO_PATH), b("optional", 4, OPT),
)  # fmt: skip
_DOWNWARD_API_PROJECTION = _Message("DownwardAPIProjection", rm("items", 1, _DOWNWARD_API_FILE))
_CONFIG_MAP_PROJECTION = _Message(
    "ConfigMapProjection",
    inline(1, _LOCAL_OBJECT_REFERENCE), rm("items", 2, _KEY_TO_PATH), b("optional", 4, OPT),
)  # fmt: skip
_SERVICE_ACCOUNT_TOKEN_PROJECTION = _Message(
    "ServiceAccountTokenProjection",
    s("audience", 1), i64("expirationSeconds", 2, OPT), s("path", 3),
)  # fmt: skip
_CLUSTER_TRUST_BUNDLE_PROJECTION = _Message(
    "ClusterTrustBundleProjection",
    s("name", 1, OPT), s("signerName", 2, OPT), m("labelSelector", 3, _LABEL_SELECTOR, OPT),
    s("path", 4), b("optional", 5, OPT),
)  # fmt: skip
_VOLUME_PROJECTION = _Message(
    "VolumeProjection",
    m("secret", 1, _SECRET_PROJECTION, OPT),
    m("downwardAPI", 2, _DOWNWARD_API_PROJECTION, OPT),
    m("configMap", 3, _CONFIG_MAP_PROJECTION, OPT),
    m("serviceAccountToken", 4, _SERVICE_ACCOUNT_TOKEN_PROJECTION, OPT),
    m("clusterTrustBundle", 5, _CLUSTER_TRUST_BUNDLE_PROJECTION, OPT),
)
_PROJECTED_VOLUME = _Message(
    "ProjectedVolumeSource", rm("sources", 1, _VOLUME_PROJECTION), i32("defaultMode", 2, OPT)
)
_CSI_VOLUME = _Message(
    "CSIVolumeSource",
    s("driver", 1), b("readOnly", 2, OPT), s("fsType", 3, OPT), mss("volumeAttributes", 4),
    m("nodePublishSecretRef", 5, _LOCAL_OBJECT_REFERENCE, OPT),
)  # fmt: skip
_TYPED_LOCAL_OBJECT_REFERENCE = _Message(
    "TypedLocalObjectReference", s("apiGroup", 1, OPT), s("kind", 2), s("name", 3)
)
_TYPED_OBJECT_REFERENCE = _Message(
    "TypedObjectReference",
    s("apiGroup", 1, OPT), s("kind", 2), s("name", 3), s("namespace", 4, OPT),
)  # fmt: skip
_VOLUME_RESOURCE_REQUIREMENTS = _Message(
    "VolumeResourceRequirements", mq("limits", 1), mq("requests", 2)
)
_PVC_SPEC = _Message(
    "PersistentVolumeClaimSpec",
    rs("accessModes", 1), m("resources", 2, _VOLUME_RESOURCE_REQUIREMENTS), s("volumeName", 3),
    m("selector", 4, _LABEL_SELECTOR, OPT), s("storageClassName", 5, OPT),
    s("volumeMode", 6, OPT), m("dataSource", 7, _TYPED_LOCAL_OBJECT_REFERENCE, OPT),
    m("dataSourceRef", 8, _TYPED_OBJECT_REFERENCE, OPT),
    s("volumeAttributesClassName", 9, OPT),
)  # fmt: skip
_PVC_TEMPLATE = _Message(
    "PersistentVolumeClaimTemplate", m("metadata", 1, _OBJECT_META), m("spec", 2, _PVC_SPEC)
)
_EPHEMERAL_VOLUME = _Message(
    "EphemeralVolumeSource", m("volumeClaimTemplate", 1, _PVC_TEMPLATE, OPT)
)
_IMAGE_VOLUME = _Message("ImageVolumeSource", s("reference", 1), s("pullPolicy", 2))
_VOLUME_SOURCE = _Message(
    "VolumeSource",
    m("hostPath", 1, _HOST_PATH, OPT),
    m("emptyDir", 2, _EMPTY_DIR, OPT),
    m("gcePersistentDisk", 3, _GCE_PD, OPT),
    m("awsElasticBlockStore", 4, _AWS_EBS, OPT),
    m("gitRepo", 5, _GIT_REPO, OPT),
    m("secret", 6, _SECRET_VOLUME, OPT),
    m("nfs", 7, _NFS, OPT),
    m("iscsi", 8, _ISCSI, OPT),
    m("persistentVolumeClaim", 10, _PVC_VOLUME, OPT),
    m("rbd", 11, _RBD, OPT),
    m("cinder", 13, _CINDER, OPT),
    m("downwardAPI", 16, _DOWNWARD_API_VOLUME, OPT),
    m("azureFile", 18, _AZURE_FILE, OPT),
    m("configMap", 19, _CONFIG_MAP_VOLUME, OPT),
    m("azureDisk", 22, _AZURE_DISK, OPT),
    m("projected", 26, _PROJECTED_VOLUME, OPT),
    m("csi", 28, _CSI_VOLUME, OPT),
    m("ephemeral", 29, _EPHEMERAL_VOLUME, OPT),
    m("image", 30, _IMAGE_VOLUME, OPT),
)
_VOLUME = _Message("Volume", s("name", 1), inline(2, _VOLUME_SOURCE))

# --------------------------------------------------------------------------- core/v1: scheduling

_NODE_SELECTOR_REQUIREMENT = _Message(
    "NodeSelectorRequirement", s("key", 1), s("operator", 2), rs("values", 3)
)
_NODE_SELECTOR_TERM = _Message(
    "NodeSelectorTerm",
    rm("matchExpressions", 1, _NODE_SELECTOR_REQUIREMENT),
    rm("matchFields", 2, _NODE_SELECTOR_REQUIREMENT),
)
_NODE_SELECTOR = _Message("NodeSelector", rm("nodeSelectorTerms", 1, _NODE_SELECTOR_TERM))
_PREFERRED_SCHEDULING_TERM = _Message(
    "PreferredSchedulingTerm", i32("weight", 1), m("preference", 2, _NODE_SELECTOR_TERM)
)
_NODE_AFFINITY = _Message(
    "NodeAffinity",
    m("requiredDuringSchedulingIgnoredDuringExecution", 1, _NODE_SELECTOR, OPT),
    rm("preferredDuringSchedulingIgnoredDuringExecution", 2, _PREFERRED_SCHEDULING_TERM),
)
_POD_AFFINITY_TERM = _Message(
    "PodAffinityTerm",
    m("labelSelector", 1, _LABEL_SELECTOR, OPT), rs("namespaces", 2), s("topologyKey", 3),
    m("namespaceSelector", 4, _LABEL_SELECTOR, OPT), rs("matchLabelKeys", 5),
    rs("mismatchLabelKeys", 6),
)  # fmt: skip
_WEIGHTED_POD_AFFINITY_TERM = _Message(
    "WeightedPodAffinityTerm", i32("weight", 1), m("podAffinityTerm", 2, _POD_AFFINITY_TERM)
)
_POD_AFFINITY = _Message(
    "PodAffinity",
    rm("requiredDuringSchedulingIgnoredDuringExecution", 1, _POD_AFFINITY_TERM),
    rm("preferredDuringSchedulingIgnoredDuringExecution", 2, _WEIGHTED_POD_AFFINITY_TERM),
)
_POD_ANTI_AFFINITY = _Message(
    "PodAntiAffinity",
    rm("requiredDuringSchedulingIgnoredDuringExecution", 1, _POD_AFFINITY_TERM),
    rm("preferredDuringSchedulingIgnoredDuringExecution", 2, _WEIGHTED_POD_AFFINITY_TERM),
)
_AFFINITY = _Message(
    "Affinity",
    m("nodeAffinity", 1, _NODE_AFFINITY, OPT),
    m("podAffinity", 2, _POD_AFFINITY, OPT),
    m("podAntiAffinity", 3, _POD_ANTI_AFFINITY, OPT),
)
_TOLERATION = _Message(
    "Toleration",
    s("key", 1), s("operator", 2), s("value", 3), s("effect", 4),
    i64("tolerationSeconds", 5, OPT),
)  # fmt: skip
_TOPOLOGY_SPREAD_CONSTRAINT = _Message(
    "TopologySpreadConstraint",
    i32("maxSkew", 1), s("topologyKey", 2), s("whenUnsatisfiable", 3),
    m("labelSelector", 4, _LABEL_SELECTOR, OPT), i32("minDomains", 5, OPT),
    s("nodeAffinityPolicy", 6, OPT), s("nodeTaintsPolicy", 7, OPT), rs("matchLabelKeys", 8),
)  # fmt: skip

# --------------------------------------------------------------------------- core/v1: pod

_HOST_ALIAS = _Message("HostAlias", s("ip", 1), rs("hostnames", 2))
_SYSCTL = _Message("Sysctl", s("name", 1), s("value", 2))
_POD_SECURITY_CONTEXT = _Message(
    "PodSecurityContext",
    m("seLinuxOptions", 1, _SE_LINUX_OPTIONS, OPT),
    i64("runAsUser", 2, OPT),
    b("runAsNonRoot", 3, OPT),
    ri64("supplementalGroups", 4),
    i64("fsGroup", 5, OPT),
    i64("runAsGroup", 6, OPT),
    rm("sysctls", 7, _SYSCTL),
    m("windowsOptions", 8, _WINDOWS_SECURITY_CONTEXT_OPTIONS, OPT),
    s("fsGroupChangePolicy", 9, OPT),
    m("seccompProfile", 10, _SECCOMP_PROFILE, OPT),
    m("appArmorProfile", 11, _APP_ARMOR_PROFILE, OPT),
    s("supplementalGroupsPolicy", 12, OPT),
    s("seLinuxChangePolicy", 13, OPT),
)
_POD_DNS_CONFIG_OPTION = _Message("PodDNSConfigOption", s("name", 1), s("value", 2, OPT))
_POD_DNS_CONFIG = _Message(
    "PodDNSConfig",
    rs("nameservers", 1), rs("searches", 2), rm("options", 3, _POD_DNS_CONFIG_OPTION),
)  # fmt: skip
_POD_READINESS_GATE = _Message("PodReadinessGate", s("conditionType", 1))
_POD_OS = _Message("PodOS", s("name", 1))
_POD_SCHEDULING_GATE = _Message("PodSchedulingGate", s("name", 1))
_POD_RESOURCE_CLAIM = _Message(
    "PodResourceClaim",
    s("name", 1), s("resourceClaimName", 3, OPT), s("resourceClaimTemplateName", 4, OPT),
)  # fmt: skip
_POD_SPEC = _Message(
    "PodSpec",
    rm("volumes", 1, _VOLUME),
    rm("containers", 2, _CONTAINER),
    s("restartPolicy", 3),
    i64("terminationGracePeriodSeconds", 4, OPT),
    i64("activeDeadlineSeconds", 5, OPT),
    s("dnsPolicy", 6),
    mss("nodeSelector", 7),
    s("serviceAccountName", 8),
    s("serviceAccount", 9),
    s("nodeName", 10),
    b("hostNetwork", 11),
    b("hostPID", 12),
    b("hostIPC", 13),
    m("securityContext", 14, _POD_SECURITY_CONTEXT, OPT),
    rm("imagePullSecrets", 15, _LOCAL_OBJECT_REFERENCE),
    s("hostname", 16),
    s("subdomain", 17),
    m("affinity", 18, _AFFINITY, OPT),
    s("schedulerName", 19),
    rm("initContainers", 20, _CONTAINER),
    b("automountServiceAccountToken", 21, OPT),
    rm("tolerations", 22, _TOLERATION),
    rm("hostAliases", 23, _HOST_ALIAS),
    s("priorityClassName", 24),
    i32("priority", 25, OPT),
    m("dnsConfig", 26, _POD_DNS_CONFIG, OPT),
    b("shareProcessNamespace", 27, OPT),
    rm("readinessGates", 28, _POD_READINESS_GATE),
    s("runtimeClassName", 29, OPT),
    b("enableServiceLinks", 30, OPT),
    s("preemptionPolicy", 31, OPT),
    mq("overhead", 32),
    rm("topologySpreadConstraints", 33, _TOPOLOGY_SPREAD_CONSTRAINT),
    rm("ephemeralContainers", 34, _EPHEMERAL_CONTAINER),
    b("setHostnameAsFQDN", 35, OPT),
    m("os", 36, _POD_OS, OPT),
    b("hostUsers", 37, OPT),
    rm("schedulingGates", 38, _POD_SCHEDULING_GATE),
    rm("resourceClaims", 39, _POD_RESOURCE_CLAIM),
    m("resources", 40, _RESOURCE_REQUIREMENTS, OPT),
    s("hostnameOverride", 41, OPT),
)

_POD_CONDITION = _Message(
    "PodCondition",
    s("type", 1), s("status", 2), t("lastProbeTime", 3), t("lastTransitionTime", 4),
    s("reason", 5), s("message", 6), i64("observedGeneration", 7),
)  # fmt: skip
_HOST_IP = _Message("HostIP", s("ip", 1))
_POD_IP = _Message("PodIP", s("ip", 1))
_CONTAINER_STATE_WAITING = _Message("ContainerStateWaiting", s("reason", 1), s("message", 2))
_CONTAINER_STATE_RUNNING = _Message("ContainerStateRunning", t("startedAt", 1))
_CONTAINER_STATE_TERMINATED = _Message(
    "ContainerStateTerminated",
    i32("exitCode", 1), i32("signal", 2), s("reason", 3), s("message", 4),
    t("startedAt", 5), t("finishedAt", 6), s("containerID", 7),
)  # fmt: skip
_CONTAINER_STATE = _Message(
    "ContainerState",
    m("waiting", 1, _CONTAINER_STATE_WAITING, OPT),
    m("running", 2, _CONTAINER_STATE_RUNNING, OPT),
    m("terminated", 3, _CONTAINER_STATE_TERMINATED, OPT),
)
_IMAGE_VOLUME_STATUS = _Message("ImageVolumeStatus", s("imageRef", 1))
_VOLUME_STATUS = _Message("VolumeStatus", m("image", 1, _IMAGE_VOLUME_STATUS, OPT))
_VOLUME_MOUNT_STATUS = _Message(
    "VolumeMountStatus",
    s("name", 1), s("mountPath", 2), b("readOnly", 3), s("recursiveReadOnly", 4, OPT),
    inline(5, _VOLUME_STATUS),
)  # fmt: skip
_LINUX_CONTAINER_USER = _Message(
    "LinuxContainerUser", i64("uid", 1), i64("gid", 2), ri64("supplementalGroups", 3)
)
_CONTAINER_USER = _Message("ContainerUser", m("linux", 1, _LINUX_CONTAINER_USER, OPT))
_RESOURCE_HEALTH = _Message(
    "ResourceHealth", s("resourceID", 1), s("health", 2), s("message", 6, OPT)
)
_RESOURCE_STATUS = _Message("ResourceStatus", s("name", 1), rm("resources", 2, _RESOURCE_HEALTH))
_CONTAINER_STATUS = _Message(
    "ContainerStatus",
    s("name", 1), m("state", 2, _CONTAINER_STATE), m("lastState", 3, _CONTAINER_STATE),
    b("ready", 4), i32("restartCount", 5), s("image", 6), s("imageID", 7), s("containerID", 8),
    b("started", 9, OPT), mq("allocatedResources", 10),
    m("resources", 11, _RESOURCE_REQUIREMENTS, OPT), rm("volumeMounts", 12, _VOLUME_MOUNT_STATUS),
    m("user", 13, _CONTAINER_USER, OPT), rm("allocatedResourcesStatus", 14, _RESOURCE_STATUS),
    s("stopSignal", 15, OPT),
)  # fmt: skip
_POD_RESOURCE_CLAIM_STATUS = _Message(
    "PodResourceClaimStatus", s("name", 1), s("resourceClaimName", 2, OPT)
)
_POD_STATUS = _Message(
    "PodStatus",
    s("phase", 1),
    rm("conditions", 2, _POD_CONDITION),
    s("message", 3),
    s("reason", 4),
    s("hostIP", 5),
    s("podIP", 6),
    t("startTime", 7, OPT),
    rm("containerStatuses", 8, _CONTAINER_STATUS),
    s("qosClass", 9),
    rm("initContainerStatuses", 10, _CONTAINER_STATUS),
    s("nominatedNodeName", 11),
    rm("podIPs", 12, _POD_IP),
    rm("ephemeralContainerStatuses", 13, _CONTAINER_STATUS),
    s("resize", 14),
    rm("resourceClaimStatuses", 15, _POD_RESOURCE_CLAIM_STATUS),
    rm("hostIPs", 16, _HOST_IP),
    i64("observedGeneration", 17),
    mq("allocatedResources", 19),
    m("resources", 20, _RESOURCE_REQUIREMENTS, OPT),
)
_POD = _Message(
    "Pod",
    m("metadata", 1, _OBJECT_META), m("spec", 2, _POD_SPEC), m("status", 3, _POD_STATUS),
)  # fmt: skip

# --------------------------------------------------------------------------- core/v1: node

_TAINT = _Message("Taint", s("key", 1), s("value", 2), s("effect", 3), t("timeAdded", 4, OPT))
_CONFIG_MAP_NODE_CONFIG_SOURCE = _Message(
    "ConfigMapNodeConfigSource",
    s("namespace", 1), s("name", 2), s("uid", 3), s("resourceVersion", 4),
    s("kubeletConfigKey", 5),
)  # fmt: skip
_NODE_CONFIG_SOURCE = _Message(
    "NodeConfigSource", m("configMap", 2, _CONFIG_MAP_NODE_CONFIG_SOURCE, OPT)
)
_NODE_SPEC = _Message(
    "NodeSpec",
    s("podCIDR", 1), s("externalID", 2), s("providerID", 3), b("unschedulable", 4),
    rm("taints", 5, _TAINT), m("configSource", 6, _NODE_CONFIG_SOURCE, OPT), rs("podCIDRs", 7),
)  # fmt: skip
_NODE_CONDITION = _Message(
    "NodeCondition",
    s("type", 1), s("status", 2), t("lastHeartbeatTime", 3), t("lastTransitionTime", 4),
    s("reason", 5), s("message", 6),
)  # fmt: skip
_NODE_ADDRESS = _Message("NodeAddress", s("type", 1), s("address", 2))
_DAEMON_ENDPOINT = _Message("DaemonEndpoint", i32("Port", 1))
_NODE_DAEMON_ENDPOINTS = _Message("NodeDaemonEndpoints", m("kubeletEndpoint", 1, _DAEMON_ENDPOINT))
_NODE_SWAP_STATUS = _Message("NodeSwapStatus", i64("capacity", 1, OPT))
_NODE_SYSTEM_INFO = _Message(
    "NodeSystemInfo",
    s("machineID", 1), s("systemUUID", 2), s("bootID", 3), s("kernelVersion", 4),
    s("osImage", 5), s("containerRuntimeVersion", 6), s("kubeletVersion", 7),
    s("kubeProxyVersion", 8), s("operatingSystem", 9), s("architecture", 10),
    m("swap", 11, _NODE_SWAP_STATUS, OPT),
)  # fmt: skip
_CONTAINER_IMAGE = _Message("ContainerImage", rs("names", 1), i64("sizeBytes", 2))
_ATTACHED_VOLUME = _Message("AttachedVolume", s("name", 1), s("devicePath", 2))
_NODE_CONFIG_STATUS = _Message(
    "NodeConfigStatus",
    m("assigned", 1, _NODE_CONFIG_SOURCE, OPT), m("active", 2, _NODE_CONFIG_SOURCE, OPT),
    m("lastKnownGood", 3, _NODE_CONFIG_SOURCE, OPT), s("error", 4),
)  # fmt: skip
_NODE_RUNTIME_HANDLER_FEATURES = _Message(
    "NodeRuntimeHandlerFeatures",
    b("recursiveReadOnlyMounts", 1, OPT), b("userNamespaces", 2, OPT),
)  # fmt: skip
_NODE_RUNTIME_HANDLER = _Message(
    "NodeRuntimeHandler", s("name", 1), m("features", 2, _NODE_RUNTIME_HANDLER_FEATURES, OPT)
)
_NODE_FEATURES = _Message(
    "NodeFeatures", b("supplementalGroupsPolicy", 1, OPT), b("containerUlimits", 2, OPT)
)
_NODE_STATUS = _Message(
    "NodeStatus",
    mq("capacity", 1), mq("allocatable", 2), s("phase", 3),
    rm("conditions", 4, _NODE_CONDITION), rm("addresses", 5, _NODE_ADDRESS),
    m("daemonEndpoints", 6, _NODE_DAEMON_ENDPOINTS), m("nodeInfo", 7, _NODE_SYSTEM_INFO),
    rm("images", 8, _CONTAINER_IMAGE), rs("volumesInUse", 9),
    rm("volumesAttached", 10, _ATTACHED_VOLUME), m("config", 11, _NODE_CONFIG_STATUS, OPT),
    rm("runtimeHandlers", 12, _NODE_RUNTIME_HANDLER), m("features", 13, _NODE_FEATURES, OPT),
    rs("declaredFeatures", 14),
)  # fmt: skip
_NODE = _Message(
    "Node",
    m("metadata", 1, _OBJECT_META), m("spec", 2, _NODE_SPEC), m("status", 3, _NODE_STATUS),
)  # fmt: skip

# The one-letter declaration helpers are only for the tables above.
del s, i32, i64, b, m, inline, q, t, ios, rs, rm, ri32, ri64, mss, mq, OPT

# NodeList.metadata is an empty ListMeta, still written (its strings included).
_NODE_LIST_PREFIX = b"\x0a" + _varint(len(_LIST_META.empty)) + _LIST_META.empty
_NODE_LIST_ITEM_TAG = b"\x12"

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
