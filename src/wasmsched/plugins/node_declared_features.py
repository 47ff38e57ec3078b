"""NodeDeclaredFeatures: a pod that needs a node feature fits only nodes declaring it
(k8s ``plugins/nodedeclaredfeatures``, v1.35+, the NodeDeclaredFeatures gate).

The pod's required features are inferred from its spec as component-helpers'
``nodedeclaredfeatures`` framework does for scheduling (``InferForPodScheduling``); a node
declares its features in ``status.declaredFeatures``. Without the gate the plugin does
nothing (nodedeclaredfeatures.go: New returns a disabled plugin).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from wasmsched.api.cached import derived
from wasmsched.framework.batching import FEATURES_SIGNER
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.helpers import features_of
from wasmsched.release.version import KubernetesVersion

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, PreFilterResult
    from wasmsched.framework.node_info import NodeInfo

NAME = "NodeDeclaredFeatures"
PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't match Pod's required features"

# ContainerRestartRuleActionRestartAllContainers (k8s.io/api core/v1).
RESTART_ALL_CONTAINERS = "RestartAllContainers"


class PodFeatureInputs(NamedTuple):
    """What the inferences read of a pod, read in their order (hostUsers only for a
    hostNetwork pod, as usernamespaceshostnetwork reads it): pods with equal inputs
    require the same features, so the inference runs once per distinct inputs."""

    restart_rule_actions: frozenset[str]
    host_network: bool
    host_users: bool | None
    uses_bind_mount_options: bool

    @classmethod
    def of(cls, pod: Pod) -> PodFeatureInputs:
        """What the inferences read of ``pod``."""
        actions = pod.restart_rule_actions
        host_network = pod.host_network
        host_users = pod.host_users if host_network else None
        return cls(actions, host_network, host_users, pod.uses_bind_mount_options)


def _restart_all_containers(pod: PodFeatureInputs) -> bool:
    """restartallcontainers: a container or init container with a restart rule whose action
    is RestartAllContainers."""
    return RESTART_ALL_CONTAINERS in pod.restart_rule_actions


def _user_namespaces_host_network(pod: PodFeatureInputs) -> bool:
    """usernamespaceshostnetwork: a hostNetwork pod with hostUsers set to false."""
    return pod.host_network and pod.host_users is False


def _volume_bind_mount_options(pod: PodFeatureInputs) -> bool:
    """volumebindmountoptions: a volume mount with bindMountOptions."""
    return pod.uses_bind_mount_options


def _never(pod: PodFeatureInputs) -> bool:
    """Features only a pod update can require (InferForScheduling is false)."""
    return False


# The features of component-helpers v0.37.2 (nodedeclaredfeatures/features/registry.go:
# AllFeatures) in name order, as the framework keeps them (framework.go: New), each with
# its InferForScheduling and MaxVersion (None: no limit; every feature of v0.37.2 has none).
_FEATURES: tuple[tuple[str, Callable[[PodFeatureInputs], bool], KubernetesVersion | None], ...] = (
    tuple(
        sorted(
            (
                ("RestartAllContainersOnContainerExits", _restart_all_containers, None),
                ("InPlacePodLevelResourcesVerticalScaling", _never, None),
                ("ExtendWebSocketsToKubelet", _never, None),
                ("InPlacePodVerticalScalingInitContainers", _never, None),
                ("InPlacePodVerticalScalingMemoryBackedVolumes", _never, None),
                ("UserNamespacesHostNetworkSupport", _user_namespaces_host_network, None),
                ("DRANodeAllocatableResources", _never, None),
                ("VolumeBindMountOptions", _volume_bind_mount_options, None),
                ("DRAOptionalNodeOperations", _never, None),
            ),
            key=lambda feature: feature[0],
        )
    )
)
REGISTERED_FEATURES: tuple[str, ...] = tuple(name for name, _, _ in _FEATURES)


def infer_for_scheduling(pod: Pod, version: KubernetesVersion) -> frozenset[str]:
    """The features ``pod`` requires of a node (framework.go: InferForPodScheduling): those
    whose inference holds, unless ``version`` is past the feature's MaxVersion."""
    return _inferred(PodFeatureInputs.of(pod), version)


@functools.lru_cache(maxsize=256)
def _inferred(inputs: PodFeatureInputs, version: KubernetesVersion) -> frozenset[str]:
    return frozenset(
        name
        for name, infer, max_version in _FEATURES
        if (max_version is None or not version > max_version) and infer(inputs)
    )


