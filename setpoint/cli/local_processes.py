"""The processes ``setpoint dev`` and ``setpoint demo`` start: a local cluster and operators.

Each runs as its own ``python -m setpoint`` child, so stopping one (SIGTERM, as Kubernetes stops
a pod) leaves the others and the calling process clean.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import click

__all__ = ["last_line", "setpoint_command", "start_local_cluster", "stop_process"]

#: A cold start writes the kubeconfig in well under a second; a loaded machine may take longer.
CLUSTER_START_TIMEOUT = 30.0


def setpoint_command(*args: str) -> list[str]:
    """The command line of ``setpoint ARGS`` with the running interpreter."""
    return [sys.executable, "-m", "setpoint", *args]


def start_local_cluster(
    workdir: Path, *extra: str, env: Mapping[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], Path]:
    """``setpoint cluster serve --in-memory EXTRA`` writing its kubeconfig and log in
    ``workdir``; returns once the kubeconfig exists, or raises ClickException with the log's
    last line."""
    kubeconfig = workdir / "kubeconfig"
    log_path = workdir / "cluster.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            setpoint_command(
                "cluster", "serve", "--in-memory", "--kubeconfig", str(kubeconfig), *extra
            ),
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=dict(env) if env is not None else None,
        )
    deadline = time.monotonic() + CLUSTER_START_TIMEOUT
    while not kubeconfig.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise click.ClickException(f"the local cluster did not start: {last_line(log_path)}")
        time.sleep(0.05)
    return process, kubeconfig


def last_line(log_path: Path) -> str:
    """The last line a process wrote to ``log_path`` (for a one-line error), or "no output"."""
    lines = log_path.read_text(errors="replace").strip().splitlines() if log_path.exists() else []
    return lines[-1] if lines else "no output"


def stop_process(process: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; nothing if already gone."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
