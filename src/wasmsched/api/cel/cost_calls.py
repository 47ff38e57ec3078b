"""The cost of one call, as cel-go's ``coster.functionCost`` decides it.

In the order cel-go consults them: the environment's ``OverloadCostEstimate`` options (cel-go
v0.29.2 ``ext/lists.go`` version 3 and ``ext/sets.go``), kube's ``library.CostEstimator``
(``apiserver/pkg/cel/library/cost.go`` ``EstimateCallCost``, by function name), then
``checker/cost.go``'s own cases by overload id, and O(1) for every other function.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from wasmsched.api.cel.checked import QUANTITY, SEMVER, Expr
from wasmsched.api.cel.cost_model import (
    LIST_CREATE_BASE_COST,
    MAX,
    NIL_PATH,
    ONE,
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    UNKNOWN,
    ZERO,
    AstNode,
    CostEstimate,
    EntrySize,
    GoPath,
    add,
    fixed,
    mul,
    node_size,
)

__all__ = ["CallCoster"]

# ext/lists.go comparableTypes: list_<type name>_sort and list_<type name>_sortByAssociatedKeys.
_SORTS = {
    f"list_{element}_{how}": (element, by_keys)
    for element in (
        *("bool", "bytes", "double", "int", "string", "uint"),
        *("google.protobuf.Duration", "google.protobuf.Timestamp"),
    )
    for how, by_keys in (("sort", 0), ("sortByAssociatedKeys", 1))
}


def _as_uint(node: AstNode, default: int) -> int:
    """cel-go ext/costs.go ``nodeAsUintValue``."""
    e = node.expr
    if e is None or e.kind != "const" or e.const_kind != "int" or not isinstance(e.value, int):
        return default
    return max(e.value, 0)


def _replacements(length: int, cut: int, same_length: bool) -> tuple[int, int]:
    """How many replacements and how many characters kept, at one end of ``replace``'s range.

    An empty ``cut`` is replaced around every character; a replacement that does not change
    the length keeps the string's; otherwise as many cuts as fit, nothing kept.
    """
    if cut == 0:
        return (length + 1 if length < MAX else length), length
    if same_length:
        return 0, length
    return min(math.ceil(float(length) / float(cut)), MAX), 0


def _items(target: AstNode) -> GoPath:
    """library/cost.go ``listElementNode``: a fresh copy of the list's path, plus ``@items``."""
    if not target.path:
        return NIL_PATH
    names = target.path.names()
    return GoPath([*names, "@items"], len(names) + 1)


def _computed_or_unknown(node: AstNode) -> CostEstimate:
    """cost.go ``sizeOrUnknown`` of an AstNode: its computed size only."""
    return UNKNOWN if node.computed is None else node.computed


