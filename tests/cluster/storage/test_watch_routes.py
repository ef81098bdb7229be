"""The watch hub's routing: the memo of watchers per key directory delivers exactly what
matching every watcher's prefix against every key would, while watchers come and go; and a
consumer's wake-up survives cancellation and closing."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.storage.base import WatchEvent
from setpoint.cluster.apiserver.storage.watch import StorageWatch, WatchHub

# Few, overlapping segments: keys share directories, and cut prefixes split them.
_SEGMENTS = ("a", "ab", "b")
_keys = st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=3).map(
    lambda parts: "/" + "/".join(parts)
)
# Directory prefixes (``/core/``, ``""``) and others (``/core/con``, ``/core/configmaps/a``).
_prefixes = st.one_of(
    st.just(""),
    _keys.map(lambda key: key + "/"),
    _keys,
    _keys.flatmap(lambda key: st.integers(1, len(key)).map(lambda cut: key[:cut])),
)
_operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), _prefixes),
        st.tuples(st.just("remove"), st.integers(0, 20)),
        st.tuples(st.just("announce"), st.lists(_keys, min_size=1, max_size=3)),
    ),
    max_size=40,
)


def _watcher(hub: WatchHub, prefix: str, buffer: int = 1000) -> StorageWatch:
    return StorageWatch(prefix, 0, [], buffer=buffer, on_close=hub.remove)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_operations)
@example([("add", "/a/a"), ("announce", ["/a/ab", "/a/b", "/a/a"])])  # not a directory
@example([("add", "/a/"), ("announce", ["/a/b"]), ("add", "/"), ("announce", ["/a/b"])])
def test_routing_delivers_what_matching_every_prefix_would(operations: list[Any]) -> None:
    async def scenario() -> None:
        hub = WatchHub()
        live: list[StorageWatch] = []
        expected: dict[StorageWatch, list[int]] = {}
        revision = 0
        for operation, argument in operations:
            if operation == "add":
                watcher = _watcher(hub, argument)
                hub.add(watcher)
                live.append(watcher)
                expected[watcher] = []
            elif operation == "remove" and live:
                watcher = live.pop(argument % len(live))
                watcher.close()
            elif operation == "announce":
                events = []
                for key in argument:
                    revision += 1
                    events.append(WatchEvent("ADDED", key, revision, b"{}", None))
                    for watcher in live:
                        if key.startswith(watcher.prefix):
                            expected[watcher].append(revision)
                hub.announce(events)
        assert len(hub) == len(live)
        for watcher, revisions in expected.items():
            assert [event.revision for event in watcher.take_buffered()] == revisions

    asyncio.run(scenario())


async def test_a_watcher_dropped_for_overflow_stops_getting_the_directorys_events() -> None:
    hub = WatchHub()
    slow = _watcher(hub, "/core/configmaps/", buffer=1)
    fast = _watcher(hub, "/core/")
    hub.add(slow)
    hub.add(fast)
    keys = ["/core/configmaps/ns1/a", "/core/configmaps/ns1/b", "/core/configmaps/ns1/c"]
    hub.announce(WatchEvent("ADDED", key, rev, b"{}", None) for rev, key in enumerate(keys, 1))
    assert len(hub) == 1 and slow.closed
    assert [event.revision for event in fast.take_buffered()] == [1, 2, 3]
    hub.announce([WatchEvent("ADDED", "/core/configmaps/ns1/d", 4, b"{}", None)])
    assert [event.revision for event in fast.take_buffered()] == [4]


async def test_a_cancelled_consumer_leaves_the_watch_usable() -> None:
    hub = WatchHub()
    watcher = _watcher(hub, "/")
    hub.add(watcher)

    async def first() -> WatchEvent:
        async for event in watcher:
            return event
        raise AssertionError("the watch ended")

    waiting = asyncio.ensure_future(first())
    await asyncio.sleep(0)
    waiting.cancel()
    # Delivered after the cancel, before the consumer has run again: no error, not lost.
    hub.announce([WatchEvent("ADDED", "/a", 1, b"{}", None)])
    await asyncio.gather(waiting, return_exceptions=True)
    assert waiting.cancelled()
    event = await asyncio.wait_for(first(), 5)
    assert event.revision == 1


async def test_closing_wakes_a_waiting_consumer() -> None:
    hub = WatchHub()
    watcher = _watcher(hub, "/")
    hub.add(watcher)

    async def drain() -> list[WatchEvent]:
        return [event async for event in watcher]

    waiting = asyncio.ensure_future(drain())
    await asyncio.sleep(0)
    watcher.close()
    assert await asyncio.wait_for(waiting, 5) == []
    assert len(hub) == 0
