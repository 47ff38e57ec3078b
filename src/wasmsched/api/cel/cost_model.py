"""cel-go's cost arithmetic, and the size bounds of what DRA's ``device`` holds.

The estimate's ranges (cel-go v0.29.2 ``checker/cost.go`` ``CostEstimate`` and
``SizeEstimate``, saturating at the largest uint64), the nodes an estimator sees
(``AstNode``), and DRA's ``sizeEstimator`` (``dynamic-resource-allocation/cel/compile.go``):
the types and bounds of ``device``'s fields in kube's environment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wasmsched.api.cel.checked import BOOL, QUANTITY, STRING, CelType, Expr

__all__ = [
    "ACCUMULATORS",
    "DEVICE",
    "DEVICE_FIELDS",
    "LIST_CREATE_BASE_COST",
    "MAP_CREATE_BASE_COST",
    "MAX",
    "NIL_PATH",
    "ONE",
    "REGEX_LENGTH",
    "SELECT_AND_IDENT_COST",
    "STRING_TRAVERSAL",
    "STRUCT_CREATE_BASE_COST",
    "UNKNOWN",
    "ZERO",
    "AstNode",
    "CostEstimate",
    "EntrySize",
    "GoPath",
    "add",
    "device_size",
    "fixed",
    "is_scalar",
    "literal_size",
    "mul",
    "node_size",
]

MAX = (1 << 64) - 1
_TWO_TO_64 = float(1 << 64)
# cel-go common/cost.go.
SELECT_AND_IDENT_COST = 1
LIST_CREATE_BASE_COST = 10
MAP_CREATE_BASE_COST = 30
STRUCT_CREATE_BASE_COST = 40
STRING_TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
# cel-go parser/macro.go: AccumulatorName and HiddenAccumulatorName.
ACCUMULATORS = ("__result__", "@result")

# dynamic-resource-allocation/cel/compile.go newCompiler, the device type of the
# NewExpressions environment at 1.37's default gates (DRAConsumableCapacity on,
# DRAListTypeAttributes off): deviceTypeV134ConsumableCapacity. Limits from
# k8s.io/api resource/v1 types.go.
DEVICE = CelType("struct", "kubernetes.DRADevice")
_ANY = CelType("any")
_ATTRIBUTES_INNER = CelType("map", params=(STRING, _ANY))
_CAPACITY_INNER = CelType("map", params=(STRING, QUANTITY))
DEVICE_FIELDS = {
    "driver": STRING,
    "allowMultipleAllocations": BOOL,
    "attributes": CelType("map", params=(STRING, _ATTRIBUTES_INNER)),
    "capacity": CelType("map", params=(STRING, _CAPACITY_INNER)),
}


@dataclass(frozen=True, slots=True)
class _Decl:
    """An ``apiservercel.DeclType`` as far as the size estimator reads it."""

    max_elements: int
    fields: tuple[tuple[str, _Decl], ...] = ()
    key: _Decl | None = None
    elem: _Decl | None = None


_DRIVER_NAME_MAX = 63  # DriverNameMaxLength
_DOMAIN_MAX = 63  # DeviceMaxDomainLength
_ID_MAX = 32  # DeviceMaxIDLength
_PER_DEVICE_MAX = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
_ATTRIBUTE_VALUE_MAX = 64  # DeviceAttributeMaxValueLength

_DOMAIN_DECL = _Decl(_DOMAIN_MAX)
_ID_DECL = _Decl(_ID_MAX)
_ATTRIBUTE_DECL = _Decl(_ATTRIBUTE_VALUE_MAX)
_QUANTITY_DECL = _Decl(0)  # QuantityDeclType: no MaxElements
_DEVICE_DECL = _Decl(
    0,
    fields=(
        ("allowMultipleAllocations", _Decl(1)),
        ("driver", _Decl(_DRIVER_NAME_MAX)),
        (
            "attributes",
            _Decl(
                _PER_DEVICE_MAX,
                key=_DOMAIN_DECL,
                elem=_Decl(_PER_DEVICE_MAX, key=_ID_DECL, elem=_ATTRIBUTE_DECL),
            ),
        ),
        (
            "capacity",
            _Decl(
                _PER_DEVICE_MAX,
                key=_DOMAIN_DECL,
                elem=_Decl(_PER_DEVICE_MAX, key=_ID_DECL, elem=_QUANTITY_DECL),
            ),
        ),
    ),
)


class GoPath:
    """A field path as cel-go keeps it: a Go ``[]string`` with a length and a capacity.

    cost.go builds paths with ``append(c.getPath(operand), name)``, and ``getPath`` returns
    the operand's slice itself: when that slice has spare capacity, the append writes into
    the array it shares, and an earlier path built on the same operand reads the newer name.
    This decides the estimate: in ``m.all(k, v, k + "x")`` over a map, ``pushIterValue``
    overwrites the ``@keys`` that ``pushIterKey`` appended, so kube estimates ``k`` as an
    attribute value (64 characters) rather than a name (32). Capacities grow as Go's
    ``append`` grows a ``[]string`` (runtime/slice.go ``nextslicecap``): 1, 2, 4, 8, ...
    """

    __slots__ = ("_array", "_length")

    def __init__(self, array: list[str], length: int) -> None:
        self._array = array
        self._length = length

    @staticmethod
    def of(name: str) -> GoPath:
        """``[]string{name}``."""
        return GoPath([name], 1)

    def append(self, name: str) -> GoPath:
        """Go's ``append(path, name)``: in place when there is room, else into a new array."""
        length, array = self._length, self._array
        if length < len(array):
            array[length] = name
            return GoPath(array, length + 1)
        capacity = 2 * len(array) if array else 1
        grown = array[:length] + [name] + [""] * (capacity - length - 1)
        return GoPath(grown, length + 1)

    def names(self) -> tuple[str, ...]:
        """The path as it reads now."""
        return tuple(self._array[: self._length])

    def __bool__(self) -> bool:
        return self._length > 0


