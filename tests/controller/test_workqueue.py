"""Work queue behaviour on a real event loop: waiting workers, timers, shutdown, metrics."""

from __future__ import annotations

import asyncio
import random

import pytest
from prometheus_client import generate_latest

from setpoint.client.metrics import REGISTRY
from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.workqueue import QueueShutDown, WorkQueue

from ..cache.thread_race import reader_failures


async def test_get_waits_for_an_add() -> None:
    queue: WorkQueue[str] = WorkQueue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not getter.done()
    queue.add("x")
    assert await asyncio.wait_for(getter, 5) == "x"


async def test_duplicate_adds_before_processing_collapse() -> None:
    queue: WorkQueue[str] = WorkQueue()
    for _ in range(5):
        queue.add("x")
    queue.add("y")
    assert [queue.get_nowait(), queue.get_nowait()] == ["x", "y"]
    with pytest.raises(asyncio.QueueEmpty):
        queue.get_nowait()


async def test_key_added_while_processing_is_handed_out_again_after_done() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("x")
    key = await queue.get()
    queue.add("x")
    assert len(queue) == 0, "a key in flight must not be handed to a second worker"
    queue.done(key)
    assert await asyncio.wait_for(queue.get(), 5) == "x"


async def test_concurrent_workers_never_share_a_key() -> None:
    queue: WorkQueue[int] = WorkQueue()
    in_flight: set[int] = set()
    overlaps: list[int] = []
    processed = 0
    rng = random.Random(7)

    async def worker() -> None:
        nonlocal processed
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            if key in in_flight:
                overlaps.append(key)
            in_flight.add(key)
            if rng.random() < 0.5:
                queue.add(key)  # re-add while processing
            await asyncio.sleep(0)
            in_flight.discard(key)
            processed += 1
            queue.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(8)]
    for _ in range(300):
        queue.add(rng.randrange(5))
        await asyncio.sleep(0)
    await asyncio.wait_for(queue.shut_down_with_drain(), 10)
    await asyncio.wait_for(asyncio.gather(*workers), 10)
    assert overlaps == []
    assert processed > 0
    assert queue.in_flight == 0 and len(queue) == 0


async def test_add_after_fires_once_at_the_earliest_requested_time() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add_after("x", 30.0)
    queue.add_after("x", 0.02)
    queue.add_after("x", 10.0)  # later than the pending one: ignored
    assert queue.delayed == 1
    assert await asyncio.wait_for(queue.get(), 5) == "x"
    queue.done("x")
    assert queue.delayed == 0
    await asyncio.sleep(0.05)
    assert len(queue) == 0


async def test_add_rate_limited_backs_off_and_forget_resets() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.001, 1000.0)
    queue: WorkQueue[str] = WorkQueue(rate_limiter=limiter)
    for expected in (1, 2, 3):
        queue.add_rate_limited("x")
        assert queue.num_requeues("x") == expected
        assert await asyncio.wait_for(queue.get(), 5) == "x"
        queue.done("x")
    queue.forget("x")
    assert queue.num_requeues("x") == 0


async def test_shut_down_hands_out_queued_keys_then_raises() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("x")
    queue.add_after("later", 60)
    queue.shut_down()
    queue.add("y")  # ignored
    queue.add_rate_limited("z")  # ignored
    assert await queue.get() == "x"
    with pytest.raises(QueueShutDown):
        await queue.get()
    assert queue.delayed == 0


async def test_shut_down_wakes_waiting_workers() -> None:
    queue: WorkQueue[str] = WorkQueue()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(0)
    queue.shut_down()
    results = await asyncio.wait_for(asyncio.gather(*getters, return_exceptions=True), 5)
    assert all(isinstance(r, QueueShutDown) for r in results)


async def test_shut_down_with_drain_waits_for_in_flight_keys() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("x")
    key = await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await asyncio.sleep(0.01)
    assert not drain.done()
    queue.done(key)
    await asyncio.wait_for(drain, 5)


async def test_shut_down_with_drain_times_out_when_work_is_stuck() -> None:
    queue: WorkQueue[str] = WorkQueue()
    queue.add("x")
    await queue.get()
    with pytest.raises(TimeoutError):
        await queue.shut_down_with_drain(timeout=0.01)


async def test_cancelled_waiter_passes_its_wake_up_on() -> None:
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("x")  # wakes `first`...
    first.cancel()  # ...which is cancelled before it runs
    assert await asyncio.wait_for(second, 5) == "x"


async def test_named_queue_exports_controller_runtime_metrics() -> None:
    queue: WorkQueue[str] = WorkQueue("metrics-test-queue", controller="metrics-test")
    queue.add("a")
    queue.add("b")
    queue.add_rate_limited("c")
    key = await queue.get()
    text = generate_latest(REGISTRY).decode()
    labels = 'controller="metrics-test",name="metrics-test-queue"'
    assert f'workqueue_depth{{{labels},priority="0"}} 1.0' in text
    assert f"workqueue_adds_total{{{labels}}} 2.0" in text
    assert f"workqueue_retries_total{{{labels}}} 1.0" in text
    assert f"workqueue_queue_duration_seconds_count{{{labels}}} 1.0" in text
    assert f"workqueue_unfinished_work_seconds{{{labels}}}" in text
    assert f"workqueue_longest_running_processor_seconds{{{labels}}}" in text
    queue.done(key)
    text = generate_latest(REGISTRY).decode()
    assert f"workqueue_work_duration_seconds_count{{{labels}}} 1.0" in text
    queue.shut_down()


def test_metrics_can_be_scraped_from_another_thread_while_workers_run() -> None:
    # The manager encodes /metrics in a worker thread (asyncio.to_thread) while the event loop
    # keeps starting and finishing work: a scrape must never fail because the queue changed.
    queue: WorkQueue[int] = WorkQueue("scrape-race-queue", controller="scrape-race")
    for key in range(2000):
        queue.add(key)
    in_flight = [queue.get_nowait() for _ in range(2000)]

    def finish_and_restart_work() -> None:
        for key in in_flight[:50]:
            queue.done(key)
        for key in in_flight[:50]:
            queue.add(key)
            queue.get_nowait()

    assert reader_failures(lambda: generate_latest(REGISTRY), finish_and_restart_work) == []
