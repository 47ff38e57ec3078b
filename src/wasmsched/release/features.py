"""What one kube-scheduler release does, as switches the scheduler reads: the feature gates
that its plugins and framework consult, and the changes a release made without a gate.

kube builds ``feature.Features`` once from the process's gates
(pkg/scheduler/framework/plugins/feature/feature.go) and hands it to every plugin factory
(plugins/registry.go: NewInTreeRegistry); the framework reads ``utilfeature.DefaultFeatureGate``
directly. wasmsched models several releases, so a release's ungated changes (a new
BalancedAllocation formula, a new message) are switches here too. This module is the one
place that compares versions: the config loader, the profile build, the plugins and the
scheduler read booleans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from wasmsched.release.feature_gates import FeatureGateError, FeatureGates, gate_table, go_bool
from wasmsched.release.version import DEFAULT_KUBERNETES_VERSION, KubernetesVersion

__all__ = ["INERT_GATES", "MODELLED_GATES", "SchedulerFeatures"]

_V134 = KubernetesVersion(1, 34)
_V135 = KubernetesVersion(1, 35)
_V136 = KubernetesVersion(1, 36)
_V137 = KubernetesVersion(1, 37)


@dataclass(frozen=True, slots=True)
class SchedulerFeatures:
    """The switches of one release with its feature gates applied. Build it with ``of``."""

    version: KubernetesVersion
    gates: FeatureGates

    # --- feature gates (pkg/features/kube_features.go; feature.go's Enable* fields) ----
    # PodLevelResources: spec.resources counts in Fit, scoring and preemption
    # (component-helpers/resource/helpers.go: PodRequests).
    pod_level_resources: bool
    # NodeDeclaredFeatures: the NodeDeclaredFeatures plugin in the default profile and
    # NodeInfo's declared features.
    node_declared_features: bool
    # DynamicResourceAllocation: the DynamicResources plugin in the default profile.
    dynamic_resource_allocation: bool
    dra_prioritized_list: bool
    dra_admin_access: bool
    dra_device_taints: bool
    dra_device_taint_rules: bool
    dra_extended_resource: bool
    dra_partitionable_devices: bool
    dra_consumable_capacity: bool
    dra_device_binding_conditions: bool
    dra_resource_claim_device_status: bool
    # OpportunisticBatching (framework/runtime/batch.go).
    opportunistic_batching: bool
    # NominatedNodeNameForExpectation: the binding cycle records the chosen node as
    # nominatedNodeName before PreBind when a PreBind plugin has work (schedule_one.go:
    # bindingCycle).
    nominated_node_name_for_expectation: bool
    # ClearingNominatedNodeNameAfterBinding: the API server clears nominatedNodeName when
    # it binds (pkg/registry/core/pod/storage/storage.go: setPodNodeAndMetadata).
    clearing_nominated_node_name_after_binding: bool
    # StorageCapacityScoring: VolumeBinding's default shape and dynamic-provisioning Score.
    storage_capacity_scoring: bool
    # VolumeLimitScaling: CSIDriver.spec.preventPodSchedulingIfMissing in NodeVolumeLimits.
    volume_limit_scaling: bool
    # SchedulerPopFromBackoffQ: with activeQ empty, Pop takes a rejected pod from backoffQ
    # before its backoff ends (backend/queue/active_queue.go: unlockedPop).
    pop_from_backoff_q: bool

    # --- changes a release made without a gate ------------------------------------------
    # 1.34: NodeResourcesFit's Filter is UnschedulableAndUnresolvable when a request
    # exceeds the node's allocatable (noderesources/fit.go: fitsRequest).
    fit_unresolvable_over_allocatable: bool
    # 1.33: "node(s) had untolerated taint {key: value}"; 1.34: "node(s) had untolerated
    # taint(s)" (tainttoleration/taint_toleration.go: Filter).
    taint_message_names_taint: bool
    # 1.34: VolumeRestrictions' ReadWriteOncePod conflict message.
    rwop_in_use_message: bool
    # 1.34: host ports of sidecar containers count (util/utils.go: GetHostPorts).
    sidecar_host_ports: bool
    # 1.34: backoff grows with unschedulable attempts, not all attempts
    # (backend/queue/backoff_queue.go: getBackoffTime).
    backoff_by_unschedulable_count: bool
    # 1.35: the best node is popped from a heap over the feasible nodes
    # (framework/sorted_nodes.go), not sampled at random among the best (selectHost).
    host_from_sorted_nodes: bool
    # 1.35: DynamicResources has a Score extension, weight 2 in the default plugins.
    dynamic_resources_scores: bool
    # 1.36: BalancedAllocation scores the change in balance the pod makes
    # (noderesources/balanced_allocation.go: balancedResourceScorer).
    balanced_allocation_scores_change: bool
    # 1.36: ImageLocality counts the pod's image volumes (imagelocality: sumImageScores).
    image_locality_counts_image_volumes: bool
    # 1.36: "Preempted by <kind> <uid> on node <n>" and "... higher priority <kind>"
    # (preemption/executor.go: PreemptPod); the kind of a single pod is "pod", so its texts
    # are 1.33's: nothing reads this until pod groups are modelled.
    preemption_names_preemptor_kind: bool
    # 1.34: the API server's JSON leaves a zero metadata.creationTimestamp out instead of
    # writing null (apimachinery pkg/apis/meta/v1/types.go: ObjectMeta, omitzero); the
    # protobuf decoder gives what the JSON would (api/protobuf/decode.py).
    creation_timestamp_omitzero: bool
    # 1.37: NodeName before NodeUnschedulable in the default plugins
    # (apis/config/v1/default_plugins.go: getDefaultPlugins).
    node_name_before_node_unschedulable: bool

    @classmethod
    def of(
        cls,
        version: KubernetesVersion = DEFAULT_KUBERNETES_VERSION,
        feature_gates: str | Mapping[str, bool] | FeatureGates = "",
    ) -> SchedulerFeatures:
        """The switches of ``version`` with ``feature_gates`` (``--feature-gates`` text, a
        mapping, or gates already applied) set; FeatureGateError for what that release's
        kube-scheduler would refuse."""
        if isinstance(feature_gates, str) and not feature_gates:
            return _release_defaults(version)
        gates = (
            feature_gates
            if isinstance(feature_gates, FeatureGates)
            else FeatureGates.for_release(version, feature_gates)
        )
        if gates.release != version:
            raise ValueError(f"feature gates of {gates.release} given for {version}")

        _refuse_unmodelled(gates)

        def on(name: str) -> bool:
            # A gate the release does not register is its feature absent ("gone" before it
            # was added; a gate removed after GA is its feature always on, listed below).
            assert name in MODELLED_GATES, name
            return gates.enabled.get(name, False)

        return cls(
            version=version,
            gates=gates,
            pod_level_resources=on("PodLevelResources"),
            node_declared_features=on("NodeDeclaredFeatures"),
            dynamic_resource_allocation=on("DynamicResourceAllocation"),
            dra_prioritized_list=on("DRAPrioritizedList"),
            dra_admin_access=on("DRAAdminAccess"),
            dra_device_taints=on("DRADeviceTaints"),
            dra_device_taint_rules=on("DRADeviceTaintRules"),
            dra_extended_resource=on("DRAExtendedResource"),
            dra_partitionable_devices=on("DRAPartitionableDevices"),
            dra_consumable_capacity=on("DRAConsumableCapacity"),
            dra_device_binding_conditions=on("DRADeviceBindingConditions"),
            dra_resource_claim_device_status=on("DRAResourceClaimDeviceStatus"),
            opportunistic_batching=on("OpportunisticBatching"),
            nominated_node_name_for_expectation=on("NominatedNodeNameForExpectation"),
            clearing_nominated_node_name_after_binding=on("ClearingNominatedNodeNameAfterBinding"),
            storage_capacity_scoring=on("StorageCapacityScoring"),
            volume_limit_scaling=on("VolumeLimitScaling"),
            pop_from_backoff_q=on("SchedulerPopFromBackoffQ"),
            fit_unresolvable_over_allocatable=version >= _V134,
            taint_message_names_taint=version < _V134,
            rwop_in_use_message=version >= _V134,
            sidecar_host_ports=version >= _V134,
            backoff_by_unschedulable_count=version >= _V134,
            host_from_sorted_nodes=version >= _V135,
            dynamic_resources_scores=version >= _V135,
            balanced_allocation_scores_change=version >= _V136,
            image_locality_counts_image_volumes=version >= _V136,
            preemption_names_preemptor_kind=version >= _V136,
            creation_timestamp_omitzero=version >= _V134,
            node_name_before_node_unschedulable=version >= _V137,
        )


# The gates whose both states wasmsched models: the fields above read them.
MODELLED_GATES = frozenset(
    {
        "PodLevelResources",
        "NodeDeclaredFeatures",
        "DynamicResourceAllocation",
        "DRAPrioritizedList",
        "DRAAdminAccess",
        "DRADeviceTaints",
        "DRADeviceTaintRules",
        "DRAExtendedResource",
        "DRAPartitionableDevices",
        "DRAConsumableCapacity",
        "DRADeviceBindingConditions",
        "DRAResourceClaimDeviceStatus",
        "OpportunisticBatching",
        "NominatedNodeNameForExpectation",
        "ClearingNominatedNodeNameAfterBinding",
        "StorageCapacityScoring",
        "VolumeLimitScaling",
        "SchedulerPopFromBackoffQ",
    }
)
# Gates kube-scheduler reads that change nothing a run shows, either state.
INERT_GATES = frozenset(
    {
        # Debug endpoints (/flagz, /statusz).
        "ComponentFlagz",
        "ComponentStatusz",
        # A faster path to the same inter-pod affinity result (backend/cache/snapshot.go).
        "InterPodAffinityHostnameFastPath",
        # When status writes are issued (backend/api_dispatcher); the simulator's writes
        # land at once and the live mode's are off the scheduling thread either way.
        "SchedulerAsyncAPICalls",
        # Aborts an allocation that runs past 10 s (dynamicresources.go: Filter); the
        # simulator's allocator is not timed.
        "DRASchedulerFilterTimeout",
    }
)


def _refuse_unmodelled(gates: FeatureGates) -> None:
    """FeatureGateError for a gate set away from its default that the release's
    kube-scheduler reads and wasmsched does not model: the run would silently be the
    default's."""
    reads = gate_table().scheduler_reads.get(str(gates.release), frozenset())
    unmodelled = [
        f"{name}={go_bool(value)} (default {go_bool(not value)})"
        for name, value in sorted(gates.changed().items())
        if name in reads and name not in MODELLED_GATES and name not in INERT_GATES
    ]
    if unmodelled:
        these = "this gate" if len(unmodelled) == 1 else "these gates"
        raise FeatureGateError(
            f"--feature-gates: {', '.join(unmodelled)}: wasmsched models kube-scheduler "
            f"{gates.release} with {these} at the default only (docs/versions.md)"
        )


@cache
def _release_defaults(version: KubernetesVersion) -> SchedulerFeatures:
    """A release with its default gates: built once, as every config load asks for it."""
    return SchedulerFeatures.of(version, FeatureGates.for_release(version))
