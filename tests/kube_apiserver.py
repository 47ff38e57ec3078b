"""A real kube-apiserver (v1.33.4 or v1.37.2, built by scripts/build-apiserver) with etcd,
on loopback.

What a cluster's control plane gives a scheduler, minus the controllers and kubelets:
self-signed serving certificates (openssl), a service-account signing key pair, a token
file with one admin that only this module uses, ``--authorization-mode=Node,RBAC``, and
etcd on free loopback ports with a throw-away data directory. ``Cluster`` applies
deploy/rbac.yaml, mints a token for the scheduler's ServiceAccount with the TokenRequest
API and starts ``wasmsched run`` with a kubeconfig that holds only that token and the CA,
so the scheduler is authorised exactly as a deployment of it would be.

Two things the missing components would do are done here on request: nodes created
through the API carry the ``node.kubernetes.io/not-ready`` taint (the TaintNodesByCondition
admission plugin) until the node lifecycle controller removes it once the kubelet reports
Ready, so ``add_node`` removes it; and a bound pod's graceful deletion ends only when its
kubelet deletes it again with grace period 0, which ``finish_deletions`` does.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from extender_server import free_port
from live_support import wait
from wasmsched.live import ApiClient, load_kube_config
from wasmsched.live.client import ApiError

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".cache" / "bin"
# The releases scripts/build-apiserver builds, each kube-apiserver binary by its version.
APISERVERS = {"1.33": BIN / "kube-apiserver", "1.37": BIN / "kube-apiserver-1.37"}
VERSIONS = tuple(APISERVERS)
DEFAULT_VERSION = "1.33"
RBAC = ROOT / "deploy" / "rbac.yaml"
SCHEDULER_NAMESPACE = "kube-system"
SCHEDULER_ACCOUNT = "wasmsched"
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{SCHEDULER_NAMESPACE}/leases/wasmsched"
ISSUER = "https://kubernetes.default.svc.cluster.local"
START_TIMEOUT = 120.0

# Collection paths of the kinds the fixture and the tests create.
_COLLECTIONS = {
    "Node": "/api/v1/nodes",
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Namespace": "/api/v1/namespaces",
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
    "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates",
}


BUILD = ROOT / "scripts" / "build-apiserver"
# Set to 1 to let the fixture build kube-apiserver from nothing (~20 min on 2 cores).
BUILD_ENV = "WASMSCHED_BUILD_APISERVER"


def missing(version: str = DEFAULT_VERSION) -> str | None:
    """Why the real API server of ``version`` cannot run here (None when it can)."""
    tools: tuple[str, ...] = ("openssl",)  # with BUILD_ENV, the script installs etcd
    if os.environ.get(BUILD_ENV) != "1":
        binary = APISERVERS[version]
        if not binary.is_file():
            return (
                f"{binary.relative_to(ROOT)} (kube-apiserver {version}) is not built (run "
                f"scripts/build-apiserver --kubernetes-version {version}, or set {BUILD_ENV}=1)"
            )
        tools = ("etcd", "etcdctl", "openssl")
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/build-apiserver installs etcd-server)"
    return None


def ensure_built(version: str = DEFAULT_VERSION) -> None:
    """scripts/build-apiserver: nothing when the binary matches reference/apiserver's
    module file and sums (a stamp), a rebuild (seconds with a warm Go cache) when not."""
    out = subprocess.run(
        [str(BUILD), "--kubernetes-version", version],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if out.returncode != 0 or not APISERVERS[version].is_file() or shutil.which("etcd") is None:
        raise AssertionError(f"scripts/build-apiserver failed:\n{out.stdout}{out.stderr}")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(d: Path) -> None:
    """ca.crt, server.{crt,key} for 127.0.0.1/localhost, and the sa.{key,pub} key pair."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=wasmsched-test-ca", cwd=d)  # fmt: skip
    _openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=kube-apiserver", cwd=d)  # fmt: skip
    # Python's ssl verifies strictly: key identifiers, key usage and the SANs must be there.
    (d / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid\n"
    )
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "server.ext",
             cwd=d)  # fmt: skip
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=d)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)


