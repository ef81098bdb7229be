"""The default sync of the SQLite storage: Linux AIO (``IOCB_CMD_FDSYNC`` through caio), with
no thread. A write is acknowledged only after the kernel's sync covering it returned, and a
failed one stops the storage's writes, as on the thread path."""

from __future__ import annotations

import asyncio
import errno
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from setpoint.cluster.apiserver.storage import CommitError, SqliteStorage
from setpoint.cluster.apiserver.storage import sqlite as sqlite_module
from setpoint.cluster.apiserver.storage.kernel_sync import KernelSync, open_kernel_sync
from tests.cluster.storage.objects import configmap, key_of

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux AIO")


class HeldKernelSync:
    """Wraps the real context: each fdsync waits for ``release``, or fails when told."""

    def __init__(self, inner: KernelSync) -> None:
        self.inner = inner
        self.called = asyncio.Event()
        self.release = asyncio.Event()
        self.failing = False
        self.fds: list[int] = []
        self.returned = 0

    async def fdsync(self, fd: int) -> Any:
        self.fds.append(fd)
        self.called.set()
        await self.release.wait()
        if self.failing:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        result = await self.inner.fdsync(fd)
        self.returned += 1
        return result

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
async def held(monkeypatch: pytest.MonkeyPatch) -> Any:
    wrappers: list[HeldKernelSync] = []

    async def opener(directory: Path) -> KernelSync | None:
        inner = await open_kernel_sync(directory)
        assert inner is not None, "Linux AIO should be available on Linux 4.18+"
        wrappers.append(HeldKernelSync(inner))
        return wrappers[-1]

    monkeypatch.setattr(sqlite_module, "open_kernel_sync", opener)
    return wrappers


async def opened(held: list[HeldKernelSync]) -> HeldKernelSync:
    """The wrapper, once the storage's first batch has opened it (its flusher runs then)."""
    for _ in range(2000):
        if held:
            return held[0]
        await asyncio.sleep(0.005)
    raise AssertionError("the storage never opened its kernel sync")


async def test_linux_aio_syncs_a_file(tmp_path: Path) -> None:
    context = await open_kernel_sync(tmp_path)
    assert context is not None
    fd = os.open(tmp_path / "f", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"x" * 4096)
        await context.fdsync(fd)
        with pytest.raises(Exception, match=r"EBADF|Bad file"):
            await context.fdsync(10_000)
    finally:
        os.close(fd)
        context.close()


async def test_a_write_is_answered_only_after_the_kernel_sync_covering_it(
    tmp_path: Path, held: list[HeldKernelSync]
) -> None:
    storage = SqliteStorage(tmp_path / "data.db")
    try:
        record = storage.create(key_of("a"), configmap("a"))
        waiter = asyncio.ensure_future(storage.wait_durable(record.revision))
        watch = storage.watch("/", 0)
        sync = await opened(held)
        await asyncio.wait_for(sync.called.wait(), 10)
        behind = storage.create(key_of("b"), configmap("b"))
        for _ in range(10):
            await asyncio.sleep(0.005)
            assert not waiter.done(), "acknowledged before its sync returned"
        assert watch.take_buffered() == []
        sync.release.set()
        await waiter
        await storage.wait_durable(behind.revision)
        assert sync.returned >= 2, "the write queued during a sync waits for the next one"
        assert {os.fstat(fd).st_ino for fd in set(sync.fds)} == {
            os.stat(tmp_path / "data.db-wal").st_ino
        }
        watch.close()
    finally:
        for sync in held:
            sync.release.set()  # a failing test must not leave the flusher waiting
        await storage.close()


async def test_a_failed_kernel_sync_fails_its_batch_and_stops_writes(
    tmp_path: Path, held: list[HeldKernelSync]
) -> None:
    storage = SqliteStorage(tmp_path / "data.db")
    try:
        kept = storage.create(key_of("kept"), configmap("kept"))
        sync = await opened(held)
        sync.release.set()
        await storage.wait_durable(kept.revision)
        sync.failing = True
        lost = storage.create(key_of("lost"), configmap("lost"))
        with pytest.raises(CommitError, match="Input/output error"):
            await storage.wait_durable(lost.revision)
        assert storage.get(key_of("lost")) is None
        with pytest.raises(CommitError, match="refuses writes"):
            storage.create(key_of("later"), configmap("later"))
    finally:
        for sync in held:
            sync.release.set()  # a failing test must not leave the flusher waiting
        await storage.close()
