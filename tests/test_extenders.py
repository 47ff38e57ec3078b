"""Scheduler extenders over real HTTP on 127.0.0.1: wire format, errors, TLS, and scenarios
through the simulator and the `wasmsched simulate` command."""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from extender_server import (
    ExtenderServer,
    Reply,
    accept_bind,
    free_port,
    keep_names,
    label_filter,
    node_names,
    scores,
)
from sched_support import config as bare_config
from sched_support import default_profile_config as _config
from sched_support import node, placements, pod, registry, simulate
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node, Pod
from wasmsched.config import (
    ConfigError,
    Extender,
    ManagedResource,
    SchedulerConfig,
)
from wasmsched.extenders import (
    ExtenderError,
    HTTPExtender,
    Victims,
    build_extenders,
    ignored_resources,
)
from wasmsched.framework.node_info import NodeInfo
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.sim.result import SimulationResult
from wasmsched.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "extender"


def infos(*nodes: Node) -> list[NodeInfo]:
    return [NodeInfo(n) for n in nodes]


def client(url: str, **fields: Any) -> HTTPExtender:
    return HTTPExtender(Extender(url_prefix=url, **fields))


NODES = [
    node("node-1", labels={"disk": "ssd"}),
    node("node-2", labels={"disk": "hdd"}),
    node("node-3", labels={"disk": "ssd"}),
]
POD = pod("web-1")


# ---------------------------------------------------------------------------------------
# Wire format


def test_filter_sends_pod_and_node_list_and_keeps_returned_nodes() -> None:
    with ExtenderServer({"filter": label_filter("disk", "ssd")}) as srv:
        ext = client(srv.url + "/", filter_verb="filter")
        feasible, failed, unresolvable = ext.filter(POD, infos(*NODES))
        ext.close()
    assert [ni.name for ni in feasible] == ["node-1", "node-3"]
    assert failed == {"node-2": "node(s) didn't have label disk=ssd"}
    assert unresolvable == {}
    (req,) = srv.requests
    # urlPrefix's trailing slash is trimmed before "/" + verb
    assert req.path == "/scheduler/filter"
    assert req.headers["Content-Type"] == "application/json"
    assert req.body == {
        "Pod": POD.manifest,
        "Nodes": {"metadata": {}, "items": [n.manifest for n in NODES]},
        "NodeNames": None,
    }


def test_node_cache_capable_sends_only_names() -> None:
    handlers = {"filter": keep_names({"node-3", "node-1"}), "prioritize": scores({"node-3": 7})}
    with ExtenderServer(handlers) as srv:
        ext = client(
            srv.url, filter_verb="filter", prioritize_verb="prioritize", node_cache_capable=True
        )
        feasible, failed, _ = ext.filter(POD, infos(*NODES))
        ranked = ext.prioritize(POD, feasible)
        ext.close()
    expected_args = {
        "Pod": POD.manifest,
        "Nodes": None,
        "NodeNames": ["node-1", "node-2", "node-3"],
    }
    assert srv.bodies("filter") == [expected_args]
    assert srv.bodies("prioritize") == [
        {"Pod": POD.manifest, "Nodes": None, "NodeNames": ["node-1", "node-3"]}
    ]
    assert [ni.name for ni in feasible] == ["node-1", "node-3"]
    assert failed == {"node-2": "rejected by extender"}
    assert ranked == [("node-1", 0), ("node-3", 7)]


def test_prioritize_and_bind_wire_format() -> None:
    handlers = {"prioritize": scores({"node-2": 10}), "bind": accept_bind}
    bound = pod("db-0", namespace="shop")
    with ExtenderServer(handlers) as srv:
        ext = client(srv.url, prioritize_verb="prioritize", bind_verb="bind", weight=3)
        assert ext.prioritize(POD, infos(*NODES)) == [("node-1", 0), ("node-2", 10), ("node-3", 0)]
        ext.bind(bound, "node-2")
        ext.close()
    assert srv.bodies("prioritize") == [
        {
            "Pod": POD.manifest,
            "Nodes": {"metadata": {}, "items": [n.manifest for n in NODES]},
            "NodeNames": None,
        }
    ]
    assert srv.bodies("bind") == [
        {"PodName": "db-0", "PodNamespace": "shop", "PodUID": bound.uid, "Node": "node-2"}
    ]
    # one keep-alive connection for all calls, as Go's transport does
    assert len({r.client_port for r in srv.requests}) == 1


