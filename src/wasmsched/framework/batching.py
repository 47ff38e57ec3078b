"""Opportunistic batching (kube-scheduler 1.35+, gate OpportunisticBatching, KEP-5598):
consecutive pods with the same signature reuse the previous pod's sorted nodes.

Pod signatures (framework/runtime/framework.go: SignPod). Every PreFilter, Filter, PreScore
and Score plugin of a profile signs a pod with fragments (``sign_pod``: a list of (key,
value), or None to refuse); the signature is the JSON of the scheduler name and every
fragment. A profile with extenders, or with a plugin that cannot sign (a wasm guest: the
kube-scheduler-wasm-extension predates SignPlugin), never batches (computeBatchablePlugins).
The signers below are k8s.io/kube-scheduler/framework/signers.go's.

The batch (framework/runtime/batch.go: OpportunisticBatch). After a successful cycle the
rest of its node heap (framework/sorted_nodes) is kept with the pod's signature, unless the
pod took the hinted node, which keeps the heap it came from. The next cycle's pod gets a
hint (GetNodeHint) when it follows immediately (cycle count + 1), is not nominated, has the
same signature and the state is younger than 500 ms on the scheduler's clock: the previous
pod's node is filtered again for this pod and, when it passes, rescored (PreScore over the
kept nodes and it, its raw scores, NormalizeScore over all with the kept raw scores) and put
back; the top of the heap is the hint. The node search tries the hint first, as it tries a
nominated node (a nominated node wins over the hint).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wasmsched.api.cached import content_key, derived, kept_by_content
from wasmsched.framework.interfaces import NodeScore
from wasmsched.framework.sorted_nodes import ScoredNodeHeap
from wasmsched.framework.status import Code

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo, Snapshot
    from wasmsched.framework.runtime import Framework

__all__ = [
    "FEATURES_SIGNER",
    "MAX_BATCH_AGE",
    "SCHEDULER_NAME_SIGNER",
    "OpportunisticBatch",
    "PodSignature",
    "Signer",
    "host_ports_signature",
    "image_names_signature",
    "node_affinity_signature",
    "resources_signature",
    "tolerations_signature",
    "volumes_signature",
]

# framework/runtime/batch.go: maxBatchAge.
MAX_BATCH_AGE = 0.5

# k8s.io/kube-scheduler/framework/signers.go: the fragments' keys.
SCHEDULER_NAME_SIGNER = "v1.Pod.Spec.SchedulerName"
IMAGE_NAMES_SIGNER = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER = "v1.Pod.Labels"
NODE_NAME_SIGNER = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS_SIGNER = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
TOLERATIONS_SIGNER = "v1.Pod.Spec.Tolerations"
VOLUMES_SIGNER = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES_SIGNER = "v1.Pod.Spec.RequiredFeatures()"

PodSignature = bytes
"""A pod's signature: equal bytes, same feasibility and scores on the same nodes."""

Fragments = list[tuple[str, Any]]
Signer = Callable[["Pod"], Fragments | None]


# --- signers (k8s.io/kube-scheduler/framework/signers.go) ---------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _containers(pod: Pod) -> list[Mapping[str, Any]]:
    spec = pod.spec or {}
    return [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]


def resources_signature(pod: Pod, pod_level: bool = False) -> list[Any]:
    """computePodResourceRequest as Fit and BalancedAllocation sign it (fit.go: SignPod),
    with the pod-level requests under PodLevelResources."""
    request = pod.pod_level_requests if pod_level else pod.requests
    scalars = sorted(request.scalar.items())
    return [request.milli_cpu, request.memory, request.ephemeral_storage, scalars]


def host_ports_signature(pod: Pod) -> list[int]:
    """HostPortsSigner: the distinct host ports of containers and init containers, sorted."""
    ports = {
        int(port.get("hostPort") or 0)
        for container in _containers(pod)
        for port in container.get("ports") or ()
    }
    ports.discard(0)
    return sorted(ports)


def image_names_signature(pod: Pod, normalize: Callable[[str], str]) -> list[str]:
    """ImageLocality.SignPod: the distinct normalized images, sorted."""
    return sorted({normalize(str(c.get("image") or "")) for c in _containers(pod)})


