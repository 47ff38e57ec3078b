"""Nominated pods in Filter (pkg/scheduler/framework/runtime/framework.go:
RunFilterPluginsWithNominatedPods, addGENominatedPods): the pods nominated to a node count
there, when of the filtered pod's priority or higher, in a first pass with them added."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.node_info import NodeInfo, PodInfo
    from wasmsched.framework.runtime import Framework
    from wasmsched.framework.status import Status

__all__ = [
    "NominatedPods",
    "counted",
    "counted_nominated_pods",
    "nominated_filter",
    "run_filter_plugins_with_nominated_pods",
    "run_filter_plugins_with_pods",
]


class NominatedPods(Protocol):
    """The pods nominated to nodes (the scheduling queue's nominator)."""

    def pods_for_node(self, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name``."""
        ...

    def nominated_nodes(self) -> list[str]:
        """The nodes with pods nominated to them."""
        ...

    def __bool__(self) -> bool:
        """Whether any pod is nominated anywhere."""
        ...


def run_filter_plugins_with_nominated_pods(
    nominator: NominatedPods, fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo
) -> Status | None:
    """RunFilterPluginsWithNominatedPods: filter with and without the nominated pods of
    higher or equal priority."""
    nominated = counted_nominated_pods(nominator, pod, node_info.name)
    return run_filter_plugins_with_pods(fwk, state, pod, node_info, nominated)


def run_filter_plugins_with_pods(
    fwk: Framework, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: list[PodInfo]
) -> Status | None:
    """RunFilterPluginsWithNominatedPods given the ``nominated`` pods that count: Filter
    on a copy of the node and the state with them added (AddPod run for each), then, if
    that passes, on the node as it is."""
    if not nominated:
        return fwk.run_filter_plugins(state, pod, node_info)
    state_with = state.clone()
    info_with = node_info.clone()
    for pi in nominated:
        info_with.add_pod_info(pi)
        status = fwk.run_pre_filter_extension_add_pod(state_with, pod, pi, info_with)
        if status is not None:
            return status
    status = fwk.run_filter_plugins(state_with, pod, info_with)
    if status is not None:
        return status
    return fwk.run_filter_plugins(state, pod, node_info)


def nominated_filter(
    fwk: Framework, state: CycleState, pod: Pod
) -> Callable[[NodeInfo, list[PodInfo]], Status | None]:
    """``run_filter_plugins_with_pods`` for this cycle. When every Filter plugin of the
    cycle reads the node alone or its sums (``filter_reads_node_alone``,
    ``filter_reads_sums``: they write nothing either), no PreFilterExtensions plugin is
    active (AddPod would change nothing) and no plugin has effects, no recorder or
    observer watches, the first pass runs on ``NodeInfo.with_pods`` and the cycle's state
    itself: what those plugins read of the copy and the cloned state, without making them.
    """
    skip = state.skip_filter_plugins
    light = (
        state.recorder is None
        and state.observer is None
        and not fwk.filter_effects
        and all(p.name in skip or p.pre_filter_extensions() is None for p in fwk.pre_filter_plugins)
        and all(
            p.name in skip
            or getattr(p, "filter_reads_node_alone", False)
            or getattr(p, "filter_reads_sums", False)
            for p in fwk.filter_plugins
        )
    )
    if not light:
        return functools.partial(run_filter_plugins_with_pods, fwk, state, pod)
    run = fwk.run_filter_plugins

    def with_pods(node_info: NodeInfo, nominated: list[PodInfo]) -> Status | None:
        if nominated:
            status = run(state, pod, node_info.with_pods(nominated))
            if status is not None:
                return status
        return run(state, pod, node_info)

    return with_pods


def counted_nominated_pods(nominator: NominatedPods, pod: Pod, node_name: str) -> list[PodInfo]:
    """The pods nominated to ``node_name`` that count when filtering ``pod``."""
    return counted(nominator.pods_for_node(node_name), pod)


def counted(nominated: Iterable[PodInfo], pod: Pod) -> list[PodInfo]:
    """Those of a node's ``nominated`` pods that count when filtering ``pod``: the others,
    of equal or higher priority (framework.go: addGENominatedPods)."""
    return [pi for pi in nominated if pi.pod.uid != pod.uid and pi.pod.priority >= pod.priority]
