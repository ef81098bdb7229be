"""``setpoint cluster serve`` as a subprocess, and an HTTP client for the kubeconfig it writes."""

from __future__ import annotations

import base64
import os
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

#: How long the server may take to write its kubeconfig (it starts a Python interpreter).
START_TIMEOUT_SECONDS = 30.0
POLL_SECONDS = 0.05


class ServeProcess:
    """A running ``python -m setpoint cluster serve`` with a known kubeconfig path."""

    def __init__(self, kubeconfig: Path, *extra_args: str) -> None:
        self.kubeconfig = kubeconfig
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "setpoint",
                "cluster",
                "serve",
                "--kubeconfig",
                str(kubeconfig),
                *extra_args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def wait_for_kubeconfig(self) -> dict[str, Any]:
        """Wait until the kubeconfig exists; return it decoded."""
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self.kubeconfig.exists():
            if self.process.poll() is not None:
                _, err = self.process.communicate()
                raise AssertionError(f"serve exited early: {err.decode()}")
            if time.monotonic() > deadline:
                raise AssertionError("serve did not write its kubeconfig in time")
            time.sleep(POLL_SECONDS)
        config: dict[str, Any] = yaml.safe_load(self.kubeconfig.read_text())
        return config

    def terminate(self, signum: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """Send ``signum`` and wait for the exit code."""
        self.process.send_signal(signum)
        try:
            return self.process.wait(timeout)
        finally:
            self.close()

    def close(self) -> None:
        """Make sure the process is gone and its pipes are closed."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def connection_of(config: dict[str, Any]) -> tuple[str, str, ssl.SSLContext | None]:
    """Server URL, bearer token and SSL context from a kubeconfig written by serve."""
    cluster = config["clusters"][0]["cluster"]
    token = config["users"][0]["user"]["token"]
    context = None
    if "certificate-authority-data" in cluster:
        context = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
    return cluster["server"], token, context
