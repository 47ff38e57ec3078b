"""Device selectors: compiled once (:class:`SelectorCache`), evaluated per device.

Mirrors ``dynamic-resource-allocation/cel``: ``Cache.GetOrCompile`` (an LRU keyed by the
expression; failed compiles are not cached) and ``CompilationResult.DeviceMatches`` (true,
false, or an error: a runtime error of the expression, or a result that is not a bool).
Runtime errors carry kube's text after ``EnhanceRuntimeError``, the hint kube's allocator
adds to a "no such key" error.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any, NoReturn

from wasmsched.api.cel.device import DeviceInput
from wasmsched.api.cel.environment import (
    ENVIRONMENT_VERSION,
    Compiled,
    compile_expression,
)
from wasmsched.api.cel.errors import CELError
from wasmsched.api.cel.library import KUBERNETES_FUNCTIONS, value_type_name

__all__ = ["DeviceSelector", "SelectorCache"]

# dynamic-resource-allocation/cel/errors.go EnhanceRuntimeError.
_NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check"
    " with has() for optional fields"
)
# cel-cpp's runtime texts that cel-go words differently.
_GO_WORDING = (("divide by zero", "division by zero"),)
# cel-cpp stops an evaluation once its comprehensions have run 10,000 iterations in all
# (RuntimeOptions.comprehension_max_iterations; cel-expr-python 0.1.3 offers no way to
# raise it). kube has no such limit, only the cost limit: say whose limit it is.
_ITERATION_BUDGET = "Iteration budget exceeded"
_ITERATION_BUDGET_PROBLEM = (
    "Iteration budget exceeded: wasmsched's CEL library (cel-expr-python) stops an "
    "evaluation after 10000 comprehension iterations in all; kube-scheduler has no such "
    'limit (docs/dra.md, "Not modelled yet")'
)
_NO_OVERLOAD = re.compile(r"No matching overloads found : (.*)", re.DOTALL)
_KUBERNETES_FUNCTIONS = frozenset(KUBERNETES_FUNCTIONS)
_MEMBER_CALL = re.compile(r"\(([^()]*)\)\.([A-Za-z_][A-Za-z0-9_.]*)\((.*)\)", re.DOTALL)
_NONE: frozenset[str] = frozenset()
_KEY_NOT_FOUND = "Key not found in map : "
_INDEX_ERROR = re.compile(r"Index error: index=(-?[0-9]+) size=[0-9]+")
# cel-go's ConvertToNative(bool) error of each result type (DeviceMatches wraps it).
_CONVERSION_ERRORS = {
    "int": "unsupported type conversion from 'int' to bool",
    "string": "unsupported native conversion from string to 'bool'",
    "double": "type conversion error from Double to 'bool'",
    "list": "type conversion error from list to 'bool'",
    "map": "type conversion error from map to 'bool'",
    "kubernetes.Quantity": "type conversion error from 'Quantity' to 'bool'",
    "kubernetes.Semver": "type conversion error from 'Semver' to 'bool'",
}
# An absl::Status text: "NOT_FOUND: <message>", sometimes followed by " [NOT_FOUND]".
_STATUS = re.compile(r"([A-Z][A-Z_]+): (.*?)(?: \[\1\])?", re.DOTALL)


def _runtime_problem(message: str) -> str:
    """cel-cpp's runtime error text in cel-go's words, enhanced as kube's allocator does."""
    status = _STATUS.fullmatch(message)
    if status is not None:
        message = status.group(2)
    if message.startswith(_KEY_NOT_FOUND):
        key = message.removeprefix(_KEY_NOT_FOUND)
        if len(key) >= 2 and key[0] == key[-1] == '"':
            key = key[1:-1]
        return f"no such key: {key}{_NO_SUCH_KEY_HINT}"
    index = _INDEX_ERROR.fullmatch(message)
    if index is not None:
        return f"index out of bounds: {index.group(1)}"
    overload = _NO_OVERLOAD.fullmatch(message)
    if overload is not None:
        return _no_such_overload(overload.group(1))
    if message == _ITERATION_BUDGET:
        return _ITERATION_BUDGET_PROBLEM
    for cpp, go in _GO_WORDING:
        message = message.replace(cpp, go)
    return message


