"""Scheduling throughput, modelled on kube-scheduler's scheduler_perf SchedulingBasic.

N nodes (4 CPU, 32Gi, 110 pods) and M pending pods of 100m CPU / 500Mi, default plugins.
Reports pods per second of scheduling (wall time of the simulation loop only, not loading).

    python benchmarks/bench_scheduling.py            # 500 nodes/1000 pods and 5000/1000
    python benchmarks/bench_scheduling.py --quick    # smaller, for a smoke run
    python benchmarks/bench_scheduling.py --profile  # cProfile the 500-node case
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from typing import Any

from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import default_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.simulator import Simulation


def make_node(i: int) -> Node:
    zone = f"zone-{i % 3}"
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"node-{i}",
                "labels": {
                    "kubernetes.io/hostname": f"node-{i}",
                    "topology.kubernetes.io/zone": zone,
                },
            },
            "status": {
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
            },
        }
    )


def make_pod(i: int, extra_spec: dict[str, Any] | None = None, labels: dict[str, str] | None = None) -> Pod:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "pause",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {
                    "requests": {"cpu": "100m", "memory": "500Mi"},
                    "limits": {"cpu": "100m", "memory": "500Mi"},
                },
            }
        ]
    }
    spec.update(extra_spec or {})
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "namespace": "sched-0", "labels": labels or {}},
            "spec": spec,
        }
    )


def run_case(nodes: int, pods: int, seed: int = 0) -> dict[str, float]:
    cluster = ClusterObjects(
        nodes=[make_node(i) for i in range(nodes)],
        pods=[make_pod(i) for i in range(pods)],
        others=[],
    )
    sim = Simulation(cluster, default_config(), in_tree_registry(), seed=seed)
    started = time.perf_counter()
    result = sim.run()
    wall = time.perf_counter() - started
    sim.close()
    scheduled = result.counts()["Scheduled"]
    if scheduled != pods:
        raise SystemExit(f"expected {pods} scheduled, got {result.counts()}")
    return {"nodes": nodes, "pods": pods, "seconds": wall, "pods_per_second": pods / wall}


CASES = [(500, 1000, 300.0), (5000, 1000, 100.0)]
QUICK = [(100, 200, 300.0), (1000, 200, 100.0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.profile:
        cProfile.runctx("run_case(500, 1000)", globals(), locals(), "/tmp/bench_scheduling.prof")
        pstats.Stats("/tmp/bench_scheduling.prof").sort_stats("cumulative").print_stats(30)
        return
    print(f"{'nodes':>6} {'pods':>6} {'seconds':>8} {'pods/s':>8} {'target':>7}")
    for nodes, pods, target in QUICK if args.quick else CASES:
        r = run_case(nodes, pods)
        ok = "ok" if r["pods_per_second"] >= target else "BELOW"
        print(
            f"{nodes:>6} {pods:>6} {r['seconds']:>8.2f} {r['pods_per_second']:>8.1f} "
            f"{target:>6.0f} {ok}"
        )


if __name__ == "__main__":
    main()
