"""`setpoint run TARGET`: run the operator(s) a module or file defines against a cluster.

Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT); 1 when the operator fails at run time
(the API server cannot be reached, no usable kubeconfig, a port in use, leadership lost, a
controller failed: Kubernetes then restarts the pod, as for a Go operator); 2 for bad usage (an
unknown option, a missing --kubeconfig file, a TARGET that defines no operator). Expected
failures are one line with a hint; `--debug` adds the traceback.

Ports: in a pod (in-cluster configuration) metrics and probes listen on controller-runtime's
`:8080` and `:8081`; anywhere else on `127.0.0.1` with a free port, so that several operators
run side by side on a laptop. The log says where they really listen.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from setpoint.cli.run_errors import describe_failure
from setpoint.controller.trace import DEFAULT_TRACE_CAPACITY
from setpoint.manager.api_server_wait import wait_for_api_server
from setpoint.manager.health import HealthCheck
from setpoint.manager.manager import Manager, ManagerError
from setpoint.manager.run_managers import run_managers
from setpoint.manager.structured_logging import LOG_FORMATS, configure_logging
from setpoint.manager.target import TargetError, find_managers

__all__ = ["run_command", "run_operators"]

log = logging.getLogger("setpoint.run")

# kubebuilder's scaffold ports in a pod: metrics on 8080, probes on 8081.
IN_CLUSTER_METRICS_BIND_ADDRESS = ":8080"
IN_CLUSTER_HEALTH_PROBE_BIND_ADDRESS = ":8081"
# Outside a pod: loopback only, and a free port, so a second operator does not collide.
LOCAL_BIND_ADDRESS = "127.0.0.1:0"
SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
EXIT_FAILED = 1
EXIT_USAGE = 2


def in_cluster() -> bool:
    """True in a pod with a service account (controller-runtime's in-cluster configuration)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and SERVICE_ACCOUNT_TOKEN.exists()


async def _preflight(managers: Sequence[Manager]) -> None:
    """Connect and make the first request, so a wrong kubeconfig or a dead server fails here,
    once, with its own message (not as a failure of every controller). A server that is not
    up yet is waited for, up to the cache-sync timeout (see `wait_for_api_server`)."""
    for manager in managers:
        await manager.connect()
        await wait_for_api_server(manager.client, manager.cache_sync_timeout)


async def run_operators(
    managers: Sequence[Manager], *, debug: bool = False, preflight: bool = True
) -> int:
    """Run the managers until a signal (exit code 0) or a failure of one (exit code 1).

    ``preflight``: first connect and ask the server for its version (see `_preflight`).
    """
    try:
        if preflight:
            await _preflight(managers)
        await run_managers(managers)
    except Exception as error:
        message = describe_failure(error)
        if message is None:
            log.error("operator failed: %s", error, exc_info=error)
        else:
            log.error("%s", message, exc_info=error if debug else None)
        for manager in managers:
            if not manager.started:
                await manager.close_client()
        return EXIT_FAILED
    return 0


class _TraceCapacity(click.ParamType[int]):
    """N of ``--trace[=N]``: a whole number of records, with a hint when TARGET was taken
    for it (``--trace`` before TARGET)."""

    name = "N"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        try:
            number = int(str(value))
        except ValueError:
            number = 0
        if number < 1:
            self.fail(
                f"N must be a whole number of records >= 1, got {value!r} (write --trace=N, "
                "or put a bare --trace after TARGET)",
                param,
                ctx,
            )
        return number


@click.command(name="run")
@click.argument("target")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, exists=True),
    help="Kubeconfig file (default: in a pod its service account, else $KUBECONFIG or "
    "~/.kube/config).",
)
@click.option("--context", "kube_context", help="Kubeconfig context to use.")
@click.option(
    "--as",
    "as_user",
    help="Act as this user (as kubectl --as), e.g. system:serviceaccount:NS:NAME to run with "
    "that ServiceAccount's RBAC; the kubeconfig's user must be allowed to impersonate.",
)
@click.option(
    "--as-group",
    "as_groups",
    multiple=True,
    help="Act as a member of this group too (repeatable; needs --as).",
)
@click.option(
    "-n",
    "--namespace",
    "namespaces",
    multiple=True,
    help="Watch only this namespace (repeatable); default: all namespaces.",
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=None,
    help="Run only while holding the Lease, so that replicas can stand by.",
)
@click.option("--leader-election-id", help="Name of the Lease (default: the operator's).")
@click.option("--leader-election-namespace", help="Namespace of the Lease.")
@click.option(
    "--warm-up-caches/--no-warm-up-caches",
    default=None,
    help="With --leader-elect: fill the caches while standing by, for a faster failover.",
)
@click.option(
    "--metrics-bind-address",
    help="Address of /metrics; '0' disables it. Default: ':8080' in a pod, else "
    "'127.0.0.1:0' (a free port, logged).",
)
@click.option(
    "--health-probe-bind-address",
    help="Address of /healthz and /readyz; '0' disables them. Default: ':8081' in a pod, "
    "else '127.0.0.1:0'.",
)
@click.option(
    "--cache-sync-timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds to wait for the API server to answer at start, and for the caches to sync "
    "(default 120, controller-runtime's).",
)
@click.option(
    "--cache-unready-after",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds an informer may fail to list/watch before /readyz fails (default 30).",
)
@click.option(
    "--cache-unhealthy-after",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds an informer may fail to list/watch before /healthz fails (default 180).",
)
@click.option(
    "--watch-idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a watch may stay silent (no event, no bookmark) before it is cut and "
    "started again (default 120).",
)
@click.option(
    "--webhook-port",
    type=click.IntRange(min=-1, max=65535),
    help="Port of the admission webhook server (default 9443, kubebuilder's; -1 turns it off).",
)
@click.option(
    "--webhook-cert-dir",
    help="Directory of the webhook server's tls.crt and tls.key "
    "(default <tmp>/k8s-webhook-server/serving-certs).",
)
@click.option(
    "--webhooks-local",
    is_flag=True,
    default=None,
    help="Make a CA and serving certificate, register the operator's webhook configurations "
    "(url: https://127.0.0.1:PORT) and remove them on exit.",
)
@click.option(
    "--follow-cluster-clock",
    is_flag=True,
    default=None,
    help="Make the operator's clock (requeue timers, ctx.now(), condition times) follow the "
    "local cluster's clock (`setpoint cluster serve --clock manual`).",
)
@click.option(
    "--trace",
    "trace_capacity",
    type=_TraceCapacity(),
    is_flag=False,
    flag_value=DEFAULT_TRACE_CAPACITY,
    default=None,
    help="Keep a trace of the last N reconcile steps (default N "
    f"{DEFAULT_TRACE_CAPACITY:,}) and serve it on the metrics endpoint under "
    "/debug/setpoint/trace. Off unless given (on under setpoint dev and demo).",
)
@click.option("--no-trace", is_flag=True, help="Keep no reconcile trace (the default).")
@click.option("--debug", is_flag=True, help="Print tracebacks of expected failures too.")
@click.option("--log-format", type=click.Choice(LOG_FORMATS), default="human", show_default=True)
@click.option("--log-level", default="info", show_default=True)
@click.option(
    "--graceful-shutdown-timeout",
    type=float,
    help="Seconds in-flight reconciles get to finish on shutdown (default 30).",
)
def run_command(
    target: str,
    kubeconfig: str | None,
    kube_context: str | None,
    as_user: str | None,
    as_groups: tuple[str, ...],
    namespaces: tuple[str, ...],
    leader_elect: bool | None,
    leader_election_id: str | None,
    leader_election_namespace: str | None,
    warm_up_caches: bool | None,
    metrics_bind_address: str | None,
    health_probe_bind_address: str | None,
    debug: bool,
    log_format: str,
    log_level: str,
    graceful_shutdown_timeout: float | None,
    cache_sync_timeout: float | None,
    cache_unready_after: float | None,
    cache_unhealthy_after: float | None,
    watch_idle_timeout: float | None,
    webhook_port: int | None,
    webhook_cert_dir: str | None,
    webhooks_local: bool | None,
    follow_cluster_clock: bool | None,
    trace_capacity: int | None,
    no_trace: bool,
) -> None:
    """Run the operator defined in TARGET (a .py file or a module, optionally :attribute; or
    an Ansible operator's watches.yaml, or a directory holding one).

    Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 when the operator fails or cannot
    reach the API server, 2 for usage errors.

    \b
    Example:
      setpoint run myop/operator.py --kubeconfig ~/.kube/config -n default
      setpoint run myop.operator:op --leader-elect
      setpoint run myop/operator.py --as system:serviceaccount:myop-system:myop
      setpoint run memcached-operator/watches.yaml
    """
    try:
        configure_logging("json" if log_format == "json" else "human", log_level)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--log-level") from None
    try:
        managers = ansible_operators(target, install_requirements=True) or find_managers(target)
    except TargetError as error:
        raise click.UsageError(str(error)) from None
    if as_groups and not as_user:
        raise click.UsageError("--as-group requires --as (the user to act as)")
    if no_trace and trace_capacity is not None:
        raise click.UsageError("--trace and --no-trace: give one of them")
    if no_trace:
        trace_capacity = 0
    pod = in_cluster() and kubeconfig is None
    if metrics_bind_address is None:
        metrics_bind_address = IN_CLUSTER_METRICS_BIND_ADDRESS if pod else LOCAL_BIND_ADDRESS
    if health_probe_bind_address is None:
        health_probe_bind_address = (
            IN_CLUSTER_HEALTH_PROBE_BIND_ADDRESS if pod else LOCAL_BIND_ADDRESS
        )
    try:
        for index, manager in enumerate(managers):
            # One process serves one /metrics (the registry is shared) and one probe port;
            # further operators in the same TARGET report readiness through the first one.
            first = index == 0
            manager.configure(
                kubeconfig=kubeconfig,
                context=kube_context,
                namespaces=namespaces or None,
                leader_election=leader_elect,
                leader_election_id=leader_election_id if first else None,
                leader_election_namespace=leader_election_namespace,
                metrics_bind_address=metrics_bind_address if first else "0",
                health_probe_bind_address=health_probe_bind_address if first else "0",
                graceful_shutdown_timeout=graceful_shutdown_timeout,
                warm_up_caches=warm_up_caches,
                cache_sync_timeout=cache_sync_timeout,
                cache_unready_after=cache_unready_after,
                cache_unhealthy_after=cache_unhealthy_after,
                watch_idle_timeout=watch_idle_timeout,
                impersonate_user=as_user,
                impersonate_groups=as_groups,
                webhook_port=webhook_port,
                webhook_cert_dir=webhook_cert_dir,
                webhooks_local=webhooks_local,
                follow_cluster_clock=follow_cluster_clock,
                trace_capacity=trace_capacity,
            )
            if not first:
                managers[0].add_readyz_check(f"operator-{index}", _ready_check(manager))
        for manager in managers[1:]:
            # One metrics endpoint per process: it shows every operator's controllers.
            managers[0].add_debug_peer(manager)
    except (ManagerError, ValueError) as error:
        raise click.UsageError(str(error)) from None
    sys.exit(asyncio.run(run_operators(managers, debug=debug)))


