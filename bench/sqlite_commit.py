"""What one group commit of the SQLite storage costs on this machine, alone in its process.

    python -m bench.sqlite_commit [--json] [--quick]

``SqliteFile.commit`` (what the storage does per batch: ``write``, one transaction that
SQLite does not sync, then ``sync``, one ``fdatasync`` of the WAL; the server runs the first on
its event loop and the second on its file thread) is called for batches of 1, 6 and
16 ConfigMap creates of about 1 KiB of JSON each, in a file in a fresh temporary directory (on
the disk ``tempfile`` picks). Per batch size: the median wall time of a commit and the CPU
time (user and system, of the whole process) per commit and per create. No server, no event
loop and no other thread: this is the floor a batch costs, to set beside the server's CPU per
create in ``bench.create_rate``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from bench.command_line import run_benchmark
from setpoint.cluster.apiserver.storage.keyspace import Change, Keyspace
from setpoint.cluster.apiserver.storage.sqlite_file import SqliteFile

BATCH_SIZES: Final = (1, 6, 16)
#: Batches per size (full, quick).
BATCHES: Final = (1500, 50)


def _config_map(number: int) -> dict[str, Any]:
    name = f"cm-{number:07d}"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "bench", "uid": f"{number:036d}"},
        "data": {f"key-{i:02d}": "v" * 40 for i in range(15)},
    }


def _measure_size(size: int, batches: int, directory: Path) -> dict[str, Any]:
    keyspace = Keyspace()
    prepared: list[list[Change]] = []
    for _ in range(batches):
        batch = []
        for _ in range(size):
            number = keyspace.revision + 1
            batch.append(
                keyspace.create(f"/core/configmaps/bench/cm-{number:07d}", _config_map(number))
            )
        prepared.append(batch)
    storage_file = SqliteFile(directory / f"batch-{size}.db")
    walls: list[float] = []
    try:
        before = os.times()
        for batch in prepared:
            started = time.perf_counter()
            storage_file.commit(batch, 0, time.time())
            walls.append(time.perf_counter() - started)
        after = os.times()
    finally:
        storage_file.close()
    cpu = (after.user - before.user) + (after.system - before.system)
    system = after.system - before.system
    return {
        "batch_size": size,
        "batches": batches,
        "commit_wall_ms_median": round(statistics.median(walls) * 1e3, 3),
        "cpu_us_per_commit": round(cpu / batches * 1e6, 1),
        "system_cpu_us_per_commit": round(system / batches * 1e6, 1),
        "cpu_us_per_create": round(cpu / (batches * size) * 1e6, 1),
        "value_bytes": len(prepared[0][0].record.value),
    }


async def measure(batches: int) -> dict[str, Any]:
    """Commit ``batches`` batches of each size; the figures per size."""
    with tempfile.TemporaryDirectory(prefix="bench-sqlite-commit-") as tmp:
        rows = [_measure_size(size, batches, Path(tmp)) for size in BATCH_SIZES]
    return {"load_average_1m": round(os.getloadavg()[0], 2), "sizes": rows}


def render(figures: dict[str, Any]) -> str:
    """A Markdown table."""
    lines = [
        f"load average {figures['load_average_1m']}",
        "",
        "| creates per commit | commit wall (median) | CPU per commit (system) | CPU per create |",
        "|---:|---:|---:|---:|",
    ]
    for row in figures["sizes"]:
        lines.append(
            f"| {row['batch_size']} | {row['commit_wall_ms_median']:.2f} ms | "
            f"{row['cpu_us_per_commit']:.0f} µs ({row['system_cpu_us_per_commit']:.0f} µs) | "
            f"{row['cpu_us_per_create']:.0f} µs |"
        )
    return "\n".join(lines)


def failures(figures: dict[str, Any]) -> list[str]:
    """Nothing here can fail but an exception."""
    return []


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    run_benchmark(
        "python -m bench.sqlite_commit", __doc__, measure, BATCHES, render, failures, argv
    )


if __name__ == "__main__":
    main()
