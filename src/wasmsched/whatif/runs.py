"""One run of a what-if study, self-contained so that another process (a pool worker, a
Ray worker on another machine) can execute it: the input files travel as bytes.

A ``Bundle`` is a set of files with one entry point: a cluster file or folder, a trace,
or a KubeSchedulerConfiguration together with the wasm guests its ``file://`` URLs name
(rewritten to point into the bundle).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wasmsched.errors import InputError


class BundleError(InputError):
    """An input file that cannot be packed for shipping."""


@dataclass(frozen=True)
class Bundle:
    """Files (relative path -> bytes) and the entry path among them."""

    name: str
    entry: str
    files: tuple[tuple[str, bytes], ...]

    @property
    def digest(self) -> str:
        h = hashlib.sha256(self.entry.encode())
        for rel, data in self.files:
            h.update(b"\0" + rel.encode() + b"\0" + hashlib.sha256(data).digest())
        return h.hexdigest()

    def materialize(self, root: Path | None = None) -> Path:
        """Writes the files (once per content) and returns the entry's path."""
        base = (root or Path(tempfile.gettempdir()) / "wasmsched-bundles") / self.digest[:24]
        marker = base / ".complete"
        if not marker.exists():
            for rel, data in self.files:
                target = base / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                tmp.write_bytes(data)
                tmp.replace(target)
            marker.write_text("")
        return base / self.entry


_YAML = (".yaml", ".yml", ".json", ".jsonl", ".ndjson", ".csv")


def file_bundle(path: Path) -> Bundle:
    """A cluster or trace: a file, or a folder of manifest files."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _YAML)
        return Bundle(
            str(path), ".", tuple((str(p.relative_to(path)), p.read_bytes()) for p in files)
        )
    try:
        return Bundle(str(path), path.name, ((path.name, path.read_bytes()),))
    except OSError as e:
        raise BundleError(f"{path}: {e.strerror or e}") from None


def config_bundle(path: Path) -> Bundle:
    """A KubeSchedulerConfiguration and the local wasm guests it names.

    Each ``file://`` guestURL (relative to the config file's folder, or absolute) is
    packed as ``guests/<n>-<name>`` and the URL rewritten to it; http(s) URLs stay.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise BundleError(f"{path}: {e.strerror or e}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise BundleError(f"{path}: not YAML: {e}") from None
    files: list[tuple[str, bytes]] = []
    for profile in (doc or {}).get("profiles") or [] if isinstance(doc, Mapping) else []:
        for entry in (profile or {}).get("pluginConfig") or []:
            args = (entry or {}).get("args")
            if not isinstance(args, dict):
                continue
            url = args.get("guestURL")
            if not isinstance(url, str) or not url.startswith("file://"):
                continue
            local = Path(url[len("file://") :])
            guest = local if local.is_absolute() else path.parent / local
            try:
                data = guest.read_bytes()
            except OSError as e:
                raise BundleError(f"{path}: guestURL {url}: {e.strerror or e}") from None
            rel = f"guests/{len(files)}-{guest.name}"
            files.append((rel, data))
            args["guestURL"] = f"file://{rel}"
    files.append(("config.yaml", yaml.safe_dump(doc, sort_keys=False).encode()))
    return Bundle(str(path), "config.yaml", tuple(files))


@dataclass(frozen=True)
class RunSpec:
    """One (configuration, trace, seed) run on a cluster."""

    config_name: str
    config: Bundle | None  # None: the default profile
    cluster: Bundle | None
    trace: Bundle | None
    seed: int
    # The release modelled (None: the cluster's recorded version, else the default) and
    # --feature-gates.
    kubernetes_version: str | None = None
    feature_gates: str = ""

    @property
    def id(self) -> str:
        h = hashlib.sha256()
        for part in (self.config, self.cluster, self.trace):
            h.update((part.digest if part is not None else "-").encode() + b"\0")
        h.update(str(self.seed).encode())
        # Only when set, so that the ids of earlier sweeps (and their resumption) stay.
        if self.kubernetes_version is not None or self.feature_gates:
            h.update(f"\0{self.kubernetes_version}\0{self.feature_gates}".encode())
        return h.hexdigest()[:20]


def placements_digest(doc: Mapping[str, Any]) -> str:
    """A digest of every pod's node and result: equal digests, equal placements."""
    rows = sorted(
        (str(p.get("namespace")), str(p.get("name")), str(p.get("node")), str(p.get("result")))
        for p in doc.get("pods") or []
    )
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()
