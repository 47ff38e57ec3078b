"""What a simulation reports: each pod's result, each node's usage, the run's counters.

``wasmsched.sim.document`` turns it into the JSON document of ``simulate --output json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wasmsched.api.objects import Pod
from wasmsched.framework.interfaces import Event
from wasmsched.scheduler import ERROR, SCHEDULED, UNSCHEDULABLE, PodOutcome
from wasmsched.sim.store import Preemption

__all__ = [
    "PREEMPTED",
    "RUNNING",
    "SKIPPED",
    "TERMINATED",
    "NodeUsage",
    "PodResult",
    "SimulationResult",
]

# Results of pods the simulation did not schedule (the output contract's extension).
RUNNING = "Running"  # bound before the run and still there at the end
SKIPPED = "Skipped"  # left to another scheduler, or being deleted
PREEMPTED = "Preempted"  # deleted by preemption during the run
TERMINATED = ("Succeeded", "Failed")  # status.phase of a finished pod, reported as it is


@dataclass
class PodResult:
    """What became of one pod of the cluster.

    ``was_pending`` tells a pod this simulation had to schedule (its ``outcome`` is the
    scheduler's) from one that was already bound, finished or left to someone else.
    """

    pod: Pod
    result: str
    node: str | None = None
    message: str = ""
    nominated_node: str | None = None
    preempted_by: str | None = None
    was_pending: bool = False
    outcome: PodOutcome | None = None
    # DRAExtendedResource: the pod's status.extendedResourceClaimStatus and the claim it
    # names, as the run left them ({"status": ..., "claim": ...}); None without one.
    extended_resource_claim: dict[str, Any] | None = None


@dataclass
class NodeUsage:
    """A node's utilization at the end of the run: what its bound pods request.

    Amounts are integers: milli-CPU for ``cpu``, bytes for memory and storage, counts for
    ``pods`` and for extended resources. Terminated pods count for nothing.
    """

    name: str
    allocatable: dict[str, int]
    requested: dict[str, int]
    pods: int


@dataclass
class SimulationResult:
    """What a simulation reports: each pod's outcome, the events and preemptions it
    recorded, and its counters (``summary()`` is ``simulate --output json``'s summary)."""

    outcomes: list[PodOutcome]
    other_scheduler_pods: list[Pod]
    events: list[Event]
    preemptions: list[Preemption]
    simulated_seconds: float
    wall_seconds: float
    cycles: int
    nodes: int
    skipped_plugins: dict[str, list[str]]
    stopped_early: str = ""
    # Every pod of the cluster, in input order (pending or not).
    pods: list[PodResult] = field(default_factory=list)
    node_usage: list[NodeUsage] = field(default_factory=list)
    # The kube-scheduler release the run modelled, and the gates set away from its defaults.
    kubernetes_version: str = ""
    feature_gates: dict[str, bool] = field(default_factory=dict)
    # With DeviceClasses in the cluster: devices allocated per class over the run
    # (sim/devices.py: DeviceUsage.to_dict), else None.
    devices: dict[str, Any] | None = None

    def counts(self) -> dict[str, int]:
        counts = {SCHEDULED: 0, UNSCHEDULABLE: 0, ERROR: 0}
        for o in self.outcomes:
            counts[o.result] = counts.get(o.result, 0) + 1
        return counts

    def summary(self) -> dict[str, Any]:
        """The ``summary`` of ``simulate --output json`` (wasmsched.sim.document owns it)."""
        from wasmsched.sim.document import summary

        return summary(self)
