"""Conformance: hostile guests (issue 14 items 1-12). Each asks the host for unbounded work
(read, decode, store or print guest bytes), or for more memory or table than its limit. The
call fails with an Error naming the import and the limit, quickly and with memory bounded,
and the scheduler goes on scheduling other pods."""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from guests_build import guest
from wasm_support import (
    FakeHandle,
    Plugins,
    make_node,
    new_state,
    node_info,
    plugins_fixture,
    pod_small,
)
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import ConfigError, load_config
from wasmsched.framework.interfaces import NodeScore, NodeToStatus
from wasmsched.framework.status import Code, Status
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.simulation import Simulation
from wasmsched.wasm import WasmError, WasmPlugin

RSS_BOUND = 256 << 20  # generous: the unbounded runs took gigabytes
TIME_BOUND = 2.0


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    yield from plugins_fixture()


def _filter(plugin: WasmPlugin) -> Status | None:
    return plugin.filter(new_state(), pod_small(), node_info("good-node"))


def _score(plugin: WasmPlugin) -> Status | None:
    return plugin.score(new_state(), pod_small(), node_info("good-node"))[1]


def _normalize(plugin: WasmPlugin) -> Status | None:
    return plugin.normalize_score(new_state(), pod_small(), [NodeScore("good-node", 1)])


def _post_filter(plugin: WasmPlugin) -> Status | None:
    return plugin.post_filter(new_state(), pod_small(), NodeToStatus())[1]


def _enqueue(plugin: WasmPlugin) -> Status | None:
    plugin.events_to_register()
    failed = [r for r in plugin.logs if r.message == "failed enqueue"]
    return Status(Code.ERROR, dict(failed[-1].kvs)["err"]) if failed else None


# (item, guest, call, expected fragments of the Error message)
CASES: list[tuple[str, str, Callable[[WasmPlugin], Status | None], tuple[str, ...]]] = [
    (
        "1-iovec-bytes",
        "hostile_fd_write",
        _filter,
        (
            "wasm: filter error:",
            "wasi_snapshot_preview1.fd_write",
            "stdout/stderr output: 6710886400 bytes exceed the limit of 1048576 bytes per call",
        ),
    ),
    (
        "1-iovec-count",
        "hostile_fd_write",
        _score,
        (
            "wasm: score error:",
            "wasi_snapshot_preview1.fd_write",
            "iovecs: 1000000 iovecs exceed the limit of 1024 iovecs per call",
        ),
    ),
    (
        "2-cluster-events",
        "hostile_cluster_events",
        _enqueue,
        (
            "k8s.io/scheduler.result.cluster_events",
            "cluster events: 134217728 bytes exceed the limit of 65536 bytes per call",
        ),
    ),
    (
        "3-klog-logs",
        "hostile_klog_logs",
        _filter,
        (
            "k8s.io/klog.logs",
            "log message and key/values: 33554437 bytes exceed the limit of 65536 bytes per call",
        ),
    ),
    (
        "4-klog-log",
        "hostile_klog_log",
        _filter,
        ("k8s.io/klog.log", "log message: 67108864 bytes exceed the limit of 65536 bytes per call"),
    ),
    (
        "5-eventf",
        "hostile_eventf",
        _filter,
        (
            "k8s.io/scheduler.handle.eventrecorder.eventf",
            "events: 101 events exceed the limit of 100 events per call",
        ),
    ),
    ("6-table-grow", "hostile_table_grow", _filter, ("wasm: filter error:", "unreachable")),
    (
        "8-poll-oneoff",
        "hostile_poll_oneoff",
        _filter,
        (
            "wasi_snapshot_preview1.poll_oneoff",
            "subscriptions: 1000000 subscriptions exceed the limit of 1024 subscriptions per call",
        ),
    ),
    (
        "9-status-reason",
        "hostile_status_reason",
        _filter,
        (
            "k8s.io/scheduler.result.status_reason",
            "status reason: 134217728 bytes exceed the limit of 65536 bytes per call",
        ),
    ),
    (
        "10-random-get",
        "hostile_random_get",
        _filter,
        (
            "wasi_snapshot_preview1.random_get",
            "random bytes: 268435455 bytes exceed the limit of 1048576 bytes per call",
        ),
    ),
    (
        "11-normalize-nesting",
        "hostile_normalize_nesting",
        _normalize,
        ("wasm: normalizescore error: invalid normalized score list: nested too deeply",),
    ),
    (
        "12-ghost-nomination",
        "hostile_ghost_nomination",
        _post_filter,
        ("wasm: postfilter error: nominated node 'ghost-node' is not in the snapshot",),
    ),
]