FILTER_REPLIES = [
    # Go decodes field names case-insensitively
    ({"nodenames": ["node-2"]}, True, ["node-2"], {}, {}),
    ({"NODENAMES": ["node-3", "node-1"]}, True, ["node-3", "node-1"], {}, {}),
    # node-cache-capable extenders may still answer with Nodes
    ({"Nodes": {"items": [{"metadata": {"name": "node-2"}}]}}, True, ["node-2"], {}, {}),
    # kube-scheduler ignores NodeNames from an extender that is not node-cache-capable
    ({"NodeNames": ["node-1"]}, False, [], {}, {}),
    ({"nodes": None, "failedNodes": {"node-1": "busy"}}, False, [], {"node-1": "busy"}, {}),
    (
        {"Nodes": {"items": []}, "FailedAndUnresolvableNodes": {"node-2": "gone"}},
        False,
        [],
        {},
        {"node-2": "gone"},
    ),
    ({"NodeNames": ["node-1", "node-1"]}, True, ["node-1"], {}, {}),
    (None, False, [], {}, {}),
]


@pytest.mark.parametrize(("reply", "cache", "kept", "failed", "unresolvable"), FILTER_REPLIES)
def test_filter_reply_decoding(
    reply: Any,
    cache: bool,
    kept: list[str],
    failed: dict[str, str],
    unresolvable: dict[str, str],
) -> None:
    with ExtenderServer({"filter": lambda args: reply}) as srv:
        ext = client(srv.url, filter_verb="filter", node_cache_capable=cache)
        got = ext.filter(POD, infos(*NODES))
        ext.close()
    assert ([ni.name for ni in got[0]], got[1], got[2]) == (kept, failed, unresolvable)


def test_disabled_verbs_do_nothing() -> None:
    ext = client("http://127.0.0.1:1")
    assert (ext.has_filter, ext.has_prioritize, ext.has_bind, ext.supports_preemption) == (
        False,
        False,
        False,
        False,
    )
    nodes = infos(*NODES)
    assert ext.filter(POD, nodes) == (nodes, {}, {})
    assert ext.prioritize(POD, nodes) == [("node-1", 0), ("node-2", 0), ("node-3", 0)]


ERRORS = [
    ("filter", {"Error": "quota exhausted"}, "quota exhausted"),
    ("filter", {"error": "lower-case too"}, "lower-case too"),
    ("filter", Reply(500, b"boom"), "failed filter with extender at URL {url}/filter, code 500"),
    ("filter", Reply(200, b""), "failed filter with extender at URL {url}/filter: EOF"),
    (
        "filter",
        Reply(200, b"{not json"),
        "failed filter with extender at URL {url}/filter: invalid JSON",
    ),
    ("filter", [1, 2], "ExtenderFilterResult: expected an object, got array"),
    ("filter", {"NodeNames": ["node-9"]}, 'claims a filtered node "node-9" which is not found'),
    ("filter", {"FailedNodes": {"node-1": 3}}, "FailedNodes: expected an object of strings"),
    ("prioritize", {"Host": "node-1"}, "HostPriorityList: expected an array, got object"),
    (
        "prioritize",
        [{"Host": "node-1", "Score": 2.5}],
        "HostPriorityList[0].Score: expected an integer",
    ),
    (
        "prioritize",
        Reply(404, b""),
        "failed prioritize with extender at URL {url}/prioritize, code 404",
    ),
    ("bind", {"Error": "binding refused"}, "binding refused"),
    ("bind", Reply(503, b""), "failed bind with extender at URL {url}/bind, code 503"),
]


@pytest.mark.parametrize(("verb", "reply", "message"), ERRORS)
def test_errors(verb: str, reply: Any, message: str) -> None:
    with ExtenderServer({verb: lambda args: reply}) as srv:
        ext = client(
            srv.url,
            filter_verb="filter",
            prioritize_verb="prioritize",
            bind_verb="bind",
            node_cache_capable=True,
        )
        with pytest.raises(ExtenderError) as err:
            if verb == "filter":
                ext.filter(POD, infos(*NODES))
            elif verb == "prioritize":
                ext.prioritize(POD, infos(*NODES))
            else:
                ext.bind(POD, "node-1")
        ext.close()
    assert message.format(url=srv.url) in str(err.value)


