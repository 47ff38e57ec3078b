"""Differential suite for DynamicResources: wasmsched against kube-scheduler v1.37.2 on
random DRA clusters (tests/reference_gen_dra.py), pod by pod: node, result and message,
compared as tests/test_reference_diff.py compares them (tests/reference_support.py).

A fixed-seed set and a few fresh cases keep the default suite cheap; the 2000-case run is
scripts/reference-diff --kubernetes-version 1.37 --strategy dra --count 2000. A
disagreement fails with the case shrunk and written under .cache/reference-diff/failures/.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from reference_diff_run import draw_cases
from reference_support import ROOT, V137, Case, Outcome, run_cases, shrink, write_reproducer

FIXED_SEED = 24
FIXED_COUNT = 24
FRESH_COUNT = 8
# The reference's DRA cases mostly wait (its stand-in for the resourceclaim controller and
# the binding goroutines run on their own timers), not compute: more of them at once.
DRA_JOBS = 12
FAILURES = ROOT / ".cache" / "reference-diff" / "failures"
KNOWN = ROOT / "tests" / "reference_cases"
# Disagreements the DRA strategy found, fixed: their clusters must agree from now on.
FIXED_DIVERGENT = {
    # wasmsched's: a pending pod whose nomination is cleared (its retry fails with
    # "Preemption is not helpful": another pod took the devices on its nominated node)
    # no longer holds that node for the pods of lower or equal priority, which kube
    # requeues with AssignedPodDelete (eventhandlers.go: updatePodInSchedulingQueue,
    # hasNominatedNodeNameChanged; deletePodFromSchedulingQueue), and NodeResourcesFit's
    # hint queues them for a deleted pod that was only nominated (fit.go:
    # isSchedulableAfterPodEvent). wasmsched sent no event, and its Fit hint skipped.
    "nomination-leaves": KNOWN / "dra_nomination_leaves",
    # wasmsched's: the same, where the simulation then stopped before retrying those
    # pods (each last tried against an unchanged cluster generation, Scheduler.
    # has_work_that_could_change); a nomination leaving a node is a change.
    "nomination-leaves-retried": KNOWN / "dra_nomination_leaves_retried",
}

pytestmark = pytest.mark.skipif(not V137.built(), reason=V137.not_built)


def _check(outcomes: list[Outcome], workdir: Path) -> None:
    bad = [o for o in outcomes if o.diffs]
    if not bad:
        return
    lines = []
    for o in bad[:3]:
        small = shrink(o.case, workdir / "shrink" / o.case.name, ref=V137)
        folder = write_reproducer(small, o.diffs, FAILURES / f"dra-{o.case.name}", V137)
        lines.append(f"{o.case.name}: reproducer {folder}")
        lines += [f"    {d}" for d in o.diffs[:4]]
    pytest.fail(
        f"{len(bad)} of {len(outcomes)} DRA cases disagree with kube-scheduler {V137.version}:\n"
        + "\n".join(lines)
    )


def test_fixed_seed_dra_cases_agree(tmp_path: Path) -> None:
    cases = draw_cases(FIXED_SEED, FIXED_COUNT, prefix="dra-", version=V137.version, strategy="dra")
    assert len(cases) == FIXED_COUNT
    outcomes = run_cases(cases, tmp_path, jobs=DRA_JOBS, ref=V137)
    # The set schedules pods, leaves some unschedulable and preempts: it compares something.
    results = {p.result for o in outcomes for p in o.ours.pods.values()}
    assert {"Scheduled", "Unschedulable"} <= results
    assert any(o.ours.preemptions for o in outcomes)
    _check(outcomes, tmp_path)


def test_fresh_dra_cases_agree(tmp_path: Path) -> None:
    seed = int(os.environ.get("REFERENCE_DIFF_SEED", random.randrange(2**31)))
    print(f"fresh seed {seed} (REFERENCE_DIFF_SEED={seed} repeats it)")
    cases = draw_cases(
        seed, FRESH_COUNT, prefix=f"dra-fresh{seed}-", version=V137.version, strategy="dra"
    )
    _check(run_cases(cases, tmp_path, jobs=DRA_JOBS, ref=V137), tmp_path)


@pytest.mark.parametrize("name", sorted(FIXED_DIVERGENT))
def test_fixed_dra_divergence_reproducer(name: str, tmp_path: Path) -> None:
    text = (FIXED_DIVERGENT[name] / "cluster.yaml").read_text()
    docs = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    [outcome] = run_cases([Case(name, docs)], tmp_path, ref=V137)
    assert outcome.ours.pods, "the case schedules nothing"
    assert outcome.diffs == []
