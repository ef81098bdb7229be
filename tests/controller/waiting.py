"""Polling for an observable condition with an upper bound (not a timing assertion)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

# Generous: the bound only turns a hang into a failure; passing tests return as soon as they can.
DEFAULT_BOUND = 10.0


async def wait_until(condition: Callable[[], bool], within: float = DEFAULT_BOUND) -> None:
    """Return once ``condition()`` is true; fail with TimeoutError after ``within`` seconds."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 - polling state owned by the code under test
            await asyncio.sleep(0.002)


async def wait_until_async(
    condition: Callable[[], Awaitable[bool]], within: float = DEFAULT_BOUND, every: float = 0.05
) -> None:
    """Like :func:`wait_until` for conditions that need I/O (e.g. reading the API server)."""
    async with asyncio.timeout(within):
        while not await condition():  # noqa: ASYNC110 - the state lives on the server
            await asyncio.sleep(every)
