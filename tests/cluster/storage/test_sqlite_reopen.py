"""The SQLite backend keeps everything across close/reopen and refuses files it cannot trust."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from setpoint.cluster.apiserver.storage import (
    InvalidValueError,
    SqliteStorage,
    StorageOpenError,
    sqlite_file,
)
from tests.cluster.storage.objects import configmap, key_of, rv
from tests.cluster.storage.test_watch import take


async def fill(storage: SqliteStorage) -> dict[str, tuple[int, bytes]]:
    """Creates, updates and deletes; returns what should be stored: key -> (revision, value)."""
    for i in range(6):
        storage.create(key_of(f"o{i}"), configmap(f"o{i}", i=str(i)))
    storage.update(key_of("o1"), configmap("o1", i="one"))
    storage.delete(key_of("o2"))
    last = storage.create(key_of("o2"), configmap("o2", again="yes"))
    await storage.wait_durable(last.revision)
    return {r.key: (r.revision, r.value) for r in storage.list("/")}


async def test_reopen_keeps_keys_values_and_revisions(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    first = SqliteStorage(path)
    expected = await fill(first)
    revision = first.revision
    await first.close()

    again = SqliteStorage(path)
    try:
        assert {r.key: (r.revision, r.value) for r in again.list("/")} == expected
        assert again.revision == revision == 9
        assert rv(again.get(key_of("o1")).value) == "7"  # type: ignore[union-attr]
        record = again.create(key_of("new"), configmap("new"))
        assert record.revision == revision + 1
        await again.wait_durable(record.revision)
    finally:
        await again.close()


async def test_close_commits_writes_nobody_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    first = SqliteStorage(path)
    first.create(key_of("a"), configmap("a"))
    first.create(key_of("b"), configmap("b"))
    await first.close()
    again = SqliteStorage(path)
    assert [r.key for r in again.list("/")] == [key_of("a"), key_of("b")]
    await again.close()


async def test_revision_after_deleting_everything_is_not_reused(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    first = SqliteStorage(path, history_max_events=1)
    first.create(key_of("a"), configmap("a"))
    last = first.delete(key_of("a"))
    await first.wait_durable(last.revision)
    await first.close()
    again = SqliteStorage(path)
    assert again.revision == 2
    assert again.create(key_of("a"), configmap("a")).revision == 3
    await again.close()


async def test_watch_resumes_after_restart(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    first = SqliteStorage(path)
    await fill(first)
    await first.close()

    again = SqliteStorage(path)
    assert again.oldest_revision == 0
    watch = again.watch("/core/configmaps/", 6)
    assert [(e.type, e.revision) for e in await take(watch, 3)] == [
        ("MODIFIED", 7),
        ("DELETED", 8),
        ("ADDED", 9),
    ]
    record = again.create(key_of("live"), configmap("live"))
    await again.wait_durable(record.revision)
    (live,) = await take(watch, 1)
    assert live.revision == 10
    watch.close()
    await again.close()


async def test_persisted_history_is_trimmed_to_the_window(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    first = SqliteStorage(path, history_max_events=3)
    last = 0
    for i in range(10):
        last = first.create(key_of(f"o{i}"), configmap(f"o{i}")).revision
        await first.wait_durable(last)
    await first.close()
    with closing(sqlite3.connect(path)) as conn:
        (kept,) = conn.execute("SELECT count(*) FROM events").fetchone()
    assert kept <= 4, "the file keeps about the window, not every event"

    again = SqliteStorage(path, history_max_events=3)
    assert again.oldest_revision == 7
    watch = again.watch("/", 7)
    assert [e.revision for e in await take(watch, 3)] == [8, 9, 10]
    watch.close()
    await again.close()


async def test_history_older_than_max_age_is_dropped_at_reopen(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    now = [1_000_000.0]
    first = SqliteStorage(path, clock=lambda: now[0])
    record = first.create(key_of("a"), configmap("a"))
    await first.wait_durable(record.revision)
    await first.close()
    now[0] += 3600
    again = SqliteStorage(path, clock=lambda: now[0])
    assert again.oldest_revision == 1
    assert again.get(key_of("a")) is not None
    await again.close()


async def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not SQLite at all" * 100)
    with pytest.raises(StorageOpenError, match=str(path)):
        SqliteStorage(path)


async def test_a_damaged_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    first = SqliteStorage(path)
    for i in range(300):
        first.create(key_of(f"o{i}"), configmap(f"o{i}", pad="x" * 500))
    await first.close()
    raw = bytearray(path.read_bytes())
    raw[4096:] = b"\xff" * (len(raw) - 4096)  # every page after the first is garbage
    path.write_bytes(bytes(raw))
    with pytest.raises(StorageOpenError, match=f"{path}.*corrupt"):
        SqliteStorage(path)


async def test_a_sqlite_file_of_another_program_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE things (x)")
        conn.commit()
    with pytest.raises(StorageOpenError, match=f"{path}: not a setpoint storage file"):
        SqliteStorage(path)


async def test_an_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    await SqliteStorage(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StorageOpenError, match=f"{path}: storage schema version 99"):
        SqliteStorage(path)


async def test_a_file_in_use_by_another_storage_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    first = SqliteStorage(path)
    try:
        with pytest.raises(StorageOpenError, match=f"{path}: the storage file is in use"):
            SqliteStorage(path)
    finally:
        await first.close()
    await SqliteStorage(path).close()


async def test_a_path_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "data.db"
    with pytest.raises(StorageOpenError, match=f"{path}: cannot open"):
        SqliteStorage(path)


async def test_bad_options_are_refused_without_locking_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data.db"
    with pytest.raises(InvalidValueError, match="max_events"):
        SqliteStorage(path, history_max_events=0)
    await SqliteStorage(path).close()


async def test_an_empty_file_becomes_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    storage = SqliteStorage(path)
    assert storage.revision == 0
    record = storage.create(key_of("a"), configmap("a"))
    await storage.wait_durable(record.revision)
    await storage.close()
    reopened = SqliteStorage(path)
    assert reopened.revision == 1
    await reopened.close()


async def test_checkpoints_between_batches_keep_everything_and_reuse_the_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_file, "CHECKPOINT_WAL_PAGES", 24)
    path = tmp_path / "data.db"
    storage = SqliteStorage(path)
    wal = tmp_path / "data.db-wal"
    wal_sizes = []

    async def writer(w: int) -> None:
        for i in range(40):
            record = storage.create(key_of(f"w{w}-{i}"), configmap(f"w{w}-{i}", i=str(i)))
            await storage.wait_durable(record.revision)
            wal_sizes.append(wal.stat().st_size)

    await asyncio.gather(*(writer(w) for w in range(4)))
    expected = {r.key: (r.revision, r.value) for r in storage.list("/")}
    await storage.close()
    with closing(sqlite3.connect(path)) as conn:
        query = "SELECT value FROM meta WHERE name = 'checkpoints'"
        (checkpoints,) = conn.execute(query).fetchone()
    assert checkpoints >= 3, "the WAL passed the threshold several times"
    # Written again from its start after each checkpoint: it stays near the threshold.
    assert max(wal_sizes) < 200 * (4096 + 24), max(wal_sizes)
    reopened = SqliteStorage(path)
    try:
        assert {r.key: (r.revision, r.value) for r in reopened.list("/")} == expected
        assert len(expected) == 160
    finally:
        await reopened.close()
