"""Running wasmsched and the reference (kube-scheduler in reference/, v1.33.4 or v1.37.2)
on the same cases and comparing them pod by pod.

A case is a cluster (a list of manifests) and an optional KubeSchedulerConfiguration.
wasmsched runs in process (wasmsched.sim.simulation.Simulation, as `wasmsched simulate` does)
at the release of the reference it is compared with (``Reference.features``: objects read,
plugins defaulted and scheduled as that release); the reference binary of that version
(built by scripts/build-reference --kubernetes-version) runs a directory of cases in one
process. kube-scheduler 1.33 breaks equal top scores at random (pkg/scheduler/
schedule_one.go: selectHost); the 1.33 reference is given the node wasmsched chose for each
pod ("prefer") and follows it whenever that node is one of its equally best, so chance
cannot fail a comparison, and a node outside its best set still shows as a disagreement.
1.37 takes the top of a heap over the feasible nodes in the order they passed Filter
(framework/sorted_nodes.go), which is fixed at parallelism 1: the 1.37 reference runs at
parallelism 1 without a preference, so how wasmsched breaks ties is compared too. Preemption
starts its candidate search at a random offset (pkg/scheduler/framework/preemption:
DryRunPreemption via GetOffsetAndNumCandidates): disagreeing cases with a preemption are
re-run, and any outcome the reference produces is accepted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wasmsched.api.manifests import load_manifests
from wasmsched.config import default_config, load_config
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.document import pod_entry
from wasmsched.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent
# Re-runs of the reference for a disagreeing case with a preemption.
PREEMPTION_RERUNS = 6
# Reference cases run at once. A case mostly waits, not computes: about 0.45 s, two
# --quiet windows of it, for some 25 ms of CPU (160 cases: 17.7 s at 4, 8.0 s at 12).
JOBS = 12


@dataclass(frozen=True)
class Reference:
    """One build of the reference: the kube-scheduler release it runs and its binary."""

    version: KubernetesVersion
    binary: Path
    # Run at parallelism 1 with no preference: ties are broken by a fixed rule (1.35+),
    # and the comparison checks wasmsched's rule too.
    exact_ties: bool = False

    @property
    def features(self) -> SchedulerFeatures:
        """wasmsched's switches for the same release."""
        return SchedulerFeatures.of(self.version)

    def built(self) -> bool:
        return self.binary.is_file()

    @property
    def not_built(self) -> str:
        return (
            f"reference scheduler {self.version} not built: run scripts/build-reference "
            f"--kubernetes-version {self.version} (expects {self.binary})"
        )


_BUILDS = ROOT / ".cache" / "reference"
REFERENCES = {
    "1.33": Reference(KubernetesVersion(1, 33), _BUILDS / "wasmsched-reference"),
    "1.37": Reference(KubernetesVersion(1, 37), _BUILDS / "wasmsched-reference-1.37", True),
}
V133 = REFERENCES["1.33"]
V137 = REFERENCES["1.37"]
# The 1.33 build, which tests/test_reference.py and older callers drive.
BINARY = V133.binary
NOT_BUILT = V133.not_built


def reference_built() -> bool:
    return V133.built()


@dataclass
class Case:
    """One cluster and config; ``features`` name what it exercises (for the rates)."""

    name: str
    docs: list[dict[str, Any]]
    config: dict[str, Any] | None = None
    features: set[str] = field(default_factory=set)

    def write(self, folder: Path) -> None:
        # JSON documents in a YAML stream: no YAML 1.1 scalar (y, on, 010) read one way
        # by PyYAML and another by Go's sigs.k8s.io/yaml.
        folder.mkdir(parents=True, exist_ok=True)
        text = "".join(f"---\n{json.dumps(d)}\n" for d in self.docs)
        (folder / "cluster.yaml").write_text(text)
        if self.config is not None:
            (folder / "config.yaml").write_text(json.dumps(self.config, indent=1) + "\n")


@dataclass
class PodView:
    node: str | None
    result: str
    message: str


@dataclass
class Report:
    pods: dict[str, PodView]
    preemptions: list[tuple[str, str, str]]  # victim, node, preemptor
    error: str = ""