def test_trailing_data_after_the_reply_is_ignored() -> None:
    body = b' {"NodeNames": ["node-1"]}\n{"garbage": true}'
    with ExtenderServer({"filter": lambda args: Reply(200, body)}) as srv:
        ext = client(srv.url, filter_verb="filter", node_cache_capable=True)
        assert [ni.name for ni in ext.filter(POD, infos(*NODES))[0]] == ["node-1"]
        ext.close()


def test_transport_errors_read_like_go() -> None:
    port = free_port()
    ext = client(f"http://127.0.0.1:{port}/x", filter_verb="filter")
    with pytest.raises(ExtenderError) as err:
        ext.filter(POD, infos(*NODES))
    assert str(err.value) == (
        f'Post "http://127.0.0.1:{port}/x/filter": '
        f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    )
    bad = client("localhost:8888", filter_verb="filter")
    with pytest.raises(ExtenderError) as err:
        bad.filter(POD, infos(*NODES))
    assert str(err.value) == 'Post "localhost:8888/filter": unsupported protocol scheme "localhost"'


def test_timeout() -> None:
    with ExtenderServer({"filter": lambda args: {}}, delay=1.0) as srv:
        ext = client(srv.url, filter_verb="filter", http_timeout_seconds=0.2)
        with pytest.raises(ExtenderError) as err:
            ext.filter(POD, infos(*NODES))
        ext.close()
    assert str(err.value) == (
        f'Post "{srv.url}/filter": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)"
    )


def test_server_closing_connections_is_not_an_error() -> None:
    with ExtenderServer({"prioritize": scores({})}, close_after_reply=True) as srv:
        ext = client(srv.url, prioritize_verb="prioritize")
        for _ in range(3):
            ext.prioritize(POD, infos(*NODES))
        ext.close()
    assert len(srv.requests) == 3


def test_idle_connection_dropped_by_server_is_retried() -> None:
    with ExtenderServer({"prioritize": scores({"node-1": 4})}) as srv:
        ext = client(srv.url, prioritize_verb="prioritize")
        ext.prioritize(POD, infos(*NODES))
        srv.drop_connections()
        assert ext.prioritize(POD, infos(*NODES))[0] == ("node-1", 4)
        ext.close()
    assert len({r.client_port for r in srv.requests}) == 2


# ---------------------------------------------------------------------------------------
# Interest, ordering, ignored resources


def _gpu_pod(where: str, kind: str) -> Pod:
    container = {"name": "c", "image": "i", "resources": {kind: {"example.com/gpu": "1"}}}
    plain = {"name": "p", "image": "i"}
    spec: dict[str, Any] = {"containers": [plain]}
    if where == "initContainers":
        spec["initContainers"] = [container]
    else:
        spec["containers"] = [plain, container]
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g"}, "spec": spec})


@pytest.mark.parametrize(
    ("managed", "pod_", "interested"),
    [
        ([], POD, True),
        (["example.com/gpu"], POD, False),
        (["example.com/gpu"], _gpu_pod("containers", "requests"), True),
        (["example.com/gpu"], _gpu_pod("containers", "limits"), True),
        (["example.com/gpu"], _gpu_pod("initContainers", "requests"), True),
        (["example.com/gpu"], _gpu_pod("initContainers", "limits"), True),
        (["example.com/fpga"], _gpu_pod("containers", "requests"), False),
    ],
)
def test_is_interested(managed: list[str], pod_: Pod, interested: bool) -> None:
    ext = client(
        "http://127.0.0.1:1", managed_resources=[ManagedResource(name) for name in managed]
    )
    assert ext.is_interested(pod_) is interested


def test_build_puts_ignorable_extenders_last() -> None:
    configs = [
        Extender(url_prefix="http://a", ignorable=True),
        Extender(url_prefix="http://b"),
        Extender(url_prefix="http://c", ignorable=True),
        Extender(url_prefix="http://d"),
    ]
    assert [e.name for e in build_extenders(configs)] == [
        "http://b",
        "http://d",
        "http://a",
        "http://c",
    ]
    assert build_extenders([]) == []


def test_ignored_resources_are_the_ignored_by_scheduler_ones_in_configuration_order() -> None:
    # What NodeResourcesFit then ignores: tests/test_profile.py.
    cfg = _config(
        [
            {
                "urlPrefix": "http://a",
                "managedResources": [
                    {"name": "example.com/gpu", "ignoredByScheduler": True},
                    {"name": "example.com/fpga"},
                ],
            },
            {
                "urlPrefix": "http://b",
                "managedResources": [{"name": "x.io/y", "ignoredByScheduler": True}],
            },
        ]
    )
    assert ignored_resources(cfg.extenders) == ["example.com/gpu", "x.io/y"]


