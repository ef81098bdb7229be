"""Polling for a condition with a bound, for tests that watch asynchronous effects."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

POLL_INTERVAL = 0.01


async def eventually(condition: Callable[[], bool], within: float = 10.0, what: str = "") -> None:
    """Return once `condition()` is true; fail the test after `within` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what or condition}")
        await asyncio.sleep(POLL_INTERVAL)
