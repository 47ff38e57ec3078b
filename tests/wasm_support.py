"""Test support for wasm plugins: a fake framework Handle, upstream's test objects, and
helpers to load the conformance guests (tests/guests_build.py) into ``WasmPlugin``s."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import wasmtime
import yaml

from guests_build import ROOT, guest, guests_dir
from wasmsched.api.objects import Node, Pod
from wasmsched.framework.cycle_state import CycleState
from wasmsched.framework.interfaces import Event
from wasmsched.framework.node_info import ImageStateSummary, NodeInfo, Snapshot
from wasmsched.framework.status import Status
from wasmsched.release.features import SchedulerFeatures
from wasmsched.release.version import KubernetesVersion

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
REAL_FIXTURES = ROOT / "tests" / "fixtures" / "real"
SMALL_UID = "384900cd-dc7b-41ec-837e-9c4c1762363e"


# --- upstream's test objects (scheduler/test/testdata) ----------------------------------


def make_pod(
    name: str = "good-pod",
    namespace: str = "test",
    uid: str = SMALL_UID,
    node_name: str = "",
    **spec: Any,
) -> Pod:
    meta = {"name": name, "namespace": namespace, "uid": uid}
    if node_name:
        spec["nodeName"] = node_name
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def make_node(name: str = "good-node", images: Iterable[tuple[list[str], int]] = ()) -> Node:
    manifest: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    image_list = [{"names": names, "sizeBytes": size} for names, size in images]
    if image_list:
        manifest["status"] = {"images": image_list}
    return Node(manifest)


def pod_small() -> Pod:
    """PodSmall: good-pod in test, spec.nodeName good-node."""
    return make_pod(node_name="good-node")


def node_small() -> Node:
    return make_node("good-node")


@functools.cache
def _real(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((REAL_FIXTURES / f"{kind}.yaml").read_text())
    return data


def pod_real() -> Pod:
    return Pod(_real("pod"))


def node_real() -> Node:
    return Node(_real("node"))


# --- a fake framework Handle --------------------------------------------------------------


def snapshot_of(nodes: Iterable[Node]) -> Snapshot:
    """A Snapshot whose NodeInfos carry kube-scheduler's image states (names, size, and on
    how many nodes each image is)."""
    infos = [NodeInfo(node) for node in nodes]
    where: dict[str, set[str]] = {}
    for info in infos:
        for names, _size in info.node.images:
            for name in names:
                where.setdefault(name, set()).add(info.name)
    for info in infos:
        for names, size in info.node.images:
            for name in names:
                holders = frozenset(where[name])
                info.image_states[name] = ImageStateSummary(size, len(holders), holders)
    return Snapshot(infos)


@dataclass
class FakeWaitingPod:
    pod: Pod
    allowed: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)

    def allow(self, plugin: str) -> None:
        self.allowed.append(plugin)

    def reject(self, plugin: str, message: str) -> None:
        self.rejected.append((plugin, message))

    def pending_plugins(self) -> list[str]:
        return []


@dataclass
class RecordingBinder:
    bindings: list[tuple[str, str]] = field(default_factory=list)

    def bind(self, pod: Pod, node_name: str) -> Status | None:
        self.bindings.append((pod.name, node_name))
        return None


class FakeHandle:
    """framework.Handle for tests: a fixed snapshot, recorded events and waiting-pod calls."""

    parallelism = 16
    features = SchedulerFeatures.of(KubernetesVersion(1, 33))

    def __init__(self, nodes: Iterable[Node] = (), waiting: Iterable[Pod] = ()) -> None:
        self._snapshot = snapshot_of(nodes)
        self.events: list[Event] = []
        self.waiting = {pod.uid: FakeWaitingPod(pod) for pod in waiting}
        self.get_waiting_uids: list[str] = []
        self.rejected_uids: list[str] = []
        self._binder = RecordingBinder()
        self.clock = 1_700_000_000.0

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def set_nodes(self, nodes: Iterable[Node]) -> None:
        self._snapshot = snapshot_of(nodes)

    def now(self) -> float:
        return self.clock

    def record_event(self, event: Event) -> None:
        self.events.append(event)

    def get_waiting_pod(self, uid: str) -> FakeWaitingPod | None:
        self.get_waiting_uids.append(uid)
        return self.waiting.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        self.rejected_uids.append(uid)
        waiting = self.waiting.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "rejected")
        return True

    def iterate_waiting_pods(self, fn: Callable[[FakeWaitingPod], None]) -> None:
        for waiting in list(self.waiting.values()):
            fn(waiting)

    def binder(self) -> RecordingBinder:
        return self._binder

    def event_texts(self) -> list[str]:
        """Events as upstream's fake recorder renders them: "<name> <type> <reason> <action>
        <note>", without the name when the regarding object has none."""
        texts = []
        for e in self.events:
            text = f"{e.type} {e.reason} {e.action} {e.note}"
            texts.append(f"{e.regarding.name} {text}" if e.regarding.name else text)
        return texts