# ---------------------------------------------------------------------------------------
# Preemption


def test_process_preemption_round_trip() -> None:
    victim_a = pod("low-a", node_name="node-1")
    victim_b = pod("low-b", node_name="node-2")
    n1, n2 = NodeInfo(NODES[0]), NodeInfo(NODES[1])
    from wasmsched.framework.node_info import PodInfo

    n1.add_pod_info(PodInfo(victim_a))
    n2.add_pod_info(PodInfo(victim_b))
    lookup = {"node-1": n1, "node-2": n2}
    victims = {"node-1": Victims([victim_a], 0), "node-2": Victims([victim_b], 1)}

    def keep_node_2(args: Any) -> Any:
        return {
            "NodeNameToMetaVictims": {
                "node-2": {"Pods": [{"UID": victim_b.uid}], "NumPDBViolations": 1}
            }
        }

    with ExtenderServer({"preempt": keep_node_2}) as srv:
        full = client(srv.url, preempt_verb="preempt")
        meta = client(srv.url, preempt_verb="preempt", node_cache_capable=True)
        assert full.process_preemption(POD, victims, lookup) == {"node-2": Victims([victim_b], 1)}
        assert meta.process_preemption(POD, victims, lookup) == {"node-2": Victims([victim_b], 1)}
        full.close()
        meta.close()
    sent_full, sent_meta = srv.bodies("preempt")
    assert sent_full == {
        "Pod": POD.manifest,
        "NodeNameToVictims": {
            "node-1": {"Pods": [victim_a.manifest], "NumPDBViolations": 0},
            "node-2": {"Pods": [victim_b.manifest], "NumPDBViolations": 1},
        },
        "NodeNameToMetaVictims": None,
    }
    assert sent_meta == {
        "Pod": POD.manifest,
        "NodeNameToVictims": None,
        "NodeNameToMetaVictims": {
            "node-1": {"Pods": [{"UID": victim_a.uid}], "NumPDBViolations": 0},
            "node-2": {"Pods": [{"UID": victim_b.uid}], "NumPDBViolations": 1},
        },
    }


def test_process_preemption_unknown_victim() -> None:
    reply = {"NodeNameToMetaVictims": {"node-1": {"Pods": [{"UID": "nope"}]}}}
    with ExtenderServer({"preempt": lambda args: reply}) as srv:
        ext = client(srv.url, preempt_verb="preempt")
        with pytest.raises(
            ExtenderError, match=r"claims to preempt pod \(UID: nope\) on node: node-1"
        ):
            ext.process_preemption(POD, {}, {"node-1": NodeInfo(NODES[0])})
        ext.close()


# ---------------------------------------------------------------------------------------
# TLS


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    root = tmp_path_factory.mktemp("tls")
    out: dict[str, Path] = {}
    for name, san in (("ip", "IP:127.0.0.1"), ("dns", "DNS:extender.test")):
        subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                "/CN=extender.test", "-addext", f"subjectAltName={san}",
                "-keyout", str(root / f"{name}.key"), "-out", str(root / f"{name}.crt"),
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
        out[f"{name}.crt"] = root / f"{name}.crt"
        out[f"{name}.key"] = root / f"{name}.key"
    return out


def _server_tls(certs: dict[str, Path], name: str, client_ca: Path | None = None) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs[f"{name}.crt"], certs[f"{name}.key"])
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(client_ca)
    return ctx


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


@pytest.mark.parametrize(
    ("server", "enable_https", "tls", "ok"),
    [
        # enableHTTPS without a CA: kube-scheduler skips verification
        ("ip", True, None, True),
        ("ip", False, {"insecure": True}, True),
        ("ip", False, {"caFile": "{ip.crt}"}, True),
        ("ip", True, {"caData": "b64:{ip.crt}"}, True),
        # https with system roots only: the self-signed certificate is refused
        ("ip", False, None, False),
        ("ip", False, {"caFile": "{dns.crt}"}, False),
        # a certificate for a DNS name: verified only with serverName
        ("dns", False, {"caFile": "{dns.crt}"}, False),
        ("dns", False, {"caFile": "{dns.crt}", "serverName": "extender.test"}, True),
    ],
)
def test_https(
    certs: dict[str, Path],
    server: str,
    enable_https: bool,
    tls: dict[str, Any] | None,
    ok: bool,
) -> None:
    tls_config = _resolve(tls, certs)
    with ExtenderServer({"filter": keep_names({"node-1"})}, tls=_server_tls(certs, server)) as srv:
        ext = client(
            srv.url,
            filter_verb="filter",
            node_cache_capable=True,
            enable_https=enable_https,
            tls_config=tls_config,
        )
        if ok:
            assert [ni.name for ni in ext.filter(POD, infos(*NODES))[0]] == ["node-1"]
        else:
            with pytest.raises(ExtenderError, match=r"CERTIFICATE_VERIFY_FAILED"):
                ext.filter(POD, infos(*NODES))
        ext.close()


