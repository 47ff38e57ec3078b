"""NodeAffinity: the pod's nodeSelector and node affinity, plus the profile's addedAffinity.

k8s ``plugins/nodeaffinity`` (v1.33): PreFilter narrows the nodes to the ``metadata.name``
terms, Filter checks the required affinity, Score sums the weights of matching preferred
terms and NormalizeScore scales them to [0, 100].
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from wasmsched.api.selectors import NodeSelector, PreferredSchedulingTerms, SelectorError
from wasmsched.framework.batching import (
    NODE_AFFINITY_SIGNER,
    NODE_SELECTOR_SIGNER,
    node_affinity_signature,
)
from wasmsched.framework.columns import (
    IntArray,
    NodeColumns,
    NodeRows,
    RowValues,
    default_normalize_columns,
)
from wasmsched.framework.interfaces import MAX_NODE_SCORE, PreFilterResult
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.helpers import default_normalize_score

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.api.selectors import RequiredNodeAffinity
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, NodeScore
    from wasmsched.framework.node_info import NodeInfo

NAME = "NodeAffinity"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

# Per-node answers kept per distinct selector in the columns' node cache (re-read for the
# nodes that change); a cluster has few distinct selectors, and the cache stays bounded.
_MAX_CACHED = 256


def _cached_rows(
    columns: NodeColumns, key: tuple[Any, ...], compute: Callable[[list[NodeInfo]], Any]
) -> IntArray | None:
    """The per-row answer for ``key`` over every row of the columns, computed once (then
    kept up to date by the columns: ``compute`` reads nothing but each node)."""
    cache = columns.node_cache
    found: RowValues | None = cache.get(key)
    if found is None:
        found = RowValues.of(columns.infos.tolist(), compute)
        if found is None:
            return None
        if len(cache) >= _MAX_CACHED:
            cache.clear()
        cache[key] = found
    return found.values


def _node_affinity(pod: Pod) -> Mapping[str, Any]:
    affinity = pod.spec.get("affinity") or {}
    return affinity.get("nodeAffinity") or {}


class _PreFilterState:
    __slots__ = ("required",)

    def __init__(self, required: RequiredNodeAffinity) -> None:
        self.required = required

    def clone(self) -> _PreFilterState:
        return self


class _PreferredTerms:
    """NodeAffinity's PreScore state (node_affinity.go ``preScoreState``): the pod's
    preferred node affinity terms, parsed once (None: the pod has none)."""

    __slots__ = ("preferred",)

    def __init__(self, preferred: PreferredSchedulingTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> _PreferredTerms:
        return self


def parse_added_affinity(
    raw: dict[str, Any] | None,
) -> tuple[NodeSelector | None, PreferredSchedulingTerms | None]:
    """NodeAffinityArgs.addedAffinity as (required selector, preferred terms); ValueError if bad."""
    raw = dict(raw or {})
    raw.pop("apiVersion", None)
    raw.pop("kind", None)
    for key in raw:
        if key != "addedAffinity":
            raise ValueError(f"NodeAffinityArgs: {key}: unknown field")
    added = raw.get("addedAffinity")
    if added is None:
        return None, None
    if not isinstance(added, Mapping):
        raise ValueError("NodeAffinityArgs: addedAffinity: must be a mapping")
    selector = None
    preferred = None
    try:
        if added.get(_REQUIRED) is not None:
            selector = NodeSelector.from_dict(added[_REQUIRED], f"addedAffinity.{_REQUIRED}")
            if selector.errors:
                raise ValueError(f"addedAffinity.{_REQUIRED}: {selector.errors[0]}")
        if added.get(_PREFERRED):
            preferred = PreferredSchedulingTerms.from_list(
                added[_PREFERRED], f"addedAffinity.{_PREFERRED}"
            )
            if preferred.error is not None:
                raise ValueError(f"addedAffinity.{_PREFERRED}: {preferred.error}")
    except (SelectorError, ValueError) as e:
        raise ValueError(f"NodeAffinityArgs: {e}") from None
    return selector, preferred


class NodeAffinity:
    """The NodeAffinity plugin (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go:
    NodeAffinity), with the profile's ``addedAffinity`` from NodeAffinityArgs.
    """

    name = NAME
    # Filter reads the node alone, never the pods on it, and writes nothing: preemption's
    # dry run by sums (plugins/default_preemption.py) and the nominated nodes' first
    # Filter pass (framework/nominated.py) take its verdict on the node as it stands.
    filter_reads_node_alone = True

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.added_node_selector, self.added_pref_terms = parse_added_affinity(args)
        self._skip = Status(Code.SKIP)
        # PreFilter's state and result per parsed required affinity (id -> (it, both)).
        self._pre_filtered: dict[
            int, tuple[RequiredNodeAffinity, _PreFilterState, PreFilterResult | None]
        ] = {}
        self._rejected_pod = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        self._rejected_enforced = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        # Filter's answers by _verdict: pass, the added affinity's rejection, the pod's.
        self._verdicts = (None, self._rejected_enforced, self._rejected_pod)

    # --- PreFilter / Filter ---------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """PreFilter (node_affinity.go: NodeAffinity.PreFilter): parses the pod's required
        affinity once and, when its terms name nodes by ``metadata.name``, narrows the cycle to
        them (a PreFilterResult).
        """
        required = _node_affinity(pod).get(_REQUIRED)
        if (
            required is None
            and self.added_node_selector is None
            and (pod.spec.get("nodeSelector") is None)
        ):
            return None, self._skip
        req = pod.required_node_affinity
        found = self._pre_filtered.get(id(req))
        if found is None or found[0] is not req:
            # Read-only, so shared by the pods of a template (they share ``req``, api/pod_spec).
            names = req.node_names
            result = None if names is None or not names else PreFilterResult(names)
            found = (req, _PreFilterState(req), result)
            if len(self._pre_filtered) >= _MAX_CACHED:
                self._pre_filtered.clear()
            self._pre_filtered[id(req)] = found
        state.write(PRE_FILTER_KEY, found[1])
        if found[2] is None and req.node_names is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return found[2], None

    def pre_filter_extensions(self) -> None:
        """PreFilterExtensions (node_affinity.go): none."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (node_affinity.go: NodeAffinity.Filter): the node must match the added affinity
        and the pod's nodeSelector and required node affinity.
        """
        s = state.get(PRE_FILTER_KEY)
        req = s.required if s is not None else pod.required_node_affinity
        return self._verdicts[_verdict(self.added_node_selector, req, node_info.node)]

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]] | None:
        """``filter`` over the columns: the answer of every node for the pod's nodeSelector
        and required terms is computed once per distinct selector (and node set)."""
        s = state.get(PRE_FILTER_KEY)
        key = (
            "NodeAffinity.filter",
            id(self),
            # The parsed selector, what Filter reads: one object for all the pods with the
            # same nodeSelector and affinity (api/pod_spec), kept alive by the cache.
            s.required
            if s is not None
            else json.dumps(
                [pod.spec.get("nodeSelector"), _node_affinity(pod).get(_REQUIRED)],
                sort_keys=True,
                default=str,
            ),
        )
        req = s.required if s is not None else pod.required_node_affinity
        added = self.added_node_selector

        def compute(infos: list[NodeInfo]) -> IntArray:
            # _verdict's codes are the columnar codes: 0 passes, k is statuses[k - 1].
            verdicts = (_verdict(added, req, ni.node) for ni in infos)
            return np.fromiter(verdicts, np.int64, len(infos))

        codes = _cached_rows(rows.columns, key, compute)
        assert codes is not None
        return codes[rows.rows], [self._rejected_enforced, self._rejected_pod]

    # --- PreScore / Score -----------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (node_affinity.go: NodeAffinity.PreScore): parses the pod's preferred terms;
        Skip when neither the pod nor the profile has any.
        """
        preferred, status = _pod_preferred(pod)
        if status is not None:
            return status
        if preferred is None and self.added_pref_terms is None:
            return self._skip
        state.write(PRE_SCORE_KEY, _PreferredTerms(preferred))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (node_affinity.go: NodeAffinity.Score): the summed weights of the preferred terms
        (the pod's and the added ones) the node matches.
        """
        s = state.get(PRE_SCORE_KEY)
        if s is not None:
            preferred = s.preferred
        else:
            preferred, status = _pod_preferred(pod)
            if status is not None:
                return 0, status
        return _weights(self.added_pref_terms, preferred, node_info.node), None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` over the columns: every node's summed weights for the pod's preferred
        terms, computed once per distinct set of terms (and node set); None on an error
        (the per-node form reports it)."""
        s = state.get(PRE_SCORE_KEY)
        key = (
            "NodeAffinity.score",
            id(self),
            # The parsed terms Score reads (shared as the required ones are, above).
            s.preferred
            if s is not None
            else json.dumps(_node_affinity(pod).get(_PREFERRED), sort_keys=True, default=str),
        )
        if s is not None:
            preferred = s.preferred
        else:
            preferred, status = _pod_preferred(pod)
            if status is not None:
                return None
        added = self.added_pref_terms

        def compute(infos: list[NodeInfo]) -> IntArray | None:
            try:
                return np.array([_weights(added, preferred, ni.node) for ni in infos], np.int64)
            except OverflowError:
                return None

        values = _cached_rows(rows.columns, key, compute)
        return None if values is None else values[rows.rows]

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """NormalizeScore (node_affinity.go): helper.DefaultNormalizeScore onto [0, 100]."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_columns(self, values: IntArray) -> IntArray:
        """``normalize_score`` over an array of scores."""
        return default_normalize_columns(MAX_NODE_SCORE, False, values)

    def score_extensions(self) -> NodeAffinity:
        """ScoreExtensions (node_affinity.go): the plugin itself (NormalizeScore)."""
        return self

    # --- queueing hints -------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (node_affinity.go, 1.35+): the node affinity and the node selector."""
        selector = (pod.spec or {}).get("nodeSelector")
        return [
            (NODE_AFFINITY_SIGNER, node_affinity_signature(pod)),
            (NODE_SELECTOR_SIGNER, dict(selector) if selector is not None else None),
        ]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (node_affinity.go): Node Add/UpdateNodeLabel with
        isSchedulableAfterNodeChange.
        """
        # The queueing-hint registration (default since v1.32): Add | UpdateNodeLabel.
        return [
            ClusterEventWithHint(
                ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Node | None, new_obj: Node | None
    ) -> QueueingHint:
        """Queue for an added matching node, or a node that changed to match."""
        if new_obj is None:
            return QueueingHint.QUEUE_SKIP
        added = self.added_node_selector
        if added is not None and not added.matches(new_obj.labels, new_obj.name):
            return QueueingHint.QUEUE_SKIP
        req = pod.required_node_affinity
        if not req.matches(new_obj.labels, new_obj.name):
            return QueueingHint.QUEUE_SKIP
        if old_obj is None:
            return QueueingHint.QUEUE
        if req.matches(old_obj.labels, old_obj.name):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _verdict(added: NodeSelector | None, req: RequiredNodeAffinity, node: Node) -> int:
    """Filter's answer for ``node``: 0 it passes, 1 the added affinity rejects it, 2 the
    pod's nodeSelector or required affinity does."""
    if added is not None and not added.matches(node.labels, node.name):
        return 1
    return 0 if req.matches(node.labels, node.name) else 2


def _weights(
    added: PreferredSchedulingTerms | None, preferred: PreferredSchedulingTerms | None, node: Node
) -> int:
    """Score's sum of the weights of the added and the pod's preferred terms ``node`` matches."""
    count = 0
    if added is not None:
        count += added.score(node.labels, node.name)
    if preferred is not None:
        count += preferred.score(node.labels, node.name)
    return count


def _pod_preferred(pod: Pod) -> tuple[PreferredSchedulingTerms | None, Status | None]:
    """The pod's preferred terms, None when it has none, or an Error status if invalid."""
    if _node_affinity(pod).get(_PREFERRED) is None:
        return None, None
    try:
        preferred = pod.preferred_node_affinity
    except ValueError as e:
        return None, Status(Code.ERROR, str(e))
    if preferred.error is not None:
        return None, Status(Code.ERROR, preferred.error)
    return preferred, None


def new(args: dict[str, Any], handle: Handle) -> NodeAffinity:
    """The registry factory (node_affinity.go: New), from NodeAffinityArgs."""
    return NodeAffinity(args, handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import (
        EnqueueExtensions,
        FilterPlugin,
        PreFilterPlugin,
        PreScorePlugin,
        ScorePlugin,
    )

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.PreFilterPlugin = &NodeAffinity{}`
    # (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go).
    _pre_filter: type[PreFilterPlugin] = NodeAffinity
    _filter: type[FilterPlugin] = NodeAffinity
    _pre_score: type[PreScorePlugin] = NodeAffinity
    _score: type[ScorePlugin] = NodeAffinity
    _enqueue_extensions: type[EnqueueExtensions] = NodeAffinity
