"""The nodenumber row of the wasm table as instruction counts (valgrind's callgrind), which,
unlike CPU time, do not move with the other work of a shared machine.

One warm SchedulingBasic run (500 nodes, 300 pods) of the default profile and of the
default profile plus the Rust SDK's nodenumber guest (examples/rust/build): each counted as
the instructions of a process doing two runs minus those of a process doing one (so setup
and the first run's warm-up cancel out). Prints both counts and their ratio, the
instruction-count form of "nodenumber added: pods/s ratio to the default profile" (it
tracked the CPU-time ratio within a few percent here). About 4 minutes on 2 cores.

Usage: .venv/bin/python benchmarks/callgrind_ratio.py [--guest WASM] [--pods N]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from wasm_boundary import _CONFIG  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parent.parent
GUEST = ROOT / "examples" / "rust" / "build" / "nodenumber.wasm"

_RUN = """
import sys, tempfile
sys.path.insert(0, {bench!r})
from pathlib import Path
from bench_scheduling import make_node, make_pod
from wasmsched.api.manifests import ClusterObjects
from wasmsched.config import default_config, load_config
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.simulation import Simulation
guest, pods, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cluster = ClusterObjects(
    nodes=[make_node(i) for i in range(500)], pods=[make_pod(i) for i in range(pods)], others=[]
)
registry = default_registry()
if guest == "-":
    config = default_config()
else:
    path = Path(tempfile.mkdtemp()) / "config.yaml"
    path.write_text({config!r}.format(url=Path(guest).resolve().as_uri()))
    config = load_config(path, registry)
for _ in range(runs):
    sim = Simulation(cluster, config, registry, seed=0)
    sim.run()
    sim.close()
"""


def _instructions(script: Path, guest: str, pods: int, runs: int) -> int:
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            str(script),
            guest,
            str(pods),
            str(runs),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed:\n{proc.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guest", type=Path, default=GUEST)
    parser.add_argument("--pods", type=int, default=300)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt install valgrind)")
    if not args.guest.is_file():
        raise SystemExit(f"no {args.guest}: scripts/build_rust_guests.py --out examples/rust/build")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "run.py"
        script.write_text(_RUN.format(bench=str(ROOT / "benchmarks"), config=_CONFIG))
        # One plain run first, so that the guest's compiled code is in the module cache:
        # a counted run that compiled it would count Cranelift's work as the guest's.
        subprocess.run([sys.executable, str(script), str(args.guest), "1", "1"], check=True)
        jobs = [(g, r) for g in ("-", str(args.guest)) for r in (1, 2)]
        with ThreadPoolExecutor(2) as pool:
            counts = list(pool.map(lambda j: _instructions(script, j[0], args.pods, j[1]), jobs))
    default = counts[1] - counts[0]
    guest = counts[3] - counts[2]
    print(f"default profile, one warm run of {args.pods} pods: {default / 1e6:.0f} M instructions")
    print(f"default + {args.guest.name}: {guest / 1e6:.0f} M instructions")
    print(f"ratio (the pods/s ratio's instruction form): {default / guest:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