def kubeconfig(path: Path, server: str, ca: Path, token: str, user: str) -> Path:
    """A kubeconfig with one context: the server, its CA (inline) and a bearer token."""
    data = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "test",
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca.read_bytes()).decode(),
                },
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": user}}],
        "current-context": "test",
    }
    path.write_text(yaml.safe_dump(data))
    return path


def _die_with_parent() -> None:
    """Linux prctl(PR_SET_PDEATHSIG, SIGKILL): no etcd or server outlives a killed pytest."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class Process:
    """A child process whose output goes to a file; stopped with SIGTERM, then SIGKILL."""

    def __init__(self, name: str, argv: list[str], log: Path, env: dict[str, str] | None = None):
        self.name = name
        self.argv = argv
        self.log = log
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.output().splitlines()[-lines:])

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, SIGKILL after ``timeout``; the exit code (None if it never ran)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)


class Etcd(Process):
    """A one-member etcd on free loopback ports."""

    def __init__(self, work: Path) -> None:
        self.port = free_port()
        peer = f"http://127.0.0.1:{free_port()}"
        self.url = f"http://127.0.0.1:{self.port}"
        super().__init__(
            "etcd",
            [
                "etcd",
                "--name=test",
                f"--data-dir={work / 'etcd-data'}",
                f"--listen-client-urls={self.url}",
                f"--advertise-client-urls={self.url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=test={peer}",
                "--logger=zap",
                "--log-level=warn",
            ],
            work / "etcd.log",
        )

    def ctl(self, *args: str) -> str:
        out = subprocess.run(
            ["etcdctl", f"--endpoints={self.url}", *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "ETCDCTL_API": "3"},
        )
        return out.stdout

    def revision(self) -> int:
        status = json.loads(self.ctl("endpoint", "status", "-w", "json"))
        return int(status[0]["Status"]["header"]["revision"])

    def compact(self) -> int:
        """Compacts the keyspace up to the current revision; returns that revision."""
        rev = self.revision()
        self.ctl("compact", str(rev))
        return rev

    def healthy(self) -> bool:
        try:
            self.ctl("endpoint", "health")
        except subprocess.CalledProcessError:
            return False
        return True


# What kube-apiserver logs once it refuses new connections and has answered every request
# but the long-running ones (watches).
_STOPPED = ("HTTPServerStoppedListening", "InFlightRequestsDrained")


class KubeApiServer(Process):
    """kube-apiserver on a free loopback port, over ``etcd``; restartable on the same port."""

    def __init__(
        self,
        work: Path,
        etcd: Etcd,
        admin_token: str,
        extra: Iterable[str] = (),
        version: str = DEFAULT_VERSION,
    ):
        self.version = version
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.ca = work / "ca.crt"
        (work / "tokens.csv").write_text(f'{admin_token},test-admin,test-admin,"system:masters"\n')
        super().__init__(
            "kube-apiserver",
            [
                str(APISERVERS[version]),
                f"--etcd-servers={etcd.url}",
                "--storage-backend=etcd3",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--tls-cert-file={work / 'server.crt'}",
                f"--tls-private-key-file={work / 'server.key'}",
                f"--token-auth-file={work / 'tokens.csv'}",
                "--authorization-mode=Node,RBAC",
                f"--service-account-key-file={work / 'sa.pub'}",
                f"--service-account-signing-key-file={work / 'sa.key'}",
                f"--service-account-issuer={ISSUER}",
                "--service-cluster-ip-range=10.0.0.0/24",
                # No controller manager keeps the kubernetes Service's endpoints; loopback
                # addresses are not valid endpoints anyway.
                "--endpoint-reconciler-type=none",
                f"--cert-dir={work / 'certs'}",
                "--profiling=false",
                # The graceful-termination events stop() waits for are logged at V(1).
                "-v=1",
            ],
            work / "kube-apiserver.log",
        )
        self.base = list(self.argv)
        self.argv = [*self.base, *extra]

    def set_extra_args(self, extra: Iterable[str]) -> None:
        """Flags added to the fixed ones from the next start on."""
        self.argv = [*self.base, *extra]

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM; SIGKILL once it has stopped listening and drained the requests in
        flight. Its HTTP server would then wait for every open connection to go idle, up to
        the request timeout (60 s: k8s.io/apiserver config.go, ShutdownTimeout), and a
        connected scheduler's watches never are: Process.stop waited its whole ``timeout``
        for them. The clients see the same either way: new connections refused, then their
        open watches cut."""
        if self.proc is None or self.proc.poll() is not None:
            return super().stop(timeout)
        seen = self.log.stat().st_size if self.log.exists() else 0
        self.proc.terminate()
        proc = self.proc

        def drained() -> bool:
            # genericapiserver.go: RunWithContext's shutdown events.
            log = self._since(seen)
            return all(f'name="{event}"' in log for event in _STOPPED)

        with suppress(AssertionError):  # not drained in time: killed all the same
            wait(lambda: proc.poll() is not None or drained(), timeout, "kube-apiserver to drain")
        self.kill()
        return proc.returncode

    def _since(self, offset: int) -> str:
        with self.log.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")


