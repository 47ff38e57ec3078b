"""PodTopologySpread: topologySpreadConstraints (or the cluster defaults) as filter and score.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (v1.33): the plugin type,
New (argument validation), EventsToRegister and its queueing hints. The extension points are
in filtering.py and scoring.py, the constraints both use in common.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
)
from wasmsched.plugins.node_counts import NodeChanges, NodeCounts
from wasmsched.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    LIST_DEFAULTING,
    NAME,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    ObjectsFn,
    _has_all_keys,
    _no_objects,
)
from wasmsched.plugins.pod_topology_spread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    Filtering,
)
from wasmsched.plugins.pod_topology_spread.scoring import Scoring

if TYPE_CHECKING:
    from wasmsched.api.objects import Node, Pod
    from wasmsched.framework.interfaces import Handle


class PodTopologySpread(Filtering, Scoring):
    """The PodTopologySpread plugin (plugin.go: PodTopologySpread, New)."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Handle | None = None) -> None:
        args = dict(args or {})
        self.handle = handle
        defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ValueError(f"PodTopologySpreadArgs: defaultingType: unsupported {defaulting!r}")
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[Mapping[str, Any], ...] = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            self.default_constraints = tuple(args.get("defaultConstraints") or ())
        # Which actions the defaults have at all: a pod without constraints of its own needs
        # no Service lookup for an action no default constraint has.
        self._default_actions = frozenset(
            c.get("whenUnsatisfiable") for c in self.default_constraints if isinstance(c, Mapping)
        )
        self._objects: ObjectsFn = handle.objects if handle is not None else _no_objects
        # Per-domain counts kept across cycles, per kind of incoming pod (plugins/node_counts).
        self._incremental: dict[tuple[Any, ...], NodeCounts] = {}
        self._changes = NodeChanges()
        self._skip = Status(Code.SKIP)
        self._unschedulable = Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        self._missing_label = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH
        )

    # --- queueing hints -------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> list[tuple[str, Any]] | None:
        """SignPod (podtopologyspread/plugin.go, 1.35+): refuses a pod with constraints, and
        every pod while default constraints are configured (the system defaults are)."""
        if (pod.spec or {}).get("topologySpreadConstraints") or self.default_constraints:
            return None
        return []

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EventsToRegister (podtopologyspread/plugin.go: PodTopologySpread.EventsToRegister):
        Pod Add/UpdatePodLabel/UpdatePodToleration/Delete and Node Add/Delete/UpdateNodeLabel/
        UpdateNodeTaint.
        """
        pod_actions = (
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE
        )
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(POD, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(NODE, node_actions), self.is_schedulable_after_node_change
            ),
        ]

    def is_schedulable_after_pod_change(
        self, pod: Pod, old_obj: Pod | None, new_obj: Pod | None
    ) -> QueueingHint:
        """Queue for an assigned pod in the namespace that starts or stops matching a selector."""
        if (new_obj is not None and not _involved(new_obj, pod)) or (
            old_obj is not None and not _involved(old_obj, pod)
        ):
            return QueueingHint.QUEUE_SKIP
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ValueError:
            return QueueingHint.QUEUE
        if new_obj is not None and old_obj is not None:
            if (
                new_obj.uid == pod.uid
                and new_obj.tolerations != old_obj.tolerations
                and any(c.honor_node_taints for c in constraints)
            ):
                return QueueingHint.QUEUE
            if new_obj.labels == old_obj.labels:
                return QueueingHint.QUEUE_SKIP
            for c in constraints:
                if c.selector.matches(old_obj.labels) != c.selector.matches(new_obj.labels):
                    return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        changed = new_obj if new_obj is not None else old_obj
        if changed is not None and any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Node | None, new_obj: Node | None
    ) -> QueueingHint:
        """Queue when a node gains, loses or changes the constraints' topology labels."""
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except ValueError:
            return QueueingHint.QUEUE
        keys = [c.topology_key for c in constraints]
        old_match = old_obj is not None and _has_all_keys(old_obj.labels, keys)
        new_match = new_obj is not None and _has_all_keys(new_obj.labels, keys)
        if old_obj is not None and new_obj is not None:
            if old_match != new_match:
                return QueueingHint.QUEUE
            if new_match and (
                any(old_obj.labels.get(k) != new_obj.labels.get(k) for k in keys)
                or old_obj.taints != new_obj.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new_obj is not None:
            return QueueingHint.QUEUE if new_match else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_match else QueueingHint.QUEUE_SKIP


def _involved(changed: Pod, pod: Pod) -> bool:
    """involvedInTopologySpreading: the pod itself, or an assigned pod of its namespace."""
    return changed.uid == pod.uid or (
        bool(changed.node_name) and changed.namespace == pod.namespace
    )


def _not_found(key: str) -> Status:
    return Status(Code.ERROR, f'reading "{key}" from cycleState: not found')


def new(args: dict[str, Any], handle: Handle) -> PodTopologySpread:
    """The registry factory (plugin.go: New), from PodTopologySpreadArgs."""
    return PodTopologySpread(args, handle)


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
    # `var _ framework.PreFilterPlugin = &PodTopologySpread{}`
    # (pkg/scheduler/framework/plugins/podtopologyspread/plugin.go).
    _pre_filter: type[PreFilterPlugin] = PodTopologySpread
    _filter: type[FilterPlugin] = PodTopologySpread
    _pre_score: type[PreScorePlugin] = PodTopologySpread
    _score: type[ScorePlugin] = PodTopologySpread
    _enqueue_extensions: type[EnqueueExtensions] = PodTopologySpread