def ansible_operators(target: str, *, install_requirements: bool = False) -> list[Manager] | None:
    """A watches.yaml, or a directory holding one: an Operator SDK-style Ansible operator
    (``setpoint.ansible``); None for any other TARGET. ``install_requirements``: install what
    the project's requirements.yml lists and is missing (``setpoint run``)."""
    path = Path(target)
    watches = path if path.is_file() and path.suffix in (".yaml", ".yml") else path / "watches.yaml"
    if not watches.is_file():
        return None
    if importlib.util.find_spec("ansible_runner") is None:
        raise TargetError(
            f"TARGET {target!r} is an Ansible operator: it needs the ansible extra "
            "(pip install 'setpoint[ansible]', then python -m setpoint.ansible.install_collections)"
        )
    from setpoint.ansible import WatchesError, load_operator
    from setpoint.ansible.requirements import RequirementsError, ensure_requirements

    try:
        operator = load_operator(watches)
        if install_requirements:
            ensure_requirements(watches.parent)
    except (WatchesError, RequirementsError) as error:
        raise TargetError(str(error)) from None
    return [operator]


def _ready_check(manager: Manager) -> HealthCheck:
    async def check() -> None:
        outcomes = await manager.readyz.run_all(set())
        failed = [outcome.name for outcome in outcomes if not outcome.healthy]
        if failed:
            raise RuntimeError(f"checks failing: {', '.join(failed)}")

    return check
