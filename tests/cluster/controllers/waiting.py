"""Waiting in tests for what the controllers do in the background (not a timing assertion)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

T = TypeVar("T")

#: Generous: the machine is shared; a failure means "never", not "slow".
PATIENCE_SECONDS: Final = 20.0


async def eventually(check: Callable[[], Awaitable[T]], what: str = "condition") -> T:
    """Call ``check`` until it returns something truthy; fail after :data:`PATIENCE_SECONDS`."""
    last: T | None = None
    try:
        async with asyncio.timeout(PATIENCE_SECONDS):
            while True:
                last = await check()
                if last:
                    return last
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"{what} not reached; last value: {last!r}") from None


def eventually_sync(check: Callable[[], T], what: str = "condition") -> T:
    """The synchronous :func:`eventually` (for tests using the official client)."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    last: T | None = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.02)
    raise AssertionError(f"{what} not reached; last value: {last!r}")
