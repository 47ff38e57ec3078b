"""wasmsched.api.cel.cost: kube's estimated cost of DRA selectors, and the limit on it.

kube-apiserver v1.37.2 forbids a selector whose estimated worst-case cost
(``CompilationResult.MaxCost``) exceeds 1,000,000 (validation.go validateCELExpression).
tests/fixtures/cel_cost/expected.json holds kube's MaxCost of every expression in
expressions.txt, as reference/celcost computes it with k8s.io/dynamic-resource-allocation
v0.37.2 (scripts/gen_cel_cost_fixture.py writes it). When that harness is built
(scripts/build-reference --kubernetes-version 1.37), the fixture is checked to be current
and seeded random selectors are compared with it too.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from wasmsched.api.cel import COST_LIMIT, CELError, SelectorCache, device_input
from wasmsched.api.manifests import ManifestError, load_manifests
from wasmsched.release.version import KubernetesVersion

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from gen_cel_cost_fixture import (  # noqa: E402
    FIXTURE,
    HARNESS,
    kube_costs,
    read_expressions,
)

EXPECTED: list[dict[str, Any]] = json.loads((FIXTURE / "expected.json").read_text())
needs_harness = pytest.mark.skipif(
    not HARNESS.is_file(),
    reason=f"{HARNESS} not built: scripts/build-reference --kubernetes-version 1.37",
)
CACHE = SelectorCache()


@pytest.mark.parametrize("row", EXPECTED, ids=[row["expression"][:60] for row in EXPECTED])
def test_estimate_is_kubes(row: dict[str, Any]) -> None:
    assert CACHE.get(row["expression"]).max_cost == row["maxCost"]


@needs_harness
def test_fixture_is_current() -> None:
    expressions = read_expressions(FIXTURE / "expressions.txt")
    got = [
        {"expression": e, **a} for e, a in zip(expressions, kube_costs(expressions), strict=True)
    ]
    assert got == EXPECTED, "run scripts/gen_cel_cost_fixture.py"
    # The table reaches past kube's limit, and brackets it closely.
    costs = [row["maxCost"] for row in EXPECTED]
    assert sum(c > COST_LIMIT for c in costs) >= 3
    assert any(COST_LIMIT - 10 < c <= COST_LIMIT for c in costs)
    assert any(COST_LIMIT < c < COST_LIMIT + 10 for c in costs)


# --- seeded random selectors ------------------------------------------------------------

_DOMAINS = ('"gpu.example.com"', '"nic.example.com"')
_NAMES = ("model", "index", "zone", "fw")


class _Generator:
    """Random selectors over device fields, strings, lists, comprehensions, binds, optionals."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = 0

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def attribute(self) -> str:
        r = self.rng
        domain = r.choice(_DOMAINS)
        return f"device.attributes[{domain}].{r.choice(_NAMES)}"

    def string(self, scope: list[str], depth: int) -> str:
        r = self.rng
        choices = ["attr", "attr", "lit", "driver"] + ["var"] * bool(scope)
        if depth > 0:
            choices += ["lower", "concat", "substring", "replace", "opt"]
        kind = r.choice(choices)
        if kind == "attr":
            return self.attribute()
        if kind == "lit":
            return json.dumps("x" * r.randint(0, 12))
        if kind == "driver":
            return "device.driver"
        if kind == "var":
            return r.choice(scope)
        inner = self.string(scope, depth - 1)
        if kind == "lower":
            return f"{inner}.{r.choice(('lowerAscii', 'upperAscii', 'trim'))}()"
        if kind == "concat":
            return f"({inner} + {self.string(scope, depth - 1)})"
        if kind == "substring":
            return f"{inner}.substring({r.randint(0, 2)})"
        if kind == "replace":
            return f'{inner}.replace("a", {json.dumps("b" * r.randint(0, 3))})'
        domain = r.choice(_DOMAINS)
        return f'device.attributes[{domain}].?{r.choice(_NAMES)}.orValue("")'

    def iterable(self, scope: list[str], depth: int) -> tuple[str, bool]:
        """A range and whether its elements are strings."""
        r = self.rng
        kind = r.choice(("attrs", "domains", "caps", "strings", "ints", "range", "split"))
        domain = r.choice(_DOMAINS)
        if kind == "attrs":
            return f"device.attributes[{domain}]", True
        if kind == "domains":
            return "device.attributes", True
        if kind == "caps":
            return f"device.capacity[{domain}]", True
        if kind == "strings":
            items = ", ".join(json.dumps("s" * r.randint(1, 5)) for _ in range(r.randint(0, 4)))
            return f"[{items}]", True
        if kind == "ints":
            return f"[{', '.join(str(r.randint(0, 9)) for _ in range(r.randint(1, 5)))}]", False
        if kind == "range":
            return f"lists.range({r.randint(1, 50)})", False
        return f'{self.string(scope, depth - 1)}.split(",")', True

    def boolean(self, scope: list[str], depth: int) -> str:
        r = self.rng
        choices = ["eq", "startsWith", "contains", "matches", "size", "in", "has", "quantity"]
        if depth > 0:
            choices += ["and", "or", "not", "cond", "all", "exists", "exists_one", "bind"]
            choices += ["filter", "map", "pairs", "sortBy"]
        kind = r.choice(choices)
        s = self.string(scope, max(depth - 1, 0))
        if kind == "eq":
            return f"{s} {r.choice(('==', '!='))} {self.string(scope, max(depth - 1, 0))}"
        if kind in ("startsWith", "contains", "matches"):
            return f"{s}.{kind}({self.string(scope, max(depth - 1, 0))})"
        if kind == "size":
            return f"{s}.size() {r.choice(('<', '>=', '=='))} {r.randint(0, 70)}"
        if kind == "in":
            items = ", ".join(json.dumps("i" * r.randint(1, 4)) for _ in range(r.randint(0, 5)))
            return f"{s} in [{items}]"
        if kind == "has":
            return f"has({self.attribute()})"
        if kind == "quantity":
            capacity = f"device.capacity[{r.choice(_DOMAINS)}].{r.choice(('memory', 'cores'))}"
            call = r.choice(("isGreaterThan", "isLessThan"))
            return f'{capacity}.{call}(quantity("{r.randint(1, 64)}Gi"))'
        if kind in ("and", "or"):
            op = "&&" if kind == "and" else "||"
            return f"({self.boolean(scope, depth - 1)} {op} {self.boolean(scope, depth - 1)})"
        if kind == "not":
            return f"!({self.boolean(scope, depth - 1)})"
        if kind == "cond":
            parts = [self.boolean(scope, depth - 1) for _ in range(3)]
            return f"({parts[0]} ? {parts[1]} : {parts[2]})"
        if kind == "bind":
            name = self.var()
            return f"cel.bind({name}, {s}, {self.boolean([*scope, name], depth - 1)})"
        iterable, strings = self.iterable(scope, depth)
        name = self.var()
        inner = [*scope, name] if strings else scope
        body = self.boolean(inner, depth - 1)
        if not strings:
            body = f"({name} >= 0 && {body})"
        if kind == "pairs":
            # Two variables: over a map, the key and the value; over a list, index and item.
            value = self.var()
            body = self.boolean([*scope, name] if strings else scope, depth - 1)
            how = r.choice(("all", "exists", "transformList", "transformMap"))
            if how in ("all", "exists"):
                return f"{iterable}.{how}({name}, {value}, {body})"
            return f"{iterable}.{how}({name}, {value}, {body}).size() > 0"
        if kind == "sortBy":
            return f"{iterable}.map({name}, {body}).sortBy(s, s).size() > 0"
        if kind == "filter":
            return f"{iterable}.filter({name}, {body}).size() > 0"
        if kind == "map":
            return f"{iterable}.map({name}, {body}).exists(b, b)"
        return f"{iterable}.{kind}({name}, {body})"


