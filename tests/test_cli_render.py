"""The rich renderers of cli/report.py: data is printed as it is, never read as markup."""

from __future__ import annotations

import pytest
from rich.console import Console

from wasmsched.api.objects import Pod
from wasmsched.cli.render import print_explain, print_table
from wasmsched.framework.runtime import CycleRecord
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler import PodOutcome
from wasmsched.sim.simulation import NodeReport, PodReport, SimulationResult

TRICKY = [
    "waiting for scheduling gates: [example.com/wait]",
    "closing tag with nothing to close: [/]",
    "[bold]not bold[/bold] and [red]not red",
    "a backslash \\[x] stays",
    "node(s) didn't satisfy plugin(s) [NodeAffinity PodTopologySpread]",
]


def pod(name: str) -> Pod:
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns[1]"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }
    )


def result_with(
    reports: list[PodReport], nodes: list[NodeReport] | None = None
) -> SimulationResult:
    return SimulationResult(
        outcomes=[r.outcome for r in reports if r.outcome is not None],
        other_scheduler_pods=[],
        events=[],
        preemptions=[],
        simulated_seconds=0.0,
        wall_seconds=0.0,
        cycles=1,
        nodes=len(nodes or []),
        skipped_plugins={"[p]": ["Gadget[x]"]},
        stopped_early="stopped: [reason]",
        pods=reports,
        node_reports=nodes or [],
    )


def render(fn: object, *args: object) -> str:
    console = Console(record=True, width=400, color_system=None)
    fn(console, *args)  # type: ignore[operator]
    return console.export_text()


@pytest.mark.parametrize("message", TRICKY)
def test_table_prints_messages_names_and_nodes_verbatim(message: str) -> None:
    p = pod("web[0]")
    outcome = PodOutcome(p, "default-scheduler", "Unschedulable", None, message)
    report = PodReport(p, "Unschedulable", "node[a]", message, was_pending=True, outcome=outcome)
    nodes = [NodeReport("node[a]", {"cpu": 1000, "pods": 10}, {"cpu": 500, "pods": 1}, 1)]
    out = render(print_table, result_with([report], nodes))
    assert message in out
    for text in ("web[0]", "ns[1]", "node[a]", "Gadget[x]", "profile [p]", "stopped: [reason]"):
        assert text in out, text
    assert "500m/1 (50%)" in out


@pytest.mark.parametrize("reason", TRICKY)
@pytest.mark.parametrize("nodes", [2, 30])  # the full table, and the grouped view
def test_explain_prints_plugin_and_guest_reasons_verbatim(reason: str, nodes: int) -> None:
    p = pod("api[2]")
    record = CycleRecord()
    record.pre_filter = {"Guest[w]": reason}
    record.filter_order = ("Guest[w]", "Fit")
    for i in range(nodes):
        status = Status(Code.UNSCHEDULABLE, reason) if i % 2 else None
        record.filter_rows.append((f"n[{i}]", "Guest[w]" if status else None, status))
    record.score_rows.append(("Score[s]", 2, ["n[0]"], [7], [3]))
    record.selected_node = "n[0]"
    outcome = PodOutcome(p, "default-scheduler", "Scheduled", "n[0]", "", cycles=[record])
    report = PodReport(p, "Scheduled", "n[0]", "", was_pending=True, outcome=outcome)
    out = render(print_explain, result_with([report]))
    assert f"Guest[w]={reason}" in out
    assert f"Unschedulable: {reason}" in out
    assert "ns[1]/api[2]: Scheduled on n[0]" in out
    assert "7/3/6" in out  # raw / normalized / weighted
    assert "selected node: n[0]" in out
    if nodes > 20:
        assert f"Filter: {nodes // 2} of {nodes} evaluated nodes passed" in out


@pytest.mark.parametrize("explain", [False, True])
@pytest.mark.parametrize("pods", [0, 1, 3])
def test_streamed_json_is_the_document_json_dumps_prints(explain: bool, pods: int) -> None:
    import io
    import json

    from wasmsched.cli.render import result_to_json, write_json

    reports = []
    for i in range(pods):
        p = pod(f"p{i}")
        record = CycleRecord(filter_order=("F",), filter_rows=[("n\\n1", None, None)])
        outcome = PodOutcome(p, "default-scheduler", "Scheduled", "n1", "a\\nb", cycles=[record])
        reports.append(
            PodReport(p, "Scheduled", "n1", "line\\nbreak", was_pending=True, outcome=outcome)
        )
    nodes = [NodeReport("n1", {"cpu": 1000}, {"cpu": 0}, 0)]
    result = result_with(reports, nodes)
    out = io.StringIO()
    write_json(result, out, explain)
    assert json.loads(out.getvalue()) == result_to_json(result, explain)
    if not explain:  # byte for byte what json.dumps prints
        assert out.getvalue() == json.dumps(result_to_json(result, explain), indent=2) + "\n"


def test_record_json_is_the_records_dict() -> None:
    import json
    from pathlib import Path

    from wasmsched.api.manifests import load_manifests
    from wasmsched.cli.render import record_json
    from wasmsched.config import default_config
    from wasmsched.plugins.registry import in_tree_registry
    from wasmsched.sim.simulation import Simulation

    root = Path(__file__).resolve().parents[1]
    objects = load_manifests(root / "tests" / "scenarios" / "preemption_mixed.yaml")
    sim = Simulation(objects, default_config(), in_tree_registry(), explain=True)
    try:
        result = sim.run()
    finally:
        sim.close()
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
