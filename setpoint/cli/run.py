"""`setpoint run TARGET`: run the operator(s) a module or file defines against a cluster.

Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 when leadership was lost or a
controller failed (so Kubernetes restarts the pod, as for a Go operator), 2 for bad usage or a
TARGET that defines no operator.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence

import click

from setpoint.manager.health import HealthCheck
from setpoint.manager.leader_election import LeaderElectionLost
from setpoint.manager.manager import Manager, ManagerError
from setpoint.manager.run_managers import run_managers
from setpoint.manager.structured_logging import LOG_FORMATS, configure_logging
from setpoint.manager.target import TargetError, find_managers

__all__ = ["run_command", "run_operators"]

log = logging.getLogger("setpoint.run")

# kubebuilder's scaffold ports: metrics on 8080, probes on 8081.
DEFAULT_METRICS_BIND_ADDRESS = ":8080"
DEFAULT_HEALTH_PROBE_BIND_ADDRESS = ":8081"
EXIT_FAILED = 1
EXIT_USAGE = 2


async def run_operators(managers: Sequence[Manager]) -> int:
    """Run the managers until a signal (exit code 0) or a failure of one (exit code 1)."""
    try:
        await run_managers(managers)
    except LeaderElectionLost as error:
        log.error("%s; exiting so that this replica restarts as a candidate", error)
        return EXIT_FAILED
    except Exception as error:
        log.error("operator failed: %s", error, exc_info=error)
        return EXIT_FAILED
    return 0


@click.command(name="run")
@click.argument("target")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    help="Kubeconfig file (default: in a pod its service account, else $KUBECONFIG or "
    "~/.kube/config).",
)
@click.option("--context", "kube_context", help="Kubeconfig context to use.")
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
    default=DEFAULT_METRICS_BIND_ADDRESS,
    show_default=True,
    help="Address of /metrics; '0' disables it.",
)
@click.option(
    "--health-probe-bind-address",
    default=DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
    show_default=True,
    help="Address of /healthz and /readyz; '0' disables them.",
)
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
    namespaces: tuple[str, ...],
    leader_elect: bool | None,
    leader_election_id: str | None,
    leader_election_namespace: str | None,
    warm_up_caches: bool | None,
    metrics_bind_address: str,
    health_probe_bind_address: str,
    log_format: str,
    log_level: str,
    graceful_shutdown_timeout: float | None,
) -> None:
    """Run the operator defined in TARGET (a .py file or a module, optionally :attribute)."""
    try:
        configure_logging("json" if log_format == "json" else "human", log_level)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--log-level") from None
    try:
        managers = find_managers(target)
    except TargetError as error:
        raise click.UsageError(str(error)) from None
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
            )
            if not first:
                managers[0].add_readyz_check(f"operator-{index}", _ready_check(manager))
    except (ManagerError, ValueError) as error:
        raise click.UsageError(str(error)) from None
    sys.exit(asyncio.run(run_operators(managers)))


def _ready_check(manager: Manager) -> HealthCheck:
    async def check() -> None:
        outcomes = await manager.readyz.run_all(set())
        failed = [outcome.name for outcome in outcomes if not outcome.healthy]
        if failed:
            raise RuntimeError(f"checks failing: {', '.join(failed)}")

    return check
