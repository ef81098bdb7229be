"""Watch delivery: a bounded buffer per watcher and a hub that routes events by key prefix.

Announcing never blocks and never waits for a reader: an event is appended to each matching
watcher's buffer, and a watcher whose buffer is full is dropped and told so (it must re-list).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable

from setpoint.cluster.apiserver.storage.base import (
    InvalidValueError,
    Watch,
    WatchEvent,
    WatchOverflowError,
)

# How many undelivered live events a watcher may hold before it is dropped as too slow. The
# server streams each event as soon as it is read, so a healthy watcher holds a handful.
DEFAULT_WATCH_BUFFER = 1000
# How many key directories the hub remembers the matching watchers of (a directory is a
# resource's root, or a namespace under it); past this the memo starts afresh.
ROUTE_MEMO_SIZE = 4096


class StorageWatch(Watch):
    """One watcher: replayed history first, then live events, each at most once and in order."""

    def __init__(
        self,
        prefix: str,
        from_revision: int,
        backlog: list[WatchEvent],
        *,
        buffer: int,
        on_close: Callable[[StorageWatch], None],
    ) -> None:
        if buffer < 1:
            raise InvalidValueError(f"buffer: must be at least 1, got {buffer}")
        self.prefix = prefix
        self.from_revision = backlog[-1].revision if backlog else from_revision
        self._queue: deque[WatchEvent] = deque(backlog)
        # The replayed history is already in memory (shared with the history window), so only
        # live events count against the watcher's buffer.
        self._capacity = buffer + len(backlog)
        # The consumer's wake-up: a bare future, set by the first event after it waits (an
        # asyncio.Event would cost a deque, a second coroutine and a loop lookup per wait).
        self._waiter: asyncio.Future[None] | None = None
        self._overflowed = False
        self._closed = False
        self._on_close = on_close

    @property
    def closed(self) -> bool:
        """True once closed by the consumer, by the storage, or by an overflow."""
        return self._closed

    def deliver(self, event: WatchEvent) -> bool:
        """Queue ``event``; False when the watcher is (now) closed and should be forgotten."""
        if self._closed:
            return False
        if event.revision <= self.from_revision:
            return True
        if len(self._queue) >= self._capacity:
            # Drop what is buffered at once: the consumer must re-list anyway, and a slow
            # watcher must not keep memory (or anyone else) waiting.
            self._overflowed = True
            self._closed = True
            self._queue.clear()
            self._wake()
            return False
        self._queue.append(event)
        if self._waiter is not None:
            self._wake()
        return True

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():  # a cancelled consumer's future is done already
                waiter.set_result(None)

    async def __aiter__(self) -> AsyncIterator[WatchEvent]:
        """Iterate events; raises :class:`WatchOverflowError` when the buffer overflowed."""
        queue = self._queue
        while True:
            if queue:
                yield queue.popleft()
                continue
            if self._overflowed:
                self._overflowed = False
                raise WatchOverflowError(
                    f"watch on {self.prefix!r} fell more than {self._capacity} events behind"
                )
            if self._closed:
                return
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                self._waiter = None

    def take_buffered(self) -> list[WatchEvent]:
        """The events already buffered, taken without waiting (in order)."""
        events = list(self._queue)
        self._queue.clear()
        return events

    def close(self) -> None:
        """Stop delivering events; the iterator ends after what is already buffered."""
        if not self._closed:
            self._closed = True
            self._wake()
            self._on_close(self)


class WatchHub:
    """Routes committed events to the watchers whose prefix matches the event's key."""

    def __init__(self) -> None:
        # Prefixes that end with "/" are ancestors of a key; finding them takes one dict lookup
        # per path segment. Any other prefix is rare and checked one by one.
        self._by_dir: dict[str, set[StorageWatch]] = {}
        self._by_other: dict[str, set[StorageWatch]] = {}
        # The watcher sets matching the keys of one directory (a key less its last segment):
        # every key of a directory has the same ancestors, so the walk over a key's segments
        # is done once per directory. Forgotten whenever a watcher comes or goes.
        self._routes: dict[str, list[set[StorageWatch]]] = {}

    def __len__(self) -> int:
        return sum(len(s) for s in self._by_dir.values()) + sum(
            len(s) for s in self._by_other.values()
        )

    def add(self, watcher: StorageWatch) -> None:
        """Start routing events to ``watcher``."""
        table = self._by_dir if _is_dir(watcher.prefix) else self._by_other
        table.setdefault(watcher.prefix, set()).add(watcher)
        self._routes.clear()

    def remove(self, watcher: StorageWatch) -> None:
        """Stop routing events to ``watcher`` (no error if it is not registered)."""
        table = self._by_dir if _is_dir(watcher.prefix) else self._by_other
        watchers = table.get(watcher.prefix)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del table[watcher.prefix]
                self._routes.clear()

    def announce(self, events: Iterable[WatchEvent]) -> None:
        """Deliver committed ``events`` (in revision order) to every matching watcher."""
        if not self._by_dir and not self._by_other:
            return
        dropped: list[StorageWatch] = []
        routes = self._routes
        for event in events:
            key = event.key
            directory = key[: key.rfind("/") + 1]
            matching = routes.get(directory)
            if matching is None:
                matching = self._matching(key)
                # A prefix that is not a directory may match some keys of a directory and
                # not others: while one is watched, no route is remembered.
                if not self._by_other:
                    if len(routes) >= ROUTE_MEMO_SIZE:
                        routes.clear()
                    routes[directory] = matching
            for watchers in matching:
                for watcher in watchers:
                    if not watcher.deliver(event):
                        dropped.append(watcher)
            if dropped:
                for watcher in dropped:
                    self.remove(watcher)
                dropped.clear()

    def close_all(self) -> None:
        """Close every watcher (their iterators end)."""
        everyone = [w for s in (*self._by_dir.values(), *self._by_other.values()) for w in s]
        for watcher in everyone:
            watcher.close()
        self._by_dir.clear()
        self._by_other.clear()
        self._routes.clear()

    def _matching(self, key: str) -> list[set[StorageWatch]]:
        found: list[set[StorageWatch]] = []
        by_dir = self._by_dir
        if by_dir:
            watchers = by_dir.get("")
            if watchers:
                found.append(watchers)
            slash = key.find("/")
            while slash != -1:
                watchers = by_dir.get(key[: slash + 1])
                if watchers:
                    found.append(watchers)
                slash = key.find("/", slash + 1)
        for prefix, watchers in self._by_other.items():
            if key.startswith(prefix):
                found.append(watchers)
        return found


def _is_dir(prefix: str) -> bool:
    return prefix == "" or prefix.endswith("/")
