"""Watches: replay from a revision, live events in order, expiry, and slow watchers."""

from __future__ import annotations

import asyncio

import pytest

from setpoint.cluster.apiserver.storage import (
    ExpiredError,
    InvalidValueError,
    Storage,
    Watch,
    WatchEvent,
    WatchOverflowError,
)
from tests.cluster.storage.conftest import StorageFactory
from tests.cluster.storage.objects import configmap, decoded, key_of, rv

# Generous: only reached when an expected event never comes (a failing test, not a slow one).
EVENT_TIMEOUT = 10.0


async def take(watch: Watch, n: int) -> list[WatchEvent]:
    """The next ``n`` events of ``watch``."""

    async def collect() -> list[WatchEvent]:
        events: list[WatchEvent] = []
        async for event in watch:
            events.append(event)
            if len(events) == n:
                break
        return events

    return await asyncio.wait_for(collect(), EVENT_TIMEOUT)


async def drain(watch: Watch) -> list[WatchEvent]:
    """Every event until the watch ends (close it first)."""
    return [event async for event in watch]


async def write_three(storage: Storage) -> int:
    storage.create(key_of("a"), configmap("a"))
    storage.update(key_of("a"), configmap("a", v="1"))
    last = storage.delete(key_of("a"))
    await storage.wait_durable(last.revision)
    return last.revision


async def test_watch_from_zero_replays_everything_then_goes_live(storage: Storage) -> None:
    await write_three(storage)
    watch = storage.watch("/core/configmaps/", 0)
    replayed = await take(watch, 3)
    assert [(e.type, e.revision) for e in replayed] == [
        ("ADDED", 1),
        ("MODIFIED", 2),
        ("DELETED", 3),
    ]
    record = storage.create(key_of("b"), configmap("b"))
    await storage.wait_durable(record.revision)
    (live,) = await take(watch, 1)
    assert (live.type, live.key, live.revision, live.value) == (
        "ADDED",
        key_of("b"),
        4,
        record.value,
    )
    watch.close()


async def test_events_carry_values_and_previous_values(storage: Storage) -> None:
    created = storage.create(key_of("a"), configmap("a", v="1"))
    updated = storage.update(key_of("a"), configmap("a", v="2"))
    deleted = storage.delete(key_of("a"))
    await storage.wait_durable(deleted.revision)
    added, modified, gone = await take(storage.watch("/", 0), 3)
    assert (added.value, added.prev_value) == (created.value, None)
    assert (modified.value, modified.prev_value) == (updated.value, created.value)
    assert gone.value == deleted.value
    assert gone.prev_value == updated.value
    assert rv(gone.value) == "3"
    assert decoded(gone.value)["data"] == {"v": "2"}


async def test_watch_from_a_revision_gets_only_later_events(storage: Storage) -> None:
    await write_three(storage)
    watch = storage.watch("/core/configmaps/", 1)
    assert [e.revision for e in await take(watch, 2)] == [2, 3]
    watch.close()
    assert await drain(watch) == []


async def test_watch_from_current_revision_gets_only_future_events(storage: Storage) -> None:
    current = await write_three(storage)
    watch = storage.watch("/", current)
    record = storage.create(key_of("later"), configmap("later"))
    await storage.wait_durable(record.revision)
    (event,) = await take(watch, 1)
    assert event.revision == current + 1
    watch.close()


async def test_watch_filters_by_prefix(storage: Storage) -> None:
    watch = storage.watch("/core/configmaps/ns2/", 0)
    other = storage.watch("/core/configmapsx/", 0)
    storage.create(key_of("a", "ns1"), configmap("a", "ns1"))
    storage.create("/core/configmapsx/ns2/a", configmap("a", "ns2"))
    last = storage.create(key_of("a", "ns2"), configmap("a", "ns2"))
    await storage.wait_durable(last.revision)
    (event,) = await take(watch, 1)
    assert event.key == key_of("a", "ns2")
    (event,) = await take(other, 1)
    assert event.key == "/core/configmapsx/ns2/a"
    watch.close()
    other.close()
    assert await drain(watch) == []


async def test_watch_prefix_that_is_not_a_directory(storage: Storage) -> None:
    watch = storage.watch(key_of("ab"), 0)
    storage.create(key_of("a"), configmap("a"))
    storage.create(key_of("abc"), configmap("abc"))
    last = storage.create(key_of("ab"), configmap("ab"))
    await storage.wait_durable(last.revision)
    assert [e.key for e in await take(watch, 2)] == [key_of("abc"), key_of("ab")]
    watch.close()


async def test_many_watchers_each_get_every_event_in_order(storage: Storage) -> None:
    watches = [storage.watch("/", 0) for _ in range(5)]
    last = 0
    for i in range(20):
        last = storage.create(key_of(f"o{i}"), configmap(f"o{i}")).revision
    await storage.wait_durable(last)
    for watch in watches:
        assert [e.revision for e in await take(watch, 20)] == list(range(1, 21))
        watch.close()


