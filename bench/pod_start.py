"""What the ``--run-pods`` sandbox costs per pod start.

    python -m bench.pod_start [--json] [--quick]

Two measurements, each isolated (bubblewrap sandbox, as ``--run-pods``) beside unconfined
(a plain process group, as ``--run-pods=unsafe``), interleaved in the same run:

- spawn: the kubelet's own start of one container (``ProcessPod.spawn``: the sandbox, its PID
  read back, the output pipes) running ``true``, until the process has exited; this is the cost
  a pod start pays;
- pod: a pod created through the API (``restartPolicy: Never``, ``command: [true]``) until the
  kubelet reports it ``Succeeded``, one at a time, in a ``LocalCluster`` of each kind.

Figures are p50 and p99 wall milliseconds, the isolated minus unconfined difference of p50,
and for spawns the mean CPU milliseconds (this process and its children: bwrap, the command),
which a busy machine's scheduling does not inflate.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from bench.command_line import run_benchmark
from bench.results_table import render_table
from setpoint.api.clock import SYSTEM_CLOCK
from setpoint.cluster.controllers.kubelet.process_pod import ProcessPod
from setpoint.cluster.controllers.kubelet.sandbox import Isolation, detect_isolation
from setpoint.cluster.local_cluster import LocalCluster

FULL: Final = (400, 100)
QUICK: Final = (20, 5)
PODS: Final = "/api/v1/namespaces/default/pods"


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": statistics.median(values) * 1000,
        "p99_ms": _percentile(values, 0.99) * 1000,
        "n": len(values),
    }


def _pod(directory: Path, isolation: Isolation | None) -> ProcessPod:
    spec = {"metadata": {"uid": "u", "name": "p", "namespace": "default"}, "spec": {}}
    return ProcessPod(
        spec, directory, "10.0.0.1", "10.0.0.1", SYSTEM_CLOCK, dict, lambda: None,
        isolation=isolation,
    )  # fmt: skip


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _spawn_once(pod: ProcessPod, cpu: list[float]) -> float:
    began, began_cpu = time.perf_counter(), _cpu_seconds()
    process, _ = await pod.spawn(["true"], {"PATH": "/usr/bin:/bin"}, [])
    await process.communicate()
    cpu.append(_cpu_seconds() - began_cpu)
    return time.perf_counter() - began


async def _spawns(isolation: Isolation, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root:
        isolated = _pod(Path(root) / "isolated", isolation)
        plain = _pod(Path(root) / "plain", None)
        times: dict[str, list[float]] = {"isolated": [], "unconfined": []}
        cpu: dict[str, list[float]] = {"isolated": [], "unconfined": []}
        for _ in range(rounds):
            times["isolated"].append(await _spawn_once(isolated, cpu["isolated"]))
            times["unconfined"].append(await _spawn_once(plain, cpu["unconfined"]))
    return {
        name: {**_summary(values), "cpu_ms": statistics.mean(cpu[name]) * 1000}
        for name, values in times.items()
    }


async def _pod_once(api: Any, name: str) -> float:
    body = {
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
        },
    }
    began = time.perf_counter()
    await api.request("POST", PODS, body)
    while True:
        status = (await api.request("GET", f"{PODS}/{name}")).body.get("status") or {}
        if status.get("phase") == "Succeeded":
            return time.perf_counter() - began
        await asyncio.sleep(0.001)


async def _pods(count: int) -> dict[str, Any]:
    from tests.cluster.raw_api import raw_api

    times: dict[str, list[float]] = {"isolated": [], "unconfined": []}
    async with (
        LocalCluster(run_pods=True) as isolated,
        LocalCluster(run_pods="unsafe") as plain,
        raw_api(isolated.url, isolated.token) as isolated_api,
        raw_api(plain.url, plain.token) as plain_api,
    ):
        for number in range(count):
            times["isolated"].append(await _pod_once(isolated_api, f"p{number}"))
            times["unconfined"].append(await _pod_once(plain_api, f"p{number}"))
    return {name: _summary(values) for name, values in times.items()}


async def measure(sizes: tuple[int, int]) -> dict[str, Any]:
    """The figures (see the module docstring)."""
    isolation = detect_isolation()
    if not isolation.available:
        return {"error": f"no isolation here: {isolation.reason}"}
    spawn_rounds, pod_count = sizes
    spawn = await _spawns(isolation, spawn_rounds)
    pods = await _pods(pod_count)
    return {
        "spawn": spawn,
        "pod": pods,
        "added_p50_ms": {
            part: figures["isolated"]["p50_ms"] - figures["unconfined"]["p50_ms"]
            for part, figures in (("spawn", spawn), ("pod", pods))
        },
    }


def render(figures: dict[str, Any]) -> str:
    """The human table."""
    if "error" in figures:
        return str(figures["error"])
    rows = []
    for part in ("spawn", "pod"):
        for kind in ("unconfined", "isolated"):
            one = figures[part][kind]
            cpu = one.get("cpu_ms", "")
            rows.append([f"{part} {kind}", one["n"], one["p50_ms"], one["p99_ms"], cpu])
        added = figures["added_p50_ms"][part]
        rows.append([f"{part} added by isolation (p50)", "", added, "", ""])
    return render_table(["start", "n", "p50 ms", "p99 ms", "CPU ms"], rows)


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.pod_start``."""
    run_benchmark(
        "python -m bench.pod_start",
        __doc__,
        measure,
        (FULL, QUICK),
        render,
        lambda figures: [figures["error"]] if "error" in figures else [],
        argv,
    )


if __name__ == "__main__":
    main()
