"""Helpers of the live scheduler tests: manifests, a runner on a thread against the double."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from apiserver import ApiServerDouble
from wasmsched.config import SchedulerConfig, default_config, parse_config
from wasmsched.live import ApiClient, LiveRunner, RunOptions, load_kube_config
from wasmsched.live.dispatcher import DEFAULT_API_WORKERS
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion
from wasmsched.scheduler.registry import default_registry


def self_signed(root: Path) -> Path:
    """``root`` with tls.crt and tls.key: a self-signed certificate for 127.0.0.1 (the
    server's, its CA and a client's in the TLS tests). Skips without openssl."""
    if shutil.which("openssl") is None:
        import pytest

        pytest.skip("openssl is not installed")
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(root / "tls.key"), "-out", str(root / "tls.crt"),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return root


# Short timings so that retries and backoffs fit in a test.
FAST = {
    "informer_initial_backoff": 0.05,
    "informer_max_backoff": 0.4,
    "shutdown_timeout": 5.0,
}

# The release the API server double answers on /version (v1.33.0), as `wasmsched run`
# would read it (live/options.py: scheduler_features).
DOUBLE_RELEASE = SchedulerFeatures.of(KubernetesVersion(1, 33))


def node(
    name: str, cpu: str = "4", memory: str = "8Gi", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
        },
    }


def pod(
    name: str,
    cpu: str = "100m",
    memory: str = "128Mi",
    namespace: str = "default",
    scheduler: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": "registry.example/app:1",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }
        ],
        **spec,
    }
    if scheduler is not None:
        body["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name.split("-")[0]}},
        "spec": body,
    }


def config(text: str = "") -> SchedulerConfig:
    """A KubeSchedulerConfiguration from YAML text (the default profile when empty)."""
    import yaml

    if not text:
        return default_config(DOUBLE_RELEASE)
    return parse_config(
        yaml.safe_load(text), "test-config", Path("."), default_registry(), DOUBLE_RELEASE
    )


def api_for(srv: ApiServerDouble, **options: Any) -> ApiClient:
    """A client of the double; ``options`` as ApiClient takes them (accept_protobuf, ...)."""
    path = Path(tempfile.mkdtemp()) / "kubeconfig"
    return ApiClient(load_kube_config(srv.kubeconfig(path)), **options)


class Running:
    """A LiveRunner on a thread; ``code`` is run()'s exit code once it returned."""

    def __init__(self, runner: LiveRunner, api: ApiClient) -> None:
        self.runner = runner
        self.api = api
        self.code: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.code = self.runner.run()

    def start(self) -> Running:
        self.thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> int | None:
        self.runner.stop()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "runner did not stop"
        return self.code


def make_runner(
    srv: ApiServerDouble, cfg: SchedulerConfig | None = None, **options: Any
) -> Running:
    api = api_for(srv)
    opts = RunOptions(**{"leader_elect": False, "port": None, **FAST, **options})
    runner = LiveRunner(api, cfg or default_config(DOUBLE_RELEASE), in_tree_registry(), opts)
    return Running(runner, api)


@contextmanager
def running(
    srv: ApiServerDouble, cfg: SchedulerConfig | None = None, **options: Any
) -> Iterator[LiveRunner]:
    r = make_runner(srv, cfg, **options).start()
    try:
        yield r.runner
    finally:
        r.stop()
        r.api.close()


class ManualClock:
    """A monotonic clock the test moves (``clock.t += 1.0``)."""

    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def wait(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def placements(srv: ApiServerDouble, namespace: str | None = None) -> dict[str, str]:
    """name -> nodeName of every bound pod."""
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in srv.list("Pod", namespace)
        if p.get("spec", {}).get("nodeName")
    }


def replica_command(
    kubeconfig: Path, identity: str, api_workers: int = DEFAULT_API_WORKERS, **lease: float
) -> list[str]:
    """The command line of a replica in its own process (``python live_support.py replica``)."""
    args = [sys.executable, str(Path(__file__)), "replica", str(kubeconfig), identity]
    for key in ("lease_duration", "renew_deadline", "retry_period"):
        args.append(
            str(lease.get(key, {"lease_duration": 4.0, "renew_deadline": 3.0}.get(key, 0.5)))
        )
    return [*args, str(api_workers)]