def _report(data: dict[str, Any]) -> Report:
    pods = {
        f"{p['namespace']}/{p['name']}": PodView(p["node"], p["result"], p["message"] or "")
        for p in data["pods"] or []
    }
    pre = sorted(
        (p["victim"], p["node"], p["preemptor"]) for p in data["summary"].get("preemptions") or []
    )
    return Report(pods, pre)


def run_wasmsched(folder: Path, ref: Reference = V133) -> tuple[Report, dict[str, Any]]:
    """wasmsched at ``ref``'s release on a written case; the report and its `simulate
    --output json` pods."""
    registry = default_registry()
    features = ref.features
    objects = load_manifests(folder / "cluster.yaml", kubernetes_version=ref.version)
    config_path = folder / "config.yaml"
    config = (
        load_config(config_path, registry, features)
        if config_path.exists()
        else default_config(features)
    )
    sim = Simulation(objects, config, registry, seed=0)
    try:
        result = sim.run()
    finally:
        sim.close()
    data = {
        "pods": [pod_entry(r) for r in result.pods if r.was_pending],
        "summary": {
            "preemptions": [
                {"victim": p.victim, "node": p.node, "preemptor": p.preemptor}
                for p in result.preemptions
            ]
        },
    }
    return _report(data), data


def run_reference(
    cases_dir: Path, jobs: int = JOBS, timeout: float = 600.0, ref: Reference = V133
) -> None:
    """Runs the reference on every case folder of ``cases_dir`` (reference.json each)."""
    for stale in list(cases_dir.glob("*/reference.json")) + list(cases_dir.glob("*/reference.err")):
        stale.unlink()
    ties = ["--parallelism", "1"] if ref.exact_ties else []
    subprocess.run(
        [str(ref.binary), "--cases", str(cases_dir), "--jobs", str(jobs), *ties],
        check=True,
        timeout=timeout,
        capture_output=True,
    )


def read_reference(folder: Path) -> Report:
    err = folder / "reference.err"
    if err.exists():
        return Report({}, [], error=err.read_text().strip())
    path = folder / "reference.json"
    if not path.exists():
        return Report({}, [], error="no reference.json written")
    return _report(json.loads(path.read_text()))


def compare(ours: Report, ref: Report) -> list[str]:
    """One line per disagreement: node and result per pod, message where both give one."""
    if ref.error:
        return [f"reference failed: {ref.error}"]
    diffs: list[str] = []
    for key in sorted(set(ours.pods) | set(ref.pods)):
        a, b = ours.pods.get(key), ref.pods.get(key)
        if a is None or b is None:
            diffs.append(f"{key}: only in {'reference' if a is None else 'wasmsched'}")
            continue
        if (a.result, a.node) != (b.result, b.node):
            diffs.append(
                f"{key}: wasmsched {a.result} {a.node or ''} / reference {b.result} {b.node or ''}"
                f" | wasmsched: {a.message} | reference: {b.message}"
            )
        elif a.message and b.message and a.message != b.message:
            diffs.append(f"{key}{MESSAGE_DIFF}{a.message!r} / reference {b.message!r}")
    return diffs


MESSAGE_DIFF = ": message wasmsched "


@dataclass
class Outcome:
    case: Case
    diffs: list[str]
    ours: Report
    ref: Report

    @property
    def placement_diffs(self) -> list[str]:
        """The disagreements on node or result (not only on the message)."""
        return [d for d in self.diffs if MESSAGE_DIFF not in d]


def _write_prefer(folder: Path, data: dict[str, Any], ref: Reference) -> None:
    """prefer.json, the nodes wasmsched chose, for a reference that breaks ties at random."""
    path = folder / "prefer.json"
    if ref.exact_ties:
        path.unlink(missing_ok=True)
        return
    prefer = {f"{p['namespace']}/{p['name']}": p["node"] for p in data["pods"] if p["node"]}
    path.write_text(json.dumps(prefer))


