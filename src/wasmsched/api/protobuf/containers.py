"""Message tables of core/v1 containers: Container, EphemeralContainer and what they hold.

Field numbers from k8s.io/api core/v1/generated.proto, pointer-ness from core/v1/types.go.
"""

from __future__ import annotations

from wasmsched.api.protobuf.schema import (
    DECODED,
    KEEP,
    OPT,
    _Message,
    b,
    i32,
    i64,
    inline,
    ios,
    m,
    mq,
    q,
    ri32,
    rm,
    rs,
    s,
)

_LOCAL_OBJECT_REFERENCE = _Message("LocalObjectReference", s("name", 1))
_OBJECT_FIELD_SELECTOR = _Message(
    "ObjectFieldSelector", s("apiVersion", 1), s("fieldPath", 2, KEEP)
)
_RESOURCE_FIELD_SELECTOR = _Message(
    "ResourceFieldSelector", s("containerName", 1), s("resource", 2, KEEP), q("divisor", 3)
)
_CONFIG_MAP_KEY_SELECTOR = _Message(
    "ConfigMapKeySelector",
    inline(1, _LOCAL_OBJECT_REFERENCE), s("key", 2, KEEP), b("optional", 3, OPT),
)  # fmt: skip
_SECRET_KEY_SELECTOR = _Message(
    "SecretKeySelector",
    inline(1, _LOCAL_OBJECT_REFERENCE), s("key", 2, KEEP), b("optional", 3, OPT),
)  # fmt: skip
_FILE_KEY_SELECTOR = _Message(
    "FileKeySelector",
    s("volumeName", 1, KEEP), s("path", 2, KEEP), s("key", 3, KEEP), b("optional", 4, OPT),
)  # fmt: skip
_ENV_VAR_SOURCE = _Message(
    "EnvVarSource",
    m("fieldRef", 1, _OBJECT_FIELD_SELECTOR, OPT),
    m("resourceFieldRef", 2, _RESOURCE_FIELD_SELECTOR, OPT),
    m("configMapKeyRef", 3, _CONFIG_MAP_KEY_SELECTOR, OPT),
    m("secretKeyRef", 4, _SECRET_KEY_SELECTOR, OPT),
    m("fileKeyRef", 5, _FILE_KEY_SELECTOR, OPT),
)
_ENV_VAR = _Message(
    "EnvVar", s("name", 1, KEEP), s("value", 2), m("valueFrom", 3, _ENV_VAR_SOURCE, OPT)
)
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
    s("name", 1), i32("hostPort", 2), i32("containerPort", 3, KEEP), s("protocol", 4), s("hostIP", 5),
)  # fmt: skip
_RESOURCE_CLAIM = _Message("ResourceClaim", s("name", 1, KEEP), s("request", 2))
_RESOURCE_REQUIREMENTS = _Message(
    "ResourceRequirements",
    mq("limits", 1), mq("requests", 2), rm("claims", 3, _RESOURCE_CLAIM),
)  # fmt: skip
_CONTAINER_RESIZE_POLICY = _Message(
    "ContainerResizePolicy", s("resourceName", 1, KEEP), s("restartPolicy", 2, KEEP)
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
    s("name", 1, KEEP), b("readOnly", 2), s("mountPath", 3, KEEP), s("subPath", 4),
    s("mountPropagation", 5, OPT), s("subPathExpr", 6), s("recursiveReadOnly", 7, OPT),
    rs("bindMountOptions", 8),
)  # fmt: skip
_VOLUME_DEVICE = _Message("VolumeDevice", s("name", 1, KEEP), s("devicePath", 2, KEEP))
_EXEC_ACTION = _Message("ExecAction", rs("command", 1))
_HTTP_HEADER = _Message("HTTPHeader", s("name", 1, KEEP), s("value", 2, KEEP))
_HTTP_GET_ACTION = _Message(
    "HTTPGetAction",
    s("path", 1), ios("port", 2), s("host", 3), s("scheme", 4),
    rm("httpHeaders", 5, _HTTP_HEADER), s("protocol", 6, OPT | DECODED),
)  # fmt: skip
_TCP_SOCKET_ACTION = _Message("TCPSocketAction", ios("port", 1), s("host", 2))
_GRPC_ACTION = _Message(
    "GRPCAction",
    i32("port", 1, KEEP), s("service", 2, OPT | KEEP), s("mode", 3, OPT | DECODED),
)  # fmt: skip
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
_SLEEP_ACTION = _Message("SleepAction", i64("seconds", 1, KEEP))
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
_SECCOMP_PROFILE = _Message("SeccompProfile", s("type", 1, KEEP), s("localhostProfile", 2, OPT))
_APP_ARMOR_PROFILE = _Message("AppArmorProfile", s("type", 1, KEEP), s("localhostProfile", 2, OPT))
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
    s("name", 1, KEEP), s("image", 2), rs("command", 3), rs("args", 4), s("workingDir", 5),
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
