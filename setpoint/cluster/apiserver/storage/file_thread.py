"""One thread that runs the SQLite storage's blocking file calls for its event loop.

The storage hands it a call per batch (the ``fdatasync`` that makes the batch durable), and now
and then a checkpoint or the close. A call goes in through a ``queue.SimpleQueue`` (in C: the
loop never takes a Python lock that the thread may hold, as ``ThreadPoolExecutor.submit`` does)
and its outcome comes back with one ``call_soon_threadsafe``: one wake-up of the loop per call.
Calls run one at a time, in the order given.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")

# A queued call: what to run, and the loop and future that get its outcome; None stops.
_Call = tuple[Callable[[], object], asyncio.AbstractEventLoop, "asyncio.Future[object]"]


class FileThread:
    """A thread running blocking calls one at a time; :meth:`run` awaits each from a loop."""

    def __init__(self, name: str) -> None:
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        # A daemon: a process that exits without closing its storage is not held up by it.
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def run(self, call: Callable[[], _T]) -> asyncio.Future[_T]:
        """Run ``call`` on the thread; the future gets its result or exception.

        Cancelling the future does not stop a call already running; its outcome is dropped.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._calls.put((call, loop, future))  # type: ignore[arg-type]
        return future

    def stop(self) -> None:
        """Let the calls queued so far finish, then end the thread (blocks until it has)."""
        self._calls.put(None)
        self._thread.join()

    def _serve(self) -> None:
        while (queued := self._calls.get()) is not None:
            call, loop, future = queued
            result: object = None
            error: BaseException | None = None
            try:
                result = call()
            except BaseException as exc:  # handed to the awaiting coroutine, whatever it is
                error = exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:
                pass  # the loop is closed: nobody is waiting any more


def _settle(future: asyncio.Future[object], result: object, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
