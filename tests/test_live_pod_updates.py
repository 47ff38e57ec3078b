"""Pod.updated: an informer's newer version of a pod keeps what the older one parsed when
only the binding, the status and the bookkeeping changed (live/runner.py: _apply_pod)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from live_support import pod
from wasmsched.api.objects import _POD_PROPERTIES, Pod


def stored(name: str = "web-0") -> dict[str, Any]:
    p = pod(name, cpu="250m", tolerations=[{"key": "k", "operator": "Exists"}])
    p["metadata"].update(uid="u-1", resourceVersion="10", managedFields=[{"manager": "a"}])
    p["status"] = {"phase": "Pending"}
    return p


def bound(manifest: dict[str, Any], node: str = "node-1") -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    out["spec"]["nodeName"] = node
    out["metadata"].update(resourceVersion="11", managedFields=[{"manager": "b"}])
    out["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    return out


def parsed(p: Pod) -> dict[str, Any]:
    p.validate()
    # repr: some parsed values (node affinity) have no __eq__.
    return {name: repr(getattr(p, name)) for name in _POD_PROPERTIES}


def test_a_binding_keeps_the_parsed_spec() -> None:
    old = Pod(stored())
    old.validate()
    new = old.updated(bound(stored()))
    assert new.requests is old.requests and new.tolerations is old.tolerations
    assert parsed(new) == parsed(Pod(bound(stored())))
    assert new.node_name == "node-1" and old.node_name == ""
    assert new.metadata["resourceVersion"] == "11"


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m["metadata"]["labels"].update(app="other"),
        lambda m: m["metadata"].update(deletionTimestamp="2026-12-04T20:00:00Z"),
        lambda m: m["spec"]["containers"][0]["resources"]["requests"].update(cpu="2"),
        lambda m: m["spec"].update(priority=7),
        lambda m: m["spec"].pop("tolerations"),
    ],
    ids=["labels", "deletion", "requests", "priority", "tolerations"],
)
def test_any_other_change_parses_anew(change: Any) -> None:
    old = Pod(stored())
    old.validate()
    manifest = bound(stored())
    change(manifest)
    new = old.updated(manifest)
    # Parsed anew: nothing the old version parsed is carried over. (Identity of the parsed
    # values no longer tells: equal parts of a spec share them, api/pod_spec.)
    assert set(new.__dict__) == {"manifest"}
    assert parsed(new) == parsed(Pod(manifest))


def test_a_binding_that_copies_the_nodes_topology_labels_keeps_the_parsed_spec() -> None:
    # kube-apiserver 1.35+ (PodTopologyLabels admission) adds the node's zone and region
    # labels to the pod it binds: the spec parsed before is kept, the labels are new.
    old = Pod(stored())
    old.validate()
    manifest = bound(stored())
    manifest["metadata"]["labels"]["topology.kubernetes.io/zone"] = "zone-0"
    manifest["metadata"]["labels"]["topology.kubernetes.io/region"] = "region-0"
    new = old.updated(manifest)
    assert new.requests is old.requests and new.tolerations is old.tolerations
    assert parsed(new) == parsed(Pod(manifest))
    assert new.labels["topology.kubernetes.io/zone"] == "zone-0"
    assert "topology.kubernetes.io/zone" not in old.labels
    # No labels before: the same.
    plain = stored()
    del plain["metadata"]["labels"]
    old = Pod(plain)
    old.validate()
    manifest = bound(plain)
    manifest["metadata"]["labels"] = {"topology.kubernetes.io/zone": "zone-0"}
    new = old.updated(manifest)
    assert new.requests is old.requests
    assert parsed(new) == parsed(Pod(manifest))