@pytest.mark.parametrize(
    "client_cert",
    [
        {"certFile": "{ip.crt}", "keyFile": "{ip.key}"},
        {"certData": "b64:{ip.crt}", "keyData": "b64:{ip.key}"},
        None,
    ],
)
def test_https_client_certificate(
    certs: dict[str, Path], client_cert: dict[str, str] | None
) -> None:
    tls = {"caFile": "{ip.crt}", **(client_cert or {})}
    server_tls = _server_tls(certs, "ip", client_ca=certs["ip.crt"])
    with ExtenderServer({"filter": keep_names({"node-2"})}, tls=server_tls) as srv:
        ext = client(
            srv.url, filter_verb="filter", node_cache_capable=True, tls_config=_resolve(tls, certs)
        )
        if client_cert is not None:
            assert [ni.name for ni in ext.filter(POD, infos(*NODES))[0]] == ["node-2"]
        else:
            with pytest.raises(ExtenderError):
                ext.filter(POD, infos(*NODES))
        ext.close()


@pytest.mark.parametrize(
    ("tls", "problem"),
    [
        ({"insecure": True, "caFile": "{ip.crt}"}, "root certificates file with the insecure flag"),
        ({"caFile": "/nonexistent/ca.crt"}, "caFile: No such file or directory"),
        ({"caData": "not base64!"}, "caData: illegal base64 data"),
        ({"caData": "b64:{ip.key}"}, "unable to load root certificates"),
        ({"certFile": "{ip.crt}"}, "certFile given without a client key"),
        ({"certFile": "{ip.crt}", "keyFile": "{dns.key}"}, "unable to load client certificate"),
    ],
)
def test_bad_tls_config_fails_at_build(
    certs: dict[str, Path], tls: dict[str, Any], problem: str
) -> None:
    cfg = Extender(url_prefix="https://127.0.0.1:1", tls_config=_resolve(tls, certs))
    with pytest.raises(ConfigError) as err:
        build_extenders([Extender(url_prefix="http://ok"), cfg], "sched.yaml")
    assert str(err.value).startswith("sched.yaml: extenders[1].tlsConfig: ")
    assert problem in str(err.value)


def _resolve(tls: dict[str, Any] | None, certs: dict[str, Path]) -> dict[str, Any] | None:
    """Fills "{ip.crt}" with a path, "b64:{ip.crt}" with the file's base64 content."""
    if tls is None:
        return None
    out: dict[str, Any] = {}
    for key, value in tls.items():
        if isinstance(value, str) and "{" in value:
            b64 = value.startswith("b64:")
            path = certs[value.removeprefix("b64:").strip("{}")]
            value = _b64(path) if b64 else str(path)
        out[key] = value
    return out


# ---------------------------------------------------------------------------------------
# Scenarios through the simulator


def _simulate(
    nodes: list[Node], pods: list[Pod], cfg: SchedulerConfig
) -> tuple[SimulationResult, Simulation]:
    sim = Simulation(ClusterObjects(nodes=nodes, pods=pods, others=[]), cfg, in_tree_registry())
    try:
        return sim.run(), sim
    finally:
        sim.close()
        for ext in sim.scheduler.extenders:
            if isinstance(ext, HTTPExtender):
                ext.close()


def _outcome(result: SimulationResult, name: str) -> Any:
    return next(o for o in result.outcomes if o.pod.name == name)


def _tainted(name: str, **labels: str) -> Node:
    taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
    return node(name, labels=labels, spec={"taints": [taint]})


