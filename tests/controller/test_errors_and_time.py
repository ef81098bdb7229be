"""Errors that read well (RetryLater, 409s, terminal errors, tracebacks once per key) and time
(requeue_at, negative delays, a FakeClock driving delayed re-runs)."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from setpoint.api.clock import FakeClock
from setpoint.client.errors import Conflict
from setpoint.controller.controller import Controller
from setpoint.controller.handlers import EnqueueRequestForObject
from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.reconcile import Request, Result, RetryLater, TerminalError
from setpoint.controller.source import InformerSource
from setpoint.controller.workqueue import WorkQueue

from .fake_informer import FakeInformer
from .objects import cached
from .waiting import wait_until


def make(name: str, reconcile: object, informer: FakeInformer, **options: object) -> Controller:
    options.setdefault("rate_limiter", ItemExponentialFailureRateLimiter(0.001, 0.01))
    source = InformerSource(informer, EnqueueRequestForObject())
    return Controller(name, reconcile, sources=[source], **options)  # type: ignore[arg-type]


def records(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "setpoint.controller" and name in r.getMessage()]


async def test_retry_later_and_conflicts_are_one_info_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    informer = FakeInformer.holding(cached("a"))
    calls = 0

    async def reconcile(request: Request) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RetryLater("deployment a exists and is not ours")
        if calls == 2:
            raise Conflict({
                "code": 409, "reason": "Conflict",
                "message": 'Operation cannot be fulfilled on foos "a": the object has been '
                "modified; please apply your changes to the latest version and try again",
            })  # fmt: skip

    caplog.set_level(logging.INFO, logger="setpoint.controller")
    async with make("t-retry-later", reconcile, informer):
        await wait_until(lambda: calls == 3)
    lines = records(caplog, "t-retry-later default/a")
    assert [r.levelno for r in lines] == [logging.INFO, logging.INFO]
    assert all(r.exc_info is None for r in lines)
    assert "deployment a exists and is not ours" in lines[0].getMessage()
    assert "conflict" in lines[1].getMessage()


async def test_terminal_error_has_no_traceback_and_unexpected_ones_print_it_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    informer = FakeInformer.holding(cached("t"), cached("u"))
    calls = {"t": 0, "u": 0}

    async def reconcile(request: Request) -> None:
        calls[request.name] += 1
        if request.name == "t":
            raise TerminalError("spec.schedule is not a valid time")
        if calls["u"] <= 3:
            raise ValueError("cannot parse schedule")
        if calls["u"] == 4:
            raise ValueError("another problem")

    caplog.set_level(logging.INFO, logger="setpoint.controller")
    async with make("t-tracebacks", reconcile, informer):
        await wait_until(lambda: calls["u"] == 5)
    terminal = records(caplog, "t-tracebacks default/t")
    assert len(terminal) == 1 and terminal[0].exc_info is None
    assert "TerminalError: spec.schedule is not a valid time" in terminal[0].getMessage()
    failures = records(caplog, "t-tracebacks default/u")
    # A traceback the first time, one line for the same error again, a traceback for a new one.
    assert [r.exc_info is not None for r in failures] == [True, False, False, True]
    assert "same error as before" in failures[1].getMessage()


async def test_requeue_at_and_negative_delays_run_on_the_fake_clock() -> None:
    clock = FakeClock()
    informer = FakeInformer.holding(cached("past"), cached("future"))
    runs: list[str] = []

    async def reconcile(request: Request) -> Result | None:
        runs.append(request.name)
        if request.name == "past" and runs.count("past") == 1:
            return Result(requeue_after=-5)  # "schedule - now" computed after the deadline
        if request.name == "future" and runs.count("future") == 1:
            return Result(requeue_at=clock.now() + timedelta(minutes=10))
        return None

    async with make("t-requeue-at", reconcile, informer, clock=clock):
        await wait_until(lambda: runs.count("past") == 2 and "future" in runs)
        assert runs.count("future") == 1
        clock.advance(timedelta(minutes=9, seconds=59))
        assert runs.count("future") == 1
        clock.advance(1)
        await wait_until(lambda: runs.count("future") == 2)


def test_result_requeue_at_validation() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        from datetime import datetime

        Result(requeue_at=datetime(2030, 1, 1))
    with pytest.raises(ValueError, match="not both"):
        Result(requeue_after=1, requeue_at=FakeClock().now())
    assert RetryLater("x", after=timedelta(seconds=-3)).after == 0.0


async def test_work_queue_delays_fire_when_the_fake_clock_advances() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue(clock=clock)
    queue.add_after("later", 30)
    queue.add_after("sooner", 5)
    clock.advance(5)
    assert await queue.get() == "sooner"
    assert len(queue) == 0
    clock.advance(25)
    assert await queue.get() == "later"


async def test_resync_requeues_every_key_on_the_clock() -> None:
    clock = FakeClock()
    informer = FakeInformer.holding(cached("r1"), cached("r2"))
    runs: list[str] = []

    async def reconcile(request: Request) -> None:
        runs.append(request.name)

    controller = make(
        "t-resync",
        reconcile,
        informer,
        clock=clock,
        resync_period=60,
        resync_keys=lambda: [Request("default", "r1"), Request("default", "r2")],
    )
    async with controller:
        await wait_until(lambda: len(runs) == 2)
        await wait_until(lambda: clock.pending() > 0)  # the resync sleep is registered
        clock.advance(60)
        await wait_until(lambda: len(runs) == 4)
