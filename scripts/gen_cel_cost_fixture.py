#!/usr/bin/env python3
"""Writes kube's estimated cost of each expression in tests/fixtures/cel_cost/expressions.txt.

Runs the celcost harness (reference/celcost, built by ``scripts/build-reference
--kubernetes-version 1.37`` as .cache/reference/wasmsched-celcost) and writes
tests/fixtures/cel_cost/expected.json: ``[{"expression": ..., "maxCost": N}]``, or
``"error"`` for an expression kube does not compile. tests/test_cel_cost.py compares
wasmsched's estimate with it, and checks it is current whenever the harness is built.

    scripts/gen_cel_cost_fixture.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "cel_cost"
HARNESS = ROOT / ".cache" / "reference" / "wasmsched-celcost"


def read_expressions(path: Path) -> list[str]:
    """The expressions of ``path``: one a line, blank and ``#`` lines skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def kube_costs(expressions: list[str], harness: Path = HARNESS) -> list[dict[str, object]]:
    """The harness's answer for each expression: ``{"maxCost": N}`` or ``{"error": ...}``."""
    stdin = "".join(json.dumps(e) + "\n" for e in expressions)
    done = subprocess.run(
        [str(harness)], input=stdin, capture_output=True, text=True, check=True, timeout=300
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if len(answers) != len(expressions):
        raise SystemExit(f"{harness}: {len(answers)} answers for {len(expressions)} expressions")
    return answers


def main() -> int:
    if not HARNESS.is_file():
        print(f"{HARNESS} is not built: scripts/build-reference --kubernetes-version 1.37")
        return 2
    expressions = read_expressions(FIXTURE / "expressions.txt")
    rows = [
        {"expression": e, **answer}
        for e, answer in zip(expressions, kube_costs(expressions), strict=True)
    ]
    text = json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
    (FIXTURE / "expected.json").write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} expressions to {FIXTURE / 'expected.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