def test_filter_narrows_nodes_and_fit_error_counts_extender_failures() -> None:
    nodes = [_tainted("node-1", disk="ssd"), node("node-2"), node("node-3")]
    with ExtenderServer({"filter": label_filter("disk", "ssd")}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "filterVerb": "filter"}])
        result, _ = _simulate(nodes, [pod("web-1")], cfg)
    out = _outcome(result, "web-1")
    assert out.result == "Unschedulable"
    # the tainted node never reaches the extender; the two others fail in it
    assert out.message.startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, "
        "2 node(s) didn't have label disk=ssd."
    )
    assert [node_names(b) for b in srv.bodies("filter")] == [["node-2", "node-3"]]


def test_extender_filter_leaves_one_node() -> None:
    nodes = [node("node-1"), node("node-2", labels={"disk": "ssd"}), node("node-3")]
    with ExtenderServer({"filter": label_filter("disk", "ssd")}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "filterVerb": "filter"}])
        result, _ = _simulate(nodes, [pod("a"), pod("b")], cfg)
    assert placements(result) == {"a": "node-2", "b": "node-2"}


@pytest.mark.parametrize("unresolvable", [False, True])
def test_unresolvable_takes_precedence_and_stops_preemption(unresolvable: bool) -> None:
    def reply(args: Any) -> Any:
        names = node_names(args)
        return {
            "NodeNames": [],
            "FailedNodes": {n: "try later" for n in names},
            "FailedAndUnresolvableNodes": {names[0]: "never here"} if unresolvable else {},
        }

    nodes = [node("node-1"), node("node-2")]
    low = pod("low", node_name="node-1", priority=0)
    high = pod("high", priority=100)
    with ExtenderServer({"filter": reply}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True}])
        result, _ = _simulate(nodes, [low, high], cfg)
    out = _outcome(result, "high")
    assert out.result == "Unschedulable"
    if unresolvable:
        assert out.message.startswith("0/2 nodes are available: 1 never here, 1 try later.")
    else:
        assert out.message.startswith("0/2 nodes are available: 2 try later.")
    # preemption dry-runs only the nodes that failed as resolvable: with node-1
    # unresolvable it is "not helpful"; otherwise it is tried (and has no victim to offer)
    if unresolvable:
        assert "1 Preemption is not helpful for scheduling" in out.message
    else:
        assert 'expected at least one victim pod on node "node-1"' in out.message


def test_prioritize_weight_changes_placement() -> None:
    nodes = [node("node-1"), node("node-2"), node("node-3")]
    with (
        ExtenderServer({"prioritize": scores({"node-1": 10})}) as a,
        ExtenderServer({"prioritize": scores({"node-3": 10})}) as b,
    ):
        first = _config(
            [
                {"urlPrefix": a.url, "prioritizeVerb": "prioritize", "weight": 1},
                {"urlPrefix": b.url, "prioritizeVerb": "prioritize", "weight": 2},
            ]
        )
        result, _ = _simulate(nodes, [pod("x")], first)
        assert placements(result) == {"x": "node-3"}
        second = _config(
            [
                {"urlPrefix": a.url, "prioritizeVerb": "prioritize", "weight": 3},
                {"urlPrefix": b.url, "prioritizeVerb": "prioritize", "weight": 2},
            ]
        )
        result, _ = _simulate(nodes, [pod("x")], second)
        assert placements(result) == {"x": "node-1"}


def test_prioritize_errors_are_ignored() -> None:
    nodes = [node("node-1"), node("node-2")]
    with ExtenderServer({"prioritize": lambda args: Reply(500, b"")}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "prioritizeVerb": "prioritize", "weight": 1}])
        result, _ = _simulate(nodes, [pod("x")], cfg)
    assert _outcome(result, "x").result == "Scheduled"
    assert len(srv.bodies("prioritize")) == 1


def test_bind_by_extender() -> None:
    nodes = [node("node-1")]
    with ExtenderServer({"bind": accept_bind}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "bindVerb": "bind"}])
        result, sim = _simulate(nodes, [pod("x", namespace="ns")], cfg)
    out = _outcome(result, "x")
    assert (out.result, out.node) == ("Scheduled", "node-1")
    assert sim.store.pods[out.pod.uid].node_name == "node-1"
    assert srv.bodies("bind") == [
        {"PodName": "x", "PodNamespace": "ns", "PodUID": out.pod.uid, "Node": "node-1"}
    ]