@pytest.mark.parametrize(
    ("guest_name", "call", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_hostile_call_fails_fast_with_memory_bounded(
    plugins: Plugins,
    guest_name: str,
    call: Callable[[WasmPlugin], Status | None],
    fragments: tuple[str, ...],
) -> None:
    handle = FakeHandle([make_node("good-node")])
    plugin = plugins.load(guest_name, handle=handle)
    before = rss()
    start = time.monotonic()
    status = call(plugin)
    elapsed = time.monotonic() - start
    assert status is not None and status.code == Code.ERROR, status
    for fragment in fragments:
        assert fragment in status.message
    assert elapsed < TIME_BOUND
    assert rss() - before < RSS_BOUND
    assert handle.events == []  # a failed call records no event


def test_many_memories_cannot_instantiate(plugins: Plugins) -> None:
    """Item 7: the memory limit is per instance, over all its memories."""
    with pytest.raises(WasmError) as err:
        plugins.load("hostile_memories")
    assert "memory count too high" in str(err.value)


# --- through the scheduler: the other pods are scheduled ---------------------------------

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
SIM_CASES = [c for c in CASES if c[0] != "1-iovec-count"]


def _config(tmp_path: Path, guest_name: str) -> Path:
    path = tmp_path / "scheduler-config.yaml"
    path.write_text(
        HEADER
        + textwrap.dedent(
            f"""\
            profiles:
              - schedulerName: default-scheduler
              - schedulerName: hostile
                plugins: {{multiPoint: {{enabled: [{{name: Hostile}}]}}}}
                pluginConfig:
                  - name: Hostile
                    args: {{guestURL: '{guest(guest_name).as_uri()}'}}
            """
        )
    )
    return path


def _pod(name: str, scheduler: str) -> Pod:
    return Pod(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "i"}]},
        }
    )


@pytest.mark.parametrize("guest_name", sorted({c[1] for c in SIM_CASES}))
def test_scheduler_goes_on_scheduling_other_pods(tmp_path: Path, guest_name: str) -> None:
    cfg = load_config(_config(tmp_path, guest_name), default_registry())
    nodes = [
        Node(
            {
                "metadata": {"name": f"node-{i}"},
                "status": {"allocatable": {"cpu": "4", "pods": "110"}},
            }
        )
        for i in range(2)
    ]
    pods = [
        _pod("victim", "hostile"),
        _pod("bystander-1", "default-scheduler"),
        _pod("bystander-2", "default-scheduler"),
    ]
    before = rss()
    start = time.monotonic()
    sim = Simulation(ClusterObjects(nodes=nodes, pods=pods), cfg, default_registry())
    try:
        result = sim.run()
    finally:
        sim.close()
    assert time.monotonic() - start < 3 * TIME_BOUND
    assert rss() - before < RSS_BOUND
    outcomes = {o.pod.name: o for o in result.outcomes}
    assert outcomes["bystander-1"].result == "Scheduled"
    assert outcomes["bystander-2"].result == "Scheduled"
    victim = outcomes["victim"]
    if guest_name == "hostile_cluster_events":
        assert victim.result == "Scheduled"  # enqueue failed: the default events were used
    elif guest_name == "hostile_ghost_nomination":
        # a PostFilter error leaves the pod unschedulable (schedule_one.go: schedulingCycle
        # keeps the FitError and adds the PostFilter message), and nominated to nothing
        assert victim.result == "Unschedulable", victim
        assert "nominated node 'ghost-node' is not in the snapshot" in victim.message
        assert victim.nominated_node is None
    else:
        assert victim.result == "Error", victim
    assert not [e for e in result.events if e.reason == "Spam"]


def test_guest_with_many_memories_is_a_load_error(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "hostile_memories"), default_registry())
    with pytest.raises(ConfigError, match=r'plugin "Hostile": guestURL .*memory count too high'):
        Simulation(ClusterObjects(nodes=[], pods=[]), cfg, default_registry())
