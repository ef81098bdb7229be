"""The work queue between event handlers and reconcile workers.

It is a set plus a FIFO per priority, with client-go's guarantees:

- **dedup**: a key added many times before a worker takes it is handed out once;
- **exclusive**: a key being processed (between ``get`` and ``done``) is never handed to a second
  worker; if it is added meanwhile it is queued again when ``done`` is called;
- **delays**: ``add_after`` holds a key until its time comes (the earliest request wins);
- **backoff**: ``add_rate_limited`` asks the rate limiter how long to wait (per-key exponential by
  default), ``forget`` resets that after a success;
- **priorities** (controller-runtime's priority queue): ``add(key, priority=PRIORITY_LOW)`` for
  keys from an initial list or a resync, the default ``PRIORITY_NORMAL`` for events and explicit
  adds; a key queued at a lower priority moves up when added at a higher one. Higher priorities
  are handed out first, so a fresh change is not stuck behind a restart's backlog; **aging**
  prevents starvation: once the oldest lower-priority key has waited ``aging`` seconds, every
  other ``get`` serves the oldest waiting key regardless of priority;
- **shutdown**: ``shut_down`` refuses new adds; ``get`` keeps handing out what is queued and then
  raises :class:`QueueShutDown`; ``shut_down_with_drain`` also waits for in-flight keys.

It is built for one event loop (not thread-safe) and for speed: a deque per priority, two
dicts, one timer for all delayed keys (on the queue's :class:`~setpoint.api.clock.Clock`, so a
``FakeClock`` drives delays in tests), and no task per item. Metrics are plain counters read at
scrape time (see :mod:`setpoint.controller.metrics`).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from setpoint.api.clock import SYSTEM_CLOCK, Clock, TimerHandle
from setpoint.controller.metrics import WorkQueueStats, register_queue
from setpoint.controller.rate_limiters import RateLimiter, default_controller_rate_limiter

__all__ = ["DEFAULT_AGING", "PRIORITY_LOW", "PRIORITY_NORMAL", "QueueShutDown", "WorkQueue"]

K = TypeVar("K", bound=Hashable)

#: Events and explicit adds.
PRIORITY_NORMAL = 0
#: Keys from an initial list or a periodic resync (controller-runtime's ``LowPriority``).
PRIORITY_LOW = -100
#: Once the oldest lower-priority key has waited this long, it gets every other turn: a backlog
#: still drains while fresh events keep arriving (controller-runtime #3496 is the starvation
#: this avoids), and a fresh event waits behind at most one aged key.
DEFAULT_AGING = 2.0


class QueueShutDown(Exception):
    """Raised by ``get`` once the queue is shut down and nothing is left to hand out."""


class WorkQueue(Generic[K]):
    """A deduplicating, rate-limited, delaying work queue for asyncio workers.

    ``name`` (and ``controller``) label the queue's Prometheus metrics; unnamed queues export none.
    ``rate_limiter`` defaults to per-key exponential backoff, 5 ms to 1000 s. ``clock`` is a
    :class:`~setpoint.api.clock.Clock` (default: the system clock) whose timers release delayed
    keys, so ``FakeClock.advance()`` fires them; a bare monotonic function is also accepted
    (then the owner calls :meth:`release_due`). ``aging``: see the module docs.
    """

    def __init__(
        self,
        name: str = "",
        *,
        controller: str = "",
        rate_limiter: RateLimiter | None = None,
        clock: Clock | Callable[[], float] = SYSTEM_CLOCK,
        aging: float = DEFAULT_AGING,
    ) -> None:
        self.name = name
        self.rate_limiter: RateLimiter = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter()
        )
        self._timers: Clock | None
        if isinstance(clock, Clock):
            self._timers = clock
            self._clock: Callable[[], float] = clock.monotonic
        else:
            self._timers = None
            self._clock = clock
        self.aging = aging
        # priority -> FIFO of (sequence, key); an entry is live while _dirty[key] has its
        # sequence and the key is not in flight (a re-add at a higher priority or a done()
        # appends a new entry and leaves the old one stale).
        self._tiers: dict[int, deque[tuple[int, K]]] = {}
        self._priorities: list[int] = []  # the keys of _tiers, highest first
        self._queued = 0  # live entries
        self._serve_oldest_next = False
        # Keys that need processing -> (when added, priority, sequence of their live entry).
        self._dirty: dict[K, tuple[float, int, int]] = {}
        # Keys handed to a worker and not yet done -> when processing started.
        self._processing: dict[K, float] = {}
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._shutting_down = False
        # Delayed keys: key -> (ready time, sequence); the heap may hold stale entries that a
        # later, earlier-ready add_after superseded; the sequence number tells them apart.
        self._delayed: dict[K, tuple[float, int]] = {}
        self._heap: list[tuple[float, int, K]] = []
        self._sequence = itertools.count()
        self._timer: asyncio.TimerHandle | TimerHandle | None = None
        self._timer_ready = 0.0
        self._stats: WorkQueueStats | None = None
        #: How long the key ``get`` handed out last had waited (0 for an unnamed queue).
        self.last_wait = 0.0
        if name:
            self._stats = WorkQueueStats(
                name, controller, self._metrics_snapshot, self.depth_by_priority
            )
            register_queue(self._stats)

    # -- adding ---------------------------------------------------------------------------------

    def add(self, key: K, priority: int = PRIORITY_NORMAL) -> None:
        """Queue ``key`` unless it is already waiting (a higher ``priority`` moves it up);
        ignored after shutdown."""
        if self._shutting_down:
            return
        dirty = self._dirty
        current = dirty.get(key)
        if current is not None:
            if priority <= current[1]:
                return
            # Move it up: the old entry goes stale; the key keeps its original add time.
            sequence = next(self._sequence)
            dirty[key] = (current[0], priority, sequence)
            if key not in self._processing:
                self._tier(priority).append((sequence, key))
            return
        stats = self._stats
        added = 0.0
        if stats is not None:
            stats.adds += 1
            added = self._clock()
        elif self.aging < float("inf"):
            added = self._clock()
        sequence = next(self._sequence)
        dirty[key] = (added, priority, sequence)
        if key in self._processing:
            return  # queued again by done()
        tier = self._tiers.get(priority)
        if tier is None:
            tier = self._tier(priority)
        tier.append((sequence, key))
        self._queued += 1
        if self._waiters:
            self._wake_one()

    def _tier(self, priority: int) -> deque[tuple[int, K]]:
        tier = self._tiers.get(priority)
        if tier is None:
            tier = self._tiers[priority] = deque()
            self._priorities = sorted(self._tiers, reverse=True)
        return tier

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds (now when <= 0); a pending earlier delayed add of
        it wins."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        if delay != delay or delay == float("inf"):
            raise ValueError(f"add_after: delay must be a finite number of seconds, got {delay!r}")
        ready = self._clock() + delay
        current = self._delayed.get(key)
        if current is not None and current[0] <= ready:
            return
        sequence = next(self._sequence)
        self._delayed[key] = (ready, sequence)
        heapq.heappush(self._heap, (ready, sequence, key))
        self._schedule(ready)

    def add_rate_limited(self, key: K) -> float | None:
        """Add ``key`` after the delay its rate limiter assigns (one more failure on record);
        that delay (None after shutdown)."""
        if self._shutting_down:
            return None
        if self._stats is not None:
            self._stats.retries += 1
        delay = self.rate_limiter.when(key)
        self.add_after(key, delay)
        return delay

    def forget(self, key: K) -> None:
        """Clear ``key``'s backoff history (call after it was processed successfully)."""
        self.rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """How many rate-limited re-adds of ``key`` are on record since the last ``forget``."""
        return self.rate_limiter.num_requeues(key)

    # -- taking ---------------------------------------------------------------------------------

    def get_nowait(self) -> K:
        """Take the next key, or raise ``asyncio.QueueEmpty`` / :class:`QueueShutDown`."""
        if not self._queued:
            if self._shutting_down:
                raise QueueShutDown(f"work queue {self.name!r} is shut down")
            raise asyncio.QueueEmpty
        key, added = self._pop()
        self._queued -= 1
        if self._stats is not None:
            now = self._clock()
            self.last_wait = wait = now - added
            self._stats.queue_duration.observe(wait)
            self._processing[key] = now
        else:
            self._processing[key] = 0.0
        return key

    def _pop(self) -> tuple[K, float]:
        """The next live key by priority, aging, then FIFO; removes it from ``_dirty``."""
        if len(self._priorities) == 1:
            # One priority in use (the steady state): a FIFO, skipping stale entries.
            tier = self._tiers[self._priorities[0]]
            dirty, processing = self._dirty, self._processing
            while True:
                sequence, key = tier.popleft()
                current = dirty.get(key)
                if current is not None and current[2] == sequence and key not in processing:
                    del dirty[key]
                    return key, current[0]
        tiers = [self._tiers[p] for p in self._priorities]
        for tier in tiers:
            self._drop_stale(tier)
        live = [tier for tier in tiers if tier]
        chosen = live[0]
        if len(live) > 1:
            if self._serve_oldest_next:
                oldest = min(live[1:], key=lambda tier: self._dirty[tier[0][1]][0])
                if self._clock() - self._dirty[oldest[0][1]][0] >= self.aging:
                    chosen = oldest
                self._serve_oldest_next = False
            else:
                self._serve_oldest_next = True
        _, key = chosen.popleft()
        added = self._dirty.pop(key)[0]
        return key, added

    def _drop_stale(self, tier: deque[tuple[int, K]]) -> None:
        dirty = self._dirty
        processing = self._processing
        while tier:
            sequence, key = tier[0]
            current = dirty.get(key)
            if current is not None and current[2] == sequence and key not in processing:
                return
            tier.popleft()

    async def get(self) -> K:
        """Wait for and take the next key; raises :class:`QueueShutDown` once shut down and empty.

        The caller owns the key until it calls :meth:`done` with it.
        """
        while not self._queued:
            if self._shutting_down:
                raise QueueShutDown(f"work queue {self.name!r} is shut down")
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                # If we were woken and are cancelled before taking the key, pass the wake-up on.
                if waiter.done() and not waiter.cancelled() and self._queued:
                    self._wake_one()
                raise
        return self.get_nowait()

    def done(self, key: K) -> None:
        """Mark ``key`` as processed; if it was added meanwhile it is queued again now."""
        started = self._processing.pop(key, None)
        if started is None:
            return  # not in flight: done() is idempotent, as in client-go
        if self._stats is not None:
            self._stats.work_duration.observe(self._clock() - started)
        current = self._dirty.get(key)
        if current is not None:
            self._tier(current[1]).append((current[2], key))
            self._queued += 1
            if self._waiters:
                self._wake_one()
        elif self._drain_waiters and not self._processing and not self._queued:
            self._resolve_drain_waiters()

    # -- shutting down --------------------------------------------------------------------------

    def shut_down(self) -> None:
        """Refuse new adds, drop delayed keys, and let ``get`` raise once the queue is empty."""
        if self._shutting_down:
            return
        self._shutting_down = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._delayed.clear()
        self._heap.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        if not self._processing and not self._queued:
            self._resolve_drain_waiters()

    async def shut_down_with_drain(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 - mirrors client-go's drain deadline
    ) -> None:
        """Shut down, then wait until every queued and in-flight key is done.

        Raises ``TimeoutError`` if that takes longer than ``timeout`` seconds.
        """
        self.shut_down()
        if not self._processing and not self._queued:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._drain_waiters.append(waiter)
        try:
            async with asyncio.timeout(timeout):
                await waiter
        finally:
            if waiter in self._drain_waiters:
                self._drain_waiters.remove(waiter)

    @property
    def shutting_down(self) -> bool:
        """True once :meth:`shut_down` was called."""
        return self._shutting_down

    # -- introspection --------------------------------------------------------------------------

    def __len__(self) -> int:
        """Keys waiting to be handed out (the ``workqueue_depth`` metric)."""
        return self._queued

    def depth_by_priority(self) -> dict[int, int]:
        """Keys waiting to be handed out, per priority (``workqueue_depth{priority}``)."""
        counts = dict.fromkeys(self._tiers, 0)
        counts.setdefault(PRIORITY_NORMAL, 0)
        for key, (_, priority, _) in list(self._dirty.items()):
            if key not in self._processing:
                counts[priority] = counts.get(priority, 0) + 1
        return counts

    def oldest_wait(self) -> float | None:
        """Seconds the longest-waiting queued key has waited (None when none waits; keys of
        an unnamed queue carry no add time)."""
        processing = self._processing
        added = [when for key, (when, _, _) in list(self._dirty.items()) if key not in processing]
        return self._clock() - min(added) if added else None

    def delayed_keys(self) -> list[tuple[K, float]]:
        """The keys waiting for their ``add_after`` time, with the seconds left."""
        now = self._clock()
        return [(key, max(0.0, ready - now)) for key, (ready, _) in list(self._delayed.items())]

    @property
    def in_flight(self) -> int:
        """Keys handed out and not yet done."""
        return len(self._processing)

    @property
    def delayed(self) -> int:
        """Keys waiting for their ``add_after`` time."""
        return len(self._delayed)

    def is_processing(self, key: K) -> bool:
        """True while ``key`` is between ``get`` and ``done``."""
        return key in self._processing

    def is_queued(self, key: K) -> bool:
        """True when ``key`` will be handed out (again) by ``get``."""
        return key in self._dirty

    # -- delayed adds ---------------------------------------------------------------------------

    def release_due(self) -> int:
        """Add every delayed key whose time has come; returns how many were added.

        The queue's timer calls this; it is public so code driving a fake clock can too.
        """
        now = self._clock()
        heap = self._heap
        released = 0
        while heap and heap[0][0] <= now:
            _, sequence, key = heapq.heappop(heap)
            current = self._delayed.get(key)
            if current is None or current[1] != sequence:
                continue  # superseded by an earlier add_after
            del self._delayed[key]
            self.add(key)
            released += 1
        return released

    def _schedule(self, ready: float) -> None:
        if self._timer is not None and self._timer_ready <= ready:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (synchronous use): release_due() must be called by the owner
        if self._timer is not None:
            self._timer.cancel()
        self._timer_ready = ready
        delay = max(0.0, ready - self._clock())
        if self._timers is not None:
            self._timer = self._timers.call_later(delay, self._on_timer)
        else:
            self._timer = loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.release_due()
        heap = self._heap
        while heap:
            ready, sequence, key = heap[0]
            current = self._delayed.get(key)
            if current is not None and current[1] == sequence:
                self._schedule(ready)
                return
            heapq.heappop(heap)  # stale entry

    # -- internals ------------------------------------------------------------------------------

    def _wake_one(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _resolve_drain_waiters(self) -> None:
        for waiter in self._drain_waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._drain_waiters.clear()

    def _metrics_snapshot(self) -> tuple[int, float, float]:
        # Called at scrape time, possibly from another thread: copy the start times in one C
        # call (atomic under the GIL) before iterating, as the loop may change the dict.
        starts = list(self._processing.values())
        if not starts:
            return self._queued, 0.0, 0.0
        now = self._clock()
        return self._queued, sum(now - started for started in starts), now - min(starts)
