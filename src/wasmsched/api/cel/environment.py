"""DRA's CEL environment at Kubernetes v1.37.2, built once, on cel-expr-python.

kube-scheduler compiles selectors in the *stored expressions* environment of
``dynamic-resource-allocation/cel`` ``newCompiler`` (``Cache.GetOrCompile`` leaves
``Options.EnvType`` unset): ``environment.MustBaseEnvSet`` (``apiserver/pkg/cel/environment/
base.go``) extended with ``cel.bind`` and the newest device type. Of the base environment this
enables: the standard library with RE2 ``matches``; optional types; the extension libraries
strings (version 2), sets, lists, two-variable comprehensions and bindings; and kube's
quantity, semver (version 1), lists (version 1, with ``includes``) and regex libraries
(:mod:`wasmsched.api.cel.library`).

Why cel-expr-python (Google's cel-cpp): benchmarks/bench_cel.py. It type-checks, as cel-go
does, and carries the extensions above natively; the other candidates lack ``cel.bind``,
optionals and the strings extension.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from wasmsched.api.cel.checked import decode_checked
from wasmsched.api.cel.cost import estimate_cost
from wasmsched.api.cel.errors import CELError
from wasmsched.api.cel.library import function_declarations
from wasmsched.api.cel.source import read_source

__all__ = [
    "COST_LIMIT",
    "ENVIRONMENT_VERSION",
    "MAX_EXPRESSION_LENGTH",
    "Compiled",
    "compile_expression",
    "go_type_name",
    "new_activation",
]

# The Kubernetes release whose DRA CEL environment this is; part of every cache key.
ENVIRONMENT_VERSION = "resource.k8s.io/v1@1.37.2"
# resourceapi.CELSelectorExpressionMaxLength (bytes) and CELSelectorExpressionMaxCost: the
# limit on the estimated cost at validation (:mod:`.cost`), and on the actual cost at run time.
MAX_EXPRESSION_LENGTH = 10 * 1024
COST_LIMIT = 1_000_000

_CONFIG = """
name: kubernetes.DRA
extensions:
  - name: bindings
  - name: optional
  - name: strings
    version: 2
  - name: sets
  - name: lists
  - name: two-var-comprehensions
"""


@lru_cache(maxsize=1)
def _environment() -> tuple[Any, Any]:
    """(the cel module, the Env): built on first use, then shared by every compile."""
    from cel_expr_python import cel  # type: ignore[import-untyped,import-not-found,unused-ignore]

    own, shared = function_declarations(cel)
    env = cel.NewEnv(
        config=cel.NewEnvConfigFromYaml(_CONFIG),
        variables={"device": cel.Type.DYN},
        functions=own,
        extensions=[cel.CelExtension("kubernetes.lists", shared)],
    )
    return cel, env


def new_activation(variables: Any) -> Any:
    """``variables`` converted once into CEL values, for any number of evaluations."""
    _, env = _environment()
    return env.Activation(data=variables)


class Compiled:
    """A checked program, what its text says about ``device``, and kube's cost estimate.

    :attr:`max_cost` is ``CompilationResult.MaxCost``: the worst-case cost kube-apiserver
    compares with :data:`COST_LIMIT` when it validates the object holding the selector.
    Only validation reads it, so it is estimated on first use, once.
    """

    __slots__ = ("_max_cost", "attribute_domains", "capacity_domains", "program")

    def __init__(
        self,
        program: Any,
        attribute_domains: frozenset[str] | None,
        capacity_domains: frozenset[str] | None,
    ) -> None:
        self.program = program
        self.attribute_domains = attribute_domains
        self.capacity_domains = capacity_domains
        self._max_cost: int | None = None

    @property
    def max_cost(self) -> int:
        """kube's estimated worst-case cost of the expression (:mod:`.cost`)."""
        if self._max_cost is None:
            self._max_cost = estimate_cost(decode_checked(self.program.serialize())).max
        return self._max_cost


_SCALARS = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "NULL": "null_type",
    "DYN": "dyn",
    "DURATION": "google.protobuf.Duration",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "MAP<STRING, DYN>": "kubernetes.Quantity",
    "MAP<INT, STRING>": "kubernetes.Semver",
}


def _split_params(text: str) -> list[str]:
    depth, start, parts = 0, 0, []
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def go_type_name(cpp_name: str) -> str:
    """cel-go's spelling of a cel-cpp type name: ``LIST<INT>`` is ``list(int)``."""
    if cpp_name in _SCALARS:
        return _SCALARS[cpp_name]
    head, _, rest = cpp_name.partition("<")
    if rest.endswith(">"):
        params = ", ".join(go_type_name(p) for p in _split_params(rest[:-1]))
        return f"{head.lower()}({params})"
    return cpp_name.lower()


def _line_column(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


# The encodings' static types (library.py), as kube names them in compile errors.
_ENCODED_TYPES = (
    ("map(string, dyn)", "kubernetes.Quantity"),
    ("map(int, string)", "kubernetes.Semver"),
)


_ISSUE_AT = re.compile(r"ERROR: <input>:([0-9]+):([0-9]+):")


def _issue_position(issue: str) -> tuple[int, int]:
    found = _ISSUE_AT.match(issue)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def _compile_problem(message: str, extra: list[str]) -> str:
    """cel-cpp's status text as kube's one-line detail: ``compilation failed: ERROR: ...``.

    ``extra`` are check issues found in the text (an undefined device field); cel-go reports
    them with the checker's, in source order, but not after a syntax error.
    """
    issues = []
    for line in message.splitlines():
        if "ERROR: " not in line or "<input>:-1:-1:" in line:
            continue  # cel-cpp's positionless follow-up of a syntax error ("<<nil>> parsetree")
        issue = line[line.index("ERROR: ") :].strip()
        for encoded, name in _ENCODED_TYPES:
            issue = issue.replace(encoded, name)
        issues.append(issue)
    if not any("Syntax error" in issue for issue in issues):
        issues = sorted(issues + extra, key=_issue_position)
    return "compilation failed: " + ("; ".join(issues) if issues else message.strip())


def compile_expression(expression: str) -> Compiled:
    """Check and plan ``expression`` as kube's ``CompileCELExpression`` does; CELError if not."""
    if len(expression.encode()) > MAX_EXPRESSION_LENGTH:
        raise CELError.for_expression(
            expression,
            f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes",
            runtime=False,
        )
    facts = read_source(expression)
    extra = []
    if facts.undefined_field is not None:
        field, offset = facts.undefined_field
        line, column = _line_column(expression, offset)
        extra.append(f"ERROR: <input>:{line}:{column}: undefined field '{field}'")
    _, env = _environment()
    try:
        program = env.compile(expression)
    except Exception as err:  # cel-expr-python raises RuntimeError with the checker's issues
        raise CELError.for_expression(
            expression, _compile_problem(str(err), extra), runtime=False
        ) from None
    if extra:
        problem = "compilation failed: " + "; ".join(extra)
        raise CELError.for_expression(expression, problem, runtime=False)
    result = program.return_type().name()
    if result not in ("BOOL", "DYN"):
        problem = f"must evaluate to bool or the unknown type, not {go_type_name(result)}"
        raise CELError.for_expression(expression, problem, runtime=False)
    return Compiled(program, facts.attribute_domains, facts.capacity_domains)
