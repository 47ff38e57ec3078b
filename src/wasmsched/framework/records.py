"""Values the framework's runners produce: scores, explain records, observer calls.

kube-scheduler's counterparts are framework.NodePluginScores and framework.PluginScore
(pkg/scheduler/framework/interface.go); the explain record follows
kube-scheduler-simulator's per-extension-point result annotations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wasmsched.framework.status import Code, Status

# Called (extension point, plugin name, status code name, seconds) after each plugin call:
# kube-scheduler's plugin_execution_duration_seconds labels.
PluginObserver = Callable[[str, str, str, float], None]


class BindingPending(Status):
    """What a Bind plugin returns when it has started a binding that ends later.

    The plugin promises that its outcome reaches ``Scheduler.complete_binding`` on the
    scheduling thread, after ``bind`` has returned; until then the pod stays assumed.
    """

    __slots__ = ()

    def __init__(self, message: str = "binding in flight") -> None:
        super().__init__(Code.SUCCESS, message)


@dataclass(slots=True)
class PluginScore:
    """One plugin's weighted score of a node."""

    name: str
    score: int  # weighted


@dataclass(slots=True)
class NodePluginScores:
    """A node's scores from every Score plugin (and extender), and their total."""

    name: str
    scores: list[PluginScore]
    total_score: int


@dataclass
class CycleRecord:
    """What explain mode keeps of one scheduling cycle (kube-scheduler-simulator style)."""

    pre_filter: dict[str, str] = field(default_factory=dict)
    # node -> plugin -> "passed" | reason
    filter: dict[str, dict[str, str]] = field(default_factory=dict)
    post_filter: dict[str, str] = field(default_factory=dict)
    pre_score: dict[str, str] = field(default_factory=dict)
    # node -> plugin -> (raw, normalized, weighted)
    score: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    reserve: dict[str, str] = field(default_factory=dict)
    permit: dict[str, str] = field(default_factory=dict)
    bind: dict[str, str] = field(default_factory=dict)
    selected_node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record as the JSON of ``simulate --explain --output json``."""
        return {
            "preFilter": self.pre_filter,
            "filter": self.filter,
            "postFilter": self.post_filter,
            "preScore": self.pre_score,
            "score": {
                node: {
                    p: {"raw": v[0], "normalized": v[1], "weighted": v[2]} for p, v in ps.items()
                }
                for node, ps in self.score.items()
            },
            "reserve": self.reserve,
            "permit": self.permit,
            "bind": self.bind,
            "selectedNode": self.selected_node,
        }


__all__ = ["BindingPending", "CycleRecord", "NodePluginScores", "PluginObserver", "PluginScore"]
