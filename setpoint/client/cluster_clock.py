"""The local cluster's clock, read and moved over HTTP, and a clock that follows it.

A setpoint local cluster serves its clock at ``/debug/setpoint/clock`` (``setpoint cluster
serve --clock manual`` makes it one that moves only when told to). :func:`read_cluster_clock`,
:func:`set_cluster_clock` and :func:`advance_cluster_clock` are what ``setpoint cluster clock``
and the testing kit call. :class:`ClusterFollowingClock` is a :class:`~setpoint.api.clock.Clock`
for operators (``setpoint run --follow-cluster-clock``, ``Manager(follow_cluster_clock=True)``):
it polls the cluster's clock and moves to it, firing the operator's requeue timers that fall
due, so a reconcile's ``now``, its ``requeue_after`` and its condition times follow the
cluster's time. It talks HTTP only: the runtime never imports the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final

from setpoint.api.clock import FakeClock, TimerHandle

if TYPE_CHECKING:
    from setpoint.client.client import Client

__all__ = [
    "CLUSTER_CLOCK_PATH",
    "ClusterClockReading",
    "ClusterFollowingClock",
    "advance_cluster_clock",
    "read_cluster_clock",
    "set_cluster_clock",
]

log = logging.getLogger(__name__)

CLUSTER_CLOCK_PATH: Final = "/debug/setpoint/clock"
#: How often a following clock asks the cluster for its time: a requeue due on the cluster's
#: clock fires at most this late (a manual clock moves only when told to, so this is cheap).
FOLLOW_INTERVAL_SECONDS: Final = 0.2


@dataclass(frozen=True, slots=True)
class ClusterClockReading:
    """What the cluster says about its clock."""

    now: datetime
    #: ``manual`` (moves only when told to) or ``real``.
    mode: str


def _reading(answer: object) -> ClusterClockReading:
    if not isinstance(answer, dict) or "now" not in answer:
        raise ValueError(f"{CLUSTER_CLOCK_PATH} answered no clock: {answer!r}")
    now = datetime.fromisoformat(str(answer["now"])).astimezone(UTC)
    return ClusterClockReading(now, str(answer.get("mode", "")))


async def read_cluster_clock(client: Client) -> ClusterClockReading:
    """The cluster's time now."""
    return _reading(await client.request_json("GET", CLUSTER_CLOCK_PATH))


async def set_cluster_clock(client: Client, when: datetime | str) -> ClusterClockReading:
    """Move a manual cluster clock to ``when`` (never back: the server refuses with a 400)."""
    text = when if isinstance(when, str) else when.astimezone(UTC).isoformat()
    return _reading(await client.request_json("PUT", CLUSTER_CLOCK_PATH, body={"now": text}))


async def advance_cluster_clock(
    client: Client, duration: str | float | timedelta
) -> ClusterClockReading:
    """Move a manual cluster clock forward by ``duration`` (``"2h"``, seconds, a timedelta)."""
    if isinstance(duration, timedelta):
        duration = duration.total_seconds()
    text = duration if isinstance(duration, str) else f"{float(duration)}s"
    return _reading(await client.request_json("PUT", CLUSTER_CLOCK_PATH, body={"advance": text}))


class _FirstOf:
    """A timer on two clocks that fires once, on whichever is due first."""

    __slots__ = ("_callback", "_fired", "_handles")

    def __init__(self, cluster: FakeClock, delay: float, callback: Callable[[], object]) -> None:
        self._callback = callback
        self._fired = False
        self._handles: list[TimerHandle] = []
        self._handles.append(cluster.call_later(delay, self._fire))
        if not self._fired:
            real = asyncio.get_running_loop().call_later(max(0.0, delay), self._fire)
            self._handles.append(real)

    def _fire(self) -> None:
        if self._fired:
            return
        self._fired = True
        self.cancel()
        self._callback()

    def cancel(self) -> None:
        for handle in self._handles:
            handle.cancel()


#: How long :meth:`ClusterFollowingClock.stop` lets a read in flight finish before cutting it.
STOP_GRACE_SECONDS = 5.0


class ClusterFollowingClock:
    """A clock that follows the cluster's: a local fake clock moved to the cluster's time.

    Until :meth:`follow` is running it reads the real time; then it never goes back and moves
    only when the cluster's clock does (within :data:`FOLLOW_INTERVAL_SECONDS`). Its timers
    fire when they are due on the cluster's clock or after as much real time, whichever is
    first (see :meth:`call_later`).
    """

    def __init__(self, interval: float = FOLLOW_INTERVAL_SECONDS) -> None:
        self._clock = FakeClock(datetime.now(UTC))
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        self._stopping: asyncio.Event | None = None
        self._synced = False

    def now(self) -> datetime:
        return self._clock.now()

    def monotonic(self) -> float:
        return self._clock.monotonic()

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

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        # Due on the cluster's clock, or after as much real time, whichever comes first: a
        # reconcile's error back-off (milliseconds) must not wait for someone to move a
        # manual clock, and a requeue that wakes early finds, from ctx.now(), that its time
        # has not come (a reconcile is level-based) and asks again.
        return _FirstOf(self._clock, delay, callback)

    def move_to(self, when: datetime) -> None:
        """Move to the cluster's ``when`` (ignored when it is not ahead) and fire due timers.

        The first reading is taken as it is, even behind the real time this clock started
        at, as long as nothing waits on this clock yet (a manual cluster clock set earlier)."""
        first, self._synced = not self._synced, True
        if first and when < self._clock.now() and not self._clock.pending():
            self._clock = FakeClock(when)
        elif when > self._clock.now():
            self._clock.set(when)

    async def sync(self, client: Client) -> ClusterClockReading:
        """Read the cluster's clock once and move to it."""
        reading = await read_cluster_clock(client)
        self.move_to(reading.now)
        return reading

    async def follow(self, client: Client, stopping: asyncio.Event | None = None) -> None:
        """Keep following the cluster's clock until ``stopping`` is set or cancelled (read
        errors are retried)."""
        stopping = stopping or asyncio.Event()
        while not stopping.is_set():
            try:
                await self.sync(client)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a restarting server: try again on the next tick
                log.debug("cluster clock not read: %s", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), self.interval)

    def start(self, client: Client) -> None:
        """Follow in a background task (see :meth:`follow`)."""
        if self._task is None:
            self._stopping = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self.follow(client, self._stopping))

    async def stop(self) -> None:
        """Stop following (the clock keeps its last time). A read in flight ends first, so its
        connection goes back to the client's pool instead of being cut mid-answer."""
        task, self._task = self._task, None
        if task is None:
            return
        if self._stopping is not None:
            self._stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_GRACE_SECONDS)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def __repr__(self) -> str:
        return f"ClusterFollowingClock({self.now().isoformat()})"
