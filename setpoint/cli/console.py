"""``setpoint console``: the web console for a kubeconfig's cluster and some operators.

It serves on 127.0.0.1 only (a free port unless ``--port``) and prints one line, the URL with
this run's token, on stdout; everything else goes to stderr. ``setpoint dev`` and
``setpoint demo`` start it as a child process with :func:`start_console` and wait for that
line with :func:`console_url`.
"""

from __future__ import annotations

import asyncio
import errno
import signal
import subprocess
import time
from pathlib import Path

import click

from setpoint.cli.local_processes import last_line, setpoint_command

__all__ = ["console_command", "console_url", "start_console"]

#: How long :func:`start_console` waits for the URL (a loaded machine imports slowly).
CONSOLE_START_TIMEOUT = 30.0


def start_console(workdir: Path, kubeconfig: Path, operators: list[str]) -> subprocess.Popen[bytes]:
    """``setpoint console`` as a child process, its output in ``workdir``; the caller keeps
    it (to stop it, even when interrupted) and reads its URL with :func:`console_url`."""
    arguments = ["console", "--kubeconfig", str(kubeconfig)]
    for url in operators:
        arguments += ["--operator", url]
    with open(workdir / "console.url", "wb") as out, open(workdir / "console.log", "wb") as log:
        return subprocess.Popen(setpoint_command(*arguments), stdout=out, stderr=log)


def console_url(process: subprocess.Popen[bytes], workdir: Path) -> str:
    """The URL the console started by :func:`start_console` printed, once it has; raises
    ClickException with the reason when it exits or says nothing in time."""
    out_path, log_path = workdir / "console.url", workdir / "console.log"
    deadline = time.monotonic() + CONSOLE_START_TIMEOUT
    while True:
        text = out_path.read_text().strip()
        if text.startswith("http"):
            return text.splitlines()[0]
        if process.poll() is not None or time.monotonic() > deadline:
            raise click.ClickException(f"the console did not start: {last_line(log_path)}")
        time.sleep(0.05)


async def _serve(settings: object) -> None:
    from setpoint.console import ConsoleServer, ConsoleSettings

    assert isinstance(settings, ConsoleSettings)
    server = ConsoleServer(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(stop_signal, stop.set)
    try:
        url = await server.start()
        click.echo(url)
        click.echo(
            click.style("setpoint console: ", fg="cyan")
            + f"serving {len(server.operator_urls)} operator endpoint(s); Ctrl-C stops it",
            err=True,
        )
        await stop.wait()
    finally:
        await server.stop()


@click.command(name="console")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False, exists=True),
    help="The cluster to show (default: $KUBECONFIG, else ~/.kube/config).",
)
@click.option("--context", help="The kubeconfig context (default: its current context).")
@click.option(
    "--operator",
    "operators",
    multiple=True,
    metavar="URL",
    help="An operator's metrics address (e.g. http://127.0.0.1:8080), whose "
    "/debug/setpoint/* endpoints the Controllers and Timeline views read. Repeatable.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: a free one).",
)
def console_command(
    kubeconfig: str | None, context: str | None, operators: tuple[str, ...], port: int
) -> None:
    """A web console on 127.0.0.1: the cluster's resources live, each object's timeline (who
    changed it, which reconcile it caused), the operators' controllers and the cluster's pods.

    Prints the URL to open, with this run's token; the page needs it.

    \b
    Example:
      setpoint console --kubeconfig kubeconfig --operator http://127.0.0.1:8080
    """
    from setpoint.client import ConfigError
    from setpoint.console import ConsoleSettings
    from setpoint.console.operators import normalize_operator_url

    for url in operators:
        try:
            normalize_operator_url(url)
        except ValueError as bad:
            message = str(bad).removeprefix("--operator ")
            raise click.BadParameter(message, param_hint="--operator") from None
    settings = ConsoleSettings(
        kubeconfig=kubeconfig, context=context, operators=tuple(operators), port=port
    )
    try:
        asyncio.run(_serve(settings))
    except ConfigError as bad:  # a YAML parser's message spans lines: one line here
        raise click.ClickException(" ".join(str(bad).split())) from None
    except OSError as failed:
        if failed.errno == errno.EADDRINUSE:
            raise click.ClickException(f"--port {port}: 127.0.0.1:{port} is in use") from None
        raise click.ClickException(f"--port {port}: {failed}") from None
