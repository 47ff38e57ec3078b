"""FitError and Diagnosis: why a pod fits no node, in kube-scheduler's message format."""

from __future__ import annotations

from dataclasses import dataclass, field

from wasmsched.errors import WasmschedError
from wasmsched.framework.interfaces import NodeToStatus
from wasmsched.framework.status import Code, Status

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass
class Diagnosis:
    """Why a pod fits no node (framework.Diagnosis): per-node statuses and the plugins that rejected it."""

    node_to_status: NodeToStatus = field(
        default_factory=lambda: NodeToStatus(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    )
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    evaluated_nodes: int = 0

    def rejections_by_plugin(self) -> dict[str, int]:
        """Nodes rejected per plugin: each node's status counts for the plugin that gave it
        (a PreFilter rejection covers the nodes it left out, counted as one entry)."""
        counts: dict[str, int] = {}
        for status in self.node_to_status.explicit().values():
            name = status.plugin or "(unknown)"
            counts[name] = counts.get(name, 0) + 1
        absent = self.node_to_status.absent_nodes_status
        if self.pre_filter_msg and absent is not None and absent.plugin and not counts:
            counts[absent.plugin] = self.evaluated_nodes or 1
        return dict(sorted(counts.items()))

    def add_plugin_status(self, status: Status) -> None:
        """Counts the status's plugin among the unschedulable (or pending) plugins."""
        if not status.plugin:
            return
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)
        elif status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
            self.unschedulable_plugins.add(status.plugin)


class FitError(WasmschedError):
    """No node fits; ``str()`` is kube-scheduler's FitError.Error() text."""

    def __init__(self, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            histogram = self.reason_histogram()
            if histogram:
                msg += " " + ", ".join(f"{n} {reason}" for reason, n in histogram) + "."
        if d.post_filter_msg:
            # v1.33 appends the PostFilter message as it is, without a period
            # (pkg/scheduler/framework/types.go: FitError.Error).
            msg += f" {d.post_filter_msg}"
        return msg

    def reason_histogram(self) -> list[tuple[str, int]]:
        """(reason, node count), sorted as kube-scheduler sorts the "N reason" strings."""
        counts: dict[str, int] = {}
        nts = self.diagnosis.node_to_status
        for status in nts.explicit().values():
            for reason in status.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        absent = self.num_all_nodes - len(nts)
        if absent > 0 and nts.absent_nodes_status is not None:
            for reason in nts.absent_nodes_status.reasons:
                counts[reason] = counts.get(reason, 0) + absent
        return sorted(counts.items(), key=lambda kv: f"{kv[1]} {kv[0]}")
