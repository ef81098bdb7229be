"""The clock an operator runs on with ``follow_cluster_clock``: it moves to the cluster's time
(never back), fires timers due on that time, and lets short waits (error back-off) pass on
real time; the Manager refuses it together with a clock of its own."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from setpoint.api.clock import FakeClock
from setpoint.client.cluster_clock import ClusterFollowingClock
from setpoint.manager.manager import Manager, ManagerError

CLUSTER_TIME = datetime(2026, 12, 24, 17, tzinfo=UTC)


async def test_it_takes_the_clusters_time_and_fires_what_falls_due() -> None:
    clock = ClusterFollowingClock()
    clock.move_to(CLUSTER_TIME)  # the first reading is taken even when it is behind
    assert clock.now() == CLUSTER_TIME
    fired: list[str] = []
    clock.call_later(3600, lambda: fired.append("in an hour"))
    clock.move_to(CLUSTER_TIME + timedelta(minutes=59))
    await asyncio.sleep(0.01)
    assert fired == []
    clock.move_to(CLUSTER_TIME + timedelta(hours=1))
    await asyncio.sleep(0.01)
    assert fired == ["in an hour"]
    clock.move_to(CLUSTER_TIME)  # never back
    assert clock.now() == CLUSTER_TIME + timedelta(hours=1)


async def test_a_short_wait_passes_on_real_time_when_the_cluster_clock_stands_still() -> None:
    clock = ClusterFollowingClock()
    clock.move_to(CLUSTER_TIME)
    fired: list[str] = []
    clock.call_later(0.02, lambda: fired.append("back-off"))
    await asyncio.wait_for(clock.sleep(0.02), timeout=5)
    await asyncio.sleep(0.05)
    assert fired == ["back-off"]  # once, though the cluster's clock never moved


def test_the_manager_refuses_a_clock_and_following_together() -> None:
    with pytest.raises(ManagerError, match="pass either clock or follow_cluster_clock"):
        Manager(kubeconfig="unused", clock=FakeClock(), follow_cluster_clock=True)
    manager = Manager(kubeconfig="unused", follow_cluster_clock=True)
    assert isinstance(manager.clock, ClusterFollowingClock)
