"""What running pods through kwok Stages costs beside the built-in simulation.

    python -m bench.simulation [--json] [--quick]

Two local clusters in this process: one whose kubelet simulates pods itself, one with the tests'
``fast`` pod Stages in kwok's format applied (``ready``, ``complete``, ``delete``: no delays), so
its kubelet matches jq selectors and renders a Go template per pod. Rounds alternate between
them: a batch of pods is created at once and timed until every one is ``Running`` and Ready,
then deleted and timed until all are gone. Figures per pod: wall and CPU milliseconds (this
process: server, controllers and client), median over the rounds, and the ratio stages/simulation.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any, Final

import yaml

from bench.command_line import run_benchmark
from bench.results_table import render_table
from setpoint.cluster.local_cluster import LocalCluster

#: (pods per batch, rounds per side).
FULL: Final = (200, 5)
QUICK: Final = (10, 1)
PODS: Final = "/api/v1/namespaces/default/pods"
STAGES: Final = Path(__file__).resolve().parents[1] / "tests/cluster/simulation/stages/fast"
STAGE_PATH: Final = "/apis/kwok.x-k8s.io/v1alpha1/stages"


def _cpu() -> float:
    return time.process_time()


async def _batch(api: Any, count: int, prefix: str) -> tuple[float, float, float, float]:
    """(start wall, start CPU, delete wall, delete CPU) seconds for ``count`` pods."""
    began, began_cpu = time.perf_counter(), _cpu()
    await asyncio.gather(
        *(
            api.request(
                "POST",
                PODS,
                {
                    "metadata": {"name": f"{prefix}-{n}", "labels": {"batch": prefix}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            )
            for n in range(count)
        )
    )
    while True:
        items = (await api.request("GET", f"{PODS}?labelSelector=batch%3D{prefix}")).body["items"]
        running = [
            p
            for p in items
            if (p.get("status") or {}).get("phase") == "Running"
            and any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in p["status"].get("conditions") or []
            )
        ]
        if len(running) == count:
            break
        await asyncio.sleep(0.02)
    start_wall, start_cpu = time.perf_counter() - began, _cpu() - began_cpu
    began, began_cpu = time.perf_counter(), _cpu()
    await api.request("DELETE", f"{PODS}?labelSelector=batch%3D{prefix}")
    while True:
        left = (await api.request("GET", f"{PODS}?labelSelector=batch%3D{prefix}")).body["items"]
        if not left:
            break
        await asyncio.sleep(0.02)
    return start_wall, start_cpu, time.perf_counter() - began, _cpu() - began_cpu


async def measure(sizes: tuple[int, int]) -> dict[str, Any]:
    """The figures (see the module docstring)."""
    from tests.cluster.raw_api import raw_api

    count, rounds = sizes
    figures: dict[str, dict[str, list[float]]] = {
        side: {"start_wall": [], "start_cpu": [], "delete_wall": [], "delete_cpu": []}
        for side in ("simulation", "stages")
    }
    async with (
        LocalCluster(https_port=None) as simulated,
        LocalCluster(https_port=None) as staged,
        raw_api(simulated.url, simulated.token) as simulated_api,
        raw_api(staged.url, staged.token) as staged_api,
    ):
        for file in sorted(STAGES.glob("pod-*.yaml")):
            reply = await staged_api.request("POST", STAGE_PATH, yaml.safe_load(file.read_text()))
            assert reply.status == 201, reply.body
        for number in range(rounds):
            for side, api in (("simulation", simulated_api), ("stages", staged_api)):
                result = await _batch(api, count, f"r{number}")
                for key, value in zip(figures[side], result, strict=True):
                    figures[side][key].append(value / count * 1000)
    summary = {
        side: {key: statistics.median(values) for key, values in parts.items()}
        for side, parts in figures.items()
    }
    return {
        "pods_per_batch": count,
        "rounds": rounds,
        **summary,
        "ratio": {
            key: summary["stages"][key] / summary["simulation"][key]
            for key in summary["simulation"]
        },
    }


def render(figures: dict[str, Any]) -> str:
    """The human table."""
    rows = [
        [
            side,
            *(
                figures[side][key]
                for key in ("start_wall", "start_cpu", "delete_wall", "delete_cpu")
            ),
        ]
        for side in ("simulation", "stages")
    ]
    rows.append(
        [
            "stages / simulation",
            *(
                figures["ratio"][key]
                for key in ("start_wall", "start_cpu", "delete_wall", "delete_cpu")
            ),
        ]
    )
    header = ["per pod", "start wall ms", "start CPU ms", "delete wall ms", "delete CPU ms"]
    return render_table(header, rows)


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.simulation``."""
    run_benchmark(
        "python -m bench.simulation", __doc__, measure, (FULL, QUICK), render, lambda _: [], argv
    )


if __name__ == "__main__":
    main()
