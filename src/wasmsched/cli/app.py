"""Commands: simulate, inspect, run, snapshot. Bad input ends with one line on stderr, never a traceback."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="A Kubernetes scheduler whose plugins can be WebAssembly (kube-scheduler-wasm-extension guests).",
)

EXIT_BAD_INPUT = 2


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


def _fail(message: str) -> NoReturn:
    # One line: the file and the problem (DESIGN.md command line contract). A guest's
    # trap carries wasmtime's backtrace: keep its cause, drop the frames.
    text = str(message)
    head, _, tail = text.partition("error while executing at wasm backtrace:")
    if tail:
        cause = tail.partition("Caused by:")[2].strip()
        text = f"{head.strip()} ({cause})" if cause else head
    one_line = " ".join(text.split())
    typer.echo(f"wasmsched: error: {one_line}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def _input_errors() -> tuple[type[BaseException], ...]:
    from wasmsched.api.manifests import ManifestError
    from wasmsched.api.objects import ObjectError
    from wasmsched.config import ConfigError
    from wasmsched.framework.runtime import FrameworkError

    errors: list[type[BaseException]] = [ManifestError, ObjectError, ConfigError, FrameworkError]
    try:
        from wasmsched.wasm import WasmError

        errors.append(WasmError)
    except ImportError:  # pragma: no cover - the wasm host is part of the package
        pass
    return tuple(errors)


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int], None]]:
    """A progress bar that appears only once a run has lasted more than a second."""
    console = Console(stderr=True)
    started = time.monotonic()
    progress: Progress | None = None
    task = None

    def update(done: int, total: int) -> None:
        nonlocal progress, task
        if not enabled:
            return
        if progress is None:
            if time.monotonic() - started < 1.0:
                return
            progress = Progress(
                TextColumn("scheduling"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            progress.start()
            task = progress.add_task("pods", total=total)
        assert task is not None
        progress.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if progress is not None:
            progress.stop()


@app.command()
def simulate(
    cluster: Annotated[
        Path,
        typer.Option(
            "--cluster", help="A YAML file or a directory of Node and Pod manifests ('-': stdin)."
        ),
    ],
    config: Annotated[
        Path | None, typer.Option("--config", help="A KubeSchedulerConfiguration file.")
    ] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o")] = OutputFormat.table,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the tie-breaking between equal nodes.")
    ] = 0,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Show each plugin's Filter verdict and Score (raw, normalized, weighted) per node.",
        ),
    ] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="Log to stderr: -v for info (wasm guests' klog info), -vv for debug.",
        ),
    ] = 0,
) -> None:
    """Schedule every pending pod of a cluster read from YAML, on a simulated clock."""
    if verbose:
        logging.basicConfig(
            level=logging.DEBUG if verbose > 1 else logging.INFO,
            format="%(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
    from wasmsched.api.manifests import load_manifests
    from wasmsched.cli.report import print_explain, print_table, result_to_json
    from wasmsched.config import DEFAULT_PLUGINS, default_config, load_config
    from wasmsched.plugins.registry import in_tree_registry
    from wasmsched.simulator import Simulation

    errors = _input_errors()
    registry = in_tree_registry()
    try:
        objects = load_manifests(cluster)
        known = set(registry.names()) | {p.name for p in DEFAULT_PLUGINS}
        sched_config = load_config(config, known) if config is not None else default_config()
        sim = Simulation(objects, sched_config, registry, seed=seed, explain=explain)
    except errors as err:
        lines = getattr(err, "lines", None) or [str(err)]  # ManifestError: one per problem
        for line in lines[:-1]:
            typer.echo(f"wasmsched: error: {line}", err=True)
        _fail(lines[-1])
    for warning in objects.warnings:
        typer.echo(f"wasmsched: warning: {warning}", err=True)
    try:
        with _progress(progress and output is OutputFormat.table and sys.stderr.isatty()) as update:
            result = sim.run(update)
    finally:
        sim.close()
    if output is OutputFormat.json:
        typer.echo(json.dumps(result_to_json(result, explain), indent=2))
        return
    console = Console()
    if explain:
        print_explain(console, result)
    else:
        print_table(console, result)


@app.command()
def inspect(
    plugin: Annotated[Path, typer.Argument(help="A .wasm plugin (or .wat text).")],
    output: Annotated[OutputFormat, typer.Option("--output", "-o")] = OutputFormat.table,
    guest_config: Annotated[
        str,
        typer.Option("--guest-config", help="The guestConfig string its start-up reads."),
    ] = "",
    args: Annotated[
        list[str] | None, typer.Option("--arg", help="A WASI argv entry (repeatable).")
    ] = None,
) -> None:
    """Show a wasm plugin's exports, the extension points they give, its imports, and whether
    the host can load it."""
    from wasmsched.wasm import WasmPluginConfig, inspect_wasm

    if not plugin.is_file():
        _fail(f"{plugin}: no such file")
    config = WasmPluginConfig(
        guest_url=plugin.resolve().as_uri(), guest_config=guest_config, args=list(args or [])
    )
    report = inspect_wasm(plugin, config=config)
    if output is OutputFormat.json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        typer.echo(report.to_text())
    if not report.loadable:
        raise typer.Exit(1)


class LogFormat(StrEnum):
    text = "text"
    json = "json"


@app.command()
def run(
    config: Annotated[Path, typer.Option("--config", help="A KubeSchedulerConfiguration file.")],
    kubeconfig: Annotated[
        Path | None,
        typer.Option("--kubeconfig", help="Default: the in-cluster service account, $KUBECONFIG."),
    ] = None,
    leader_elect: Annotated[
        bool | None,
        typer.Option(
            "--leader-elect/--no-leader-elect",
            help="Elect a leader with a Lease (default: the config's leaderElection, else on).",
        ),
    ] = None,
    lease_duration: Annotated[
        str | None, typer.Option("--leader-elect-lease-duration", help="Default 15s.")
    ] = None,
    renew_deadline: Annotated[
        str | None, typer.Option("--leader-elect-renew-deadline", help="Default 10s.")
    ] = None,
    retry_period: Annotated[
        str | None, typer.Option("--leader-elect-retry-period", help="Default 2s.")
    ] = None,
    resource_name: Annotated[
        str | None, typer.Option("--leader-elect-resource-name", help="Default wasmsched.")
    ] = None,
    resource_namespace: Annotated[
        str | None,
        typer.Option("--leader-elect-resource-namespace", help="Default kube-system."),
    ] = None,
    bind_address: Annotated[
        str, typer.Option("--bind-address", help="Address of /healthz, /readyz, /metrics.")
    ] = "0.0.0.0",
    port: Annotated[
        int, typer.Option("--port", help="Port of /healthz, /readyz, /metrics (0: none).")
    ] = 10259,
    log_format: Annotated[LogFormat, typer.Option("--log-format")] = LogFormat.text,
    log_level: Annotated[str, typer.Option("--log-level")] = "info",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the tie-breaking.")] = 0,
) -> None:
    """Run as a live scheduler against a Kubernetes API server."""
    import signal

    from wasmsched.config import DEFAULT_PLUGINS, load_config
    from wasmsched.live import ApiClient, KubeConfigError, LiveRunner
    from wasmsched.live.ops import configure_logging
    from wasmsched.live.options import LeaderElectionFlags, leader_election_options
    from wasmsched.plugins.registry import in_tree_registry

    configure_logging(log_format.value, log_level)
    errors = _input_errors()
    bad_input: tuple[type[BaseException], ...] = (*errors, KubeConfigError, ValueError)
    registry = in_tree_registry()
    try:
        known = set(registry.names()) | {p.name for p in DEFAULT_PLUGINS}
        sched_config = load_config(config, known)
        options = leader_election_options(
            config,
            LeaderElectionFlags(
                leader_elect,
                lease_duration,
                renew_deadline,
                retry_period,
                resource_name,
                resource_namespace,
            ),
        )
        api = ApiClient.from_kubeconfig(kubeconfig)
    except bad_input as err:
        _fail(str(err))
    options.bind_address = bind_address
    options.port = port if port > 0 else None
    options.seed = seed
    try:
        runner = LiveRunner(api, sched_config, registry, options)
    except errors as err:
        _fail(str(err))
    except OSError as err:  # the ops port is taken
        _fail(f"{bind_address}:{port}: {err.strerror or err}")

    def on_signal(signum: int, frame: object) -> None:
        runner.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        code = runner.run()
    finally:
        api.close()
    raise typer.Exit(code)


@app.command()
def snapshot(
    kubeconfig: Annotated[
        Path | None,
        typer.Option("--kubeconfig", help="Default: the in-cluster service account, $KUBECONFIG."),
    ] = None,
) -> None:
    """Print the cluster's Nodes, Pods and related objects as YAML for 'simulate --cluster'."""
    from wasmsched.live import ApiClient, ApiError, KubeConfigError
    from wasmsched.live import dump as dump_yaml
    from wasmsched.live import snapshot as take_snapshot

    try:
        api = ApiClient.from_kubeconfig(kubeconfig)
    except KubeConfigError as err:
        _fail(str(err))
    try:
        objects = take_snapshot(api)
    except ApiError as err:
        _fail(f"{api.server}: {err}")
    finally:
        api.close()
    typer.echo(dump_yaml(objects), nl=False)


def main() -> None:
    app()