def random_selectors(count: int, seed: int) -> list[str]:
    generator = _Generator(seed)
    return [generator.boolean([], generator.rng.randint(1, 4)) for _ in range(count)]


@needs_harness
def test_random_selectors_cost_as_in_kube() -> None:
    expressions = random_selectors(400, seed=24)
    compared, differ = 0, []
    for expression, kube in zip(expressions, kube_costs(expressions), strict=True):
        if "maxCost" not in kube:
            continue  # kube refuses it (an error of its own); the cost is not defined
        try:
            ours = CACHE.get(expression).max_cost
        except CELError:
            continue
        compared += 1
        if ours != kube["maxCost"]:
            differ.append((expression, ours, kube["maxCost"]))
    assert compared >= 300
    assert not differ, differ[:5]


# --- validation -------------------------------------------------------------------------

TOO_COMPLEX = "lists.range(166665).all(i, i > 0)"
UNDER_LIMIT = "lists.range(166664).all(i, i > 0)"


def _objects(expression: str) -> str:
    selector = {"cel": {"expression": expression}}
    cel = json.dumps(selector)
    exactly = {"deviceClassName": "gpu", "selectors": [selector]}
    request = json.dumps({"name": "gpu", "exactly": exactly})
    return f"""apiVersion: v1
kind: Node
metadata: {{name: n1}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu}}
spec: {{selectors: [{cel}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: default}}
spec: {{devices: {{requests: [{request}]}}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: t, namespace: default}}
spec: {{spec: {{devices: {{requests: [{request}]}}}}}}
"""


def test_validation_forbids_a_selector_over_the_cost_limit(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(_objects(TOO_COMPLEX))
    with pytest.raises(ManifestError) as info:
        load_manifests(path, kubernetes_version=KubernetesVersion(1, 37))
    forbidden = "Forbidden: too complex, exceeds cost limit"
    assert info.value.problems == [
        f"{path}: document 2: DeviceClass gpu: spec.selectors[0].cel.expression: {forbidden}",
        f"{path}: document 3: ResourceClaim default/c: spec.devices.requests[0].exactly"
        f".selectors[0].cel.expression: {forbidden}",
        f"{path}: document 4: ResourceClaimTemplate default/t: spec.spec.devices.requests[0]"
        f".exactly.selectors[0].cel.expression: {forbidden}",
    ]
    path.write_text(_objects(UNDER_LIMIT))  # 4 units under the limit
    load_manifests(path, kubernetes_version=KubernetesVersion(1, 37))


def test_each_selector_is_compiled_once() -> None:
    cache = SelectorCache()
    first = cache.get(UNDER_LIMIT)
    assert cache.get(UNDER_LIMIT) is first
    assert first.max_cost == 999_996


# --- cel-cpp's iteration budget ---------------------------------------------------------


def test_iteration_budget_is_named_as_ours() -> None:
    device = device_input("gpu.example.com", {}, {})
    # 9,999 iterations in all pass; the 10,000th stops the evaluation (cel-cpp's
    # comprehension_max_iterations), where kube evaluates both (cost far under its limit).
    assert CACHE.get("lists.range(99).all(i, lists.range(100).all(j, j >= 0))").matches(device)
    selector = CACHE.get("lists.range(100).all(i, lists.range(99).all(j, j >= 0))")
    assert selector.max_cost < COST_LIMIT
    with pytest.raises(CELError) as info:
        selector.matches(device)
    assert info.value.problem.startswith(
        "Iteration budget exceeded: wasmsched's CEL library (cel-expr-python) stops an "
        "evaluation after 10000 comprehension iterations in all; kube-scheduler has no such "
        "limit"
    )
