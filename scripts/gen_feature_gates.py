#!/usr/bin/env python3
"""Write src/wasmsched/release/feature_gates.json: every feature gate that kube-scheduler
of each modelled release accepts in ``--feature-gates``, with its default, stage and lock
at that release, the gates' dependencies, and which gates kube-scheduler's own code reads.

The facts are read from each release's own Go sources in the Go module cache (``go mod
download`` fetches what is missing from the module proxy): the gates kube-scheduler
registers are k8s.io/kubernetes pkg/features/kube_features.go (its versioned map, which
also lists the apiserver's gates, and its dependency map), client-go's
features/known_features.go, and component-base's logs/api/v1, metrics/features and
zpages/features (cmd/kube-scheduler/app/server.go and kube_features.go's init). A gate's
spec at a release is its last versioned spec at or before that release, as
component-base/featuregate: featureSpecAtEmulationAndMinCompatVersion picks it; a gate with
none yet is "PreAlpha". The files are parsed with regular expressions, nothing is built.

Usage: ``scripts/gen_feature_gates.py [--check]`` (``--check``: exit 1 when the file
differs from what would be written). Needs Go and the module proxy (or a filled cache).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "wasmsched" / "release" / "feature_gates.json"

# Kubernetes minor -> the k8s.io/kubernetes release read (its staging modules are v0.MINOR.PATCH).
RELEASES = {
    "1.33": "1.33.4",
    "1.34": "1.34.4",
    "1.35": "1.35.4",
    "1.36": "1.36.3",
    "1.37": "1.37.2",
}
# (module, file) of each registered gate list; "kubernetes" is k8s.io/kubernetes itself.
SOURCES = (
    ("kubernetes", "pkg/features/kube_features.go"),
    ("client-go", "features/known_features.go"),
    ("component-base", "logs/api/v1/kube_features.go"),
    ("component-base", "metrics/features/kube_features.go"),
    ("component-base", "zpages/features/kube_features.go"),
)

# A gate map literal (`var x = map[...]...{` or `return map[...]...{`), up to the closing
# brace at its own indentation. Its entries are one level deeper: `Name: {` or
# `pkg.Name: {` and the specs, up to the closing `},` at the entry's indentation. Versioned
# specs are lists of `{Version: ...}`; older files have one `{Default: ..., PreRelease: ...}`.
_MAP = re.compile(
    r"^(\t*)(?:var \w+ = |return )map\[(?:featuregate\.)?Feature\]"
    r"(?:featuregate\.)?(VersionedSpecs|FeatureSpec)\{\n(.*?)^\1\}",
    re.M | re.S,
)
_SPEC = re.compile(r"\{([^{}]*)\}")
_FIELD = re.compile(r"(\w+): *([^,]+?)\s*(?:,|$)")


def _entries(indent: str, body: str, versioned: bool) -> list[tuple[str, str]]:
    """(gate, its specs' text) of each entry of a map body whose entries are at ``indent``."""
    if versioned:
        block = rf"^{indent}(?:\w+\.)?(\w+): *\{{\n(.*?)^{indent}\}},"
        return re.findall(block, body, re.M | re.S)
    return re.findall(rf"^{indent}(?:\w+\.)?(\w+): *(\{{.*?\}}),?$", body, re.M)


_DEPENDENCIES = re.compile(
    r"^var defaultKubernetesFeatureGateDependencies = map\[featuregate\.Feature\]"
    r"\[\]featuregate\.Feature\{\n(.*?)^\}",
    re.M | re.S,
)
_DEPENDENCY = re.compile(r"^\t(?:\w+\.)?(\w+): *\{([^}]*)\},", re.M)


def _minor(text: str) -> tuple[int, int]:
    major, minor = re.findall(r"\d+", text)[:2]
    return int(major), int(minor)


def _spec(body: str) -> dict[str, str]:
    fields = dict(_FIELD.findall(body))
    return {k: v.strip() for k, v in fields.items()}


def _effective(specs: list[dict[str, str]], release: str) -> tuple[str, bool, bool]:
    """(stage, default, locked) of a gate at ``release``."""
    at = _minor(release)
    min_compat = (at[0], at[1] - 1)
    for spec in reversed(specs):
        if "Version" in spec and _minor(spec["Version"]) > at:
            continue
        if (
            "MinCompatibilityVersion" in spec
            and _minor(spec["MinCompatibilityVersion"]) > min_compat
        ):
            continue
        stage = spec["PreRelease"].rpartition(".")[2]
        return stage, spec.get("Default") == "true", spec.get("LockToDefault") == "true"
    return "PreAlpha", False, False


def module_dir(module: str, tag: str) -> Path:
    path = f"k8s.io/{module}@v{tag}"
    out = subprocess.run(
        ["go", "mod", "download", "-json", path], check=True, capture_output=True, text=True
    ).stdout
    return Path(json.loads(out)["Dir"])


Gates = dict[str, tuple[str, bool, bool]]
Dependencies = dict[str, tuple[str, ...]]


def release_gates(release: str, tag: str) -> tuple[Gates, Dependencies]:
    staging = "0." + tag.partition(".")[2]
    gates: Gates = {}
    dependencies: Dependencies = {}
    for module, file in SOURCES:
        text = (module_dir(module, tag if module == "kubernetes" else staging) / file).read_text()
        for indent, kind, body in _MAP.findall(text):
            for name, specs in _entries(indent + "\t", body, kind == "VersionedSpecs"):
                gates[name] = _effective([_spec(s) for s in _SPEC.findall(specs)], release)
        for body in _DEPENDENCIES.findall(text):
            for name, deps in _DEPENDENCY.findall(body):
                # `Gate`, `pkg.Gate` or `featuregate.Feature(pkg.Gate)`: the last name.
                dependencies[name] = tuple(
                    re.findall(r"(\w+)\)*$", d.strip())[0] for d in deps.split(",") if d.strip()
                )
    return gates, dependencies


# What a release's kube-scheduler reads: `features.Name` (or `genericfeatures.Name`...) in its non-test sources (the
# plugins get theirs through feature.Features, built in pkg/scheduler too).
_READS = re.compile(r"\b\w*features\.([A-Z]\w*)")
SCHEDULER_SOURCES = ("pkg/scheduler", "cmd/kube-scheduler")


def scheduler_gates(tag: str, gates: Gates) -> list[str]:
    """The registered gates that kube-scheduler ``tag``'s own code reads."""
    root = module_dir("kubernetes", tag)
    read: set[str] = set()
    for folder in SCHEDULER_SOURCES:
        for path in (root / folder).rglob("*.go"):
            if not path.name.endswith("_test.go"):
                read.update(_READS.findall(path.read_text()))
    return sorted(read & set(gates))


def render(per_release: dict[str, tuple[Gates, Dependencies]], reads: dict[str, list[str]]) -> str:
    """The JSON document: the releases read, each gate's [stage, default, locked] per
    release that registers it, each release's dependencies, and the gates each release's
    kube-scheduler reads."""
    names = sorted(set().union(*(gates for gates, _ in per_release.values())))
    document = {
        "source": "scripts/gen_feature_gates.py from k8s.io/kubernetes "
        + ", ".join(f"v{tag}" for tag in RELEASES.values())
        + " and their client-go and component-base; do not edit",
        "releases": list(RELEASES),
        "gates": {
            name: {
                release: list(gates[name])
                for release, (gates, _) in per_release.items()
                if name in gates
            }
            for name in names
        },
        "dependencies": {
            release: {name: list(deps[name]) for name in sorted(deps)}
            for release, (_, deps) in per_release.items()
        },
        "scheduler": reads,
    }
    # One line per gate and per release's dependencies, so that a regeneration diffs well.
    return (
        "{\n"
        + ",\n".join(
            f" {json.dumps(key)}: "
            + (
                "{\n"
                + ",\n".join(
                    f"  {json.dumps(k)}: {json.dumps(v, separators=(', ', ': '))}"
                    for k, v in value.items()
                )
                + "\n }"
                if isinstance(value, dict)
                else json.dumps(value)
            )
            for key, value in document.items()
        )
        + "\n}\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args()
    per_release = {release: release_gates(release, tag) for release, tag in RELEASES.items()}
    reads = {
        release: scheduler_gates(tag, per_release[release][0]) for release, tag in RELEASES.items()
    }
    text = render(per_release, reads)
    if args.check:
        return 0 if OUT.exists() and OUT.read_text() == text else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