@pytest.mark.parametrize("ignorable", [False, True])
def test_bind_error(ignorable: bool) -> None:
    nodes = [node("node-1")]
    with ExtenderServer({"bind": lambda args: {"Error": "no capacity left"}}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "bindVerb": "bind", "ignorable": ignorable}])
        result, sim = _simulate(nodes, [pod("x")], cfg)
    out = _outcome(result, "x")
    if ignorable:
        # skipped: DefaultBinder binds
        assert (out.result, out.node) == ("Scheduled", "node-1")
    else:
        assert (out.result, out.message) == ("Error", "no capacity left")
        assert sim.store.pods[out.pod.uid].node_name == ""


def test_ignorable_extender_down_is_skipped() -> None:
    down = f"http://127.0.0.1:{free_port()}/scheduler"
    with ExtenderServer({"filter": label_filter("disk", "ssd")}) as srv:
        cfg = _config(
            [
                {"urlPrefix": down, "filterVerb": "filter", "ignorable": True},
                {"urlPrefix": srv.url, "filterVerb": "filter"},
            ]
        )
        result, _ = _simulate(list(NODES), [pod("x")], cfg)
    assert _outcome(result, "x").node in ("node-1", "node-3")


def test_extender_down_is_an_error() -> None:
    port = free_port()
    cfg = _config([{"urlPrefix": f"http://127.0.0.1:{port}/scheduler", "filterVerb": "filter"}])
    result, _ = _simulate(list(NODES), [pod("x")], cfg)
    out = _outcome(result, "x")
    assert out.result == "Error"
    assert out.message == (
        f'Post "http://127.0.0.1:{port}/scheduler/filter": '
        f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    )


def test_node_cache_capable_in_a_simulation() -> None:
    with ExtenderServer({"filter": keep_names({"node-2"})}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True}])
        result, _ = _simulate(list(NODES), [pod("x")], cfg)
    assert placements(result) == {"x": "node-2"}
    (args,) = srv.bodies("filter")
    assert args["Nodes"] is None
    assert sorted(args["NodeNames"]) == ["node-1", "node-2", "node-3"]


def _with_gpu(n: Node | Pod, kind: str = "requests") -> Any:
    """A copy of a node advertising 2 example.com/gpu, or of a pod asking for 1."""
    manifest = json.loads(json.dumps(n.manifest))
    if isinstance(n, Node):
        manifest["status"]["allocatable"]["example.com/gpu"] = "2"
        return Node(manifest)
    manifest["spec"]["containers"][0]["resources"][kind] = {"example.com/gpu": "1"}
    return Pod(manifest)


def test_managed_resources_limit_which_pods_the_extender_sees() -> None:
    nodes = [_with_gpu(node("node-1")), _with_gpu(node("node-2"))]
    with ExtenderServer({"filter": keep_names({"node-2"}, "gpu busy")}) as srv:
        ext = {
            "urlPrefix": srv.url,
            "filterVerb": "filter",
            "nodeCacheCapable": True,
            "managedResources": [{"name": "example.com/gpu"}],
        }
        result, _ = _simulate(
            nodes, [pod("web"), _with_gpu(pod("trainer"), "limits")], _config([ext])
        )
    assert _outcome(result, "trainer").node == "node-2"
    assert _outcome(result, "web").result == "Scheduled"
    assert [b["Pod"]["metadata"]["name"] for b in srv.bodies("filter")] == ["trainer"]


@pytest.mark.parametrize("ignored", [False, True])
def test_ignored_by_scheduler_resources_skip_node_resources_fit(ignored: bool) -> None:
    with ExtenderServer({"filter": keep_names({"node-1"})}) as srv:
        ext = {
            "urlPrefix": srv.url,
            "filterVerb": "filter",
            "nodeCacheCapable": True,
            "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": ignored}],
        }
        cfg = _config([ext])
        result, _ = _simulate([node("node-1"), node("node-2")], [_with_gpu(pod("trainer"))], cfg)
    out = _outcome(result, "trainer")
    if ignored:
        # the extender alone decides about the resource the nodes do not advertise
        assert (out.result, out.node) == ("Scheduled", "node-1")
    else:
        assert out.message.startswith("0/2 nodes are available: 2 Insufficient example.com/gpu.")
        assert srv.bodies("filter") == []


