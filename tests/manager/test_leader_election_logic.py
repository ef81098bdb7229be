"""The election algorithm (client-go's) against an in-memory Lease: no I/O, short timings."""

from __future__ import annotations

import asyncio
import re

import pytest

from setpoint.client.metrics import REGISTRY
from setpoint.manager.leader_election import (
    LeaderElectionConfig,
    LeaderElectionLost,
    LeaderElector,
    format_micro_time,
)
from tests.manager.in_memory_lease import InMemoryLeaseLock


def master_status(lease: str) -> float | None:
    value: float | None = REGISTRY.get_sample_value(
        "leader_election_master_status", {"name": lease}
    )
    return value


MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def elector(lock: InMemoryLeaseLock, identity: str, lease_duration: float = 2.0) -> LeaderElector:
    # Short timings keep the tests fast; the margins survive a loaded test machine.
    config = LeaderElectionConfig(
        name=lock.name,
        namespace=lock.namespace,
        identity=identity,
        lease_duration=lease_duration,
        renew_deadline=1.5,
        retry_period=0.1,
    )
    return LeaderElector(lock, config)


async def test_first_candidate_creates_the_lease() -> None:
    lock = InMemoryLeaseLock()
    first = elector(lock, "a")
    await asyncio.wait_for(first.acquire(), 5)
    assert first.is_leader
    assert lock.stored is not None
    spec = lock.stored["spec"]
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 2
    assert spec["leaseTransitions"] == 0
    assert MICRO_TIME.match(spec["acquireTime"]) and MICRO_TIME.match(spec["renewTime"])


async def test_second_candidate_waits_while_the_leader_renews() -> None:
    lock = InMemoryLeaseLock()
    first, second = elector(lock, "a"), elector(lock, "b")
    await first.acquire()
    holding = asyncio.create_task(first.hold())
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(second.acquire(), 3)
    assert not second.is_leader
    assert lock.stored is not None and lock.stored["spec"]["holderIdentity"] == "a"
    holding.cancel()


async def test_an_expired_lease_is_taken_over_with_a_transition() -> None:
    lock = InMemoryLeaseLock()
    first, second = elector(lock, "a"), elector(lock, "b")
    await first.acquire()
    acquired_by_a = lock.stored["spec"]["acquireTime"]  # type: ignore[index]
    # "a" dies without releasing: "b" must wait one lease duration after it first saw the lease.
    await asyncio.wait_for(second.acquire(), 5)
    spec = lock.stored["spec"]  # type: ignore[index]
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1
    assert spec["acquireTime"] != acquired_by_a


async def test_renewing_keeps_acquire_time_and_transitions() -> None:
    lock = InMemoryLeaseLock()
    first = elector(lock, "a")
    await first.acquire()
    before = dict(lock.stored["spec"])  # type: ignore[index]
    writes = lock.writes
    holding = asyncio.create_task(first.hold())
    for _ in range(500):
        if lock.writes >= writes + 3:
            break
        await asyncio.sleep(0.02)
    holding.cancel()
    spec = lock.stored["spec"]  # type: ignore[index]
    assert spec["acquireTime"] == before["acquireTime"]
    assert spec["leaseTransitions"] == before["leaseTransitions"]
    assert spec["renewTime"] > before["renewTime"]


async def test_release_lets_a_successor_in_at_once() -> None:
    lock = InMemoryLeaseLock(name="released-lease")
    first, second = elector(lock, "a", lease_duration=30), elector(lock, "b", lease_duration=30)
    assert master_status("released-lease") == 0
    await first.acquire()
    assert master_status("released-lease") == 1
    assert await first.release()
    assert not first.is_leader
    assert master_status("released-lease") == 0
    spec = lock.stored["spec"]  # type: ignore[index]
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    # A 30 s lease would block "b" for 30 s if it had not been released.
    await asyncio.wait_for(second.acquire(), 2)
    assert lock.stored["spec"]["holderIdentity"] == "b"  # type: ignore[index]


async def test_failing_to_renew_within_the_deadline_loses_leadership() -> None:
    lock = InMemoryLeaseLock()
    first = elector(lock, "a")
    await first.acquire()
    lock.fail_writes = True
    with pytest.raises(LeaderElectionLost, match="renew deadline"):
        await asyncio.wait_for(first.hold(), 5)
    assert not first.is_leader
    assert not await first.release()


async def test_another_holder_in_the_lease_loses_leadership() -> None:
    lock = InMemoryLeaseLock()
    first = elector(lock, "a")
    await first.acquire()
    assert lock.stored is not None
    usurped = dict(lock.stored)
    usurped["spec"] = {**lock.stored["spec"], "holderIdentity": "intruder"}
    lock._store(usurped)
    with pytest.raises(LeaderElectionLost, match="held by intruder"):
        await asyncio.wait_for(first.hold(), 5)


def test_timings_are_validated_like_client_go() -> None:
    with pytest.raises(ValueError, match=r"lease_duration .* must be greater than renew_deadline"):
        LeaderElectionConfig(name="l", namespace="n", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match=r"renew_deadline .* must be greater than retry_period"):
        LeaderElectionConfig(
            name="l", namespace="n", lease_duration=15, renew_deadline=2, retry_period=2
        )
    with pytest.raises(ValueError, match="namespace"):
        LeaderElectionConfig(name="l", namespace="")
    config = LeaderElectionConfig(name="l", namespace="n")
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)
    assert "_" in config.identity


def test_micro_time_has_six_fraction_digits() -> None:
    from datetime import UTC, datetime

    assert format_micro_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == (
        "2026-01-02T03:04:05.000000Z"
    )


async def test_release_succeeds_after_a_renewal_whose_answer_was_lost() -> None:
    lock = InMemoryLeaseLock()
    first = elector(lock, "a")
    await first.acquire()
    assert lock.stored is not None
    # A renewal reached the server but its answer never came back (the task was cancelled):
    # the elector's copy of the Lease now has a stale resourceVersion.
    lock._store(lock.stored)
    assert await first.release()
    assert lock.stored["spec"]["holderIdentity"] == ""


async def test_release_leaves_a_lease_someone_else_took() -> None:
    lock = InMemoryLeaseLock()
    first = elector(lock, "a")
    await first.acquire()
    assert lock.stored is not None
    lock._store({**lock.stored, "spec": {**lock.stored["spec"], "holderIdentity": "b"}})
    assert not await first.release()
    assert lock.stored["spec"]["holderIdentity"] == "b"
