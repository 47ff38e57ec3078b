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

from wasmsched.cli.choices import Only
from wasmsched.release.version import (
    DEFAULT_KUBERNETES_VERSION,
    requested_kubernetes_version,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    # Plain (click) help: rich's panels cut long option names at 80 columns.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="A Kubernetes scheduler whose plugins can be WebAssembly (kube-scheduler-wasm-extension guests).",
)

EXIT_BAD_INPUT = 2
EXIT_UNSCHEDULABLE = 3


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


# Options several commands share, declared once.
OutputOption = Annotated[OutputFormat, typer.Option("--output", "-o", metavar="table|json")]
ReportOption = Annotated[
    Path | None,
    typer.Option(
        "--report",
        metavar="FILE.html",
        help="Write a self-contained HTML report (charts that open offline).",
    ),
]

# The release to model: kube-scheduler's own flags, given once (or, for diff, per side).
KubernetesVersionOption = Annotated[
    str | None,
    typer.Option(
        "--kubernetes-version",
        metavar="VERSION",
        help="The kube-scheduler release to model, 1.33 to 1.37 (default: the server version "
        f"a `wasmsched snapshot` recorded, else {DEFAULT_KUBERNETES_VERSION}).",
    ),
]
FeatureGatesOption = Annotated[
    str,
    typer.Option(
        "--feature-gates",
        metavar="GATES",
        help="Feature gates as kube-scheduler's --feature-gates sets them (NAME=BOOL,...), for that release.",
    ),
]


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"wasmsched {version('wasmsched')}")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            typer.echo("wasmsched (not installed)")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """A Kubernetes scheduler whose plugins can be WebAssembly (kube-scheduler-wasm-extension guests)."""


