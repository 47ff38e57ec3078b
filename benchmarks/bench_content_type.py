"""JSON or protobuf between the live mode and kube-apiserver: what each costs, side by side.

Against a real kube-apiserver (tests/kube_apiserver.py, 1.37 by default) with 500 nodes and
2000 pending pods (bench_live.py's cluster), in one run:

* the API server's CPU (utime+stime of its process, /proc) for a full pod LIST paginated
  by 500 as the informers list, JSON and protobuf alternating, ``--lists`` times each;
* the API server's CPU while every pod gets a label (2000 merge patches from 8 threads)
  and a watch of the pods receives the 2000 MODIFIED events, with the watch in JSON and in
  protobuf, each beside one other watcher in protobuf (as kubelets and controllers watch
  in a real cluster) and beside one in JSON; the patches cost the same in every case, so
  the differences are the watch's encoding (the API server encodes an event once per
  serialization and shares it between the watchers that want it: cacheableObject);
* the API server's CPU for a watch that replays those 2000 events from its watch cache
  (a reflector resuming or a new watcher), JSON and protobuf alternating, after the events
  were sent to one other watcher in protobuf, then to one in JSON: only the replaying
  watch's encoding and writing in the window, without the patches' cost and noise;
* the client's CPU to decode the bytes it got: msgspec JSON (the live client's decoder)
  against the protobuf decoder (wasmsched.api.protobuf.decode), per pod, for the LIST
  pages and for the watch events;
* the API server's CPU per bound pod for the live mode's two writes, a pod's binding and
  its Scheduled event, as ``wasmsched run`` sends them (live/writer.py: post_binding and
  the LiveWriter's events, from 8 threads) with ``contentType`` JSON and protobuf, in
  batches of ``--write-batch`` pods alternating (``--writes-only``: this case alone;
  ``--write-profiles DIR``: each batch's CPU profile of the API server, whose serializer
  functions show the encoding's share where the process's CPU is too noisy).

    python benchmarks/bench_content_type.py [--kubernetes-version 1.37] [--lists 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import ssl
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import httpx2  # noqa: E402
import msgspec  # noqa: E402
from bench_live import _create  # noqa: E402
from bench_scheduling import make_node  # noqa: E402

from wasmsched.api.protobuf import decode as pb  # noqa: E402

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf,application/json"
_TICK = os.sysconf("SC_CLK_TCK")
_json = msgspec.json.Decoder().decode


def process_cpu(pid: int) -> float:
    """Seconds of CPU (user + system) the process used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


class Server:
    """An HTTP client of the API server as the admin, and the server's CPU counter."""

    def __init__(self, cluster: Any) -> None:
        assert cluster.admin is not None
        self.pid = cluster.apiserver.pid
        self.url = cluster.apiserver.url
        self.ca = str(cluster.apiserver.ca)
        self.auth = cluster.admin._credentials.header() or ""
        self.client = self.new_client()

    def new_client(self) -> httpx2.Client:
        """A client of its own (a watch closed from another thread leaves its pool)."""
        return httpx2.Client(
            base_url=self.url,
            verify=ssl.create_default_context(cafile=self.ca),
            headers={"Authorization": self.auth},
            timeout=60,
        )

    def cpu(self) -> float:
        return process_cpu(self.pid)

    def list_pages(self, accept: str) -> list[bytes]:
        pages, params = [], {"limit": "500"}
        while True:
            resp = self.client.get("/api/v1/pods", params=params, headers={"Accept": accept})
            resp.raise_for_status()
            pages.append(resp.content)
            if accept == JSON:
                token = _json(resp.content)["metadata"].get("continue")
            else:
                token = pb.decode(resp.content)["metadata"].get("continue")
            if not token:
                return pages
            params["continue"] = token


