"""The shared clock: the system clock waits for real, the fake one only when advanced."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta

import pytest

from setpoint.api.clock import SYSTEM_CLOCK, Clock, FakeClock

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_both_clocks_satisfy_the_protocol() -> None:
    assert isinstance(SYSTEM_CLOCK, Clock)
    assert isinstance(FakeClock(START), Clock)


def test_system_clock_is_utc_and_aware() -> None:
    assert SYSTEM_CLOCK.now().tzinfo is not None
    assert SYSTEM_CLOCK.now().utcoffset() == timedelta(0)


def test_fake_clock_refuses_naive_start_and_going_backwards() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        FakeClock(datetime(2026, 1, 1))
    clock = FakeClock(START)
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)


async def test_sleep_wakes_only_when_time_reaches_it() -> None:
    clock = FakeClock(START)
    woke: list[str] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(name)

    tasks = [asyncio.create_task(sleeper("late", 60)), asyncio.create_task(sleeper("soon", 10))]
    await asyncio.sleep(0)
    assert clock.pending() == 2
    assert clock.next_due() == 10
    clock.advance(9)
    await asyncio.sleep(0.01)
    assert woke == []
    clock.advance(1)
    await asyncio.sleep(0.01)
    assert woke == ["soon"]
    clock.advance(timedelta(minutes=5))
    await asyncio.gather(*tasks)
    assert woke == ["soon", "late"]
    assert clock.now() == START + timedelta(seconds=310)


async def test_cancelled_timer_never_fires_and_set_moves_wall_time() -> None:
    clock = FakeClock(START)
    fired: list[int] = []
    handle = clock.call_later(5, lambda: fired.append(1))
    clock.call_later(5, lambda: fired.append(2))
    handle.cancel()
    clock.set(START + timedelta(hours=1))
    await asyncio.sleep(0.01)
    assert fired == [2]
    assert clock.now() == START + timedelta(hours=1)


def test_advance_from_another_thread_wakes_a_sleeper_on_its_own_loop() -> None:
    clock = FakeClock(START)
    ready = threading.Event()
    result: list[datetime] = []

    async def main() -> None:
        sleeping = asyncio.create_task(clock.sleep(30))
        await asyncio.sleep(0)
        ready.set()
        await asyncio.wait_for(sleeping, timeout=5)
        result.append(clock.now())

    thread = threading.Thread(target=asyncio.run, args=(main(),))
    thread.start()
    assert ready.wait(5)
    clock.advance(30)
    thread.join(5)
    assert result == [START + timedelta(seconds=30)]