def tolerations_signature(pod: Pod) -> list[Any]:
    """TolerationsSigner: the tolerations ordered by key then value (for the few a pod has,
    Go's sort.Slice is an insertion sort: stable)."""
    tolerations = list((pod.spec or {}).get("tolerations") or ())
    return sorted(tolerations, key=lambda t: (str(t.get("key") or ""), str(t.get("value") or "")))


def volumes_signature(pod: Pod) -> list[str]:
    """VolumesSigner: each volume's source but configMap and secret ones, as JSON, sorted.
    Four plugins sign with it (VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
    VolumeZone), and every pod has a volume (admission's service-account token): it is
    computed once per pod."""
    return derived(pod, _VOLUMES_KEY, _volumes_signature)


_VOLUMES_KEY = "batching/volumes_signature"


def _volumes_signature(pod: Pod) -> list[str]:
    sources = []
    for volume in (pod.spec or {}).get("volumes") or ():
        if "configMap" in volume or "secret" in volume:
            continue
        sources.append(_json({k: v for k, v in volume.items() if k != "name"}))
    return sorted(sources)


def _requirements(reqs: Sequence[Mapping[str, Any]] | None) -> list[str]:
    out = []
    for req in reqs or ():
        copy = dict(req)
        if "values" in copy:
            copy["values"] = sorted(copy["values"] or ())
        out.append(_json(copy))
    return sorted(out)


def _term(term: Mapping[str, Any]) -> dict[str, list[str]]:
    return {
        "MatchExpressions": _requirements(term.get("matchExpressions")),
        "MatchFields": _requirements(term.get("matchFields")),
    }


# Signatures of the node affinities seen, by content (the pods of one template share one).
_NODE_AFFINITY_SIGNATURES: dict[bytes, Any] = {}
_MAX_NODE_AFFINITY_SIGNATURES = 4096


def node_affinity_signature(pod: Pod) -> Any:
    """NodeAffinitySigner: the required terms and the preferred ones, each canonical; made
    once per distinct node affinity (api/cached.py's ``content_key``, as api/pod_spec keys
    the parsed parts: equal bytes, equal content of the same types). Read only: it is
    shared."""
    node_affinity = ((pod.spec or {}).get("affinity") or {}).get("nodeAffinity")
    if node_affinity is None:
        return None
    return kept_by_content(
        _NODE_AFFINITY_SIGNATURES,
        content_key(node_affinity),
        _node_affinity_signature,
        node_affinity,
        _MAX_NODE_AFFINITY_SIGNATURES,
    )


def _node_affinity_signature(node_affinity: Mapping[str, Any]) -> Any:
    preferred = node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    return {
        "Required": sorted(_json(_term(t)) for t in required.get("nodeSelectorTerms") or ()),
        "Preferred": sorted(
            _json({"Weight": t.get("weight", 0), "Preference": _term(t.get("preference") or {})})
            for t in preferred
        ),
    }


# --- the batch ----------------------------------------------------------------------------


@dataclass(slots=True)
class _BatchState:
    signature: PodSignature
    nodes: ScoredNodeHeap
    # Per node, its raw score per Score plugin, from the cycle that scored it.
    raw: dict[str, dict[str, int]]
    created: float


@dataclass(slots=True)
class _LastCycle:
    cycle: int
    chosen: str


