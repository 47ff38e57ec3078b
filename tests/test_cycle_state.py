"""CycleState: plugin data, its clone, and the per-attempt recorder and observer."""

from __future__ import annotations

from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.records import CycleRecord


class Counter:
    def __init__(self, n: int) -> None:
        self.n = n

    def clone(self) -> Counter:
        return Counter(self.n)


def test_clone_copies_plugin_data_and_shares_the_attempt() -> None:
    record = CycleRecord()
    calls: list[str] = []

    def observer(point: str, plugin: str, code: str, seconds: float) -> None:
        calls.append(point)

    state = CycleState(record, observer)
    state.write("counter", Counter(1))
    state.write("plain", [1])
    state.skip_filter_plugins = frozenset({"A"})
    copy = state.clone()
    copy.read("counter").n = 2
    assert state.read("counter").n == 1  # cloned through its clone()
    assert copy.read("plain") is state.read("plain")  # values without clone() are shared
    assert copy.skip_filter_plugins == {"A"}
    # A what-if run (preemption) belongs to the same attempt: same recorder and observer.
    assert copy.recorder is record and copy.observer is observer
    assert CycleState().recorder is None and CycleState().observer is None


def test_read_get_delete() -> None:
    state = CycleState()
    state.write("k", 1)
    assert "k" in state and state.read("k") == 1 and state.get("x", 2) == 2
    state.delete("k")
    state.delete("k")
    assert "k" not in state