class Cluster:
    """etcd + kube-apiserver + an admin client; ``scheduler()`` starts ``wasmsched run``."""

    def __init__(
        self, work: Path, extra_args: Iterable[str] = (), version: str = DEFAULT_VERSION
    ) -> None:
        self.work = work
        self.version = version
        make_pki(work)
        self.etcd = Etcd(work)
        token = base64.urlsafe_b64encode(os.urandom(24)).decode().rstrip("=")
        self.apiserver = KubeApiServer(work, self.etcd, token, extra_args, version)
        self.admin_kubeconfig = kubeconfig(
            work / "admin.kubeconfig", self.apiserver.url, self.apiserver.ca, token, "test-admin"
        )
        self.admin: ApiClient | None = None
        self.schedulers: list[Scheduler] = []
        self.started = 0  # schedulers started so far: each gets its own log file
        self.scheduler_kubeconfig: Path | None = None

    # -- control plane -------------------------------------------------------------------

    def start(self) -> Cluster:
        self.etcd.start()
        try:
            wait(self.etcd.healthy, 30, "etcd to answer")
        except AssertionError as err:
            raise AssertionError(f"{err}:\n{self.etcd.tail()}") from None
        self.start_apiserver()
        self.admin = ApiClient(load_kube_config(self.admin_kubeconfig), timeout=30)
        self._bootstrap()
        return self

    def start_apiserver(self) -> None:
        self.apiserver.start()
        wait(self.ready, START_TIMEOUT, "kube-apiserver /readyz")

    def stop_apiserver(self) -> None:
        self.apiserver.stop()

    def restart_apiserver(self, extra: Iterable[str] | None = None) -> None:
        """Stops kube-apiserver and starts it again on the same port (with other flags)."""
        self.stop_apiserver()
        if extra is not None:
            self.apiserver.set_extra_args(extra)
        self.start_apiserver()

    def ready(self) -> bool:
        if not self.apiserver.alive:
            raise AssertionError(f"kube-apiserver exited:\n{self.apiserver.tail()}")
        try:
            resp = httpx2.get(
                f"{self.apiserver.url}/readyz",
                verify=ssl.create_default_context(cafile=str(self.apiserver.ca)),
                timeout=2,
            )
        except httpx2.HTTPError:
            return False
        return resp.status_code == 200

    def close(self) -> None:
        for s in self.schedulers:
            s.kill()
        if self.admin is not None:
            self.admin.close()
        self.apiserver.stop()
        self.etcd.stop()
        if os.environ.get("WASMSCHED_KEEP_KUBE_DIR"):
            print(f"kube-apiserver test directory kept: {self.work}", file=sys.stderr)
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    def _bootstrap(self) -> None:
        # The ServiceAccount admission plugin needs the namespace's "default" account, which
        # the controller manager's serviceaccounts controller would create.
        self.create({"apiVersion": "v1", "kind": "ServiceAccount",
                     "metadata": {"name": "default", "namespace": "default"}}, exist_ok=True)  # fmt: skip
        for doc in yaml.safe_load_all(RBAC.read_text()):
            if doc:
                self.create(doc, exist_ok=True)
        token = self.request(
            "POST",
            f"/api/v1/namespaces/{SCHEDULER_NAMESPACE}/serviceaccounts/{SCHEDULER_ACCOUNT}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 3600},
            },
        )["status"]["token"]
        self.scheduler_kubeconfig = kubeconfig(
            self.work / "scheduler.kubeconfig",
            self.apiserver.url,
            self.apiserver.ca,
            str(token),
            f"system:serviceaccount:{SCHEDULER_NAMESPACE}:{SCHEDULER_ACCOUNT}",
        )

    # -- the admin's API calls -----------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> dict[str, Any]:
        assert self.admin is not None
        return self.admin.request(method, path, body=body, **kw)

    @staticmethod
    def collection(obj: dict[str, Any]) -> str:
        ns = obj.get("metadata", {}).get("namespace", "default")
        return _COLLECTIONS[obj["kind"]].format(ns=ns)

    def create(self, obj: dict[str, Any], exist_ok: bool = False) -> dict[str, Any]:
        try:
            return self.request("POST", self.collection(obj), obj)
        except ApiError as err:
            if exist_ok and err.status == 409:
                return {}
            raise

    def pods(self, namespace: str = "default") -> list[dict[str, Any]]:
        return list(self.request("GET", f"/api/v1/namespaces/{namespace}/pods").get("items", []))

    def pod(self, name: str, namespace: str = "default") -> dict[str, Any] | None:
        try:
            return self.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
        except ApiError as err:
            if err.not_found:
                return None
            raise

    def placements(self, namespace: str = "default") -> dict[str, str]:
        """name -> nodeName of every bound pod."""
        return {
            p["metadata"]["name"]: p["spec"]["nodeName"]
            for p in self.pods(namespace)
            if p["spec"].get("nodeName")
        }

    def events(self, namespace: str = "default") -> list[dict[str, Any]]:
        path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
        return list(self.request("GET", path).get("items", []))

    def delete_pod(self, name: str, namespace: str = "default") -> None:
        """Deleted at once (grace period 0), as a kubelet does once the containers stopped."""
        try:
            self.request(
                "DELETE",
                f"/api/v1/namespaces/{namespace}/pods/{name}",
                {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            )
        except ApiError as err:
            if not err.not_found:
                raise

    def finish_deletions(self, namespace: str = "default") -> list[str]:
        """What kubelets do for pods being deleted gracefully: delete them for good."""
        done = []
        for p in self.pods(namespace):
            if p["metadata"].get("deletionTimestamp"):
                self.delete_pod(p["metadata"]["name"], namespace)
                done.append(p["metadata"]["name"])
        return done

    def add_node(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Creates the node Ready and removes the not-ready taint admission gave it."""
        obj = json.loads(json.dumps(obj))
        status = obj.setdefault("status", {})
        status.setdefault("conditions", []).append(
            {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "test"}
        )
        created = self.create(obj)
        taints = created.get("spec", {}).get("taints") or []
        # node_lifecycle_controller.go: doNoScheduleTaintingPass removes the NoSchedule
        # not-ready taint once the Ready condition is True.
        kept = [t for t in taints if t.get("key") != "node.kubernetes.io/not-ready"]
        return self.request(
            "PATCH",
            f"/api/v1/nodes/{obj['metadata']['name']}",
            {"spec": {"taints": kept or None}},
            content_type="application/merge-patch+json",
        )

    def reset(self) -> None:
        """Removes what a test made: its pods (at once), nodes, leases, events."""
        for s in self.schedulers:
            s.kill()
        self.schedulers.clear()
        for p in self.pods():
            self.delete_pod(p["metadata"]["name"])
        for n in self.request("GET", "/api/v1/nodes").get("items", []):
            self.request("DELETE", f"/api/v1/nodes/{n['metadata']['name']}")
        try:
            self.request("DELETE", LEASE)
        except ApiError as err:
            if not err.not_found:
                raise
        self.request("DELETE", "/apis/events.k8s.io/v1/namespaces/default/events")
        wait(lambda: not self.pods(), 30, "the test's pods to be gone")

    # -- the scheduler -------------------------------------------------------------------

    def scheduler(self, config: str, *args: str, name: str = "wasmsched") -> Scheduler:
        """``wasmsched run`` as the scheduler's ServiceAccount, logs in JSON at debug level."""
        assert self.scheduler_kubeconfig is not None
        self.started += 1
        index = self.started
        cfg = self.work / f"{name}-{index}.yaml"
        cfg.write_text(config)
        port = free_port()
        argv = [
            sys.executable, "-m", "wasmsched", "run",
            "--config", str(cfg),
            "--kubeconfig", str(self.scheduler_kubeconfig),
            "--bind-address", "127.0.0.1", "--port", str(port),
            "--log-format", "json", "--log-level", "debug",
            *args,
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
        env.pop("KUBECONFIG", None)
        proc = Scheduler(f"{name}-{index}", argv, self.work / f"{name}-{index}.log", env, port)
        self.schedulers.append(proc)
        proc.start()
        return proc


class Scheduler(Process):
    """A ``wasmsched run`` process: its JSON log lines and its /metrics."""

    def __init__(self, name: str, argv: list[str], log: Path, env: dict[str, str], port: int):
        super().__init__(name, argv, log, env)
        self.port = port

    def lines(self) -> list[dict[str, Any]]:
        out = []
        for line in self.output().splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out

    def messages(self) -> list[str]:
        return [str(entry.get("msg", "")) for entry in self.lines()]

    def bound(self) -> list[str]:
        """Pods this process logged as bound ("bound pod pod=ns/name node=...")."""
        return [
            m.split("pod=", 1)[1].split()[0] for m in self.messages() if m.startswith("bound pod ")
        ]

    def metric(self, name: str, labels: str = "") -> float:
        """One sample of /metrics (0 when absent)."""
        text = httpx2.get(f"http://127.0.0.1:{self.port}/metrics", timeout=5).text
        want = f"{name}{{{labels}}}" if labels else name
        for line in text.splitlines():
            if line.startswith(want + " "):
                return float(line.split()[-1])
        return 0.0

    def forbidden(self, allowed: Iterable[tuple[datetime, datetime]] = ()) -> list[str]:
        """Log lines that tell of a refused call (403 Forbidden), but for ``allowed`` windows."""
        windows = list(allowed)
        found = []
        for line in self.output().splitlines():
            try:
                entry = json.loads(line) if line.startswith("{") else None
            except ValueError:
                entry = None
            # The message and the exception only: "403" may be part of a timestamp too.
            text = f"{entry.get('msg', '')} {entry.get('exc', '')}" if entry else line
            if "forbidden" not in text.lower():
                continue
            if entry and windows:
                ts = datetime.fromisoformat(str(entry["ts"]).replace("Z", "+00:00"))
                if any(lo <= ts <= hi for lo, hi in windows):
                    continue
            found.append(line)
        return found

    @contextmanager
    def paused(self) -> Iterator[None]:
        """SIGSTOP ... SIGCONT: the process sees time jump and its connections broken."""
        os.kill(self.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.pid, signal.SIGCONT)


def require(version: str) -> None:
    """Skips the calling test without the binaries of ``version``, except in CI (``CI``
    set), which must run the real API server suites."""
    reason = missing(version)
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"real API server: {reason} (CI runs this suite: scripts/dev-setup)")
    pytest.skip(f"real API server: {reason}")


def start_cluster(extra_args: Iterable[str] = (), version: str = DEFAULT_VERSION) -> Cluster:
    """A started Cluster of kube-apiserver ``version`` (1.33 or 1.37) in a fresh temporary
    directory (removed by ``Cluster.close``)."""
    ensure_built(version)
    work = Path(tempfile.mkdtemp(prefix="wasmsched-kube-"))
    cluster = Cluster(work, extra_args, version)
    try:
        return cluster.start()
    except BaseException:
        cluster.close()
        raise
