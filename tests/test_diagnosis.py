import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wasmsched.framework.diagnosis import Diagnosis, FitError
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler import num_feasible_nodes_to_find


def test_fit_error_histogram_is_sorted_like_kube_scheduler() -> None:
    d = Diagnosis()
    d.node_to_status.set("a", Status(Code.UNSCHEDULABLE, "Insufficient cpu"))
    d.node_to_status.set("b", Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"))
    d.node_to_status.set(
        "c", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {k: v}")
    )
    assert str(FitError(3, d)) == (
        "0/3 nodes are available: 1 Insufficient memory, "
        "1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu."
    )


def test_fit_error_counts_absent_nodes_with_the_absent_status() -> None:
    d = Diagnosis()
    d.node_to_status.absent_nodes_status = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [NodeAffinity]"
    )
    d.node_to_status.set("a", Status(Code.UNSCHEDULABLE, "Insufficient cpu"))
    assert str(FitError(5, d)) == (
        "0/5 nodes are available: 1 Insufficient cpu, "
        "4 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_prefilter_message_replaces_the_histogram_and_postfilter_is_appended() -> None:
    d = Diagnosis(pre_filter_msg="node(s) didn't match Pod's node affinity/selector")
    d.node_to_status.set("a", Status(Code.UNSCHEDULABLE, "ignored"))
    d.post_filter_msg = "preemption: 0/2 nodes are available: 2 No preemption victims found."
    assert str(FitError(2, d)) == (
        "0/2 nodes are available: node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found."
    )


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        (50, 0, 50),
        (99, 0, 99),
        (100, 0, 100),
        (500, 0, 230),
        (1000, 0, 420),
        (5000, 0, 500),
        (10000, 0, 500),
        (15000, 0, 750),
        (1000, 50, 500),
        (1000, 5, 100),
        (1000, 100, 1000),
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == expected


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["Insufficient cpu", "Insufficient memory", "x"]), max_size=3),
            st.sampled_from(["", "NodeResourcesFit", "TaintToleration"]),
        ),
        max_size=12,
    ),
    st.integers(0, 4),
)
def test_histograms_count_every_node_reason_and_plugin(
    rows: list[tuple[list[str], str]], absent: int
) -> None:
    # Counted by distinct reason list / plugin, as node by node.
    d = Diagnosis()
    for i, (reasons, plugin) in enumerate(rows):
        d.node_to_status.set(f"n{i}", Status(Code.UNSCHEDULABLE, *reasons, plugin=plugin))
    d.node_to_status.absent_nodes_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gone")
    want: dict[str, int] = {}
    for reasons, _ in rows:
        for r in reasons:
            want[r] = want.get(r, 0) + 1
    if absent:
        want["gone"] = absent
    got = dict(FitError(len(rows) + absent, d).reason_histogram())
    assert got == want
    plugins: dict[str, int] = {}
    for _, plugin in rows:
        plugins[plugin or "(unknown)"] = plugins.get(plugin or "(unknown)", 0) + 1
    assert d.rejections_by_plugin() == dict(sorted(plugins.items()))
