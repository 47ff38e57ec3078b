"""The nominator (queue/nominator.py): nominations by node, and upstream's update rule."""

from __future__ import annotations

import pytest

from sched_support import pod
from wasmsched.queue.nominator import Nominator


def test_add_moves_a_nomination_and_empty_removes_it() -> None:
    n = Nominator()
    a = pod("a")
    assert not n
    n.add(a, "n1")
    assert n.node_of(a.uid) == "n1" and [pi.pod for pi in n.pods_for_node("n1")] == [a]
    n.add(a, "n2")
    assert n.pods_for_node("n1") == [] and n.node_of(a.uid) == "n2"
    n.add(a, "")
    assert n.node_of(a.uid) is None and not n
    n.delete(a.uid)  # deleting what is not there is fine
    assert not n


@pytest.mark.parametrize(
    ("in_memory", "old_node", "new_node", "expected"),
    [
        # the API's nomination is the truth when either version has one
        ("", "", "n2", "n2"),
        ("n1", "n1", "n2", "n2"),
        ("n1", "n1", "", None),
        ("", "n1", "n1", "n1"),
        # neither version has one: a nomination made in memory stays
        ("n1", "", "", "n1"),
        ("", "", "", None),
    ],
)
def test_update_follows_upstream_update_nominated_pod(
    in_memory: str, old_node: str, new_node: str, expected: str | None
) -> None:
    n = Nominator()
    old = pod("a")
    old = old.with_nominated_node_name(old_node) if old_node else old
    new = old.with_nominated_node_name(new_node)
    if in_memory:
        n.add(old, in_memory)
    n.update(old, new)
    assert n.node_of(old.uid) == expected
    if expected is not None:
        # the entry is refreshed: filters see the pod's latest version
        assert [pi.pod for pi in n.pods_for_node(expected)] == [new]