def run_cases(
    cases: Sequence[Case], workdir: Path, jobs: int = JOBS, ref: Reference = V133
) -> list[Outcome]:
    """Both schedulers, at ``ref``'s release, on every case; preemption cases that
    disagree are re-run, and DRA cases that disagree on a message only: the reference's
    stand-in for the resourceclaim controller (reference/dra_137.go) releases claims on
    goroutines of its own, so which cluster a pod's last attempt saw varies between
    runs of the reference (a case agrees when one run of the reference agrees)."""
    ours: dict[str, Report] = {}
    for case in cases:
        folder = workdir / case.name
        case.write(folder)
        report, data = run_wasmsched(folder, ref)
        ours[case.name] = report
        (folder / "wasmsched.json").write_text(json.dumps(data, indent=1))
        _write_prefer(folder, data, ref)
    run_reference(workdir, jobs, ref=ref)
    outcomes = []
    for case in cases:
        theirs = read_reference(workdir / case.name)
        if ours[case.name].preemptions or theirs.preemptions:
            case.features.add("preemption")
        outcomes.append(Outcome(case, compare(ours[case.name], theirs), ours[case.name], theirs))
    retry = [
        o
        for o in outcomes
        if o.diffs
        and (
            o.ours.preemptions
            or o.ref.preemptions
            or ("dra" in o.case.features and not o.placement_diffs)
        )
    ]
    for _ in range(PREEMPTION_RERUNS):
        if not retry:
            break
        with tempfile.TemporaryDirectory(dir=workdir) as tmp:
            for o in retry:
                shutil.copytree(workdir / o.case.name, Path(tmp) / o.case.name)
            run_reference(Path(tmp), jobs, ref=ref)
            still = []
            for o in retry:
                again = read_reference(Path(tmp) / o.case.name)
                diffs = compare(o.ours, again)
                if diffs:
                    still.append(o)
                else:
                    o.diffs, o.ref = [], again
                    shutil.copy(
                        Path(tmp) / o.case.name / "reference.json",
                        workdir / o.case.name / "reference.json",
                    )
            retry = still
    return outcomes


def shrink(
    case: Case,
    workdir: Path,
    still_fails: Callable[[list[str]], bool] | None = None,
    ref: Reference = V133,
) -> Case:
    """Greedily drops manifests (then the config) while the case still disagrees; each
    round runs every one-smaller variant in one reference process."""
    keep = still_fails or (lambda diffs: bool(diffs))
    current = case
    round_no = 0
    while True:
        round_no += 1
        variants: list[Case] = []
        for i, doc in enumerate(current.docs):
            if (
                doc.get("kind") == "Node"
                and sum(d.get("kind") == "Node" for d in current.docs) == 1
            ):
                continue
            docs = current.docs[:i] + current.docs[i + 1 :]
            variants.append(Case(f"shrink{round_no}-{i}", docs, current.config, current.features))
        if current.config is not None:
            variants.append(
                Case(f"shrink{round_no}-noconfig", current.docs, None, current.features)
            )
        if not variants:
            return current
        folder = workdir / f"round{round_no}"
        outcomes = run_cases(variants, folder, ref=ref)
        smaller = next((o.case for o in outcomes if keep(o.diffs)), None)
        if smaller is None:
            return current
        current = Case(case.name, smaller.docs, smaller.config, case.features)


def write_reproducer(case: Case, diffs: Iterable[str], folder: Path, ref: Reference = V133) -> Path:
    """A reproducer: the case files plus both outputs and the disagreement."""
    folder.mkdir(parents=True, exist_ok=True)
    case.write(folder)
    _, data = run_wasmsched(folder, ref)
    (folder / "wasmsched.json").write_text(json.dumps(data, indent=1))
    _write_prefer(folder, data, ref)
    config = " --config config.yaml" if case.config is not None else ""
    ties = " --parallelism 1" if ref.exact_ties else " --prefer prefer.json"
    (folder / "DIFF.txt").write_text(
        "\n".join(diffs)
        + f"\n\nreproduce: {ref.binary.relative_to(ROOT)} --cluster cluster.yaml{config}"
        + f"{ties}\n"
        + f"and: wasmsched simulate --output json --cluster cluster.yaml{config}"
        + f" --kubernetes-version {ref.version}\n"
    )
    return folder