class Watch(threading.Thread):
    """A pod watch from ``rv`` keeping the raw bytes it receives, for ``seconds``."""

    def __init__(self, server: Server, accept: str, rv: str, seconds: int = 45) -> None:
        super().__init__(daemon=True)
        self.server, self.accept, self.rv, self.seconds = server, accept, rv, seconds
        self.chunks: list[bytes] = []
        self.ready = threading.Event()
        self.response: httpx2.Response | None = None
        self.error = ""
        self.ended = 0.0

    def run(self) -> None:
        # The server ends the watch: a response closed from another thread frees its socket
        # while this one reads it (a new connection may get the same descriptor).
        params = {"watch": "true", "resourceVersion": self.rv, "timeoutSeconds": str(self.seconds)}
        with (
            self.server.new_client().stream(
                "GET", "/api/v1/pods", params=params, headers={"Accept": self.accept}, timeout=180
            ) as resp,
        ):
            self.response = resp
            self.ready.set()
            try:
                for chunk in resp.iter_bytes():
                    self.chunks.append(chunk)
            except Exception as err:
                self.error = repr(err)
            self.ended = time.monotonic()

    def close(self) -> None:
        self.join(self.seconds + 30)


def _events(watch: Watch) -> int:
    data = b"".join(watch.chunks)
    if watch.accept == JSON:
        return data.count(b"\n")
    events, pos = 0, 0
    while len(data) - pos >= 4:
        pos += 4 + int.from_bytes(data[pos : pos + 4], "big")
        events += pos <= len(data)
    return events


def watch_case(
    server: Server, cluster: Any, ours: str, other: str, round_: int, pods: int
) -> dict[str, Any]:
    """API server CPU for ``pods`` patches with ``ours`` and ``other`` watching the pods."""
    rv = _json(server.client.get("/api/v1/pods", params={"limit": "1"}).content)["metadata"][
        "resourceVersion"
    ]
    watches = [Watch(server, ours, rv), Watch(server, other, rv)]
    for w in watches:
        w.start()
        w.ready.wait(30)
    started = server.cpu()
    _patch_all(cluster, pods, str(round_))
    while any(w.is_alive() and _events(w) < pods for w in watches):
        time.sleep(0.5)
    used = server.cpu() - started
    for w in watches:
        w.close()
    return {
        "ours": "protobuf" if ours != JSON else "json",
        "other": "protobuf" if other != JSON else "json",
        "apiserver_cpu_s": round(used, 3),
        "events": _events(watches[0]),
        "bytes": sum(len(c) for c in watches[0].chunks),
        "chunks": watches[0].chunks,
    }


def replay_case(server: Server, cluster: Any, other: str, pods: int, repeat: int) -> dict[str, Any]:
    """The API server's CPU for a watch that replays ``pods`` MODIFIED events from its watch
    cache, JSON and protobuf alternating, after they were dispatched to one ``other``
    watcher (which had the server encode each event once in its format)."""
    rv = _json(server.client.get("/api/v1/pods", params={"limit": "1"}).content)["metadata"][
        "resourceVersion"
    ]
    live = Watch(server, other, rv)
    live.start()
    live.ready.wait(30)
    _patch_all(cluster, pods, f"replay-{other[:10]}")
    while live.is_alive() and _events(live) < pods:
        time.sleep(0.2)
    cpu: dict[str, list[float]] = {"json": [], "protobuf": []}
    for _ in range(repeat):
        for name, accept in (("json", JSON), ("protobuf", PROTOBUF)):
            replay = Watch(server, accept, rv, seconds=15)
            started = server.cpu()
            replay.start()
            while replay.is_alive() and _events(replay) < pods:
                time.sleep(0.05)
            cpu[name].append(server.cpu() - started)
            replay.close()
    live.close()
    return {
        "other": "protobuf" if other != JSON else "json",
        "replay_apiserver_cpu_ms": {k: round(min(v) * 1000, 1) for k, v in cpu.items()},
    }


