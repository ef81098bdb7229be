"""``kubectl port-forward`` against the local cluster: SPDY/3.1 over a raw upgrade (kubectl
1.27-1.30) and tunnelled in a WebSocket (1.31+), to a ``--run-pods`` process's port."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync
from tests.cluster.kubectl_runner import Kubectl

#: A Python a pod can run: --run-pods sandboxes see /usr, not this virtualenv.
POD_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable

KUBECTL_DIR = Path("/usr/lib/google-cloud-sdk/bin")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[BackgroundCluster, int]]:
    """A ``--run-pods`` cluster whose pod ``web`` serves HTTP on the returned port."""
    cluster = BackgroundCluster(in_memory=True, run_pods=True).start()
    port = _free_port()
    try:
        kubectl = Kubectl(cluster.kubeconfig_path, Path(cluster.kubeconfig_path).parent / "c")
        kubectl.run(
            "run",
            "web",
            "--image=python",
            "--command",
            "--",
            POD_PYTHON,
            "-m",
            "http.server",
            str(port),
            "--bind",
            "127.0.0.1",
        )
        kubectl.run("wait", "pod/web", "--for=condition=Ready", "--timeout=30s")

        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0

        eventually_sync(listening, "the pod's HTTP server listening")
        yield cluster, port
    finally:
        cluster.stop()


def _forward(cluster: BackgroundCluster, version: str, remote: int) -> tuple[Any, int]:
    binary = KUBECTL_DIR / f"kubectl.{version}"
    if not binary.exists():
        pytest.skip(f"kubectl {version} is not installed")
    process = subprocess.Popen(
        [
            str(binary),
            "--kubeconfig",
            str(cluster.kubeconfig_path),
            "port-forward",
            "pod/web",
            f":{remote}",
            "--address",
            "127.0.0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"127\.0\.0\.1:(\d+) -> ", line)
    assert found, line
    return process, int(found.group(1))


@pytest.mark.parametrize("version", ["1.27", "1.30", "1.33"])
def test_kubectl_port_forward_reaches_the_pod(
    served: tuple[BackgroundCluster, int], version: str
) -> None:
    cluster, port = served
    process, local = _forward(cluster, version, port)
    try:
        for _ in range(2):  # two connections through one port-forward
            with urllib.request.urlopen(f"http://127.0.0.1:{local}/", timeout=10) as reply:
                assert reply.status == 200
                assert b"Directory listing" in reply.read()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_refused_port_is_reported_by_kubectl(served: tuple[BackgroundCluster, int]) -> None:
    cluster, _ = served
    closed = _free_port()
    process, local = _forward(cluster, "1.33", closed)
    try:
        with socket.create_connection(("127.0.0.1", local), timeout=10) as connection:
            connection.settimeout(10)
            assert connection.recv(100) == b""
        deadline = time.monotonic() + 10
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert f"error forwarding port {closed} to pod web" in stderr
    assert "connection refused" in stderr
