"""An event handler that records what it receives, and a polling wait for async conditions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from setpoint.cache import CachedObject

# Upper bound for waiting on an asynchronous condition; only reached when a test fails.
WAIT_LIMIT_S = 20.0


class RecordingHandler:
    """Records events as tuples: ("add", name, rv, initial) / ("update", name, old_rv, rv) /
    ("delete", name, rv)."""

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def on_add(self, obj: CachedObject, is_initial_list: bool) -> None:
        self.events.append(("add", obj.name, obj.resource_version, is_initial_list))

    def on_update(self, old: CachedObject, new: CachedObject) -> None:
        self.events.append(("update", new.name, old.resource_version, new.resource_version))

    def on_delete(self, obj: CachedObject) -> None:
        self.events.append(("delete", obj.name, obj.resource_version))

    def of(self, kind: str) -> list[tuple[object, ...]]:
        return [e for e in self.events if e[0] == kind]

    def names(self, kind: str) -> list[str]:
        return sorted(str(e[1]) for e in self.events if e[0] == kind)


async def until(condition: Callable[[], bool], what: str = "condition") -> None:
    """Wait until ``condition()`` holds (fails the test after WAIT_LIMIT_S)."""
    try:
        async with asyncio.timeout(WAIT_LIMIT_S):
            while not condition():  # noqa: ASYNC110 - polls an arbitrary condition
                await asyncio.sleep(0.005)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None
