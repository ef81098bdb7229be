"""The durable backend: an in-memory view of the objects plus a SQLite file, with group commit.

A write updates the in-memory view at once (so the next write on the same key sees it) and
queues a change. One flusher task commits everything queued so far in a single transaction,
on the event loop (SQLite only writes the WAL into the page cache there: no sync), then makes
it durable with one ``fdatasync`` of the WAL, run by the kernel through Linux AIO where it can
(:mod:`~setpoint.cluster.apiserver.storage.kernel_sync`), else on a dedicated thread (see
:mod:`~setpoint.cluster.apiserver.storage.sqlite_file` for why that is as durable as SQLite's
``synchronous=FULL``), and only then — back on the event loop — records the events in the
history, announces them to watchers and wakes every ``wait_durable`` caller up to the batch's
revision. While one batch syncs the next one fills up, so concurrent writers share each disk
flush, with one sync per batch (no hand-off of the GIL per row).

If a commit fails, that batch and everything queued after it (which may build on it) are
undone in the in-memory view, newest first, and their ``wait_durable`` callers get
:class:`CommitError`. Their revisions are not handed out again by this process (after a
restart they may be, as they were never acknowledged, announced nor served).

If the sync fails (an I/O error), what reached the disk is unknown and a later sync could
succeed without covering the lost pages (Linux reports such an error once): the batch and
everything queued fail like a failed commit, and the storage refuses every later write with
:class:`CommitError` until it is reopened (a restart of the server reads the file again).

Reads come from the in-memory view, which may hold writes still being committed. So that no
answer shows one (etcd never serves an uncommitted revision), the server takes a
:meth:`read_ticket` before a read and awaits :meth:`settled` before answering: at most the
commit in flight plus the one queued behind it. :attr:`revision` is the durable revision
whenever nothing is pending, so a revision served is never one a crash can take back.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import itertools
import os
import sqlite3
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from setpoint.cluster.apiserver.storage.base import (
    CommitError,
    ReadTicket,
    Record,
    StorageClosedError,
    StorageError,
)
from setpoint.cluster.apiserver.storage.file_thread import FileThread
from setpoint.cluster.apiserver.storage.history import (
    HISTORY_MAX_AGE_SECONDS,
    HISTORY_MAX_EVENTS,
    Clock,
    EventHistory,
)
from setpoint.cluster.apiserver.storage.kernel_sync import KernelSync, open_kernel_sync
from setpoint.cluster.apiserver.storage.keyspace import Change, Keyspace, check_issued
from setpoint.cluster.apiserver.storage.keyspace_storage import KeyspaceStorage
from setpoint.cluster.apiserver.storage.sqlite_file import SqliteFile
from setpoint.cluster.apiserver.storage.watch import WatchHub

# Failed revision ranges remembered so that a late ``wait_durable`` on one still fails. Commit
# failures are rare (disk full, I/O error); this only bounds memory if they repeat for long.
_FAILED_RANGES_KEPT = 1000

# The writes queued for one commit, in revision order.
ChangeBatch = list[Change]


class SqliteStorage(KeyspaceStorage):
    """A revisioned key-value store in a SQLite file; every acknowledged write survives a crash.

    Use it from one event loop. Reads are served from memory (loaded at open).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        history_max_events: int = HISTORY_MAX_EVENTS,
        history_max_age: float = HISTORY_MAX_AGE_SECONDS,
        clock: Clock = time.time,
        connection_factory: type[sqlite3.Connection] = sqlite3.Connection,
        fdatasync: Callable[[int], None] = os.fdatasync,
    ) -> None:
        """Open (or create) the file at ``path``; StorageOpenError if it cannot be used.

        ``connection_factory`` and ``fdatasync`` are for tests that inject faults.
        """
        self._file = SqliteFile(path, factory=connection_factory, fdatasync=fdatasync)
        try:
            state = self._file.load()
            self._history = EventHistory(
                compacted_revision=_compacted_revision(state.events, state.revision),
                max_events=history_max_events,
                max_age=history_max_age,
                clock=clock,
            )
        except BaseException:
            self._file.close()  # release the lock: the caller may fix the problem and retry
            raise
        for event, at in state.events:
            self._history.extend((event,), at=at)
        self._keyspace = Keyspace(state.records, revision=state.revision)
        self._durable_revision = state.revision
        self._clock = clock
        self._hub = WatchHub()
        self._thread = FileThread("setpoint-sqlite")
        # The default sync goes through Linux AIO where it can (kernel_sync); an injected
        # fdatasync (tests) runs on the thread.
        self._kernel_sync: KernelSync | None = None
        self._kernel_sync_tried = fdatasync is not os.fdatasync
        self._pending: ChangeBatch = []
        self._flusher: asyncio.Task[None] | None = None
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._waiter_ids = itertools.count()
        self._failed: deque[tuple[int, int, BaseException]] = deque(maxlen=_FAILED_RANGES_KEPT)
        self._failures = 0
        # Keys with a write queued or being committed (with how many), for read_ticket.
        self._pending_keys: dict[str, int] = {}
        self._closed = False
        # The failed sync that stopped every later write (module docstring), if any.
        self._sync_failure: BaseException | None = None

    @property
    def revision(self) -> int:
        """The newest revision a read may report: the durable one unless writes are pending.

        With writes pending it is the newest handed out, and a read at it must await
        :meth:`settled`. After a failed commit it is the durable one again (the failed
        revisions are skipped, never served).
        """
        if self._pending or self._flusher is not None:
            return self._keyspace.revision
        return self._durable_revision

    def read_ticket(self, prefix: str | None = None) -> ReadTicket:
        """Take before a read; await :meth:`settled` with it before answering.

        A read of keys under ``prefix`` none of which has a write pending sees only durable
        values: its ticket is at the durable revision and needs no wait.
        """
        self._check_open()
        if prefix is not None and not self._pending_under(prefix):
            return ReadTicket(self._durable_revision, self._failures)
        return ReadTicket(self.revision, self._failures)

    def _pending_under(self, prefix: str) -> bool:
        return any(key.startswith(prefix) for key in self._pending_keys)

    async def settled(self, ticket: ReadTicket) -> bool:
        """Wait for the writes a read at ``ticket`` may have seen; False if one failed."""
        if ticket.revision > self._durable_revision:
            try:
                await self.wait_durable(ticket.revision)
            except CommitError:
                return False
        return self._failures == ticket.failures

    @property
    def path(self) -> Path:
        """The storage file."""
        return self._file.path

    def create(self, key: str, obj: dict[str, Any]) -> Record:
        """Store a new object; sets ``metadata.resourceVersion``. Raises KeyExistsError."""
        loop = self._writable()
        return self._enqueue(loop, self._keyspace.create(key, obj))

    def update(
        self, key: str, obj: dict[str, Any], *, expected_revision: int | None = None
    ) -> Record:
        """Replace an object; sets ``metadata.resourceVersion``."""
        loop = self._writable()
        change = self._keyspace.update(key, obj, expected_revision=expected_revision)
        return self._enqueue(loop, change)

    def delete(self, key: str, *, expected_revision: int | None = None) -> Record:
        """Remove an object; returns its last state stamped with the deletion's revision."""
        loop = self._writable()
        return self._enqueue(loop, self._keyspace.delete(key, expected_revision=expected_revision))

    async def wait_durable(self, revision: int) -> None:
        """Return once ``revision`` is committed to disk and announced; CommitError if it failed."""
        self._check_open()
        check_issued(revision, self._keyspace.revision)
        for low, high, error in self._failed:
            if low <= revision <= high:
                raise _commit_error(revision, error)
        if revision > self._durable_revision:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiters, (revision, next(self._waiter_ids), future))
            await future

    async def close(self) -> None:
        """Commit everything queued, end every watch and close the file."""
        if self._closed:
            return
        self._closed = True
        while self._flusher is not None:
            await asyncio.shield(self._flusher)
        self._hub.close_all()
        for _, _, future in self._waiters:
            if not future.done():
                future.set_exception(StorageClosedError("the storage was closed"))
        self._waiters.clear()
        if self._kernel_sync is not None:
            self._kernel_sync.close()
        try:
            await self._thread.run(
                functools.partial(self._file.close, checkpoint=self._sync_failure is None)
            )
        finally:
            self._thread.stop()

    def _writable(self) -> asyncio.AbstractEventLoop:
        self._check_open()
        if self._sync_failure is not None:
            raise CommitError(
                f"the storage {self._file.path} refuses writes since syncing it failed "
                f"({self._sync_failure}); restart the server"
            )
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            raise StorageError(
                "SqliteStorage writes must be made from a running event loop"
            ) from None

    def _enqueue(self, loop: asyncio.AbstractEventLoop, change: Change) -> Record:
        self._pending.append(change)
        key = change.record.key
        self._pending_keys[key] = self._pending_keys.get(key, 0) + 1
        if self._flusher is None:
            self._flusher = loop.create_task(self._flush(), name="setpoint-sqlite-flusher")
        return change.record

    async def _flush(self) -> None:
        storage_file = self._file
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                now = self._clock()
                try:
                    storage_file.write(batch, self._history.compacted_revision, now)
                except Exception as exc:
                    self._roll_back(batch, exc)
                    continue
                try:
                    await self._sync()
                except Exception as exc:
                    self._sync_failure = exc
                    self._roll_back(batch, exc)
                    return
                self._complete(batch, now)
                if storage_file.needs_checkpoint:
                    await self._checkpoint()
        finally:
            self._flusher = None

    async def _sync(self) -> None:
        if not self._kernel_sync_tried:
            self._kernel_sync_tried = True
            self._kernel_sync = await open_kernel_sync(self._file.path.parent)
        if self._kernel_sync is not None:
            await self._kernel_sync.fdsync(self._file.wal_fd)
        else:
            await self._thread.run(self._file.sync)

    async def _checkpoint(self) -> None:
        # On the thread, between batches: the loop writes nothing to the file meanwhile.
        try:
            await self._thread.run(self._file.checkpoint)
        except (sqlite3.Error, OSError):
            pass  # everything is in the synced WAL still; the next batch tries again

    def _settle_keys(self, changes: ChangeBatch) -> None:
        pending = self._pending_keys
        for change in changes:
            key = change.record.key
            left = pending[key] - 1
            if left:
                pending[key] = left
            else:
                del pending[key]

    def _complete(self, batch: ChangeBatch, now: float) -> None:
        self._settle_keys(batch)
        self._durable_revision = batch[-1].record.revision
        events = [change.event for change in batch]
        self._history.extend(events, at=now)
        self._hub.announce(events)
        self._wake_waiters_up_to(self._durable_revision, None)

    def _roll_back(self, batch: ChangeBatch, error: BaseException) -> None:
        # Writes queued after the failed batch may depend on it (an update of an object it
        # created): they fail too, and the view goes back to the last durable state.
        failed = batch + self._pending
        self._pending = []
        self._settle_keys(failed)
        for change in reversed(failed):
            self._keyspace.undo(change)
        low, high = failed[0].record.revision, failed[-1].record.revision
        self._failed.append((low, high, error))
        self._failures += 1
        self._wake_waiters_up_to(high, error)

    def _wake_waiters_up_to(self, revision: int, error: BaseException | None) -> None:
        waiters = self._waiters
        while waiters and waiters[0][0] <= revision:
            waited, _, future = heapq.heappop(waiters)
            if future.done():
                continue  # the waiter was cancelled
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(_commit_error(waited, error))

    def _check_open(self) -> None:
        if self._closed:
            raise StorageClosedError(f"the storage {self._file.path} is closed")


def _compacted_revision(events: list[tuple[Any, float]], revision: int) -> int:
    # Everything before the oldest persisted event is gone; with no events, only the future is.
    if events:
        oldest: int = events[0][0].revision
        return oldest - 1
    return revision


def _commit_error(revision: int, error: BaseException) -> CommitError:
    failure = CommitError(f"the write at revision {revision} was not committed: {error}")
    failure.__cause__ = error
    return failure