def _fail(message: str) -> NoReturn:
    # One line: the file and the problem. A guest's trap carries wasmtime's backtrace:
    # keep its cause, drop the frames.
    text = str(message)
    head, _, tail = text.partition("error while executing at wasm backtrace:")
    if tail:
        cause = tail.partition("Caused by:")[2].strip()
        text = f"{head.strip()} ({cause})" if cause else head
    one_line = " ".join(text.split())
    typer.echo(f"wasmsched: error: {one_line}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def _write_report(path: Path, page: str) -> None:
    """Writes an HTML report and says so on stderr (stdout may be a JSON document)."""
    from wasmsched.report import write_report

    try:
        write_report(path, page)
    except OSError as err:
        _fail(f"{path}: {err.strerror or err}")
    typer.echo(f"report written to {path}", err=True)


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


def _pod_keys(values: list[str] | None) -> frozenset[str] | None:
    if not values:
        return None
    for value in values:
        namespace, _, name = value.partition("/")
        if not namespace or not name or "/" in name:
            raise typer.BadParameter(
                f"{value!r}: expected namespace/name", param_hint="--explain-pod"
            )
    return frozenset(values)


@app.command()
def simulate(
    cluster: Annotated[
        Path,
        typer.Option(
            "--cluster",
            metavar="PATH",
            help="A YAML file or a directory of manifests; - reads standard input.",
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option("--config", metavar="FILE", help="A KubeSchedulerConfiguration file."),
    ] = None,
    output: OutputOption = OutputFormat.table,
    seed: Annotated[
        int,
        typer.Option("--seed", metavar="N", help="Seed of the tie-breaking between equal nodes."),
    ] = 0,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Show each plugin's Filter verdict and Score (raw, normalized, weighted) per "
            "node, for every pod (or those of --explain-pod).",
        ),
    ] = False,
    explain_pod: Annotated[
        list[str] | None,
        typer.Option(
            "--explain-pod",
            metavar="NAMESPACE/NAME",
            help="Explain only this pod (repeatable); implies --explain.",
        ),
    ] = None,
    explain_output: Annotated[
        Path | None,
        typer.Option(
            "--explain-output",
            metavar="FILE.json",
            help="Write the full explain record as JSON lines, one per scheduling attempt.",
        ),
    ] = None,
    only: Annotated[
        Only,
        typer.Option(
            "--only",
            metavar="pending|unschedulable|all",
            help="Pods the table lists: those that were pending, "
            "those left unschedulable (or in error), or all.",
        ),
    ] = Only.pending,
    report: ReportOption = None,
    kubernetes_version: KubernetesVersionOption = None,
    feature_gates: FeatureGatesOption = "",
    fail_on_unschedulable: Annotated[
        bool,
        typer.Option(
            "--fail-on-unschedulable",
            help=f"Exit {EXIT_UNSCHEDULABLE} when a pod stays Unschedulable (or Error).",
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
    from wasmsched.cli.render import print_explain, print_table
    from wasmsched.config import load_config_or_default
    from wasmsched.errors import WasmschedError
    from wasmsched.release.features import SchedulerFeatures
    from wasmsched.scheduler.registry import default_registry
    from wasmsched.sim.document import document, write_document, write_explain_lines
    from wasmsched.sim.simulation import Simulation

    explain_pods = _pod_keys(explain_pod)
    explain = explain or explain_pods is not None
    record = explain or explain_output is not None
    registry = default_registry()
    try:
        # "-" is standard input (load_manifests reads it). The objects are read as the
        # release named, else the one a Snapshot document records; the run models it.
        objects = load_manifests(
            "-" if str(cluster) == "-" else cluster,
            kubernetes_version=requested_kubernetes_version(kubernetes_version),
        )
        known_pods = {p.key for p in objects.pods}
        for key in sorted((explain_pods or frozenset()) - known_pods):
            _fail(f"--explain-pod {key}: no such pod in {cluster}")
        features = SchedulerFeatures.of(objects.kubernetes_version, feature_gates)
        sched_config = load_config_or_default(config, registry, features)
        sim = Simulation(
            objects,
            sched_config,
            registry,
            seed=seed,
            explain=record,
            explain_pods=explain_pods,
        )
    except WasmschedError as err:
        lines = getattr(err, "lines", None) or [str(err)]  # ManifestError: one per problem
        for line in lines[:-1]:
            typer.echo(f"wasmsched: error: {line}", err=True)
        _fail(lines[-1])
    for warning in objects.warnings:
        typer.echo(f"wasmsched: warning: {warning}", err=True)
    try:
        with _progress(progress and output is OutputFormat.table and sys.stderr.isatty()) as update:
            result = sim.run(update)
    except WasmschedError as err:
        _fail(str(err))
    finally:
        sim.close()
    if explain_output is not None:
        try:
            with explain_output.open("w", encoding="utf-8") as out:
                write_explain_lines(result, out)
        except OSError as err:
            _fail(f"{explain_output}: {err.strerror or err}")
    if report is not None:
        from wasmsched.report import simulation_report

        _write_report(report, simulation_report(document(result)))
    if output is OutputFormat.json:
        write_document(result, sys.stdout, explain, explain_pods)
    else:
        console = Console()
        if explain:
            print_explain(console, result, only, explain_pods)
        else:
            print_table(console, result, only)
    if fail_on_unschedulable and any(
        r.was_pending and r.result in ("Unschedulable", "Error") for r in result.pods
    ):
        raise typer.Exit(EXIT_UNSCHEDULABLE)


@app.command()
def inspect(
    plugin: Annotated[
        Path, typer.Argument(metavar="PLUGIN", help="A .wasm plugin (or .wat text).")
    ],
    output: OutputOption = OutputFormat.table,
    guest_config: Annotated[
        str,
        typer.Option(
            "--guest-config", metavar="TEXT", help="The guestConfig string its start-up reads."
        ),
    ] = "",
    args: Annotated[
        list[str] | None,
        typer.Option("--arg", metavar="ARG", help="A WASI argv entry (repeatable)."),
    ] = None,
) -> None:
    """Show a wasm plugin's exports, the extension points they give, its imports, and whether
    the host can load it."""
    from wasmsched.wasm import WasmPluginConfig, inspect_wasm
    from wasmsched.wasm.cache import HEAD_BYTES, not_wasm

    if plugin.is_dir():
        _fail(f"{plugin}: is a directory, not a wasm plugin (give a .wasm or .wat file)")
    if not plugin.is_file():
        _fail(f"{plugin}: {'not a regular file' if plugin.exists() else 'no such file'}")
    try:
        with plugin.open("rb") as f:
            problem = not_wasm(f.read(HEAD_BYTES))
    except OSError as err:
        problem = f"unreadable ({err.strerror or err})"
    if problem:
        _fail(f"{plugin}: {problem}")
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
    config: Annotated[
        Path, typer.Option("--config", metavar="FILE", help="A KubeSchedulerConfiguration file.")
    ],
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig",
            metavar="FILE",
            help="Default: the in-cluster service account, $KUBECONFIG.",
        ),
    ] = None,
    leader_elect: Annotated[
        bool | None,
        typer.Option(
            "--leader-elect/--no-leader-elect",
            help="Elect a leader with a Lease (default: the config's leaderElection, else on).",
        ),
    ] = None,
    lease_duration: Annotated[
        str | None,
        typer.Option("--leader-elect-lease-duration", metavar="DURATION", help="Default 15s."),
    ] = None,
    renew_deadline: Annotated[
        str | None,
        typer.Option("--leader-elect-renew-deadline", metavar="DURATION", help="Default 10s."),
    ] = None,
    retry_period: Annotated[
        str | None,
        typer.Option("--leader-elect-retry-period", metavar="DURATION", help="Default 2s."),
    ] = None,
    resource_name: Annotated[
        str | None,
        typer.Option("--leader-elect-resource-name", metavar="NAME", help="Default wasmsched."),
    ] = None,
    resource_namespace: Annotated[
        str | None,
        typer.Option(
            "--leader-elect-resource-namespace", metavar="NAMESPACE", help="Default kube-system."
        ),
    ] = None,
    bind_address: Annotated[
        str,
        typer.Option(
            "--bind-address", metavar="ADDRESS", help="Address of /healthz, /readyz, /metrics."
        ),
    ] = "0.0.0.0",
    port: Annotated[
        int,
        typer.Option(
            "--port",
            metavar="PORT",
            min=0,
            max=65535,
            help="Port of /healthz, /readyz, /metrics: 1-65535, or 0 for none.",
        ),
    ] = 10259,
    log_format: Annotated[
        LogFormat, typer.Option("--log-format", metavar="text|json")
    ] = LogFormat.text,
    log_level: Annotated[
        LogLevel, typer.Option("--log-level", metavar="debug|info|warning|error")
    ] = LogLevel.info,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed of the tie-breaking.")] = 0,
    api_workers: Annotated[
        int | None,
        typer.Option(
            "--api-workers",
            metavar="N",
            min=1,
            help="Most bindings, status patches, deletes in flight (default 64).",
        ),
    ] = None,
    event_workers: Annotated[
        int | None,
        typer.Option(
            "--event-workers", metavar="N", min=1, help="Most events in flight (default 16)."
        ),
    ] = None,
    event_queue_length: Annotated[
        int | None,
        typer.Option(
            "--event-queue-length", metavar="N", min=1, help="Events queued before drops (1000)."
        ),
    ] = None,
    max_binds_in_flight: Annotated[
        int | None,
        typer.Option(
            "--max-binds-in-flight",
            metavar="N",
            min=1,
            help="Bindings in flight before popping pauses (256).",
        ),
    ] = None,
    kubernetes_version: KubernetesVersionOption = None,
    feature_gates: FeatureGatesOption = "",
) -> None:
    """Run as a live scheduler against a Kubernetes API server."""
    import signal

    from wasmsched.config import load_client_connection, load_config
    from wasmsched.errors import WasmschedError
    from wasmsched.live import ApiClient, ApiError, LiveRunner
    from wasmsched.live.client import accepts_protobuf, sends_protobuf
    from wasmsched.live.ops import configure_logging
    from wasmsched.live.options import (
        LeaderElectionFlags,
        leader_election_options,
        scheduler_features,
    )
    from wasmsched.live.ratelimit import TokenBucket
    from wasmsched.scheduler.registry import default_registry

    configure_logging(log_format.value, log_level.value)
    registry = default_registry()
    try:
        # How to reach the server comes first: its version picks the release the config is
        # read as (--kubernetes-version, when given, wins).
        connection = load_client_connection(config)
        requested = requested_kubernetes_version(kubernetes_version)
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
        # --kubeconfig wins over clientConnection.kubeconfig, as in kube-scheduler.
        api = ApiClient.from_kubeconfig(
            kubeconfig or connection.kubeconfig or None,
            rate_limit=TokenBucket(connection.qps, connection.burst)
            if connection.qps > 0
            else None,
            accept_protobuf=accepts_protobuf(
                connection.content_type, connection.accept_content_types
            ),
            send_protobuf=sends_protobuf(connection.content_type),
        )
    except (WasmschedError, ValueError) as err:
        # ValueError: live.options' duration and lease checks (not yet InputErrors).
        _fail(str(err))
    options.kubernetes_version = requested
    options.feature_gates = feature_gates
    try:
        features = scheduler_features(api, options)
        api.omitzero = features.creation_timestamp_omitzero
        sched_config = load_config(config, registry, features)
    except WasmschedError as err:
        api.close()
        _fail(f"{api.server}: {err}" if isinstance(err, ApiError) else str(err))
    options.bind_address = bind_address
    options.port = port if port > 0 else None
    options.seed = seed
    # Unset flags keep RunOptions' defaults (live/writer.py: DEFAULT_API_WORKERS, ...).
    for name, value in (
        ("api_workers", api_workers),
        ("event_workers", event_workers),
        ("event_queue_length", event_queue_length),
        ("max_binds_in_flight", max_binds_in_flight),
    ):
        if value is not None:
            setattr(options, name, value)
    try:
        runner = LiveRunner(api, sched_config, registry, options)
    except WasmschedError as err:
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
        typer.Option(
            "--kubeconfig",
            metavar="FILE",
            help="Default: the in-cluster service account, $KUBECONFIG.",
        ),
    ] = None,
) -> None:
    """Print the cluster's Nodes, Pods and related objects as YAML for 'simulate --cluster'."""
    from wasmsched.errors import WasmschedError
    from wasmsched.live import ApiClient
    from wasmsched.live import dump as dump_yaml
    from wasmsched.live import snapshot as take_snapshot

    try:
        api = ApiClient.from_kubeconfig(kubeconfig)
    except WasmschedError as err:
        _fail(str(err))
    try:
        objects = take_snapshot(api)
    except WasmschedError as err:
        _fail(f"{api.server}: {err}")
    finally:
        api.close()
    typer.echo(dump_yaml(objects), nl=False)


def main() -> None:
    app()
