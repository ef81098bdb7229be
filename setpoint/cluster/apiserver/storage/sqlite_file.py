"""The SQLite file behind :class:`SqliteStorage`: schema, opening checks, loading, batch commits.

One connection, used by one thread at a time, and an exclusive lock (a second server on the
same file would hand out the same revisions, so it is refused).

**How a batch becomes durable.** The file is in WAL mode with ``synchronous=NORMAL`` and no
automatic checkpoints. :meth:`SqliteFile.write` commits a batch: SQLite appends its pages to
the ``-wal`` file, the last one marked as a commit, and returns without syncing (in WAL mode,
NORMAL differs from FULL only in that FULL syncs the WAL at every commit). The batch is then
made durable by one ``fdatasync`` of the WAL through our own descriptor of it (:meth:`sync`,
or :attr:`wal_fd` for a caller that has the kernel run it through Linux AIO): the sync FULL
would have made, taken out of the ``COMMIT`` so that it runs off the event loop while the
statements and the ``COMMIT`` stay on it. A batch counts as durable only once a sync that
started after its ``COMMIT`` returned; one sync covers every batch committed before it started.

Why that is as safe as FULL: every WAL frame carries a checksum chained from the WAL header's
salts, and recovery replays frames only up to the last valid commit frame. A crash before the
sync can lose the batches not yet synced (never acknowledged), never leave half of one; after
the sync the commit frame and everything before it are on disk (``fdatasync`` also writes the
file's new size). The other syncs are SQLite's own and NORMAL keeps them: the WAL before a
checkpoint copies it into the database, the database after, and the WAL header when the WAL is
started again after a checkpoint. Checkpoints run only from :meth:`SqliteFile.checkpoint`,
which the storage calls on its thread between batches once about :data:`CHECKPOINT_WAL_PAGES`
were written; it commits a small transaction right after, so that the header's sync happens
there too, not inside a batch's ``COMMIT`` on the loop. The directory is synced once the WAL
exists, so that the file's name is on disk too.

A failed ``fdatasync`` (EIO) leaves unknown what reached the disk (Linux may drop the unwritten
pages and report the error once): the storage treats it as fatal and commits nothing more (see
:class:`SqliteStorage`), and the close that follows skips its checkpoint (on Python 3.12+ also
SQLite's own at close; on 3.11 that one cannot be turned off, and starts with SQLite's own sync
of the WAL, which reports the same error on Linux).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
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
# WAL pages (estimated, see SqliteFile.write) past which the storage checkpoints (SQLite's
# automatic checkpoint would run at 1,000). Each checkpoint copies pages into the main file and
# syncs it; doing that less often keeps commits cheap under steady writes, for a WAL of the
# order of 16 MiB (4 KiB pages). After a checkpoint SQLite writes the WAL again from its start,
# over blocks the file already has: a sync of such writes changes no file metadata.
CHECKPOINT_WAL_PAGES = 4000
# The estimate: pages every transaction writes whatever it holds (a leaf of each table and of
# the key index, the meta row) plus one per this many bytes of rows.
_PAGES_PER_TRANSACTION = 4
_ROW_BYTES_PER_PAGE = 4000
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
# A real change (SQLite writes nothing for an update to the same value): the checkpoints made.
_COUNT_CHECKPOINT = (
    "INSERT INTO meta (name, value) VALUES ('checkpoints', 1) "
    "ON CONFLICT (name) DO UPDATE SET value = value + 1"
)

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
        self,
        path: str | Path,
        *,
        factory: type[sqlite3.Connection] = sqlite3.Connection,
        fdatasync: Callable[[int], None] = os.fdatasync,
    ) -> None:
        self.path = Path(path)
        self._wal_path = self.path.with_name(self.path.name + "-wal")
        self._fdatasync = fdatasync
        self._wal_fd: int | None = None
        self._wal_inode = 0
        self._wal_pages = 0  # written since the last checkpoint (estimated)
        self._closed = False
        try:
            _make_private(self.path)
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,  # transactions are explicit: BEGIN ... COMMIT per batch
                timeout=0,  # the lock is exclusive: waiting for another holder would not help
                check_same_thread=False,  # the event loop's thread and the file thread, in turn
                factory=factory,
            )
        except (sqlite3.Error, OSError) as exc:
            raise StorageOpenError(f"{self.path}: cannot open the storage file: {exc}") from exc
        try:
            self._configure()
            self._check_or_create_schema()
            self._open_wal()
        except StorageOpenError:
            self._close_files()
            raise
        except sqlite3.Error as exc:
            self._close_files()
            raise StorageOpenError(self._describe(exc)) from exc
        except OSError as exc:
            self._close_files()
            raise StorageOpenError(f"{self.path}: cannot open the storage file: {exc}") from exc

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
        """:meth:`write` then :meth:`sync`: ``changes`` are on disk when it returns."""
        self.write(changes, compacted_revision, now)
        self.sync()

    def write(self, changes: Sequence[Change], compacted_revision: int, now: float) -> None:
        """Commit ``changes`` (in revision order) in one transaction; all or nothing.

        Not yet durable: they are once a :meth:`sync` started after this returned has returned.
        """
        final: dict[str, Record | None] = {}
        for change in changes:
            final[change.record.key] = None if change.event.type == "DELETED" else change.record
        upserts = [(r.key, r.revision, r.value) for r in final.values() if r is not None]
        deletes = [(key,) for key, r in final.items() if r is None]
        events = [
            (e.revision, e.type, e.key, e.value, e.prev_value, now)
            for e in (change.event for change in changes)
        ]
        self._wal_pages += (
            _PAGES_PER_TRANSACTION
            + (
                sum(len(row[2]) for row in upserts)
                + sum(len(row[3]) + len(row[4] or b"") for row in events)
            )
            // _ROW_BYTES_PER_PAGE
        )
        conn = self._conn
        with _immediate_transaction(conn):
            if upserts:
                conn.executemany(_UPSERT_OBJECT, upserts)
            if deletes:
                conn.executemany(_DELETE_OBJECT, deletes)
            conn.executemany(_INSERT_EVENT, events)
            conn.execute(_TRIM_EVENTS, (compacted_revision,))
            conn.execute(_SET_REVISION, (changes[-1].record.revision,))

    def sync(self) -> None:
        """Make every committed batch durable: one ``fdatasync`` of the WAL. OSError if it fails.

        Releases the GIL for the whole call, so it may run on another thread while the next
        batch is written (it then covers that batch or not; only the next sync is sure to).
        """
        assert self._wal_fd is not None, "the WAL is opened with the file"
        self._fdatasync(self._wal_fd)

    @property
    def wal_fd(self) -> int:
        """Our descriptor of the WAL, for a caller that syncs it another way than :meth:`sync`."""
        assert self._wal_fd is not None, "the WAL is opened with the file"
        return self._wal_fd

    @property
    def needs_checkpoint(self) -> bool:
        """Whether the WAL has grown past :data:`CHECKPOINT_WAL_PAGES` since the last one."""
        return self._wal_pages >= CHECKPOINT_WAL_PAGES

    def checkpoint(self) -> None:
        """Copy the WAL into the main file and sync it; the WAL then starts again.

        Run between batches, never beside a :meth:`write`. Everything it copies was synced
        already; a failure leaves the WAL as it was (replayed at the next open), nothing lost.
        A small transaction (a count of checkpoints in the ``meta`` table) is committed right
        after, so that the sync of the new WAL header (SQLite's, at the first write into a
        restarted WAL) happens here too, not in the next batch's ``COMMIT``.
        """
        conn = self._conn
        (busy, _, _) = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        self._wal_pages = 0
        if not busy:
            with _immediate_transaction(conn):
                conn.execute(_COUNT_CHECKPOINT)
        self._open_wal()  # normally the same file; reopened only if it was replaced

    def close(self, *, checkpoint: bool = True) -> None:
        """Checkpoint the WAL into the main file (unless told not to) and close."""
        if self._closed:
            return
        self._closed = True
        try:
            if checkpoint:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass  # the WAL stays and is replayed at the next open; nothing is lost
        finally:
            self._close_files(checkpoint=checkpoint)

    def _open_wal(self) -> None:
        """Open our descriptor of the WAL (again if the file was replaced) and sync the directory.

        The WAL has no locks of SQLite's, so our descriptor of it can be opened and closed
        freely (closing one of the database file would drop SQLite's locks on it).
        """
        inode = os.stat(self._wal_path).st_ino
        if self._wal_fd is not None and inode == self._wal_inode:
            return
        fd = os.open(self._wal_path, os.O_RDONLY | os.O_CLOEXEC)
        if self._wal_fd is not None:
            os.close(self._wal_fd)
        self._wal_fd, self._wal_inode = fd, os.fstat(fd).st_ino
        directory = os.open(self.path.parent, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def _close_files(self, *, checkpoint: bool = True) -> None:
        try:
            if not checkpoint:
                _skip_checkpoint_on_close(self._conn)
            self._conn.close()
        finally:
            if self._wal_fd is not None:
                os.close(self._wal_fd)
                self._wal_fd = None

    def _configure(self) -> None:
        conn = self._conn
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise StorageOpenError(f"{self.path}: cannot switch the file to WAL mode ({mode})")
        # NORMAL: no sync inside COMMIT; sync() makes batches durable (module docstring).
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # checkpoint() runs them, off the loop
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


def _skip_checkpoint_on_close(conn: sqlite3.Connection) -> None:
    """Keep SQLite from checkpointing when the connection closes (Python 3.12 and later).

    After a failed sync the WAL may hold pages the disk never got; copying them into the
    database is not safe. On 3.11 there is no way to ask; SQLite's close-time checkpoint then
    starts with its own sync of the WAL, which reports the same error on Linux and stops it.
    """
    option = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)
    setconfig = getattr(conn, "setconfig", None)
    if option is not None and setconfig is not None:
        setconfig(option, True)
