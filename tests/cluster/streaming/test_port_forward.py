"""``pods/portforward`` over WebSocket with the official Python client's default call
(``kubernetes.stream.portforward``): bytes reach a ``--run-pods`` process's port and come back;
a port nothing listens on is reported on the error channel."""

from __future__ import annotations

import socket as sockets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.stream import portforward

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync

#: A Python a pod can run: --run-pods sandboxes see /usr, not this virtualenv.
POD_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable

ECHO = """
import socket, sys

server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen()
while True:
    conn, _ = server.accept()
    data = conn.recv(1024)
    conn.sendall(b"echo:" + data)
    conn.close()
"""


def _free_port() -> int:
    with sockets.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def run_pods_cluster() -> Iterator[BackgroundCluster]:
    cluster = BackgroundCluster(in_memory=True, run_pods=True).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def core(run_pods_cluster: BackgroundCluster) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(run_pods_cluster.kubeconfig_path))
    try:
        yield client.CoreV1Api(api)
    finally:
        api.close()


def _running_pod(core: client.CoreV1Api, name: str, port: int) -> None:
    body: dict[str, Any] = {
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {
                    "name": "echo",
                    "image": "python",
                    "command": [POD_PYTHON, "-c", ECHO, str(port)],
                }
            ]
        },
    }
    core.create_namespaced_pod("default", body)

    def running() -> bool:
        return core.read_namespaced_pod(name, "default").status.phase == "Running"

    eventually_sync(running, f"pod {name} running")


def test_bytes_reach_the_pods_port_and_come_back(core: client.CoreV1Api) -> None:
    port = _free_port()
    _running_pod(core, "echo", port)

    def exchange() -> bytes | None:
        forward = portforward(
            core.connect_get_namespaced_pod_portforward, "echo", "default", ports=str(port)
        )
        try:
            tunnel = forward.socket(port)
            tunnel.setblocking(True)
            try:
                tunnel.sendall(b"hello")
            except OSError:
                return None  # not listening yet: the server reported it and closed the tunnel
            received = b""
            deadline = time.monotonic() + 5
            while not received.endswith(b"hello") and time.monotonic() < deadline:
                try:
                    chunk = tunnel.recv(1024)
                except OSError:
                    return None  # the tunnel was torn down before the answer: try again
                if not chunk:
                    break
                received += chunk
            tunnel.close()
            error = forward.error(port)
            return None if error else received
        finally:
            forward.close()

    # The process may still be binding its port just after it started.
    assert eventually_sync(exchange, "an echo through the tunnel") == b"echo:hello"
    core.delete_namespaced_pod("echo", "default", grace_period_seconds=0)


def test_a_port_nothing_listens_on_is_an_error(core: client.CoreV1Api) -> None:
    port = _free_port()
    _running_pod(core, "quiet", _free_port())
    forward = portforward(
        core.connect_get_namespaced_pod_portforward, "quiet", "default", ports=str(port)
    )
    try:
        tunnel = forward.socket(port)
        tunnel.setblocking(True)
        assert tunnel.recv(1024) == b""
        error = forward.error(port)
    finally:
        forward.close()
    assert error is not None
    assert f"error forwarding port {port} to pod quiet" in error
    assert "connection refused" in error
    core.delete_namespaced_pod("quiet", "default", grace_period_seconds=0)


def test_a_spdy_request_is_refused_with_a_reason(run_pods_cluster: BackgroundCluster) -> None:
    import urllib.request

    request = urllib.request.Request(
        f"{run_pods_cluster.url}/api/v1/namespaces/default/pods/x/portforward?ports=80",
        headers={
            "Authorization": f"Bearer {run_pods_cluster.token}",
            "Connection": "Upgrade",
            "Upgrade": "SPDY/3.1",
        },
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as failure:
        urllib.request.urlopen(request)
    assert failure.value.code in (400, 404)
