"""Serving a large container log: ``tailLines=1`` of 200 MiB ending in a 1 MiB line.

    python -m bench.pod_logs [--json] [--quick]

A ``LocalCluster(run_pods=True)`` runs one pod; its current log file is replaced by a 200 MiB
file of 1 KiB lines whose last line is 1 MiB (written directly, as the test does). Measured:

- ``GET …/log?tailLines=1`` answered in full (wall ms, p50/p99 over the rounds), beside the peer
  ``tail -n 1`` of the same file (coreutils, run as a process: its start is included);
- ``/healthz`` latency while 4 such tails run at once (p50/p99 over every probe);
- the growth of this process's RSS (server and client) over the whole measurement (MiB).
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from bench.command_line import run_benchmark
from bench.results_table import render_table
from setpoint.cluster.controllers.kubelet.log_files import log_time
from setpoint.cluster.local_cluster import LocalCluster

MIB: Final = 1024 * 1024
PODS: Final = "/api/v1/namespaces/default/pods"
FULL: Final = (200 * MIB, 30)
QUICK: Final = (20 * MIB, 3)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": statistics.median(values) * 1000,
        "p99_ms": _percentile(values, 0.99) * 1000,
        "n": len(values),
    }


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def _write(path: Path, total: int) -> None:
    moment = log_time(datetime(2026, 1, 1, tzinfo=UTC))
    block = f"{moment} stdout F {'x' * 1000}\n".encode() * 1024
    with path.open("wb") as log_file:
        written = 0
        while written < total - MIB:
            log_file.write(block)
            written += len(block)
        log_file.write(f"{moment} stdout F ".encode() + b"y" * MIB + b"\n")


async def _peer_tail(path: Path) -> float:
    began = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        "tail", "-n", "1", str(path), stdout=asyncio.subprocess.PIPE
    )
    output, _ = await process.communicate()
    assert output.endswith(b"y" * 10 + b"\n")  # the raw record, header included
    return time.perf_counter() - began


async def measure(sizes: tuple[int, int]) -> dict[str, Any]:
    """The figures (see the module docstring)."""
    from tests.cluster.raw_api import raw_api

    total, rounds = sizes
    body = {
        "metadata": {"name": "big"},
        "spec": {"containers": [{"name": "app", "image": "busybox", "command": ["sleep", "1d"]}]},
    }
    async with (
        LocalCluster(run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        await api.request("POST", PODS, body)
        while True:
            status = (await api.request("GET", f"{PODS}/big")).body.get("status") or {}
            if status.get("phase") == "Running":
                break
            await asyncio.sleep(0.01)
        uid = (await api.request("GET", f"{PODS}/big")).body["metadata"]["uid"]
        kubelet: Any = cluster.server.pod_runtime if cluster.server else None
        path: Path = kubelet.container_log_path(uid, "app")
        await asyncio.to_thread(_write, path, total)

        before = _rss()
        peak = [before]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _rss())
                time.sleep(0.002)

        sampler = threading.Thread(target=sample)
        sampler.start()
        tails: list[float] = []
        peers: list[float] = []
        health: list[float] = []
        try:
            for _ in range(rounds):
                began = time.perf_counter()
                answer = await api.request("GET", f"{PODS}/big/log?tailLines=1")
                tails.append(time.perf_counter() - began)
                assert len(answer.raw) == MIB + 1
                peers.append(await _peer_tail(path))
                readers = [
                    asyncio.create_task(api.request("GET", f"{PODS}/big/log?tailLines=1"))
                    for _ in range(4)
                ]
                while not all(r.done() for r in readers):
                    began = time.perf_counter()
                    await api.request("GET", "/healthz")
                    health.append(time.perf_counter() - began)
                    await asyncio.sleep(0.002)
                await asyncio.gather(*readers)
        finally:
            done.set()
            sampler.join()
    tail = _summary(tails)
    peer = _summary(peers)
    return {
        "log_mib": total / MIB,
        "tail": tail,
        "peer_tail_n_1": peer,
        "tail_vs_peer_p50": tail["p50_ms"] / peer["p50_ms"],
        "healthz_during_4_tails": _summary(health),
        "rss_growth_mib": (peak[0] - before) / MIB,
    }


def render(figures: dict[str, Any]) -> str:
    """The human table."""
    rows = []
    for label, key in (
        ("GET log?tailLines=1", "tail"),
        ("peer: tail -n 1", "peer_tail_n_1"),
        ("/healthz during 4 tails", "healthz_during_4_tails"),
    ):
        one = figures[key]
        rows.append([label, one["n"], one["p50_ms"], one["p99_ms"]])
    table = render_table(["request", "n", "p50 ms", "p99 ms"], rows)
    return (
        f"{table}\nlog: {figures['log_mib']:.0f} MiB; tail / peer (p50): "
        f"{figures['tail_vs_peer_p50']:.2f}x; RSS growth: {figures['rss_growth_mib']:.1f} MiB"
    )


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.pod_logs``."""
    run_benchmark(
        "python -m bench.pod_logs", __doc__, measure, (FULL, QUICK), render, lambda _: [], argv
    )


if __name__ == "__main__":
    main()