def writes_case(
    cluster: Any, pods: int, batch: int, profiles: Path | None = None
) -> dict[str, Any]:
    """The API server's CPU per pod for binding ``pods`` pending pods and posting their
    Scheduled events through the live writer, JSON and protobuf batches alternating; with
    ``profiles`` (a server run with --profiling=true), each batch's CPU profile of the API
    server (PROFILE_SECONDS from its start) is written there."""
    from wasmsched.api.objects import Pod
    from wasmsched.framework.interfaces import Event
    from wasmsched.live import ApiClient, load_kube_config
    from wasmsched.live.writer import Dispatcher, LiveWriter, post_binding

    pending = [Pod(p) for p in cluster.pods() if not p["spec"].get("nodeName")][:pods]
    nodes = [n["metadata"]["name"] for n in cluster.request("GET", "/api/v1/nodes")["items"]]
    cpu: dict[str, list[float]] = {"json": [], "protobuf": []}
    seconds: dict[str, list[float]] = {"json": [], "protobuf": []}
    for start in range(0, len(pending) - batch + 1, batch):
        name = "json" if start // batch % 2 == 0 else "protobuf"
        profile = None
        if profiles is not None:
            profile = _Profile(Server(cluster), profiles / f"{name}-{start // batch}.pprof")
            profile.start()
            time.sleep(0.5)  # the profile has begun
        api = ApiClient(
            load_kube_config(cluster.admin_kubeconfig),
            accept_protobuf=name == "protobuf",
            send_protobuf=name == "protobuf",
        )
        dispatcher = Dispatcher(workers=8, event_workers=8, event_queue_length=batch)
        writer = LiveWriter(api, dispatcher, {}.get)
        began, began_at = process_cpu(cluster.apiserver.pid), time.monotonic()
        for i, pod in enumerate(pending[start : start + batch]):
            node = nodes[(start + i) % len(nodes)]
            dispatcher.submit(
                pod.uid, lambda api=api, pod=pod, node=node: post_binding(api, pod, node)
            )
            note = f"Successfully assigned {pod.namespace}/{pod.name} to {node}"
            writer.record_event(
                Event.about_pod(0.0, pod, "Normal", "Scheduled", "Binding", note, "wasmsched")
            )
        dispatcher.drain(120)
        cpu[name].append(process_cpu(cluster.apiserver.pid) - began)
        seconds[name].append(round(time.monotonic() - began_at, 2))
        dispatcher.close()
        api.close()
        if profile is not None:
            profile.join()
    return {
        "batch": batch,
        "batches": {k: len(v) for k, v in cpu.items()},
        "batch_seconds": seconds,
        "apiserver_cpu_ms_per_pod": {
            k: [round(s * 1000 / batch, 3) for s in v] for k, v in cpu.items()
        },
        "median": {k: round(statistics.median(v) * 1000 / batch, 3) for k, v in cpu.items()},
    }


PROFILE_SECONDS = 20


class _Profile(threading.Thread):
    """The API server's CPU profile (/debug/pprof/profile) for PROFILE_SECONDS, to ``path``
    (read with ``go tool pprof -top -focus='serializer/(json|protobuf)' PATH``)."""

    def __init__(self, server: Server, path: Path) -> None:
        super().__init__(daemon=True)
        self.server, self.path = server, path

    def run(self) -> None:
        params = {"seconds": str(PROFILE_SECONDS)}
        resp = self.server.new_client().get(
            "/debug/pprof/profile", params=params, timeout=PROFILE_SECONDS + 60
        )
        resp.raise_for_status()
        self.path.write_bytes(resp.content)


def _patch_all(cluster: Any, pods: int, value: str) -> None:
    patch = {"metadata": {"labels": {"round": value}}}

    def one(i: int) -> None:
        cluster.request(
            "PATCH",
            f"/api/v1/namespaces/default/pods/pod-{i}",
            patch,
            content_type="application/merge-patch+json",
        )

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(pods)))