class CallCoster:
    """``functionCost`` for one walk, which it reads and records entry sizes of."""

    def __init__(
        self,
        entry_of: Callable[[Expr], EntrySize | None],
        set_entry: Callable[[Expr, EntrySize | None], None],
    ) -> None:
        self._entry = entry_of
        self._set_entry = set_entry

    def function_cost(
        self,
        e: Expr,
        overload: str,
        target: AstNode | None,
        args: list[AstNode],
        arg_costs: list[CostEstimate],
    ) -> tuple[CostEstimate, CostEstimate | None]:
        """cost.go ``functionCost``: (cost, result size), estimators consulted first."""
        arg_sum = ZERO
        for c in arg_costs:
            arg_sum = arg_sum.add(c)
        found = self._extension_cost(overload, target, args)
        if found is None:
            found = self._kubernetes_cost(e.name, overload, target, args)
        if found is not None:
            return found[0].add(arg_sum), found[1]
        return self._standard_cost(e, overload, target, args, arg_costs, arg_sum)

    def _extension_cost(
        self, overload: str, target: AstNode | None, args: list[AstNode]
    ) -> tuple[CostEstimate, CostEstimate | None] | None:
        """The ``OverloadCostEstimate`` options of cel-go's ext.Lists (v3) and ext.Sets."""
        if overload.startswith("list_sets_") and len(args) == 2:
            factor = 2.0 if overload == "list_sets_equivalent_list" else 1.0
            product = node_size(args[0]).multiply(node_size(args[1]))
            return product.by_factor(factor).add(ONE), None
        size: CostEstimate | None = None
        factor = 1.0
        if overload == "list_slice" and target is not None and len(args) == 2:
            whole = node_size(target)
            start, end = _as_uint(args[0], 0), _as_uint(args[1], whole.max)
            size = fixed((end - start) % (1 << 64))  # uint64 subtraction, as in Go
        elif overload == "lists_range" and target is None and len(args) == 1:
            size = fixed(_as_uint(args[0], MAX))
        elif overload == "list_reverse" and target is not None and not args:
            size = node_size(target)
        elif overload in ("list_flatten", "list_flatten_int") and target is not None:
            if len(args) > 1:
                return None
            factor = float(_as_uint(args[0], MAX)) if args else 1.0
            size = node_size(target)
        elif overload == "list_distinct" and target is not None and not args:
            whole = node_size(target)
            size, factor = whole.multiply(whole), 2.0
        elif target is not None and overload in _SORTS:
            # estimateListSort (the list itself) and estimateListSortBy (its sort keys).
            element, by_keys = _SORTS[overload]
            if len(args) != by_keys:
                return None
            whole = node_size(args[0] if by_keys else target)
            size = whole.multiply(whole)
            factor = 2.0 + (STRING_TRAVERSAL if element in ("string", "bytes") else 0.0)
        if size is None:
            return None
        cost = size.by_factor(factor).add(ONE).add(fixed(LIST_CREATE_BASE_COST))
        return cost, size

    def _kubernetes_cost(
        self, function: str, overload: str, target: AstNode | None, args: list[AstNode]
    ) -> tuple[CostEstimate, CostEstimate | None] | None:
        """apiserver/pkg/cel/library/cost.go ``CostEstimator.EstimateCallCost``."""
        size = node_size
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"):
            if target is None:
                return None
            element = ONE
            params = target.type.params if target.type.kind == "list" else ()
            if params:
                elem_type = params[0]
                if elem_type.kind in ("string", "bytes"):
                    elem_size = size(AstNode(_items(target), elem_type, None, None))
                    element = element.add(elem_size.by_factor(STRING_TRAVERSAL))
                return size(target).multiply(element), None
            if function == "includes":
                return size(target).multiply(element), None
            return size(target).by_factor(STRING_TRAVERSAL), None
        if function in ("lowerAscii", "upperAscii", "substring", "trim"):
            if target is None:
                return None
            whole = size(target)
            return whole.by_factor(STRING_TRAVERSAL), whole
        if function == "replace" and target is not None and len(args) >= 2:
            return self._replace_cost(size(target), size(args[0]), size(args[1]))
        if function == "split" and target is not None:
            whole = size(target)
            limit = whole.max
            if len(args) > 1 and args[1].expr is not None and args[1].expr.const_kind == "int":
                value = args[1].expr.value
                if isinstance(value, int):
                    limit = value % (1 << 64)
            return whole.by_factor(2 * STRING_TRAVERSAL), CostEstimate(0, limit)
        if function == "join" and target is not None:
            return self._join_cost(target, args)
        if function in ("find", "findAll") and target is not None and args:
            text = size(target)
            scan = text.add(ONE).by_factor(STRING_TRAVERSAL)
            regex = size(args[0]).by_factor(REGEX_LENGTH)
            return scan.multiply(regex), CostEstimate(0, text.max)
        if function in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return size(args[0]).by_factor(STRING_TRAVERSAL), None
        if function in _NOMINAL:
            return ONE, None
        if function == "_==_" and len(args) == 2:
            # Quantities and versions compare in O(1), whatever their text.
            lhs, rhs = args
            if lhs.type == rhs.type and lhs.type in (QUANTITY, SEMVER):
                return ONE, None
        return None

    @staticmethod
    def _replace_cost(
        whole: CostEstimate, old: CostEstimate, new: CostEstimate
    ) -> tuple[CostEstimate, CostEstimate]:
        """library/cost.go ``replace``: the longest result, then the shortest."""
        count_max, retained_max = _replacements(whole.max, old.min, new.max <= old.min)
        count_min, retained_min = _replacements(whole.min, old.max, old.max <= new.min)
        result = (
            CostEstimate(count_min, count_max)
            .multiply(new)
            .add(CostEstimate(retained_min, retained_max))
        )
        return whole.by_factor(2 * STRING_TRAVERSAL), result

    def _join_cost(self, target: AstNode, args: list[AstNode]) -> tuple[CostEstimate, CostEstimate]:
        count = node_size(target)
        total = ZERO
        params = target.type.params if target.type.kind == "list" else ()
        if params:
            total = count.multiply(node_size(AstNode(_items(target), params[0], None, None)))
        if args:
            separators = CostEstimate(max(count.min - 1, 0), max(count.max - 1, 0))
            total = total.add(node_size(args[0]).multiply(separators))
        return total.by_factor(STRING_TRAVERSAL), total

    def _standard_cost(
        self,
        e: Expr,
        overload: str,
        target: AstNode | None,
        args: list[AstNode],
        arg_costs: list[CostEstimate],
        arg_sum: CostEstimate,
    ) -> tuple[CostEstimate, CostEstimate | None]:
        """cost.go ``functionCost``'s own cases, then O(1) for every other function."""
        size = _computed_or_unknown
        if overload == "string_format" and target is not None:
            return size(target).by_factor(STRING_TRAVERSAL).add(arg_sum), None
        if overload == "string_to_bytes" and len(args) == 1:
            s = size(args[0])
            return s.by_factor(STRING_TRAVERSAL).add(arg_sum), CostEstimate(s.min, mul(s.max, 4))
        if overload == "bytes_to_string" and len(args) == 1:
            s = size(args[0])
            return s.by_factor(STRING_TRAVERSAL).add(arg_sum), CostEstimate(s.min // 4, s.max)
        if overload == "strings_quote" and len(args) == 1:
            s = size(args[0])
            quoted = CostEstimate(add(s.min, 2), add(mul(s.max, 2), 2))
            return s.by_factor(STRING_TRAVERSAL).add(arg_sum), quoted
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return size(args[0]).by_factor(STRING_TRAVERSAL).add(arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return size(args[1]).by_factor(1).add(arg_sum), None
        if overload in ("matches", "matches_string"):
            text: AstNode | None = None
            regex: AstNode | None = None
            if overload == "matches_string" and target is not None and len(args) == 1:
                text, regex = target, args[0]
            elif overload == "matches" and target is None and len(args) == 2:
                text, regex = args
            if text is not None and regex is not None:
                scan = size(text).add(ONE).by_factor(STRING_TRAVERSAL)
                return scan.multiply(size(regex).by_factor(REGEX_LENGTH)).add(arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            scan = size(target).by_factor(STRING_TRAVERSAL)
            return scan.multiply(size(args[0]).by_factor(STRING_TRAVERSAL)).add(arg_sum), None
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return CostEstimate(lhs.min, lhs.add(rhs).max), None
        if overload == "conditional":
            result = size(args[1]).union(size(args[2]))
            assert args[1].expr is not None and args[2].expr is not None
            entry = self._entry(args[1].expr)
            self._set_entry(e, entry.union(self._entry(args[2].expr)) if entry else None)
            cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]))
            return cost, result
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = size(args[0]).add(size(args[1]))
            assert args[0].expr is not None and args[1].expr is not None
            entry = self._entry(args[0].expr)
            joined = entry.union(self._entry(args[1].expr)) if entry else None
            self._set_entry(e, joined)
            if overload == "add_list":
                return ONE.add(arg_sum), result
            return result.by_factor(STRING_TRAVERSAL).add(arg_sum), result
        if overload in _LENGTH_COMPARISONS:
            lhs, rhs = size(args[0]), size(args[1])
            smallest = min(lhs.max, rhs.max)
            cost = CostEstimate(1 if smallest > 0 else 0, smallest).by_factor(STRING_TRAVERSAL)
            return cost.add(arg_sum), None
        return ONE.add(arg_sum), None


# library/cost.go: the functions of fixed cost 1 that DRA's environment has.
_NOMINAL = frozenset(
    {
        *("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan"),
        *("isLessThan", "compareTo", "add", "sub", "major", "minor", "patch"),
    }
)
_LENGTH_COMPARISONS = frozenset(
    {
        *("less_string", "greater_string", "less_equals_string", "greater_equals_string"),
        *("less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes"),
        *("equals", "not_equals"),
    }
)
