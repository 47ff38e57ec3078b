"""Alibaba's GPU trace in Dynamic Resource Allocation terms (``--gpu-model dra``).

What a cluster with a DRA GPU driver would hold for the openb node and pod lists:

- one DeviceClass, ``gpu.alibaba.com``, selecting the driver's devices;
- per GPU node, one ResourceSlice (its own pool, named after the node) with a device per
  GPU: ``gpu-0``, ``gpu-1``, ... carrying the attributes ``model`` (the node list's
  ``model``) and ``index``, and the consumable capacity ``milli: 1000`` with
  ``allowMultipleAllocations`` (DRAConsumableCapacity), so that a GPU can be shared;
- per pod shape, one ResourceClaimTemplate, as a user writes one per workload: a request
  for ``num_gpu`` devices of the class, each a ``capacity.requests`` share of
  ``gpu_milli`` (a whole GPU is the share 1000), ``gpu_spec`` (``V100M16|V100M32``) a CEL
  selector on the model, and for several devices a ``distinctAttribute`` constraint on
  ``index`` (a share of one GPU may otherwise be taken twice from the same device);
- the pod names its template in ``spec.resourceClaims`` and its container uses the claim;
  the resourceclaim controller makes the claim when the pod arrives.

This is per-GPU packing: two half-used GPUs do not take a task that needs one whole GPU,
which node-level milli-GPUs (``--gpu-share milli``) cannot express.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from wasmsched.api.dra import (
    DEVICE_CLASS,
    DRA_API_VERSION,
    RESOURCE_CLAIM_TEMPLATE,
    RESOURCE_SLICE,
    with_dra_defaults,
)
from wasmsched.replay.trace import TraceError

__all__ = [
    "CAPACITY",
    "DEVICE_CLASS_NAME",
    "DRIVER",
    "POD_CLAIM_NAME",
    "AlibabaDra",
]

DRIVER = "gpu.alibaba.com"
DEVICE_CLASS_NAME = DRIVER
CAPACITY = "milli"  # per device: 1000, the trace's milli-GPUs
WHOLE = 1000
POD_CLAIM_NAME = "gpu"
# A model as gpu_spec and the node list name it (V100M16, G2, A10, T4, P100, ...): it goes
# into a CEL string literal and a device attribute (at most 64 characters).
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _model(text: str, where: str, column: str) -> str:
    model = text.strip()
    if not _MODEL.fullmatch(model):
        raise TraceError(
            f"{where}: {column}: malformed GPU model {text!r} (expected letters, digits, "
            "'.', '_' or '-', at most 64 characters)"
        )
    return model


def parse_gpu_spec(text: str, where: str) -> tuple[str, ...]:
    """The models of a ``gpu_spec`` (``V100M16|V100M32``; empty: any GPU)."""
    if not text.strip():
        return ()
    return tuple(sorted({_model(m, where, "gpu_spec") for m in text.split("|")}))


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": DEVICE_CLASS,
        "metadata": {"name": DEVICE_CLASS_NAME},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


def resource_slice(node: str, gpus: int, model: str, where: str) -> dict[str, Any]:
    """The slice the driver publishes for one node's GPUs."""
    attributes: dict[str, Any] = {}
    if model.strip():
        attributes["model"] = {"string": _model(model, where, "model")}
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {**attributes, "index": {"int": i}},
            "capacity": {CAPACITY: {"value": str(WHOLE)}},
            "allowMultipleAllocations": True,
        }
        for i in range(gpus)
    ]
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": RESOURCE_SLICE,
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": devices,
        },
    }


def _template_name(count: int, share: int, models: tuple[str, ...]) -> str:
    name = f"gpu-{count}x{share}m"
    if models:
        name += "-" + "-".join(m.lower().replace("_", "-").replace(".", "-") for m in models)
    return name[:253].rstrip("-")


class AlibabaDra:
    """The DRA objects of one import: the class, the slices, and a template per pod
    shape (made as pods ask for them)."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.objects: list[dict[str, Any]] = [device_class()]
        self._templates: dict[tuple[int, int, tuple[str, ...]], str] = {}
        self._names: set[str] = set()
        # A GPU node without a model has devices without the attribute, on which a bare
        # selector is a CEL runtime error ("no such key"): selectors then test for it.
        self._unnamed_models = False

    def add_node(self, node: str, gpus: int, model: str, where: str) -> None:
        if gpus:
            self.objects.append(resource_slice(node, gpus, model, where))
            self._unnamed_models |= not model.strip()

    def pod_claim(self, row: Mapping[str, str], num_gpu: int, gpu_milli: int, where: str) -> str:
        """The ResourceClaimTemplate a pod of this row uses (made on first use)."""
        models = parse_gpu_spec(row.get("gpu_spec") or "", where)
        # As --gpu-share whole counts them: a share without num_gpu is one GPU, num_gpu
        # without a share whole GPUs.
        count = max(num_gpu, 1)
        share = gpu_milli or WHOLE
        shape = (count, share, models)
        name = self._templates.get(shape)
        if name is not None:
            return name
        name = base = _template_name(count, share, models)
        n = 1
        while name in self._names:  # two spellings of models that name alike
            n += 1
            name = f"{base[:248]}-{n}"
        self._names.add(name)
        self._templates[shape] = name
        self.objects.append(self._template(name, count, share, models))
        return name

    def _template(
        self, name: str, count: int, share: int, models: tuple[str, ...]
    ) -> dict[str, Any]:
        exactly: dict[str, Any] = {
            "deviceClassName": DEVICE_CLASS_NAME,
            "allocationMode": "ExactCount",
            "count": count,
            "capacity": {"requests": {CAPACITY: str(share)}},
        }
        if models:
            listed = ", ".join(f'"{m}"' for m in models)
            attribute = f'device.attributes["{DRIVER}"].model'
            expression = f"{attribute} in [{listed}]"
            if self._unnamed_models:
                expression = f"has({attribute}) && {expression}"
            exactly["selectors"] = [{"cel": {"expression": expression}}]
        devices: dict[str, Any] = {"requests": [{"name": POD_CLAIM_NAME, "exactly": exactly}]}
        if count > 1:
            devices["constraints"] = [
                {"requests": [POD_CLAIM_NAME], "distinctAttribute": f"{DRIVER}/index"}
            ]
        return with_dra_defaults(
            RESOURCE_CLAIM_TEMPLATE,
            {
                "apiVersion": DRA_API_VERSION,
                "kind": RESOURCE_CLAIM_TEMPLATE,
                "metadata": {"name": name, "namespace": self.namespace},
                "spec": {"spec": {"devices": devices}},
            },
        )
