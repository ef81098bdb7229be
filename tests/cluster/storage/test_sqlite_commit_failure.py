"""Commits seen from outside: a failed one (disk full, I/O error) fails its writes and leaves
no trace of them; a slow sync keeps its events from watchers and its writers waiting until it
returned; a failed sync fails its writes and every later one."""

from __future__ import annotations

import asyncio
import errno
import os
import sqlite3
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.storage import (
    CommitError,
    KeyExistsError,
    KeyNotFoundError,
    SqliteStorage,
)
from tests.cluster.storage.objects import configmap, decoded, key_of
from tests.cluster.storage.test_watch import drain, take

# Only reached if the storage never starts the commit (a failing test, not a slow one).
HANDSHAKE_TIMEOUT = 10.0


@dataclass
class Faults:
    """What the injected connection and sync do wrong, shared with the sync thread."""

    failing_commits: int = 0
    failing_inserts: int = 0
    failing_syncs: int = 0
    holding_syncs: int = 0
    sync_started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    syncs_returned: int = 0
    synced_inodes: set[int] = field(default_factory=set)

    def fdatasync(self, fd: int) -> None:
        """Stands in for ``os.fdatasync``: held or failing as told, else the real one."""
        if self.holding_syncs:
            self.sync_started.set()
            self.release.wait(HANDSHAKE_TIMEOUT)
            self.holding_syncs -= 1
        if self.failing_syncs:
            self.failing_syncs -= 1
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        self.synced_inodes.add(os.fstat(fd).st_ino)
        os.fdatasync(fd)
        self.syncs_returned += 1


