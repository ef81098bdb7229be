"""The SQLite storage's file thread: calls run one at a time, in order, off the event loop,
and each outcome (a result or an exception) reaches the coroutine that awaits it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from setpoint.cluster.apiserver.storage.file_thread import FileThread


async def test_calls_run_in_order_on_another_thread_and_return_their_results() -> None:
    worker = FileThread("test-file-thread")
    ran: list[tuple[int, str]] = []

    def call(number: int) -> int:
        ran.append((number, threading.current_thread().name))
        return number * 10

    try:
        futures = [worker.run(lambda n=n: call(n)) for n in range(50)]  # type: ignore[misc]
        assert await asyncio.gather(*futures) == [n * 10 for n in range(50)]
    finally:
        worker.stop()
    assert [number for number, _ in ran] == list(range(50))
    assert {name for _, name in ran} == {"test-file-thread"}


async def test_an_exception_reaches_the_awaiting_coroutine_and_later_calls_still_run() -> None:
    worker = FileThread("test-file-thread")

    def fail() -> None:
        raise OSError(5, "Input/output error")

    try:
        with pytest.raises(OSError, match="Input/output error"):
            await worker.run(fail)
        assert await worker.run(lambda: "after") == "after"
    finally:
        worker.stop()


async def test_a_cancelled_wait_drops_the_outcome_of_a_call_already_running() -> None:
    worker = FileThread("test-file-thread")
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(10)
        return "late"

    try:
        future = worker.run(slow)
        assert await asyncio.to_thread(started.wait, 10)
        future.cancel()
        release.set()
        assert await worker.run(lambda: "next") == "next"
        assert future.cancelled()
    finally:
        worker.stop()
