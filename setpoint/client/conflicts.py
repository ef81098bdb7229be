"""``retry_on_conflict``: run a read-modify-write again when someone else wrote first.

Optimistic concurrency makes a write with a stale ``resourceVersion`` fail with 409 Conflict
instead of silently overwriting another writer's change. The answer is to read again, redo
the change and write again, a few times with a short jittered pause: client-go's
``retry.RetryOnConflict`` with ``retry.DefaultRetry`` (5 attempts, 10 ms apart, 10 % jitter).
Inside a reconcile this is rarely needed (a Conflict fails the reconcile, which is retried with
backoff from fresh cache contents); it is for code that must not give up, e.g. a CLI or a
webhook updating a shared object.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from setpoint.client.errors import Conflict

__all__ = ["DEFAULT_CONFLICT_ATTEMPTS", "retry_on_conflict"]

T = TypeVar("T")

#: client-go's retry.DefaultRetry: 5 steps, 10 ms, factor 1.0, jitter 0.1.
DEFAULT_CONFLICT_ATTEMPTS: Final = 5
DEFAULT_CONFLICT_DELAY_S: Final = 0.01
DEFAULT_CONFLICT_FACTOR: Final = 1.0
DEFAULT_CONFLICT_JITTER: Final = 0.1


async def retry_on_conflict(
    write: Callable[[], Awaitable[T]],
    *,
    attempts: int = DEFAULT_CONFLICT_ATTEMPTS,
    delay: float = DEFAULT_CONFLICT_DELAY_S,
    factor: float = DEFAULT_CONFLICT_FACTOR,
    jitter: float = DEFAULT_CONFLICT_JITTER,
) -> T:
    """Await ``write()`` (which must read the object afresh each time) until it does not
    raise :class:`Conflict` (AlreadyExists included: two create-or-updates that race to create
    become updates), at most ``attempts`` times; the last Conflict is raised.

    ::

        async def bump() -> None:
            cm = await client.get("v1", "ConfigMap", "counter", namespace="ns")
            cm["data"]["n"] = str(int(cm["data"]["n"]) + 1)
            await client.update(cm)

        await retry_on_conflict(bump)

    The pause before attempt ``k`` is ``delay * factor**(k-1)`` plus up to ``jitter`` of it.
    """
    if attempts < 1:
        raise ValueError(f"retry_on_conflict: attempts must be >= 1, got {attempts}")
    pause = delay
    for attempt in range(1, attempts + 1):
        try:
            return await write()
        except Conflict:
            if attempt == attempts:
                raise
        await asyncio.sleep(pause * (1.0 + jitter * random.random()))
        pause *= factor
    raise AssertionError("unreachable")  # pragma: no cover
