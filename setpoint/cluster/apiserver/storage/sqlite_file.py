"""The SQLite file behind :class:`SqliteStorage`: schema, opening checks, loading, batch commits.

One connection, used by one thread at a time. The file is opened in WAL mode with
``synchronous=FULL`` (every commit is on disk before it returns) and an exclusive lock (a
second server on the same file would hand out the same revisions, so it is refused).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from setpoint.cluster.apiserver.storage.base import (
    EventType,
    Record,
    StorageOpenError,
    WatchEvent,
)
from setpoint.cluster.apiserver.storage.keyspace import Change

# Written into the file header ("SPT1"), so that a SQLite file of another program is refused
# instead of being silently extended with our tables.
APPLICATION_ID = 0x53505431
# Owner read/write only: the file holds every Secret.
FILE_MODE = 0o600
# Bump when the tables change; a file of another version is refused with a clear error.
SCHEMA_VERSION = 1
# WAL pages between checkpoints (SQLite's default is 1000). Each checkpoint copies pages into
# the main file and syncs it; doing that less often keeps commits cheap under steady writes,
# for a WAL of at most about 16 MiB (4 KiB pages).
WAL_AUTOCHECKPOINT_PAGES = 4000
# Page cache in KiB (negative = KiB in SQLite). The key index of ~100k objects fits, so an
# upsert does not re-read index pages; the values themselves are never read back.
PAGE_CACHE_KIB = 16 * 1024

_SCHEMA = """
CREATE TABLE objects (
    key TEXT PRIMARY KEY,
    revision INTEGER NOT NULL,
    value BLOB NOT NULL
);
CREATE TABLE events (
    revision INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    prev_value BLOB,
    time REAL NOT NULL
);
CREATE TABLE meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO meta (name, value) VALUES ('revision', 0);
"""

_UPSERT_OBJECT = (
    "INSERT INTO objects (key, revision, value) VALUES (?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET revision = excluded.revision, value = excluded.value"
)
_DELETE_OBJECT = "DELETE FROM objects WHERE key = ?"
_INSERT_EVENT = (
    "INSERT INTO events (revision, type, key, value, prev_value, time) VALUES (?, ?, ?, ?, ?, ?)"
)
_TRIM_EVENTS = "DELETE FROM events WHERE revision <= ?"
_SET_REVISION = "UPDATE meta SET value = ? WHERE name = 'revision'"

_EVENT_TYPES: dict[str, EventType] = {
    "ADDED": "ADDED",
    "MODIFIED": "MODIFIED",
    "DELETED": "DELETED",
}


@dataclass(frozen=True, slots=True)
class StoredState:
    """Everything read back from the file at open."""

    records: list[Record]
    revision: int
    events: list[tuple[WatchEvent, float]]


class SqliteFile:
    """An open storage file (see the module docstring)."""

    def __init__(
        self, path: str | Path, *, factory: type[sqlite3.Connection] = sqlite3.Connection
    ) -> None:
        self.path = Path(path)
        try:
            _make_private(self.path)
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,  # transactions are explicit: BEGIN ... COMMIT per batch
                timeout=0,  # the lock is exclusive: waiting for another holder would not help
                check_same_thread=False,  # opened here, then used by the writer thread only
                factory=factory,
            )
        except (sqlite3.Error, OSError) as exc:
            raise StorageOpenError(f"{self.path}: cannot open the storage file: {exc}") from exc
        try:
            self._configure()
            self._check_or_create_schema()
        except StorageOpenError:
            self._conn.close()
            raise
        except sqlite3.Error as exc:
            self._conn.close()
            raise StorageOpenError(self._describe(exc)) from exc

    def load(self) -> StoredState:
        """Read every object, the revision and the persisted history."""
        try:
            rows = self._conn.execute("SELECT key, revision, value FROM objects ORDER BY key")
            records = [Record(key, revision, value) for key, revision, value in rows]
            (revision,) = self._conn.execute(
                "SELECT value FROM meta WHERE name = 'revision'"
            ).fetchone()
            events = [
                (WatchEvent(_event_type(kind), key, rev, value, prev), at)
                for rev, kind, key, value, prev, at in self._conn.execute(
                    "SELECT revision, type, key, value, prev_value, time FROM events "
                    "ORDER BY revision"
                )
            ]
        except (sqlite3.Error, TypeError, ValueError) as exc:
            raise StorageOpenError(self._describe(exc)) from exc
        return StoredState(records, int(revision), events)

    def commit(self, changes: Sequence[Change], compacted_revision: int, now: float) -> None:
        """Write ``changes`` (in revision order) in one transaction; all or nothing."""
        final: dict[str, Record | None] = {}
        for change in changes:
            final[change.record.key] = None if change.event.type == "DELETED" else change.record
        upserts = [(r.key, r.revision, r.value) for r in final.values() if r is not None]
        deletes = [(key,) for key, r in final.items() if r is None]
        events = [
            (e.revision, e.type, e.key, e.value, e.prev_value, now)
            for e in (change.event for change in changes)
        ]
        conn = self._conn
        with _immediate_transaction(conn):
            if upserts:
                conn.executemany(_UPSERT_OBJECT, upserts)
            if deletes:
                conn.executemany(_DELETE_OBJECT, deletes)
            conn.executemany(_INSERT_EVENT, events)
            conn.execute(_TRIM_EVENTS, (compacted_revision,))
            conn.execute(_SET_REVISION, (changes[-1].record.revision,))

    def close(self) -> None:
        """Checkpoint the WAL into the main file and close."""
        try:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass  # the WAL stays and is replayed at the next open; nothing is lost
        finally:
            self._conn.close()

    def _configure(self) -> None:
        conn = self._conn
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise StorageOpenError(f"{self.path}: cannot switch the file to WAL mode ({mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")

    def _check_or_create_schema(self) -> None:
        conn = self._conn
        # Taking the write lock here makes a second opener fail now, not at its first write.
        with _immediate_transaction(conn):
            (application_id,) = conn.execute("PRAGMA application_id").fetchone()
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            (tables,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if application_id == 0 and version == 0 and tables == 0:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif application_id != APPLICATION_ID:
                raise StorageOpenError(
                    f"{self.path}: not a setpoint storage file "
                    f"(SQLite application_id {application_id:#x}, expected {APPLICATION_ID:#x})"
                )
            elif version != SCHEMA_VERSION:
                raise StorageOpenError(
                    f"{self.path}: storage schema version {version} is not supported "
                    f"(this setpoint reads version {SCHEMA_VERSION})"
                )

    def _describe(self, exc: BaseException) -> str:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return f"{self.path}: the storage file is in use by another process ({text})"
        if "readonly" in text or "read-only" in text:
            return f"{self.path}: the storage file cannot be written ({text})"
        return f"{self.path}: the storage file is corrupt or unreadable ({text})"


def _make_private(path: Path) -> None:
    """Create the file owner-only (0600) or make it so: it holds every Secret.

    SQLite gives the WAL and shared-memory files the mode of the database file.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            os.chmod(companion, FILE_MODE)


def _event_type(kind: str) -> EventType:
    try:
        return _EVENT_TYPES[kind]
    except KeyError:
        raise ValueError(f"unknown event type {kind!r} in the events table") from None


@contextmanager
def _immediate_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction taken at once: committed if the block ends, rolled back if it fails."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the original error is the one to report
        raise
