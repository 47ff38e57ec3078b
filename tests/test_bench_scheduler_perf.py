"""Smoke test of benchmarks/bench_scheduler_perf.py: a few workloads at a tiny size, without
the reference, checking that every pod ends as the workload says (measured pods bound,
Unschedulable's large pods unschedulable, gated pods gated). It times nothing."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module("bench_scheduler_perf")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize(
    ("name", "unscheduled"),
    [
        ("SchedulingBasic", 0),
        ("Unschedulable", 2),  # one large-cpu pod per 20 measured pods (40)
        ("SchedulingGatedPods", 20),  # half as many gated pods as measured ones
        ("SchedulingWithMixedChurn", 0),
        ("PreemptionBasic", 0),
        ("Production", 0),
        ("SchedulingWithResourceClaimTemplate", 0),
    ],
)
def test_workload_pods_end_as_expected(bench: ModuleType, name: str, unscheduled: int) -> None:
    workload = bench.WORKLOADS[name](20)
    assert len(workload.expect) == unscheduled
    rate, placed = bench.run_ours(workload, workload.release)
    assert rate > 0
    assert set(workload.measured) <= set(placed)
    assert not set(workload.expect) & set(placed)


def test_a_pod_that_ends_otherwise_is_reported(bench: ModuleType) -> None:
    workload = bench.WORKLOADS["SchedulingGatedPods"](20)
    # A measured pod that cannot be bound: the check names it.
    workload.measured.append(workload.expect.popitem()[0])
    with pytest.raises(bench.WorkloadError, match="1 pods not as expected"):
        bench.run_ours(workload)


def test_churn_is_ours_only_with_its_reason(bench: ModuleType) -> None:
    row = bench.run_row("SchedulingWithMixedChurn", 20, reference=True, placements=False)
    assert row.kube is None
    assert row.note.startswith("ours only: timed churn")


def test_dra_shape_takes_one_device_per_pod_at_its_release(bench: ModuleType) -> None:
    """The DRA rows run at 1.37 on both sides unless a release is chosen; at 1.33 (no
    resource.k8s.io/v1) the row is skipped with its reason."""
    workload = bench.WORKLOADS["SchedulingWithResourceClaimTemplate"](4)
    assert workload.release == "1.37"
    assert len(workload.measured) == 20  # 5 pods per node
    assert bench.reference_binary("1.37").name == "wasmsched-reference-1.37"
    row = bench.run_row("SchedulingWithResourceClaimTemplate", 4, False, False, "1.33")
    assert row.note == "skipped: needs 1.37"


def test_a_device_held_twice_is_reported(bench: ModuleType) -> None:
    workload = bench.WORKLOADS["SchedulingWithResourceClaimTemplate"](1)
    result = {"request": "req-0", "driver": "d", "pool": "p", "device": "gpu-0"}
    claim = {
        "status": {
            "allocation": {"devices": {"results": [result]}},
            "reservedFor": [{"resource": "pods", "name": "x", "uid": "u"}],
        }
    }
    with pytest.raises(bench.WorkloadError, match="device d/p/gpu-0 allocated twice"):
        bench._check_devices(workload, [claim, claim])
    with pytest.raises(bench.WorkloadError, match="1 claims reserved for pods, 5 expected"):
        bench._check_devices(workload, [claim])
