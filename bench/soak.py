"""Soak: steady churn against a local API server, with the server's RSS sampled over time.

    python -m bench.soak [--minutes 60] [--rate 100] [--objects 200] [--watchers 4] [--data-dir]

Starts ``setpoint cluster serve`` (in memory unless ``--data-dir``), creates ``--objects``
ConfigMaps, then updates them round-robin at ``--rate`` updates/s with ``--watchers`` watches
open, for ``--minutes``. Every 30 s it prints one JSON line: elapsed minutes, updates so far,
events received, and the server's RSS. The watch history fills after 10,000 events (100 s at
100/s); growth after that is what this looks for. The last line is a summary with the RSS
slope (MiB/min) over the second half of the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.config_maps import config_map_body, namespace_body
from bench.server_process import ServerProcess, free_port, python_module_argv

NAMESPACE = "soak"
SAMPLE_SECONDS = 30.0


async def soak(minutes: float, rate: float, objects: int, watchers: int, durable: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="setpoint-soak-") as tmp:
        port = free_port()
        kubeconfig = Path(tmp) / "kubeconfig"
        storage = ["--data-dir", f"{tmp}/data"] if durable else ["--in-memory"]
        argv = python_module_argv(
            "setpoint",
            "cluster",
            "serve",
            "--port",
            str(port),
            *storage,
            "--kubeconfig",
            str(kubeconfig),
        )
        server = ServerProcess("soak", argv, port, Path(tmp) / "server.log")
        await server.start(kubeconfig)
        try:
            await _churn(server, minutes, rate, objects, watchers)
        finally:
            server.stop()


async def _churn(
    server: ServerProcess, minutes: float, rate: float, objects: int, watchers: int
) -> None:
    base = f"{server.url}/api/v1/namespaces/{NAMESPACE}/configmaps"
    headers = {**server.headers, "Content-Type": "application/json"}
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as http:
        async with http.post(f"{server.url}/api/v1/namespaces", data=namespace_body(NAMESPACE)):
            pass
        for i in range(objects):
            async with http.post(base, data=config_map_body(f"o{i}", NAMESPACE, i)) as r:
                assert r.status == 201, await r.text()
        events = 0

        async def watcher() -> None:
            nonlocal events
            while True:
                async with http.get(f"{base}?watch=1&timeoutSeconds=300") as r:
                    async for line in r.content:
                        if line.strip():
                            events += 1

        tasks = [asyncio.create_task(watcher()) for _ in range(watchers)]
        started = time.monotonic()
        end = started + minutes * 60
        updates = 0
        samples: list[tuple[float, float]] = []
        next_sample = started
        interval = 1.0 / rate
        while time.monotonic() < end:
            body = json.dumps({"data": {"n": str(updates)}})
            url = f"{base}/o{updates % objects}"
            async with http.patch(
                url, data=body, headers={"Content-Type": "application/merge-patch+json"}
            ) as r:
                assert r.status == 200, await r.text()
            updates += 1
            now = time.monotonic()
            if now >= next_sample:
                rss = server.rss_bytes() / 2**20
                elapsed = (now - started) / 60
                samples.append((elapsed, rss))
                print(
                    json.dumps(
                        {
                            "minutes": round(elapsed, 2),
                            "updates": updates,
                            "events": events,
                            "rss_mib": round(rss, 1),
                        }
                    ),
                    flush=True,
                )
                next_sample += SAMPLE_SECONDS
            await asyncio.sleep(max(0.0, started + updates * interval - time.monotonic()))
        for task in tasks:
            task.cancel()
        half = [s for s in samples if s[0] >= samples[-1][0] / 2]
        slope = (half[-1][1] - half[0][1]) / max(half[-1][0] - half[0][0], 1e-9)
        print(
            json.dumps(
                {
                    "summary": True,
                    "updates": updates,
                    "rss_first_mib": samples[0][1],
                    "rss_last_mib": samples[-1][1],
                    "slope_second_half_mib_per_min": round(slope, 3),
                }
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--objects", type=int, default=200)
    parser.add_argument("--watchers", type=int, default=4)
    parser.add_argument("--data-dir", action="store_true", help="SQLite instead of memory")
    args = parser.parse_args()
    asyncio.run(soak(args.minutes, args.rate, args.objects, args.watchers, args.data_dir))


if __name__ == "__main__":
    main()
