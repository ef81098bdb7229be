"""The retained window of committed events that lets a watch resume from a recent revision.

Like etcd after a compaction, the history remembers a *compacted revision*: every event at or
below it is gone, so a watch may start from that revision or later, never earlier.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable

from setpoint.cluster.apiserver.storage.base import ExpiredError, InvalidValueError, WatchEvent

# Enough for a few minutes of a busy development cluster; the events mostly share their bytes
# with the stored objects, so the cost is about one small object per event.
HISTORY_MAX_EVENTS = 10_000
# kube-apiserver compacts etcd every 5 minutes (--etcd-compaction-interval), so clients already
# expect to be able to resume from about that far back, and to re-list beyond it.
HISTORY_MAX_AGE_SECONDS = 300.0

Clock = Callable[[], float]


class EventHistory:
    """The last committed events, bounded by count and by age, in revision order."""

    def __init__(
        self,
        *,
        compacted_revision: int = 0,
        max_events: int = HISTORY_MAX_EVENTS,
        max_age: float = HISTORY_MAX_AGE_SECONDS,
        clock: Clock = time.time,
    ) -> None:
        if max_events < 1:
            raise InvalidValueError(f"history max_events: must be at least 1, got {max_events}")
        if max_age <= 0:
            raise InvalidValueError(f"history max_age: must be positive, got {max_age}")
        self._events: deque[WatchEvent] = deque()
        self._times: deque[float] = deque()
        self._compacted = compacted_revision
        self._max_events = max_events
        self._max_age = max_age
        self._clock = clock

    @property
    def compacted_revision(self) -> int:
        """Events at or below this revision are no longer retained (the oldest watch start)."""
        self._trim()
        return self._compacted

    def __len__(self) -> int:
        return len(self._events)

    def extend(self, events: Iterable[WatchEvent], at: float | None = None) -> None:
        """Append committed events (in revision order), recorded at time ``at`` (default: now)."""
        now = self._clock() if at is None else at
        for event in events:
            self._events.append(event)
            self._times.append(now)
        # The clock just read serves the age cut too (a write per event reads it once).
        self._trim(now if at is None else None)

    def events(self) -> list[tuple[WatchEvent, float]]:
        """The retained events with the time each was recorded, oldest first."""
        self._trim()
        return list(zip(self._events, self._times, strict=True))

    def since(self, from_revision: int, prefix: str) -> list[WatchEvent]:
        """Retained events after ``from_revision`` under ``prefix``; ExpiredError if too old."""
        if from_revision < 0:
            raise InvalidValueError(f"from_revision: must not be negative, got {from_revision}")
        self._trim()
        if from_revision < self._compacted:
            raise ExpiredError(from_revision, self._compacted)
        newer: list[WatchEvent] = []
        # Walk back from the newest: a resuming watcher is usually only a little behind.
        for event in reversed(self._events):
            if event.revision <= from_revision:
                break
            if event.key.startswith(prefix):
                newer.append(event)
        newer.reverse()
        return newer

    def _trim(self, now: float | None = None) -> None:
        events, times = self._events, self._times
        while len(events) > self._max_events:
            times.popleft()
            self._compacted = events.popleft().revision
        if times:
            cutoff = (self._clock() if now is None else now) - self._max_age
            while times and times[0] < cutoff:
                times.popleft()
                self._compacted = events.popleft().revision
