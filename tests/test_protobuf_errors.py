"""wasmsched.api.protobuf errors: a value of the wrong type names its field path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from wasmsched.api.protobuf import (
    ProtobufEncodeError,
    encode_node,
    encode_pod,
)


@pytest.mark.parametrize(
    ("encode", "manifest", "message"),
    [
        (
            encode_pod,
            {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "abc"}]}]}},
            "spec.containers[0].ports[0].containerPort: expected integer, got 'abc'",
        ),
        (
            encode_pod,
            {"metadata": {"labels": {"a": 1}}},
            "metadata.labels['a']: expected string, got 1",
        ),
        (
            encode_pod,
            {"metadata": {"labels": {1: "a"}}},
            "metadata.labels: map key must be a string, got 1",
        ),
        (
            encode_pod,
            {"spec": {"priority": 2**31}},
            "spec.priority: integer out of int32 range: 2147483648",
        ),
        (encode_pod, {"spec": {"priority": 1.5}}, "spec.priority: expected integer, got 1.5"),
        (
            encode_pod,
            {"metadata": {"creationTimestamp": "yesterday"}},
            "metadata.creationTimestamp: invalid RFC3339 timestamp: 'yesterday'",
        ),
        (
            encode_pod,
            {"spec": {"containers": "nope"}},
            "spec.containers: expected list, got 'nope'",
        ),
        (
            encode_pod,
            {"spec": {"hostNetwork": "yes"}},
            "spec.hostNetwork: expected boolean, got 'yes'",
        ),
        (encode_pod, {"spec": "x"}, "spec: expected mapping, got 'x'"),
        (
            encode_pod,
            {"spec": {"containers": [{}, {"resources": {"limits": {"cpu": True}}}]}},
            "spec.containers[1].resources.limits['cpu']: expected quantity (string or number), got True",
        ),
        (
            encode_pod,
            {"spec": {"volumes": [{"name": "v", "configMap": {"name": 5}}]}},
            "spec.volumes[0].configMap.name: expected string, got 5",
        ),
        (
            encode_pod,
            {"spec": {"containers": [{"livenessProbe": {"httpGet": {"port": True}}}]}},
            "spec.containers[0].livenessProbe.httpGet.port: expected integer, got True",
        ),
        (
            encode_pod,
            {"spec": {"containers": [{"args": ["a", 3]}]}},
            "spec.containers[0].args[1]: expected string, got 3",
        ),
        (encode_pod, [], "<root>: expected mapping, got []"),
        (
            encode_node,
            {"status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": "10250"}}}},
            "status.daemonEndpoints.kubeletEndpoint.Port: expected integer, got '10250'",
        ),
        (
            encode_node,
            {"spec": {"taints": [{"key": "k", "timeAdded": 5}]}},
            "spec.taints[0].timeAdded: expected RFC3339 timestamp, got 5",
        ),
    ],
)
def test_errors_name_the_field_path(
    encode: Callable[[Any], bytes], manifest: Any, message: str
) -> None:
    with pytest.raises(ProtobufEncodeError) as info:
        encode(manifest)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)
    assert info.value.path == message.split(": ", 1)[0]
