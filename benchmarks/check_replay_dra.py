"""The openb-shaped trace under ``--gpu-model dra`` at full size, with every claim write
checked: no device is over-allocated at any instant (issue 24, "Done when").

Writes the seeded CSVs of ``bench_replay.py`` (1,523 nodes, 8,152 pods at ``--scale 1``),
replays them in this process as ``wasmsched replay --gpu-model dra`` does (default profile
of v1.37), records every ResourceClaim write and deletion of the simulation's store with
its simulated time (``tests/dra_checker.py: ClaimLog``), and walks that log: a device
without consumable capacity held by two claims at once, or a shareable one whose shares sum
past its capacity, is printed with the instant and the claims. Exit status 1 when any is
found.

    python benchmarks/check_replay_dra.py                          # sparse, full size
    python benchmarks/check_replay_dra.py --variant dense --scale 0.1 --gpuspec 0.33
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_replay  # noqa: E402

from dra_checker import device_capacities, over_allocations, peak_sharing  # noqa: E402
from test_replay_dra import replay  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=("sparse", "dense"), default="sparse")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--gpuspec", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        nodes, pods = bench_replay.write_trace(
            Path(tmp),
            args.variant,
            args.seed,
            bench_replay.DAY,
            48 * 3600.0,
            args.gpuspec,
            args.scale,
        )
        # The replay tests' own setup: the default profile of v1.37, the claim log attached.
        run, log, objects = replay(nodes, pods)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = run.run().to_json()["summary"]
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    problems = over_allocations(log.writes, device_capacities(slices))
    devices = sum(len(s["spec"].get("devices") or ()) for s in slices)
    print(
        f"{args.variant} x{args.scale} (seed {args.seed}, gpuspec {args.gpuspec}): "
        f"{len(slices)} slices, {devices} devices; replay wall {wall:.1f} s, CPU {cpu:.1f} s, "
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
        f"{summary['schedulingCycles']} cycles, results {summary['results']}"
    )
    print(
        f"claim writes {len(log.writes)} "
        f"({sum(1 for w in log.writes if w.results)} with an allocation), "
        f"most claims on one device at once {peak_sharing(log.writes)}, "
        f"over-allocations {len(problems)}"
    )
    for line in problems[:20]:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
