"""The ``setpoint demo`` command: start, apply the samples, watch them converge, clean up."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import click

from setpoint.cli.demo.session import DemoSession, load_samples
from setpoint.cli.demo.snapshot import NAMESPACE, Snapshot, take_snapshot
from setpoint.cli.demo.view import explore_commands, progress_lines, render

__all__ = ["demo_command"]

#: How often the view reads the cluster.
POLL_SECONDS = 0.5
#: The demo's field manager, as it appears in the samples' managedFields.
FIELD_MANAGER = "setpoint-demo"


def _say(message: str) -> None:
    click.echo(click.style("setpoint demo: ", fg="cyan") + message, err=True)


def _plurals(samples: list[dict[str, Any]], crds: list[dict[str, Any]]) -> list[str]:
    kinds = {str(sample.get("kind")) for sample in samples}
    return [
        str(crd["spec"]["names"]["plural"]) for crd in crds if crd["spec"]["names"]["kind"] in kinds
    ]


async def _watch(
    session: DemoSession, samples: list[dict[str, Any]], *, once: bool, limit: float, live: bool
) -> tuple[int, Snapshot | None, list[str]]:
    """Apply the samples and watch until converged (``once``) or Ctrl-C; returns the exit code,
    the last snapshot and the CRD plurals."""
    from setpoint.client import Client

    started = time.monotonic()
    async with (
        Client.from_kubeconfig(session.kubeconfig, field_manager=FIELD_MANAGER) as client,
        aiohttp.ClientSession() as http,
    ):
        for sample in samples:
            await client.apply(sample, namespace=NAMESPACE, force=True)
        _say(f"applied {len(samples)} samples in namespace {NAMESPACE}")
        crds = list(await client.list("apiextensions.k8s.io/v1", "CustomResourceDefinition"))
        plurals = _plurals(samples, crds)
        snapshot: Snapshot | None = None
        states: dict[str, str] = {}
        reported = False

        async def step() -> int | None:
            nonlocal snapshot, states, reported
            failure = session.operators_failure()
            if failure is not None:
                _say(click.style(failure, fg="red"))
                return 1
            snapshot = await take_snapshot(client, samples, http, session.metrics_url)
            elapsed = time.monotonic() - started
            if not live:
                lines, states = progress_lines(states, snapshot, elapsed)
                for line in lines:
                    click.echo(line)
            if snapshot.converged and not reported:
                reported = True
                _say(f"everything converged in {elapsed:.1f} s")
                if once:
                    return 0
                if not live:
                    click.echo(_explore(session, snapshot, plurals))
            if once and elapsed > limit:
                waiting = [
                    f"{observation.label} ({observation.state})"
                    for observation in snapshot.observations
                    if not observation.converged
                ]
                _say(
                    click.style(
                        f"not converged within {limit:.0f} s: {', '.join(waiting)}", fg="red"
                    )
                )
                return 1
            return None

        if live:
            from rich.console import Console
            from rich.live import Live

            with Live(console=Console(), refresh_per_second=4, transient=False) as screen:
                while True:
                    code = await step()
                    if snapshot is not None:
                        footer = _explore(session, snapshot, plurals) if reported else None
                        screen.update(render(snapshot, time.monotonic() - started, footer))
                    if code is not None:
                        return code, snapshot, plurals
                    await asyncio.sleep(POLL_SECONDS)
        while True:
            code = await step()
            if code is not None:
                return code, snapshot, plurals
            await asyncio.sleep(POLL_SECONDS)


def _explore(
    session: DemoSession, snapshot: Snapshot, plurals: list[str], *, running: bool = True
) -> str:
    when = (
        "in another terminal, while the demo runs; Ctrl-C here stops it"
        if running
        else ("run `setpoint demo` without --once to keep the cluster up")
    )
    return (
        f"\nExplore ({when}):\n\n" + explore_commands(session.kubeconfig, snapshot, plurals) + "\n"
    )


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@click.command(name="demo")
@click.argument(
    "examples",
    required=False,
    default="examples",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option("--once", is_flag=True, help="Exit 0 once everything converged (1 on timeout).")
@click.option(
    "--timeout",
    type=float,
    default=180.0,
    show_default=True,
    help="With --once: seconds to wait for convergence.",
)
@click.option(
    "--simulate-pods",
    is_flag=True,
    help="Simulate containers instead of running their commands (--run-pods off).",
)
@click.option(
    "--console/--no-console",
    "console",
    default=True,
    show_default=True,
    help="Start the web console (setpoint console) and print its URL.",
)
def demo_command(
    examples: Path, once: bool, timeout: float, simulate_pods: bool, console: bool
) -> None:
    """The README tour: a local cluster, the seed operators of EXAMPLES (default: examples),
    their samples, converging live.

    \b
    Example:
      setpoint demo                 # until Ctrl-C
      setpoint demo --once          # exit 0 once converged (CI)
    """
    samples = load_samples(examples)
    if not samples:
        raise click.ClickException(f"{examples}: the example projects have no config/samples")
    # SIGTERM and a closed terminal (SIGHUP) stop the demo as Ctrl-C does: cleanly.
    for stop_signal in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop_signal, _interrupt)
    _say("starting a local cluster and the operators ...")
    session = DemoSession.start(examples, run_pods=not simulate_pods)
    code = 1
    try:
        _say(f"cluster up; operators of {examples} running (log: {session.workdir}/operators.log)")
        if console:
            try:
                _say(f"console: {session.start_console()}")
            except click.ClickException as failed:  # the demo is still useful without it
                _say(click.style(failed.message, fg="yellow"))
        live = sys.stdout.isatty() and not once
        code, snapshot, plurals = asyncio.run(
            _watch(session, samples, once=once, limit=timeout, live=live)
        )
        if once and snapshot is not None and code == 0:
            click.echo(_explore(session, snapshot, plurals, running=False))
    except KeyboardInterrupt:
        code = 0
    finally:
        _say("stopping the operators and the cluster")
        session.stop()
    sys.exit(code)
