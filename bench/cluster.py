"""Benchmark of the local cluster's controllers, scheduler and simulated kubelet.

    python -m bench.cluster [--json] [--quick]

Each figure is measured against ``setpoint cluster serve --in-memory`` in its own process, with
every controller running, and for comparison the same server with ``--no-controllers``:

- cold start: seconds from spawning the process to a written kubeconfig;
- idle RSS of the server a few seconds after start;
- pods/s taken from created to Running: Deployments created at once (100 x 50 replicas; the
  Deployment and ReplicaSet controllers create the pods), counted Running through a watch, and
  the server's CPU per pod over the same interval (user + system; the load of other processes
  moves it much less than the rate);
- at rest with many pods (10,000 on 1 node, then on 100 nodes): RSS and CPU (percent of one
  core over a quiet interval).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import aiohttp
import psutil

from bench import http_load
from bench.command_line import run_benchmark
from bench.results_table import render_table
from bench.server_process import MIB, ServerProcess, free_port, python_module_argv

log = logging.getLogger("bench.cluster")

NAMESPACE: Final = "bench-cluster"
CONCURRENCY: Final = 16
IDLE_SETTLE_SECONDS: Final = 3.0
CPU_SAMPLE_SECONDS: Final = 10.0
RUNNING_TIMEOUT_SECONDS: Final = 600.0


@dataclass(frozen=True)
class Sizes:
    """How much work each phase does."""

    deployments: int
    replicas: int
    rest_pods: int
    many_nodes: int
    settle_seconds: float
    cpu_seconds: float


FULL: Final = Sizes(
    deployments=100,
    replicas=50,
    rest_pods=10_000,
    many_nodes=100,
    settle_seconds=IDLE_SETTLE_SECONDS,
    cpu_seconds=CPU_SAMPLE_SECONDS,
)
QUICK: Final = Sizes(
    deployments=4, replicas=5, rest_pods=50, many_nodes=3, settle_seconds=0.5, cpu_seconds=1.0
)


def _argv(port: int, kubeconfig: Path, *flags: str) -> list[str]:
    return python_module_argv(
        "setpoint",
        "cluster",
        "serve",
        "--in-memory",
        "--port",
        str(port),
        "--kubeconfig",
        str(kubeconfig),
        "--log-level",
        "warning",
        *flags,
    )


async def start(workdir: Path, name: str, *flags: str) -> tuple[ServerProcess, float]:
    """Start a server; also return the seconds from spawn to a written kubeconfig."""
    port = free_port()
    kubeconfig = workdir / f"{name}.kubeconfig"
    server = ServerProcess(name, _argv(port, kubeconfig, *flags), port, workdir / f"{name}.log")
    started = time.perf_counter()
    task = asyncio.create_task(server.start(kubeconfig))
    while not kubeconfig.exists():
        if task.done():
            break
        await asyncio.sleep(0.002)
    cold = time.perf_counter() - started
    await task
    return server, cold


def deployment(index: int, replicas: int) -> bytes:
    name = f"d{index}"
    labels = {"app": name}
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
                },
            },
        }
    ).encode()


def bare_pod(index: int) -> bytes:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{index}"},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
        }
    ).encode()


async def wait_running(
    http: aiohttp.ClientSession, base: str, expected: int, resource_version: str
) -> float:
    """Follow a pod watch until ``expected`` distinct pods were seen Running; the time then."""
    running: set[str] = set()
    url = (
        f"{base}/api/v1/namespaces/{NAMESPACE}/pods?watch=true&resourceVersion={resource_version}"
        f"&allowWatchBookmarks=false&timeoutSeconds={int(RUNNING_TIMEOUT_SECONDS)}"
    )
    async with http.get(url) as response:
        async for line in response.content:
            if not line.strip():
                continue
            event = json.loads(line)
            obj = event.get("object") or {}
            if (obj.get("status") or {}).get("phase") == "Running":
                running.add(obj["metadata"]["name"])
                if len(running) >= expected:
                    return time.perf_counter()
    raise http_load.BenchError(f"only {len(running)} of {expected} pods became Running")


async def current_revision(http: aiohttp.ClientSession, base: str) -> str:
    async with http.get(f"{base}/api/v1/namespaces/{NAMESPACE}/pods?limit=1") as response:
        body = await response.json()
    return str(body["metadata"]["resourceVersion"])


async def pods_to_running(
    server: ServerProcess, count: int, body_for: Any, collection: str
) -> float:
    """Create ``count`` objects with ``body_for`` and time pods created → Running."""
    async with http_load.session(CONCURRENCY + 1, server.headers) as http:
        await http_load.ensure_namespace(http, server.url, NAMESPACE)
        revision = await current_revision(http, server.url)
        waiter = asyncio.create_task(wait_running(http, server.url, count, revision))
        await asyncio.sleep(0.1)
        started = time.perf_counter()
        await http_load.create_objects(
            http, f"{server.url}{collection}", count_objects(body_for, count), CONCURRENCY, body_for
        )
        finished = await waiter
    return count / (finished - started)


def count_objects(body_for: Any, count: int) -> int:
    return getattr(body_for, "objects", count)


class DeploymentBodies:
    """Deployment bodies: ``objects`` Deployments of ``replicas`` pods each."""

    def __init__(self, objects: int, replicas: int) -> None:
        self.objects = objects
        self.replicas = replicas

    def __call__(self, index: int) -> bytes:
        return deployment(index, self.replicas)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far."""
    times = psutil.Process(pid).cpu_times()
    used: float = times.user + times.system
    return used


