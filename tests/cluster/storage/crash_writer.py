"""A writer for the kill -9 test: creates objects forever, printing each acknowledged one.

Run as ``python -m tests.cluster.storage.crash_writer PATH``. A line ``KEY REVISION`` is
printed (and flushed) only after ``wait_durable`` returned for that write.
"""

from __future__ import annotations

import asyncio
import itertools
import sys

from setpoint.cluster.apiserver.storage import SqliteStorage

# Like a handful of concurrent API clients, so that commits are grouped as in the server.
CONCURRENT_WRITERS = 8


async def write_forever(path: str) -> None:
    storage = SqliteStorage(path)
    print("READY", storage.revision, flush=True)
    # Names continue after the objects a previous (killed) run left behind.
    numbers = itertools.count(storage.count("/core/configmaps/crash/"))

    async def writer() -> None:
        while True:
            i = next(numbers)
            key = f"/core/configmaps/crash/o{i:07d}"
            obj = {"metadata": {"name": f"o{i:07d}"}, "data": {"pad": "x" * 200}}
            record = storage.create(key, obj)
            await storage.wait_durable(record.revision)
            sys.stdout.write(f"{key} {record.revision}\n")
            sys.stdout.flush()

    await asyncio.gather(*(writer() for _ in range(CONCURRENT_WRITERS)))


if __name__ == "__main__":
    asyncio.run(write_forever(sys.argv[1]))
