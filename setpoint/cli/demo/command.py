"""The ``setpoint demo`` command: start, apply the samples, watch them converge, clean up."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import click

from setpoint.cli.demo.session import (
    DemoSession,
    load_denied_samples,
    load_samples,
    webhook_configuration_count,
)
from setpoint.cli.demo.snapshot import NAMESPACE, Snapshot, take_snapshot
from setpoint.cli.demo.view import explore_commands, progress_lines, render

__all__ = ["demo_command"]

#: How often the view reads the cluster.
POLL_SECONDS = 0.5
#: The demo's field manager, as it appears in the samples' managedFields.
FIELD_MANAGER = "setpoint-demo"
#: How long the operators get to register their webhook configurations (they start first).
WEBHOOK_REGISTRATION_SECONDS = 60.0
ADMISSION_API_VERSION = "admissionregistration.k8s.io/v1"


def _say(message: str) -> None:
    click.echo(click.style("setpoint demo: ", fg="cyan") + message, err=True)


def _plurals(samples: list[dict[str, Any]], crds: list[dict[str, Any]]) -> list[str]:
    from setpoint import kinds as builtin

    kinds = {str(sample.get("kind")) for sample in samples}
    plurals = []
    for crd in crds:
        names = crd["spec"]["names"]
        if names["kind"] in kinds:
            # kubectl resolves a plural that a built-in kind also has (cronjobs) to the
            # built-in one: name the group.
            clash = names["kind"] in builtin.__all__
            plurals.append(
                f"{names['plural']}.{crd['spec']['group']}" if clash else names["plural"]
            )
    return plurals


async def _webhooks_registered(client: Any, session: DemoSession) -> bool:
    """Wait until the operators registered their webhook configurations (so that the samples
    are defaulted and validated); False (said why) when they do not within the limit."""
    expected = webhook_configuration_count(session.examples)
    deadline = time.monotonic() + WEBHOOK_REGISTRATION_SECONDS
    while expected:
        registered = 0
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            registered += len(await client.list(ADMISSION_API_VERSION, kind))
        if registered >= expected:
            _say(f"{registered} webhook configurations registered by the operators")
            return True
        failure = session.operators_failure()
        if failure is not None or time.monotonic() > deadline:
            why = failure or f"not within {WEBHOOK_REGISTRATION_SECONDS:.0f} s"
            _say(click.style(f"the operators' webhooks were not registered: {why}", fg="red"))
            return False
        await asyncio.sleep(POLL_SECONDS)
    return True


def _converted_crds(crds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The CRDs that serve several versions (reads in another version need conversion)."""
    return [
        crd
        for crd in crds
        if sum(1 for version in crd["spec"].get("versions") or () if version.get("served")) > 1
    ]


async def _conversions_registered(client: Any, session: DemoSession) -> list[dict[str, Any]] | None:
    """Wait until every CRD serving several versions converts through its operator's webhook
    (``--webhooks-local`` points it there); the CRDs then, or None (said why) when one does not
    within the limit."""
    deadline = time.monotonic() + WEBHOOK_REGISTRATION_SECONDS
    while True:
        crds = list(await client.list("apiextensions.k8s.io/v1", "CustomResourceDefinition"))
        waiting = [
            crd["metadata"]["name"]
            for crd in _converted_crds(crds)
            if ((crd["spec"].get("conversion") or {}).get("strategy")) != "Webhook"
        ]
        if not waiting:
            return crds
        failure = session.operators_failure()
        if failure is not None or time.monotonic() > deadline:
            why = failure or f"not within {WEBHOOK_REGISTRATION_SECONDS:.0f} s"
            _say(click.style(f"no conversion webhook for {', '.join(waiting)}: {why}", fg="red"))
            return None
        await asyncio.sleep(POLL_SECONDS)


async def _show_converted_reads(
    client: Any, samples: list[dict[str, Any]], crds: list[dict[str, Any]]
) -> bool:
    """Read each sample of a multi-version kind in its other served versions, through the
    operator's conversion webhook, and print the spec fields that read differently; False if a
    read fails."""
    from setpoint.client import ApiError

    versions: dict[tuple[str, str], list[str]] = {}
    for crd in _converted_crds(crds):
        spec = crd["spec"]
        served = [v["name"] for v in spec.get("versions") or () if v.get("served")]
        versions[(spec["group"], spec["names"]["kind"])] = served
    for sample in samples:
        group, _, version = str(sample.get("apiVersion", "")).rpartition("/")
        others = [v for v in versions.get((group, str(sample.get("kind"))), []) if v != version]
        name = (sample.get("metadata") or {}).get("name")
        for other in others:
            try:
                read = await client.get(
                    f"{group}/{other}", sample["kind"], name, namespace=NAMESPACE
                )
            except ApiError as error:
                _say(
                    click.style(
                        f"reading {sample['kind']}/{name} as {other} failed: {error}", fg="red"
                    )
                )
                return False
            given, shown = sample.get("spec") or {}, read.get("spec") or {}
            changed = {
                key: shown[key] for key in shown if key in given and shown[key] != given[key]
            }
            _say(
                f"read {sample['kind']}/{name} (written as {version}) as {other}, converted by "
                f"its operator: spec {json.dumps(changed, separators=(',', ':'))}"
            )
    return True


async def _show_denials(client: Any, denied: list[tuple[Path, dict[str, Any]]]) -> bool:
    """Apply each object a webhook must refuse and print the refusal; False if one got in."""
    from setpoint.client import ApiError

    for path, obj in denied:
        name = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
        try:
            await client.apply(obj, namespace=NAMESPACE, force=True)
        except ApiError as refusal:
            _say(f"applying {path.parent.parent.name}/{path.parent.name}/{path.name} ({name}):")
            status = refusal.status
            click.echo(
                click.style(f"  refused, {status.get('code')} {status.get('reason')}: ", fg="red")
                + str(status.get("message"))
            )
            continue
        _say(click.style(f"{name} from {path} was admitted, not refused", fg="red"))
        return False
    return True


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
        if not await _webhooks_registered(client, session):
            return 1, None, []
        crds = await _conversions_registered(client, session)
        if crds is None:
            return 1, None, []
        for sample in samples:
            await client.apply(sample, namespace=NAMESPACE, force=True)
        _say(f"applied {len(samples)} samples in namespace {NAMESPACE}")
        if not await _show_denials(client, load_denied_samples(session.examples)):
            return 1, None, []
        if not await _show_converted_reads(client, samples, crds):
            return 1, None, []
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
