"""One source of time for operators, the local cluster's controllers and the kubelet.

Everything that waits or timestamps reads a :class:`Clock`: ``now()`` for wall time (UTC,
aware), ``monotonic()`` for durations, ``sleep()`` and ``call_later()`` for waiting. The
default :data:`SYSTEM_CLOCK` is the real one. :class:`FakeClock` stands still until a test
calls :meth:`FakeClock.advance`, which fires every sleep and timer that fell due, in order,
on the event loop that registered it (so one fake clock can drive an operator and the local
cluster in another thread). A CronJob, a cnat schedule or a progress deadline is then tested
without sleeping.

This lives in ``setpoint.api`` because both sides use it: the runtime and the local cluster may
share one clock in a process, yet neither may import the other.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = ["SYSTEM_CLOCK", "Clock", "FakeClock", "SystemClock", "TimerHandle"]


@runtime_checkable
class TimerHandle(Protocol):
    """What :meth:`Clock.call_later` returns: a timer that can be cancelled."""

    def cancel(self) -> None: ...


@runtime_checkable
class Clock(Protocol):
    """A source of wall time, monotonic time and waiting."""

    def now(self) -> datetime:
        """The current wall time, timezone-aware, in UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards (for durations and deadlines)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time (a negative value waits for nothing)."""
        ...

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        """Call ``callback`` on the running event loop after ``delay`` seconds of this clock."""
        ...


class SystemClock:
    """The real clock: :func:`time.time`, :func:`time.monotonic` and the event loop's timers."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    # time.monotonic itself, not a method around it: work queues and timers read it per item.
    monotonic = staticmethod(time.monotonic)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback)

    def __repr__(self) -> str:
        return "SystemClock()"


SYSTEM_CLOCK: Clock = SystemClock()
"""The process-wide real clock; the default wherever a ``clock=`` argument is accepted."""


class _FakeTimer:
    __slots__ = ("_clock", "callback", "cancelled", "loop")

    def __init__(
        self, clock: FakeClock, loop: asyncio.AbstractEventLoop, callback: Callable[[], object]
    ) -> None:
        self._clock = clock
        self.loop = loop
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that moves only when told to: :meth:`advance` or :meth:`set`.

    ``start`` is the initial wall time (default: the real time now, to the second). Timers and
    sleeps registered from any event loop fire, in due order, when time reaches them; their
    callbacks run on the loop that registered them (thread-safe). Monotonic time starts at
    an arbitrary large value and moves with the wall time.
    """

    def __init__(self, start: datetime | None = None) -> None:
        if start is None:
            start = datetime.now(UTC).replace(microsecond=0)
        if start.tzinfo is None:
            raise ValueError("FakeClock start must be timezone-aware (e.g. tzinfo=UTC)")
        self._wall = start.astimezone(UTC)
        self._mono = 1_000_000.0
        self._lock = threading.Lock()
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._sequence = itertools.count()

    def now(self) -> datetime:
        with self._lock:
            return self._wall

    def monotonic(self) -> float:
        with self._lock:
            return self._mono

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        timer = _FakeTimer(self, asyncio.get_running_loop(), callback)
        with self._lock:
            due = self._mono + max(0.0, delay)
            heapq.heappush(self._timers, (due, next(self._sequence), timer))
        if delay <= 0:
            self._fire_due()
        return timer

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self.call_later(seconds, wake)
        try:
            await future
        finally:
            timer.cancel()

    def advance(self, seconds: float | timedelta) -> None:
        """Move time forward and fire every timer that falls due, earliest first."""
        step = seconds.total_seconds() if isinstance(seconds, timedelta) else float(seconds)
        if step < 0:
            raise ValueError(f"FakeClock cannot go backwards (advance({step}))")
        with self._lock:
            self._wall += timedelta(seconds=step)
            self._mono += step
        self._fire_due()

    def set(self, when: datetime) -> None:
        """Move wall time to ``when`` (never backwards) and fire what falls due."""
        if when.tzinfo is None:
            raise ValueError("FakeClock.set needs a timezone-aware datetime")
        self.advance((when - self.now()).total_seconds())

    def pending(self) -> int:
        """How many timers and sleeps are waiting (cancelled ones excluded)."""
        with self._lock:
            return sum(1 for _, _, timer in self._timers if not timer.cancelled)

    def next_due(self) -> float | None:
        """Seconds until the earliest pending timer, or ``None`` when nothing waits."""
        with self._lock:
            live = [due for due, _, timer in self._timers if not timer.cancelled]
            return max(0.0, min(live) - self._mono) if live else None

    def _fire_due(self) -> None:
        while True:
            with self._lock:
                if not self._timers or self._timers[0][0] > self._mono:
                    return
                _, _, timer = heapq.heappop(self._timers)
            if timer.cancelled or timer.loop.is_closed():
                continue
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is timer.loop:
                timer.loop.call_soon(timer.callback)
            else:
                timer.loop.call_soon_threadsafe(timer.callback)

    def __repr__(self) -> str:
        return f"FakeClock({self.now().isoformat()})"
