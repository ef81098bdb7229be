"""Port-forward throughput through the local cluster, beside a direct connection (same run).

    python -m bench.port_forward [--json] [--quick]

A ``--run-pods`` pod runs a process that sends N MiB to whoever connects to its port. The same
bytes are read twice, alternately, ``ROUNDS`` times: through ``pods/portforward`` with the
official Python client's default call (``kubernetes.stream.portforward``: WebSocket,
``v4.channel.k8s.io``, the API server relaying to the pod's port) and straight from the port
over loopback. Reported: MiB/s of each (median of the rounds) and their ratio.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Final

from kubernetes import client, config
from kubernetes.stream import portforward

from bench.command_line import run_benchmark
from bench.results_table import render_table
from setpoint.testing.background_cluster import BackgroundCluster

#: A Python a pod can run: --run-pods sandboxes see /usr, not this virtualenv.
POD_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable

log = logging.getLogger("bench.port_forward")

MIB: Final = 1024 * 1024
ROUNDS: Final = 5
#: A process that sends SIZE bytes to each connection on PORT, then closes it.
SOURCE: Final = """
import socket, sys

port, size = int(sys.argv[1]), int(sys.argv[2])
chunk = b"x" * 65536
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen()
while True:
    conn, _ = server.accept()
    sent = 0
    while sent < size:
        sent += conn.send(chunk[: min(len(chunk), size - sent)])
    conn.close()
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _read_all(sock: Any, size: int) -> float:
    """Seconds to read ``size`` bytes from ``sock``."""
    started = time.perf_counter()
    received = 0
    while received < size:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        received += len(chunk)
    elapsed = time.perf_counter() - started
    if received < size:
        raise RuntimeError(f"read {received} of {size} bytes")
    return elapsed


def _through_tunnel(core: client.CoreV1Api, port: int, size: int) -> float:
    forward = portforward(
        core.connect_get_namespaced_pod_portforward, "source", "default", ports=str(port)
    )
    try:
        tunnel = forward.socket(port)
        tunnel.setblocking(True)
        return _read_all(tunnel, size)
    finally:
        forward.close()


def _direct(port: int, size: int) -> float:
    with socket.create_connection(("127.0.0.1", port)) as direct:
        return _read_all(direct, size)


def _measure_sync(mebibytes: int) -> dict[str, Any]:
    size = mebibytes * MIB
    port = _free_port()
    cluster = BackgroundCluster(in_memory=True, run_pods=True).start()
    try:
        api = config.new_client_from_config(config_file=str(cluster.kubeconfig_path))
        core = client.CoreV1Api(api)
        core.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": "source"},
                "spec": {
                    "containers": [
                        {
                            "name": "source",
                            "image": "python",
                            "command": [POD_PYTHON, "-c", SOURCE, str(port), str(size)],
                        }
                    ]
                },
            },
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                _direct(port, size)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        tunnel, direct = [], []
        for _ in range(ROUNDS):
            tunnel.append(size / MIB / _through_tunnel(core, port, size))
            direct.append(size / MIB / _direct(port, size))
        core.delete_namespaced_pod("source", "default", grace_period_seconds=0)
        api.close()
    finally:
        cluster.stop()
    through = statistics.median(tunnel)
    straight = statistics.median(direct)
    return {
        "mebibytes": mebibytes,
        "rounds": ROUNDS,
        "port_forward_mib_per_s": round(through, 1),
        "direct_mib_per_s": round(straight, 1),
        "ratio": round(through / straight, 4),
        "port_forward_runs": [round(v, 1) for v in tunnel],
        "direct_runs": [round(v, 1) for v in direct],
    }


async def measure(mebibytes: int) -> dict[str, Any]:
    """The figures of one run (see the module docstring)."""
    return await asyncio.to_thread(_measure_sync, mebibytes)


def render(figures: dict[str, Any]) -> str:
    """The human table."""
    rows = [
        ["port-forward (WebSocket, Python client)", figures["port_forward_mib_per_s"]],
        ["direct loopback connection", figures["direct_mib_per_s"]],
        ["ratio", figures["ratio"]],
    ]
    return render_table([f"{figures['mebibytes']} MiB, median of {ROUNDS}", "MiB/s"], rows)


def failures(figures: dict[str, Any]) -> list[str]:
    """Nothing is judged: the figures are reported."""
    return []


if __name__ == "__main__":
    run_benchmark("bench.port_forward", __doc__, measure, (64, 4), render, failures)
