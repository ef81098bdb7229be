"""The contestants as processes: how each is started, and its peak RSS and CPU seconds.

Peak RSS is the kernel's high-water mark ``VmHWM``, read while the process runs (the last
reading before a short-lived process exits is kept: ``ru_maxrss`` cannot be used, Linux carries
the forked harness's own peak into it across ``exec``); CPU seconds are user + system time.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import psutil

REPO: Final = Path(__file__).resolve().parents[2]
CONTESTANTS_DIR: Final = Path(__file__).resolve().parent / "contestants"
STOP_GRACE_SECONDS: Final = 15.0
MIB: Final = 1024 * 1024
#: A contestant is idle once it uses less than this share of a core over this window.
IDLE_CPU_SHARE: Final = 0.02
IDLE_WINDOW_SECONDS: Final = 1.0


@dataclass(frozen=True)
class Contestant:
    """One framework: how to start its Widget operator, and the user agents it sends."""

    name: str
    #: ``client`` labels of its requests (Kopf writes children with the kubernetes client).
    clients: tuple[str, ...]
    #: False for the raw client, which converges once and exits (no watch).
    watches: bool
    #: Environment variables of its process (the setpoint operator's options).
    env: tuple[tuple[str, str], ...] = ()

    def argv(self, namespace: str, kubeconfig: Path, metrics_address: str = "0") -> list[str]:
        if self.name.startswith("setpoint"):
            return [
                sys.executable, "-m", "setpoint", "run",
                str(CONTESTANTS_DIR / "setpoint_widgets.py"), "--kubeconfig", str(kubeconfig),
                "-n", namespace, "--log-level", "warning",
                "--metrics-bind-address", metrics_address, "--health-probe-bind-address", "0",
            ]  # fmt: skip
        if self.name == "kopf":
            return [
                sys.executable, "-m", "kopf", "run", "--standalone", "--quiet", "-n", namespace,
                str(CONTESTANTS_DIR / "kopf_widgets.py"),
            ]  # fmt: skip
        return [sys.executable, "-m", "bench.peers.contestants.raw_widgets"]


#: setpoint's Widget operator with the ``ignore_own_writes=True`` opt-in.
SETPOINT_IGNORE_OWN_WRITES: Final = "setpoint-ignore-own-writes"

CONTESTANTS: Final = {
    "setpoint": Contestant("setpoint", ("setpoint",), watches=True),
    SETPOINT_IGNORE_OWN_WRITES: Contestant(
        SETPOINT_IGNORE_OWN_WRITES,
        ("setpoint",),
        watches=True,
        env=(("BENCH_IGNORE_OWN_WRITES", "1"),),
    ),
    "kopf": Contestant("kopf", ("kopf", "OpenAPI-Generator"), watches=True),
    "raw": Contestant("raw", ("bench-raw",), watches=False),
}
#: Those run when none are named: setpoint with its defaults and its two peers.
DEFAULT_CONTESTANTS: Final = ("setpoint", "kopf", "raw")


class Running:
    """A started contestant process."""

    def __init__(
        self,
        contestant: Contestant,
        namespace: str,
        kubeconfig: Path,
        log_path: Path,
        workers: int | None = None,
        metrics_address: str = "0",
    ) -> None:
        env = {
            **os.environ,
            "KUBECONFIG": str(kubeconfig),
            "BENCH_NAMESPACE": namespace,
            "PYTHONPATH": str(REPO),
            "PYTHONUNBUFFERED": "1",
        }
        env.update(contestant.env)
        if workers is not None:
            env["BENCH_WORKERS"] = str(workers)
        self.contestant = contestant
        with log_path.open("ab") as log_file:
            self.popen = subprocess.Popen(
                contestant.argv(namespace, kubeconfig, metrics_address),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                env=env,
                cwd=REPO,
            )
        self.process = psutil.Process(self.popen.pid)
        self._final: tuple[float, float] | None = None  # (cpu seconds, peak RSS MiB) at exit
        self._peak_mib = 0.0

    @property
    def exited(self) -> bool:
        return self._final is not None

    def cpu_seconds(self) -> float:
        if self._final is not None:
            return self._final[0]
        times = self.process.cpu_times()
        return float(times.user + times.system)

    def peak_rss_mib(self) -> float:
        if self._final is not None:
            return self._final[1]
        try:
            with open(f"/proc/{self.popen.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        self._peak_mib = max(self._peak_mib, int(line.split()[1]) * 1024 / MIB)
        except OSError:  # exited meanwhile: keep the last reading
            pass
        return self._peak_mib

    def poll_exit(self) -> bool:
        """Reap the process if it has exited (keeping its rusage); True once it has."""
        if self._final is not None:
            return True
        peak = self.peak_rss_mib()  # before reaping: /proc/PID goes with the process
        pid, status, usage = os.wait4(self.popen.pid, os.WNOHANG)
        if pid == 0:
            return False
        self._final = (usage.ru_utime + usage.ru_stime, peak)
        self.popen.returncode = os.waitstatus_to_exitcode(status)
        return True

    async def wait_exit(self, timeout: float) -> int:  # noqa: ASYNC109 - polls a pid
        """Wait for the process to exit by itself; its exit code."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.poll_exit():
            if loop.time() > deadline:
                raise TimeoutError(f"{self.contestant.name} did not exit within {timeout:g} s")
            await asyncio.sleep(0.01)
        return int(self.popen.returncode or 0)

    async def settled_cpu_seconds(
        self,
        window: float = IDLE_WINDOW_SECONDS,
        timeout: float = 120.0,  # noqa: ASYNC109
    ) -> float:
        """CPU seconds once the process used less than ``IDLE_CPU_SHARE`` of one core over
        ``window`` seconds (or after ``timeout``): its total for the work it had queued."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        before = self.cpu_seconds()
        while loop.time() < deadline and not self.poll_exit():
            await asyncio.sleep(window)
            now = self.cpu_seconds()
            if now - before < IDLE_CPU_SHARE * window:
                return now
            before = now
        return self.cpu_seconds()

    async def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period."""
        if self.poll_exit():
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            await self.wait_exit(STOP_GRACE_SECONDS)
        except TimeoutError:
            self.popen.kill()
            await self.wait_exit(STOP_GRACE_SECONDS)
