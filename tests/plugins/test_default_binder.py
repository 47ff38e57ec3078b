"""DefaultBinder: binds through the handle's binder."""

from __future__ import annotations

from conftest import FakeBinder, FakeHandle, make_pod

from wasmsched.framework.cycle_state import CycleState
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
