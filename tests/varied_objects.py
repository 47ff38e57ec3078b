"""Pods and nodes using every kind of field the protobuf decoder handles, for the real
kube-apiserver tests (test_live_real_apiserver.py: the protobuf answers decode as their
JSON): tolerations, affinity, topology spread, resources with odd quantities, init and
sidecar containers, probes with int and named ports, volumes of several sources with an
ephemeral claim template (a zero creationTimestamp), resource claims, statuses with
conditions and times, labels and annotations, owner references."""

from __future__ import annotations

from typing import Any

SELECTOR = {"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}  # fmt: skip


def full_pod(name: str) -> dict[str, Any]:
    container = {
        "name": "app",
        "image": "registry.example/app:1",
        "command": ["/app"], "args": ["--x", ""], "workingDir": "/w",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                  {"containerPort": 9090, "hostPort": 19090, "hostIP": "0.0.0.0"}],
        "env": [
            {"name": "PLAIN", "value": "v"},
            {"name": "EMPTY"},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                               "divisor": "1Mi"}}},
            {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k",
                                                             "optional": True}}},
        ],
        "envFrom": [{"prefix": "P_", "secretRef": {"name": "s", "optional": False}}],
        "resources": {
            "requests": {"cpu": "0.25", "memory": "129e6", "ephemeral-storage": "1.5Gi",
                         "example.com/dongle": "2"},
            "limits": {"cpu": "1500m", "memory": "1Gi", "example.com/dongle": "2"},
        },
        "volumeMounts": [{"name": "cache", "mountPath": "/cache", "readOnly": True,
                          "subPath": "x", "mountPropagation": "None"}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP",
                                      "httpHeaders": [{"name": "X", "value": ""}]},
                          "initialDelaySeconds": 3, "periodSeconds": 7, "failureThreshold": 2},
        "readinessProbe": {"tcpSocket": {"port": 8080}, "timeoutSeconds": 2},
        "startupProbe": {"exec": {"command": ["true"]}, "terminationGracePeriodSeconds": 5},
        "lifecycle": {"preStop": {"httpGet": {"port": 8080}}},
        "securityContext": {"runAsUser": 1000, "runAsNonRoot": True, "privileged": False,
                            "capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]},
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "imagePullPolicy": "IfNotPresent",
        "stdin": True,
    }  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": "web", "tier": "a", "example.com/empty": ""},
            "annotations": {"note": "multi\nline ✓", "json": '{"a": [1, 2]}'},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                 "uid": "0b6c0a4e-1b8e-4c3e-9d83-0a6f5c1b2d3e",
                                 "controller": True, "blockOwnerDeletion": False}],
        },
        "spec": {
            "initContainers": [
                {"name": "init", "image": "busybox", "command": ["sh", "-c", "true"],
                 "resources": {"requests": {"cpu": "10m"}}},
                {"name": "sidecar", "image": "proxy", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "1m", "memory": "1Ki"}}},
            ],
            "containers": [container, {"name": "second", "image": "x", "tty": True}],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 0,
            "activeDeadlineSeconds": 3600,
            "dnsPolicy": "None",
            "dnsConfig": {"nameservers": ["10.0.0.10"], "searches": ["a.local"],
                          "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]},
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "automountServiceAccountToken": False,
            "securityContext": {"fsGroup": 2000, "supplementalGroups": [1, 2, 3],
                                "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]},
            "hostname": "h", "subdomain": "s",
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "NotIn",
                                               "values": ["z9"]}]},
                        {"matchFields": [{"key": "metadata.name", "operator": "In",
                                          "values": ["node-a"]}]}]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "preference": {"matchExpressions": [
                            {"key": "disk", "operator": "Exists"}]}}],
                },
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": SELECTOR, "topologyKey": "zone",
                     "namespaces": ["default"], "namespaceSelector": {}}]},
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "podAffinityTerm": {"labelSelector": SELECTOR,
                                                        "topologyKey": "kubernetes.io/hostname",
                                                        "matchLabelKeys": ["pod-template-hash"]}}]},
            },
            "nodeName": "node-a",
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
                {"key": "k", "operator": "Exists"},
            ],
            "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a", "b"]}],
            "readinessGates": [{"conditionType": "example.com/ready"}],
            "enableServiceLinks": False,
            "topologySpreadConstraints": [
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": SELECTOR, "minDomains": 3, "nodeAffinityPolicy": "Honor",
                 "nodeTaintsPolicy": "Ignore", "matchLabelKeys": ["pod-template-hash"]},
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                 "whenUnsatisfiable": "ScheduleAnyway"},
            ],
            "os": {"name": "linux"},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
            "volumes": [
                {"name": "cache", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
                {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420, "optional": True,
                                              "items": [{"key": "a", "path": "a", "mode": 256}]}},
                {"name": "sec", "secret": {"secretName": "s"}},
                {"name": "host", "hostPath": {"path": "/var/x", "type": "DirectoryOrCreate"}},
                {"name": "claim", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "proj", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                    {"downwardAPI": {"items": [{"path": "labels",
                                                "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                ]}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
                    "metadata": {"labels": {"type": "scratch"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                             "resources": {"requests": {"storage": "10Gi"}}}}}},
            ],
        },
    }  # fmt: skip


def full_pod_status(pod: dict[str, Any]) -> dict[str, Any]:
    """A kubelet's status for ``full_pod``: running, with times, IPs and container states."""
    return {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
             "message": "containers with unready status: [app]",
             "lastTransitionTime": "2025-06-30T23:59:59Z", "lastProbeTime": None},
            {"type": "PodScheduled", "status": "True",
             "lastTransitionTime": "1999-12-31T23:59:59Z"},
        ],
        "hostIP": "10.1.0.1", "hostIPs": [{"ip": "10.1.0.1"}],
        "podIP": "10.2.0.7", "podIPs": [{"ip": "10.2.0.7"}, {"ip": "fd00::7"}],
        "startTime": "2025-07-01T00:00:00Z",
        "containerStatuses": [
            {"name": "app", "ready": False, "restartCount": 3, "image": "registry.example/app:1",
             "imageID": "sha256:abc", "containerID": "containerd://1", "started": True,
             "state": {"running": {"startedAt": "2025-07-01T00:00:05Z"}},
             "lastState": {"terminated": {"exitCode": -1, "signal": 9, "reason": "OOMKilled",
                                          "startedAt": "2025-07-01T00:00:01Z",
                                          "finishedAt": "2025-07-01T00:00:04Z"}}},
            {"name": "second", "ready": True, "restartCount": 0, "image": "x", "imageID": "",
             "state": {"waiting": {"reason": "ContainerCreating"}}},
        ],
        "initContainerStatuses": [
            {"name": "init", "ready": True, "restartCount": 0, "image": "busybox", "imageID": "",
             "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "sidecar", "ready": True, "restartCount": 0, "image": "proxy", "imageID": "",
             "started": True, "state": {"running": {}}},
        ],
    }  # fmt: skip