def cpu_percent(pid: int, seconds: float) -> float:
    process = psutil.Process(pid)
    before = process.cpu_times()
    time.sleep(seconds)
    after = process.cpu_times()
    used = (after.user - before.user) + (after.system - before.system)
    return 100.0 * used / seconds


async def measure(sizes: Sizes) -> dict[str, Any]:
    figures: dict[str, Any] = {"sizes": dataclasses.asdict(sizes)}
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-cluster-") as tmp:
        workdir = Path(tmp)
        for label, flags in (("controllers", ()), ("no_controllers", ("--no-controllers",))):
            server, cold = await start(workdir, f"idle-{label}", *flags)
            try:
                await asyncio.sleep(sizes.settle_seconds)
                figures[f"cold_start_s_{label}"] = round(cold, 3)
                figures[f"idle_rss_mib_{label}"] = round(server.rss_bytes() / MIB, 1)
                figures[f"idle_cpu_percent_{label}"] = round(
                    await asyncio.to_thread(cpu_percent, server.pid, sizes.cpu_seconds / 2), 2
                )
            finally:
                server.stop()

        server, _ = await start(workdir, "deployments")
        try:
            bodies = DeploymentBodies(sizes.deployments, sizes.replicas)
            total = sizes.deployments * sizes.replicas
            cpu_before = cpu_seconds(server.pid)
            rate = await pods_to_running_deployments(server, bodies, total)
            cpu_used = cpu_seconds(server.pid) - cpu_before
            figures["deployment_pods_to_running_per_s"] = round(rate, 1)
            figures["deployment_server_cpu_us_per_pod"] = round(cpu_used / total * 1e6)
        finally:
            server.stop()

        figures["rest_pods"] = sizes.rest_pods
        figures["many_nodes"] = sizes.many_nodes
        for label, nodes in (("one_node", 1), ("many_nodes", sizes.many_nodes)):
            server, _ = await start(workdir, f"rest-{nodes}", "--nodes", str(nodes))
            try:
                cpu_before = cpu_seconds(server.pid)
                rate = await pods_to_running(
                    server, sizes.rest_pods, bare_pod, f"/api/v1/namespaces/{NAMESPACE}/pods"
                )
                cpu_used = cpu_seconds(server.pid) - cpu_before
                figures[f"bare_pods_to_running_per_s_{label}"] = round(rate, 1)
                figures[f"bare_server_cpu_us_per_pod_{label}"] = round(
                    cpu_used / sizes.rest_pods * 1e6
                )
                await asyncio.sleep(sizes.settle_seconds)
                figures[f"rest_rss_mib_{label}"] = round(server.rss_bytes() / MIB, 1)
                figures[f"rest_cpu_percent_{label}"] = round(
                    await asyncio.to_thread(cpu_percent, server.pid, sizes.cpu_seconds), 2
                )
            finally:
                server.stop()
    return figures


async def pods_to_running_deployments(
    server: ServerProcess, bodies: DeploymentBodies, total: int
) -> float:
    async with http_load.session(CONCURRENCY + 1, server.headers) as http:
        await http_load.ensure_namespace(http, server.url, NAMESPACE)
        revision = await current_revision(http, server.url)
        waiter = asyncio.create_task(wait_running(http, server.url, total, revision))
        await asyncio.sleep(0.1)
        started = time.perf_counter()
        await http_load.create_objects(
            http,
            f"{server.url}/apis/apps/v1/namespaces/{NAMESPACE}/deployments",
            bodies.objects,
            CONCURRENCY,
            bodies,
        )
        finished = await waiter
    return total / (finished - started)


def render(figures: dict[str, Any]) -> str:
    rows = [[key, value] for key, value in figures.items() if key != "sizes"]
    return render_table(["figure", "value"], rows)


def failures(figures: dict[str, Any]) -> list[str]:
    return []


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (see the module docstring)."""
    run_benchmark("bench.cluster", __doc__, measure, (FULL, QUICK), render, failures, argv)


if __name__ == "__main__":
    main()
