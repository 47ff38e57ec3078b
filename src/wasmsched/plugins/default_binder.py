"""DefaultBinder: writes the binding through the scheduler's binder (k8s ``defaultbinder``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wasmsched.framework.runtime import BindingPending
from wasmsched.framework.status import as_status
from wasmsched.plugins.helpers import ALL_EVENTS

if TYPE_CHECKING:
    from wasmsched.api.objects import Pod
    from wasmsched.framework.cycle_state import CycleState
    from wasmsched.framework.interfaces import Handle
    from wasmsched.framework.status import Status
    from wasmsched.framework.types import ClusterEventWithHint

NAME = "DefaultBinder"


class DefaultBinder:
    """The default Bind plugin (pkg/scheduler/framework/plugins/defaultbinder/default_binder.go:
    DefaultBinder): writes the pod's Binding through the handle's binder.
    """

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Bind (default_binder.go: DefaultBinder.Bind): binds the pod to ``node_name``.

        With an asynchronous binder (the API server's writer) the binding is made in the
        background and the call returns a pending status; an exception from the binder
        becomes an Error status.
        """
        try:
            # A writer that can bind in the background (the API server's) lets the next
            # pod be scheduled meanwhile, as kube-scheduler's binding goroutine does.
            background = self.handle.async_binder()
            if background is not None:
                background.bind_async(pod, node_name)
                return BindingPending()
            return self.handle.binder().bind(pod, node_name)
        except Exception as e:  # a failed API call is an Error status, as k8s AsStatus(err)
            return as_status(e)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EnqueueExtensions: every cluster event, as upstream registers for a plugin without
        EventsToRegister (pkg/scheduler/framework/runtime/framework.go: fillEventToPluginMap).
        """
        return list(ALL_EVENTS)


def new(args: dict[str, Any], handle: Handle) -> DefaultBinder:
    """The registry factory (default_binder.go: New); DefaultBinder takes no args."""
    return DefaultBinder(handle)


if TYPE_CHECKING:
    from wasmsched.framework.interfaces import BindPlugin, EnqueueExtensions

    # Static conformance: mypy checks the class against the protocol of each extension point
    # it serves, as upstream's
    # `var _ framework.BindPlugin = &DefaultBinder{}`
    # (pkg/scheduler/framework/plugins/defaultbinder/default_binder.go).
    _bind: type[BindPlugin] = DefaultBinder
    _enqueue_extensions: type[EnqueueExtensions] = DefaultBinder
