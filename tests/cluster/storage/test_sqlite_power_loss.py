"""An acknowledged write is on disk: what the last finished sync covered holds every write the
storage had acknowledged by then, so losing power right after loses none of them.

The disk is modelled by copies: the injected ``fdatasync`` copies the database and its WAL at
the moment it is called (everything written before a sync is what the sync makes durable),
then syncs. A write acknowledged while snapshot N was the last finished sync must be in
snapshot N, opened as the server would open it after a power loss.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from setpoint.cluster.apiserver.storage import SqliteStorage
from setpoint.cluster.apiserver.storage import sqlite as sqlite_module
from setpoint.cluster.apiserver.storage.kernel_sync import KernelSync, open_kernel_sync
from tests.cluster.storage.objects import configmap, key_of

WRITERS = 8
WRITES_PER_WRITER = 12


class DiskAtEachSync:
    """Stands in for ``os.fdatasync``: snapshots the files, then syncs for real."""

    def __init__(self, database: Path, snapshots: Path) -> None:
        self.database = database
        self.snapshots = snapshots
        self.finished = 0  # the number of the last snapshot whose sync returned
        self._started = 0

    def fdatasync(self, fd: int) -> None:
        number = self._snapshot()
        os.fdatasync(fd)
        self.finished = number

    def _snapshot(self) -> int:
        self._started += 1
        number = self._started
        target = self.snapshots / str(number)
        target.mkdir()
        for suffix in ("", "-wal"):
            source = self.database.with_name(self.database.name + suffix)
            if source.exists():
                shutil.copyfile(source, target / (self.database.name + suffix))
        return number

    def kernel(self, inner: KernelSync) -> KernelSync:
        """The same around the storage's Linux AIO context (its default sync)."""
        disk = self

        class Snapshotting:
            async def fdsync(self, fd: int) -> Any:
                number = disk._snapshot()
                result = await inner.fdsync(fd)
                disk.finished = number
                return result

            def close(self) -> None:
                inner.close()

        return Snapshotting()


@pytest.mark.parametrize("path", ["thread", "kernel"])
async def test_every_acknowledged_write_is_in_the_last_sync_before_its_answer(
    tmp_path: Path, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "data.db"
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    disk = DiskAtEachSync(database, snapshots)
    if path == "thread":
        storage = SqliteStorage(database, fdatasync=disk.fdatasync)
    else:
        if sys.platform != "linux":
            pytest.skip("Linux AIO")

        async def opener(directory: Path) -> KernelSync | None:
            inner = await open_kernel_sync(directory)
            assert inner is not None
            return disk.kernel(inner)

        monkeypatch.setattr(sqlite_module, "open_kernel_sync", opener)
        storage = SqliteStorage(database)
    # Each acknowledgement: (key, revision, deleted, the last finished sync then).
    acknowledged: list[tuple[str, int, bool, int]] = []
    rng = random.Random(22)

    async def writer(number: int) -> None:
        key = key_of(f"w{number}")
        exists = False
        for step in range(WRITES_PER_WRITER):
            if not exists:
                record = storage.create(key, configmap(f"w{number}", step=str(step)))
            elif rng.random() < 0.2:
                record = storage.delete(key)
            else:
                record = storage.update(key, configmap(f"w{number}", step=str(step)))
            deleting = exists and storage.get(key) is None
            await storage.wait_durable(record.revision)
            acknowledged.append((key, record.revision, deleting, disk.finished))
            exists = not deleting
            if rng.random() < 0.3:
                await asyncio.sleep(0)

    try:
        await asyncio.gather(*(writer(n) for n in range(WRITERS)))
    finally:
        await storage.close()

    by_snapshot: dict[int, list[tuple[str, int, bool]]] = {}
    for key, revision, deleted, finished in acknowledged:
        assert finished > 0, "acknowledged before any sync returned"
        by_snapshot.setdefault(finished, []).append((key, revision, deleted))
    assert len(by_snapshot) > 3, "the writes should span many syncs"
    for number, writes in by_snapshot.items():
        after_power_loss = SqliteStorage(snapshots / str(number) / database.name)
        try:
            for key, revision, deleted in writes:
                found = after_power_loss.get(key)
                # The writer's next write may have been written before this sync started.
                if deleted:
                    kept = found is None or found.revision > revision
                else:
                    kept = found is not None and found.revision >= revision
                assert kept, f"{key}@{revision} acknowledged after sync {number} but not in it"
        finally:
            await after_power_loss.close()