async def test_a_burst_can_be_taken_at_once_and_iteration_goes_on_after_it(
    storage: Storage,
) -> None:
    watch = storage.watch("/", 0)
    for i in range(5):
        storage.create(key_of(f"b{i}"), configmap(f"b{i}"))
    await storage.wait_durable(storage.revision)
    first = (await take(watch, 1))[0]
    burst = watch.take_buffered()
    assert [first.revision, *(e.revision for e in burst)] == [1, 2, 3, 4, 5]
    assert watch.take_buffered() == []
    last = storage.create(key_of("after"), configmap("after")).revision
    await storage.wait_durable(last)
    assert [e.revision for e in await take(watch, 1)] == [last]
    watch.close()


async def test_watch_older_than_history_is_expired(make_storage: StorageFactory) -> None:
    storage = make_storage(history_max_events=3)
    last = 0
    for i in range(6):
        last = storage.create(key_of(f"o{i}"), configmap(f"o{i}")).revision
    await storage.wait_durable(last)
    assert storage.oldest_revision == 3
    with pytest.raises(ExpiredError) as caught:
        storage.watch("/", 2)
    assert (caught.value.requested, caught.value.oldest) == (2, 3)
    assert "too old resource version: 2 (3)" in str(caught.value)
    watch = storage.watch("/", 3)
    assert [e.revision for e in await take(watch, 3)] == [4, 5, 6]
    watch.close()


async def test_history_older_than_max_age_is_dropped(make_storage: StorageFactory) -> None:
    now = [1000.0]
    storage = make_storage(history_max_age=60.0, clock=lambda: now[0])
    first = storage.create(key_of("a"), configmap("a"))
    await storage.wait_durable(first.revision)
    now[0] += 61.0
    second = storage.create(key_of("b"), configmap("b"))
    await storage.wait_durable(second.revision)
    assert storage.oldest_revision == 1
    with pytest.raises(ExpiredError):
        storage.watch("/", 0)
    now[0] += 61.0
    assert storage.oldest_revision == 2
    # Nothing retained, yet a watch from the newest revision is always possible.
    storage.watch("/", 2).close()


async def test_slow_watcher_overflows_without_blocking_others(storage: Storage) -> None:
    slow = storage.watch("/", 0, buffer=3)
    fast = storage.watch("/", 0, buffer=100)
    last = 0
    for i in range(5):
        last = storage.create(key_of(f"o{i}"), configmap(f"o{i}")).revision
        await storage.wait_durable(last)
    assert [e.revision for e in await take(fast, 5)] == [1, 2, 3, 4, 5]
    with pytest.raises(WatchOverflowError):
        await take(slow, 1)
    # The overflowed watcher is closed: it gets nothing more.
    record = storage.create(key_of("after"), configmap("after"))
    await storage.wait_durable(record.revision)
    assert await drain(slow) == []
    assert [e.revision for e in await take(fast, 1)] == [6]
    fast.close()


async def test_replayed_history_does_not_count_against_the_buffer(storage: Storage) -> None:
    last = 0
    for i in range(10):
        last = storage.create(key_of(f"o{i}"), configmap(f"o{i}")).revision
    await storage.wait_durable(last)
    watch = storage.watch("/", 0, buffer=2)
    assert len(await take(watch, 10)) == 10
    watch.close()


async def test_closing_the_storage_ends_every_watch(storage: Storage) -> None:
    watch = storage.watch("/", 0)
    await storage.close()
    assert await drain(watch) == []


async def test_a_consumer_waiting_for_events_is_woken_by_a_write(storage: Storage) -> None:
    watch = storage.watch("/", 0)
    waiter = asyncio.ensure_future(take(watch, 1))
    await asyncio.sleep(0)
    record = storage.create(key_of("a"), configmap("a"))
    await storage.wait_durable(record.revision)
    (event,) = await waiter
    assert event.revision == record.revision
    watch.close()


async def test_negative_from_revision_is_rejected(storage: Storage) -> None:
    with pytest.raises(InvalidValueError, match="from_revision"):
        storage.watch("/", -1)
    with pytest.raises(InvalidValueError, match="buffer"):
        storage.watch("/", 0, buffer=0)


async def test_history_lists_retained_events_without_watching(
    make_storage: StorageFactory,
) -> None:
    storage = make_storage(history_max_events=4)
    await write_three(storage)
    last = storage.create(key_of("b"), configmap("b"))
    storage.create("/core/secrets/default/s", {"metadata": {"name": "s"}})
    await storage.wait_durable(storage.revision)
    assert [(e.type, e.revision) for e in storage.history(key_of(""), 1)] == [
        ("MODIFIED", 2),
        ("DELETED", 3),
        ("ADDED", last.revision),
    ]
    assert storage.history("/", storage.revision) == []
    with pytest.raises(ExpiredError):
        storage.history("/", 0)


async def test_watch_from_a_listed_revision_skips_writes_not_yet_durable(
    storage: Storage,
) -> None:
    # A list may include a write whose commit is still under way; a watch from the list's
    # revision must not deliver that write again once it is committed.
    pending = storage.create(key_of("a"), configmap("a"))
    listed_at = storage.revision
    watch = storage.watch("/", listed_at)
    await storage.wait_durable(pending.revision)
    later = storage.create(key_of("b"), configmap("b"))
    await storage.wait_durable(later.revision)
    assert [e.key for e in await take(watch, 1)] == [key_of("b")]
    watch.close()
    assert await drain(watch) == []
