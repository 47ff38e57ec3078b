"""Message tables of core/v1 Pod: PodSpec, PodStatus and the scheduling types.

Affinity, Toleration and TopologySpreadConstraint are here, with the Pod that holds them.
Field numbers from k8s.io/api core/v1/generated.proto, pointer-ness from core/v1/types.go.
"""

from __future__ import annotations

from wasmsched.api.protobuf.containers import (
    _APP_ARMOR_PROFILE,
    _CONTAINER,
    _EPHEMERAL_CONTAINER,
    _LOCAL_OBJECT_REFERENCE,
    _RESOURCE_REQUIREMENTS,
    _SE_LINUX_OPTIONS,
    _SECCOMP_PROFILE,
    _WINDOWS_SECURITY_CONTEXT_OPTIONS,
)
from wasmsched.api.protobuf.meta import _LABEL_SELECTOR, _OBJECT_META
from wasmsched.api.protobuf.schema import (
    DECODED,
    KEEP,
    OPT,
    _Message,
    b,
    i32,
    i64,
    inline,
    m,
    mq,
    mss,
    ri64,
    rm,
    rs,
    s,
    t,
)
from wasmsched.api.protobuf.volumes import _VOLUME

_NODE_SELECTOR_REQUIREMENT = _Message(
    "NodeSelectorRequirement", s("key", 1, KEEP), s("operator", 2, KEEP), rs("values", 3)
)
_NODE_SELECTOR_TERM = _Message(
    "NodeSelectorTerm",
    rm("matchExpressions", 1, _NODE_SELECTOR_REQUIREMENT),
    rm("matchFields", 2, _NODE_SELECTOR_REQUIREMENT),
)
_NODE_SELECTOR = _Message("NodeSelector", rm("nodeSelectorTerms", 1, _NODE_SELECTOR_TERM, KEEP))
_PREFERRED_SCHEDULING_TERM = _Message(
    "PreferredSchedulingTerm", i32("weight", 1, KEEP), m("preference", 2, _NODE_SELECTOR_TERM)
)
_NODE_AFFINITY = _Message(
    "NodeAffinity",
    m("requiredDuringSchedulingIgnoredDuringExecution", 1, _NODE_SELECTOR, OPT),
    rm("preferredDuringSchedulingIgnoredDuringExecution", 2, _PREFERRED_SCHEDULING_TERM),
)
_POD_AFFINITY_TERM = _Message(
    "PodAffinityTerm",
    m("labelSelector", 1, _LABEL_SELECTOR, OPT), rs("namespaces", 2), s("topologyKey", 3, KEEP),
    m("namespaceSelector", 4, _LABEL_SELECTOR, OPT), rs("matchLabelKeys", 5),
    rs("mismatchLabelKeys", 6),
)  # fmt: skip
_WEIGHTED_POD_AFFINITY_TERM = _Message(
    "WeightedPodAffinityTerm", i32("weight", 1, KEEP), m("podAffinityTerm", 2, _POD_AFFINITY_TERM)
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
    i32("maxSkew", 1, KEEP), s("topologyKey", 2, KEEP), s("whenUnsatisfiable", 3, KEEP),
    m("labelSelector", 4, _LABEL_SELECTOR, OPT), i32("minDomains", 5, OPT),
    s("nodeAffinityPolicy", 6, OPT), s("nodeTaintsPolicy", 7, OPT), rs("matchLabelKeys", 8),
)  # fmt: skip

# --------------------------------------------------------------------------- core/v1: pod