class OpportunisticBatch:
    """batch.go's OpportunisticBatch for one profile (a framework whose plugins all sign)."""

    def __init__(self, fwk: Framework, signers: Sequence[Signer]) -> None:
        self._fwk = fwk
        self._signers = tuple(signers)
        self._state: _BatchState | None = None
        self._last: _LastCycle | None = None
        self.batched_pods = 0

    @classmethod
    def for_framework(cls, fwk: Framework) -> OpportunisticBatch | None:
        """computeBatchablePlugins: the batch when every PreFilter, Filter, PreScore and
        Score plugin signs pods (each once, by name), else None."""
        signers: dict[str, Signer] = {}
        candidates: list[Any] = [
            *fwk.pre_filter_plugins,
            *fwk.filter_plugins,
            *fwk.pre_score_plugins,
            *(p for p, _ in fwk.score_plugins),
        ]
        for plugin in candidates:
            if plugin.name in signers:
                continue
            sign = getattr(plugin, "sign_pod", None)
            if sign is None:
                return None
            signers[plugin.name] = sign
        return cls(fwk, list(signers.values()))

    def sign(self, pod: Pod) -> PodSignature | None:
        """SignPod: None when a plugin refuses."""
        signature: dict[str, Any] = {SCHEDULER_NAME_SIGNER: pod.scheduler_name}
        for sign in self._signers:
            fragments = sign(pod)
            if fragments is None:
                return None
            for key, value in fragments:
                signature[key] = value  # a later fragment with the same key wins
        return _json(signature).encode()

    # --- GetNodeHint --------------------------------------------------------------------

    def node_hint(
        self,
        state: CycleState,
        pod: Pod,
        signature: Callable[[], PodSignature | None],
        cycle: int,
        now: float,
        snapshot: Snapshot,
    ) -> str:
        """GetNodeHint: the node to try first, or "" (the state is only replaced by the
        cycle's results). ``signature`` signs the pod, called only when a batch is kept."""
        batch, last = self._state, self._last
        if batch is None or not len(batch.nodes) or last is None:
            return ""
        if (
            cycle != last.cycle + 1
            or pod.nominated_node_name
            or now > batch.created + MAX_BATCH_AGE
        ):
            return ""
        signed = signature()
        if signed is None or signed != batch.signature:
            return ""
        if not self._refresh(state, pod, batch, last.chosen, snapshot):
            return ""
        return batch.nodes.pop()[2]

    def _refresh(
        self, state: CycleState, pod: Pod, batch: _BatchState, chosen: str, snapshot: Snapshot
    ) -> bool:
        """refreshHintCandidates: the previous pod's node, filtered again for this pod, is
        rescored and put back when it passes; False flushes."""
        node_info = snapshot.get(chosen)
        if node_info is None:
            return False
        status = self._fwk.run_filter_plugins(state, pod, node_info)
        if status is None or status.code == Code.SUCCESS:
            return self._rescore(state, pod, batch, node_info, snapshot)
        return status.is_rejected()

    def _rescore(
        self,
        state: CycleState,
        pod: Pod,
        batch: _BatchState,
        chosen: NodeInfo,
        snapshot: Snapshot,
    ) -> bool:
        """rescoreHintedNode: PreScore on the kept nodes and the chosen one (a clone of the
        cycle state), the chosen node's raw scores, NormalizeScore over all of them with
        the kept nodes' raw scores, a new heap."""
        fwk = self._fwk
        kept = batch.nodes.unordered()
        nodes: list[NodeInfo] = []
        for _, _, name in kept:
            node_info = snapshot.get(name)
            if node_info is None:
                return False
            nodes.append(node_info)
        nodes.append(chosen)
        rescore_state = state.clone()
        if fwk.run_pre_score_plugins(rescore_state, pod, nodes) is not None:
            return False
        skipped = rescore_state.skip_score_plugins
        plugins = [(p, w) for p, w in fwk.score_plugins if p.name not in skipped]
        fresh: dict[str, int] = {}
        for plugin, _ in plugins:
            try:
                score, status = plugin.score(rescore_state, pod, chosen)
            except Exception:
                return False
            if status is not None and status.code != Code.SUCCESS:
                return False
            fresh[plugin.name] = score
        batch.raw[chosen.name] = fresh
        names = [name for _, _, name in kept] + [chosen.name]
        totals = [0] * len(names)
        for plugin, weight in plugins:
            scores = [NodeScore(n, batch.raw.get(n, {}).get(plugin.name, 0)) for n in names]
            extensions = plugin.score_extensions()
            if extensions is not None:
                try:
                    status = extensions.normalize_score(rescore_state, pod, scores)
                except Exception:
                    return False
                if status is not None and status.code != Code.SUCCESS:
                    return False
            for i, s in enumerate(scores):
                totals[i] += s.score * weight
        batch.nodes = ScoredNodeHeap([(t, 0, n) for t, n in zip(totals, names, strict=True)])
        return True

    # --- StoreScheduleResults -----------------------------------------------------------

    def store_results(
        self,
        signature: PodSignature | None,
        hinted: str,
        chosen: str,
        others: ScoredNodeHeap | None,
        raw: dict[str, dict[str, int]] | None,
        cycle: int,
        now: float,
    ) -> None:
        """StoreScheduleResults, after each successful scheduling algorithm: a pod that took
        the hint keeps the heap; otherwise the rest of this pod's heap (or nothing)."""
        self._last = _LastCycle(cycle, chosen)
        if hinted == chosen:
            self.batched_pods += 1
            return
        if signature is not None and others is not None and len(others):
            self._state = _BatchState(signature, others, raw or {}, now)
        else:
            self._state = None
