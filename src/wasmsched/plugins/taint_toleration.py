"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score.

k8s ``plugins/tainttoleration``: v1.33 names the untolerated taint in the Filter's reason;
since v1.34 the reason is the same for every taint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wasmsched.api.taints import count_intolerable_prefer_no_schedule, find_untolerated_taint
from wasmsched.framework.batching import TOLERATIONS_SIGNER, tolerations_signature
from wasmsched.framework.columns import (
    IntArray,
    NodeRows,
    default_normalize_columns,
    values_by_class,
    verdicts_by_class,
)
from wasmsched.framework.interfaces import MAX_NODE_SCORE
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import ClusterEventWithHint, QueueingHint
from wasmsched.plugins.helpers import (
    default_normalize_score,
    features_of,
    taint_and_toleration_events,
)

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.api.taints import Toleration
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle, NodeScore
    from wasmsched.framework.node_info import NodeInfo

NAME = "TaintToleration"
PRE_SCORE_KEY = "PreScore" + NAME
PREFER_NO_SCHEDULE = "PreferNoSchedule"
# helper.DoNotScheduleTaintsFilterFunc
DO_NOT_SCHEDULE_EFFECTS = frozenset(("NoSchedule", "NoExecute"))


# The Filter's reason since v1.34, for any taint (taint_toleration.go: TaintToleration.Filter).
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"


def untolerated_reason(key: str, value: str) -> str:
    """The v1.33 Filter's reason for a taint (taint_toleration.go: TaintToleration.Filter)."""
    return f"node(s) had untolerated taint {{{key}: {value}}}"


class _PreferNoScheduleTolerations:
    """TaintToleration's PreScore state (taint_toleration.go ``preScoreState``): the pod's
    tolerations that Score holds PreferNoSchedule taints against
    (``prefer_no_schedule_tolerations``)."""

    __slots__ = ("tolerations",)

    def __init__(self, tolerations: tuple[Toleration, ...]) -> None:
        self.tolerations = tolerations

    def clone(self) -> _PreferNoScheduleTolerations:
        return self


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations with effect PreferNoSchedule, or none (which tolerates every effect)."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


class TaintToleration:
    """The TaintToleration plugin (pkg/scheduler/framework/plugins/tainttoleration/
    taint_toleration.go: TaintToleration).
    """

    name = NAME
    # Filter reads the node alone, never the pods on it, and writes nothing: preemption's
    # dry run by sums (plugins/default_preemption.py) and the nominated nodes' first
    # Filter pass (framework/nominated.py) take its verdict on the node as it stands.
    filter_reads_node_alone = True

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        # Rejections by (taint key, value): a cluster has few distinct taints.
        self._rejections: dict[tuple[str, str], Status] = {}
        self._names_taint = features_of(handle).taint_message_names_taint
        self._untolerated = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter (taint_toleration.go: TaintToleration.Filter): UnschedulableAndUnresolvable
        on a node with a NoSchedule or NoExecute taint the pod does not tolerate.
        """
        taints = node_info.node.taints
        if not taints:
            return None
        taint = find_untolerated_taint(taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
        if taint is None:
            return None
        if not self._names_taint:
            return self._untolerated
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, untolerated_reason(taint.key, taint.value)
        )

    def filter_columns(
        self, state: CycleState, pod: Pod, rows: NodeRows
    ) -> tuple[IntArray, list[Status]]:
        """``filter`` over the columns: once per distinct list of taints among the rows
        (the per-node form reads nothing else of the node), untainted rows pass."""
        ids = rows.columns.taint_classes.ids[rows.rows]
        return verdicts_by_class(ids, rows, lambda ni: self.filter(state, pod, ni))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """PreScore (taint_toleration.go: TaintToleration.PreScore): the pod's tolerations
        of PreferNoSchedule taints.
        """
        state.write(
            PRE_SCORE_KEY,
            _PreferNoScheduleTolerations(prefer_no_schedule_tolerations(pod.tolerations)),
        )
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score (taint_toleration.go: TaintToleration.Score): the count of the node's
        PreferNoSchedule taints the pod does not tolerate (inverted by NormalizeScore).
        """
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, Status(
                Code.ERROR, f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found'
            )
        taints = node_info.node.taints
        if not taints:
            return 0, None
        return count_intolerable_prefer_no_schedule(taints, s.tolerations), None

    def score_columns(self, state: CycleState, pod: Pod, rows: NodeRows) -> IntArray | None:
        """``score`` over the columns: counted once per distinct list of taints among the
        rows, untainted rows 0; None without PreScore's state (the per-node form reports the
        error)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return None
        tolerations = s.tolerations
        count = count_intolerable_prefer_no_schedule
        return values_by_class(
            rows.columns.taint_classes.ids[rows.rows],
            rows,
            lambda ni: count(ni.node.taints, tolerations),
        )

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """NormalizeScore (taint_toleration.go): helper.DefaultNormalizeScore, reversed."""
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def normalize_columns(self, values: IntArray) -> IntArray:
        """``normalize_score`` over an array of scores."""
        return default_normalize_columns(MAX_NODE_SCORE, True, values)

    def score_extensions(self) -> TaintToleration:
        """ScoreExtensions (taint_toleration.go): the plugin itself (NormalizeScore)."""
        return self

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]]:
        """SignPod (taint_toleration.go, 1.35+): the tolerations."""
        return [(TOLERATIONS_SIGNER, tolerations_signature(pod))]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (taint_toleration.go): Node Add/UpdateNodeTaint and the pod's own
        toleration updates, with this plugin's queueing hints."""
        return taint_and_toleration_events(
            is_schedulable_after_node_change, is_schedulable_after_pod_toleration_change
        )


def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """Queue when the node goes from having an untolerated taint to having none."""
    if new_obj is None:
        return QueueingHint.QUEUE_SKIP
    was_untolerated = old_obj is None or (
        find_untolerated_taint(old_obj.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
    )
    is_untolerated = (
        find_untolerated_taint(new_obj.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
    )
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_toleration_change(
    pod: Pod, old_obj: Any, new_obj: Any
) -> QueueingHint:
    """Only the unschedulable pod's own new tolerations can help it."""
    if new_obj is not None and new_obj.uid == pod.uid:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: dict[str, Any], handle: Handle) -> TaintToleration:
    """The registry factory (taint_toleration.go: New); the plugin takes no args."""
    return TaintToleration(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import (
        EnqueueExtensions,
        FilterPlugin,
        PreScorePlugin,
        ScorePlugin,
    )

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.FilterPlugin = &TaintToleration{}`
    # (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go).
    _filter: type[FilterPlugin] = TaintToleration
    _pre_score: type[PreScorePlugin] = TaintToleration
    _score: type[ScorePlugin] = TaintToleration
    _enqueue_extensions: type[EnqueueExtensions] = TaintToleration
