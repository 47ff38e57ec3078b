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
    ],
)
def test_workload_pods_end_as_expected(bench: ModuleType, name: str, unscheduled: int) -> None:
    workload = bench.WORKLOADS[name](20)
    assert len(workload.expect) == unscheduled
    rate, placed = bench.run_ours(workload)
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
