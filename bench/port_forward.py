"""Port-forward throughput through the local cluster, beside a direct connection (same run).

    python -m bench.port_forward [--json] [--quick]

A ``--run-pods`` pod runs a process that sends N MiB to whoever connects to its port. The same
bytes are read, in turn, ``ROUNDS`` times each way:

- through ``pods/portforward`` with the official Python client's default call
  (``kubernetes.stream.portforward``: WebSocket, ``v4.channel.k8s.io``, the API server relaying
  to the pod's port);
- through ``kubectl port-forward`` 1.27 (SPDY/3.1 over a raw upgrade) and 1.33 (SPDY/3.1
  tunnelled in a WebSocket), each one ``kubectl`` process kept running for all the rounds, the
  bytes read from its local port (skipped when that kubectl is not installed);
- straight from the port over loopback.

Reported: MiB/s of each (median of the rounds), each one's ratio to the direct connection, and
the load average before and after.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import statistics
import subprocess
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
#: The kubectl peers: (name in the figures, binary, how it speaks).
KUBECTLS: Final = (
    ("kubectl_1_27", "kubectl.1.27", "kubectl 1.27 port-forward (SPDY/3.1, raw upgrade)"),
    ("kubectl_1_33", "kubectl.1.33", "kubectl 1.33 port-forward (SPDY/3.1 over WebSocket)"),
)
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


def _start_kubectl(binary: str, kubeconfig: str, port: int) -> tuple[subprocess.Popen[str], int]:
    """``kubectl port-forward pod/source LOCAL:port``, once it says it is forwarding."""
    local = _free_port()
    process = subprocess.Popen(
        [binary, "--kubeconfig", kubeconfig, "port-forward", "pod/source", f"{local}:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "KUBECONFIG": ""},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "Forwarding from" not in line:
        process.kill()
        raise RuntimeError(f"{binary} port-forward did not start: {line!r}")
    return process, local


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
        load_before = os.getloadavg()[0]
        peers: dict[str, tuple[subprocess.Popen[str], int]] = {}
        for key, binary, _ in KUBECTLS:
            found = shutil.which(binary) or shutil.which(f"/usr/lib/google-cloud-sdk/bin/{binary}")
            if found is not None:
                peers[key] = _start_kubectl(found, str(cluster.kubeconfig_path), port)
        tunnel, direct = [], []
        through_kubectl: dict[str, list[float]] = {key: [] for key in peers}
        try:
            for _ in range(ROUNDS):
                tunnel.append(size / MIB / _through_tunnel(core, port, size))
                for key, (_, local) in peers.items():
                    through_kubectl[key].append(size / MIB / _direct(local, size))
                direct.append(size / MIB / _direct(port, size))
        finally:
            for process, _ in peers.values():
                process.kill()
                process.wait()
        load_after = os.getloadavg()[0]
        core.delete_namespaced_pod("source", "default", grace_period_seconds=0)
        api.close()
    finally:
        cluster.stop()
    through = statistics.median(tunnel)
    straight = statistics.median(direct)
    figures: dict[str, Any] = {
        "mebibytes": mebibytes,
        "rounds": ROUNDS,
        "load_average": [round(load_before, 1), round(load_after, 1)],
        "port_forward_mib_per_s": round(through, 1),
        "direct_mib_per_s": round(straight, 1),
        "ratio": round(through / straight, 4),
        "port_forward_runs": [round(v, 1) for v in tunnel],
        "direct_runs": [round(v, 1) for v in direct],
    }
    for key, runs in through_kubectl.items():
        median = statistics.median(runs)
        figures[f"{key}_mib_per_s"] = round(median, 1)
        figures[f"{key}_ratio"] = round(median / straight, 4)
        figures[f"{key}_runs"] = [round(v, 1) for v in runs]
    return figures


async def measure(mebibytes: int) -> dict[str, Any]:
    """The figures of one run (see the module docstring)."""
    return await asyncio.to_thread(_measure_sync, mebibytes)


def render(figures: dict[str, Any]) -> str:
    """The human table."""
    rows = [
        [
            "port-forward (WebSocket, Python client)",
            figures["port_forward_mib_per_s"],
            figures["ratio"],
        ]
    ]
    for key, _, label in KUBECTLS:
        if f"{key}_mib_per_s" in figures:
            rows.append([label, figures[f"{key}_mib_per_s"], figures[f"{key}_ratio"]])
    rows.append(["direct loopback connection", figures["direct_mib_per_s"], 1.0])
    before, after = figures["load_average"]
    return render_table(
        [
            f"{figures['mebibytes']} MiB, median of {ROUNDS} (load {before}-{after})",
            "MiB/s",
            "ratio to direct",
        ],
        rows,
    )


def failures(figures: dict[str, Any]) -> list[str]:
    """Nothing is judged: the figures are reported."""
    return []


if __name__ == "__main__":
    run_benchmark("bench.port_forward", __doc__, measure, (64, 4), render, failures)
