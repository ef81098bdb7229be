"""Revisioned key-value storage for the local API server (in-memory and SQLite backends).

The contract is in :mod:`.base`; :class:`MemoryStorage` keeps everything in the process and
:class:`SqliteStorage` makes every acknowledged write survive a crash.
"""

from setpoint.cluster.apiserver.storage.base import (
    CommitError,
    EventType,
    ExpiredError,
    InvalidValueError,
    KeyExistsError,
    KeyNotFoundError,
    Record,
    RevisionConflictError,
    Storage,
    StorageClosedError,
    StorageError,
    StorageOpenError,
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
    "Record",
    "RevisionConflictError",
    "SqliteStorage",
    "Storage",
    "StorageClosedError",
    "StorageError",
    "StorageOpenError",
    "Watch",
    "WatchEvent",
    "WatchOverflowError",
]
