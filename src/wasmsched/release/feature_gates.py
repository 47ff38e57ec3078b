"""Feature gates as kube-scheduler's ``--feature-gates`` sets them.

Each modelled release registers its own gates with their stage, default and lock
(feature_gates.json, which scripts/gen_feature_gates.py writes from each release's sources). ``FeatureGates.for_release`` applies
``--feature-gates`` text the way k8s.io/component-base/featuregate does
(feature_gate.go: SetWithLogger, unsafeSetFromMap): ``Name=bool`` pairs separated by commas,
``strconv.ParseBool`` values, an unknown gate refused, a locked gate refused a value other
than its default, a gate that the release has not made available yet (PreAlpha) refused,
``AllAlpha``/``AllBeta`` setting every alpha/beta gate not named itself, and, from 1.35, an
enabled gate whose dependencies are disabled refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from wasmsched.errors import InputError
from wasmsched.release.version import KubernetesVersion

__all__ = ["FeatureGateError", "FeatureGates", "gate_table", "go_bool", "parse_feature_gates"]

# A gate's spec at one release: (stage, default, locked to default).
GateSpec = tuple[str, bool, bool]

# component-base/featuregate: allAlphaGate, allBetaGate.
_SPECIAL = {"AllAlpha": "Alpha", "AllBeta": "Beta"}
# strconv.ParseBool.
_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


@dataclass(frozen=True)
class GateTable:
    """feature_gates.json: per gate, its spec at each release that registers it; per
    release, the gates each gate needs enabled and the gates kube-scheduler's code reads."""

    releases: tuple[str, ...]
    gates: Mapping[str, Mapping[str, GateSpec]]
    dependencies: Mapping[str, Mapping[str, tuple[str, ...]]]
    scheduler_reads: Mapping[str, frozenset[str]]

    def at(self, release: str) -> dict[str, GateSpec]:
        """The gates ``release`` registers, with their specs there."""
        return {name: per[release] for name, per in self.gates.items() if release in per}


@cache
def gate_table() -> GateTable:
    """The table shipped beside this module, read once."""
    raw: dict[str, Any] = json.loads(
        resources.files("wasmsched.release")
        .joinpath("feature_gates.json")
        .read_text(encoding="utf-8")
    )
    return GateTable(
        tuple(raw["releases"]),
        {
            name: {release: (spec[0], spec[1], spec[2]) for release, spec in per.items()}
            for name, per in raw["gates"].items()
        },
        {
            release: {name: tuple(needs) for name, needs in deps.items()}
            for release, deps in raw["dependencies"].items()
        },
        {release: frozenset(names) for release, names in raw["scheduler"].items()},
    )


class FeatureGateError(InputError):
    """A ``--feature-gates`` value that kube-scheduler of the release would refuse."""


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``Name=bool,...`` as featuregate.SetWithLogger reads it (later pairs win)."""
    out: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq:
            raise FeatureGateError(f"--feature-gates: missing bool value for {key}")
        value = raw.strip()
        if value not in _BOOLS:
            raise FeatureGateError(
                f"--feature-gates: invalid value of {key}={value}, err: strconv.ParseBool: "
                f'parsing "{value}": invalid syntax'
            )
        out[key] = _BOOLS[value]
    return out


@dataclass(frozen=True)
class FeatureGates(Mapping[str, bool]):
    """Whether each gate of a release is enabled: its default there, unless set."""

    release: KubernetesVersion
    enabled: Mapping[str, bool]

    @classmethod
    def for_release(
        cls, release: KubernetesVersion, settings: str | Mapping[str, bool] = ""
    ) -> FeatureGates:
        """The gates of ``release`` with ``settings`` (``--feature-gates`` text or a mapping)
        applied; FeatureGateError (one line, every problem) for what kube would refuse."""
        wanted = parse_feature_gates(settings) if isinstance(settings, str) else dict(settings)
        at = str(release)
        table = gate_table()
        specs = table.at(at)
        explicit: dict[str, bool] = {}
        errors: list[str] = []
        for name, value in wanted.items():
            spec = specs.get(name)
            if spec is None and name not in _SPECIAL:
                # featuregate stops at the first unknown gate.
                errors.append(f"unrecognized feature gate: {name}")
                break
            if spec is not None:
                stage, default, locked = spec
                if locked and value != default:
                    errors.append(
                        f"cannot set feature gate {name} to {go_bool(value)}, feature is locked "
                        f"to {go_bool(default)}"
                    )
                    continue
                if stage == "PreAlpha":
                    errors.append(
                        f"cannot set feature gate {name} to {go_bool(value)}, feature is PreAlpha "
                        f"at emulated version {at}, min compatibility version "
                        f"{release.major}.{release.minor - 1}"
                    )
                    continue
            explicit[name] = value
        if errors:
            raise FeatureGateError("--feature-gates: " + "; ".join(errors))
        enabled = {name: default for name, (_, default, _) in specs.items()}
        for special, stage in _SPECIAL.items():
            if special in explicit:
                for name, (gate_stage, _, _) in specs.items():
                    if gate_stage == stage and name not in explicit:
                        enabled[name] = explicit[special]
        enabled.update((k, v) for k, v in explicit.items() if k not in _SPECIAL)
        missing = [
            f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]"
            for name, needs in sorted(table.dependencies.get(at, {}).items())
            if enabled.get(name)
            for off in [[dep for dep in needs if not enabled.get(dep)]]
            if off
        ]
        if missing:
            raise FeatureGateError("--feature-gates: " + "; ".join(missing))
        return cls(release, enabled)

    def __getitem__(self, name: str) -> bool:
        return self.enabled[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.enabled)

    def __len__(self) -> int:
        return len(self.enabled)

    def changed(self) -> dict[str, bool]:
        """The gates whose state differs from the release's default (for reports)."""
        defaults = gate_table().at(str(self.release))
        return {name: value for name, value in self.enabled.items() if value != defaults[name][1]}


def go_bool(value: bool) -> str:
    """A value as featuregate writes it."""
    return "true" if value else "false"
