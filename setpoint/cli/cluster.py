"""``setpoint cluster``: the local control plane."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

import click

from setpoint.cli import garbage_collection
from setpoint.cli.cluster_clock import CLOCK_MODES, clock, cluster_clock
from setpoint.cli.cluster_nodes import node
from setpoint.cluster.apiserver.audit import AuditLogError
from setpoint.cluster.apiserver.audit.audit_feed import DEFAULT_AUDIT_FEED_SIZE
from setpoint.cluster.apiserver.http.fault_injection import FaultSpecError, parse_fault_spec
from setpoint.cluster.apiserver.storage.base import StorageOpenError
from setpoint.cluster.controllers.kubelet.log_files import parse_size
from setpoint.cluster.data_directory import DataDirectoryError
from setpoint.cluster.identity import IdentityError, write_user_kubeconfig_for
from setpoint.cluster.local_cluster import LocalCluster

#: Name of the kubeconfig written into ``--data-dir`` when ``--kubeconfig`` is not given.
DATA_DIR_KUBECONFIG = "kubeconfig"
LOG_LEVELS = ("debug", "info", "warning", "error")
AUTHORIZATION_MODES = ("AlwaysAllow", "RBAC")
AUDIT_LEVELS = ("Metadata", "Request")
RUN_PODS_MODES = ("isolated", "unsafe")


@click.group()
@click.pass_context
def cluster(ctx: click.Context) -> None:
    """Run the local Kubernetes control plane.

    \b
    Example:
      setpoint cluster serve --in-memory --kubeconfig /tmp/kubeconfig
    """
    if ctx.invoked_subcommand != "serve":  # serve resumes once the cluster has started
        garbage_collection.resume()


cluster.add_command(node)
cluster.add_command(clock)


@cluster.command()
@click.option(
    "--port", type=int, default=0, show_default=True, help="Port on 127.0.0.1 (0: any free port)."
)
@click.option(
    "--https-port",
    type=int,
    default=0,
    show_default=True,
    help="HTTPS port on 127.0.0.1, the one the kubeconfig names (0: any free port).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Durable storage directory: objects (SQLite), token, certificates and ports, all kept "
    "across restarts.",
)
@click.option(
    "--in-memory",
    is_flag=True,
    default=False,
    help="Keep everything in memory (the default without --data-dir).",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where to write the kubeconfig once ready.",
)
@click.option(
    "--client-ca",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="PEM CA whose client certificates authenticate users (CN: user, O: groups); "
    "default: the cluster's own CA.",
)
@click.option(
    "--nodes",
    type=click.IntRange(0, 10_000),
    default=1,
    show_default=True,
    help="Node objects to create and run pods on.",
)
@click.option(
    "--run-pods",
    type=click.Choice(RUN_PODS_MODES),
    is_flag=False,
    flag_value="isolated",
    default=None,
    help="Run containers' command+args as local processes, each pod in a sandbox (default: "
    "simulate them). Where pods cannot be sandboxed only system:masters may create them; "
    "--run-pods=unsafe runs them as the server's user for everyone (see docs/local-cluster.md).",
)
@click.option(
    "--container-log-max-size",
    default="10Mi",
    show_default=True,
    metavar="SIZE",
    help="--run-pods: rotate a container's log file once it reaches SIZE (as the kubelet flag).",
)
@click.option(
    "--container-log-max-files",
    type=click.IntRange(2, None),
    default=5,
    show_default=True,
    help="--run-pods: log files kept per container, the current one included.",
)
@click.option(
    "--no-controllers",
    is_flag=True,
    default=False,
    help="Serve the API only: no controllers, scheduler or kubelet (for benchmarks).",
)
@click.option(
    "--authorization",
    type=click.Choice(AUTHORIZATION_MODES),
    default="RBAC",
    show_default=True,
    help="RBAC enforces Roles and bindings (the kubeconfig's admin may do anything); "
    "AlwaysAllow lets every authenticated request through.",
)
@click.option(
    "--faults",
    "faults",
    default=None,
    metavar="SPEC",
    help="Inject faults into a fraction of API requests (off by default), e.g. "
    "'429=0.1:2,503=0.05,reset=0.05,latency=0.2:0.5;verbs=create|update;seed=7' "
    "(see docs/local-cluster.md).",
)
@click.option(
    "--audit-log",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Append one audit.k8s.io/v1 Event (JSON) per request to this file "
    "(for `setpoint rbac suggest`). Off by default.",
)
@click.option(
    "--audit-level",
    type=click.Choice(AUDIT_LEVELS),
    default="Metadata",
    show_default=True,
    help="Request adds each request's body (requestObject) to the Metadata.",
)
@click.option(
    "--clock",
    "clock_mode",
    type=click.Choice(CLOCK_MODES),
    default="real",
    show_default=True,
    help="'manual': the cluster clock starts at the real time and then moves only when "
    "told to (`setpoint cluster clock advance 2h`, `... clock set TIME`).",
)
@click.option(
    "--audit-feed-size",
    type=click.IntRange(min=0),
    default=DEFAULT_AUDIT_FEED_SIZE,
    show_default=True,
    help="Recent writes kept, with their diffs, for GET /debug/setpoint/audit (0: off).",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS),
    default="info",
    show_default=True,
    help="'debug' logs one line per request.",
)
def serve(
    port: int,
    https_port: int,
    data_dir: str | None,
    in_memory: bool,
    kubeconfig: str | None,
    client_ca: str | None,
    nodes: int,
    run_pods: str | None,
    container_log_max_size: str,
    container_log_max_files: int,
    no_controllers: bool,
    authorization: str,
    faults: str | None,
    audit_log: str | None,
    audit_level: str,
    clock_mode: str,
    audit_feed_size: int,
    log_level: str,
) -> None:
    """Serve the Kubernetes API on 127.0.0.1 in the foreground.

    Plain HTTP on --port, HTTPS (for kubectl, which sends tokens only over TLS; it also accepts
    client certificates) on --https-port; both need a credential such as the bearer token
    written into the kubeconfig.

    \b
    Example:
      setpoint cluster serve --data-dir ./cluster-data    # kubeconfig in ./cluster-data
      KUBECONFIG=./cluster-data/kubeconfig kubectl get namespaces
    """
    if data_dir is not None and in_memory:
        raise click.UsageError("--data-dir and --in-memory exclude each other")
    for value, hint in ((port, "--port"), (https_port, "--https-port")):
        if not 0 <= value <= 65535:
            raise click.BadParameter(f"{value} is not a port number (0-65535)", param_hint=hint)
    try:
        log_max_size = parse_size(container_log_max_size)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--container-log-max-size") from None
    if faults is not None:
        try:
            parse_fault_spec(faults)
        except FaultSpecError as error:
            raise click.BadParameter(str(error), param_hint="--faults") from None
    logging.basicConfig(
        level=log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    kubeconfig_path = kubeconfig
    if kubeconfig_path is None and data_dir is not None:
        kubeconfig_path = str(Path(data_dir) / DATA_DIR_KUBECONFIG)
    try:
        asyncio.run(
            _serve(
                port,
                https_port,
                data_dir,
                kubeconfig_path,
                controllers=not no_controllers,
                nodes=nodes,
                run_pods=run_pods or False,
                container_log_max_size=log_max_size,
                container_log_max_files=container_log_max_files,
                authorization=authorization,
                faults=faults,
                client_ca=client_ca,
                audit_log=audit_log,
                audit_level=audit_level,
                clock_mode=clock_mode,
                audit_feed_size=audit_feed_size,
            )
        )
    except (StorageOpenError, IdentityError, DataDirectoryError, AuditLogError) as exc:
        # e.g. another server holds the same --data-dir: a one-line error, not a traceback
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot serve on 127.0.0.1: {exc}") from exc


async def _serve(
    port: int,
    https_port: int,
    data_dir: str | None,
    kubeconfig: str | None,
    *,
    controllers: bool,
    nodes: int,
    run_pods: str | bool,
    container_log_max_size: int,
    container_log_max_files: int,
    authorization: str,
    faults: str | None = None,
    client_ca: str | None,
    audit_log: str | None = None,
    audit_level: str = "Metadata",
    clock_mode: str = "real",
    audit_feed_size: int = DEFAULT_AUDIT_FEED_SIZE,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    local = LocalCluster(
        in_memory=data_dir is None,
        data_dir=data_dir,
        port=port,
        https_port=https_port,
        kubeconfig_path=kubeconfig,
        controllers=controllers,
        nodes=nodes,
        run_pods=run_pods,
        container_log_max_size=container_log_max_size,
        container_log_max_files=container_log_max_files,
        authorization=authorization,
        faults=faults,
        client_ca=client_ca,
        audit_log=audit_log,
        audit_level=audit_level,
        clock=cluster_clock(clock_mode),
        audit_feed_size=audit_feed_size,
    )
    async with local:
        garbage_collection.settle_after_start()
        garbage_collection.resume()
        _say_how_pods_run(local, run_pods)
        click.echo(
            f"setpoint: serving the Kubernetes API on {local.url} and {local.https_url}", err=True
        )
        click.echo(f"setpoint: kubeconfig written to {local.kubeconfig_path}", err=True)
        if clock_mode == "manual":
            click.echo(
                f"setpoint: the cluster clock is manual, at "
                f"{local.clock.now().strftime('%Y-%m-%dT%H:%M:%SZ')}: "
                "move it with `setpoint cluster clock advance DURATION`",
                err=True,
            )
        if audit_log is not None:
            click.echo(f"setpoint: audit log ({audit_level}) appended to {audit_log}", err=True)
        click.echo(f"export KUBECONFIG={local.kubeconfig_path}")
        sys.stdout.flush()
        await stop.wait()
        click.echo("setpoint: shutting down", err=True)
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signum)


def _say_how_pods_run(local: LocalCluster, run_pods: str | bool) -> None:
    if not run_pods or not controllers_running(local):
        return
    isolation = local.pod_isolation
    if run_pods == "unsafe":
        click.echo(
            "setpoint: --run-pods=unsafe: pods run as this server's user, unconfined: whoever "
            "may create pods may run code as that user and read its admin credentials",
            err=True,
        )
    elif isolation is not None and isolation.available:
        who = "nobody" if isolation.uid is not None else "this server's user"
        click.echo(
            f"setpoint: --run-pods: each pod runs in a sandbox (bubblewrap) as {who}", err=True
        )
    elif isolation is not None:
        click.echo(
            f"setpoint: --run-pods: pods cannot be isolated on this machine ({isolation.reason}); "
            "only system:masters may create pods (--run-pods=unsafe lets everyone)",
            err=True,
        )


def controllers_running(local: LocalCluster) -> bool:
    """Whether ``local`` runs its controllers (and so a kubelet)."""
    return local.controllers is not None


@cluster.command("user-kubeconfig")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, exists=True),
    required=True,
    help="The data directory of a cluster started with 'serve --data-dir' (its CA signs).",
)
@click.option("--user", "user", required=True, help="User name (the certificate's CN).")
@click.option(
    "--group",
    "groups",
    multiple=True,
    help="A group of the user (the certificate's O); repeat for several.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False),
    required=True,
    help="Where to write the kubeconfig (mode 0600).",
)
def user_kubeconfig(data_dir: str, user: str, groups: tuple[str, ...], output: str) -> None:
    """Write a kubeconfig that logs in as USER with a client certificate.

    The certificate is signed by the cluster's CA in --data-dir; the kubeconfig names the
    cluster's last HTTPS port. (A cluster served with --client-ca does not trust that CA.)

    \b
    Example:
      setpoint cluster user-kubeconfig --data-dir ./cluster-data --user alice --group dev \\
          -o alice.kubeconfig
      kubectl --kubeconfig alice.kubeconfig auth whoami
    """
    if not user.strip():
        raise click.BadParameter("must not be empty", param_hint="--user")
    try:
        path = write_user_kubeconfig_for(data_dir, output, user, groups)
    except (IdentityError, DataDirectoryError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"setpoint: kubeconfig for {user} written to {path}", err=True)
