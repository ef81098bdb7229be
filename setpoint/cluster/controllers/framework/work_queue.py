"""A deduplicating work queue of object keys (client-go's ``workqueue``, rate limited).

A key added while queued is queued once; a key added while being processed is queued again
when its processing ends, so one key is never reconciled by two workers at once. Delayed adds
wait on the cluster clock; failures back off per key, exponentially, until :meth:`forget`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final, Generic, TypeVar

from setpoint.api.clock import SYSTEM_CLOCK, Clock, TimerHandle

#: Per-key failure backoff: 5 ms doubling up to 5 s (upstream's cap is 1000 s; a local
#: cluster should retry sooner).
BACKOFF_BASE_SECONDS: Final = 0.005
BACKOFF_MAX_SECONDS: Final = 5.0

K = TypeVar("K")


class WorkQueue(Generic[K]):
    """Keys waiting to be processed, each at most once, with delayed and backed-off adds."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK, retry_clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        # Back-off is machinery, not simulated time: it runs on real time even when the
        # cluster clock is a FakeClock (else a failed reconcile would wait for the test).
        self._retry_clock = retry_clock
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._failures: dict[K, int] = {}
        self._timers: dict[K, tuple[float, TimerHandle, Clock]] = {}
        self._wakeup = asyncio.Event()
        self._closed = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already waiting."""
        if self._closed or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._wakeup.set()

    def add_after(self, key: K, delay: float, *, clock: Clock | None = None) -> None:
        """Queue ``key`` after ``delay`` seconds of the clock (an earlier pending add wins)."""
        if delay <= 0:
            self.add(key)
            return
        clock = clock or self._clock
        due = clock.monotonic() + delay
        pending = self._timers.get(key)
        if pending is not None:
            if pending[0] <= due and pending[2] is clock:
                return
            pending[1].cancel()

        def fire() -> None:
            self._timers.pop(key, None)
            self.add(key)

        self._timers[key] = (due, clock.call_later(delay, fire), clock)

    def add_rate_limited(self, key: K) -> None:
        """Queue ``key`` after its backoff (which doubles with every call until forgotten)."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(
            key,
            min(BACKOFF_BASE_SECONDS * 2**failures, BACKOFF_MAX_SECONDS),
            clock=self._retry_clock,
        )

    def forget(self, key: K) -> None:
        """Reset the backoff of ``key`` (it was processed successfully)."""
        self._failures.pop(key, None)

    async def get(self) -> K:
        """The next key to process; call :meth:`done` with it afterwards."""
        while not self._queue:
            if self._closed:
                raise asyncio.CancelledError
            self._wakeup.clear()
            await self._wakeup.wait()
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: K) -> None:
        """End processing of ``key``; it is queued again if it was added meanwhile."""
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wakeup.set()

    def close(self) -> None:
        """Drop waiting timers; :meth:`get` ends once the queue is empty."""
        self._closed = True
        for _, timer, _ in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._wakeup.set()