def _no_such_overload(call: str) -> str:
    """cel-go's text for a call cel-cpp could not dispatch (``(int64).size()``).

    cel-go names the function and argument types when a Kubernetes library function got a
    value of the wrong type (``isGreaterThan(int, kubernetes.Semver)``; a map argument here
    may be a quantity or a version, so it stays ``map``), just the function for ``size``,
    and nothing more for the standard library's other functions and operators. A
    comprehension over a scalar is cel-go's "got 'types.Int', expected iterable type";
    cel-cpp does not say which type, so neither can we.
    """
    if call == "<iter_range>":
        return "expected iterable type"
    member = _MEMBER_CALL.fullmatch(call)
    if member is not None:
        receiver, function, arguments = member.groups()
        call = f"{function}({', '.join(filter(None, (receiver, arguments)))})"
    function = call.partition("(")[0]
    if function == "size":
        return "no such overload: size"
    if function not in _KUBERNETES_FUNCTIONS:
        return "no such overload"
    for cpp, go in (("int64", "int"), ("uint64", "uint")):
        call = re.sub(rf"\b{cpp}\b", go, call)
    return f"no such overload: {call}"


class DeviceSelector:
    """One compiled selector expression."""

    __slots__ = ("_compiled", "_eval", "expression")

    def __init__(self, expression: str, compiled: Compiled) -> None:
        self.expression = expression
        self._compiled = compiled
        self._eval = compiled.program.eval

    @property
    def max_cost(self) -> int:
        """kube's estimated worst-case cost (``CompilationResult.MaxCost``), for validation."""
        return self._compiled.max_cost

    def matches(self, device: DeviceInput) -> bool:
        """``DeviceMatches``: whether ``device`` satisfies the selector; CELError on failure."""
        if device.error is not None:
            raise CELError.for_expression(self.expression, device.error, runtime=True)
        try:
            result = self._eval(self._activation(device))
        except Exception as err:  # cel-cpp refusing a plan step at run time
            raise CELError.for_expression(
                self.expression, _runtime_problem(str(err)), runtime=True
            ) from None
        value = result.value()
        if value is True or value is False:
            return value
        self._not_a_bool(result, value)

    def _activation(self, device: DeviceInput) -> Any:
        """The device's activation, with an empty map for each missing literal domain."""
        compiled = self._compiled
        missing_attributes = (
            compiled.attribute_domains.difference(device.attributes)
            if compiled.attribute_domains
            else _NONE
        )
        missing_capacity = (
            compiled.capacity_domains.difference(device.capacity)
            if compiled.capacity_domains
            else _NONE
        )
        if not missing_attributes and not missing_capacity:
            return device.activation()
        return device.padded_activation(missing_attributes, missing_capacity)

    def _not_a_bool(self, result: Any, value: Any) -> NoReturn:
        if result.type().name() == "ERROR":
            problem = _runtime_problem(str(value))
        else:
            shown = value_type_name(result.plain_value())
            why = _CONVERSION_ERRORS.get(shown, f"type conversion error from '{shown}' to 'bool'")
            problem = f"CEL result of type {shown} could not be converted to bool: {why}"
        raise CELError.for_expression(self.expression, problem, runtime=True)


class SelectorCache:
    """Compiled selectors by (environment version, expression), least recently used out.

    kube-scheduler keeps 10 (``cel.NewCache(10, ...)`` in the DynamicResources plugin); the
    size only changes how often an expression is compiled again, never a result.
    """

    def __init__(self, max_entries: int = 1024) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str], DeviceSelector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, expression: str) -> DeviceSelector:
        """The compiled selector of ``expression``; CELError if it does not compile."""
        key = (ENVIRONMENT_VERSION, expression)
        with self._lock:
            selector = self._entries.get(key)
            if selector is not None:
                self._entries.move_to_end(key)
                return selector
        selector = DeviceSelector(expression, compile_expression(expression))
        with self._lock:
            self._entries[key] = selector
            if len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return selector

    def __len__(self) -> int:
        return len(self._entries)
