"""A writer for the kill -9 test: writes objects forever, printing each acknowledged write.

Run as ``python -m tests.cluster.storage.crash_writer PATH``. Each object is created, then
updated, and every fourth one then deleted; a line ``KEY REVISION create``, ``KEY REVISION
update`` or ``KEY REVISION delete`` is printed (and flushed) only after ``wait_durable``
returned for that write.
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
    # Names continue above every revision: a name a previous (killed) run created and
    # committed is below the revision it was created at.
    numbers = itertools.count(storage.revision)

    def acknowledged(key: str, revision: int, what: str) -> None:
        sys.stdout.write(f"{key} {revision} {what}\n")
        sys.stdout.flush()

    async def writer() -> None:
        while True:
            i = next(numbers)
            key = f"/core/configmaps/crash/o{i:07d}"
            obj = {"metadata": {"name": f"o{i:07d}"}, "data": {"pad": "x" * 200}}
            record = storage.create(key, obj)
            await storage.wait_durable(record.revision)
            acknowledged(key, record.revision, "create")
            obj["data"] = {"pad": "y" * 300}
            record = storage.update(key, obj, expected_revision=record.revision)
            await storage.wait_durable(record.revision)
            acknowledged(key, record.revision, "update")
            if i % 4 == 0:
                record = storage.delete(key, expected_revision=record.revision)
                await storage.wait_durable(record.revision)
                acknowledged(key, record.revision, "delete")

    await asyncio.gather(*(writer() for _ in range(CONCURRENT_WRITERS)))


if __name__ == "__main__":
    asyncio.run(write_forever(sys.argv[1]))
