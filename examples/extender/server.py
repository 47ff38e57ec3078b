#!/usr/bin/env python3
"""An example scheduler extender speaking kube-scheduler's extender protocol (stdlib only).

filter:      keeps the nodes that carry a label (default disktype=ssd); the others fail
             with "node(s) didn't have label disktype=ssd". Needs full Nodes in the request
             (nodeCacheCapable: false), since it has no node cache of its own.
prioritize:  NodeNumber, as in kube-scheduler-wasm-extension's example: a node whose name
             ends with the same digit as the pod's name scores MaxExtenderPriority (10),
             the others 0. Works with Nodes or NodeNames.

Run:  python server.py --port 8888 [--label disktype=ssd] [--host 127.0.0.1]
With --port 0 the system picks a free port. The first line printed is
"listening on http://HOST:PORT", then one line per request.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_EXTENDER_PRIORITY = 10


def candidates(args: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]] | None]:
    """(node names, node objects or None when only names were sent)."""
    if args.get("Nodes") is not None:
        items = args["Nodes"].get("items") or []
        return [n["metadata"]["name"] for n in items], items
    return list(args.get("NodeNames") or []), None


def filter_nodes(args: dict[str, Any], key: str, value: str) -> dict[str, Any]:
    _, items = candidates(args)
    if items is None:
        return {"Error": "this extender needs full nodes: set nodeCacheCapable: false"}
    reason = f"node(s) didn't have label {key}={value}"
    keep, failed = [], {}
    for node in items:
        labels = node["metadata"].get("labels") or {}
        if labels.get(key) == value:
            keep.append(node)
        else:
            failed[node["metadata"]["name"]] = reason
    return {
        "Nodes": {"metadata": {}, "items": keep},
        "NodeNames": None,
        "FailedNodes": failed,
        "FailedAndUnresolvableNodes": {},
        "Error": "",
    }


def node_number(args: dict[str, Any]) -> list[dict[str, Any]]:
    pod_name = args["Pod"]["metadata"]["name"]
    want = pod_name[-1] if pod_name and pod_name[-1].isdigit() else None
    names, _ = candidates(args)
    return [
        {"Host": n, "Score": MAX_EXTENDER_PRIORITY if want is not None and n[-1:] == want else 0}
        for n in names
    ]


def make_server(host: str, port: int, label: tuple[str, str]) -> ThreadingHTTPServer:
    key, value = label

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                args = json.loads(self.rfile.read(length))
            except ValueError:
                self._send(400, {"Error": "request body is not JSON"})
                return
            if self.path.endswith("/filter"):
                reply: Any = filter_nodes(args, key, value)
            elif self.path.endswith("/prioritize"):
                reply = node_number(args)
            else:
                self._send(404, {"Error": f"no verb at {self.path}"})
                return
            pod = args.get("Pod", {}).get("metadata", {})
            print(f"{self.path} {pod.get('namespace', 'default')}/{pod.get('name')}", flush=True)
            self._send(200, reply)

        def _send(self, status: int, reply: Any) -> None:
            body = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line per request is printed above

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8888)
    parser.add_argument("--label", default="disktype=ssd", help="KEY=VALUE nodes must carry")
    opts = parser.parse_args(argv)
    key, sep, value = opts.label.partition("=")
    if not sep or not key:
        parser.error("--label must be KEY=VALUE")
    server = make_server(opts.host, opts.port, (key, value))
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main(sys.argv[1:])
