"""What both backends share: reads, history and watches served from the in-memory view.

Both keep the current objects in a :class:`Keyspace`, the recent events in an
:class:`EventHistory` and the open watches in a :class:`WatchHub`; they differ only in how a
write becomes durable (at once in memory; by group commit to SQLite) and in how they close.
"""

from __future__ import annotations

import abc
import builtins

from setpoint.cluster.apiserver.storage.base import Record, Storage, Watch, WatchEvent
from setpoint.cluster.apiserver.storage.history import EventHistory
from setpoint.cluster.apiserver.storage.keyspace import Keyspace
from setpoint.cluster.apiserver.storage.watch import DEFAULT_WATCH_BUFFER, StorageWatch, WatchHub


class KeyspaceStorage(Storage, abc.ABC):
    """A :class:`Storage` whose reads and watches come from memory; subclasses write."""

    _keyspace: Keyspace
    _history: EventHistory
    _hub: WatchHub

    @abc.abstractmethod
    def _check_open(self) -> None:
        """Raise StorageClosedError once the storage is closed."""

    @property
    def revision(self) -> int:
        """The newest revision handed out (visible to reads; durable once awaited)."""
        return self._keyspace.revision

    @property
    def oldest_revision(self) -> int:
        """The oldest revision a watch may start from."""
        return self._history.compacted_revision

    def __len__(self) -> int:
        return len(self._keyspace)

    def get(self, key: str) -> Record | None:
        """The current value under ``key``, or None."""
        self._check_open()
        return self._keyspace.get(key)

    def list(
        self, prefix: str, *, start_after: str | None = None, limit: int | None = None
    ) -> builtins.list[Record]:
        """Current values whose key starts with ``prefix``, sorted by key, after ``start_after``."""
        self._check_open()
        return self._keyspace.list(prefix, start_after=start_after, limit=limit)

    def count(self, prefix: str, *, start_after: str | None = None) -> int:
        """How many keys start with ``prefix`` (only those after ``start_after`` when given)."""
        self._check_open()
        return self._keyspace.count(prefix, start_after=start_after)

    def history(self, prefix: str, from_revision: int) -> builtins.list[WatchEvent]:
        """The retained events under ``prefix`` with revision > ``from_revision``, oldest first."""
        self._check_open()
        return self._history.since(from_revision, prefix)

    def watch(
        self, prefix: str, from_revision: int, *, buffer: int = DEFAULT_WATCH_BUFFER
    ) -> Watch:
        """Events under ``prefix`` with revision > ``from_revision`` (announced events only)."""
        self._check_open()
        backlog = self._history.since(from_revision, prefix)
        watcher = StorageWatch(
            prefix, from_revision, backlog, buffer=buffer, on_close=self._hub.remove
        )
        self._hub.add(watcher)
        return watcher
