"""CPU per object without the noise: instructions counted by callgrind, at two sizes.

    python -m bench.peers.instructions                      # setpoint and raw, N = 300 and 1,000
    python -m bench.peers.instructions --runs 3             # the median of 3 measurements each
    python -m bench.peers.instructions --objects 200,2000 --contestants setpoint,raw,kopf

On a shared machine, CPU seconds of the same run move by tens of percent; the number of
instructions a process executes does not (it depends on the work, not on who else runs). Each
contestant converges a fan-out of N Widgets under ``valgrind --tool=callgrind`` (about 50 times
slower, so the timings mean nothing here), once per N; then

    per object = (instructions(N2) - instructions(N1)) / (N2 - N1)
    start-up   = instructions(N1) - N1 x per object

separate what an object costs from what starting costs. Callgrind counts user-space instructions
only: the kernel's share (system calls) is not in them. What still varies from run to run is how
requests and events interleave, and when the garbage collector runs a full collection (one more
or one fewer at N2 moves the figure by tens of thousands per object): ``--runs`` repeats the
measurement and reports the median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.peers import widgets
from bench.peers.bytecode import compile_sources
from bench.peers.cluster import Cluster
from bench.peers.processes import CONTESTANTS, Contestant, Running
from bench.peers.scenarios import wait_converged

log = logging.getLogger("bench.instructions")
_SUMMARY = re.compile(rb"^summary:\s*(\d+)", re.MULTILINE)
#: Under callgrind a contestant runs about 50 times slower.
TIMEOUT_SECONDS = 1800.0


@dataclass(frozen=True)
class Counted(Contestant):
    """A contestant started under callgrind, which writes its counts to ``out`` at exit."""

    out: Path = Path("callgrind.out")

    def argv(self, namespace: str, kubeconfig: Path, metrics_address: str = "0") -> list[str]:
        # A fixed hash seed: with a random one, dict layouts (and so the instruction count of
        # the same work) change from run to run.
        return [
            "env", "PYTHONHASHSEED=0",
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={self.out}",
            *super().argv(namespace, kubeconfig, metrics_address),
        ]  # fmt: skip


def instructions_in(path: Path) -> int:
    """The total instruction count of a callgrind output file."""
    match = _SUMMARY.search(path.read_bytes())
    if match is None:
        raise RuntimeError(f"{path}: no 'summary:' line (did the process exit cleanly?)")
    return int(match[1])


async def count(
    cluster: Cluster, contestant: Contestant, objects: int, workdir: Path, run: int = 0
) -> int:
    """Instructions the contestant executes to converge a fan-out of ``objects`` Widgets."""
    namespace = f"{contestant.name}-n{objects}-r{run}"
    await widgets.create_namespace(cluster, namespace)
    await widgets.create_widgets(cluster, namespace, [f"w{i}" for i in range(objects)])
    out = workdir / f"{namespace}.callgrind"
    counted = Counted(
        contestant.name, contestant.clients, contestant.watches, contestant.env, out=out
    )
    running = Running(counted, namespace, cluster.kubeconfig, workdir / f"{namespace}.log")
    _, state = await wait_converged(
        cluster, namespace, time.monotonic(), TIMEOUT_SECONDS, 0.5, running
    )
    if contestant.watches:
        # The work still queued at convergence (e.g. the runs own writes' events cause) counts.
        await running.settled_cpu_seconds(timeout=TIMEOUT_SECONDS)
        await running.stop()
    else:
        await running.wait_exit(TIMEOUT_SECONDS)
    if not state.done:
        raise RuntimeError(f"{contestant.name} did not converge {objects} Widgets")
    return instructions_in(out)


def summarize(counts: list[tuple[int, int]], sizes: tuple[int, int]) -> dict[str, Any]:
    """One contestant's figures from its (instructions at N1, at N2) of each run: those of the
    run with the median cost per object, and every run's cost per object."""
    per_run = [(large - small) / (sizes[1] - sizes[0]) for small, large in counts]
    median = statistics.median_low(per_run)
    small, large = counts[per_run.index(median)]
    summary: dict[str, Any] = {
        "instructions": {str(sizes[0]): small, str(sizes[1]): large},
        "per_object": round(median),
        "startup": round(small - sizes[0] * median),
    }
    if len(counts) > 1:
        summary["per_object_runs"] = [round(value) for value in per_run]
    return summary


async def measure(
    contestants: list[str], sizes: tuple[int, int], workdir: Path, runs: int = 1
) -> dict[str, Any]:
    compile_sources()
    cluster = Cluster(workdir)
    await cluster.start()
    results: dict[str, Any] = {}
    try:
        await widgets.install(cluster)
        for name in contestants:
            counts = []
            for run in range(runs):
                small = await count(cluster, CONTESTANTS[name], sizes[0], workdir, run)
                large = await count(cluster, CONTESTANTS[name], sizes[1], workdir, run)
                counts.append((small, large))
            results[name] = summarize(counts, sizes)
            log.info("%s: %s", name, results[name])
    finally:
        await cluster.close()
    if "setpoint" in results:
        for name, result in results.items():
            if name != "setpoint":
                results["setpoint"][f"per_object_over_{name}"] = round(
                    results["setpoint"]["per_object"] / result["per_object"], 2
                )
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.instructions")
    parser.add_argument("--objects", default="300,1000", help="Two sizes N1,N2.")
    parser.add_argument("--contestants", default="setpoint,raw")
    parser.add_argument("--runs", type=int, default=1, help="Measurements per contestant.")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: this measurement needs valgrind --tool=callgrind")
    sizes = tuple(int(n) for n in args.objects.split(","))
    if len(sizes) != 2 or sizes[0] >= sizes[1]:
        sys.exit("--objects: give two sizes, the smaller first (e.g. 300,1000)")
    if args.runs < 1:
        sys.exit("--runs: give at least 1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-instructions-") as tmp:
        result = asyncio.run(
            measure(args.contestants.split(","), (sizes[0], sizes[1]), Path(tmp), args.runs)
        )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