def full_node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name,
                     "labels": {"kubernetes.io/hostname": name, "zone": "z1", "disk": ""},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {
            "podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24", "fd00:1::/64"],
            "providerID": "example://n",
            "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                       {"key": "flaky", "effect": "NoExecute",
                        "timeAdded": "2025-01-01T00:00:00Z"}],
        },
        "status": {
            "capacity": {"cpu": "3.5", "memory": "16Gi", "pods": "110",
                         "ephemeral-storage": "100e9", "hugepages-2Mi": "0",
                         "example.com/dongle": "4"},
            "allocatable": {"cpu": "3500m", "memory": "15.5Gi", "pods": "110",
                            "example.com/dongle": "4"},
            "conditions": [{"type": "MemoryPressure", "status": "False",
                            "lastHeartbeatTime": "2025-07-01T00:00:00Z",
                            "lastTransitionTime": "2025-07-01T00:00:00Z",
                            "reason": "KubeletHasSufficientMemory", "message": "ok"}],
            "addresses": [{"type": "InternalIP", "address": "10.1.0.1"},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b",
                         "kernelVersion": "6.1", "osImage": "Debian", "kubeletVersion": "v1.33.4",
                         "containerRuntimeVersion": "containerd://2", "kubeProxyVersion": "",
                         "operatingSystem": "linux", "architecture": "amd64"},
            "images": [{"names": ["registry.example/app:1", "registry.example/app@sha256:1"],
                        "sizeBytes": 123456789},
                       {"names": ["tiny"], "sizeBytes": 0}],
            "volumesInUse": ["kubernetes.io/csi/x^y"],
            "volumesAttached": [{"name": "kubernetes.io/csi/x^y", "devicePath": ""}],
            "runtimeHandlers": [{"name": "runc", "features": {"recursiveReadOnlyMounts": True}}],
        },
    }  # fmt: skip
