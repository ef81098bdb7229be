"""Stopping runnables must not swallow the cancellation of whoever is stopping them."""

from __future__ import annotations

import asyncio

import pytest

from setpoint.manager.runnable import ManagedRunnable


def failed(managed: ManagedRunnable, error: BaseException) -> None:
    raise AssertionError(f"{managed.name} failed: {error}")


async def test_cancelling_a_stop_that_waits_for_a_slow_cancellation_propagates() -> None:
    cleaning_up = asyncio.Event()
    release = asyncio.Event()

    async def slow_to_cancel() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cleaning_up.set()
            await release.wait()  # cleanup that takes a while
            raise

    managed = ManagedRunnable(slow_to_cancel, needs_leader_election=False)
    managed.start(failed)
    await asyncio.sleep(0)
    stopping = asyncio.create_task(managed.stop(0))
    await asyncio.wait_for(cleaning_up.wait(), 5)
    # E.g. a shutdown deadline: the caller gives up waiting for this stop().
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(stopping, 5)
    release.set()
    assert managed.task is not None
    await asyncio.wait([managed.task], timeout=5)
    assert managed.task.cancelled()
