"""The framework: runs a profile's plugins at each extension point (framework/runtime).

It knows no plugin by name: plugins come from a Registry and are placed by the
configuration. Hot loops (Filter, Score) iterate pre-built tuples of bound methods.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wasmsched.errors import WasmschedError
from wasmsched.framework import interfaces as fi
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from wasmsched.framework.status import Code, Status, code_name

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.node_info import NodeInfo, PodInfo
    from wasmsched.framework.waiting_pods import WaitingPods
    from wasmsched.queue.events import ClusterEventWithHint
    from wasmsched.queue.types import QueuedPodInfo

log = logging.getLogger("wasmsched.framework")


class FrameworkError(WasmschedError):
    """A profile that cannot be built (bad plugin args, missing queue sort, ...)."""


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
    name: str
    score: int  # weighted


@dataclass(slots=True)
class NodePluginScores:
    name: str
    scores: list[PluginScore]
    total_score: int


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

    @property
    def filter(self) -> dict[str, dict[str, str]]:
        """node -> plugin -> "passed" | reason; plugins after a rejection did not run."""
        order = self.filter_order or ()
        out: dict[str, dict[str, str]] = {}
        for node, rejector, status in self.filter_rows:
            verdicts: dict[str, str] = {}
            for name in order:
                if name == rejector:
                    verdicts[name] = _verdict(status)
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
            "nominatedNode": self.nominated_node,
            "victims": self.victims,
        }


def _verdict(status: Status | None) -> str:
    if status is None or status.code == Code.SUCCESS:
        return "passed"
    msg = status.message
    return f"{code_name(status.code)}: {msg}" if msg else code_name(status.code)


def _with_plugin(status: Status, plugin: str) -> Status:
    status.plugin = plugin
    return status


class Framework:
    """One profile's plugins, ordered per extension point, and the runners for each."""

    def __init__(
        self,
        profile_name: str,
        points: Mapping[str, Sequence[tuple[Any, int]]],
        percentage_of_nodes_to_score: int | None = None,
        enqueue_extensions: Sequence[Any] = (),
        waiting_pods: WaitingPods | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score

        def plugins(point: str) -> tuple[Any, ...]:
            return tuple(p for p, _ in points.get(point, ()))

        self.pre_enqueue_plugins = plugins(fi.PRE_ENQUEUE)
        queue_sort = plugins(fi.QUEUE_SORT)
        if len(queue_sort) != 1:
            raise FrameworkError(
                f"profile {profile_name!r}: exactly one queue sort plugin must be enabled, "
                f"got {[p.name for p in queue_sort]}"
            )
        self.queue_sort = queue_sort[0]
        self.pre_filter_plugins = plugins(fi.PRE_FILTER)
        self.filter_plugins = plugins(fi.FILTER)
        self.post_filter_plugins = plugins(fi.POST_FILTER)
        self.pre_score_plugins = plugins(fi.PRE_SCORE)
        self.score_plugins = tuple(points.get(fi.SCORE, ()))
        self.reserve_plugins = plugins(fi.RESERVE)
        self.permit_plugins = plugins(fi.PERMIT)
        self.pre_bind_plugins = plugins(fi.PRE_BIND)
        self.bind_plugins = plugins(fi.BIND)
        self.post_bind_plugins = plugins(fi.POST_BIND)
        if not self.bind_plugins:
            raise FrameworkError(f"profile {profile_name!r}: at least one bind plugin is needed")
        self.enqueue_extensions = tuple(enqueue_extensions)
        self.waiting_pods = waiting_pods
        # What the runners iterate: the plugins themselves, or observed stand-ins while an
        # observer is set. (name, bound filter) pairs: the per-node loop touches nothing else.
        self._plain = _run_tuples(self)
        self._pre_filter, self._filters, self._post_filter, self._pre_score = self._plain[:4]
        self._scores, self._reserve, self._permit = self._plain[4:7]
        self._pre_bind, self._bind, self._post_bind = self._plain[7:]
        self._observer: PluginObserver | None = None
        self._observed: tuple[PluginObserver, _RunTuples] | None = None
        self.recorder: CycleRecord | None = None
        seen: dict[int, Any] = {}
        for point_plugins in points.values():
            for plugin, _ in point_plugins:
                seen[id(plugin)] = plugin
        self.all_plugins: tuple[Any, ...] = tuple(seen.values())

    # --- observation ------------------------------------------------------------------

    @property
    def observer(self) -> PluginObserver | None:
        return self._observer

    def set_observer(self, observer: PluginObserver | None) -> None:
        """Reports every plugin call to ``observer`` until it is cleared with None.

        The runners then iterate timed stand-ins built once per observer (kept for the
        last one set, so the same observer can be set and cleared every cycle cheaply);
        without an observer they call the plugins directly, at no extra cost.
        """
        if observer is self._observer:
            return
        self._observer = observer
        if observer is None:
            tuples = self._plain
        elif self._observed is not None and self._observed[0] is observer:
            tuples = self._observed[1]
        else:
            tuples = _run_tuples(self, observer)
            self._observed = (observer, tuples)
        self._pre_filter, self._filters, self._post_filter, self._pre_score = tuples[:4]
        self._scores, self._reserve, self._permit = tuples[4:7]
        self._pre_bind, self._bind, self._post_bind = tuples[7:]

    def observe(self, point: str, plugin: str, status: Status | None, seconds: float) -> None:
        """Reports a plugin call made outside the runners (an asynchronous Bind's answer)."""
        if self._observer is not None:
            self._observer(point, plugin, _code(status), seconds)

    # --- queue --------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return bool(self.queue_sort.less(a, b))

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        for plugin in self.pre_enqueue_plugins:
            status: Status | None = plugin.pre_enqueue(pod)
            if status is not None and status.code != Code.SUCCESS:
                status.plugin = plugin.name
                return status
        return None

    def events_to_register(self) -> list[tuple[str, ClusterEventWithHint | None]]:
        """(plugin name, event with hint); None event means "interested in everything"."""
        result: list[tuple[str, ClusterEventWithHint | None]] = []
        for plugin in self.all_plugins:
            register = getattr(plugin, "events_to_register", None)
            if register is None:
                result.append((plugin.name, None))
                continue
            try:
                events = register()
            except Exception:  # a plugin bug must not stop the scheduler
                log.exception("EventsToRegister of plugin %s failed", plugin.name)
                result.append((plugin.name, None))
                continue
            for event in events:
                result.append((plugin.name, event))
        return result

    # --- scheduling cycle -----------------------------------------------------------

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """k8s RunPreFilterPlugins: merge results, collect Skips, stop on rejection/error."""
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        skip: set[str] = set()
        return_status: Status | None = None
        rec = self.recorder
        for plugin in self._pre_filter:
            try:
                res, status = plugin.pre_filter(state, pod, nodes)
            except Exception as err:
                res, status = None, Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if rec is not None:
                rec.pre_filter[plugin.name] = _verdict(status)
            if status is not None and status.code == Code.SKIP:
                skip.add(plugin.name)
                continue
            if status is not None and status.code != Code.SUCCESS:
                status.plugin = plugin.name
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status, {plugin.name}
                if status.code == Code.UNSCHEDULABLE:
                    # Preemption may still help: the other PreFilters must run too.
                    return_status = status
                    plugins_with_nodes.add(plugin.name)
                    continue
                return (
                    None,
                    _with_plugin(
                        Status(
                            Code.ERROR,
                            f"running PreFilter plugin {plugin.name!r}: {status.message}",
                        ),
                        plugin.name,
                    ),
                    set(),
                )
            if res is not None and res.node_names is not None:
                plugins_with_nodes.add(plugin.name)
                result = res if result is None else result.merge(res)
                if result.node_names is not None and not result.node_names:
                    names = sorted(plugins_with_nodes)
                    msg = (
                        f"node(s) didn't satisfy plugin {names[0]}"
                        if len(names) == 1
                        else f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    )
                    return (
                        result,
                        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg),
                        plugins_with_nodes,
                    )
        state.skip_filter_plugins = frozenset(skip)
        return result, return_status, plugins_with_nodes

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension(state, pod, pod_info, node_info, "add_pod")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension(state, pod, pod_info, node_info, "remove_pod")

    def _run_pre_filter_extension(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo, method: str
    ) -> Status | None:
        for plugin in self._pre_filter:
            if plugin.name in state.skip_filter_plugins:
                continue
            ext = plugin.pre_filter_extensions()
            if ext is None:
                continue
            status = getattr(ext, method)(state, pod, pod_info, node_info)
            if status is not None and status.code != Code.SUCCESS:
                return _with_plugin(
                    Status(
                        Code.ERROR,
                        f"running {'AddPod' if method == 'add_pod' else 'RemovePod'} on "
                        f"PreFilter plugin {plugin.name!r}: {status.message}",
                    ),
                    plugin.name,
                )
        return None

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """k8s RunFilterPlugins: the first non-success status wins; non-rejections are errors."""
        skip = state.skip_filter_plugins
        rec = self.recorder
        if rec is not None and rec.filter_order is None:
            rec.filter_order = tuple(n for n, _ in self._filters if n not in skip)
        for name, filter_fn in self._filters:
            if skip and name in skip:
                continue
            status: Status | None
            try:
                status = filter_fn(state, pod, node_info)
            except Exception as err:
                status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if status is not None and status.code != Code.SUCCESS:
                if rec is not None:
                    rec.filter_rows.append((node_info.name, name, status))
                if status.code not in (2, 3, 6):
                    return _with_plugin(
                        Status(Code.ERROR, f"running {name!r} filter plugin: {status.message}"),
                        name,
                    )
                status.plugin = name
                return status
        if rec is not None:
            rec.filter_rows.append((node_info.name, None, None))
        return None

    @property
    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    @property
    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """k8s RunPostFilterPlugins: the first success wins; errors stop; rejections collect."""
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        rec = self.recorder
        for plugin in self._post_filter:
            try:
                r, status = plugin.post_filter(state, pod, node_to_status)
            except Exception as err:
                r, status = None, Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if rec is not None:
                rec.post_filter[plugin.name] = _verdict(status)
            if status is None or status.code == Code.SUCCESS:
                return r, status
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, _with_plugin(status, plugin.name)
            if status.code not in (2, 6):
                return None, _with_plugin(
                    Status(
                        Code.ERROR, f"running PostFilter plugin {plugin.name!r}: {status.message}"
                    ),
                    plugin.name,
                )
            if r is not None and r.nominating_info is not None and result is None:
                result = r
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return result, _with_plugin(Status(Code.UNSCHEDULABLE, *reasons), rejector)

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        skip: set[str] = set()
        rec = self.recorder
        for plugin in self._pre_score:
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as err:
                status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if rec is not None:
                rec.pre_score[plugin.name] = _verdict(status)
            if status is not None and status.code == Code.SKIP:
                skip.add(plugin.name)
                continue
            if status is not None and status.code != Code.SUCCESS:
                return _with_plugin(
                    Status(
                        Code.ERROR, f"running PreScore plugin {plugin.name!r}: {status.message}"
                    ),
                    plugin.name,
                )
        state.skip_score_plugins = frozenset(skip)
        return None

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status | None]:
        """Score, NormalizeScore, range check and weights; returns per-node totals."""
        skip = state.skip_score_plugins
        active = [s for s in self._scores if s[0] not in skip]
        totals = [NodePluginScores(ni.name, [], 0) for ni in nodes]
        if not active:
            return totals, None
        rec = self.recorder
        for name, score_fn, weight, extensions in active:
            scores: list[NodeScore] = []
            for node_info in nodes:
                try:
                    value, status = score_fn(state, pod, node_info)
                except Exception as err:
                    value, status = 0, Status(Code.ERROR, f"{type(err).__name__}: {err}")
                if status is not None and status.code != Code.SUCCESS:
                    return [], _with_plugin(
                        Status(Code.ERROR, f"running Score plugin {name!r}: {status.message}"), name
                    )
                scores.append(NodeScore(node_info.name, value))
            raw = [s.score for s in scores] if rec is not None else None
            if extensions is not None:
                try:
                    status = extensions.normalize_score(state, pod, scores)
                except Exception as err:
                    status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
                if status is not None and status.code != Code.SUCCESS:
                    return [], _with_plugin(
                        Status(
                            Code.ERROR,
                            f"running Normalize on Score plugin {name!r}: {status.message}",
                        ),
                        name,
                    )
            for i, node_score in enumerate(scores):
                value = node_score.score
                if value > MAX_NODE_SCORE or value < MIN_NODE_SCORE:
                    return [], _with_plugin(
                        Status(
                            Code.ERROR,
                            f"plugin {name!r} returns an invalid score {value}, it should in the "
                            f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                        ),
                        name,
                    )
                weighted = value * weight
                entry = totals[i]
                entry.scores.append(PluginScore(name, weighted))
                entry.total_score += weighted
            if rec is not None and raw is not None:
                rec.score_rows.append(
                    (name, weight, [s.name for s in scores], raw, [s.score for s in scores])
                )
        return totals, None

    def run_reserve_plugins_reserve(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        rec = self.recorder
        for plugin in self._reserve:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as err:
                status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if rec is not None:
                rec.reserve[plugin.name] = _verdict(status)
            if status is not None and status.code != Code.SUCCESS:
                if status.code in (2, 3, 6):
                    return _with_plugin(status, plugin.name)
                return _with_plugin(
                    Status(Code.ERROR, f"running Reserve plugin {plugin.name!r}: {status.message}"),
                    plugin.name,
                )
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve runs on every reserve plugin, in reverse order; it cannot fail."""
        for plugin in reversed(self._reserve):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:
                log.exception("Unreserve of plugin %s failed", plugin.name)

    def run_permit_plugins(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status | None, dict[str, float]]:
        """Returns (status, plugin -> wait timeout); a Wait status means the pod must wait."""
        waiting: dict[str, float] = {}
        rec = self.recorder
        for plugin in self._permit:
            try:
                status, timeout = plugin.permit(state, pod, node_name)
            except Exception as err:
                status, timeout = Status(Code.ERROR, f"{type(err).__name__}: {err}"), 0.0
            if rec is not None:
                rec.permit[plugin.name] = _verdict(status)
            if status is None or status.code == Code.SUCCESS:
                continue
            if status.code in (2, 3, 6):
                return _with_plugin(status, plugin.name), {}
            if status.code == Code.WAIT:
                # Wait is honoured only if no later plugin rejects; keep the timeout.
                waiting[plugin.name] = max(0.0, min(float(timeout), MAX_PERMIT_TIMEOUT))
                continue
            return (
                _with_plugin(
                    Status(Code.ERROR, f"running Permit plugin {plugin.name!r}: {status.message}"),
                    plugin.name,
                ),
                {},
            )
        if waiting:
            return Status(
                Code.WAIT, "one or more plugins asked to wait and no plugin rejected pod"
            ), waiting
        return None, {}

    # --- binding cycle ----------------------------------------------------------------

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        for plugin in self._pre_bind:
            try:
                status = plugin.pre_bind(state, pod, node_name)
            except Exception as err:
                status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                if status.code in (2, 3, 6):
                    return _with_plugin(status, plugin.name)
                return _with_plugin(
                    Status(Code.ERROR, f"running PreBind plugin {plugin.name!r}: {status.message}"),
                    plugin.name,
                )
        return None

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """The first plugin that does not Skip decides; all Skip -> Skip.

        A ``BindingPending`` answer is returned as it is: the binding goes on elsewhere.
        """
        rec = self.recorder
        for plugin in self._bind:
            try:
                status = plugin.bind(state, pod, node_name)
            except Exception as err:
                status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if rec is not None:
                rec.bind[plugin.name] = _verdict(status)
            if isinstance(status, BindingPending):
                return _with_plugin(status, plugin.name)
            if status is not None and status.code == Code.SKIP:
                continue
            if status is not None and status.code != Code.SUCCESS:
                if status.code in (2, 3, 6):
                    return _with_plugin(status, plugin.name)
                return _with_plugin(
                    Status(Code.ERROR, f"running Bind plugin {plugin.name!r}: {status.message}"),
                    plugin.name,
                )
            return None
        return Status(Code.SKIP)

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self._post_bind:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:
                log.exception("PostBind of plugin %s failed", plugin.name)

    def forget_pod(self, uid: str) -> None:
        """Tells plugins that keep per-pod resources (wasm instances) that a pod's cycle ended."""
        for plugin in self.all_plugins:
            forget: Callable[[str], None] | None = getattr(plugin, "forget_pod", None)
            if forget is not None:
                forget(uid)

    def close(self) -> None:
        for plugin in self.all_plugins:
            close = getattr(plugin, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    log.exception("closing plugin %s failed", plugin.name)


# Permit timeouts are capped like kube-scheduler's maxTimeout (15 minutes).
MAX_PERMIT_TIMEOUT = 15 * 60.0

# pre_filter, filters, post_filter, pre_score, scores, reserve, permit, pre_bind, bind,
# post_bind: what the runners iterate.
_RunTuples = tuple[tuple[Any, ...], ...]


def _run_tuples(fwk: Framework, observer: PluginObserver | None = None) -> _RunTuples:
    """The runners' tuples over the plugins, or over timed stand-ins reporting to observer."""
    if observer is None:

        def wrap(plugin: Any) -> Any:
            return plugin

    else:
        stand_ins: dict[int, _Observed] = {}

        def wrap(plugin: Any) -> Any:
            found = stand_ins.get(id(plugin))
            if found is None:
                found = stand_ins[id(plugin)] = _Observed(plugin, plugin.name, observer)
            return found

    def each(plugins: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(wrap(p) for p in plugins)

    return (
        each(fwk.pre_filter_plugins),
        tuple((p.name, wrap(p).filter) for p in fwk.filter_plugins),
        each(fwk.post_filter_plugins),
        each(fwk.pre_score_plugins),
        tuple(
            (p.name, wrap(p).score, weight, wrap(p).score_extensions())
            for p, weight in fwk.score_plugins
        ),
        each(fwk.reserve_plugins),
        each(fwk.permit_plugins),
        each(fwk.pre_bind_plugins),
        each(fwk.bind_plugins),
        each(fwk.post_bind_plugins),
    )


def _code(status: Status | None) -> str:
    return "Success" if status is None else code_name(status.code)


def _same(r: Any) -> Any:
    return r


def _first(r: Any) -> Any:
    return r[0]


def _second(r: Any) -> Any:
    return r[1]


def _nothing(r: Any) -> None:
    return None


class _Observed:
    """A plugin (or its extensions) stand-in that times each call and reports it."""

    __slots__ = ("_observer", "_plugin", "name")

    def __init__(self, plugin: Any, name: str, observer: PluginObserver) -> None:
        self._plugin = plugin
        self._observer = observer
        self.name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._plugin, attr)

    def _call(
        self, point: str, fn: Callable[..., Any], status_of: Callable[[Any], Any], *args: Any
    ) -> Any:
        start = time.perf_counter()
        try:
            result = fn(*args)
        except Exception:
            self._observer(point, self.name, "Error", time.perf_counter() - start)
            raise
        status = status_of(result)
        if not isinstance(status, BindingPending):  # reported when it completes
            self._observer(point, self.name, _code(status), time.perf_counter() - start)
        return result

    def pre_filter(self, *args: Any) -> Any:
        return self._call("PreFilter", self._plugin.pre_filter, _second, *args)

    def filter(self, *args: Any) -> Any:
        return self._call("Filter", self._plugin.filter, _same, *args)

    def post_filter(self, *args: Any) -> Any:
        return self._call("PostFilter", self._plugin.post_filter, _second, *args)

    def pre_score(self, *args: Any) -> Any:
        return self._call("PreScore", self._plugin.pre_score, _same, *args)

    def score(self, *args: Any) -> Any:
        return self._call("Score", self._plugin.score, _second, *args)

    def reserve(self, *args: Any) -> Any:
        return self._call("Reserve", self._plugin.reserve, _same, *args)

    def unreserve(self, *args: Any) -> Any:
        return self._call("Unreserve", self._plugin.unreserve, _nothing, *args)

    def permit(self, *args: Any) -> Any:
        return self._call("Permit", self._plugin.permit, _first, *args)

    def pre_bind(self, *args: Any) -> Any:
        return self._call("PreBind", self._plugin.pre_bind, _same, *args)

    def bind(self, *args: Any) -> Any:
        return self._call("Bind", self._plugin.bind, _same, *args)

    def post_bind(self, *args: Any) -> Any:
        return self._call("PostBind", self._plugin.post_bind, _nothing, *args)

    def pre_filter_extensions(self) -> Any:
        ext = self._plugin.pre_filter_extensions()
        return None if ext is None else _Observed(ext, self.name, self._observer)

    def score_extensions(self) -> Any:
        ext = self._plugin.score_extensions()
        return None if ext is None else _Observed(ext, self.name, self._observer)

    def add_pod(self, *args: Any) -> Any:
        return self._call("PreFilterExtensionAddPod", self._plugin.add_pod, _same, *args)

    def remove_pod(self, *args: Any) -> Any:
        return self._call("PreFilterExtensionRemovePod", self._plugin.remove_pod, _same, *args)

    def normalize_score(self, *args: Any) -> Any:
        return self._call("ScoreExtensionNormalize", self._plugin.normalize_score, _same, *args)
