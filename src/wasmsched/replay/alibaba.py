"""An importer for Alibaba's GPU cluster trace (``cluster-trace-gpu-v2023``, the "openb"
CSV files).

Two CSVs: a node list ``sn,cpu_milli,memory_mib,gpu,model`` and a pod list
``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
deletion_time,scheduled_time`` (times in seconds from the trace's start; an empty
deletion time means the pod was still there when the trace ended).

Mapping onto Kubernetes objects:

- a node gets ``cpu``, ``memory`` and its GPUs (``nvidia.com/gpu``, or 1000
  ``alibaba.com/gpu-milli`` per GPU in milli mode) allocatable, and its GPU model in the
  label ``alibaba.com/gpu-model``;
- a pod requests ``cpu`` and ``memory``; with ``gpu_share="whole"`` (the default) it asks
  for ``max(num_gpu, 1 if gpu_milli > 0 else 0)`` whole ``nvidia.com/gpu``; with
  ``"milli"`` it asks for ``num_gpu * gpu_milli`` of the node-level extended resource
  ``alibaba.com/gpu-milli`` (1000 per GPU). Milli mode does not model per-GPU packing: a
  node with two half-used GPUs can take a task that needs one whole GPU;
- ``gpu_spec`` (``V100M16|V100M32``) becomes a required node affinity on the model label;
- with ``gpu_model="dra"`` GPUs are devices in ResourceSlices and pods ask for them
  through ResourceClaimTemplates instead (``wasmsched.replay.alibaba_dra``): no GPU
  extended resource, no model affinity;
- the pod arrives at ``creation_time`` and, once bound, runs ``deletion_time -
  scheduled_time`` seconds (the run time it had in the trace); pods never scheduled in
  the trace are deleted at ``deletion_time`` if they are still waiting then.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wasmsched.replay.alibaba_dra import POD_CLAIM_NAME, AlibabaDra
from wasmsched.replay.trace import AddNode, CreateObject, TraceError, TraceEvent

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
GPU_RESOURCE = "nvidia.com/gpu"
GPU_MILLI_RESOURCE = "alibaba.com/gpu-milli"
GPU_MODEL_LABEL = "alibaba.com/gpu-model"
QOS_LABEL = "alibaba.com/qos"
NAMESPACE = "default"

GpuShare = Literal["whole", "milli"]
# How GPUs are modelled: node-level extended resources (as --gpu-share says), or DRA
# devices.
GpuModel = Literal["extended", "dra"]
GPU_MODELS = ("extended", "dra")


def _rows(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[str, dict[str, str]]]:
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as e:
        raise TraceError(f"{path}: {e.strerror or e}") from None
    with handle:
        reader = csv.DictReader(handle)
        header = tuple(reader.fieldnames or ())
        missing = [c for c in columns if c not in header]
        if missing:
            raise TraceError(
                f"{path}: line 1: missing column {missing[0]} (expected {','.join(columns)})"
            )
        for row in reader:
            yield f"{path}: line {reader.line_num}", row


def _int(row: Mapping[str, str], column: str, where: str, default: int | None = None) -> int:
    text = (row.get(column) or "").strip()
    if not text:
        if default is not None:
            return default
        raise TraceError(f"{where}: {column}: empty")
    try:
        value = float(text)
    except ValueError:
        raise TraceError(f"{where}: {column}: not a number: {text!r}") from None
    if value < 0 or value != int(value):
        raise TraceError(f"{where}: {column}: expected a whole number >= 0, got {text!r}")
    return int(value)


def _time(row: Mapping[str, str], column: str, where: str) -> float | None:
    text = (row.get(column) or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise TraceError(f"{where}: {column}: not a number: {text!r}") from None
    if value < 0:
        raise TraceError(f"{where}: {column}: must be >= 0, got {text!r}")
    return value


def _dns_name(text: str) -> str:
    out = "".join(c if c.isalnum() or c in "-." else "-" for c in text.lower()).strip("-.")
    return out[:253] or "x"


def node_manifest(
    row: Mapping[str, str], where: str, gpu_share: GpuShare, dra: AlibabaDra | None = None
) -> dict[str, Any]:
    """The Node of one row of the node list (GPUs as the pods of ``gpu_share`` ask, or
    as devices of ``dra``)."""
    name = _dns_name((row.get("sn") or "").strip())
    gpus = _int(row, "gpu", where, 0)
    allocatable = {
        "cpu": f"{_int(row, 'cpu_milli', where)}m",
        "memory": f"{_int(row, 'memory_mib', where)}Mi",
        "pods": "110",
    }
    if dra is not None:
        dra.add_node(name, gpus, row.get("model") or "", where)
    elif gpu_share == "whole":
        allocatable[GPU_RESOURCE] = str(gpus)
    else:
        allocatable[GPU_MILLI_RESOURCE] = str(1000 * gpus)
    labels = {"kubernetes.io/hostname": name}
    model = (row.get("model") or "").strip()
    if model:
        labels[GPU_MODEL_LABEL] = model
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": dict(allocatable), "allocatable": allocatable},
    }


def pod_manifest(
    row: Mapping[str, str], where: str, gpu_share: GpuShare, dra: AlibabaDra | None = None
) -> dict[str, Any]:
    """The Pod of one row of the pod list (its GPUs through a claim of ``dra``)."""
    name = _dns_name((row.get("name") or "").strip())
    num_gpu = _int(row, "num_gpu", where, 0)
    gpu_milli = _int(row, "gpu_milli", where, 0)
    if gpu_milli > 1000:
        raise TraceError(f"{where}: gpu_milli: expected 0..1000 (per GPU), got {gpu_milli}")
    requests: dict[str, str] = {
        "cpu": f"{_int(row, 'cpu_milli', where)}m",
        "memory": f"{_int(row, 'memory_mib', where)}Mi",
    }
    resources: dict[str, Any] = {"requests": requests}
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "trace", "resources": resources}]
    }
    if dra is not None:
        if num_gpu or gpu_milli:
            template = dra.pod_claim(row, num_gpu, gpu_milli, where)
            spec["resourceClaims"] = [
                {"name": POD_CLAIM_NAME, "resourceClaimTemplateName": template}
            ]
            resources["claims"] = [{"name": POD_CLAIM_NAME}]
    elif gpu_share == "whole":
        whole = max(num_gpu, 1 if gpu_milli > 0 else 0)
        if whole:
            requests[GPU_RESOURCE] = str(whole)
    elif num_gpu * gpu_milli:
        requests[GPU_MILLI_RESOURCE] = str(num_gpu * gpu_milli)
    models = [m for m in (row.get("gpu_spec") or "").split("|") if m.strip()]
    if models and dra is None:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": GPU_MODEL_LABEL,
                                    "operator": "In",
                                    "values": [m.strip() for m in models],
                                }
                            ]
                        }
                    ]
                }
            }
        }
    labels = {"app.kubernetes.io/part-of": "alibaba-gpu-trace"}
    qos = (row.get("qos") or "").strip()
    if qos:
        labels[QOS_LABEL] = _dns_name(qos)[:63]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": spec,
    }


@dataclass
class AlibabaTrace:
    """An imported trace: its events, and the objects that stand from time 0 (with
    ``--gpu-model dra``: the DeviceClass, ResourceSlices and ResourceClaimTemplates)."""

    events: list[TraceEvent] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)


def import_alibaba_gpu(
    nodes_csv: Path, pods_csv: Path, *, gpu_share: GpuShare = "whole"
) -> list[TraceEvent]:
    """The trace of an openb node list and pod list: nodes at time 0, then each pod at its
    creation time with its trace run time (GPUs as extended resources)."""
    return read_alibaba_gpu(nodes_csv, pods_csv, gpu_share=gpu_share).events


def read_alibaba_gpu(
    nodes_csv: Path,
    pods_csv: Path,
    *,
    gpu_share: GpuShare = "whole",
    gpu_model: GpuModel = "extended",
) -> AlibabaTrace:
    """The trace of an openb node list and pod list, GPUs modelled as ``gpu_model`` says."""
    if gpu_share not in ("whole", "milli"):
        raise TraceError(f"--gpu-share: expected whole or milli, got {gpu_share!r}")
    if gpu_model not in GPU_MODELS:
        raise TraceError(f"--gpu-model: expected extended or dra, got {gpu_model!r}")
    dra = AlibabaDra(NAMESPACE) if gpu_model == "dra" else None
    events: list[TraceEvent] = []
    seen_nodes: set[str] = set()
    for where, row in _rows(nodes_csv, NODE_COLUMNS):
        manifest = node_manifest(row, where, gpu_share, dra)
        name = manifest["metadata"]["name"]
        if name in seen_nodes:
            raise TraceError(f"{where}: sn: duplicate node {name!r}")
        seen_nodes.add(name)
        events.append(AddNode(0.0, manifest))
    if not seen_nodes:
        raise TraceError(f"{nodes_csv}: no nodes")
    seen_pods: set[str] = set()
    for where, row in _rows(pods_csv, POD_COLUMNS):
        manifest = pod_manifest(row, where, gpu_share, dra)
        name = manifest["metadata"]["name"]
        if name in seen_pods:
            raise TraceError(f"{where}: name: duplicate pod {name!r}")
        seen_pods.add(name)
        created = _time(row, "creation_time", where) or 0.0
        deleted = _time(row, "deletion_time", where)
        scheduled = _time(row, "scheduled_time", where)
        duration = None
        delete_at = None
        if deleted is not None and scheduled is not None and deleted >= scheduled:
            duration = deleted - scheduled
        elif deleted is not None:
            delete_at = max(deleted, created)
        events.append(CreateObject(created, manifest, duration, delete_at))
    return AlibabaTrace(events, dra.objects if dra is not None else [])


def to_jsonl_records(events: list[TraceEvent]) -> Iterator[dict[str, Any]]:
    """Trace events as records of our JSON-lines format (``wasmsched import``)."""
    for event in events:
        if isinstance(event, AddNode):
            yield {"at": event.at, "node": dict(event.manifest)}
        elif isinstance(event, CreateObject):
            record: dict[str, Any] = {"at": event.at, "create": dict(event.manifest)}
            if event.duration is not None:
                record["duration"] = event.duration
            if event.delete_at is not None:
                record["deleteAt"] = event.delete_at
            yield record
