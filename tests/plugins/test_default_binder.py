"""DefaultBinder: binds through the handle's binder."""

from __future__ import annotations

from conftest import FakeBinder, FakeHandle, make_pod

from wasmsched.api.objects import Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.runtime import BindingPending
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.default_binder import DefaultBinder


def test_bind_writes_through_the_binder() -> None:
    binder = FakeBinder()
    plugin = DefaultBinder(FakeHandle(binder=binder))
    assert plugin.bind(CycleState(), make_pod("p", namespace="ns"), "node1") is None
    assert binder.bound == [("ns/p", "node1")]


def test_bind_returns_the_binder_status() -> None:
    failed = Status(Code.ERROR, "conflict")
    plugin = DefaultBinder(FakeHandle(binder=FakeBinder(result=failed)))
    assert plugin.bind(CycleState(), make_pod(), "node1") is failed


def test_bind_turns_an_exception_into_an_error_status() -> None:
    plugin = DefaultBinder(FakeHandle(binder=FakeBinder(error=RuntimeError("api down"))))
    status = plugin.bind(CycleState(), make_pod(), "node1")
    assert status == Status(Code.ERROR, "api down")


class AsyncBinder(FakeBinder):
    """A binder that can bind in the background (the live API writer)."""

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__()
        self.started: list[tuple[str, str]] = []
        self.async_error = error

    def bind_async(self, pod: Pod, node_name: str) -> None:
        if self.async_error is not None:
            raise self.async_error
        self.started.append((pod.key, node_name))


def test_bind_starts_an_asynchronous_binding_when_the_binder_can() -> None:
    binder = AsyncBinder()
    plugin = DefaultBinder(FakeHandle(binder=binder))
    status = plugin.bind(CycleState(), make_pod("p", namespace="ns"), "node1")
    assert isinstance(status, BindingPending)
    assert binder.started == [("ns/p", "node1")]
    assert binder.bound == []


def test_bind_turns_a_failed_asynchronous_start_into_an_error_status() -> None:
    plugin = DefaultBinder(FakeHandle(binder=AsyncBinder(error=RuntimeError("closed"))))
    assert plugin.bind(CycleState(), make_pod(), "node1") == Status(Code.ERROR, "closed")