@pytest.mark.parametrize(
    ("verbs", "expected"),
    [({}, 1), ({"filterVerb": "filter"}, 3), ({"prioritizeVerb": "prioritize", "weight": 1}, 3)],
)
def test_extenders_make_the_scheduler_find_all_feasible_nodes(
    verbs: dict[str, Any], expected: int
) -> None:
    """With no score plugin, one feasible node is enough unless an extender filters or scores."""
    seen: list[int] = []

    def record(args: Any) -> Any:
        seen.append(len(node_names(args)))
        return {"NodeNames": node_names(args)} if "NodeNames" in args else []

    with ExtenderServer({"filter": record, "prioritize": record}) as srv:
        cfg = bare_config(
            [],
            ["PrioritySort", "DefaultBinder"],
            {"extenders": [{"urlPrefix": srv.url, "nodeCacheCapable": True, **verbs}]},
        )
        result, sim = simulate(list(NODES), [pod("x")], registry(), cfg)
        for ext in sim.scheduler.extenders:
            ext.close()  # type: ignore[attr-defined]
    assert _outcome(result, "x").result == "Scheduled"
    if verbs:
        assert seen == [expected]
    else:
        # nothing to call: the feasible-node search stops at the first node
        assert srv.requests == []


# ---------------------------------------------------------------------------------------
# End to end: the example server and `wasmsched simulate --config`


@pytest.fixture
def example_server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE / "server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield line.removeprefix("listening on ")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wasmsched() -> list[str]:
    script = Path(sys.executable).parent / "wasmsched"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from wasmsched.cli import main; main()"]


def test_simulate_with_the_example_extender(example_server: str, tmp_path: Path) -> None:
    data = yaml.safe_load((EXAMPLE / "scheduler-config.yaml").read_text())
    assert data["extenders"][0]["urlPrefix"] == "http://127.0.0.1:8888/scheduler"
    data["extenders"][0]["urlPrefix"] = f"{example_server}/scheduler"
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(data))
    run = subprocess.run(
        [
            *_wasmsched(), "simulate", "--cluster", str(EXAMPLE / "cluster.yaml"),
            "--config", str(config), "-o", "json", "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    pods = {p["name"]: p for p in json.loads(run.stdout)["pods"]}
    nodes = {name: p["node"] for name, p in pods.items()}
    # NodeNumber sends each pod to its digit's node; node-2 (hdd) is filtered out
    assert nodes["web-1"] == "node-1"
    assert nodes["web-3"] == "node-3"
    assert nodes["api-4"] == "node-4"
    assert nodes["cache-3"] == "node-3"
    assert nodes["db-2"] in ("node-1", "node-3", "node-4")
    assert pods["legacy-2"]["result"] == "Unschedulable"
    assert pods["legacy-2"]["message"].startswith(
        "0/4 nodes are available: 1 node(s) didn't have label disktype=ssd, "
        "3 node(s) didn't match Pod's node affinity/selector."
    )


def test_simulate_with_the_extender_down(tmp_path: Path) -> None:
    data = yaml.safe_load((EXAMPLE / "scheduler-config.yaml").read_text())
    port = free_port()
    data["extenders"][0]["urlPrefix"] = f"http://127.0.0.1:{port}/scheduler"
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(data))
    run = subprocess.run(
        [
            *_wasmsched(), "simulate", "--cluster", str(EXAMPLE / "cluster.yaml"),
            "--config", str(config), "-o", "json", "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["summary"]["error"] == 6
    assert all("connection refused" in p["message"] for p in report["pods"])


def test_preemption_asks_extenders_that_support_it() -> None:
    """The preempt verb narrows the candidates: the extender keeps node-2 only."""
    nodes = [node("node-1"), node("node-2")]
    low1 = pod("low-1", node_name="node-1", priority=0, cpu="3500m")
    low2 = pod("low-2", node_name="node-2", priority=0, cpu="3500m")
    high = pod("high", priority=100, cpu="3")

    def keep_node_2(args: Any) -> Any:
        meta = args["NodeNameToMetaVictims"]
        return {"NodeNameToMetaVictims": {"node-2": meta["node-2"]}}

    with ExtenderServer({"preempt": keep_node_2}) as srv:
        cfg = _config([{"urlPrefix": srv.url, "preemptVerb": "preempt", "nodeCacheCapable": True}])
        result, _ = _simulate(nodes, [low1, low2, high], cfg)
        asked = srv.bodies("preempt")
    assert sorted(asked[0]["NodeNameToMetaVictims"]) == ["node-1", "node-2"]
    assert [(p.victim, p.node) for p in result.preemptions] == [("default/low-2", "node-2")]
    out = _outcome(result, "high")
    assert (out.result, out.node) == ("Scheduled", "node-2")