def node_info(node: Node | str) -> NodeInfo:
    return NodeInfo(make_node(node) if isinstance(node, str) else node)


# --- plugins ---------------------------------------------------------------------------


class Plugins:
    """Creates WasmPlugins from guest names and closes them all at the end of a test."""

    def __init__(self) -> None:
        self._open: list[Any] = []

    def load(
        self,
        name_or_path: str | Path,
        *,
        args: list[str] | None = None,
        handle: FakeHandle | None = None,
        plugin_name: str = "wasm",
        **config: Any,
    ) -> Any:
        from wasmsched.wasm import WasmPlugin, WasmPluginConfig

        path = name_or_path if isinstance(name_or_path, Path) else guest(name_or_path)
        cfg = WasmPluginConfig(guest_url=path.as_uri(), args=list(args or []), **config)
        plugin = WasmPlugin(plugin_name, cfg, handle if handle is not None else FakeHandle())
        self._open.append(plugin)
        return plugin

    def close(self) -> None:
        while self._open:
            self._open.pop().close()


def plugins_fixture() -> Iterator[Plugins]:
    plugins = Plugins()
    try:
        yield plugins
    finally:
        plugins.close()


def new_state() -> CycleState:
    return CycleState()


# --- *_from_global guests with chosen global values ---------------------------------------

_GLOBAL_RE = r'(\(global \${0} \(export "{0}_global"\) \(mut i32\) \(i32\.const )-?\d+(\)\))'


def from_global(
    name: str,
    *,
    status_code: int = 0,
    score: int = 0,
    nominating_mode: int = 0,
    timeout: int = 0,
    flag: int = 0,
) -> Path:
    """``<name>_from_global.wasm`` with its exported globals initialised to the given
    values (timeout is unsigned: 0..UINT32_MAX), so every instance the host creates
    returns them. Built next to the other guests, once per combination."""
    values = {
        "status_code": status_code,
        "score": score,
        "nominating_mode": nominating_mode,
        "timeout": timeout if timeout < 2**31 else timeout - 2**32,
        "flag": flag,
    }
    key = "_".join(str(v).replace("-", "m") for v in values.values())
    out = guests_dir() / f"{name}_from_global.{key}.wasm"
    if not out.exists():
        text = (ROOT / "guests" / "wat" / f"{name}_from_global.wat").read_text()
        for global_name, value in values.items():
            text, n = re.subn(_GLOBAL_RE.format(global_name), rf"\g<1>{value}\g<2>", text)
            assert n == 1, f"{name}_from_global.wat has no global {global_name}"
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(wasmtime.wat2wasm(text))
        tmp.replace(out)
    return out


def result_bytes(payload: bytes) -> Path:
    """``result_bytes.wasm`` whose exports hand ``payload`` to the host (see the .wat)."""
    key = payload.hex() if len(payload) <= 48 else hashlib.sha256(payload).hexdigest()
    out = guests_dir() / f"result_bytes.{key or 'empty'}.wasm"
    if not out.exists():
        text = (ROOT / "guests" / "wat" / "result_bytes.wat").read_text()
        escaped = "".join(f"\\{b:02x}" for b in payload)
        text = text.replace('(data (i32.const 1024) "")', f'(data (i32.const 1024) "{escaped}")')
        text = text.replace(
            "(global $len i32 (i32.const 0))", f"(global $len i32 (i32.const {len(payload)}))"
        )
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(wasmtime.wat2wasm(text))
        tmp.replace(out)
    return out
