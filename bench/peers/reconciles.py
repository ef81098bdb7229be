"""Reconciles per object at fan-out: setpoint's default beside the ``ignore_own_writes`` opt-in.

    python -m bench.peers.reconciles                          # N = 1,000, 1 run
    python -m bench.peers.reconciles --objects 5000 --runs 3

By default a reconcile's own writes wake it again (as in controller-runtime); the opt-in drops
those events. This counts what that costs in runs: each contestant converges a fan-out of N
Widgets with its metrics served, waits until it is idle, and reads
``controller_runtime_reconcile_total`` (every result) from ``/metrics``. It is kept apart from
``python -m bench`` because serving metrics adds imports and a listener to the process whose
time and CPU that benchmark measures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.peers import widgets
from bench.peers.bytecode import compile_sources
from bench.peers.cluster import Cluster
from bench.peers.processes import CONTESTANTS, SETPOINT_IGNORE_OWN_WRITES, Running
from bench.peers.scenarios import wait_converged

log = logging.getLogger("bench.reconciles")
CONTESTANT_NAMES = ("setpoint", SETPOINT_IGNORE_OWN_WRITES)
_RECONCILES = re.compile(r"^controller_runtime_reconcile_total\{[^}]*\} (\S+)$", re.MULTILINE)


def reconciles_in(metrics: str) -> int:
    """The sum of ``controller_runtime_reconcile_total`` over its labels in an exposition."""
    return round(sum(float(value) for value in _RECONCILES.findall(metrics)))


def _free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return int(listener.getsockname()[1])


async def count(cluster: Cluster, name: str, objects: int, workdir: Path, run: int) -> int:
    """Reconciles of contestant ``name`` until idle after converging ``objects`` Widgets."""
    namespace = f"reconciles-{name}-n{objects}-r{run}"
    await widgets.create_namespace(cluster, namespace)
    await widgets.create_widgets(cluster, namespace, [f"w{i}" for i in range(objects)])
    address = f"127.0.0.1:{_free_port()}"
    running = Running(
        CONTESTANTS[name],
        namespace,
        cluster.kubeconfig,
        workdir / f"{namespace}.log",
        metrics_address=address,
    )
    try:
        _, state = await wait_converged(
            cluster, namespace, time.monotonic(), 120.0 + 0.2 * objects, 0.2, running
        )
        if not state.done:
            raise RuntimeError(f"{name} did not converge {objects} Widgets")
        await running.settled_cpu_seconds()
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://{address}/metrics") as answer,
        ):
            return reconciles_in(await answer.text())
    finally:
        await running.stop()


async def measure(objects: int, runs: int, workdir: Path) -> dict[str, Any]:
    compile_sources()
    cluster = Cluster(workdir)
    await cluster.start()
    counts: dict[str, list[int]] = {name: [] for name in CONTESTANT_NAMES}
    try:
        await widgets.install(cluster)
        for run in range(runs):
            for name in CONTESTANT_NAMES:
                counts[name].append(await count(cluster, name, objects, workdir, run))
                log.info("%s run %d: %d reconciles", name, run + 1, counts[name][-1])
    finally:
        await cluster.close()
    return {
        name: {"reconciles": values, "per_object": [value / objects for value in values]}
        for name, values in counts.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.reconciles")
    parser.add_argument("--objects", type=int, default=1000, help="Widgets (default 1000).")
    parser.add_argument("--runs", type=int, default=1, help="Runs per contestant.")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-reconciles-") as tmp:
        result = asyncio.run(measure(args.objects, args.runs, Path(tmp)))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