NIL_PATH = GoPath([], 0)


def device_size(path: GoPath) -> tuple[int, int] | None:
    """compile.go ``sizeEstimator.EstimateSize``: the size bound of a path from ``device``."""
    return _device_size(path.names())


def _device_size(path: tuple[str, ...]) -> tuple[int, int] | None:
    if not path or path[0] != "device":
        return None
    node = _DEVICE_DECL
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        else:
            found = dict(node.fields).get(name)
            if found is None:
                # Every attribute of an attribute map has the same bound, whatever its name.
                if node.elem is _ATTRIBUTE_DECL:
                    node = _ATTRIBUTE_DECL
                    continue
                return None
            node = found
    return (0, node.max_elements)


# --- cel-go checker/cost.go arithmetic: saturating uint64 ---------------------------------


def add(x: int, y: int) -> int:
    return min(x + y, MAX)


def mul(x: int, y: int) -> int:
    return min(x * y, MAX)


def _by_factor(x: int, factor: float) -> int:
    """``multiplyByCostFactor``: x * factor rounded up, in float64 as Go computes it."""
    xf = float(x)
    if xf > 0 and factor > 0 and xf > MAX / factor:
        return MAX
    product = math.ceil(xf * factor)
    if product >= _TWO_TO_64:
        return MAX
    return int(product)


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """A cost (or size) range; cel-go's ``CostEstimate`` and ``SizeEstimate``."""

    min: int
    max: int

    def add(self, other: CostEstimate) -> CostEstimate:
        return CostEstimate(add(self.min, other.min), add(self.max, other.max))

    def multiply(self, other: CostEstimate) -> CostEstimate:
        return CostEstimate(mul(self.min, other.min), mul(self.max, other.max))

    def by_factor(self, factor: float) -> CostEstimate:
        return CostEstimate(_by_factor(self.min, factor), _by_factor(self.max, factor))

    def union(self, other: CostEstimate) -> CostEstimate:
        return CostEstimate(min(self.min, other.min), max(self.max, other.max))


UNKNOWN = CostEstimate(0, MAX)
ZERO = CostEstimate(0, 0)
ONE = CostEstimate(1, 1)


def fixed(value: int) -> CostEstimate:
    return CostEstimate(value, value)


@dataclass(slots=True)
class EntrySize:
    """cost.go ``entrySizeEstimate``: the container kind and its key and value sizes."""

    container: str
    key: CostEstimate
    val: CostEstimate

    def union(self, other: EntrySize | None) -> EntrySize | None:
        if other is None:
            return None
        return EntrySize(self.container, self.key.union(other.key), self.val.union(other.val))


@dataclass(slots=True)
class AstNode:
    """cost.go ``AstNode``: what an estimator sees of an argument or target."""

    path: GoPath
    type: CelType
    expr: Expr | None
    computed: CostEstimate | None


_SCALAR_KINDS = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})


def is_scalar(t: CelType) -> bool:
    if t.kind in _SCALAR_KINDS:
        return True
    return (
        t.kind == "opaque"
        and t.name == "optional_type"
        and bool(t.params)
        and is_scalar(t.params[0])
    )


def literal_size(e: Expr) -> CostEstimate | None:
    """cost.go ``computeExprSize``."""
    if e.kind == "const":
        if e.const_kind == "string" and isinstance(e.value, str):
            return fixed(len(e.value))
        if e.const_kind == "bytes" and isinstance(e.value, bytes):
            return fixed(len(e.value))
        if e.const_kind in ("bool", "double", "duration", "int", "timestamp", "uint", "null"):
            return ONE
        return None
    if e.kind == "list":
        return fixed(len(e.args))
    if e.kind == "map":
        return fixed(len(e.entries))
    return None


def node_size(node: AstNode) -> CostEstimate:
    """ext/costs.go ``estimateSize`` and kube's ``sizeEstimate``: computed, else estimated."""
    if node.computed is not None:
        return node.computed
    estimated = device_size(node.path)
    return UNKNOWN if estimated is None else CostEstimate(*estimated)
