"""A device as the CEL variable ``device`` sees it, converted once per device.

``dynamic-resource-allocation/cel`` ``CompilationResult.DeviceMatches`` builds, for each
evaluation, ``device.driver``, ``device.allowMultipleAllocations`` and the two two-level maps
``device.attributes`` and ``device.capacity`` (domain -> name -> value): a qualified name
``domain/id`` lands under its domain, a bare ``id`` under the driver's name
(``parseQualifiedName``). A version attribute that does not parse makes every evaluation on
the device fail ("attribute <name>: parse semantic version: ..."). The conversion depends on
the device alone, so :func:`device_input` does it once and every selector reuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wasmsched.api.cel.environment import new_activation
from wasmsched.api.cel.errors import CELError
from wasmsched.api.cel.library import encode_quantity, encode_semver
from wasmsched.api.cel.values import Quantity, parse_quantity, parse_semver

__all__ = ["DeviceInput", "device_input"]


class DeviceInput:
    """The CEL variables of one device; ``error`` is kube's failure for every evaluation.

    The variables are converted into a cel-expr-python activation on first use and kept:
    a third of an evaluation's cost is that conversion, and every selector shares it.
    """

    __slots__ = ("_activation", "_padded", "attributes", "capacity", "error", "variables")

    def __init__(
        self,
        variables: Mapping[str, Any],
        attributes: Mapping[str, Mapping[str, Any]],
        capacity: Mapping[str, Mapping[str, Any]],
        error: str | None = None,
    ) -> None:
        self.variables = variables
        self.attributes = attributes
        self.capacity = capacity
        self.error = error
        self._activation: Any = None
        self._padded: dict[tuple[frozenset[str], frozenset[str]], Any] = {}

    def activation(self) -> Any:
        """The variables as a cel-expr-python ``Activation`` (built once)."""
        if self._activation is None:
            self._activation = new_activation(self.variables)
        return self._activation

    def padded_activation(self, attributes: frozenset[str], capacity: frozenset[str]) -> Any:
        """The activation with an empty map for each of these missing domains (kept)."""
        key = (attributes, capacity)
        activation = self._padded.get(key)
        if activation is None:
            view = dict(self.variables["device"])
            view["attributes"] = {**self.attributes, **{name: {} for name in attributes}}
            view["capacity"] = {**self.capacity, **{name: {} for name in capacity}}
            activation = self._padded[key] = new_activation({"device": view})
        return activation


def _split_name(name: str, driver: str) -> tuple[str, str]:
    """``parseQualifiedName``: (domain, id), the driver's name for a bare id."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


class _Unusable(Exception):
    """An attribute kube accepts in a slice but cannot evaluate (its error, per evaluation)."""


# DeviceAttribute's fields in getAttributeValue's order, with the type of their values.
_ATTRIBUTE_FIELDS: tuple[tuple[str, type, bool], ...] = (
    ("ints", int, True),
    ("bools", bool, True),
    ("strings", str, True),
    ("versions", str, True),
    ("int", int, False),
    ("bool", bool, False),
    ("string", str, False),
    ("version", str, False),
)


def _is(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _attribute_value(name: str, attribute: Any) -> Any:
    """``getAttributeValue``: the first field set, lists before scalars, as kube orders them."""
    if not isinstance(attribute, Mapping):
        raise CELError(f"attribute {name}: expected a DeviceAttribute mapping, got {attribute!r}")
    for field, kind, is_list in _ATTRIBUTE_FIELDS:
        value = attribute.get(field)
        if value is None:
            continue
        values = value if is_list else [value]
        if not isinstance(values, list | tuple) or not all(_is(v, kind) for v in values):
            raise CELError(
                f"attribute {name}: {field}: expected {kind.__name__} values, got {value!r}"
            )
        if field in ("version", "versions"):
            try:
                versions = [encode_semver(parse_semver(v)) for v in values]
            except CELError as err:
                raise _Unusable(f"parse semantic version: {err.problem}") from None
            return versions if is_list else versions[0]
        return list(values) if is_list else value
    raise _Unusable("unsupported attribute value")


def _capacity_value(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        value = value.get("value", "0")
    if isinstance(value, Quantity):
        return encode_quantity(value)
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise CELError(f"capacity {name}: expected a quantity, got {value!r}")
    return encode_quantity(parse_quantity(str(value)))


def device_input(
    driver: str,
    attributes: Mapping[str, Mapping[str, Any]] | None = None,
    capacity: Mapping[str, Any] | None = None,
    allow_multiple_allocations: bool = False,
) -> DeviceInput:
    """The CEL input of a device, from its API fields.

    ``attributes`` maps a qualified name to a ``DeviceAttribute`` as in a ResourceSlice
    (``{"int": 1}``, ``{"string": "a100"}``, ``{"version": "1.2.3"}``, ``{"ints": [...]}``,
    ...); ``capacity`` maps a qualified name to a ``DeviceCapacity`` (``{"value": "80Gi"}``),
    a quantity text or a :class:`Quantity`. Values of the wrong shape or type (which API
    validation refuses) raise CELError; an attribute kube stores but cannot evaluate (a
    version that does not parse) makes every evaluation on the device fail instead.
    """
    by_domain: dict[str, dict[str, Any]] = {}
    error = None
    for name, attribute in (attributes or {}).items():
        try:
            value = _attribute_value(name, attribute)
        except _Unusable as err:
            error = f"attribute {name}: {err}"
            break
        domain, ident = _split_name(name, driver)
        by_domain.setdefault(domain, {})[ident] = value
    capacity_by_domain: dict[str, dict[str, Any]] = {}
    for name, amount in (capacity or {}).items():
        domain, ident = _split_name(name, driver)
        capacity_by_domain.setdefault(domain, {})[ident] = _capacity_value(name, amount)
    variables = {
        "device": {
            "driver": driver,
            "allowMultipleAllocations": allow_multiple_allocations,
            "attributes": by_domain,
            "capacity": capacity_by_domain,
        }
    }
    return DeviceInput(variables, by_domain, capacity_by_domain, error)
