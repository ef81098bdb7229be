"""What a manager runs: anything with `start()`/`stop()`, or an async function.

A `Runnable` is started as a task. `start()` may return at once (work goes on in background
tasks, like setpoint's controllers) or run until stopped (like controller-runtime's
`Start(ctx)`); both work. `stop()` asks it to finish; the manager bounds that by the graceful
shutdown timeout and then cancels what is left. An `async def fn()` is run until cancelled.

By default a runnable needs leader election (it only runs while this process is the leader),
as in controller-runtime; a runnable says otherwise with a `needs_leader_election = False` (or
`need_leader_election = False`, the controller's spelling) attribute, or the caller passes
`needs_leader_election=` to `Manager.add`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

__all__ = ["ManagedRunnable", "Runnable", "RunnableFunction", "cancel_and_wait", "describe"]

log = logging.getLogger("setpoint.manager")


@runtime_checkable
class Runnable(Protocol):
    """Something the manager starts and stops."""

    async def start(self) -> None:
        """Start working; may return at once or run until `stop()`."""
        ...

    async def stop(self) -> None:
        """Finish gracefully (stop taking new work, complete what is in flight)."""
        ...


RunnableFunction = Callable[[], Awaitable[Any]]

# Extra time given to a `stop(timeout=T)` beyond T, to cancel and collect its own tasks.
STOP_MARGIN = 2.0


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and wait until it has finished, ignoring how it ended.

    Unlike `suppress(BaseException)` around the await, a cancellation of the *caller* (e.g. a
    shutdown deadline) still propagates: only the task's own CancelledError is swallowed.
    """
    if not task.done():
        task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception:  # the task's own failure was reported (or is moot) elsewhere
        pass


def describe(target: object) -> str:
    """A short name for messages: the runnable's `name` attribute or its function/class name."""
    name = getattr(target, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(target, "__qualname__", None) or type(target).__name__


class ManagedRunnable:
    """One runnable under a manager: its task, and how to stop it within a deadline."""

    def __init__(self, target: Runnable | RunnableFunction, needs_leader_election: bool) -> None:
        self._stop_takes_timeout = False
        if isinstance(target, Runnable):
            self._start: RunnableFunction = target.start
            self._stop: RunnableFunction | None = target.stop
            # A stop(timeout=...) (like Controller.stop) drains within the deadline itself.
            with contextlib.suppress(TypeError, ValueError):
                self._stop_takes_timeout = "timeout" in inspect.signature(target.stop).parameters
        elif callable(target) and inspect.iscoroutinefunction(target):
            self._start = target
            self._stop = None
        else:
            raise TypeError(
                f"Manager.add: expected an object with async start()/stop() or an async function, "
                f"got {target!r}"
            )
        self.target = target
        self.name = describe(target)
        self.needs_leader_election = needs_leader_election
        self.task: asyncio.Task[Any] | None = None
        self._stopping = False

    @property
    def started(self) -> bool:
        """True once `start` was called."""
        return self.task is not None

    def start(self, on_failure: Callable[[ManagedRunnable, BaseException], None]) -> None:
        """Start as a task; `on_failure` is called if it raises before it is stopped."""
        if self.task is not None:
            return
        self.task = asyncio.create_task(self._run(), name=f"setpoint runnable {self.name}")

        def finished(task: asyncio.Task[Any]) -> None:
            if task.cancelled() or self._stopping:
                return
            error = task.exception()
            if error is not None:
                on_failure(self, error)

        self.task.add_done_callback(finished)

    async def _run(self) -> None:
        await self._start()

    async def abort(self) -> None:
        """Stop at once, cancelling in-flight work (used when leadership is lost mid-stop)."""
        self._stopping = True
        if self._stop_takes_timeout:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(STOP_MARGIN):
                    await self.target.stop(timeout=0)  # type: ignore[union-attr,call-arg]
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def stop(self, grace: float) -> None:
        """Ask it to stop; after `grace` seconds cancel whatever still runs. Never raises."""
        self._stopping = True
        task = self.task
        if task is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(grace, 0.0)
        if self._stop_takes_timeout:
            try:
                # The margin lets it cancel its own leftovers after its drain deadline.
                async with asyncio.timeout(grace + STOP_MARGIN):
                    await self.target.stop(timeout=grace)  # type: ignore[union-attr,call-arg]
            except TimeoutError:
                log.warning("%s did not stop within %.3gs; cancelling it", self.name, grace)
            except Exception:
                log.exception("error stopping %s", self.name)
        elif self._stop is not None and grace > 0:
            try:
                async with asyncio.timeout(grace):
                    await self._stop()
            except TimeoutError:
                log.warning("%s did not stop within %.3gs; cancelling it", self.name, grace)
            except Exception:
                log.exception("error stopping %s", self.name)
        if not task.done():
            remaining = deadline - loop.time()
            # A plain async function has no graceful stop: cancelling it is how it stops. A
            # stop(timeout=...) has drained already: what start() still does (e.g. waiting for
            # caches to sync) is moot.
            if remaining > 0 and self._stop is not None and not self._stop_takes_timeout:
                await asyncio.wait([task], timeout=remaining)
            if not task.done():
                await cancel_and_wait(task)
                if self._stop is not None and grace <= 0 and not self._stop_takes_timeout:
                    # Cancelled without a graceful stop: still let it release its resources.
                    with contextlib.suppress(Exception):
                        async with asyncio.timeout(1.0):
                            await self._stop()
        elif not task.cancelled() and task.exception() is not None:
            log.debug("%s had failed: %s", self.name, task.exception())
