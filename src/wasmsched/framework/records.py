"""Values the framework's runners produce: explain records, observer calls.

The explain record follows kube-scheduler-simulator's per-extension-point result
annotations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from wasmsched.framework.status import Code, Status, code_name

# Called (extension point, plugin name, status code name, seconds) after each plugin call:
# kube-scheduler's plugin_execution_duration_seconds labels.
PluginObserver = Callable[[str, str, str, float], None]


class PluginCallCounter(Protocol):
    """A PluginObserver that also takes ``count`` calls of one label set at once, each
    lasting ``seconds`` (framework/observed: observe_calls; a vectorized Filter or Score
    call stands for one call per node). Observers without ``calls`` are called per call."""

    def __call__(self, point: str, plugin: str, code: str, seconds: float) -> None: ...

    def calls(self, point: str, plugin: str, code: str, seconds: float, count: int) -> None: ...


class BindingPending(Status):
    """What a Bind plugin returns when it has started a binding that ends later.

    The plugin promises that its outcome reaches ``Scheduler.complete_binding`` on the
    scheduling thread, after ``bind`` has returned; until then the pod stays assumed.
    """

    __slots__ = ()

    def __init__(self, message: str = "binding in flight") -> None:
        super().__init__(Code.SUCCESS, message)


class PreBindWaiting(Status):
    """What a PreBind plugin returns when it has to wait for the cluster (DynamicResources
    for its devices' binding conditions: dynamicresources.go, PreBind's
    wait.PollUntilContextTimeout, whose first poll the plugin made itself).

    The binding cycle asks ``poll()`` every ``interval`` seconds of the scheduler's clock
    while less than ``timeout`` seconds have passed: ``(False, _)`` waits on, ``(True,
    status)`` is the plugin's answer (None: go on with the next PreBind plugin). At
    ``timeout`` the wait fails with ``timeout_message`` (the context's deadline comes
    before a poll due at the same instant). The pod stays assumed meanwhile.
    """

    __slots__ = ("interval", "poll", "resume_at", "timeout", "timeout_message")

    def __init__(
        self,
        poll: Callable[[], tuple[bool, Status | None]],
        interval: float,
        timeout: float,
        timeout_message: str,
    ) -> None:
        super().__init__(Code.SUCCESS, "waiting in PreBind")
        self.poll = poll
        self.interval = interval
        self.timeout = timeout
        self.timeout_message = timeout_message
        self.resume_at = 0  # the PreBind plugin after it (set by run_pre_bind_plugins)


def verdict(status: Status | None) -> str:
    """A plugin's result as explain shows it: "passed", or the code name and message."""
    if status is None or status.code == Code.SUCCESS:
        return "passed"
    msg = status.message
    return f"{code_name(status.code)}: {msg}" if msg else code_name(status.code)


@dataclass
class CycleRecord:
    """What explain mode keeps of one scheduling cycle (kube-scheduler-simulator style)."""

    pre_filter: dict[str, str] = field(default_factory=dict)
    post_filter: dict[str, str] = field(default_factory=dict)
    pre_score: dict[str, str] = field(default_factory=dict)
    reserve: dict[str, str] = field(default_factory=dict)
    permit: dict[str, str] = field(default_factory=dict)
    bind: dict[str, str] = field(default_factory=dict)
    selected_node: str | None = None
    nominated_node: str | None = None  # set by PostFilter (preemption) in this cycle
    victims: list[str] = field(default_factory=list)  # "namespace/name" deleted for it
    # Recorded cheaply (one tuple per node, one per Score plugin), formatted on demand:
    # the Filter plugins that ran, in order; per node (node, rejecting plugin, status).
    filter_order: tuple[str, ...] | None = None
    filter_rows: list[tuple[str, str | None, Status | None]] = field(default_factory=list)
    # per Score plugin: (plugin, weight, nodes, raw scores, normalized scores)
    score_rows: list[tuple[str, int, list[str], list[int], list[int]]] = field(default_factory=list)
    # DynamicResources' Filter, per node: one entry per claim request, with the verdict
    # of each device the node sees (plugins/dynamic_resources/explain.py). Empty for a
    # pod without claims to allocate; the last Filter run on a node wins, as in ``filter``.
    devices: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def filter(self) -> dict[str, dict[str, str]]:
        """node -> plugin -> "passed" | reason; plugins after a rejection did not run."""
        order = self.filter_order or ()
        out: dict[str, dict[str, str]] = {}
        for node, rejector, status in self.filter_rows:
            verdicts: dict[str, str] = {}
            for name in order:
                if name == rejector:
                    verdicts[name] = verdict(status)
                    break
                verdicts[name] = "passed"
            out[node] = verdicts
        return out

    @property
    def score(self) -> dict[str, dict[str, list[int]]]:
        """node -> plugin -> [raw, normalized, weighted]."""
        out: dict[str, dict[str, list[int]]] = {}
        for name, weight, nodes, raw, normalized in self.score_rows:
            for i, node in enumerate(nodes):
                out.setdefault(node, {})[name] = [raw[i], normalized[i], normalized[i] * weight]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The record as the JSON of ``simulate --explain --output json`` (``devices`` only
        when DynamicResources explained some node)."""
        out = {
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
            "nominatedNode": self.nominated_node,
            "victims": self.victims,
        }
        if self.devices:
            out["devices"] = self.devices
        return out


__all__ = ["BindingPending", "CycleRecord", "PluginCallCounter", "PluginObserver"]
