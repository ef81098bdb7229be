"""The storage contract of the local API server: an etcd-like revisioned key-value store.

Every write gets the next value of one global, strictly increasing revision; that revision is
the object's ``metadata.resourceVersion``. Values are the objects' JSON bytes (kept as bytes so
that a stored object costs about its JSON size and a GET can answer without re-encoding).

Writes are synchronous and atomic with respect to the event loop (no ``await`` between the
check and the write), which is what gives optimistic concurrency its meaning here. A write is
acknowledged to a client only after ``await storage.wait_durable(record.revision)``; watchers
are notified of an event only once it is durable, in revision order.

Keys: ``/{group or "core"}/{resource}/{namespace}/{name}`` for namespaced objects and
``/{group or "core"}/{resource}/{name}`` for cluster-scoped ones. A list or a watch takes a
prefix that ends with ``/``.
"""

from __future__ import annotations

import abc
import builtins
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


class StorageError(Exception):
    """Base class of storage failures."""


class InvalidValueError(StorageError, ValueError):
    """A key or value given to the storage is malformed (the message names which and why)."""


class StorageClosedError(StorageError):
    """The storage was closed; no further calls are accepted."""


class StorageOpenError(StorageError):
    """A storage file cannot be opened: corrupt, unknown schema, or in use (names the file)."""


class CommitError(StorageError):
    """A write could not be made durable; it was rolled back and never became visible to watches."""


class ValueTooLargeError(StorageError):
    """A value above the size limit (etcd refuses requests above 1.5 MiB the same way)."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        super().__init__(
            f"etcdserver: request is too large ({key} would be {size} bytes, the limit is {limit})"
        )
        self.key = key
        self.size = size
        self.limit = limit


class KeyExistsError(StorageError):
    """A create found the key already present."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key already exists: {key}")
        self.key = key


class KeyNotFoundError(StorageError):
    """An update or delete found no value under the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"key not found: {key}")
        self.key = key


class RevisionConflictError(StorageError):
    """The stored revision is not the one the write expected (optimistic concurrency)."""

    def __init__(self, key: str, expected: int, actual: int) -> None:
        super().__init__(f"revision conflict on {key}: expected {expected}, found {actual}")
        self.key = key
        self.expected = expected
        self.actual = actual


class ExpiredError(StorageError):
    """The requested revision is older than the retained history window."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class WatchOverflowError(StorageError):
    """A watcher fell too far behind and its buffer overflowed; it must re-list."""


@dataclass(frozen=True, slots=True)
class Record:
    """One stored value: its key, the revision that last wrote it, and the object's JSON."""

    key: str
    revision: int
    value: bytes


@dataclass(frozen=True, slots=True)
class ReadTicket:
    """Taken just before a read: the revision it reads at and the commit failures seen so far.

    Pass it to :meth:`Storage.settled` before answering, so that no answer shows a write that
    is not durable (etcd never serves an uncommitted revision).
    """

    revision: int
    failures: int


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """A committed change. For DELETED, ``value`` is the last state stamped with its revision."""

    type: EventType
    key: str
    revision: int
    value: bytes
    prev_value: bytes | None


class Watch(abc.ABC):
    """A stream of committed events under a prefix, from a revision on, in revision order."""

    @abc.abstractmethod
    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        """Iterate events; raises :class:`WatchOverflowError` when the buffer overflowed."""

    @abc.abstractmethod
    def close(self) -> None:
        """Stop delivering events; the iterator ends."""

    def take_buffered(self) -> builtins.list[WatchEvent]:
        """The events already buffered after the one just iterated, taken without waiting.

        Lets a consumer send a burst in one write; the iterator goes on after them.
        """
        return []


class Storage(abc.ABC):
    """The interface both backends implement. See the module docstring for the rules."""

    @property
    @abc.abstractmethod
    def revision(self) -> int:
        """The newest committed revision (0 for an empty store)."""

    @property
    @abc.abstractmethod
    def oldest_revision(self) -> int:
        """The oldest revision a watch may start from; older ones raise :class:`ExpiredError`."""

    @abc.abstractmethod
    def get(self, key: str) -> Record | None:
        """The current value under ``key``, or None."""

    @abc.abstractmethod
    def list(
        self, prefix: str, *, start_after: str | None = None, limit: int | None = None
    ) -> list[Record]:
        """Current values whose key starts with ``prefix``, sorted by key, after ``start_after``."""

    @abc.abstractmethod
    def count(self, prefix: str, *, start_after: str | None = None) -> int:
        """How many keys start with ``prefix`` (only those after ``start_after`` when given)."""

    @abc.abstractmethod
    def create(self, key: str, obj: dict[str, Any]) -> Record:
        """Store a new object; sets ``metadata.resourceVersion``. Raises KeyExistsError."""

    @abc.abstractmethod
    def update(
        self, key: str, obj: dict[str, Any], *, expected_revision: int | None = None
    ) -> Record:
        """Replace an object; sets ``metadata.resourceVersion``.

        Raises KeyNotFoundError, or RevisionConflictError when ``expected_revision`` is given
        and differs from the stored one.
        """

    @abc.abstractmethod
    def delete(self, key: str, *, expected_revision: int | None = None) -> Record:
        """Remove an object; returns its last state stamped with the deletion's revision."""

    @abc.abstractmethod
    async def wait_durable(self, revision: int) -> None:
        """Return once ``revision`` (and every earlier one) is durable and announced to watchers."""

    def read_ticket(self, prefix: str | None = None) -> ReadTicket:
        """Take before a read whose answer must only show durable writes (see :meth:`settled`).

        With ``prefix``, for a read of only the keys under it: its revision may be lower
        (the durable one when no write under ``prefix`` is pending), so it waits for less.
        """
        return ReadTicket(self.revision, 0)

    async def settled(self, ticket: ReadTicket) -> bool:
        """Wait until every write a read taken at ``ticket`` may have seen is durable.

        False when one of them failed to commit instead (it was undone): the read may have
        shown it, so it must be made again. A backend whose writes are durable when they
        return answers True at once.
        """
        return True

    @abc.abstractmethod
    def watch(self, prefix: str, from_revision: int, *, buffer: int = 1000) -> Watch:
        """Events under ``prefix`` with revision > ``from_revision``.

        Raises ExpiredError if ``from_revision`` is older than the retained history.
        """

    def history(self, prefix: str, from_revision: int) -> builtins.list[WatchEvent]:
        """The retained events under ``prefix`` with revision > ``from_revision``, oldest first.

        Only events already announced to watchers. Raises ExpiredError like :meth:`watch`.
        """
        raise NotImplementedError(f"{type(self).__name__} keeps no history")

    @abc.abstractmethod
    async def close(self) -> None:
        """Flush and release everything; further calls are errors."""
