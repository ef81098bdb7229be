"""The in-memory backend: every write is durable (for the life of the process) when it returns.

Objects are kept only as their JSON bytes in a sorted map, so a stored object costs about its
JSON size plus a small fixed overhead, and lists are O(log n + k).
"""

from __future__ import annotations

import time
from typing import Any

from setpoint.cluster.apiserver.storage.base import (
    InvalidValueError,
    Record,
    StorageClosedError,
)
from setpoint.cluster.apiserver.storage.history import (
    HISTORY_MAX_AGE_SECONDS,
    HISTORY_MAX_EVENTS,
    Clock,
    EventHistory,
)
from setpoint.cluster.apiserver.storage.keyspace import Change, Keyspace, check_issued
from setpoint.cluster.apiserver.storage.keyspace_storage import KeyspaceStorage
from setpoint.cluster.apiserver.storage.watch import WatchHub


class MemoryStorage(KeyspaceStorage):
    """A revisioned key-value store held in memory; lost when the process ends."""

    def __init__(
        self,
        *,
        history_max_events: int = HISTORY_MAX_EVENTS,
        history_max_age: float = HISTORY_MAX_AGE_SECONDS,
        clock: Clock = time.time,
        start_revision: int = 0,
    ) -> None:
        if start_revision < 0:
            raise InvalidValueError(f"start_revision: must not be negative, got {start_revision}")
        self._keyspace = Keyspace(revision=start_revision)
        # Nothing before the start can be watched from: a revision of an earlier incarnation
        # gets 410 Expired, and its holder relists.
        self._history = EventHistory(
            compacted_revision=start_revision,
            max_events=history_max_events,
            max_age=history_max_age,
            clock=clock,
        )
        self._hub = WatchHub()
        self._closed = False

    def create(self, key: str, obj: dict[str, Any]) -> Record:
        """Store a new object; sets ``metadata.resourceVersion``. Raises KeyExistsError."""
        self._check_open()
        return self._commit(self._keyspace.create(key, obj))

    def update(
        self, key: str, obj: dict[str, Any], *, expected_revision: int | None = None
    ) -> Record:
        """Replace an object; sets ``metadata.resourceVersion``."""
        self._check_open()
        return self._commit(self._keyspace.update(key, obj, expected_revision=expected_revision))

    def delete(self, key: str, *, expected_revision: int | None = None) -> Record:
        """Remove an object; returns its last state stamped with the deletion's revision."""
        self._check_open()
        return self._commit(self._keyspace.delete(key, expected_revision=expected_revision))

    async def wait_durable(self, revision: int) -> None:
        """Return at once: a write in memory is durable and announced when it returns."""
        self._check_open()
        check_issued(revision, self._keyspace.revision)

    async def close(self) -> None:
        """Close every watch and refuse further calls."""
        if not self._closed:
            self._closed = True
            self._hub.close_all()

    def _commit(self, change: Change) -> Record:
        self._history.extend((change.event,))
        self._hub.announce((change.event,))
        return change.record

    def _check_open(self) -> None:
        if self._closed:
            raise StorageClosedError("the storage is closed")