def replica_env() -> dict[str, str]:
    """The environment of a replica: no proxy variables (they could reroute 127.0.0.1)."""
    return {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}


def _replica(argv: list[str]) -> int:
    """A leader-electing scheduler against the double: what ``wasmsched run`` runs."""
    from wasmsched.live import LeaseConfig
    from wasmsched.live.ops import configure_logging

    kubeconfig, identity, duration, deadline, retry, api_workers = argv
    configure_logging("text", "info")
    lease = LeaseConfig(
        lease_duration=float(duration), renew_deadline=float(deadline), retry_period=float(retry)
    )
    api = ApiClient(load_kube_config(kubeconfig))
    opts = RunOptions(
        leader_elect=True,
        lease=lease,
        identity=identity,
        port=None,
        api_workers=int(api_workers),
        **FAST,
    )
    runner = LiveRunner(api, default_config(DOUBLE_RELEASE), in_tree_registry(), opts)
    signal.signal(signal.SIGTERM, lambda signum, frame: runner.stop())
    try:
        return runner.run()
    finally:
        api.close()


if __name__ == "__main__" and sys.argv[1:2] == ["replica"]:
    sys.exit(_replica(sys.argv[2:]))


def stop_replicas(procs: Iterable[subprocess.Popen[Any]], logs: Iterable[IO[Any]]) -> None:
    """Ends replica subprocesses (resuming a paused one first), killing any that do not
    stop within 30 s, and closes their log files."""
    procs = list(procs)
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGCONT)
            p.terminate()
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)
    for f in logs:
        f.close()


# --- DRA (resource.k8s.io/v1) objects -----------------------------------------------------

DRA_RELEASE = SchedulerFeatures.of(KubernetesVersion(1, 37))
GPU_DRIVER = "gpu.example.com"
GPU_CLASS = "gpu.example.com"


def dra_config() -> SchedulerConfig:
    """The default profile of Kubernetes 1.37 (DynamicResources on), with 1 s backoffs."""
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n"
    )
    import yaml

    return parse_config(
        yaml.safe_load(text), "test-config", Path("."), default_registry(), DRA_RELEASE
    )


def device_class(name: str = GPU_CLASS, driver: str = GPU_DRIVER) -> dict[str, Any]:
    """A DeviceClass selecting every device of ``driver``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def resource_slice(node_name: str, devices: int = 1, driver: str = GPU_DRIVER) -> dict[str, Any]:
    """The one ResourceSlice of ``node_name``'s pool: devices gpu-0, gpu-1, ..."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(devices)
            ],
        },
    }


def device_request(device_class_name: str = GPU_CLASS) -> dict[str, Any]:
    """One device of the class (``exactly``, defaulted as the API server defaults it)."""
    return {
        "name": "gpu",
        "exactly": {
            "deviceClassName": device_class_name,
            "allocationMode": "ExactCount",
            "count": 1,
        },
    }


def resource_claim(name: str, namespace: str = "default") -> dict[str, Any]:
    """A ResourceClaim for one device of the GPU class."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [device_request()]}},
    }


def claim_template(name: str, namespace: str = "default") -> dict[str, Any]:
    """A ResourceClaimTemplate of the same claim."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [device_request()]}}},
    }


def claiming_pod(
    name: str, *, claim: str | None = None, template: str | None = None, **kw: Any
) -> dict[str, Any]:
    """``pod`` with one resource claim "gpu" (a claim's name or a template's) that its
    container uses."""
    out = pod(name, **kw)
    entry: dict[str, Any] = {"name": "gpu"}
    if claim is not None:
        entry["resourceClaimName"] = claim
    if template is not None:
        entry["resourceClaimTemplateName"] = template
    out["spec"]["resourceClaims"] = [entry]
    out["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return out


def claim_for_pod(pod_manifest: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """The claim the resourceclaim controller makes from ``template`` for the pod's "gpu"
    entry (pkg/controller/resourceclaim/controller.go: handleClaim): named
    ``<pod>-<entry>-`` plus a random suffix, owned by the pod, annotated with the entry."""
    meta = pod_manifest["metadata"]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": f"{meta['name']}-gpu-",
            "namespace": meta["namespace"],
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": template["spec"]["spec"],
    }
