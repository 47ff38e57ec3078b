"""The result document (wasmsched.sim.document): the streamed JSON is the document, and a
CycleRecord's compact JSON is its dict."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from sched_support import result_of
from wasmsched.api.manifests import load_manifests
from wasmsched.api.objects import Pod
from wasmsched.config import default_config
from wasmsched.framework.records import CycleRecord
from wasmsched.framework.status import Code, Status
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler import PodOutcome
from wasmsched.sim.document import document, pod_entry, record_json, write_document
from wasmsched.sim.result import NodeUsage, PodResult, SimulationResult
from wasmsched.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[1]


def explained_run(scenario: str, explain_pods: frozenset[str] | None = None) -> SimulationResult:
    objects = load_manifests(ROOT / "tests" / "scenarios" / scenario)
    sim = Simulation(
        objects, default_config(), in_tree_registry(), explain=True, explain_pods=explain_pods
    )
    try:
        return sim.run()
    finally:
        sim.close()


@pytest.mark.parametrize("explain", [False, True])
@pytest.mark.parametrize("pods", [0, 1, 3])
def test_streamed_json_is_the_document_json_dumps_prints(explain: bool, pods: int) -> None:
    results = []
    for i in range(pods):
        p = Pod(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "ns"},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            }
        )
        record = CycleRecord(filter_order=("F",), filter_rows=[("n\\n1", None, None)])
        outcome = PodOutcome(p, "default-scheduler", "Scheduled", "n1", "a\\nb", cycles=[record])
        results.append(
            PodResult(p, "Scheduled", "n1", "line\\nbreak", was_pending=True, outcome=outcome)
        )
    result = result_of(results, [NodeUsage("n1", {"cpu": 1000}, {"cpu": 0}, 0)])
    out = io.StringIO()
    write_document(result, out, explain)
    assert json.loads(out.getvalue()) == document(result, explain)
    if not explain:  # byte for byte what json.dumps prints
        assert out.getvalue() == json.dumps(document(result, explain), indent=2) + "\n"


@pytest.mark.parametrize("explain_pods", [None, frozenset({"default/vip"})])
def test_streamed_json_of_a_run_is_its_document(explain_pods: frozenset[str] | None) -> None:
    result = explained_run("preemption_mixed.yaml", explain_pods)
    out = io.StringIO()
    write_document(result, out, True, explain_pods)
    doc = document(result, True, explain_pods)
    assert json.loads(out.getvalue()) == doc
    assert doc["events"] and doc["summary"] == result.summary()
    explained = {f"{p['namespace']}/{p['name']}" for p in doc["pods"] if "cycles" in p}
    assert explained == (explain_pods or {r.pod.key for r in result.pods if r.outcome})
    assert [pod_entry(r) for r in result.pods] == document(result)["pods"]


def test_record_json_is_the_records_dict() -> None:
    result = explained_run("preemption_mixed.yaml")
    records = [c for o in result.outcomes for c in o.cycles]
    assert records and any(r.victims for r in records)
    assert any(v != "passed" for r in records for vs in r.filter.values() for v in vs.values())
    for record in records:
        assert json.loads(record_json(record)) == record.to_dict()
    # a node filtered twice (with and without nominated pods): the last run is kept
    twice = CycleRecord(filter_order=("A", "B"))
    status = Status(Code.UNSCHEDULABLE, 'quote " and \\[y]')
    twice.filter_rows += [("n", "B", status), ("m", "B", status), ("n", None, None)]
    assert json.loads(record_json(twice)) == twice.to_dict()
    assert twice.to_dict()["filter"] == {
        "n": {"A": "passed", "B": "passed"},
        "m": {"A": "passed", "B": 'Unschedulable: quote " and \\[y]'},
    }
