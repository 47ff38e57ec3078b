"""CycleState: per-scheduling-cycle plugin data, cloneable for preemption."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wasmsched.framework.records import CycleRecord, PluginObserver

PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"


class StateData(Protocol):
    """A value plugins keep in the CycleState; preemption clones it with the state."""

    def clone(self) -> StateData:
        """An independent copy."""
        ...


class CycleState:
    """A string-keyed map of plugin state; ``clone`` deep-copies via each value's ``clone``.

    It also carries what one attempt wants of the framework's runners, as kube-scheduler's
    CycleState carries ``recordPluginMetrics`` (pkg/scheduler/framework/cycle_state.go:
    SetRecordPluginMetrics): the explain ``recorder`` and the plugin-call ``observer``.
    """

    __slots__ = ("_data", "observer", "recorder", "skip_filter_plugins", "skip_score_plugins")

    def __init__(
        self, recorder: CycleRecord | None = None, observer: PluginObserver | None = None
    ) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        self.recorder = recorder
        self.observer = observer

    def read(self, key: str) -> Any:
        """The value stored under ``key``; KeyError when absent (framework.ErrNotFound)."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default``."""
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        """Stores ``value`` under ``key``."""
        self._data[key] = value

    def delete(self, key: str) -> None:
        """Removes ``key`` if present."""
        self._data.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        """A copy for a what-if run (preemption); plugin data is cloned, the attempt's
        recorder and observer are shared."""
        copy = CycleState(self.recorder, self.observer)
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            copy._data[key] = clone() if clone is not None else value
        copy.skip_filter_plugins = self.skip_filter_plugins
        copy.skip_score_plugins = self.skip_score_plugins
        return copy
