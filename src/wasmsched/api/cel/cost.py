"""kube's estimated worst-case cost of a DRA selector (``CompilationResult.MaxCost``).

kube-apiserver v1.37.2 forbids a selector in a ResourceClaim, ResourceClaimTemplate or
DeviceClass whose estimate exceeds ``resource.CELSelectorExpressionMaxCost``
(``pkg/apis/resource/validation/validation.go`` ``validateCELExpression``). The estimate is
``env.EstimateCost`` (``dynamic-resource-allocation/cel/compile.go``
``CompileCELExpression``), that is cel-go v0.29.2 ``checker/cost.go`` ``Cost`` with:

- kube's ``library.CostEstimator`` (``apiserver/pkg/cel/library/cost.go``
  ``EstimateCallCost``) for the Kubernetes functions and the strings extension,
- DRA's ``sizeEstimator`` (compile.go) for the sizes reachable from ``device``,
- the environment's cost options: ``PresenceTestHasCost(false)``
  (``apiserver/pkg/cel/environment/base.go``) and the estimators of cel-go's ``ext.Lists``
  (version 3) and ``ext.Sets``.

cel-expr-python has no cost model, so :func:`estimate_cost` walks its checked expression
(:mod:`.checked`) the way ``Cost`` walks cel-go's. cel-expr-python declares ``device`` as
``dyn``; the types kube's environment gives to ``device`` and what is reached through it
(``kubernetes.DRADevice``, its fields, the attribute and capacity maps) are restored here,
because the cost of a select and of an index depends on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from wasmsched.api.cel.checked import DYN, STRING, CelType, CheckedExpr, Expr
from wasmsched.api.cel.cost_calls import CallCoster
from wasmsched.api.cel.cost_model import (
    ACCUMULATORS,
    DEVICE,
    DEVICE_FIELDS,
    LIST_CREATE_BASE_COST,
    MAP_CREATE_BASE_COST,
    MAX,
    NIL_PATH,
    ONE,
    SELECT_AND_IDENT_COST,
    STRUCT_CREATE_BASE_COST,
    UNKNOWN,
    ZERO,
    AstNode,
    CostEstimate,
    EntrySize,
    GoPath,
    device_size,
    fixed,
    is_scalar,
    literal_size,
)

__all__ = ["CostEstimate", "estimate_cost"]

# cel-cpp's overload ids where cel-go's differ.
_GO_OVERLOAD_IDS = {"list_range": "lists_range"}
# The comparison operators whose string overloads cost by length (cost.go functionCost).
_STRING_OPERATORS = {
    "_+_": "add_string",
    "_<_": "less_string",
    "_<=_": "less_equals_string",
    "_>_": "greater_string",
    "_>=_": "greater_equals_string",
}


@dataclass(slots=True)
class _LocalVar:
    path: GoPath
    size: CostEstimate | None
    entry: EntrySize | None
    type: CelType | None


class _Coster:
    """cel-go ``coster``, with kube's estimator and DRA's size estimator built in."""

    def __init__(self, checked: CheckedExpr) -> None:
        self._checked = checked
        self._paths: dict[int, GoPath] = {}
        self._locals: dict[str, list[_LocalVar]] = {}
        self._sizes: dict[int, CostEstimate] = {}
        self._entry_sizes: dict[int, EntrySize] = {}
        # kube's types of the nodes reached through ``device`` (dyn to cel-expr-python).
        self._device_types: dict[int, CelType] = {}
        self._calls = CallCoster(self._entry, self._set_entry)

    # --- types, paths and sizes -----------------------------------------------------------

    def _type(self, e: Expr) -> CelType:
        return self._device_types.get(e.id) or self._checked.types.get(e.id, DYN)

    def _path(self, e: Expr) -> GoPath:
        var = self._var_of(e)
        return var.path if var is not None else self._paths.get(e.id, NIL_PATH)

    def _peek(self, name: str) -> _LocalVar | None:
        stack = self._locals.get(name)
        return stack[-1] if stack else None

    def _var_of(self, e: Expr) -> _LocalVar | None:
        """The local variable ``e`` names, if it is an identifier of one."""
        return self._peek(e.name) if e.kind == "ident" else None

    def _push(self, name: str, var: _LocalVar) -> None:
        self._locals.setdefault(name, []).append(var)

    def _pop(self, name: str) -> None:
        self._locals[name].pop()

    def _node(self, e: Expr) -> AstNode:
        path = self._path(e)
        if path and path.names()[0] in ACCUMULATORS:
            path = NIL_PATH  # newAstNode: only paths from root variables
        return AstNode(path, self._type(e), e, self._size(e))

    def _set_size(self, e: Expr, size: CostEstimate | None) -> None:
        if size is not None:
            self._sizes[e.id] = size

    def _size(self, e: Expr) -> CostEstimate | None:
        """cost.go ``computeSize``."""
        size = self._sizes.get(e.id)
        if size is not None:
            return size
        size = literal_size(e)
        if size is not None:
            return size
        estimated = device_size(self._path(e))
        if estimated is not None:
            size = CostEstimate(*estimated)
            self._sizes[e.id] = size
            return size
        if is_scalar(self._type(e)):
            return ONE
        var = self._var_of(e)
        return var.size if var is not None else None

    def _size_or_unknown(self, e: Expr) -> CostEstimate:
        size = self._size(e)
        return UNKNOWN if size is None else size

    def _set_entry(self, e: Expr, entry: EntrySize | None) -> None:
        if entry is not None:
            self._entry_sizes[e.id] = entry

    def _entry(self, e: Expr) -> EntrySize | None:
        entry = self._entry_sizes.get(e.id)
        if entry is not None:
            return entry
        var = self._var_of(e)
        return var.entry if var is not None else None

    def _copy_sizes(self, dst: Expr, src: Expr) -> None:
        self._set_size(dst, self._size(src))
        self._set_entry(dst, self._entry(src))

    # --- the walk -------------------------------------------------------------------------

    def cost(self, e: Expr | None) -> CostEstimate:
        if e is None:
            return ZERO
        kind = e.kind
        if kind == "const":
            return ZERO
        if kind == "ident":
            return self._ident(e)
        if kind == "select":
            return self._select(e)
        if kind == "call":
            return self._call(e)
        if kind == "list":
            return self._create_list(e)
        if kind == "map":
            return self._create_map(e)
        if kind == "struct":
            total = ZERO
            for _, value in e.entries:
                total = total.add(self.cost(value))
            return total.add(fixed(STRUCT_CREATE_BASE_COST))
        if kind == "comprehension":
            return self._bind(e) if self._is_bind(e) else self._comprehension(e)
        return ZERO

    def _ident(self, e: Expr) -> CostEstimate:
        var = self._peek(e.name)
        if var is not None:
            self._paths[e.id] = var.path
            if var.type is not None:
                self._device_types[e.id] = var.type
        else:
            self._paths[e.id] = GoPath.of(e.name)
            if e.name == "device":
                self._device_types[e.id] = DEVICE
        return fixed(SELECT_AND_IDENT_COST)

    def _select(self, e: Expr) -> CostEstimate:
        operand = e.operand
        assert operand is not None
        if e.test_only:
            # base.go: PresenceTestHasCost(false), so has() adds nothing of its own.
            return self.cost(operand)
        total = self.cost(operand)
        operand_type = self._type(operand)
        if operand_type.kind in ("map", "struct", "type_param"):
            total = total.add(fixed(SELECT_AND_IDENT_COST))
        self._paths[e.id] = self._path(operand).append(e.name)
        if operand.id in self._device_types:
            if operand_type == DEVICE:
                found = DEVICE_FIELDS.get(e.name)
                if found is not None:
                    self._device_types[e.id] = found
            elif operand_type.kind == "map":
                self._device_types[e.id] = operand_type.params[1]
        return total

    def _overload_ids(self, e: Expr) -> tuple[str, ...]:
        ids = self._checked.overloads.get(e.id, ())
        args = e.args
        if e.name == "_[_]" and len(args) == 2 and args[0].id in self._device_types:
            kind = self._type(args[0]).kind
            if kind == "map":
                return ("index_map",)
            if kind == "list":
                return ("index_list",)
        if e.name == "@in" and len(args) == 2 and args[1].id in self._device_types:
            kind = self._type(args[1]).kind
            if kind == "map":
                return ("in_map",)
            if kind == "list":
                return ("in_list",)
        string_id = _STRING_OPERATORS.get(e.name)
        if (
            string_id is not None
            and len(args) == 2
            and any(a.id in self._device_types for a in args)
            and all(self._type(a) == STRING for a in args)
        ):
            return (string_id,)
        return tuple(_GO_OVERLOAD_IDS.get(i, i) for i in ids)

    def _call(self, e: Expr) -> CostEstimate:
        args = e.args
        if e.name == "dyn" and len(args) == 1:
            # cost.go maybeUnwrapDynCall.
            arg_cost = self.cost(args[0])
            self._copy_sizes(e, args[0])
            return ONE.add(arg_cost)
        arg_costs = [self.cost(a) for a in args]
        arg_nodes = [self._node(a) for a in args]
        ids = self._overload_ids(e)
        if not ids:
            return ZERO
        total = ZERO
        target: AstNode | None = None
        if e.target is not None:
            total = total.add(self.cost(e.target))
            target = self._node(e.target)
        if e.name == "_[_]" and args and args[0].id in self._device_types:
            container = self._type(args[0])
            if container.kind in ("map", "list"):
                self._device_types[e.id] = container.params[-1]
        fn_cost = CostEstimate(MAX, 0)
        result_size: CostEstimate | None = None
        for overload in ids:
            cost, size = self._calls.function_cost(e, overload, target, arg_nodes, arg_costs)
            fn_cost = fn_cost.union(cost)
            if size is not None:
                result_size = size if result_size is None else result_size.union(size)
            if overload in ("index_list", "index_map") and args:
                entry = self._entry(args[0])
                result_size = entry.val if entry is not None else None
                subpath = "@items" if overload == "index_list" else "@values"
                self._paths[e.id] = self._path(args[0]).append(subpath)
            if result_size is None:
                result_size = self._size(e)
        self._set_size(e, result_size)
        return total.add(fn_cost)

    def _create_list(self, e: Expr) -> CostEstimate:
        total = ZERO
        item = CostEstimate(0 if not e.args else MAX, 0)
        for element in e.args:
            total = total.add(self.cost(element))
            item = item.union(self._size_or_unknown(element))
        self._entry_sizes[e.id] = EntrySize("list", ONE, item)
        return total.add(fixed(LIST_CREATE_BASE_COST))

    def _create_map(self, e: Expr) -> CostEstimate:
        total = ZERO
        empty = not e.entries
        key_size = CostEstimate(0 if empty else MAX, 0)
        val_size = CostEstimate(0 if empty else MAX, 0)
        for key, value in e.entries:
            total = total.add(self.cost(key)).add(self.cost(value))
            if key is not None:
                key_size = key_size.union(self._size_or_unknown(key))
            val_size = val_size.union(self._size_or_unknown(value))
        self._entry_sizes[e.id] = EntrySize("map", key_size, val_size)
        return total.add(fixed(MAP_CREATE_BASE_COST))

    def _container(self, range_expr: Expr, entry: EntrySize | None) -> str:
        if entry is not None:
            return entry.container
        return self._type(range_expr).kind

    def _iter_var(self, range_expr: Expr, want: str) -> _LocalVar:
        """cost.go pushIterKey ("key"), pushIterValue ("value") and pushIterSingle ("single")."""
        entry = self._entry(range_expr)
        container = self._container(range_expr, entry)
        is_list = container == "list"
        if want == "key":
            size = entry.key if entry is not None else None
            subpath = "@indices" if is_list else "@keys"
        elif want == "value" or (want == "single" and is_list):
            size = entry.val if entry is not None else None
            subpath = "@items" if is_list else "@values"
        else:
            size = entry.key if entry is not None else None
            subpath = "@keys"
        var_type: CelType | None = None
        if range_expr.id in self._device_types:
            range_type = self._type(range_expr)
            if range_type.kind == "list":
                var_type = CelType("int") if want == "key" else range_type.params[0]
            elif range_type.kind == "map":
                var_type = range_type.params[1] if want == "value" else range_type.params[0]
        return _LocalVar(self._path(range_expr).append(subpath), size, None, var_type)

    def _local(self, e: Expr) -> _LocalVar:
        """cost.go pushLocalVar: a bound variable carries the size of its expression."""
        var_type = self._device_types.get(e.id)
        return _LocalVar(self._path(e), self._size(e), self._entry(e), var_type)

    def _comprehension(self, e: Expr) -> CostEstimate:
        iter_range, accu_init = e.iter_range, e.accu_init
        assert iter_range is not None and accu_init is not None
        total = self.cost(iter_range).add(self.cost(accu_init))
        self._push(e.accu_var, self._local(accu_init))
        if e.iter_var2:
            self._push(e.iter_var, self._iter_var(iter_range, "key"))
            self._push(e.iter_var2, self._iter_var(iter_range, "value"))
        else:
            self._push(e.iter_var, self._iter_var(iter_range, "single"))
        loop_cost = self.cost(e.loop_condition)
        step_cost = self.cost(e.loop_step)
        self._pop(e.iter_var)
        if e.iter_var2:
            self._pop(e.iter_var2)
        total = total.add(self.cost(e.result))
        self._pop(e.accu_var)
        count = self._size_or_unknown(iter_range)
        total = total.add(count.multiply(step_cost.add(loop_cost)))
        if accu_init.kind == "const":
            self._set_size(e, self._size(accu_init))
        elif accu_init.kind in ("list", "map"):
            self._set_size(e, count)
            if e.loop_step is not None:
                self._set_entry(e, self._entry(e.loop_step))
        return total

    @staticmethod
    def _is_bind(e: Expr) -> bool:
        r, cond = e.iter_range, e.loop_condition
        return (
            r is not None
            and r.kind == "list"
            and not r.args
            and cond is not None
            and cond.kind == "const"
            and cond.value is False
            and e.accu_var != ACCUMULATORS[0]
        )

    def _bind(self, e: Expr) -> CostEstimate:
        assert e.accu_init is not None and e.result is not None
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        self._push(e.accu_var, self._local(e.accu_init))
        total = total.add(self.cost(e.result))
        self._pop(e.accu_var)
        self._copy_sizes(e, e.result)
        if e.result.id in self._device_types:
            self._device_types[e.id] = self._device_types[e.result.id]
        return total


def estimate_cost(checked: CheckedExpr) -> CostEstimate:
    """kube's estimated cost range of a checked selector; ``.max`` is ``MaxCost``."""
    return _Coster(checked).cost(checked.expr)
