"""Timed stand-ins of plugins, which the framework's runners iterate for an observer.

kube-scheduler times plugin calls only in sampled cycles (pkg/scheduler/framework/
runtime/framework.go: runFilterPlugin and the others check ``state.ShouldRecordPluginMetrics``);
here a sampled cycle's CycleState carries the observer and the runners switch to stand-ins
that Framework builds once per observer (framework/runtime: Framework._run_tuples), so
unsampled cycles pay nothing.

kube-scheduler observes Filter and Score once per plugin per node (runFilterPlugin,
runScorePlugin). A plugin's vectorized form answers for many nodes in one call
(framework/node_search); ``observe_calls`` reports that call as the per-node calls it
stands for: one observation per node with that node's status, each lasting an equal share
of the call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from wasmsched.framework.records import BindingPending, PluginObserver
from wasmsched.framework.status import Status, code_name

__all__ = [
    "ObservedPlugin",
    "code_of",
    "observe_calls",
    "observe_filter",
    "observe_normalize",
    "observe_score",
]


def code_of(status: Status | None) -> str:
    """The observer's status label: a code name, Success for None."""
    return "Success" if status is None else code_name(status.code)


def observe_calls(
    observer: PluginObserver,
    point: str,
    plugin: str,
    counts: Iterable[tuple[str, int]],
    seconds: float,
) -> None:
    """Reports one call that stands for many per-node calls: ``counts`` gives how many
    ended with each status label; each lasted ``seconds`` over their number. An observer
    with ``calls`` (records.PluginCallCounter) takes each label's calls at once."""
    counts = [(code, n) for code, n in counts if n]
    total = sum(n for _, n in counts)
    if not total:
        return
    each = seconds / total
    many = getattr(observer, "calls", None)
    for code, n in counts:
        if many is not None:
            many(point, plugin, code, each, n)
        else:
            for _ in range(n):
                observer(point, plugin, code, each)


def observe_filter(
    observer: PluginObserver,
    plugin: str,
    codes: npt.NDArray[np.int64],
    table: Sequence[Status],
    start: float,
) -> None:
    """A plugin's Filter over rows since ``start`` (its verdicts: ``codes``, ``table``, as
    framework/columns: verdicts), observed as runFilterPlugin observes each node's call:
    one observation per row it was asked, by that row's status, up to its first error (no
    later row is called)."""
    seconds = time.perf_counter() - start
    if not table:
        observe_calls(observer, "Filter", plugin, (("Success", len(codes)),), seconds)
        return
    errors = [k for k, status in enumerate(table, 1) if not status.is_rejected()]
    if errors:
        codes = codes[: int(np.flatnonzero(np.isin(codes, errors))[0]) + 1]
    counts = np.bincount(codes, minlength=len(table) + 1).tolist()
    labels = [("Success", counts[0])]
    labels += [(code_of(status), n) for status, n in zip(table, counts[1:], strict=True)]
    observe_calls(observer, "Filter", plugin, labels, seconds)


def observe_score(
    observer: PluginObserver | None, plugin: str, answer: Any, nodes: int, start: float
) -> None:
    """A plugin's vectorized Score over ``nodes`` rows since ``start``, observed as
    runScorePlugin observes each node's call; a failure (``answer`` a Status) as that one
    call; nothing when there is no observer or the form did not answer (None)."""
    if observer is None or answer is None:
        return
    counts = [(code_of(answer), 1)] if isinstance(answer, Status) else [("Success", nodes)]
    observe_calls(observer, "Score", plugin, counts, time.perf_counter() - start)


def observe_normalize(
    observer: PluginObserver | None, plugin: str, status: Status | None, start: float
) -> None:
    """A vectorized NormalizeScore since ``start``: runScoreExtension's one observation."""
    if observer is not None:
        observer("ScoreExtensionNormalize", plugin, code_of(status), time.perf_counter() - start)


def _same(r: Any) -> Any:
    return r


def _first(r: Any) -> Any:
    return r[0]


def _second(r: Any) -> Any:
    return r[1]


def _nothing(r: Any) -> None:
    return None


class ObservedPlugin:
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
            self._observer(point, self.name, code_of(status), time.perf_counter() - start)
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
        return None if ext is None else ObservedPlugin(ext, self.name, self._observer)

    def score_extensions(self) -> Any:
        ext = self._plugin.score_extensions()
        return None if ext is None else ObservedPlugin(ext, self.name, self._observer)

    def add_pod(self, *args: Any) -> Any:
        return self._call("PreFilterExtensionAddPod", self._plugin.add_pod, _same, *args)

    def remove_pod(self, *args: Any) -> Any:
        return self._call("PreFilterExtensionRemovePod", self._plugin.remove_pod, _same, *args)

    def normalize_score(self, *args: Any) -> Any:
        return self._call("ScoreExtensionNormalize", self._plugin.normalize_score, _same, *args)
