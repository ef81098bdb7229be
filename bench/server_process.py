"""A server under test, run as a child process on 127.0.0.1 (never in the load generator).

The load generator and the server each get their own process, so on a 2-core machine each can
have one core. :class:`ServerProcess` starts a command, waits until ``GET /version`` answers,
reads the process's RSS, and stops it (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import aiohttp
import psutil
import yaml

log = logging.getLogger(__name__)

#: A Python server on a busy 2-core machine can take a few seconds to import and bind.
READY_TIMEOUT_SECONDS: Final = 60.0
#: Poll interval of the readiness probe: short enough not to add to measured phases.
READY_POLL_SECONDS: Final = 0.1
#: How long a SIGTERMed server may take to exit before it is killed.
STOP_GRACE_SECONDS: Final = 10.0
MIB: Final = 1024 * 1024


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def token_from_kubeconfig(path: Path) -> str:
    """The bearer token of the first user in the kubeconfig ``path``."""
    document = yaml.safe_load(path.read_text())
    token: str = document["users"][0]["user"]["token"]
    return token


class ServerProcess:
    """One server under test: ``argv`` started with stdout/stderr sent to ``log_path``."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        port: int,
        log_path: Path,
        ready_timeout: float = READY_TIMEOUT_SECONDS,
        source: Path | None = None,
    ) -> None:
        self.name = name
        #: Run the code of this directory instead (cwd and PYTHONPATH: an export of another
        #: commit, to compare against in the same run).
        self.source = source
        #: How long :meth:`start` waits for ``/version`` (longer under valgrind).
        self.ready_timeout = ready_timeout
        self.argv = list(argv)
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self.headers: dict[str, str] = {}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        """The server's process id (it must be running)."""
        if self._process is None:
            raise RuntimeError(f"{self.name}: not started")
        return self._process.pid

    def rss_bytes(self) -> int:
        """Resident set size of the server process now."""
        rss: int = psutil.Process(self.pid).memory_info().rss
        return rss

    def _spawn(self, kubeconfig: Path | None) -> subprocess.Popen[bytes]:
        if kubeconfig is not None:
            kubeconfig.unlink(missing_ok=True)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if self.source is not None:
            env["PYTHONPATH"] = str(self.source)
        with self.log_path.open("ab") as log_file:
            return subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                env=env,
                cwd=self.source,
            )

    def _authorize_from(self, kubeconfig: Path | None) -> bool:
        """Take the bearer token from ``kubeconfig`` once written; False while it is not."""
        if kubeconfig is None or self.headers:
            return True
        if not kubeconfig.exists():
            return False
        self.headers = {"Authorization": f"Bearer {token_from_kubeconfig(kubeconfig)}"}
        return True

    async def start(self, kubeconfig: Path | None = None) -> None:
        """Start the process and wait until ``/version`` answers (and the kubeconfig exists).

        A kubeconfig left at that path by an earlier run is removed first: its token is stale.
        """
        self._process = self._spawn(kubeconfig)
        deadline = time.monotonic() + self.ready_timeout
        async with aiohttp.ClientSession() as session:
            while True:
                if self._process.poll() is not None:
                    raise RuntimeError(
                        f"{self.name} exited with code {self._process.returncode} before it was "
                        f"ready; see {self.log_path}"
                    )
                if self._authorize_from(kubeconfig):
                    with contextlib.suppress(aiohttp.ClientError, OSError):
                        async with session.get(f"{self.url}/version", headers=self.headers) as r:
                            if r.status == 200:
                                log.info("%s ready at %s (pid %d)", self.name, self.url, self.pid)
                                return
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"{self.name} not ready after {self.ready_timeout:g}s; see {self.log_path}"
                    )
                await asyncio.sleep(READY_POLL_SECONDS)

    def stop(self) -> None:
        """SIGTERM the server, wait for it, SIGKILL it if it hangs."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop within %gs; killing it", self.name, STOP_GRACE_SECONDS)
            process.kill()
            process.wait()


def python_module_argv(module: str, *args: str) -> list[str]:
    """``python -m module args...`` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def setpoint_argv(port: int, kubeconfig: Path, data_dir: Path | None, *flags: str) -> list[str]:
    """``setpoint cluster serve`` on ``port`` (in memory, or SQLite in ``data_dir``), quiet,
    with its kubeconfig at ``kubeconfig`` and ``flags`` (``--no-controllers``...)."""
    storage = ["--in-memory"] if data_dir is None else ["--data-dir", str(data_dir)]
    return python_module_argv(
        "setpoint",
        "cluster",
        "serve",
        "--port",
        str(port),
        *storage,
        *flags,
        "--kubeconfig",
        str(kubeconfig),
        "--log-level",
        "warning",
    )


async def start_target(name: str, workdir: Path) -> ServerProcess:
    """Start target ``name`` (memory, sqlite, kmock or ceiling) and wait until it serves."""
    port = free_port()
    log_path = workdir / f"{name}.log"
    kubeconfig: Path | None = None
    if name in ("memory", "sqlite"):
        kubeconfig = workdir / f"{name}.kubeconfig"
        data_dir = workdir / "sqlite-data" if name == "sqlite" else None
        argv = setpoint_argv(port, kubeconfig, data_dir)
    elif name == "kmock":
        argv = python_module_argv("bench.kmock_server", "--port", str(port))
    elif name == "ceiling":
        argv = python_module_argv("bench.ceiling_server", "--port", str(port))
    else:
        raise ValueError(f"unknown target {name!r}")
    server = ServerProcess(name, argv, port, log_path)
    await server.start(kubeconfig)
    return server
