"""Reads under concurrent writes on the SQLite backend: what waiting for the commit costs.

    python -m bench.durable_reads [--seconds 10] [--writers 8] [--readers 8]

Starts ``setpoint cluster serve --data-dir`` (a fresh temporary directory), then for the given
time runs writers (ConfigMap creates) and readers (GETs of objects already created, and a
list of a small namespace every tenth read) side by side. Prints writes/s, reads/s and read
latency percentiles. A read made while writes are being committed waits for that commit (at
most the one in flight and the one queued behind it), so this is where the change shows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.config_maps import config_map_body, namespace_body
from bench.server_process import ServerProcess, free_port, python_module_argv

NAMESPACE = "reads"


async def run(seconds: float, writers: int, readers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-") as tmp:
        port = free_port()
        kubeconfig = Path(tmp) / "kubeconfig"
        argv = python_module_argv(
            "setpoint",
            "cluster",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            f"{tmp}/data",
            "--kubeconfig",
            str(kubeconfig),
        )
        server = ServerProcess("sqlite", argv, port, Path(tmp) / "server.log")
        await server.start(kubeconfig)
        try:
            return await _load(server, seconds, writers, readers)
        finally:
            server.stop()


async def _load(
    server: ServerProcess, seconds: float, writers: int, readers: int
) -> dict[str, float]:
    base = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    headers = {**server.headers, "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=writers + readers + 2)
    async with aiohttp.ClientSession(headers=headers, connector=connector) as http:
        async with http.post(f"{server.url}/api/v1/namespaces", data=namespace_body(NAMESPACE)):
            pass
        names: list[str] = []
        for i in range(50):
            async with http.post(base, data=config_map_body(f"seed-{i}", NAMESPACE, i)) as r:
                assert r.status == 201, await r.text()
            names.append(f"seed-{i}")
        deadline = time.monotonic() + seconds
        writes = 0
        latencies: list[float] = []

        async def writer(slot: int) -> None:
            nonlocal writes
            i = 0
            while time.monotonic() < deadline:
                name = f"w{slot}-{i}"
                async with http.post(base, data=config_map_body(name, NAMESPACE, i)) as r:
                    assert r.status == 201, await r.text()
                names.append(name)
                writes += 1
                i += 1

        async def reader() -> None:
            n = 0
            while time.monotonic() < deadline:
                url = f"{base}?limit=20" if n % 10 == 0 else f"{base}/{random.choice(names)}"
                started = time.perf_counter()
                async with http.get(url) as r:
                    await r.read()
                    assert r.status == 200
                latencies.append(time.perf_counter() - started)
                n += 1

        await asyncio.gather(
            *(writer(s) for s in range(writers)), *(reader() for _ in range(readers))
        )
    latencies.sort()
    return {
        "writes_per_s": writes / seconds,
        "reads_per_s": len(latencies) / seconds,
        "read_p50_ms": statistics.median(latencies) * 1000,
        "read_p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--readers", type=int, default=8)
    args = parser.parse_args()
    result = asyncio.run(run(args.seconds, args.writers, args.readers))
    print(json.dumps({k: round(v, 1) for k, v in result.items()}))


if __name__ == "__main__":
    main()
