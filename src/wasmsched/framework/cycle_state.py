"""CycleState: per-scheduling-cycle plugin data, cloneable for preemption."""

from __future__ import annotations

from typing import Any, Protocol

PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"


class StateData(Protocol):
    def clone(self) -> StateData: ...


class CycleState:
    """A string-keyed map of plugin state; ``clone`` deep-copies via each value's ``clone``."""

    __slots__ = ("_data", "record_plugin_metrics", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        self.record_plugin_metrics = False

    def read(self, key: str) -> Any:
        """The value stored under ``key``; KeyError when absent (framework.ErrNotFound)."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        copy = CycleState()
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            copy._data[key] = clone() if clone is not None else value
        copy.skip_filter_plugins = self.skip_filter_plugins
        copy.skip_score_plugins = self.skip_score_plugins
        copy.record_plugin_metrics = self.record_plugin_metrics
        return copy
