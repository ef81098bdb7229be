"""Revisioned key-value storage for the local API server (in-memory and SQLite backends).

The contract is in :mod:`.base`. Both backends share the same parts:

- :mod:`.keyspace_storage` serves reads, history and watches from memory for both;
- :mod:`.keyspace` holds the current objects (JSON bytes in a sorted map) and the write rules;
- :mod:`.codec` encodes objects (key order kept, ``metadata.resourceVersion`` stamped);
- :mod:`.history` keeps the recent events a watch may resume from;
- :mod:`.watch` delivers events to watchers through bounded buffers.

:class:`MemoryStorage` makes a write durable (for the process) when it returns.
:class:`SqliteStorage` adds a SQLite file (:mod:`.sqlite_file`) written by group commit, so
every write acknowledged through ``wait_durable`` survives a crash.
"""

from setpoint.cluster.apiserver.storage.base import (
    CommitError,
    EventType,
    ExpiredError,
    InvalidValueError,
    KeyExistsError,
    KeyNotFoundError,
    ReadTicket,
    Record,
    RevisionConflictError,
    Storage,
    StorageClosedError,
    StorageError,
    StorageOpenError,
    ValueTooLargeError,
    Watch,
    WatchEvent,
    WatchOverflowError,
)
from setpoint.cluster.apiserver.storage.memory import MemoryStorage
from setpoint.cluster.apiserver.storage.sqlite import SqliteStorage

__all__ = [
    "CommitError",
    "EventType",
    "ExpiredError",
    "InvalidValueError",
    "KeyExistsError",
    "KeyNotFoundError",
    "MemoryStorage",
    "ReadTicket",
    "Record",
    "RevisionConflictError",
    "SqliteStorage",
    "Storage",
    "StorageClosedError",
    "StorageError",
    "StorageOpenError",
    "ValueTooLargeError",
    "Watch",
    "WatchEvent",
    "WatchOverflowError",
]