def _per_pod_us(fn: Callable[[], object], pods: int, repeat: int = 5) -> float:
    """The best of ``repeat`` runs, the results kept (as an informer's store keeps them:
    the cyclic collector's passes over them count)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        started = time.process_time()
        kept = fn()
        best = min(best, time.process_time() - started)
        del kept
    return round(best / pods * 1e6, 2)


def _decode_frames(stream: bytes) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    pb.decode_watch_frames(iter([stream]), events.append)
    return events


def client_decode(pages: dict[str, list[bytes]], watch: dict[str, list[bytes]]) -> dict[str, Any]:
    """The client's CPU to decode the same LIST pages and watch events, µs per pod."""
    json_lines = [line for line in b"".join(watch["json"]).splitlines() if line]
    pb_stream = b"".join(watch["protobuf"])
    pods = sum(len(_json(p)["items"]) for p in pages["json"])
    events = len(json_lines)
    out = {
        "list_json_us_per_pod": _per_pod_us(lambda: [_json(p) for p in pages["json"]], pods),
        "list_protobuf_us_per_pod": _per_pod_us(
            lambda: [pb.decode(p) for p in pages["protobuf"]], pods
        ),
        "watch_json_us_per_event": _per_pod_us(lambda: [_json(x) for x in json_lines], events),
        "watch_protobuf_us_per_event": _per_pod_us(lambda: _decode_frames(pb_stream), events),
    }
    out["list_ratio_json_over_protobuf"] = round(
        out["list_json_us_per_pod"] / out["list_protobuf_us_per_pod"], 2
    )
    out["watch_ratio_json_over_protobuf"] = round(
        out["watch_json_us_per_event"] / out["watch_protobuf_us_per_event"], 2
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubernetes-version", default="1.37", choices=["1.33", "1.37"])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--lists", type=int, default=5)
    parser.add_argument("--write-batch", type=int, default=250)
    parser.add_argument("--writes-only", action="store_true")
    parser.add_argument(
        "--write-profiles", type=Path, help="a folder for the write batches' CPU profiles"
    )
    args = parser.parse_args()
    if not pb.AVAILABLE:
        raise SystemExit("the protobuf decoder is not built (python setup.py build_ext --inplace)")
    from kube_apiserver import start_cluster

    profiling = ["--profiling=true"] if args.write_profiles else []
    cluster = start_cluster(profiling, version=args.kubernetes_version)
    if args.write_profiles:
        args.write_profiles.mkdir(parents=True, exist_ok=True)
    try:
        for i in range(args.nodes):
            node = dict(make_node(i).manifest)
            node["status"] = {k: v for k, v in node["status"].items() if k != "conditions"}
            cluster.add_node(node)
        _create(cluster, [f"pod-{i}" for i in range(args.pods)])
        if args.writes_only:
            print(
                json.dumps(
                    {
                        "writes": writes_case(
                            cluster, args.pods, args.write_batch, args.write_profiles
                        )
                    }
                )
            )
            return
        server = Server(cluster)
        pages: dict[str, list[bytes]] = {}
        list_cpu: dict[str, list[float]] = {"json": [], "protobuf": []}
        for _ in range(args.lists):
            for name, accept in (("json", JSON), ("protobuf", PROTOBUF)):
                started = server.cpu()
                pages[name] = server.list_pages(accept)
                list_cpu[name].append(server.cpu() - started)
        rows: list[dict[str, Any]] = []
        watch_bytes: dict[str, list[bytes]] = {}
        for round_, (ours, other) in enumerate(
            [(JSON, PROTOBUF), (PROTOBUF, PROTOBUF), (JSON, JSON), (PROTOBUF, JSON)]
        ):
            row = watch_case(server, cluster, ours, other, round_, args.pods)
            watch_bytes[row["ours"]] = row.pop("chunks")
            rows.append(row)
            print(json.dumps(row), flush=True)
        result = {
            "kubernetes": args.kubernetes_version,
            "nodes": args.nodes,
            "pods": args.pods,
            "list_apiserver_cpu_ms": {k: round(min(v) * 1000, 1) for k, v in list_cpu.items()},
            "list_bytes": {k: sum(len(p) for p in v) for k, v in pages.items()},
            "watch": rows,
            "replay": [replay_case(server, cluster, o, args.pods, 2) for o in (PROTOBUF, JSON)],
            "client": client_decode(pages, watch_bytes),
            "writes": writes_case(cluster, args.pods, args.write_batch, args.write_profiles),
        }
        print(json.dumps(result, indent=1))
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
