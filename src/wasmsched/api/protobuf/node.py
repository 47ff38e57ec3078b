"""Message tables of core/v1 Node: NodeSpec, NodeStatus and what they hold.

Field numbers from k8s.io/api core/v1/generated.proto, pointer-ness from core/v1/types.go.
"""

from __future__ import annotations

from wasmsched.api.protobuf.meta import _OBJECT_META
from wasmsched.api.protobuf.schema import (
    DECODED,
    KEEP,
    OPT,
    _Message,
    b,
    i32,
    i64,
    m,
    mq,
    rm,
    rs,
    s,
    t,
)

_TAINT = _Message(
    "Taint", s("key", 1, KEEP), s("value", 2), s("effect", 3, KEEP), t("timeAdded", 4, OPT)
)
_CONFIG_MAP_NODE_CONFIG_SOURCE = _Message(
    "ConfigMapNodeConfigSource",
    s("namespace", 1, KEEP), s("name", 2, KEEP), s("uid", 3), s("resourceVersion", 4),
    s("kubeletConfigKey", 5, KEEP),
)  # fmt: skip
_NODE_CONFIG_SOURCE = _Message(
    "NodeConfigSource", m("configMap", 2, _CONFIG_MAP_NODE_CONFIG_SOURCE, OPT)
)
_NODE_POD_PREEMPTION_POLICY = _Message("NodePodPreemptionPolicy", rs("disableResizePreemption", 1))
_NODE_SPEC = _Message(
    "NodeSpec",
    s("podCIDR", 1), s("externalID", 2), s("providerID", 3), b("unschedulable", 4),
    rm("taints", 5, _TAINT), m("configSource", 6, _NODE_CONFIG_SOURCE, OPT), rs("podCIDRs", 7),
    m("podPreemptionPolicy", 8, _NODE_POD_PREEMPTION_POLICY, OPT | DECODED),
)  # fmt: skip
_NODE_CONDITION = _Message(
    "NodeCondition",
    s("type", 1, KEEP), s("status", 2, KEEP), t("lastHeartbeatTime", 3), t("lastTransitionTime", 4),
    s("reason", 5), s("message", 6),
)  # fmt: skip
_NODE_ADDRESS = _Message("NodeAddress", s("type", 1, KEEP), s("address", 2, KEEP))
_DAEMON_ENDPOINT = _Message("DaemonEndpoint", i32("Port", 1, KEEP))
_NODE_DAEMON_ENDPOINTS = _Message("NodeDaemonEndpoints", m("kubeletEndpoint", 1, _DAEMON_ENDPOINT))
_NODE_SWAP_STATUS = _Message("NodeSwapStatus", i64("capacity", 1, OPT))
_NODE_SYSTEM_INFO = _Message(
    "NodeSystemInfo",
    s("machineID", 1, KEEP), s("systemUUID", 2, KEEP), s("bootID", 3, KEEP), s("kernelVersion", 4, KEEP),
    s("osImage", 5, KEEP), s("containerRuntimeVersion", 6, KEEP), s("kubeletVersion", 7, KEEP),
    s("kubeProxyVersion", 8, KEEP), s("operatingSystem", 9, KEEP), s("architecture", 10, KEEP),
    m("swap", 11, _NODE_SWAP_STATUS, OPT), b("runningInUserNamespace", 12, OPT | DECODED),
)  # fmt: skip
_CONTAINER_IMAGE = _Message("ContainerImage", rs("names", 1, KEEP), i64("sizeBytes", 2))
_ATTACHED_VOLUME = _Message("AttachedVolume", s("name", 1, KEEP), s("devicePath", 2, KEEP))
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
    "NodeRuntimeHandler", s("name", 1, KEEP), m("features", 2, _NODE_RUNTIME_HANDLER_FEATURES, OPT)
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
