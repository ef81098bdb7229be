"""``setpoint cluster clock [advance DURATION | set TIME]``: the local cluster's clock.

A cluster served with ``--clock manual`` keeps its own time, which moves only when told to;
the built-in controllers and the kubelet read it (CronJobs fire, Job deadlines pass, pods age)
and operators run with ``--follow-cluster-clock`` follow it. The commands talk to the cluster's
``/debug/setpoint/clock`` over its API (``--kubeconfig``), like any client; the time never
goes back.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

import click

from setpoint.api.clock import SYSTEM_CLOCK, Clock, FakeClock

if TYPE_CHECKING:
    from setpoint.client import Client
    from setpoint.client.cluster_clock import ClusterClockReading

#: ``setpoint cluster serve --clock``: real time, or a clock moved only from outside.
CLOCK_MODES: Final = ("real", "manual")


def cluster_clock(mode: str) -> Clock:
    """The clock a cluster served with ``--clock MODE`` runs on."""
    return FakeClock() if mode == "manual" else SYSTEM_CLOCK


def _show(reading: ClusterClockReading) -> None:
    click.echo(f"{reading.now.strftime('%Y-%m-%dT%H:%M:%SZ')} ({reading.mode})")


def _run(
    kubeconfig: str | None, action: Callable[[Client], Awaitable[ClusterClockReading]]
) -> None:
    async def call() -> ClusterClockReading:
        from setpoint.client import Client

        options = {"path": kubeconfig} if kubeconfig else {}
        client = await Client.from_kubeconfig(**options)
        try:
            return await action(client)
        finally:
            await client.close()

    from setpoint.client.errors import ApiError

    try:
        reading = asyncio.run(call())
    except ApiError as error:
        if error.code == 404:
            message = "this cluster serves no clock (is it a setpoint local cluster?)"
        else:
            message = error.message
        click.echo(f"Error: {message}", err=True)
        sys.exit(1)
    except Exception as error:
        from setpoint.cli.run_errors import describe_failure

        described = describe_failure(error)
        if described is None:
            raise
        click.echo(f"Error: {described}", err=True)
        sys.exit(1)
    _show(reading)


_KUBECONFIG = click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="The local cluster's kubeconfig (default: $KUBECONFIG, then ~/.kube/config).",
)


@click.group(invoke_without_command=True)
@_KUBECONFIG
@click.pass_context
def clock(ctx: click.Context, kubeconfig: str | None) -> None:
    """Show the local cluster's clock, or set or advance it (serve --clock manual).

    \b
    Example:
      setpoint cluster serve --clock manual --kubeconfig kc &
      setpoint cluster clock --kubeconfig kc            # 2026-12-24T17:00:00Z (manual)
      setpoint cluster clock advance 2h --kubeconfig kc
      setpoint cluster clock set 2026-12-24T18:00:00Z --kubeconfig kc
    """
    if ctx.invoked_subcommand is None:
        from setpoint.client.cluster_clock import read_cluster_clock

        _run(kubeconfig, read_cluster_clock)


@clock.command()
@click.argument("duration")
@_KUBECONFIG
def advance(duration: str, kubeconfig: str | None) -> None:
    """Move the cluster clock forward by DURATION (2h, 90s, 1h30m, 3d).

    Everything due meanwhile happens: CronJobs fire, deadlines pass, simulated containers
    finish or restart. Prints the new time.

    \b
    Example:
      setpoint cluster clock advance 2h --kubeconfig kc
    """
    from setpoint.api.go_durations import parse_go_duration
    from setpoint.client.cluster_clock import advance_cluster_clock

    try:
        seconds = parse_go_duration(duration, days=True)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="DURATION") from None
    if seconds < 0:
        raise click.BadParameter(
            f"{duration}: the cluster clock cannot go back", param_hint="DURATION"
        )
    _run(kubeconfig, lambda client: advance_cluster_clock(client, duration))


@clock.command("set")
@click.argument("time")
@_KUBECONFIG
def set_time(time: str, kubeconfig: str | None) -> None:
    """Move the cluster clock to TIME (RFC 3339, e.g. 2026-12-24T18:00:00Z); never back.

    \b
    Example:
      setpoint cluster clock set 2026-12-24T18:00:00Z --kubeconfig kc
    """
    from datetime import datetime

    from setpoint.client.cluster_clock import set_cluster_clock

    try:
        moment = datetime.fromisoformat(time)
    except ValueError:
        raise click.BadParameter(
            f"{time!r} is not an RFC 3339 time (e.g. 2026-12-24T18:00:00Z)", param_hint="TIME"
        ) from None
    if moment.tzinfo is None:
        raise click.BadParameter(f"{time!r} has no time zone (add Z for UTC)", param_hint="TIME")
    _run(kubeconfig, lambda client: set_cluster_clock(client, moment))