def node_feature_set(declared: Sequence[str]) -> frozenset[str]:
    """The registered features among a node's declared ones (featureset.go: TryMap).

    TryMap merges the list against the sorted registry, so it reads a sorted list; an
    unsorted one (which the API server refuses) loses what the merge steps over, as there.
    """
    found: set[str] = set()
    i = j = 0
    while i < len(declared) and j < len(REGISTERED_FEATURES):
        if declared[i] == REGISTERED_FEATURES[j]:
            found.add(declared[i])
            i += 1
            j += 1
        elif declared[i] < REGISTERED_FEATURES[j]:
            i += 1
        else:
            j += 1
    return frozenset(found)


class _Requirements:
    """PreFilter's state (nodedeclaredfeatures.go: preFilterState): the required features."""

    __slots__ = ("features",)

    def __init__(self, features: frozenset[str]) -> None:
        self.features = features

    def clone(self) -> _Requirements:
        return self


class NodeDeclaredFeatures:
    """The NodeDeclaredFeatures plugin (pkg/scheduler/framework/plugins/nodedeclaredfeatures/
    nodedeclaredfeatures.go: NodeDeclaredFeatures)."""

    name = NAME
    # Filter reads the node alone, never the pods on it, and writes nothing: preemption's
    # dry run by sums (plugins/default_preemption.py) and the nominated nodes' first
    # Filter pass (framework/nominated.py) take its verdict on the node as it stands.
    filter_reads_node_alone = True

    def __init__(self, handle: Handle | None = None) -> None:
        features = features_of(handle)
        self.enabled = features.node_declared_features
        # The scheduler's own version (component-base version.Get()): the release modelled.
        self.version = features.version
        self._part_key = f"node_declared_features/{self.version}"
        self._skip = Status(Code.SKIP)
        self._rejected = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (nodedeclaredfeatures.go: PreFilter): the pod's required features; Skip
        when it requires none (or the gate is off)."""
        if not self.enabled:
            return None, self._skip
        # What the inference reads is all in the containers' part of the spec: kept there,
        # it is inferred once for the pods of a template (their errors are the pod's own:
        # nothing is kept for a part whose fields do not parse).
        required: frozenset[str] = derived(
            pod.containers_part, self._part_key, lambda _: infer_for_scheduling(pod, self.version)
        )
        if not required:
            return None, self._skip
        state.write(PRE_FILTER_KEY, _Requirements(required))
        return None, None

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (nodedeclaredfeatures.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (nodedeclaredfeatures.go: Filter): UnschedulableAndUnresolvable on a node
        that does not declare every required feature."""
        if not self.enabled:
            return None
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status(
                Code.ERROR, f'error reading "{PRE_FILTER_KEY}" from cycle-state: not found'
            )
        if s.features <= node_feature_set(node_info.node.declared_features):
            return None
        return self._rejected

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (nodedeclaredfeatures.go): the required features as FeatureSet.String
        writes them (bitmap.go: one '0'/'1' per registered feature, in name order)."""
        required = infer_for_scheduling(pod, self.version) if self.enabled else frozenset()
        bits = "".join("1" if name in required else "0" for name in REGISTERED_FEATURES)
        return [(FEATURES_SIGNER, bits)]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (nodedeclaredfeatures.go): Node Add|UpdateNodeDeclaredFeature and
        the pod's own updates, each with its hint; nothing without the gate."""
        if not self.enabled:
            return []
        # ActionType has no UpdateNodeDeclaredFeature bit yet: every node update is
        # registered and the hint skips those that leave the declared features alone,
        # which queues exactly the pods the narrower registration would.
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(POD, ActionType.UPDATE), self.is_schedulable_after_target_pod_update
            ),
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Node | None, new_obj: Node | None
    ) -> QueueingHint:
        """isSchedulableAfterNodeChange: queue unless the node's declared features are the
        same list as before."""
        if new_obj is None:
            return QueueingHint.QUEUE_SKIP
        if old_obj is not None and old_obj.declared_features == new_obj.declared_features:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_target_pod_update(
        self, pod: Pod, old_obj: Pod | None, new_obj: Pod | None
    ) -> QueueingHint:
        """isSchedulableAfterTargetPodUpdate: queue when the pod's own update changes the
        features it requires."""
        if old_obj is None or new_obj is None or new_obj.uid != pod.uid:
            return QueueingHint.QUEUE_SKIP
        before = infer_for_scheduling(old_obj, self.version)
        if before == infer_for_scheduling(new_obj, self.version):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def new(args: dict[str, Any], handle: Handle) -> NodeDeclaredFeatures:
    """The registry factory (nodedeclaredfeatures.go: New); the plugin takes no args."""
    return NodeDeclaredFeatures(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ fwk.PreFilterPlugin = &NodeDeclaredFeatures{}`
    # (pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go).
    _pre_filter: type[PreFilterPlugin] = NodeDeclaredFeatures
    _filter: type[FilterPlugin] = NodeDeclaredFeatures
    _enqueue_extensions: type[EnqueueExtensions] = NodeDeclaredFeatures