def faulty_connection(faults: Faults) -> type[sqlite3.Connection]:
    """A connection class whose COMMIT or inserts fail as ``faults`` says."""

    class FaultyConnection(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql == "COMMIT" and faults.failing_commits:
                faults.failing_commits -= 1
                raise sqlite3.OperationalError("disk I/O error")
            return super().execute(sql, *args)

        def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("INSERT INTO objects") and faults.failing_inserts:
                faults.failing_inserts -= 1
                raise sqlite3.OperationalError("database or disk is full")
            return super().executemany(sql, *args)

    return FaultyConnection


@pytest.fixture
def faults() -> Faults:
    return Faults()


@pytest.fixture
async def storage(tmp_path: Path, faults: Faults) -> Any:
    store = SqliteStorage(
        tmp_path / "data.db",
        connection_factory=faulty_connection(faults),
        fdatasync=faults.fdatasync,
    )
    yield store
    await store.close()


async def test_failed_batch_fails_its_writers_and_is_undone(
    storage: SqliteStorage, faults: Faults, tmp_path: Path
) -> None:
    watch = storage.watch("/", 0)
    faults.failing_commits = 1
    a = storage.create(key_of("a"), configmap("a"))
    b = storage.create(key_of("b"), configmap("b"))
    assert storage.get(key_of("a")) == a, "visible at once, before the commit"

    with pytest.raises(CommitError, match=f"revision {a.revision} was not committed"):
        await storage.wait_durable(a.revision)
    with pytest.raises(CommitError, match="disk I/O error"):
        await storage.wait_durable(b.revision)
    assert storage.get(key_of("a")) is None
    assert storage.get(key_of("b")) is None
    assert storage.count("/") == 0

    c = storage.create(key_of("c"), configmap("c"))
    await storage.wait_durable(c.revision)
    assert c.revision > b.revision, "revisions of failed writes are not handed out again"
    (event,) = await take(watch, 1)
    assert event.key == key_of("c"), "watchers never see the failed writes"
    watch.close()
    assert await drain(watch) == []

    await storage.close()
    reopened = SqliteStorage(tmp_path / "data.db")
    assert [r.key for r in reopened.list("/")] == [key_of("c")]
    await reopened.close()


async def test_failed_insert_fails_the_batch(storage: SqliteStorage, faults: Faults) -> None:
    kept = storage.create(key_of("kept"), configmap("kept"))
    await storage.wait_durable(kept.revision)
    faults.failing_inserts = 1
    lost = storage.update(key_of("kept"), configmap("kept", v="lost"))
    with pytest.raises(CommitError, match="disk is full"):
        await storage.wait_durable(lost.revision)
    assert storage.get(key_of("kept")) == kept
    retry = storage.update(key_of("kept"), configmap("kept", v="2"), expected_revision=1)
    await storage.wait_durable(retry.revision)
    assert decoded(storage.get(key_of("kept")).value)["data"] == {"v": "2"}  # type: ignore[union-attr]


async def test_a_failed_sync_fails_its_batch_and_every_later_write(
    storage: SqliteStorage, faults: Faults, tmp_path: Path
) -> None:
    base = storage.create(key_of("x"), configmap("x", v="0"))
    other = storage.create(key_of("y"), configmap("y"))
    await storage.wait_durable(other.revision)
    watch = storage.watch("/", other.revision)

    faults.failing_syncs = 1
    faults.holding_syncs = 1
    first = storage.update(key_of("x"), configmap("x", v="1"), expected_revision=base.revision)
    started = await asyncio.to_thread(faults.sync_started.wait, HANDSHAKE_TIMEOUT)
    assert started
    # Queued while the first batch is being synced, and built on it.
    second = storage.update(key_of("x"), configmap("x", v="2"), expected_revision=first.revision)
    gone = storage.delete(key_of("y"))
    faults.release.set()

    for record in (first, second, gone):
        with pytest.raises(CommitError, match="Input/output error"):
            await storage.wait_durable(record.revision)
    assert storage.get(key_of("x")) == base, "the view is back to what is durable"
    assert storage.get(key_of("y")) == other
    assert storage.revision == other.revision
    with pytest.raises(CommitError, match="refuses writes since syncing it failed"):
        storage.update(key_of("x"), configmap("x", v="3"), expected_revision=base.revision)
    with pytest.raises(CommitError, match="refuses writes"):
        storage.create(key_of("z"), configmap("z"))
    watch.close()
    assert await drain(watch) == [], "watchers never see the writes whose sync failed"

    await storage.close()
    reopened = SqliteStorage(tmp_path / "data.db")
    try:
        # Whether the batch whose sync failed reached the disk is unknown; the writes queued
        # behind it were never written. The file opens with every acknowledged write.
        assert reopened.get(key_of("y")) is not None
        x = reopened.get(key_of("x"))
        assert x is not None and decoded(x.value)["data"]["v"] in {"0", "1"}
    finally:
        await reopened.close()


async def test_a_write_is_not_durable_before_the_sync_that_covers_it_returned(
    storage: SqliteStorage, faults: Faults, tmp_path: Path
) -> None:
    faults.holding_syncs = 1
    record = storage.create(key_of("a"), configmap("a"))
    waiter = asyncio.ensure_future(storage.wait_durable(record.revision))
    started = await asyncio.to_thread(faults.sync_started.wait, HANDSHAKE_TIMEOUT)
    assert started
    # Written and committed in SQLite, yet held: nobody may be told it is on disk.
    behind = storage.create(key_of("b"), configmap("b"))
    for _ in range(20):
        await asyncio.sleep(0.005)
        assert not waiter.done(), "acknowledged before its sync returned"
    assert storage.read_ticket().revision == behind.revision
    assert not await _settles_within(storage, record.revision, 0.05)
    faults.release.set()
    await waiter
    assert faults.syncs_returned >= 1
    await storage.wait_durable(behind.revision)
    assert faults.syncs_returned >= 2, "the write queued during a sync waits for the next one"
    assert faults.synced_inodes == {os.stat(tmp_path / "data.db-wal").st_ino}, "syncs the WAL"


async def _settles_within(storage: SqliteStorage, revision: int, seconds: float) -> bool:
    try:
        await asyncio.wait_for(asyncio.shield(storage.wait_durable(revision)), seconds)
    except TimeoutError:
        return False
    return True


async def test_a_late_wait_on_a_failed_revision_still_fails(
    storage: SqliteStorage, faults: Faults
) -> None:
    faults.failing_commits = 1
    lost = storage.create(key_of("a"), configmap("a"))
    later = asyncio.ensure_future(storage.wait_durable(lost.revision))
    with pytest.raises(CommitError):
        await later
    ok = storage.create(key_of("b"), configmap("b"))
    await storage.wait_durable(ok.revision)
    with pytest.raises(CommitError):
        await storage.wait_durable(lost.revision)


async def test_events_reach_watchers_only_once_durable(
    storage: SqliteStorage, faults: Faults
) -> None:
    peek = storage.watch("/", 0)
    watch = storage.watch("/", 0)
    faults.holding_syncs = 1
    record = storage.create(key_of("a"), configmap("a"))
    started = await asyncio.to_thread(faults.sync_started.wait, HANDSHAKE_TIMEOUT)
    assert started
    peek.close()
    assert await drain(peek) == [], "nothing is announced while the sync is in progress"
    faults.release.set()
    await storage.wait_durable(record.revision)
    (event,) = await take(watch, 1)
    assert event.revision == record.revision
    watch.close()


async def test_concurrent_writers_are_all_acknowledged_in_order(
    storage: SqliteStorage, tmp_path: Path
) -> None:
    watch = storage.watch("/", 0, buffer=10_000)
    writers, per_writer = 16, 25

    async def writer(w: int) -> list[int]:
        revisions = []
        for i in range(per_writer):
            record = storage.create(key_of(f"w{w}-{i}"), configmap(f"w{w}-{i}"))
            await storage.wait_durable(record.revision)
            revisions.append(record.revision)
        return revisions

    results = await asyncio.gather(*(writer(w) for w in range(writers)))
    total = writers * per_writer
    assert sorted(r for revisions in results for r in revisions) == list(range(1, total + 1))
    assert [e.revision for e in await take(watch, total)] == list(range(1, total + 1))
    watch.close()
    await storage.close()
    reopened = SqliteStorage(tmp_path / "data.db")
    assert reopened.count("/") == total
    await reopened.close()


# One group of writes made without awaiting in between is one commit; ``fails`` makes it fail.
write_groups = st.lists(
    st.tuples(
        st.lists(
            st.tuples(st.sampled_from(["create", "update", "delete"]), st.sampled_from("pqr")),
            min_size=1,
            max_size=6,
        ),
        st.booleans(),
    ),
    max_size=8,
)


@settings(max_examples=30, deadline=None)
@given(groups=write_groups)
def test_random_failed_commits_leave_exactly_the_committed_writes(
    groups: list[tuple[list[tuple[str, str]], bool]],
) -> None:
    async def scenario(directory: Path) -> None:
        faults = Faults()
        path = directory / "data.db"
        store = SqliteStorage(path, connection_factory=faulty_connection(faults))
        committed: dict[str, int] = {}
        try:
            for writes, fails in groups:
                tentative = dict(committed)
                records = []
                for kind, name in writes:
                    key = key_of(name)
                    try:
                        if kind == "create":
                            record = store.create(key, configmap(name))
                        elif kind == "update":
                            record = store.update(key, configmap(name, v=kind))
                        else:
                            record = store.delete(key)
                    except (KeyExistsError, KeyNotFoundError):
                        assert (key in tentative) == (kind == "create")
                        continue
                    records.append(record)
                    if kind == "delete":
                        del tentative[key]
                    else:
                        tentative[key] = record.revision
                doomed = fails and bool(records)
                faults.failing_commits = 1 if doomed else 0
                for record in records:
                    if doomed:
                        with pytest.raises(CommitError):
                            await store.wait_durable(record.revision)
                    else:
                        await store.wait_durable(record.revision)
                if not doomed:
                    committed = tentative
                assert {r.key: r.revision for r in store.list("/")} == committed
        finally:
            await store.close()
        reopened = SqliteStorage(path)
        try:
            assert {r.key: r.revision for r in reopened.list("/")} == committed
        finally:
            await reopened.close()

    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(scenario(Path(directory)))
