"""wasm/factory.py and scheduler/registry.py: the wasm factory registered like any plugin,
and a guest that cannot load failing with one line naming the config file, the plugin and
the guestURL (through the library and through ``wasmsched simulate``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from guests_build import guest
from wasmsched.api.manifests import ClusterObjects
from wasmsched.api.objects import Node
from wasmsched.config import ConfigError, load_config
from wasmsched.plugins.registry import in_tree_registry
from wasmsched.scheduler.registry import default_registry
from wasmsched.sim.simulation import Simulation
from wasmsched.wasm import WasmPlugin

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default}
spec: {containers: [{name: c, image: nginx}]}
"""


def config_file(tmp_path: Path, args: str) -> Path:
    path = tmp_path / "scheduler-config.yaml"
    path.write_text(
        HEADER
        + textwrap.dedent(
            f"""\
            profiles:
              - plugins: {{multiPoint: {{enabled: [{{name: NodeNumber}}]}}}}
                pluginConfig:
                  - name: NodeNumber
                    args: {args}
            """
        )
    )
    return path


def test_wasm_plugin_is_built_from_the_registry(tmp_path: Path) -> None:
    path = config_file(tmp_path, f"{{guestURL: '{guest('filter').as_uri()}'}}")
    cfg = load_config(path, default_registry())
    # the profile's own registry holds the wasm factory; the shared one only in-tree plugins
    assert list(cfg.profiles[0].plugin_factories) == ["NodeNumber"]
    node = Node({"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}})
    sim = Simulation(ClusterObjects(nodes=[node], pods=[]), cfg, in_tree_registry())
    try:
        fwk = sim.scheduler.frameworks["default-scheduler"]
        plugins = [p for p in fwk.filter_plugins if isinstance(p, WasmPlugin)]
        assert [p.name for p in plugins] == ["NodeNumber"]
    finally:
        sim.close()


def _bad_guests(tmp_path: Path) -> list[tuple[str, str, str]]:
    """(id, guestURL, expected message after ``<config>: plugin "NodeNumber": guestURL <url>: ``)."""
    junk = tmp_path / "junk.wasm"
    junk.write_bytes(b"\0asm\x01\0\0\0\x05junk")
    missing = tmp_path / "x.wasm"
    return [
        ("missing-file", missing.as_uri(), f"open {missing}: no such file or directory"),
        (
            "no-plugin-exports",
            guest("not_plugin").as_uri(),
            "wasm: guest does not export any plugin functions",
        ),
        (
            "start-traps",
            guest("panic_on_start").as_uri(),
            "failed to create a guest pool: wasm: instantiate error: panic!",
        ),
        ("compile-error", junk.as_uri(), "wasm: error compiling guest:"),
    ]


CASES = ["missing-file", "no-plugin-exports", "start-traps", "compile-error"]


@pytest.mark.parametrize("case", CASES)
def test_guest_that_cannot_load_names_config_plugin_and_url(tmp_path: Path, case: str) -> None:
    _, url, want = next(c for c in _bad_guests(tmp_path) if c[0] == case)
    path = config_file(tmp_path, f"{{guestURL: '{url}'}}")
    registry = default_registry()
    cfg = load_config(path, registry)
    with pytest.raises(ConfigError) as err:
        Simulation(ClusterObjects(nodes=[], pods=[]), cfg, registry)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f'{path}: plugin "NodeNumber": guestURL {url}: {want}')


def simulate(tmp_path: Path, config: Path) -> subprocess.CompletedProcess[str]:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "wasmsched"),
            "simulate",
            "--cluster",
            str(cluster),
            "--config",
            str(config),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("case", CASES)
def test_simulate_reports_a_guest_that_cannot_load(tmp_path: Path, case: str) -> None:
    _, url, want = next(c for c in _bad_guests(tmp_path) if c[0] == case)
    path = config_file(tmp_path, f"{{guestURL: '{url}'}}")
    proc = simulate(tmp_path, path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith(
        f'wasmsched: error: {path}: plugin "NodeNumber": guestURL {url}: {want}'
    )


def test_simulate_reports_a_misspelled_wasm_key(tmp_path: Path) -> None:
    path = config_file(tmp_path, "{guestUrl: 'file:///x.wasm'}")
    proc = simulate(tmp_path, path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        f"wasmsched: error: {path}: profiles[0].pluginConfig[0].args:"
        " unknown field guestUrl (did you mean guestURL?)\n"
    )
