"""Liveness probes of ``--run-pods`` containers: ``exec`` probes only.

After ``initialDelaySeconds``, every ``periodSeconds`` (10) the probe's command runs in the
container (inside its sandbox, or unconfined in the pod's directory) with its environment,
for at most ``timeoutSeconds`` (1). Each
failure is a ``Warning Unhealthy`` Event (``Liveness probe failed: <output>``); after
``failureThreshold`` (3) failures in a row the kubelet reports ``Killing`` (``Container app
failed liveness probe, will be restarted``) and stops the process, which then restarts as its
pod's restartPolicy says. Time is the cluster clock's. Simulated containers never fail one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from setpoint.api.clock import Clock

#: Adds one Event: (type, reason, message).
Report = Callable[[str, str, str], None]
#: Wraps a command to run in the container: (argv, ``create_subprocess_exec`` options).
Launcher = Callable[[list[str]], tuple[list[str], dict[str, Any]]]


def exec_probe(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The container's liveness probe when it is an ``exec`` probe with a command."""
    probe = spec.get("livenessProbe")
    if not isinstance(probe, Mapping):
        return None
    action = probe.get("exec")
    if not isinstance(action, Mapping) or not action.get("command"):
        return None
    return probe


async def _run_once(argv: list[str], launch: Launcher, limit_seconds: float) -> tuple[bool, str]:
    """(passed, output) of one probe run (a real process: real time bounds it)."""
    wrapped, options = launch(argv)
    try:
        process = await asyncio.create_subprocess_exec(
            *wrapped,
            **options,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return False, f'exec: "{argv[0]}": {exc.strerror or exc}'
    try:
        async with asyncio.timeout(limit_seconds):
            output, _ = await process.communicate()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        return False, f"command {' '.join(argv)!r} timed out"
    return process.returncode == 0, output.decode(errors="replace").strip()


async def watch_liveness(
    probe: Mapping[str, Any],
    launch: Launcher,
    clock: Clock,
    report: Report,
    kill: Callable[[], Awaitable[None]],
) -> None:
    """Probe until ``failureThreshold`` failures in a row, then report and ``kill``."""
    argv = [str(a) for a in probe["exec"]["command"]]
    period = float(probe.get("periodSeconds") or 10)
    timeout = float(probe.get("timeoutSeconds") or 1)
    threshold = int(probe.get("failureThreshold") or 3)
    await clock.sleep(float(probe.get("initialDelaySeconds") or 0))
    failures = 0
    while True:
        passed, output = await _run_once(argv, launch, timeout)
        if passed:
            failures = 0
        else:
            failures += 1
            report("Warning", "Unhealthy", f"Liveness probe failed: {output}")
            if failures >= threshold:
                await kill()
                return
        await clock.sleep(period)
