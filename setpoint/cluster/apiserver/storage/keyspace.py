"""The current objects by key, kept sorted, and the write rules shared by both backends.

A :class:`Keyspace` knows nothing of durability or watchers: each write returns a
:class:`Change` (the new record, the event to announce, and what to restore on rollback), and
the backend decides when the change is durable and announced.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from sortedcontainers import SortedDict  # type: ignore[import-untyped]

from setpoint.cluster.apiserver.storage.base import (
    InvalidValueError,
    KeyExistsError,
    KeyNotFoundError,
    Record,
    RevisionConflictError,
    ValueTooLargeError,
    WatchEvent,
)
from setpoint.cluster.apiserver.storage.codec import encode_object, restamp

_MAX_CHAR = chr(0x10FFFF)
#: The largest stored value: etcd's default ``--max-request-bytes`` (1.5 MiB).
MAX_VALUE_BYTES = 1536 * 1024


@dataclass(frozen=True, slots=True)
class Change:
    """One write: the record it returns, its event, and the record it replaced (None if none)."""

    record: Record
    event: WatchEvent
    previous: Record | None


def check_key(key: str) -> None:
    """Raise :class:`InvalidValueError` unless ``key`` looks like ``/group/resource/.../name``."""
    if not isinstance(key, str) or not key.startswith("/") or key.endswith("/") or len(key) < 2:
        raise InvalidValueError(
            f"key: must be a string that starts with '/' and does not end with '/', got {key!r}"
        )
    if "//" in key:
        # An empty segment is a missing namespace or name: a bug upstream, caught here.
        raise InvalidValueError(f"key: must not contain an empty segment, got {key!r}")


def check_issued(revision: int, newest: int) -> None:
    """Raise :class:`InvalidValueError` for a revision no write has been given yet."""
    if revision > newest:
        raise InvalidValueError(
            f"revision: {revision} has not been written yet (the newest is {newest})"
        )


def prefix_upper_bound(prefix: str) -> str | None:
    """The least string above all strings that start with ``prefix`` (None: unbounded)."""
    stem = prefix.rstrip(_MAX_CHAR)  # a maximal last character cannot be incremented
    if not stem:
        return None
    return stem[:-1] + chr(ord(stem[-1]) + 1)


def _checked_size(key: str, value: bytes) -> bytes:
    if len(value) > MAX_VALUE_BYTES:
        raise ValueTooLargeError(key, len(value), MAX_VALUE_BYTES)
    return value


class Keyspace:
    """Current values by key (a sorted map of :class:`Record`) plus the global revision counter."""

    def __init__(self, records: Iterable[Record] = (), *, revision: int = 0) -> None:
        self._records: SortedDict = SortedDict((r.key, r) for r in records)
        self._revision = revision

    @property
    def revision(self) -> int:
        """The revision of the newest write (failed writes keep their numbers: never reused)."""
        return self._revision

    def __len__(self) -> int:
        return len(self._records)

    def get(self, key: str) -> Record | None:
        """The current record under ``key``, or None."""
        record: Record | None = self._records.get(key)
        return record

    def list(
        self, prefix: str, *, start_after: str | None = None, limit: int | None = None
    ) -> list[Record]:
        """Records whose key starts with ``prefix``, by key, after ``start_after``; O(log n + k)."""
        if limit is not None and limit < 0:
            raise InvalidValueError(f"limit: must not be negative, got {limit}")
        upper = prefix_upper_bound(prefix)
        if start_after is not None and start_after >= prefix:
            keys = self._records.irange(start_after, upper, inclusive=(False, False))
        else:
            keys = self._records.irange(prefix, upper, inclusive=(True, False))
        if limit is not None:
            keys = islice(keys, limit)
        records = self._records
        return [records[k] for k in keys]

    def count(self, prefix: str, *, start_after: str | None = None) -> int:
        """How many keys start with ``prefix``, after ``start_after`` when given; O(log n)."""
        upper = prefix_upper_bound(prefix)
        records = self._records
        if start_after is not None and start_after >= prefix:
            lo = records.bisect_right(start_after)
        else:
            lo = records.bisect_left(prefix)
        hi = len(records) if upper is None else records.bisect_left(upper)
        return int(hi - lo)

    def create(self, key: str, obj: dict[str, Any]) -> Change:
        """Store a new object under the next revision."""
        check_key(key)
        if key in self._records:
            raise KeyExistsError(key)
        revision = self._revision + 1
        value = _checked_size(key, encode_object(key, obj, revision))
        record = Record(key, revision, value)
        self._records[key] = record
        self._revision = revision
        return Change(record, WatchEvent("ADDED", key, revision, value, None), None)

    def update(self, key: str, obj: dict[str, Any], *, expected_revision: int | None) -> Change:
        """Replace the object under ``key`` (optionally only if it is at ``expected_revision``)."""
        check_key(key)
        previous = self._current(key, expected_revision)
        revision = self._revision + 1
        value = _checked_size(key, encode_object(key, obj, revision))
        record = Record(key, revision, value)
        self._records[key] = record
        self._revision = revision
        event = WatchEvent("MODIFIED", key, revision, value, previous.value)
        return Change(record, event, previous)

    def delete(self, key: str, *, expected_revision: int | None) -> Change:
        """Remove the object under ``key``; the record is its last state at the new revision."""
        check_key(key)
        previous = self._current(key, expected_revision)
        revision = self._revision + 1
        value = restamp(key, previous.value, revision)
        del self._records[key]
        self._revision = revision
        record = Record(key, revision, value)
        event = WatchEvent("DELETED", key, revision, value, previous.value)
        return Change(record, event, previous)

    def undo(self, change: Change) -> None:
        """Restore what ``change`` replaced (undo newest first). The revision is not rewound."""
        if change.previous is None:
            self._records.pop(change.record.key, None)
        else:
            self._records[change.record.key] = change.previous

    def _current(self, key: str, expected_revision: int | None) -> Record:
        record: Record | None = self._records.get(key)
        if record is None:
            raise KeyNotFoundError(key)
        if expected_revision is not None and record.revision != expected_revision:
            raise RevisionConflictError(key, expected_revision, record.revision)
        return record
