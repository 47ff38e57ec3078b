"""The one error of the CEL layer, with kube's wording for what went wrong."""

from __future__ import annotations

import json

from wasmsched.errors import InputError

__all__ = ["CELError"]


class CELError(InputError):
    """A CEL expression that does not compile, or one whose evaluation failed.

    ``problem`` is kube's own text for the failure (what ``dynamic-resource-allocation/cel``
    returns, e.g. ``compilation failed: ERROR: <input>:1:1: Syntax error: ...`` or
    ``no such key: model``), for a caller that words the error as kube's allocator does
    (``claim x: selector #0: CEL runtime error: <problem>``). ``str(err)`` is one line that
    also names the expression.
    """

    def __init__(
        self, message: str, *, problem: str = "", expression: str = "", runtime: bool = False
    ) -> None:
        self.problem = problem or message
        self.expression = expression
        self.runtime = runtime
        super().__init__(message)

    @classmethod
    def for_expression(cls, expression: str, problem: str, *, runtime: bool) -> CELError:
        """The error of ``expression``: ``CEL compile error in "<expr>": <problem>``."""
        kind = "CEL runtime error" if runtime else "CEL compile error"
        shown = json.dumps(expression, ensure_ascii=False)
        return cls(
            f"{kind} in {shown}: {problem}",
            problem=problem,
            expression=expression,
            runtime=runtime,
        )