_HOST_ALIAS = _Message("HostAlias", s("ip", 1, KEEP), rs("hostnames", 2))
_SYSCTL = _Message("Sysctl", s("name", 1, KEEP), s("value", 2, KEEP))
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
_POD_READINESS_GATE = _Message("PodReadinessGate", s("conditionType", 1, KEEP))
_POD_OS = _Message("PodOS", s("name", 1, KEEP))
_POD_SCHEDULING_GATE = _Message("PodSchedulingGate", s("name", 1, KEEP))
_POD_RESOURCE_CLAIM = _Message(
    "PodResourceClaim",
    s("name", 1, KEEP), s("resourceClaimName", 3, OPT), s("resourceClaimTemplateName", 4, OPT),
)  # fmt: skip
_POD_SPEC = _Message(
    "PodSpec",
    rm("volumes", 1, _VOLUME),
    rm("containers", 2, _CONTAINER, KEEP),
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
    s("type", 1, KEEP), s("status", 2, KEEP), t("lastProbeTime", 3), t("lastTransitionTime", 4),
    s("reason", 5), s("message", 6), i64("observedGeneration", 7),
)  # fmt: skip
_HOST_IP = _Message("HostIP", s("ip", 1, KEEP))
_POD_IP = _Message("PodIP", s("ip", 1, KEEP))
_CONTAINER_STATE_WAITING = _Message("ContainerStateWaiting", s("reason", 1), s("message", 2))
_CONTAINER_STATE_RUNNING = _Message("ContainerStateRunning", t("startedAt", 1))
_CONTAINER_STATE_TERMINATED = _Message(
    "ContainerStateTerminated",
    i32("exitCode", 1, KEEP), i32("signal", 2), s("reason", 3), s("message", 4),
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
    s("name", 1, KEEP), s("mountPath", 2, KEEP), b("readOnly", 3), s("recursiveReadOnly", 4, OPT),
    inline(5, _VOLUME_STATUS),
)  # fmt: skip
_LINUX_CONTAINER_USER = _Message(
    "LinuxContainerUser", i64("uid", 1, KEEP), i64("gid", 2, KEEP), ri64("supplementalGroups", 3)
)
_CONTAINER_USER = _Message("ContainerUser", m("linux", 1, _LINUX_CONTAINER_USER, OPT))
_RESOURCE_HEALTH = _Message(
    "ResourceHealth", s("resourceID", 1, KEEP), s("health", 2), s("message", 6, OPT)
)
_RESOURCE_STATUS = _Message(
    "ResourceStatus", s("name", 1, KEEP), rm("resources", 2, _RESOURCE_HEALTH)
)
_CONTAINER_STATUS = _Message(
    "ContainerStatus",
    s("name", 1, KEEP), m("state", 2, _CONTAINER_STATE), m("lastState", 3, _CONTAINER_STATE),
    b("ready", 4, KEEP), i32("restartCount", 5, KEEP), s("image", 6, KEEP), s("imageID", 7, KEEP), s("containerID", 8),
    b("started", 9, OPT), mq("allocatedResources", 10),
    m("resources", 11, _RESOURCE_REQUIREMENTS, OPT), rm("volumeMounts", 12, _VOLUME_MOUNT_STATUS),
    m("user", 13, _CONTAINER_USER, OPT), rm("allocatedResourcesStatus", 14, _RESOURCE_STATUS),
    s("stopSignal", 15, OPT),
)  # fmt: skip
_POD_RESOURCE_CLAIM_STATUS = _Message(
    "PodResourceClaimStatus", s("name", 1, KEEP), s("resourceClaimName", 2, OPT)
)
_CONTAINER_EXTENDED_RESOURCE_REQUEST = _Message(
    "ContainerExtendedResourceRequest",
    s("containerName", 1, KEEP), s("resourceName", 2, KEEP), s("requestName", 3, KEEP),
)  # fmt: skip
_POD_EXTENDED_RESOURCE_CLAIM_STATUS = _Message(
    "PodExtendedResourceClaimStatus",
    rm("requestMappings", 1, _CONTAINER_EXTENDED_RESOURCE_REQUEST, KEEP),
    s("resourceClaimName", 2, KEEP),
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
    m("extendedResourceClaimStatus", 18, _POD_EXTENDED_RESOURCE_CLAIM_STATUS, OPT | DECODED),
    i64("observedGeneration", 17),
    mq("allocatedResources", 19),
    m("resources", 20, _RESOURCE_REQUIREMENTS, OPT),
)
_POD = _Message(
    "Pod",
    m("metadata", 1, _OBJECT_META), m("spec", 2, _POD_SPEC), m("status", 3, _POD_STATUS),
)  # fmt: skip
