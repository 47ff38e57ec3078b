"""The framework: runs a profile's plugins at each extension point (framework/runtime).

It knows no plugin by name: plugins come from a Registry and are placed by the
configuration. Hot loops (Filter, Score) iterate pre-built tuples of bound methods.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from wasmsched.errors import WasmschedError
from wasmsched.framework import interfaces as fi
from wasmsched.framework.columns import IntArray, NodeRows
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import (
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from wasmsched.framework.observed import ObservedPlugin, code_of
from wasmsched.framework.records import (
    BindingPending,
    CycleRecord,
    PluginObserver,
    PreBindWaiting,
)
from wasmsched.framework.records import (
    verdict as _verdict,
)
from wasmsched.framework.status import Code, Status

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.batching import OpportunisticBatch
    from wasmsched.framework.node_info import NodeInfo, PodInfo
    from wasmsched.framework.types import ClusterEventWithHint, QueuedPodInfo
    from wasmsched.framework.waiting_pods import WaitingPods

__all__ = [
    "MAX_PERMIT_TIMEOUT",
    "BindingPending",
    "CycleRecord",
    "Framework",
    "FrameworkError",
    "PluginObserver",
    "PreBindWaiting",
]

log = logging.getLogger("wasmsched.framework")

# The codes the runners compare with, read once (an IntEnum member is a class lookup).
_SUCCESS = Code.SUCCESS
_SKIP = Code.SKIP
_UNSCHEDULABLE = Code.UNSCHEDULABLE
_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# pre_filter, filters, post_filter, pre_score, scores, reserve, permit, pre_bind, bind,
# post_bind: what the runners iterate.
RunTuples = tuple[tuple[Any, ...], ...]
# A Score plugin as the runners call it: (name, score, weight, score extensions or None).
ScoreCall = tuple[str, Callable[..., tuple[int, Status | None]], int, Any]
# A plugin's vectorized Filter form (framework/columns): per row, 0 when it passes, else k
# for ``statuses[k - 1]``; None when it cannot answer over rows (the per-node form answers).
FilterColumns = Callable[[CycleState, "Pod", NodeRows], "tuple[IntArray, Sequence[Status]] | None"]
# A plugin's vectorized Score form: every row's raw score; None when it cannot answer over
# rows (the per-node form answers); a status when a node's Score failed (the first one,
# as the per-node form would have failed).
ScoreColumns = Callable[[CycleState, "Pod", NodeRows], "IntArray | Status | None"]


def _forms(plugins: Sequence[Any], attr: str) -> dict[str, Any]:
    """Plugin name -> its bound form ``attr``, for the plugins that offer one."""
    return {p.name: form for p in plugins if (form := getattr(p, attr, None)) is not None}


def _forms_in_order(plugins: Sequence[Any], attr: str) -> tuple[tuple[str, Any], ...]:
    """(plugin name, its bound ``attr``) for the plugins that offer one, in order."""
    return tuple((p.name, form) for p in plugins if (form := getattr(p, attr, None)) is not None)


class FrameworkError(WasmschedError):
    """A profile that cannot be built (bad plugin args, missing queue sort, ...)."""


def _with_plugin(status: Status, plugin: str) -> Status:
    status.plugin = plugin
    return status


def _run_pre_binds(
    plugins: Sequence[Any], start: int, state: CycleState, pod: Pod, node_name: str
) -> Status | None:
    """k8s RunPreBindPlugins over ``plugins[start:]``: the first failure wins; a
    ``PreBindWaiting`` is returned as it is, ``resume_at`` the plugin after it (the
    binding cycle goes on from there once the wait ends)."""
    for index in range(start, len(plugins)):
        plugin = plugins[index]
        try:
            status = plugin.pre_bind(state, pod, node_name)
        except Exception as err:
            status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
        if isinstance(status, PreBindWaiting):
            status.resume_at = index + 1
            return _with_plugin(status, plugin.name)
        if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
            # Rejected as it is; any other failure an Error naming the plugin.
            failure = (
                status
                if status.is_rejected()
                else Status(Code.ERROR, f"running PreBind plugin {plugin.name!r}: {status.message}")
            )
            return _with_plugin(failure, plugin.name)
    return None


class Framework:
    """One profile's plugins, ordered per extension point, and the runners for each.

    A built Framework does not change: what varies per attempt (the explain recorder, the
    plugin observer) travels in the CycleState, as kube-scheduler's
    ``CycleState.SetRecordPluginMetrics`` does (pkg/scheduler/framework/cycle_state.go).
    """

    # False runs every plugin per node, never in its vectorized form (framework/node_search;
    # tests and benchmarks compare both).
    use_batch: bool = True

    def __init__(
        self,
        profile_name: str,
        points: Mapping[str, Sequence[tuple[fi.Plugin, int]]],
        percentage_of_nodes_to_score: int | None = None,
        enqueue_extensions: Sequence[fi.Plugin] = (),
        waiting_pods: WaitingPods | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score

        def plugins(point: str) -> tuple[Any, ...]:
            # Capabilities were found when the profile was expanded (fi.implements); the
            # annotations below state what each point's plugins provide.
            return tuple(p for p, _ in points.get(point, ()))

        self.pre_enqueue_plugins: tuple[fi.PreEnqueuePlugin, ...] = plugins(fi.PRE_ENQUEUE)
        queue_sort: tuple[fi.QueueSortPlugin, ...] = plugins(fi.QUEUE_SORT)
        if len(queue_sort) != 1:
            raise FrameworkError(
                f"profile {profile_name!r}: exactly one queue sort plugin must be enabled, "
                f"got {[p.name for p in queue_sort]}"
            )
        self.queue_sort: fi.QueueSortPlugin = queue_sort[0]
        self.pre_filter_plugins: tuple[fi.PreFilterPlugin, ...] = plugins(fi.PRE_FILTER)
        self.filter_plugins: tuple[fi.FilterPlugin, ...] = plugins(fi.FILTER)
        self.post_filter_plugins: tuple[fi.PostFilterPlugin, ...] = plugins(fi.POST_FILTER)
        self.pre_score_plugins: tuple[fi.PreScorePlugin, ...] = plugins(fi.PRE_SCORE)
        self.score_plugins: tuple[tuple[fi.ScorePlugin, int], ...] = tuple(
            (cast(fi.ScorePlugin, p), weight) for p, weight in points.get(fi.SCORE, ())
        )
        self.reserve_plugins: tuple[fi.ReservePlugin, ...] = plugins(fi.RESERVE)
        self.permit_plugins: tuple[fi.PermitPlugin, ...] = plugins(fi.PERMIT)
        self.pre_bind_plugins: tuple[fi.PreBindPlugin, ...] = plugins(fi.PRE_BIND)
        self.bind_plugins: tuple[fi.BindPlugin, ...] = plugins(fi.BIND)
        self.post_bind_plugins: tuple[fi.PostBindPlugin, ...] = plugins(fi.POST_BIND)
        if not self.bind_plugins:
            raise FrameworkError(f"profile {profile_name!r}: at least one bind plugin is needed")
        self.enqueue_extensions: tuple[fi.Plugin, ...] = tuple(enqueue_extensions)
        # Opportunistic batching (1.35+), when the profile may batch (framework/batching;
        # set by the Scheduler, which knows the release and the extenders).
        self.batch: OpportunisticBatch | None = None
        self.waiting_pods = waiting_pods
        seen: dict[int, fi.Plugin] = {}
        for point_plugins in points.values():
            for plugin, _ in point_plugins:
                seen[id(plugin)] = plugin
        self.all_plugins: tuple[fi.Plugin, ...] = tuple(seen.values())
        # Hooks found once: forget_pod after every cycle, RunPreBindPreFlights (1.35+).
        self._forget_pod = _forms_in_order(self.all_plugins, "forget_pod")
        self.pre_bind_pre_flights = _forms_in_order(self.pre_bind_plugins, "pre_bind_pre_flight")
        # What the runners iterate: (name, bound filter) pairs and the like, so that the
        # per-node loop touches nothing else; observed stand-ins when a cycle is sampled.
        self._plain = self._run_tuples(None)
        self._filters = self._plain[1]
        # The (name, filter) pairs unobserved cycles run (framework/node_search).
        self.filter_calls: tuple[tuple[str, Any], ...] = self._filters
        # The stand-ins of the last observer seen (one observer serves every sampled cycle).
        self._observed: tuple[PluginObserver, RunTuples] | None = None
        # The vectorized forms the plugins offer over node rows (framework/columns), used
        # by framework/node_search; plugins without one are called per node.
        self.filter_columns: dict[str, FilterColumns] = _forms(
            self.filter_plugins, "filter_columns"
        )
        self.score_columns: dict[str, ScoreColumns] = _forms(
            [p for p, _ in self.score_plugins], "score_columns"
        )
        # Filter plugins whose calls have effects (a wasm guest's logs and state): the node
        # search shows them exactly the nodes the node-by-node search would.
        self.filter_effects: frozenset[str] = frozenset(
            p.name for p in self.filter_plugins if getattr(p, "filter_has_effects", False)
        )

    # --- observation ------------------------------------------------------------------

    def _run(self, state: CycleState) -> RunTuples:
        """The tuples to iterate for this cycle: plain, or timed for its observer."""
        observer = state.observer
        if observer is None:
            return self._plain
        cached = self._observed
        if cached is not None and cached[0] is observer:
            return cached[1]
        tuples = self._run_tuples(observer)
        self._observed = (observer, tuples)
        return tuples

    def _run_tuples(self, observer: PluginObserver | None) -> RunTuples:
        """The runners' tuples over the plugins, or over timed stand-ins reporting to
        ``observer`` (framework/observed), one per plugin."""
        stand_ins: dict[int, Any] = {}

        def wrap(plugin: Any) -> Any:
            if observer is None:
                return plugin
            found = stand_ins.get(id(plugin))
            if found is None:
                found = stand_ins[id(plugin)] = ObservedPlugin(plugin, plugin.name, observer)
            return found

        def each(plugins: Sequence[Any]) -> tuple[Any, ...]:
            return tuple(wrap(p) for p in plugins)

        return (
            each(self.pre_filter_plugins),
            tuple((p.name, wrap(p).filter) for p in self.filter_plugins),
            each(self.post_filter_plugins),
            each(self.pre_score_plugins),
            tuple(
                (p.name, wrap(p).score, weight, wrap(p).score_extensions())
                for p, weight in self.score_plugins
            ),
            each(self.reserve_plugins),
            each(self.permit_plugins),
            each(self.pre_bind_plugins),
            each(self.bind_plugins),
            each(self.post_bind_plugins),
        )

    def score_calls_of(self, state: CycleState) -> tuple[ScoreCall, ...]:
        """The (name, score, weight, score extensions) of every Score plugin, as this cycle
        calls them (timed stand-ins in an observed cycle)."""
        calls: tuple[ScoreCall, ...] = self._run(state)[4]
        return calls

    def observe(
        self, state: CycleState, point: str, plugin: str, status: Status | None, seconds: float
    ) -> None:
        """Reports a plugin call made outside the runners (an asynchronous Bind's answer)."""
        if state.observer is not None:
            state.observer(point, plugin, code_of(status), seconds)

    # --- queue --------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """The queue sort plugin's order."""
        return bool(self.queue_sort.less(a, b))

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        """k8s RunPreEnqueuePlugins: the first rejection keeps the pod out."""
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
        rec = state.recorder
        for plugin in self._run(state)[0]:
            try:
                res, status = plugin.pre_filter(state, pod, nodes)
            except Exception as err:
                res, status = None, Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if rec is not None:
                rec.pre_filter[plugin.name] = _verdict(status)
            code = _SUCCESS if status is None else status.code
            if code == _SKIP:
                skip.add(plugin.name)
                continue
            if code != _SUCCESS:
                assert status is not None
                status.plugin = plugin.name
                if code == _UNRESOLVABLE:
                    return None, status, {plugin.name}
                if code == _UNSCHEDULABLE:
                    # Preemption may still help: the other PreFilters must run too.
                    return_status = status
                    plugins_with_nodes.add(plugin.name)
                    continue
                return (
                    None,
                    _with_plugin(
                        Status(
                            Code.ERROR,
                            f'running PreFilter plugin "{plugin.name}": {status.message}',
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
        """k8s RunPreFilterExtensionAddPod on every PreFilter plugin not skipped."""
        return self._run_pre_filter_extension(state, pod, pod_info, node_info, "add_pod")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """k8s RunPreFilterExtensionRemovePod on every PreFilter plugin not skipped."""
        return self._run_pre_filter_extension(state, pod, pod_info, node_info, "remove_pod")

    def _run_pre_filter_extension(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo, method: str
    ) -> Status | None:
        for plugin in self._run(state)[0]:
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
        rec = state.recorder
        filters = self._filters if state.observer is None else self._run(state)[1]
        if rec is not None and rec.filter_order is None:
            rec.filter_order = tuple(n for n, _ in filters if n not in skip)
        for name, filter_fn in filters:
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
                if not status.is_rejected():
                    return _with_plugin(
                        Status(Code.ERROR, f'running "{name}" filter plugin: {status.message}'),
                        name,
                    )
                status.plugin = name
                return status
        if rec is not None:
            rec.filter_rows.append((node_info.name, None, None))
        return None

    @property
    def has_filter_plugins(self) -> bool:
        """Whether the profile has Filter plugins."""
        return bool(self.filter_plugins)

    @property
    def has_score_plugins(self) -> bool:
        """Whether the profile has Score plugins."""
        return bool(self.score_plugins)

    @property
    def has_post_filter_plugins(self) -> bool:
        """Whether the profile has PostFilter plugins."""
        return bool(self.post_filter_plugins)

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """k8s RunPostFilterPlugins: the first success wins; errors stop; rejections collect."""
        reasons: list[str] = []
        rejector = ""
        result: PostFilterResult | None = None
        rec = state.recorder
        for plugin in self._run(state)[2]:
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
            if status.code not in (Code.UNSCHEDULABLE, Code.PENDING):
                # The plugin's error as it is (framework.go: RunPostFilterPlugins,
                # fwk.AsStatus(s.AsError())): the cycle's PostFilter message.
                return None, _with_plugin(Status(Code.ERROR, status.message), plugin.name)
            if r is not None and r.nominating_info is not None and result is None:
                result = r
            reasons.extend(status.reasons)
            rejector = rejector or plugin.name
        return result, _with_plugin(Status(Code.UNSCHEDULABLE, *reasons), rejector)

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """k8s RunPreScorePlugins: Skips are remembered, errors end the cycle."""
        skip: set[str] = set()
        rec = state.recorder
        for plugin in self._run(state)[3]:
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

    def run_reserve_plugins_reserve(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """k8s RunReservePluginsReserve: the first failure wins."""
        rec = state.recorder
        for plugin in self._run(state)[5]:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as err:
                status = Status(Code.ERROR, f"{type(err).__name__}: {err}")
            if rec is not None:
                rec.reserve[plugin.name] = _verdict(status)
            if status is not None and status.code != Code.SUCCESS:
                if status.is_rejected():
                    return _with_plugin(status, plugin.name)
                return _with_plugin(
                    Status(Code.ERROR, f"running Reserve plugin {plugin.name!r}: {status.message}"),
                    plugin.name,
                )
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve runs on every reserve plugin, in reverse order; it cannot fail."""
        for plugin in reversed(self._run(state)[5]):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:
                log.exception("Unreserve of plugin %s failed", plugin.name)

    def run_permit_plugins(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status | None, dict[str, float]]:
        """Returns (status, plugin -> wait timeout); a Wait status means the pod must wait."""
        waiting: dict[str, float] = {}
        rec = state.recorder
        for plugin in self._run(state)[6]:
            try:
                status, timeout = plugin.permit(state, pod, node_name)
            except Exception as err:
                status, timeout = Status(Code.ERROR, f"{type(err).__name__}: {err}"), 0.0
            if rec is not None:
                rec.permit[plugin.name] = _verdict(status)
            if status is None or status.code == Code.SUCCESS:
                continue
            if status.is_rejected():
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

    def run_pre_bind_plugins(
        self, state: CycleState, pod: Pod, node_name: str, start: int = 0
    ) -> Status | None:
        """k8s RunPreBindPlugins from the ``start``-th plugin (``_run_pre_binds``)."""
        return _run_pre_binds(self._run(state)[7], start, state, pod, node_name)

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """The first plugin that does not Skip decides; all Skip -> Skip.

        A ``BindingPending`` answer is returned as it is: the binding goes on elsewhere.
        """
        rec = state.recorder
        for plugin in self._run(state)[8]:
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
                if status.is_rejected():
                    return _with_plugin(status, plugin.name)
                return _with_plugin(
                    Status(Code.ERROR, f"running Bind plugin {plugin.name!r}: {status.message}"),
                    plugin.name,
                )
            return None
        return Status(Code.SKIP)

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """k8s RunPostBindPlugins: failures are logged only."""
        for plugin in self._run(state)[9]:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:
                log.exception("PostBind of plugin %s failed", plugin.name)

    def forget_pod(self, uid: str) -> None:
        """Tells plugins that keep per-pod resources (wasm instances) that a pod's cycle ended."""
        for _, forget in self._forget_pod:
            forget(uid)

    def close(self) -> None:
        """Closes every plugin that has a ``close`` (wasm instances)."""
        for plugin in self.all_plugins:
            close = getattr(plugin, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    log.exception("closing plugin %s failed", plugin.name)


# Permit timeouts are capped like kube-scheduler's maxTimeout (15 minutes).
MAX_PERMIT_TIMEOUT = 15 * 60.0
