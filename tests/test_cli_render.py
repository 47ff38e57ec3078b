"""The rich renderers of cli/render.py: data is printed as it is, never read as markup."""

from __future__ import annotations

import pytest
from rich.console import Console

from sched_support import result_of
from wasmsched.api.objects import Pod
from wasmsched.cli.render import print_explain, print_table
from wasmsched.framework.runtime import CycleRecord
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler import PodOutcome
from wasmsched.sim.result import NodeUsage, PodResult, SimulationResult

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


def result_with(pods: list[PodResult], nodes: list[NodeUsage] | None = None) -> SimulationResult:
    return result_of(
        pods,
        nodes or [],
        skipped_plugins={"[p]": ["Gadget[x]"]},
        stopped_early="stopped: [reason]",
    )


def render(fn: object, *args: object) -> str:
    console = Console(record=True, width=400, color_system=None)
    fn(console, *args)  # type: ignore[operator]
    return console.export_text()


@pytest.mark.parametrize("message", TRICKY)
def test_table_prints_messages_names_and_nodes_verbatim(message: str) -> None:
    p = pod("web[0]")
    outcome = PodOutcome(p, "default-scheduler", "Unschedulable", None, message)
    result = PodResult(p, "Unschedulable", "node[a]", message, was_pending=True, outcome=outcome)
    nodes = [NodeUsage("node[a]", {"cpu": 1000, "pods": 10}, {"cpu": 500, "pods": 1}, 1)]
    out = render(print_table, result_with([result], nodes))
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
    result = PodResult(p, "Scheduled", "n[0]", "", was_pending=True, outcome=outcome)
    out = render(print_explain, result_with([result]))
    assert f"Guest[w]={reason}" in out
    assert f"Unschedulable: {reason}" in out
    assert "ns[1]/api[2]: Scheduled on n[0]" in out
    assert "7/3/6" in out  # raw / normalized / weighted
    assert "selected node: n[0]" in out
    if nodes > 20:
        assert f"Filter: {nodes // 2} of {nodes} evaluated nodes passed" in out
