"""What one node change costs the scheduler, on the production-shaped cluster (issue 25,
item 2: "Update the columns incrementally on node changes").

    python benchmarks/bench_node_churn.py                          # 500 and 5000 nodes
    python benchmarks/bench_node_churn.py --nodes 500 --rounds 10
    python benchmarks/bench_node_churn.py --src /tmp/before/src    # before (that tree) and after (this one)

The cluster is perf_production.py's (its running pods bound, nothing pending), loaded by a
Simulation of the default profile. Then, for ``--rounds`` rounds, one after the other:

- ``quiet``: no change;
- ``node add``: a new worker of the production shape (labels, images, a zone in turn);
- ``label update``: a worker's labels change (a label added);
- ``status update``: a worker's status changes and nothing else (the kubelet's heartbeat:
  a condition's lastHeartbeatTime), as the live mode sees every few seconds per node;
- ``node remove``: the node the round added is deleted (the pods the round's cycles bound
  to it deleted first, untimed, so that only the node's removal is timed).

Each change is written to the simulator's store untimed, then handed to the scheduler's
event handler (``event``: the cache and the queue; the store's own work, such as its scan
for the pods of a deleted node, is not the scheduler's), then the next scheduling cycle's snapshot update is timed alone (``snapshot``:
``Cache.snapshot``), then the next scheduling cycle of one pending pod (``cycle``: a web
pod of perf_production.py, with required node affinity, preferred anti-affinity on
hostname, a soft zone spread and an image, so that every per-node-set cache of the
default plugins is read; its snapshot update already done). The table gives each
column's median over the rounds, in milliseconds.

``--src DIR`` runs the same rounds first with the wasmsched of DIR ("before"), then with
this tree's ("after"), each in a child process of its own, and prints both.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench_support import ROOT, load_average
from perf_production import ZONES, _node, _pending_pod, production

from wasmsched import ClusterObjects, Simulation
from wasmsched.api.objects import Node
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry

EVENTS = ("quiet", "node add", "label update", "status update", "node remove")
PARTS = ("event", "snapshot", "cycle")
DEFAULT_NODES = [500, 5000]


def _with_label(node: Node, round_: int) -> Node:
    manifest = dict(node.manifest)
    meta = dict(manifest["metadata"])
    meta["labels"] = {**meta["labels"], "churn-round": str(round_)}
    manifest["metadata"] = meta
    return Node(manifest)


def _with_heartbeat(node: Node, beat: int) -> Node:
    manifest = dict(node.manifest)
    status = dict(manifest["status"])
    status["conditions"] = [
        {**c, "lastHeartbeatTime": f"2026-12-05T00:00:{beat % 60:02d}Z"}
        for c in status.get("conditions") or []
    ]
    manifest["status"] = status
    return Node(manifest)


def measure(nodes: int, rounds: int) -> dict[str, dict[str, float]]:
    """The median milliseconds of each event's parts (see the module docstring)."""
    w = production(nodes, pending=0)
    cluster = ClusterObjects(nodes=w.nodes, pods=w.running, others=w.others)
    sim = Simulation(cluster, default_config(), in_tree_registry(), seed=0)
    sim.run()
    sched, store = sim.scheduler, sim.store
    rng = random.Random(nodes)
    workers = [n.name for n in w.nodes[3:]]
    times: dict[str, dict[str, list[float]]] = {e: {p: [] for p in PARTS} for e in EVENTS}
    pending = iter(range(0, 10**9, 10))  # web pods (perf_production._pending_pod kinds 0-2)

    def cycle() -> float:
        store.add_pod(_pending_pod(next(pending)))
        t0 = time.perf_counter()
        store.deliver_after(sched.schedule_one)
        return time.perf_counter() - t0

    def timed(event: str, change: Callable[[], object]) -> None:
        t0 = time.perf_counter()
        change()
        t1 = time.perf_counter()
        sched.cache.snapshot()
        t2 = time.perf_counter()
        parts = times[event]
        parts["event"].append(t1 - t0)
        parts["snapshot"].append(t2 - t1)
        parts["cycle"].append(cycle())

    for _ in range(3):  # warm up: the first cycles fill the plugins' caches
        cycle()
    for r in range(rounds):
        timed("quiet", lambda: None)
        added = _node(10**6 + r, ["m5.2xlarge", "m5.4xlarge", "c5.4xlarge"][r % 3], rng)
        assert added.labels["topology.kubernetes.io/zone"] in ZONES
        store.nodes[added.name] = added
        timed("node add", partial(sched.on_node_add, added))
        for event, change in (("label update", _with_label), ("status update", _with_heartbeat)):
            old = store.nodes[rng.choice(workers)]
            new = store.nodes[old.name] = change(old, r)
            timed(event, partial(sched.on_node_update, old, new))
        for pod in [p for p in store.pods.values() if p.node_name == added.name]:
            store.remove_pod(pod.uid)
        del store.nodes[added.name]
        timed("node remove", partial(sched.on_node_delete, added))
    sim.close()
    return {
        e: {p: 1000 * statistics.median(v) for p, v in parts.items()} for e, parts in times.items()
    }


def _child(src: Path, nodes: int, rounds: int) -> dict[str, dict[str, float]]:
    """``measure`` in a child process importing the wasmsched of ``src``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(ROOT / "benchmarks")])}
    argv = [sys.executable, __file__, "--json", "--nodes", str(nodes), "--rounds", str(rounds)]
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    result: dict[str, dict[str, float]] = json.loads(out)
    return result


def _print(nodes: int, sides: dict[str, dict[str, dict[str, float]]]) -> None:
    names = list(sides)
    header = " | ".join(f"{s}: {' / '.join(PARTS)}" for s in names)
    print(f"\n{nodes} nodes, median ms | {header}")
    for event in EVENTS:
        cells = " | ".join(" / ".join(f"{sides[s][event][p]:7.2f}" for p in PARTS) for s in names)
        print(f"  {event:<14} | {cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", default=",".join(map(str, DEFAULT_NODES)))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--src", type=Path, help="the wasmsched sources of 'before'")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(n) for n in args.nodes.split(",")]
    if args.json:
        print(json.dumps(measure(sizes[0], args.rounds)))
        return
    import wasmsched

    print(f"# load average {load_average()}; after = {Path(wasmsched.__file__).parent.parent}")
    for nodes in sizes:
        sides: dict[str, Any] = {}
        if args.src is not None:
            sides["before"] = _child(args.src.resolve(), nodes, args.rounds)
            sides["after"] = _child(ROOT / "src", nodes, args.rounds)
        else:
            sides["ours"] = measure(nodes, args.rounds)
        _print(nodes, sides)


if __name__ == "__main__":
    main()
