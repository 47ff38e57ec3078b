"""Drawing a reproducible batch of random cases from the hypothesis strategies."""

from __future__ import annotations

import contextlib

import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from reference_gen import cases
from reference_gen_dra import cases_dra
from reference_support import Case
from wasmsched.release.version import KubernetesVersion


class _Full(Exception):
    """Enough cases drawn: stops hypothesis early."""


# The strategies a run can draw from: every default plugin's inputs, or DRA clusters.
STRATEGIES = ("default", "dra")


def draw_cases(
    seed: int,
    count: int,
    prefix: str = "",
    version: KubernetesVersion | None = None,
    strategy: str = "default",
) -> list[Case]:
    """``count`` distinct cases drawn by hypothesis from ``seed`` (same seed, version and
    strategy, same cases); at ``version`` (default 1.33) with the inputs only that release
    has; ``strategy`` "dra" draws DynamicResources clusters (tests/reference_gen_dra.py,
    1.34 and later)."""
    drawn: list[Case] = []
    seen: set[str] = set()

    @settings(
        max_examples=count * 3,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @hypothesis_seed(seed)
    @given(cases_dra() if strategy == "dra" else cases(version))
    def collect(case: Case) -> None:
        text = yaml.safe_dump_all(case.docs) + yaml.safe_dump(case.config)
        if text not in seen:
            seen.add(text)
            drawn.append(case)
        if len(drawn) >= count:
            raise _Full

    with contextlib.suppress(_Full):
        collect()
    drawn = drawn[:count]
    for i, case in enumerate(drawn):
        case.name = f"{prefix}{i:04d}"
    return drawn
