"""Reading a trace from the files a user gives: our JSON lines, annotated manifests, or a
public format's files (told apart by suffix and header)."""

from __future__ import annotations

from pathlib import Path

from wasmsched.api.manifests import ClusterObjects, load_manifests
from wasmsched.api.objects import Node, Pod
from wasmsched.replay.alibaba import read_alibaba_gpu
from wasmsched.replay.trace import TraceError, TraceEvent, events_from_annotations, read_jsonl


def read_trace(
    paths: list[Path], gpu_share: str = "whole", gpu_model: str = "extended"
) -> tuple[list[TraceEvent], ClusterObjects]:
    """The events of the given trace files and the manifests they leave standing at time 0.

    ``.jsonl``/``.json``: our JSON-lines format; ``.yaml``/``.yml`` or a directory:
    manifests, annotated ones being arrivals; two ``.csv`` files: Alibaba's openb node and
    pod lists (told apart by their header).
    """
    events: list[TraceEvent] = []
    standing = ClusterObjects()
    csvs = [p for p in paths if p.suffix == ".csv"]
    if csvs:
        if len(csvs) != 2:
            raise TraceError(
                "--trace: an Alibaba GPU trace is two CSV files (the node list and the pod "
                f"list), got {len(csvs)}"
            )
        heads = {p: p.open(encoding="utf-8").readline() if p.is_file() else "" for p in csvs}
        nodes = [p for p in csvs if heads[p].startswith("sn,")]
        pods = [p for p in csvs if p not in nodes]
        if len(nodes) != 1:
            raise TraceError(
                f"{csvs[0]}: cannot tell the node list (header sn,cpu_milli,...) from the pod list"
            )
        imported = read_alibaba_gpu(
            nodes[0],
            pods[0],
            gpu_share=gpu_share,  # type: ignore[arg-type]
            gpu_model=gpu_model,  # type: ignore[arg-type]
        )
        events.extend(imported.events)
        standing.others.extend(imported.objects)
    for path in paths:
        if path.suffix == ".csv":
            continue
        if path.suffix in (".jsonl", ".json", ".ndjson"):
            events.extend(read_jsonl(path))
            continue
        objects = load_manifests(path)
        manifests = [n.manifest for n in objects.nodes] + [p.manifest for p in objects.pods]
        found, rest = events_from_annotations([*manifests, *objects.others], str(path))
        events.extend(found)
        for manifest in rest:
            kind = manifest.get("kind")
            if kind == "Node":
                standing.nodes.append(Node(manifest))
            elif kind == "Pod":
                standing.pods.append(Pod(manifest))
            else:
                standing.others.append(dict(manifest))
    return events, standing
