"""CEL for DRA device selectors, as kube-scheduler v1.37.2 evaluates them.

    cache = SelectorCache()
    selector = cache.get('device.attributes["gpu.example.com"].model == "a100"')
    device = device_input("gpu.example.com", {"model": {"string": "a100"}}, {"memory": "80Gi"})
    selector.matches(device)  # True, False, or CELError (kube's runtime error text)

The environment (:mod:`.environment`), the Kubernetes functions (:mod:`.library`), the
quantity and semver values (:mod:`.values`), the device input (:mod:`.device`) and the
compile cache (:mod:`.selector`) each follow their upstream file, cited in the module.
"""

from wasmsched.api.cel.device import DeviceInput, device_input
from wasmsched.api.cel.environment import (
    COST_LIMIT,
    ENVIRONMENT_VERSION,
    MAX_EXPRESSION_LENGTH,
)
from wasmsched.api.cel.errors import CELError
from wasmsched.api.cel.selector import DeviceSelector, SelectorCache
from wasmsched.api.cel.values import Quantity, Semver, parse_quantity, parse_semver

__all__ = [
    "COST_LIMIT",
    "ENVIRONMENT_VERSION",
    "MAX_EXPRESSION_LENGTH",
    "CELError",
    "DeviceInput",
    "DeviceSelector",
    "Quantity",
    "SelectorCache",
    "Semver",
    "device_input",
    "parse_quantity",
    "parse_semver",
]
